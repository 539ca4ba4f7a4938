//! XLA out-of-memory as JAX and TensorFlow-with-XLA report it: the
//! preallocated device pool and the pinned host-memory limit.

use super::common::{extra, fix_en, framework_fixes, on_device, row_en, verdict_en, FieldRow, TIB};
use super::docs::Code;
use super::Explain;
use crate::record::{Diagnosis, Era, Finding, Fix, Verdict};
use crate::units::format_size as fmt;

/// Explains `Kind::XlaOom` findings.
pub(super) struct XlaOom;

impl Explain for XlaOom {
    fn headline_en(&self, f: &Finding) -> String {
        let a = f.sizes.requested_bytes.map(fmt);
        match (f.era, a) {
            (Some(Era::Host), Some(a)) => {
                format!("XLA could not allocate {a} of pinned host memory")
            }
            (_, Some(a)) => format!("XLA (JAX) could not allocate {a}{}", on_device(f)),
            _ => "XLA (JAX) ran out of memory".into(),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        let s = &f.sizes;
        if let Some(a) = s.requested_bytes {
            let meaning = if f.era == Some(Era::Host) {
                "pinned host memory XLA needed in one piece (exact)"
            } else if f.era == Some(Era::HumanReadable) {
                "one buffer XLA needed, as printed (rounded; approximate)"
            } else {
                "one buffer XLA needed in one piece (exact)"
            };
            rows.push(row_en(
                "Trying to allocate",
                format!("{} ({a} bytes)", fmt(a)),
                meaning,
                false,
            ));
        }
        for (key, label, meaning) in [
            (
                "program_parameter_bytes",
                "Parameters",
                "the compiled program's input buffers",
            ),
            (
                "program_output_bytes",
                "Outputs",
                "buffers that may live on after the program (maybe_live_out)",
            ),
            (
                "program_temp_bytes",
                "Temporaries",
                "scratch buffers the program needs while it runs",
            ),
            (
                "program_total_bytes",
                "Program total",
                "all of the program's buffers, per XLA's BufferAssignment stats",
            ),
        ] {
            if let Some(v) = extra(f, key) {
                rows.push(row_en(label, fmt(v), meaning, false));
            }
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        xla_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        framework_fixes(d, out, |_, out| xla_fixes(f, out))
    }
}

fn xla_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let a = f.sizes.requested_bytes;
    let program = match (extra(f, "program_total_bytes"), extra(f, "program_temp_bytes")) {
        (Some(total), Some(temp)) => format!(
            " The compiled program's buffers total {} ({} of them temporaries), per XLA's BufferAssignment stats.",
            fmt(total),
            fmt(temp)
        ),
        (Some(total), None) => format!(" The compiled program's buffers total {}.", fmt(total)),
        _ => String::new(),
    };
    if f.era == Some(Era::Host) {
        out.push(verdict_en(
            Code::XlaHostMemoryLimit,
            "XLA's pinned host-memory limit is reached (64 GB by default)",
            format!(
                "XLA needed {} of pinned (page-locked) host memory — used for host offloading and transfers — and its limit for such memory, 64 GB unless XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB says otherwise, was reached. This is host RAM reserved for the GPU, not GPU memory.{program}",
                a.map_or("more".into(), fmt)
            ),
        ));
        return;
    }
    if let Some(a) = a.filter(|&a| a >= TIB) {
        out.push(verdict_en(
            Code::RequestExceedsCapacity,
            "One buffer is larger than any GPU",
            format!("XLA needed one buffer of {} ({a} bytes): more than any single GPU has. An array is far larger than intended (a shape bug, a whole dataset put on the device, an attention matrix over a very long sequence).{program}", fmt(a)),
        ));
        return;
    }
    let size = a.map_or("a buffer".into(), |a| format!("{} ({a} bytes)", fmt(a)));
    if f.era == Some(Era::DeviceAllocator) {
        out.push(verdict_en(
            Code::CapacityExhausted,
            "The GPU itself had no room for the buffer",
            format!(
                "XLA asked the device driver directly for {size}{} and was refused. This allocator is used when preallocation is off or XLA_PYTHON_CLIENT_ALLOCATOR=platform is set, so no JAX pool stood in the way: the GPU was full — with this program's arrays, or with another process's memory.{program}",
                on_device(f)
            ),
        ));
        return;
    }
    out.push(verdict_en(
        Code::XlaPreallocation,
        "XLA's preallocated GPU pool had no room for the buffer",
        format!(
            "XLA could not get {size} in one piece. On GPUs JAX serves every buffer from a pool it reserves when the first JAX operation runs — 75% of the GPU's memory by default (older releases: 90% of the memory free at that moment) — so the limit hit is that pool, not necessarily the card: up to a quarter of the GPU can lie outside it, and a second JAX or TensorFlow process on the same GPU preallocates too and fails at once.{program}"
        ),
    ));
}

fn xla_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if f.era == Some(Era::Host) {
        out.push(fix_en(
            "Raise XLA's pinned host-memory limit",
            "export XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB=128 (or what the machine can spare) before starting, as the message says; the default is 64 GB.",
        ));
        out.push(fix_en(
            "Offload less to the host",
            "Reduce what is offloaded to host memory (host-offloaded activations or optimizer state, large device-to-host transfers held at once).",
        ));
        return;
    }
    if f.era != Some(Era::DeviceAllocator) {
        out.push(fix_en(
            "Give XLA's pool more of the GPU",
            "export XLA_PYTHON_CLIENT_MEM_FRACTION=.90 (before JAX starts) makes the preallocated pool 90% of the GPU instead of 75%; leave some room for the CUDA context and libraries.",
        ));
        out.push(fix_en(
            "Allocate on demand when processes share the GPU",
            "export XLA_PYTHON_CLIENT_PREALLOCATE=false: JAX then allocates as needed instead of reserving a pool at start, so several processes (or JAX beside PyTorch/TensorFlow) can share a GPU; it is more prone to fragmentation. XLA_PYTHON_CLIENT_ALLOCATOR=platform allocates and frees exactly — very slow, for debugging OOMs only.",
        ));
    }
    out.push(fix_en(
        "Make the computation need less memory",
        "Reduce the batch size; rematerialise activations with jax.checkpoint (jax.remat) around blocks; donate input buffers with jax.jit(..., donate_argnums=...) so outputs reuse them; keep parameters and activations in bfloat16.",
    ));
    if f.era == Some(Era::DeviceAllocator) {
        out.push(fix_en(
            "Check what else holds the GPU",
            "Run nvidia-smi: another process, or another framework in this process (PyTorch's or TensorFlow's cache), may hold the memory XLA asked for.",
        ));
    }
    if f.text.contains("BufferAssignment") {
        out.push(fix_en(
            "Read XLA's buffer report",
            "The lines after `BufferAssignment OOM Debugging.` list the program's largest buffers (Peak buffers) with shapes and the operations that create them: that is where the memory goes.",
        ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
