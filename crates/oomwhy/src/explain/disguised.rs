//! Out-of-memory errors under another name: a CUDA library that cannot
//! allocate, the caching allocator's internal assert on its OOM path, and
//! `device not ready` under memory pressure. Each verdict says the message
//! is not an OOM message, why it usually means one, and how to confirm.

use super::common::{
    confirm_fix, fact, fix_en, library_headroom_fix, verdict_en, workload_fixes, CONFIRM,
};
use super::docs::Code;
use super::Explain;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};

/// Explains `Kind::LibraryAllocFailed` findings.
pub(super) struct LibraryAllocFailed;

impl Explain for LibraryAllocFailed {
    fn headline_en(&self, f: &Finding) -> String {
        let status = fact(f, fact::STATUS).unwrap_or("an allocation failure");
        let call = fact(f, fact::CALL)
            .map(|c| format!(" at {c}"))
            .unwrap_or_default();
        if status == "CUDNN_STATUS_NOT_SUPPORTED" {
            format!("cuDNN has no algorithm for this call ({status}): an unsupported size or configuration, sometimes memory")
        } else {
            format!(
                "{} failed with {status}{call}: probably out of GPU memory under another name",
                library_name(f)
            )
        }
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(library_verdict(f))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        match fact(f, fact::STATUS) {
                Some("CUDNN_STATUS_NOT_SUPPORTED") => out.push(fix_en(
                    "Rule out the input itself",
                    "If a smaller batch does not help, make the input contiguous (x = x.contiguous()) and, to test, run with torch.backends.cudnn.enabled = False: if that works, the input layout or shape is unsupported, not memory.",
                )),
                Some("CUBLAS_STATUS_NOT_INITIALIZED") => out.push(fix_en(
                    "Rule out an out-of-range index",
                    "Run one step on the CPU: an IndexError there means a token id or label is out of range and corrupted the GPU context. Check that the tokenizer matches the model (len(tokenizer) ≤ the embedding size).",
                )),
                _ => {}
            }
        if is_tensorflow(f) {
            // TensorFlow reserves the GPU up front; cuBLAS/cuDNN then find none.
            out.push(fix_en(
                "Let TensorFlow leave room for cuBLAS and cuDNN",
                "TensorFlow takes nearly all GPU memory at start, so the library's own cudaMalloc finds none: set TF_FORCE_GPU_ALLOW_GROWTH=true, or call tf.config.experimental.set_memory_growth(gpu, True) for each GPU before any op runs (TensorFlow 1 sessions: config.gpu_options.allow_growth = True). Stop other processes on the GPU (`nvidia-smi`).",
            ));
            out.push(fix_en(
                "Confirm that it is memory",
                "Rerun with half the batch size: if the error disappears or comes later, it was memory. Watch `nvidia-smi -l 1` while it runs.",
            ));
            workload_fixes(f, out);
            return;
        }
        out.push(confirm_fix());
        out.push(library_headroom_fix(f));
        workload_fixes(f, out);
    }
}

/// True when the message or its traceback comes from TensorFlow.
fn is_tensorflow(f: &Finding) -> bool {
    // "failed to create cublas handle" is TensorFlow's stream executor's
    // wording; PyTorch prints "... when calling `cublasCreate(handle)`".
    f.text.contains("tensorflow/")
        || f.text.contains("failed to create cublas handle")
        || f.exception
            .as_deref()
            .is_some_and(|e| e.starts_with("tensorflow."))
        || f.traceback.as_ref().is_some_and(|tb| {
            tb.frames
                .iter()
                .any(|fr| fr.file.replace('\\', "/").contains("/tensorflow/"))
        })
}

/// Explains `Kind::AllocatorAssert` findings.
pub(super) struct AllocatorAssert;

impl Explain for AllocatorAssert {
    fn headline_en(&self, _f: &Finding) -> String {
        "PyTorch's allocator failed an internal assert on its out-of-memory path: probably out of GPU memory".into()
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(allocator_assert_verdict(f))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        if f.era == Some(Era::Handles) {
            out.push(fix_en(
                    "Turn off expandable segments",
                    "Remove expandable_segments:True from PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF: the ordinary allocator then reports a normal out-of-memory error with its numbers (on WSL2 expandable segments are a known source of failures).",
                ));
        }
        out.push(confirm_fix());
        workload_fixes(f, out);
        out.push(fix_en(
                "Get the numbers another way",
                "The assert hides the out-of-memory message's figures: print torch.cuda.mem_get_info() and torch.cuda.memory_summary() before the failing step to see free and reserved memory.",
            ));
    }
}

/// Explains `Kind::DeviceNotReady` findings.
pub(super) struct DeviceNotReady;

impl Explain for DeviceNotReady {
    fn headline_en(&self, _f: &Finding) -> String {
        "`CUDA driver error: device not ready`: under memory pressure (WSL2) this usually means the GPU ran out of memory".into()
    }
    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict_en(
            Code::MaskedOom,
            "Not an out-of-memory message, but under memory pressure it usually means one",
            format!("`device not ready` (CUDA_ERROR_NOT_READY) normally means \"not finished yet\" and is not an error at all; PyTorch raises it when a driver call it checks returns it. It has been reported on WSL2 when the driver could not make memory resident (dmesg shows `dxgkio_make_resident ... -12`, i.e. ENOMEM) while nvidia-smi still showed free memory, and disappeared when the job used less GPU memory (microsoft/WSL#41176; mberr/torch-max-mem#45 lists it among OOM-under-pressure messages). {CONFIRM}"),
        ))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix_en(
                "Use less of the GPU than nvidia-smi shows free",
                "On WSL2 the memory that can actually be made resident is below what nvidia-smi reports: lower the share a framework takes (vLLM --gpu-memory-utilization 0.8, smaller KV cache), the batch or the model size. `dmesg | grep -i make_resident` shows the driver's ENOMEM.",
            ));
        out.push(confirm_fix());
        workload_fixes(f, out);
    }
}

fn library_name(f: &Finding) -> &'static str {
    match fact(f, fact::LIBRARY) {
        Some("cudnn") => "cuDNN",
        Some("cusolver") => "cuSOLVER",
        _ => "cuBLAS",
    }
}

fn library_verdict(f: &Finding) -> Verdict {
    let lib = library_name(f);
    let status = fact(f, fact::STATUS).unwrap_or("an error");
    let call = fact(f, fact::CALL)
        .map(|c| format!(" when calling `{c}`"))
        .unwrap_or_default();
    let detail = match status {
        "CUDNN_STATUS_NOT_SUPPORTED" => format!(
            "cuDNN returned CUDNN_STATUS_NOT_SUPPORTED: it has no algorithm for this call. Mostly that is the input's size or configuration (batch × spatial sizes beyond cuDNN's 32-bit indexing, an unusual dtype or layout, a non-contiguous input, as PyTorch's note says); only sometimes is it memory, when no algorithm's workspace fits, which is why PyTorch Lightning and Hugging Face accelerate list this exact message among out-of-memory errors (pytorch/pytorch#4107). A smaller batch shrinks both, so test with torch.backends.cudnn.enabled = False as well. {CONFIRM}"
        ),
        "CUBLAS_STATUS_NOT_INITIALIZED" | "CUSOLVER_STATUS_NOT_INITIALIZED" | "CUSOLVER_STATUS_INTERNAL_ERROR" => format!(
            "{lib} returned {status}{call}: it could not set up its handle. This is not PyTorch's out-of-memory message, but creating the handle allocates a workspace with cudaMalloc, outside PyTorch's cache, and the most common reason it fails is that the GPU is full (maintainers' answers in QwenLM/Qwen#120 and EleutherAI/lm-evaluation-harness#1689). Less often it is a CUDA/driver mismatch, or an earlier out-of-range index (e.g. a token id ≥ the vocabulary size) that corrupted the context. {CONFIRM}"
        ),
        _ if is_tensorflow(f) => format!(
            "{lib} returned {status}{call}. This is not TensorFlow's out-of-memory message, but {lib} allocates its handle and workspace with its own cudaMalloc, outside TensorFlow's allocator, so the status means the GPU had no room left for it: TensorFlow reserves nearly all GPU memory when it starts unless memory growth is on, and another process may hold the rest."
        ),
        _ => format!(
            "{lib} returned {status}{call}. This is not PyTorch's out-of-memory message, but {lib} allocates its handle and workspace with cudaMalloc, outside PyTorch's cache, so the status means the GPU had no room left for it, often because PyTorch's cache held the memory (QwenLM/Qwen3#873 was fixed by freeing GPU memory). {CONFIRM}"
        ),
    };
    verdict_en(
        Code::MaskedOom,
        "Not an out-of-memory message, but it usually means one",
        detail,
    )
}

fn allocator_assert_verdict(f: &Finding) -> Verdict {
    let at = match (fact(f, fact::FILE), fact(f, fact::LINE)) {
        (Some(file), Some(line)) => format!(" ({file}:{line})"),
        _ => String::new(),
    };
    let detail = if f.era == Some(Era::Handles) {
        format!("`!handles_.at(i)` is an internal assert{at} in the expandable-segments code of PyTorch's caching allocator (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True), which maps physical memory into a growing segment. It has been reported under heavy memory pressure (mberr/torch-max-mem#45) and on WSL2 while decoding a large video (pytorch/pytorch#166234), i.e. when mapping more memory failed. It replaces the out-of-memory message rather than being a separate bug in your code. {CONFIRM}")
    } else {
        format!("`{}` failed{at} while PyTorch was building its out-of-memory message: since 2.1 the message lists the processes using the GPU, which PyTorch asks NVML for, and that query fails on MIG instances, Jetson and some containers. The allocation had already failed; the assert only hides the usual \"CUDA out of memory\" text and its numbers (pytorch/pytorch#122068, fal-ai/fal#478, pytorch/pytorch#185240). {CONFIRM}", fact(f, fact::ASSERT).unwrap_or("NVML_SUCCESS == r"))
    };
    verdict_en(
        Code::MaskedOom,
        "Not an out-of-memory message, but raised on the out-of-memory path",
        detail,
    )
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
