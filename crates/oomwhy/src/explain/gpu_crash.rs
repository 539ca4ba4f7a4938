//! GPU crashes that are not out-of-memory errors: device-side asserts,
//! misaligned addresses, launch failures and missing kernel images.

use super::common::{fact, fix_en, verdict_en};
use super::docs::Code;
use super::Explain;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};

/// Explains `Kind::DeviceSideAssert` findings.
pub(super) struct DeviceSideAssert;

impl Explain for DeviceSideAssert {
    fn headline_en(&self, f: &Finding) -> String {
        match (fact(f, fact::ASSERTION), fact(f, fact::KERNEL)) {
            (Some(a), Some(k)) => format!(
                "A GPU kernel's assertion failed (`{a}` in {k}): a bad index or value, not an out-of-memory error"
            ),
            _ => "A GPU kernel's assertion failed (device-side assert): usually an index out of range, not an out-of-memory error".into(),
        }
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(device_assert_verdict(f))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        device_assert_fixes(f, out)
    }
}

/// Explains `Kind::MisalignedAddress` findings.
pub(super) struct MisalignedAddress;

impl Explain for MisalignedAddress {
    fn headline_en(&self, _f: &Finding) -> String {
        "A GPU kernel made a misaligned memory access: a kernel bug, not an out-of-memory error"
            .into()
    }
    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict_en(
            Code::KernelFault,
            "A kernel bug: a misaligned memory access",
            "A kernel read or wrote memory at an address not aligned to the size of the access (cudaErrorMisalignedAddress, 716). This is a bug in a kernel, most often a custom CUDA/Triton kernel or an extension (flash-attn, xformers, bitsandbytes, apex) built for another PyTorch/CUDA version, or a tensor with an unusual storage offset or stride passed to one. It is not an out-of-memory error. CUDA reports it asynchronously, so the traceback may point at a later line.".into(),
        ))
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix_en(
                "Find the kernel that failed",
                "Rerun with CUDA_LAUNCH_BLOCKING=1 so the traceback points at the real call, or run `compute-sanitizer --tool memcheck python train.py` on a tiny input to name the kernel.",
            ));
        out.push(fix_en(
                "Rebuild or update the extension that owns it",
                "Reinstall custom kernels (flash-attn, xformers, bitsandbytes, apex) built for your exact PyTorch and CUDA versions; to test, switch to PyTorch's own kernels (e.g. attn_implementation=\"eager\" or \"sdpa\" in Hugging Face models).",
            ));
        out.push(fix_en(
                "Pass contiguous tensors to custom ops",
                "Call .contiguous() on inputs of custom kernels; views with odd storage offsets (slices, narrow) are a common source of misaligned pointers.",
            ));
    }
}

/// Explains `Kind::LaunchFailure` findings.
pub(super) struct LaunchFailure;

impl Explain for LaunchFailure {
    fn headline_en(&self, f: &Finding) -> String {
        if f.era == Some(Era::CublasExecution) {
            return match fact(f, "call") {
                Some(call) => format!("cuBLAS could not run its GPU kernel in {call} (CUBLAS_STATUS_EXECUTION_FAILED): not an out-of-memory error"),
                None => "cuBLAS could not run its GPU kernel (CUBLAS_STATUS_EXECUTION_FAILED): not an out-of-memory error".into(),
            };
        }
        "A GPU kernel crashed while running (unspecified launch failure): not an out-of-memory error".into()
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        if f.era == Some(Era::CublasExecution) {
            out.push(verdict_en(
                Code::KernelFault,
                "A cuBLAS kernel failed to launch or run",
                "CUBLAS_STATUS_EXECUTION_FAILED is cuBLAS's \"the GPU program failed to execute\", most often a kernel that could not be launched. In PyTorch it usually comes from one of three things: an earlier asynchronous CUDA error that cuBLAS is the first to notice (an out-of-range index in an embedding or a loss, which CUDA_LAUNCH_BLOCKING=1 then shows as a device-side assert); a PyTorch/CUDA build that does not support this GPU (a CUDA 10 build on an RTX 30-series card fails like this); or inputs the call cannot take (non-contiguous or enormous matrices). It is not an out-of-memory error.".into(),
            ));
            return;
        }
        out.push(verdict_en(
            Code::KernelFault,
            "A kernel crashed while running",
            "`unspecified launch failure` (cudaErrorLaunchFailure, 719) means a kernel died while executing: an out-of-bounds access in a kernel without bounds checks, a kernel killed by the display watchdog (Windows TDR, or a GPU that also drives a monitor) because it ran too long, or a driver/hardware fault (the kernel log then shows an NVIDIA Xid such as 13, 31 or 43). It is not an out-of-memory error, and the CUDA context is unusable afterwards.".into(),
        ))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix_en(
                "Find the kernel that failed",
                "Rerun with CUDA_LAUNCH_BLOCKING=1, or under `compute-sanitizer --tool memcheck` on a tiny input.",
            ));
        if f.era == Some(Era::CublasExecution) {
            out.push(fix_en(
                "Check that the build supports this GPU",
                "Compare torch.version.cuda and torch.cuda.get_arch_list() with torch.cuda.get_device_capability(): a GPU newer than the build's CUDA (e.g. an RTX 30-series card with CUDA 10.x) needs a PyTorch built for a newer CUDA.",
            ));
            out.push(fix_en(
                "Check the indices on the CPU",
                "Run the failing step once on the CPU: an embedding id ≥ num_embeddings or a label ≥ num_classes then raises a clear IndexError instead of a cuBLAS status.",
            ));
            return;
        }
        out.push(fix_en(
                "Check the driver's kernel log",
                "`sudo dmesg -T | grep -i xid` shows NVIDIA Xid events at the time of the crash; oomwhy explains them when given that log.",
            ));
        out.push(fix_en(
                "Rule out the display watchdog",
                "On a GPU that also drives a monitor (and on Windows, WDDM's TDR), kernels running longer than about 2 seconds are killed: use a GPU without a display, smaller batches per kernel, or raise TdrDelay on Windows.",
            ));
    }
}

/// Explains `Kind::NoKernelImage` findings.
pub(super) struct NoKernelImage;

impl Explain for NoKernelImage {
    fn headline_en(&self, _f: &Finding) -> String {
        "The installed build has no GPU code for this GPU's architecture".into()
    }
    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict_en(
            Code::ArchMismatch,
            "The binaries were not built for this GPU",
            "CUDA found no machine code (and no PTX it could compile) for this GPU's compute capability in the library that launched the kernel: a new GPU with a build that stops at an older architecture (e.g. an RTX 50-series sm_120 card with a wheel built for up to sm_90), an old GPU that the build dropped, or an extension compiled with a TORCH_CUDA_ARCH_LIST that does not include this GPU. Compare torch.cuda.get_arch_list() with torch.cuda.get_device_capability(); PyTorch usually warns at start-up that the GPU \"is not compatible with the current PyTorch installation\".".into(),
        ))
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix_en(
                "Install a build for your GPU",
                "Compare `python -c \"import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())\"`: your capability (e.g. (12, 0) = sm_120) must be in the list. Install a wheel built with a CUDA version that supports the GPU (Blackwell GPUs such as the RTX 50 series need CUDA 12.8 or newer builds); old GPUs need an older PyTorch that still includes them.",
            ));
        out.push(fix_en(
                "Rebuild extensions for this architecture",
                "If the failing kernel belongs to an extension, rebuild it with TORCH_CUDA_ARCH_LIST set to your capability (e.g. TORCH_CUDA_ARCH_LIST=\"8.6\" pip install --no-build-isolation --force-reinstall <package>).",
            ));
    }
}

fn device_assert_verdict(f: &Finding) -> Verdict {
    let Some(condition) = fact(f, fact::ASSERTION) else {
        return verdict_en(
            Code::DeviceAssert,
            "A GPU kernel's own check failed",
            "A kernel checked a condition on its input and it failed (cudaErrorAssert, 710). The kernel prints the failed condition itself (`...: block: [..], thread: [..] Assertion `...` failed.`), usually to standard output, before the Python error or in another log file; that line names the problem. By far the most common cause is an index out of range: a token id ≥ the embedding size, a class label < 0 or ≥ the number of classes, a gather/scatter index outside the tensor. It is not an out-of-memory error, and CUDA reports it asynchronously, so the traceback may point at a later line.".into(),
        );
    };
    let kernel = fact(f, fact::KERNEL).unwrap_or("a kernel");
    let lower = condition.to_ascii_lowercase();
    if condition.contains("input_val >= zero && input_val <= one") {
        return verdict_en(
            Code::DeviceAssert,
            "BCELoss got an input outside [0, 1]",
            format!("The kernel {kernel} checked `{condition}` and it failed: binary cross-entropy (torch.nn.BCELoss / F.binary_cross_entropy) received a value below 0 or above 1 (a raw logit, or a NaN). It is not an out-of-memory error."),
        );
    }
    let index = lower.contains("index")
        || condition.contains("n_classes")
        || condition.contains("srcSelectDimSize")
        || lower.contains("idx")
        || condition.contains(" < ");
    if !index {
        return verdict_en(
            Code::DeviceAssert,
            "A GPU kernel's own check failed",
            format!("The kernel {kernel} checked `{condition}` and it failed: some input value was outside what the operation accepts. It is not an out-of-memory error; CUDA reports it asynchronously, so the traceback may point at a later line."),
        );
    }
    let meaning = if condition.contains("srcSelectDimSize") {
        "an embedding or index_select was given an id ≥ the size of the table: typically a token id ≥ the model's vocabulary size (tokens added to the tokenizer without model.resize_token_embeddings, or the wrong tokenizer for the model)"
    } else if condition.contains("n_classes") {
        "a class label given to the loss (cross_entropy / nll_loss) is negative or ≥ the number of classes: labels numbered 1..N instead of 0..N-1, a model head with too few outputs, or a padding label such as -1 without ignore_index"
    } else if lower.contains("index out of bounds") || lower.contains("idx") {
        "an index used by gather, scatter or advanced indexing points outside the dimension it indexes"
    } else {
        "an index or size given to the operation is outside the valid range"
    };
    verdict_en(
        Code::IndexOutOfRange,
        "An index was out of range on the GPU",
        format!("The kernel {kernel} checked `{condition}` and it failed: {meaning}. It is not an out-of-memory error. CUDA reports it asynchronously, so the Python traceback may point at a later line; the condition above is the reliable clue."),
    )
}

fn device_assert_fixes(f: &Finding, out: &mut Vec<Fix>) {
    out.push(fix_en(
        "See the failing index clearly",
        "Run one failing step on the CPU (model.cpu(), or CUDA_VISIBLE_DEVICES=\"\" python train.py): the same bug raises a readable IndexError there. Or rerun with CUDA_LAUNCH_BLOCKING=1 so the traceback points at the real operation.",
    ));
    let condition = fact(f, fact::ASSERTION).unwrap_or("");
    if condition.contains("srcSelectDimSize") || condition.is_empty() {
        out.push(fix_en(
            "Check token ids against the embedding size",
            "assert input_ids.max() < model.get_input_embeddings().num_embeddings; after adding tokens call model.resize_token_embeddings(len(tokenizer)); make sure the tokenizer belongs to the model.",
        ));
    }
    if condition.contains("n_classes") || condition.is_empty() {
        out.push(fix_en(
            "Check labels against the number of classes",
            "assert labels.min() >= 0 and labels.max() < num_classes; number classes from 0; mark padding with ignore_index (-100 by default in cross_entropy).",
        ));
    }
    if condition.contains("input_val >= zero") {
        out.push(fix_en(
            "Give BCE probabilities, or use the logits version",
            "Use torch.nn.BCEWithLogitsLoss on raw logits (numerically safer), or apply torch.sigmoid before BCELoss; check for NaNs in the model output.",
        ));
    }
    out.push(fix_en(
        "Restart the process after fixing it",
        "After a device-side assert the CUDA context is unusable and every later CUDA call fails; in notebooks restart the kernel. Source builds with TORCH_USE_CUDA_DSA=1 report the failing assertion in the Python error.",
    ));
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
