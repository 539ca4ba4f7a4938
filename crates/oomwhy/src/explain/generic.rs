//! The fallback: any other message that says a GPU allocation failed
//! (ONNX Runtime, llama.cpp, CTranslate2, Triton's shared memory, ...).

use super::common::{
    capitalise, fact, fix_en, framework_fixes, on_device, verdict_en, workload_fix, workload_fixes,
};
use super::docs::Code;
use super::setting::Vendor;
use super::thresholds::LARGER_THAN_ANY_GPU;
use super::Explain;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};
use crate::units::format_size as fmt;

/// Explains `Kind::GenericOom` findings.
pub(super) struct GenericOom;

impl Explain for GenericOom {
    fn headline_en(&self, f: &Finding) -> String {
        generic_headline(f)
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        if let Some(v) = larger_than_the_gpu(f) {
            out.push(v);
            return;
        }
        out.push(generic_verdict(f))
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        framework_fixes(d, out, |_, out| generic_fixes(f, out))
    }
}

fn generic_headline(f: &Finding) -> String {
    let device = on_device(f);
    let size = f.sizes.requested_bytes.map(fmt);
    match f.era {
        Some(Era::TritonSharedMemory) => match (
            size,
            f.sizes.extra.get("hardware_limit_bytes").copied().flatten(),
        ) {
            (Some(req), Some(limit)) => format!(
                "A Triton kernel needs {req} of shared memory per block; this GPU allows {}",
                fmt(limit)
            ),
            _ => "A Triton kernel needs more shared memory per block than this GPU has".into(),
        },
        _ => {
            let who = fact(f, fact::REPORTED_BY).unwrap_or("A GPU allocation");
            match size {
                Some(s) => format!("Out of memory: {who} could not allocate {s}{device}"),
                None => format!("Out of memory: an allocation failed{device} ({who})"),
            }
        }
    }
}

/// A request larger than the whole device, when the message states both;
/// without the device's size, one larger than any GPU (1 TiB): such a size
/// was computed wrong, and no memory setting bears on it.
fn larger_than_the_gpu(f: &Finding) -> Option<Verdict> {
    let requested = f.sizes.requested_bytes?;
    let who = fact(f, fact::REPORTED_BY);
    let Some(total) = f.sizes.total_bytes else {
        return (requested >= LARGER_THAN_ANY_GPU).then(|| {
            verdict_en(
                Code::RequestExceedsCapacity,
                "One allocation is larger than any GPU",
                format!("An allocation of {} was requested in one piece{}: more than any GPU has, so this is not memory pressure and no setting or freed memory can make room for it. The size itself is wrong: an overflowed or uninitialised dimension, or a negative size read as an unsigned number.", fmt(requested), who.map(|who| format!(" ({who})")).unwrap_or_default()),
            )
        });
    };
    (requested > total).then(|| {
        verdict_en(
            Code::RequestExceedsCapacity,
            "One allocation is larger than this GPU",
            format!("An allocation of {} was requested on a GPU with {} in all{}: no setting and no freed memory can make room for it. An array is far larger than intended: a shape bug, a whole dataset put on the device, or an attention or pairwise matrix over very long inputs.", fmt(requested), fmt(total), fact(f, fact::REPORTED_BY).map(|who| format!(" ({who})")).unwrap_or_default()),
        )
    })
}

fn generic_verdict(f: &Finding) -> Verdict {
    let size = f.sizes.requested_bytes.map(fmt);
    let device = on_device(f);
    if f.era == Some(Era::TritonSharedMemory) {
        let limit = f
            .sizes
            .extra
            .get("hardware_limit_bytes")
            .copied()
            .flatten()
            .map(fmt)
            .unwrap_or_else(|| "its".into());
        return verdict_en(
            Code::SharedMemoryLimit,
            "A kernel's configuration does not fit this GPU's shared memory",
            format!("A Triton kernel was compiled to use {} of shared memory per thread block, more than this GPU's limit of {limit}. Shared memory is fast on-chip memory of each multiprocessor, not the GPU's main memory: a smaller batch or freeing GPU memory will not help. The kernel's tile sizes and pipeline stages (BLOCK_* and num_stages) were chosen for a GPU with more shared memory, e.g. an A100/H100 configuration running on a consumer card.", size.unwrap_or_else(|| "more".into())),
        );
    }
    let what = match f.era {
        Some(Era::LlamaCpp) => format!("llama.cpp asked cudaMalloc for {}{device} and the driver refused: the model weights, the KV cache or a compute buffer do not fit in the free GPU memory.", size.as_deref().unwrap_or("a buffer")),
        Some(Era::Ctranslate2) => "CTranslate2 (used by faster-whisper, WhisperX and others) failed a CUDA allocation: the model, the beams or the batch do not fit in the free GPU memory.".to_string(),
        Some(Era::Onnxruntime) => format!("ONNX Runtime's memory arena could not get a buffer of {}. The message does not say whether that arena belongs to the CUDA execution provider or to the CPU; with the CUDA provider it is GPU memory.", size.as_deref().unwrap_or("the requested size")),
        Some(Era::TorchOomClass) => "PyTorch's OutOfMemoryError was raised, but without its allocator's usual \"Tried to allocate ...\" text: a library raised the class with its own message, or the message was cut off.".to_string(),
        Some(Era::CupyOomClass) => format!("CuPy's memory pool could not allocate {}.", size.as_deref().unwrap_or("the requested block")),
        Some(Era::CudaDriver) | Some(Era::CudaRuntime) | Some(Era::Hip) => format!(
            "A {} allocation failed with {}{}{device}. TensorFlow and JAX print this when their allocator cannot get memory; TensorFlow also reserves most of the GPU when it starts, leaving little for other libraries.",
            if f.era == Some(Era::Hip) { "HIP" } else { "CUDA" },
            fact(f, fact::ERROR_NAME).unwrap_or("an out-of-memory error"),
            size.as_deref().map(|s| format!(" for {s}")).unwrap_or_default()
        ),
        Some(Era::Paddle) => {
            let free = f.sizes.free_bytes.map(fmt);
            // What Paddle's allocator already held on the GPU, when the message says.
            let used = f.sizes.extra.get("used_bytes").copied().flatten().map(fmt);
            // The message gives no total: who holds the rest is unknown.
            let advice = match &used {
                Some(used) => format!(" The message does not give the GPU's size: if {used} is close to it, Paddle's own work fills the card and a smaller batch is the fix; if not, another process holds the rest (Paddle's own advice: check whether another process is using this GPU)."),
                None => " Paddle's own advice in the message: check whether another process is using this GPU; if none is, use a smaller batch.".to_string(),
            };
            format!(
                "PaddlePaddle's allocator asked the driver for {}{device} and was refused{}{}.{advice}",
                size.as_deref().unwrap_or("a new chunk"),
                free.map(|free| format!(": only {free} was still available")).unwrap_or_default(),
                used.map(|used| format!(", with {used} already allocated by Paddle")).unwrap_or_default(),
            )
        }
        Some(Era::Vulkan) => format!(
            "A Vulkan device-memory allocation{}{device} failed (VK_ERROR_OUT_OF_DEVICE_MEMORY){}: what the program put on the GPU (for a language model: its weights, its context or KV cache, and compute buffers) does not fit in the free memory.",
            size.as_deref().map(|s| format!(" of {s}")).unwrap_or_default(),
            fact(f, fact::REPORTED_BY).filter(|r| r.contains("ggml")).map(|r| format!(", in {r}")).unwrap_or_default()
        ),
        Some(Era::Tensorrt) => format!("TensorRT could not get {} of GPU memory (Error Code 2: OutOfMemory), while building an engine (its tactics and workspace) or running it.", size.as_deref().unwrap_or("the memory it needed")),
        Some(Era::Metal) => "Apple's Metal driver stopped a GPU command buffer with \"Insufficient Memory\": macOS could not give the GPU the memory this work needed. On Apple silicon the GPU shares the machine's RAM (unified memory), so the model, its working buffers and every other app draw on the same memory.".to_string(),
        _ => format!("{} reported that an allocation failed{device}.", fact(f, fact::REPORTED_BY).unwrap_or("The backend")),
    };
    let repeated = if f.occurrences > 1 {
        format!(
            " The same failure was printed {} times in a row (a retry loop).",
            f.occurrences
        )
    } else {
        String::new()
    };
    verdict_en(
        Code::AllocationFailed,
        "A GPU allocation failed: out of memory",
        format!("{what}{repeated}"),
    )
}

fn generic_fixes(f: &Finding, out: &mut Vec<Fix>) {
    match f.era {
        Some(Era::TritonSharedMemory) => {
            out.push(fix_en(
                "Use a kernel configuration for this GPU",
                "Update the library that ships the kernel (vLLM, unsloth, flash-linear-attention, ...): newer releases often carry configurations for more GPUs. If you own the kernel, lower num_stages or the BLOCK_* sizes in its triton.Config / autotune list.",
            ));
            out.push(fix_en(
                "Switch to a non-Triton path",
                "Disable the Triton kernel (e.g. torch.compile off, a different attention backend) to test; batch size and memory settings do not affect this error.",
            ));
        }
        Some(Era::LlamaCpp) => {
            out.push(fewer_layers());
            out.push(free_the_gpu(f));
        }
        Some(Era::Paddle) => out.push(free_the_gpu(f)),
        Some(Era::Vulkan) => {
            let ggml = fact(f, fact::REPORTED_BY).is_some_and(|r| r.contains("ggml"));
            out.push(if ggml { fewer_layers() } else { workload_fix() });
            // Vulkan runs on any vendor's GPU: no one vendor's tools.
            out.push(fix_en(
                "Close other programs that use the GPU",
                "A second model server, a game or a browser's GPU process holds memory too; your GPU vendor's tool (nvidia-smi, rocm-smi, or Task Manager's GPU view on Windows) shows who holds how much.",
            ));
        }
        Some(Era::Tensorrt) => out.push(fix_en(
            "Build the engine with smaller limits",
            "Lower the engine's maximum batch size and sequence lengths (its optimisation profiles; for TensorRT-LLM max_batch_size, max_input_len, max_seq_len) and the builder's workspace limit, and build on a GPU nothing else uses.",
        )),
        Some(Era::Metal) => {
            out.push(workload_fix());
            out.push(fix_en(
                "Leave the GPU more of the machine's memory",
                "Quit other apps that hold much memory (Activity Monitor → Memory): on Apple silicon they take from the same RAM the GPU uses. A Mac with more unified memory is the other way out.",
            ));
        }
        Some(Era::Ctranslate2) => out.push(fix_en(
            "Use less memory per request",
            "Load the model with compute_type=\"int8_float16\" (or \"int8\"), lower beam_size and batch_size, use a smaller model, or device=\"cpu\" to test.",
        )),
        Some(Era::Onnxruntime) => out.push(fix_en(
            "Bound ONNX Runtime's arena",
            "For the CUDA provider set provider options {\"gpu_mem_limit\": N, \"arena_extend_strategy\": \"kSameAsRequested\"}; use smaller inputs or batches; load fewer models per GPU.",
        )),
        Some(Era::CupyOomClass) => out.push(fix_en(
            "Release or cap CuPy's pool",
            "cupy.get_default_memory_pool().free_all_blocks() returns cached blocks; cupy.get_default_memory_pool().set_limit(size=...) keeps CuPy from taking memory other libraries need.",
        )),
        Some(Era::CudaDriver) | Some(Era::CudaRuntime) | Some(Era::Hip) => out.push(fix_en(
            "Stop frameworks from reserving the whole GPU",
            format!("TensorFlow: TF_FORCE_GPU_ALLOW_GROWTH=true (or tf.config.experimental.set_memory_growth); JAX: XLA_PYTHON_CLIENT_PREALLOCATE=false or XLA_PYTHON_CLIENT_MEM_FRACTION=.5; and stop other processes shown by {}.", Vendor::of(f).smi()),
        )),
        _ => {}
    }
    // llama.cpp, ONNX Runtime, CTranslate2 and CuPy have their own fixes
    // above; a training-style workload fix does not apply to them.
    if !matches!(
        f.era,
        Some(
            Era::TritonSharedMemory
                | Era::LlamaCpp
                | Era::Onnxruntime
                | Era::Ctranslate2
                | Era::CupyOomClass
                | Era::Metal
                | Era::Tensorrt
                | Era::Vulkan
        )
    ) {
        workload_fixes(f, out);
    }
}

/// Other processes holding the GPU, and how to see them.
fn free_the_gpu(f: &Finding) -> Fix {
    let vendor = Vendor::of(f);
    fix_en(
        "Free the GPU",
        format!("{} shows other processes (a second server, a desktop compositor) holding memory; close them or pick another GPU with {}.", capitalise(vendor.smi()), vendor.visible_devices()),
    )
}

/// llama.cpp's (and its front ends') own memory knobs.
fn fewer_layers() -> Fix {
    fix_en(
        "Offload fewer layers or shrink the context",
        "Lower -ngl / --n-gpu-layers, reduce the context (-c), quantise the KV cache (--cache-type-k q8_0 --cache-type-v q8_0), lower -b/-ub, or use a smaller quantisation of the model.",
    )
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
