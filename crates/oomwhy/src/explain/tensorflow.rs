//! TensorFlow out-of-memory (the BFC allocator and `OpKernelContext`).

use super::common::{fact, fix_en, framework_fixes, on_device, row_en, verdict_en, FieldRow, TIB};
use super::docs::Code;
use super::Explain;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};
use crate::units::format_size as fmt;

/// Explains `Kind::TfOom` findings.
pub(super) struct TfOom;

impl Explain for TfOom {
    fn headline_en(&self, f: &Finding) -> String {
        let a = f.sizes.requested_bytes.map(fmt);
        let place = if f.backend.as_deref() == Some("cpu") {
            " in host RAM".to_string()
        } else {
            on_device(f)
        };
        match (f.era, a, fact(f, fact::SHAPE)) {
            (Some(Era::BfcAllocator), Some(a), _) => format!(
                "TensorFlow's allocator {} ran out of memory allocating {a}{place}",
                fact(f, fact::ALLOCATOR).unwrap_or("(BFC)")
            ),
            (_, Some(a), Some(shape)) => {
                format!("TensorFlow could not allocate {a} for a tensor of shape {shape}{place}")
            }
            (_, None, Some(shape)) => {
                format!("TensorFlow ran out of memory allocating a tensor of shape {shape}{place}")
            }
            _ => format!("TensorFlow ran out of memory{place}"),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        let s = &f.sizes;
        if f.era == Some(Era::BfcAllocator) {
            if let Some(a) = s.requested_bytes {
                let meaning = if f.notes.iter().any(|n| n.contains("approximate")) {
                    "the request as printed (rounded to 2 decimals; the exact byte count is not in this form)"
                } else {
                    "the block the BFC allocator needed: the request rounded up to a multiple of 256 bytes (exact)"
                };
                rows.push(row_en("Trying to allocate", fmt(a), meaning, false));
            }
        } else {
            if let Some(shape) = fact(f, fact::SHAPE) {
                rows.push(row_en(
                    "Shape",
                    shape.to_string(),
                    "dimensions of the tensor TensorFlow tried to create",
                    false,
                ));
            }
            if let Some(dtype) = fact(f, fact::DTYPE) {
                rows.push(row_en(
                    "Type",
                    dtype.to_string(),
                    "element type as TensorFlow names it (float = float32, half = float16)",
                    false,
                ));
            }
            if let Some(a) = s.requested_bytes {
                rows.push(row_en(
                    "Tensor size (derived)",
                    fmt(a),
                    format!("product of the shape × bytes per element = {a} bytes"),
                    true,
                ));
            }
        }
        if let Some(device) = fact(f, fact::DEVICE_NAME) {
            rows.push(row_en(
                "Device",
                device.to_string(),
                "where the tensor was to live",
                false,
            ));
        }
        if let Some(allocator) = fact(f, fact::ALLOCATOR) {
            rows.push(row_en(
                "Allocator",
                allocator.to_string(),
                "TensorFlow's allocator for that device (GPU_N_bfc: the pool it reserved on GPU N)",
                false,
            ));
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        tf_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        framework_fixes(d, out, |_, out| tf_fixes(f, out))
    }
}

fn tf_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let a = f.sizes.requested_bytes;
    let what = match (fact(f, fact::SHAPE), fact(f, fact::DTYPE), a) {
        (Some(shape), Some(dtype), Some(a)) => {
            format!("{} for a {dtype} tensor of shape {shape}", fmt(a))
        }
        (Some(shape), _, _) => format!("a tensor of shape {shape}"),
        (_, _, Some(a)) => fmt(a),
        _ => "memory".into(),
    };
    if f.backend.as_deref() == Some("cpu") {
        out.push(verdict_en(
            Code::HostRamExhausted,
            "The machine's RAM ran out (host memory, not GPU memory)",
            format!("TensorFlow could not allocate {what} in host RAM (allocator {}). This is CPU memory, not GPU memory.", fact(f, fact::ALLOCATOR).unwrap_or("cpu")),
        ));
        return;
    }
    if let Some(a) = a.filter(|&a| a >= TIB) {
        out.push(verdict_en(
            Code::RequestExceedsCapacity,
            "One tensor is larger than any GPU",
            format!("TensorFlow tried to allocate {} ({what}) in one piece: more than any single GPU has. A dimension is far larger than intended (an unbatched dataset, a wrong reshape, an attention matrix over a very long sequence).", fmt(a)),
        ));
        return;
    }
    let allocator = fact(f, fact::ALLOCATOR).unwrap_or("its GPU allocator");
    let detail = if f.era == Some(Era::BfcAllocator) {
        format!(
            "TensorFlow's BFC allocator {allocator} found no free block for {what}{}{}. By default TensorFlow reserves nearly all of the GPU's free memory for this allocator when it starts, so the pool is effectively the card: the tensors TensorFlow keeps alive filled it (or left it too fragmented). The allocation summary TensorFlow prints next lists the chunks in use; the `OOM when allocating tensor` error that usually follows is reported as its own finding.",
            fact(f, fact::OP).map(|op| format!(", requested by op {op}")).unwrap_or_default(),
            on_device(f)
        )
    } else {
        format!(
            "TensorFlow needed {what}{} and its allocator {allocator} had no free block that large. By default TensorFlow reserves nearly all of the GPU's free memory for this allocator when it starts, so the limit is the card itself (less what other processes held at start-up): the tensors TensorFlow keeps alive — weights, optimizer slots, activations saved for the backward pass — fill it.{}",
            on_device(f),
            fact(f, fact::NODE).map(|n| format!(" The failing op is node {n}.")).unwrap_or_default()
        )
    };
    out.push(verdict_en(
        Code::CapacityExhausted,
        "The workload does not fit in GPU memory",
        detail,
    ));
}

fn tf_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if f.backend.as_deref() == Some("cpu") {
        out.push(fix_en(
            "Reduce what is held in host RAM",
            "Feed data with tf.data pipelines that stream from disk instead of whole NumPy arrays, reduce the batch size and the shuffle buffer, and avoid .cache() on large datasets without a file argument.",
        ));
        return;
    }
    out.push(fix_en(
        "Reduce the batch size",
        "Halve the batch size (in model.fit(batch_size=...), or the tf.data .batch(...)); activation memory shrinks in proportion. Use a smaller batch for predict()/evaluate() too.",
    ));
    out.push(fix_en(
        "Use mixed precision",
        "tf.keras.mixed_precision.set_global_policy('mixed_float16') at the start (TensorFlow ≥ 2.4; in 1.15–2.3 it is tf.keras.mixed_precision.experimental.set_policy): activations take half the memory; keep the final layer's output in float32. 'mixed_bfloat16' needs a TPU or an Ampere or newer GPU.",
    ));
    if f.facts.contains_key(fact::HINT) || f.era == Some(Era::BfcAllocator) {
        out.push(fix_en(
            "Try CUDA's asynchronous allocator if memory is fragmented",
            "export TF_GPU_ALLOCATOR=cuda_malloc_async (the BFC allocator's own suggestion): it can reuse freed memory that BFC cannot join into one block.",
        ));
    }
    out.push(fix_en(
        "Stop TensorFlow from taking the whole GPU when it shares the card",
        if uses_sessions(f) {
            "By default TensorFlow reserves nearly all GPU memory at start. If another process or library (PyTorch, JAX, a second TensorFlow process) uses the same GPU, set TF_FORCE_GPU_ALLOW_GROWTH=true, or with TensorFlow 1 sessions create them with config = tf.compat.v1.ConfigProto(); config.gpu_options.allow_growth = True (or per_process_gpu_memory_fraction = 0.5 for a fixed share). This does not give TensorFlow more memory; it leaves room for the others."
        } else {
            "By default TensorFlow reserves nearly all GPU memory at start. If another process or library (PyTorch, JAX, a second TensorFlow process) uses the same GPU, set TF_FORCE_GPU_ALLOW_GROWTH=true or call tf.config.experimental.set_memory_growth(gpu, True) for each GPU before any op runs (TensorFlow 2; with TensorFlow 1 sessions use config.gpu_options.allow_growth = True). This does not give TensorFlow more memory; it leaves room for the others."
        },
    ));
    out.push(fix_en(
        "See which tensors hold the memory",
        "Graph mode: pass tf.compat.v1.RunOptions(report_tensor_allocations_upon_oom=True) to see the allocated tensors at the OOM; the BFC allocator's dump after its warning lists chunk sizes in use.",
    ));
}

/// True when the traceback runs through TensorFlow 1's session API (also
/// reached through `tf.compat.v1` in TensorFlow 2).
fn uses_sessions(f: &Finding) -> bool {
    f.traceback.as_ref().is_some_and(|tb| {
        tb.frames.iter().any(|fr| {
            fr.file
                .replace('\\', "/")
                .contains("tensorflow/python/client/session.py")
        })
    })
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
