//! CUDA runtime and driver errors: out-of-memory outside PyTorch's allocator
//! (no sizes) and illegal memory accesses.

use super::common::{fact, fix_en, on_device, torch_in_traceback, verdict_en, workload_fix};
use super::common::{library_headroom_fix, runtime_fix};
use super::docs::Code;
use super::setting::{Framework, Runtime, Vendor};
use super::Explain;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};

/// Explains `Kind::CudaRuntimeOom` findings.
pub(super) struct CudaRuntimeOom;

impl Explain for CudaRuntimeOom {
    fn headline_en(&self, f: &Finding) -> String {
        // Named like the Chinese headline: whoever printed the error.
        match fact(f, fact::REPORTED_BY) {
            Some(tool) => format!(
                "A CUDA call ran out of GPU memory{} ({tool}; no sizes given)",
                on_device(f)
            ),
            None => format!(
                "A CUDA call ran out of GPU memory{} (outside PyTorch's allocator; no sizes given)",
                on_device(f)
            ),
        }
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(runtime_oom_verdict(f))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        runtime_oom_fixes(f, out)
    }
}

/// Explains `Kind::IllegalMemoryAccess` findings.
pub(super) struct IllegalMemoryAccess;

impl Explain for IllegalMemoryAccess {
    fn headline_en(&self, _f: &Finding) -> String {
        "A GPU kernel accessed memory it should not (illegal memory access) — not an out-of-memory error".into()
    }
    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict_en(
            Code::AsyncErrorLocation,
            "The traceback probably points at the wrong line",
            "CUDA reports kernel faults asynchronously: the error surfaces at the next call that synchronises with the GPU, not in the kernel that made the bad access. The Python frames above show where PyTorch noticed the fault, which is usually later than where it happened.".into(),
        ))
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        illegal_access_fixes(out)
    }
}

/// The tool that printed the error, when it is not PyTorch (cuDF, TensorRT,
/// darknet, ...): PyTorch's allocator and cache are then beside the point.
fn other_tool(f: &Finding) -> Option<&str> {
    // llama.cpp's ggml prints CUDA's error without naming itself.
    if !f.facts.contains_key(fact::REPORTED_BY) && Framework::of(f) == Framework::Ggml {
        return Some("llama.cpp (ggml)");
    }
    let tool = f.facts.get(fact::REPORTED_BY)?;
    (tool != "torch_memory_saver" && !torch_in_traceback(f)).then_some(tool.as_str())
}

fn runtime_oom_verdict(f: &Finding) -> Verdict {
    if let Some(tool) = other_tool(f) {
        return verdict_en(
            Code::AllocationFailed,
            "A GPU allocation failed: out of memory",
            format!("{tool} got CUDA's out-of-memory error ({}) from a CUDA call{}. The message carries no sizes, so it does not tell whether the work itself is too large for the card or other processes hold the memory.", fact(f, fact::ERROR_NAME).unwrap_or("cudaErrorMemoryAllocation"), on_device(f)),
        );
    }
    match f.era {
        Some(Era::Driver) => verdict_en(
            Code::OutsideAllocatorOom,
            "A CUDA driver call ran out of memory",
            "`CUDA driver error: out of memory` comes from the CUDA driver API, which PyTorch uses for expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) and for some other features. The message carries no sizes. On WSL2 and Jetson this error appears with expandable segments even when memory is free.".into(),
        ),
        Some(Era::Thc) => verdict_en(
            Code::OutsideAllocatorOom,
            "cudaMalloc failed in an old PyTorch (≤0.4)",
            "`cuda runtime error (2) : out of memory` is how PyTorch 0.4 and older reported any failed CUDA allocation (error 2 is cudaErrorMemoryAllocation). It carries no sizes, so oomwhy cannot say what filled the card.".into(),
        ),
        _ => verdict_en(
            Code::OutsideAllocatorOom,
            "A CUDA call outside PyTorch's allocator ran out of memory",
            "`CUDA error: out of memory` (unlike `CUDA out of memory. Tried to allocate ...`) is raised by a CUDA runtime call that does not go through PyTorch's caching allocator: creating the CUDA context on a GPU that is already full, cuBLAS/cuDNN handles and workspaces, NCCL buffers, or another library in the process. Memory that PyTorch caches is not available to these calls.".into(),
        ),
    }
}

fn runtime_oom_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if f.era == Some(Era::Driver) {
        out.push(fix_en(
            "Turn off expandable segments if you set them",
            "Remove expandable_segments:True from PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF: the driver-API mapping it uses fails on WSL2 and Jetson even with free memory.",
        ));
    }
    let vendor = Vendor::of(f);
    out.push(fix_en(
        "Check what else holds the GPU",
        format!("Run {}: if other processes fill the card, even creating the GPU context (a few hundred MiB) fails. Stop them or choose another GPU with {}.", vendor.smi(), vendor.visible_devices()),
    ));
    if other_tool(f).is_some() {
        out.push(workload_fix());
        return;
    }
    out.push(library_headroom_fix(f));
    match Runtime::of(f) {
        // An engine's own settings bound its memory, not a batch size.
        Some(runtime) => out.push(runtime_fix(runtime)),
        None => out.push(fix_en(
            "Reduce the workload",
            "A smaller batch, sequence length or model leaves more room for these allocations.",
        )),
    }
}

fn illegal_access_fixes(out: &mut Vec<Fix>) {
    out.push(fix_en(
        "Find the kernel that really failed",
        "Re-run with CUDA_LAUNCH_BLOCKING=1 so each kernel is checked as it finishes; the traceback then points at the real call. Slower, so reproduce on a small input.",
    ));
    out.push(fix_en(
        "Run under compute-sanitizer",
        "compute-sanitizer --tool memcheck python train.py names the kernel and the out-of-bounds address (very slow: use a tiny batch).",
    ));
    out.push(fix_en(
        "Check the usual causes",
        "An index out of range (embedding ids ≥ num_embeddings, labels ≥ num_classes, gather/scatter indices): run the same step on the CPU for a clear IndexError. Custom CUDA/Triton kernels and extensions (flash-attn, bitsandbytes, apex) built for another PyTorch/CUDA version. Tensors on the wrong device or non-contiguous inputs passed to custom ops.",
    ));
    out.push(fix_en(
        "Rule out the hardware",
        "If it happens at random places, check the kernel log (`sudo dmesg | grep -i xid`) for NVIDIA Xid errors and run the GPU alone.",
    ));
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
