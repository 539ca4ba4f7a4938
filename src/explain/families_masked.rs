//! Headlines, verdicts and fixes for the issue-4 kinds: out-of-memory errors
//! under another name (`likely_oom`), the GPU crashes next to OOMs, the
//! distributed failures that follow one (consequences), NVIDIA Xid events,
//! Windows exits and the generic OOM fallback.
//!
//! Every `likely_oom` verdict says that the message is not an OOM message,
//! why it usually means one, and how to confirm. Every consequence kind says
//! so when the scanner linked it to an earlier OOM (`consequence_of`).

use super::verdict;
use crate::record::{Finding, Fix, Kind, Verdict};
use crate::units::format_size as fmt;

/// The kinds this module explains.
#[cfg(test)]
pub(super) const KINDS: &[Kind] = &[
    Kind::LibraryAllocFailed,
    Kind::NcclOom,
    Kind::AllocatorAssert,
    Kind::DeviceNotReady,
    Kind::DeviceSideAssert,
    Kind::MisalignedAddress,
    Kind::LaunchFailure,
    Kind::NoKernelImage,
    Kind::NcclError,
    Kind::NcclTimeout,
    Kind::ProcessGroupAborted,
    Kind::ChildFailed,
    Kind::Xid,
    Kind::WindowsAccessViolation,
    Kind::WindowsPagingFile,
    Kind::GenericOom,
];

fn fact<'f>(f: &'f Finding, key: &str) -> Option<&'f str> {
    f.facts.get(key).map(String::as_str)
}

fn fix(title: &str, how: impl Into<String>) -> Fix {
    Fix {
        title: title.to_string(),
        how: how.into(),
    }
}

fn on_device(f: &Finding) -> String {
    f.device.map(|d| format!(" on GPU {d}")).unwrap_or_default()
}

fn library_name(f: &Finding) -> &'static str {
    match fact(f, "library") {
        Some("cudnn") => "cuDNN",
        Some("cusolver") => "cuSOLVER",
        _ => "cuBLAS",
    }
}

/// How to confirm that a masked message was an out-of-memory error.
const CONFIRM: &str = "To confirm: rerun with half the batch size (if the error goes away or comes later, it was memory); watch `nvidia-smi -l 1` while it runs; print torch.cuda.memory_summary() just before the failing step.";

// ---------------------------------------------------------------- headlines

/// One line saying what happened.
pub(super) fn headline(f: &Finding) -> String {
    let device = on_device(f);
    match f.kind {
        Kind::LibraryAllocFailed => {
            let status = fact(f, "status").unwrap_or("an allocation failure");
            let call = fact(f, "call")
                .map(|c| format!(" at {c}"))
                .unwrap_or_default();
            format!(
                "{} failed with {status}{call}: probably out of GPU memory under another name",
                library_name(f)
            )
        }
        Kind::NcclOom => {
            let size = f
                .sizes
                .requested_bytes
                .map(|b| format!(" {}", fmt(b)))
                .unwrap_or_default();
            format!("NCCL could not allocate{size} of GPU memory{device}: an out-of-memory error under another name")
        }
        Kind::AllocatorAssert => {
            "PyTorch's allocator failed an internal assert on its out-of-memory path: probably out of GPU memory".into()
        }
        Kind::DeviceNotReady => {
            "`CUDA driver error: device not ready`: under memory pressure (WSL2) this usually means the GPU ran out of memory".into()
        }
        Kind::DeviceSideAssert => match (fact(f, "assertion"), fact(f, "kernel")) {
            (Some(a), Some(k)) => format!(
                "A GPU kernel's assertion failed (`{a}` in {k}): a bad index or value, not an out-of-memory error"
            ),
            _ => "A GPU kernel's assertion failed (device-side assert): usually an index out of range, not an out-of-memory error".into(),
        },
        Kind::MisalignedAddress => {
            "A GPU kernel made a misaligned memory access: a kernel bug, not an out-of-memory error".into()
        }
        Kind::LaunchFailure => {
            "A GPU kernel crashed while running (unspecified launch failure): not an out-of-memory error".into()
        }
        Kind::NoKernelImage => {
            "The installed build has no GPU code for this GPU's architecture".into()
        }
        Kind::NcclTimeout => {
            let op = fact(f, "op_type").unwrap_or("collective");
            let ran = fact(f, "ran_for_ms")
                .map(|ms| format!(" after {ms} ms"))
                .unwrap_or_default();
            let rank = fact(f, "rank")
                .map(|r| format!(" on rank {r}"))
                .unwrap_or_default();
            format!("An NCCL {op} timed out{ran}{rank}{}", consequence_suffix(f))
        }
        Kind::NcclError => format!(
            "NCCL reported an error{}{}",
            fact(f, "nccl_error")
                .map(|e| format!(" ({e})"))
                .unwrap_or_default(),
            consequence_suffix(f)
        ),
        Kind::ProcessGroupAborted => format!(
            "The NCCL process group was aborted{}{}",
            fact(f, "rank")
                .map(|r| format!(" on rank {r}"))
                .unwrap_or_default(),
            consequence_suffix(f)
        ),
        Kind::ChildFailed => {
            let script = fact(f, "script").unwrap_or("the training script");
            let root = match (fact(f, "root_cause_rank"), fact(f, "root_cause_exitcode")) {
                (Some(r), Some(e)) => format!(": root cause rank {r}, exit code {e}"),
                _ => String::new(),
            };
            format!("torchrun reports that {script} failed{root}{}", consequence_suffix(f))
        }
        Kind::Xid => {
            let code = fact(f, "xid").unwrap_or("?");
            match xid_info(code) {
                Some(info) => format!("NVIDIA driver Xid {code}: {}", info.title),
                None => format!("NVIDIA driver Xid {code} event"),
            }
        }
        Kind::WindowsAccessViolation => {
            "The process was ended by an access violation (0xC0000005): a native crash with no Python error".into()
        }
        Kind::WindowsPagingFile => format!(
            "Windows ran out of virtual memory (paging file too small){}: host memory, not GPU memory",
            fact(f, "dll_name")
                .map(|d| format!(" while loading {d}"))
                .unwrap_or_default()
        ),
        _ => generic_headline(f),
    }
}

fn consequence_suffix(f: &Finding) -> String {
    f.consequence_of
        .map(|id| format!(" (a consequence of finding [{id}])"))
        .unwrap_or_default()
}

fn generic_headline(f: &Finding) -> String {
    let device = on_device(f);
    let size = f.sizes.requested_bytes.map(fmt);
    match f.era.as_deref() {
        Some("triton_shared_memory") => match (
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
            let who = fact(f, "reported_by").unwrap_or("A GPU allocation");
            match size {
                Some(s) => format!("Out of memory: {who} could not allocate {s}{device}"),
                None => format!("Out of memory: an allocation failed{device} ({who})"),
            }
        }
    }
}

// ----------------------------------------------------------------- verdicts

/// Verdicts for one finding of a kind in [`KINDS`].
pub(super) fn verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    match f.kind {
        Kind::LibraryAllocFailed => out.push(library_verdict(f)),
        Kind::NcclOom => out.push(verdict(
            "masked_oom",
            "Not a PyTorch out-of-memory message, but an out-of-memory error",
            format!(
                "NCCL could not get GPU memory{}. NCCL allocates its communication buffers with cudaMalloc, outside PyTorch's cache, when a communicator is set up and when peers and channels connect, so it fails when PyTorch's cache has already filled the GPU. The `NCCL error ... unhandled cuda error` that PyTorch raises afterwards is the same failure. {CONFIRM}",
                f.sizes
                    .requested_bytes
                    .map(|b| format!(" ({} requested)", fmt(b)))
                    .unwrap_or_default()
            ),
        )),
        Kind::AllocatorAssert => out.push(allocator_assert_verdict(f)),
        Kind::DeviceNotReady => out.push(verdict(
            "masked_oom",
            "Not an out-of-memory message, but under memory pressure it usually means one",
            format!("`device not ready` (CUDA_ERROR_NOT_READY) normally means \"not finished yet\" and is not an error at all; PyTorch raises it when a driver call it checks returns it. It has been reported on WSL2 when the driver could not make memory resident (dmesg shows `dxgkio_make_resident ... -12`, i.e. ENOMEM) while nvidia-smi still showed free memory, and disappeared when the job used less GPU memory (microsoft/WSL#41176; mberr/torch-max-mem#45 lists it among OOM-under-pressure messages). {CONFIRM}"),
        )),
        Kind::DeviceSideAssert => out.push(device_assert_verdict(f)),
        Kind::MisalignedAddress => out.push(verdict(
            "kernel_fault",
            "A kernel bug: a misaligned memory access",
            "A kernel read or wrote memory at an address not aligned to the size of the access (cudaErrorMisalignedAddress, 716). This is a bug in a kernel, most often a custom CUDA/Triton kernel or an extension (flash-attn, xformers, bitsandbytes, apex) built for another PyTorch/CUDA version, or a tensor with an unusual storage offset or stride passed to one. It is not an out-of-memory error. CUDA reports it asynchronously, so the traceback may point at a later line.".into(),
        )),
        Kind::LaunchFailure => out.push(verdict(
            "kernel_fault",
            "A kernel crashed while running",
            "`unspecified launch failure` (cudaErrorLaunchFailure, 719) means a kernel died while executing: an out-of-bounds access in a kernel without bounds checks, a kernel killed by the display watchdog (Windows TDR, or a GPU that also drives a monitor) because it ran too long, or a driver/hardware fault (the kernel log then shows an NVIDIA Xid such as 13, 31 or 43). It is not an out-of-memory error, and the CUDA context is unusable afterwards.".into(),
        )),
        Kind::NoKernelImage => out.push(verdict(
            "arch_mismatch",
            "The binaries were not built for this GPU",
            "CUDA found no machine code (and no PTX it could compile) for this GPU's compute capability in the library that launched the kernel: a new GPU with a build that stops at an older architecture (e.g. an RTX 50-series sm_120 card with a wheel built for up to sm_90), an old GPU that the build dropped, or an extension compiled with a TORCH_CUDA_ARCH_LIST that does not include this GPU. Compare torch.cuda.get_arch_list() with torch.cuda.get_device_capability(); PyTorch usually warns at start-up that the GPU \"is not compatible with the current PyTorch installation\".".into(),
        )),
        Kind::NcclTimeout => out.push(timeout_verdict(f)),
        Kind::NcclError => out.push(
            collateral(f, "This NCCL error")
                .unwrap_or_else(|| nccl_error_verdict(f)),
        ),
        Kind::ProcessGroupAborted => out.push(collateral(f, "This abort").unwrap_or_else(|| {
            verdict(
                "nccl_failure",
                "The communicator was shut down after an earlier error",
                format!(
                    "Aborting the communicator is how PyTorch's c10d stops a process group after an error or a timeout; it is a consequence, not a cause.{} Find the first error in any rank's log: that is the cause.",
                    fact(f, "reason")
                        .map(|r| format!(" The reason it gives: {r}."))
                        .unwrap_or_default()
                ),
            )
        })),
        Kind::ChildFailed => out.push(
            collateral(f, "This launcher report").unwrap_or_else(|| launcher_verdict(f)),
        ),
        Kind::Xid => xid_verdicts(f, out),
        Kind::WindowsAccessViolation => out.push(verdict(
            "native_access_violation",
            "Native code accessed memory it does not own",
            "0xC0000005 (STATUS_ACCESS_VIOLATION) means native code read or wrote an address it had no access to and Windows ended the process, so Python printed no traceback. In GPU jobs the usual suspects are a CUDA extension or DLL built for another PyTorch/CUDA version, mixed CUDA/cuDNN DLLs found on PATH, DataLoader worker processes, or a driver crash. It is not an out-of-memory message, although a native allocation failure that goes unchecked can end this way.".into(),
        )),
        Kind::WindowsPagingFile => out.push(verdict(
            "paging_file_too_small",
            "Windows could not commit virtual memory: host memory, not GPU memory",
            format!(
                "Windows refused to commit more virtual memory while loading {}. Every process that imports torch maps the CUDA and cuDNN DLLs, several GB of commit charge, and on Windows every DataLoader worker is a new process that imports torch again. When RAM plus the paging file cannot cover the total, loading fails with WinError 1455. The GPU's memory is not involved.",
                fact(f, "dll_name").unwrap_or("a DLL")
            ),
        )),
        Kind::GenericOom => out.push(generic_verdict(f)),
        _ => {}
    }
}

fn library_verdict(f: &Finding) -> Verdict {
    let lib = library_name(f);
    let status = fact(f, "status").unwrap_or("an error");
    let call = fact(f, "call")
        .map(|c| format!(" when calling `{c}`"))
        .unwrap_or_default();
    let detail = match status {
        "CUDNN_STATUS_NOT_SUPPORTED" => format!(
            "cuDNN returned CUDNN_STATUS_NOT_SUPPORTED. PyTorch adds that this \"may appear if you passed in a non-contiguous input\", but in practice it most often appears when cuDNN cannot get the workspace memory an algorithm needs, which is why PyTorch Lightning and Hugging Face accelerate treat this exact message as an out-of-memory error (pytorch/pytorch#4107). A really unsupported input (non-contiguous tensor, unusual shape or dtype) is the other cause. {CONFIRM} If a smaller batch does not help, try x.contiguous() on the input."
        ),
        "CUBLAS_STATUS_NOT_INITIALIZED" | "CUSOLVER_STATUS_NOT_INITIALIZED" | "CUSOLVER_STATUS_INTERNAL_ERROR" => format!(
            "{lib} returned {status}{call}: it could not set up its handle. This is not PyTorch's out-of-memory message, but creating the handle allocates a workspace with cudaMalloc, outside PyTorch's cache, and the most common reason it fails is that the GPU is full (maintainers' answers in QwenLM/Qwen#120 and EleutherAI/lm-evaluation-harness#1689). Less often it is a CUDA/driver mismatch, or an earlier out-of-range index (e.g. a token id ≥ the vocabulary size) that corrupted the context. {CONFIRM}"
        ),
        _ => format!(
            "{lib} returned {status}{call}. This is not PyTorch's out-of-memory message, but {lib} allocates its handle and workspace with cudaMalloc, outside PyTorch's cache, so the status means the GPU had no room left for it, often because PyTorch's cache held the memory (QwenLM/Qwen3#873 was fixed by freeing GPU memory). {CONFIRM}"
        ),
    };
    verdict(
        "masked_oom",
        "Not an out-of-memory message, but it usually means one",
        detail,
    )
}

fn allocator_assert_verdict(f: &Finding) -> Verdict {
    let at = match (fact(f, "file"), fact(f, "line")) {
        (Some(file), Some(line)) => format!(" ({file}:{line})"),
        _ => String::new(),
    };
    let detail = if f.era.as_deref() == Some("handles") {
        format!("`!handles_.at(i)` is an internal assert{at} in the expandable-segments code of PyTorch's caching allocator (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True), which maps physical memory into a growing segment. It has been reported under heavy memory pressure (mberr/torch-max-mem#45) and on WSL2 while decoding a large video (pytorch/pytorch#166234), i.e. when mapping more memory failed. It replaces the out-of-memory message rather than being a separate bug in your code. {CONFIRM}")
    } else {
        format!("`{}` failed{at} while PyTorch was building its out-of-memory message: since 2.1 the message lists the processes using the GPU, which PyTorch asks NVML for, and that query fails on MIG instances, Jetson and some containers. The allocation had already failed; the assert only hides the usual \"CUDA out of memory\" text and its numbers (message-formats.md §2.6; fal-ai/fal#478, pytorch/pytorch#185240). {CONFIRM}", fact(f, "assert").unwrap_or("NVML_SUCCESS == r"))
    };
    verdict(
        "masked_oom",
        "Not an out-of-memory message, but raised on the out-of-memory path",
        detail,
    )
}

fn device_assert_verdict(f: &Finding) -> Verdict {
    let Some(condition) = fact(f, "assertion") else {
        return verdict(
            "device_assert",
            "A GPU kernel's own check failed",
            "A kernel checked a condition on its input and it failed (cudaErrorAssert, 710). The kernel prints the failed condition itself (`...: block: [..], thread: [..] Assertion `...` failed.`), usually to standard output, before the Python error or in another log file; that line names the problem. By far the most common cause is an index out of range: a token id ≥ the embedding size, a class label < 0 or ≥ the number of classes, a gather/scatter index outside the tensor. It is not an out-of-memory error, and CUDA reports it asynchronously, so the traceback may point at a later line.".into(),
        );
    };
    let kernel = fact(f, "kernel").unwrap_or("a kernel");
    let lower = condition.to_ascii_lowercase();
    if condition.contains("input_val >= zero && input_val <= one") {
        return verdict(
            "device_assert",
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
        return verdict(
            "device_assert",
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
    verdict(
        "index_out_of_range",
        "An index was out of range on the GPU",
        format!("The kernel {kernel} checked `{condition}` and it failed: {meaning}. It is not an out-of-memory error. CUDA reports it asynchronously, so the Python traceback may point at a later line; the condition above is the reliable clue."),
    )
}

/// The verdict of a consequence kind that follows an earlier OOM.
fn collateral(f: &Finding, what: &str) -> Option<Verdict> {
    let id = f.consequence_of?;
    let root = match f.kind {
        Kind::ChildFailed => match (fact(f, "root_cause_rank"), fact(f, "root_cause_exitcode")) {
            (Some(r), Some(e)) => format!(" Its \"root cause\" (rank {r}, exit code {e}) is only the first exit the launcher observed, not necessarily the rank that ran out of memory."),
            _ => String::new(),
        },
        _ => String::new(),
    };
    Some(verdict(
        "collateral_failure",
        &format!("A consequence of finding [{id}], not a separate cause"),
        format!("{what} follows finding [{id}], an earlier (probable) out-of-memory error. When one rank dies, its peers lose their connection to it or wait for it at the next collective, and fail in turn; the launcher then reports every exit.{root} Fix finding [{id}] first: this error will go away with it."),
    ))
}

fn timeout_verdict(f: &Finding) -> Verdict {
    let rank = fact(f, "rank")
        .map(|r| format!("Rank {r}"))
        .unwrap_or_else(|| "A rank".into());
    let op = fact(f, "op_type").unwrap_or("a collective");
    let seq = fact(f, "seq_num")
        .map(|s| format!(" (SeqNum {s})"))
        .unwrap_or_default();
    let ran = fact(f, "ran_for_ms")
        .map(|ms| format!(" for {ms} ms"))
        .unwrap_or_default();
    let limit = fact(f, "timeout_ms")
        .map(|ms| format!(" the timeout of {ms} ms"))
        .unwrap_or_else(|| " its timeout".into());
    if let Some(id) = f.consequence_of {
        return verdict(
            "collateral_timeout",
            &format!("A consequence of finding [{id}], not a separate cause"),
            format!("{rank} waited{ran} in {op}{seq} for ranks that never joined. Finding [{id}] is an earlier (probable) out-of-memory error: once a rank dies, the others block at the next collective until the NCCL watchdog gives up after{limit}. Fix finding [{id}]; this timeout will go away with it."),
        );
    }
    verdict(
        "collective_timeout",
        "A collective waited for a rank that never arrived",
        format!("{rank} waited{ran} in {op}{seq} and the NCCL watchdog gave up after{limit}. Some other rank did not reach this collective: it crashed (its log shows the first error), hangs, or is far slower (evaluation, logging or checkpointing on rank 0 only, a data loader stall, uneven numbers of batches). The rank that timed out is usually the victim, not the culprit."),
    )
}

fn nccl_error_verdict(f: &Finding) -> Verdict {
    let meaning = match fact(f, "nccl_error") {
        Some("ncclUnhandledCudaError") => format!(
            "a CUDA call inside NCCL failed{}",
            fact(f, "last_error")
                .map(|e| format!("; NCCL's last error was `{e}`"))
                .unwrap_or_default()
        ),
        Some("ncclSystemError") => "a system call or external library failed (socket, shared memory, malloc): in containers often a /dev/shm that is too small, otherwise the network interface NCCL picked, or a peer process that exited".into(),
        Some("ncclRemoteError") => "a peer closed the connection: a remote process exited (crashed) or the network failed".into(),
        Some("ncclInternalError") | Some("ncclInvalidUsage") | Some("ncclInvalidArgument") => "NCCL's own consistency check failed: ranks calling different collectives or tensors of different sizes, mismatched NCCL versions, or a bug".into(),
        _ => fact(f, "reason").map_or_else(
            || "the process group's backend reported an error".to_string(),
            |r| format!("it reports: {r}"),
        ),
    };
    verdict(
        "nccl_failure",
        "Collective communication failed",
        format!("NCCL or PyTorch's c10d failed: {meaning}. When one rank crashes first (an OOM, an assert), the others fail like this at their next collective, so look for the earliest error in every rank's log before debugging NCCL itself."),
    )
}

fn launcher_verdict(f: &Finding) -> Verdict {
    let rank = fact(f, "root_cause_rank").unwrap_or("?");
    let code = fact(f, "root_cause_exitcode").unwrap_or("?");
    let signal = fact(f, "root_cause_signal");
    let exit_meaning = match (code, signal) {
        (_, Some("SIGKILL")) | ("-9", _) => "killed with SIGKILL: most often the Linux out-of-memory killer (host RAM, not GPU memory) or the job scheduler; check `dmesg -T | grep -i -E 'killed process|out of memory'`".to_string(),
        (_, Some("SIGABRT")) | ("-6", _) => "aborted by native code: typically c10d's watchdog taking the process down after an NCCL error or timeout, or an uncaught C++ exception".into(),
        (_, Some("SIGSEGV")) | ("-11", _) => "a segmentation fault in native code".into(),
        (_, Some("SIGTERM")) | ("-15", _) => "terminated from outside (the launcher or scheduler), often because another rank failed first".into(),
        ("1", _) => "a Python exception: its traceback is in that rank's own output".into(),
        _ => format!("exit code {code}"),
    };
    let record = if fact(f, "root_cause_error_file").is_some_and(|e| e.contains("N/A")) {
        " The report has no traceback because the entry point is not decorated with @record (torch.distributed.elastic.multiprocessing.errors.record)."
    } else {
        ""
    };
    verdict(
        "launcher_report",
        "The launcher only reports that workers exited",
        format!("torchrun (torchelastic) does not know why workers failed. Its \"root cause\" is the first failure it observed: rank {rank}, exit code {code}, i.e. {exit_meaning}. The first observed failure can be a victim that timed out rather than the culprit.{record} Read that rank's own output for the real error."),
    )
}

/// What NVIDIA's Xid documentation says about the codes ML jobs meet.
pub(super) struct XidInfo {
    pub title: &'static str,
    pub meaning: &'static str,
    pub action: &'static str,
    /// The GPU or its connection, not the program.
    pub hardware: bool,
}

pub(super) fn xid_info(code: &str) -> Option<XidInfo> {
    let info = |title, meaning, action, hardware| XidInfo {
        title,
        meaning,
        action,
        hardware,
    };
    Some(match code {
        "13" => info("Graphics engine exception", "The GPU's compute engine raised an exception while running a kernel. NVIDIA lists application errors (such as an out-of-range access in a kernel) as well as driver and hardware faults as causes; its catalog's immediate action is to restart the application.", "Restart the application. If it recurs in the same program, debug it like an illegal memory access (CUDA_LAUNCH_BLOCKING=1, compute-sanitizer); if it recurs across programs, run DCGM diagnostics (dcgmi diag -r 2).", false),
        "31" => info("GPU memory page fault", "A kernel accessed a GPU virtual address that is not mapped (an MMU fault): usually an application bug (an illegal memory access) or a driver bug, rarely hardware.", "Restart the application and debug it like an illegal memory access (compute-sanitizer --tool memcheck).", false),
        "43" => info("GPU stopped processing", "The driver stopped the faulting application's work on the GPU after an error in that application (NVIDIA lists user-application and driver errors as causes). The GPU normally stays usable for other work.", "Restart the application; look for the application's own CUDA error in its log.", false),
        "45" => info("Preemptive cleanup, due to previous errors", "The driver cleaned up an application's GPU work because of an earlier error, or because the process was killed while work was pending. It is a follow-up, not a cause.", "Look at the Xid or application error just before it.", false),
        "48" => info("Double-bit ECC error", "An uncorrectable (double-bit) ECC error in GPU memory: a hardware memory error. Applications using that memory are affected.", "Reset the GPU (nvidia-smi -r) or reboot so the bad memory is retired or remapped; if it recurs, have the GPU serviced.", true),
        "63" => info("ECC page retirement or row-remapping event", "After ECC errors the driver recorded a memory page to retire (older GPUs) or a row to remap (A100 and newer); it takes effect after the GPU is reset.", "Reset the GPU or reboot at a convenient time; check `nvidia-smi -q -d ROW_REMAPPER` (or PAGE_RETIREMENT on older GPUs).", true),
        "64" => info("ECC page retirement or row-remapping failure", "The driver failed to record a page retirement or row remapping after ECC errors.", "Reset the GPU; if it recurs, the GPU needs service (RMA).", true),
        "74" => info("NVLink error", "An error on an NVLink connection between GPUs (or between a GPU and an NVSwitch).", "Check `nvidia-smi nvlink -e`; reset the GPUs or the node; recurring errors need hardware service.", true),
        "79" => info("GPU has fallen off the bus", "The driver lost contact with the GPU over PCIe; the GPU is unusable until the node is rebooted. The causes are in the hardware or platform: power delivery, overheating, a PCIe slot or riser fault.", "Reboot (power-cycle) the node; check power and temperatures; if it recurs on the same GPU, have it serviced.", true),
        "92" => info("High single-bit ECC error rate", "Correctable (single-bit) ECC errors occur at a high rate. Data is still corrected; the rate is an early warning of failing memory.", "Watch `nvidia-smi -q -d ECC`; plan maintenance if the rate keeps rising.", true),
        "94" => info("Contained ECC error", "An uncorrectable ECC error that the GPU contained: only the application(s) using the affected memory are hit and must restart; other applications keep running.", "Restart the affected application; reset the GPU at a convenient time so the row remapping takes effect.", true),
        "95" => info("Uncontained ECC error", "An uncorrectable ECC error that could not be contained: every application on this GPU is affected.", "Stop the work on this GPU and reset it (nvidia-smi -r) or reboot; recurring errors need hardware service.", true),
        "119" => info("GSP RPC timeout", "The GPU System Processor (GSP, firmware that runs part of the driver on the GPU) did not answer the driver in time.", "Reset the GPU or reboot the node and update the driver; contact your provider or NVIDIA support if it recurs.", true),
        _ => return None,
    })
}

fn xid_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let code = fact(f, "xid").unwrap_or("?");
    let process = match (fact(f, "process"), fact(f, "pid")) {
        (Some(name), Some(pid)) => format!(" The driver names process {name} (PID {pid})."),
        (None, Some(pid)) => format!(" The driver names PID {pid}."),
        _ => String::new(),
    };
    let Some(info) = xid_info(code) else {
        out.push(verdict(
            "xid_error",
            &format!("NVIDIA driver Xid {code}"),
            format!("The NVIDIA kernel driver logged Xid {code}.{process} oomwhy does not describe this code; look it up in NVIDIA's Xid catalog (https://docs.nvidia.com/deploy/xid-errors/) before acting on it."),
        ));
        return;
    };
    out.push(verdict(
        "xid_error",
        &format!("Xid {code}: {}", info.title),
        format!("{}{process} What to do: {}", info.meaning, info.action),
    ));
    if info.hardware {
        out.push(verdict(
            "hardware_fault",
            "The GPU or its connection failed, not your program",
            format!("Xid {code} comes from the GPU hardware, its memory, its links or its firmware. The training code did not cause it, and a smaller batch or different memory settings will not help. Move the job to another GPU or node while this one is checked."),
        ));
    }
}

fn generic_verdict(f: &Finding) -> Verdict {
    let size = f.sizes.requested_bytes.map(fmt);
    let device = on_device(f);
    if f.era.as_deref() == Some("triton_shared_memory") {
        let limit = f
            .sizes
            .extra
            .get("hardware_limit_bytes")
            .copied()
            .flatten()
            .map(fmt)
            .unwrap_or_else(|| "its".into());
        return verdict(
            "shared_memory_limit",
            "A kernel's configuration does not fit this GPU's shared memory",
            format!("A Triton kernel was compiled to use {} of shared memory per thread block, more than this GPU's limit of {limit}. Shared memory is fast on-chip memory of each multiprocessor, not the GPU's main memory: a smaller batch or freeing GPU memory will not help. The kernel's tile sizes and pipeline stages (BLOCK_* and num_stages) were chosen for a GPU with more shared memory, e.g. an A100/H100 configuration running on a consumer card.", size.unwrap_or_else(|| "more".into())),
        );
    }
    let what = match f.era.as_deref() {
        Some("llama_cpp") => format!("llama.cpp asked cudaMalloc for {}{device} and the driver refused: the model weights, the KV cache or a compute buffer do not fit in the free GPU memory.", size.as_deref().unwrap_or("a buffer")),
        Some("ctranslate2") => "CTranslate2 (used by faster-whisper, WhisperX and others) failed a CUDA allocation: the model, the beams or the batch do not fit in the free GPU memory.".to_string(),
        Some("onnxruntime") => format!("ONNX Runtime's memory arena could not get a buffer of {}. The message does not say whether that arena belongs to the CUDA execution provider or to the CPU; with the CUDA provider it is GPU memory.", size.as_deref().unwrap_or("the requested size")),
        Some("torch_oom_class") => "PyTorch's OutOfMemoryError was raised, but without its allocator's usual \"Tried to allocate ...\" text: a library raised the class with its own message, or the message was cut off.".to_string(),
        Some("cupy_oom_class") => format!("CuPy's memory pool could not allocate {}.", size.as_deref().unwrap_or("the requested block")),
        Some("cuda_driver") | Some("cuda_runtime") | Some("hip") => format!(
            "A {} allocation failed with {}{}{device}. TensorFlow and JAX print this when their allocator cannot get memory; TensorFlow also reserves most of the GPU when it starts, leaving little for other libraries.",
            if f.era.as_deref() == Some("hip") { "HIP" } else { "CUDA" },
            fact(f, "error_name").unwrap_or("an out-of-memory error"),
            size.as_deref().map(|s| format!(" for {s}")).unwrap_or_default()
        ),
        _ => format!("{} reported that an allocation failed{device}.", fact(f, "reported_by").unwrap_or("The backend")),
    };
    let repeated = if f.occurrences > 1 {
        format!(
            " The same failure was printed {} times in a row (a retry loop).",
            f.occurrences
        )
    } else {
        String::new()
    };
    verdict(
        "allocation_failed",
        "A GPU allocation failed: out of memory",
        format!("{what}{repeated}"),
    )
}

// -------------------------------------------------------------------- fixes

fn confirm_fix() -> Fix {
    fix(
        "Confirm that it is memory",
        "Rerun with half the batch size: if the error disappears or comes later, it was memory. Watch `nvidia-smi -l 1` while it runs and print torch.cuda.memory_summary() just before the failing step.",
    )
}

fn headroom_fix() -> Fix {
    fix(
        "Leave room outside PyTorch's cache",
        "cuBLAS, cuDNN, cuSOLVER and NCCL allocate with cudaMalloc directly and cannot use memory PyTorch has cached. Cap PyTorch with torch.cuda.set_per_process_memory_fraction(0.9), or call torch.cuda.empty_cache() before the failing call; stop other processes on the GPU (`nvidia-smi`).",
    )
}

fn workload_fix() -> Fix {
    fix(
        "Make the workload smaller",
        "Halve the batch size (keep the effective batch with gradient accumulation), run under torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16), enable gradient checkpointing, shorten sequences.",
    )
}

fn consequence_fix(f: &Finding, out: &mut Vec<Fix>) {
    if let Some(id) = f.consequence_of {
        out.push(fix(
            &format!("Fix finding [{id}] first"),
            format!("This error is collateral damage of finding [{id}]. Apply that finding's fixes; once no rank runs out of memory, this one disappears."),
        ));
    }
}

fn find_first_error_fix() -> Fix {
    fix(
        "Find the first error across all ranks",
        "Give every rank its own log (torchrun --log-dir logs --redirects 3 --tee 3, or prefix lines with the rank) and look for the earliest error; decorate the entry point with @torch.distributed.elastic.multiprocessing.errors.record so tracebacks reach the launcher's report.",
    )
}

/// Fixes for one finding of a kind in [`KINDS`], most effective first.
pub(super) fn fixes(f: &Finding, out: &mut Vec<Fix>) {
    match f.kind {
        Kind::LibraryAllocFailed => {
            match fact(f, "status") {
                Some("CUDNN_STATUS_NOT_SUPPORTED") => out.push(fix(
                    "Rule out the input itself",
                    "If a smaller batch does not help, make the input contiguous (x = x.contiguous()) and, to test, run with torch.backends.cudnn.enabled = False: if that works, the input layout or shape is unsupported, not memory.",
                )),
                Some("CUBLAS_STATUS_NOT_INITIALIZED") => out.push(fix(
                    "Rule out an out-of-range index",
                    "Run one step on the CPU: an IndexError there means a token id or label is out of range and corrupted the GPU context. Check that the tokenizer matches the model (len(tokenizer) ≤ the embedding size).",
                )),
                _ => {}
            }
            out.push(confirm_fix());
            out.push(headroom_fix());
            out.push(workload_fix());
        }
        Kind::NcclOom => {
            out.push(fix(
                "Let NCCL allocate before the model fills the GPU",
                "Initialise the process group and run one collective (e.g. dist.barrier(device_ids=[local_rank])) before building the model and optimizer, so NCCL's buffers exist before PyTorch's cache grows; leave headroom with torch.cuda.set_per_process_memory_fraction(0.9). NCCL_BUFFSIZE (default 4 MiB per channel) and NCCL_MAX_NCHANNELS shrink NCCL's own buffers.",
            ));
            out.push(confirm_fix());
            out.push(workload_fix());
        }
        Kind::AllocatorAssert => {
            if f.era.as_deref() == Some("handles") {
                out.push(fix(
                    "Turn off expandable segments",
                    "Remove expandable_segments:True from PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF: the ordinary allocator then reports a normal out-of-memory error with its numbers (on WSL2 expandable segments are a known source of failures).",
                ));
            }
            out.push(confirm_fix());
            out.push(workload_fix());
            out.push(fix(
                "Get the numbers another way",
                "The assert hides the out-of-memory message's figures: print torch.cuda.mem_get_info() and torch.cuda.memory_summary() before the failing step to see free and reserved memory.",
            ));
        }
        Kind::DeviceNotReady => {
            out.push(fix(
                "Use less of the GPU than nvidia-smi shows free",
                "On WSL2 the memory that can actually be made resident is below what nvidia-smi reports: lower the share a framework takes (vLLM --gpu-memory-utilization 0.8, smaller KV cache), the batch or the model size. `dmesg | grep -i make_resident` shows the driver's ENOMEM.",
            ));
            out.push(confirm_fix());
            out.push(workload_fix());
        }
        Kind::DeviceSideAssert => device_assert_fixes(f, out),
        Kind::MisalignedAddress => {
            out.push(fix(
                "Find the kernel that failed",
                "Rerun with CUDA_LAUNCH_BLOCKING=1 so the traceback points at the real call, or run `compute-sanitizer --tool memcheck python train.py` on a tiny input to name the kernel.",
            ));
            out.push(fix(
                "Rebuild or update the extension that owns it",
                "Reinstall custom kernels (flash-attn, xformers, bitsandbytes, apex) built for your exact PyTorch and CUDA versions; to test, switch to PyTorch's own kernels (e.g. attn_implementation=\"eager\" or \"sdpa\" in Hugging Face models).",
            ));
            out.push(fix(
                "Pass contiguous tensors to custom ops",
                "Call .contiguous() on inputs of custom kernels; views with odd storage offsets (slices, narrow) are a common source of misaligned pointers.",
            ));
        }
        Kind::LaunchFailure => {
            out.push(fix(
                "Find the kernel that failed",
                "Rerun with CUDA_LAUNCH_BLOCKING=1, or under `compute-sanitizer --tool memcheck` on a tiny input.",
            ));
            out.push(fix(
                "Check the driver's kernel log",
                "`sudo dmesg -T | grep -i xid` shows NVIDIA Xid events at the time of the crash; oomwhy explains them when given that log.",
            ));
            out.push(fix(
                "Rule out the display watchdog",
                "On a GPU that also drives a monitor (and on Windows, WDDM's TDR), kernels running longer than about 2 seconds are killed: use a GPU without a display, smaller batches per kernel, or raise TdrDelay on Windows.",
            ));
        }
        Kind::NoKernelImage => {
            out.push(fix(
                "Install a build for your GPU",
                "Compare `python -c \"import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())\"`: your capability (e.g. (12, 0) = sm_120) must be in the list. Install a wheel built with a CUDA version that supports the GPU (Blackwell GPUs such as the RTX 50 series need CUDA 12.8 or newer builds); old GPUs need an older PyTorch that still includes them.",
            ));
            out.push(fix(
                "Rebuild extensions for this architecture",
                "If the failing kernel belongs to an extension, rebuild it with TORCH_CUDA_ARCH_LIST set to your capability (e.g. TORCH_CUDA_ARCH_LIST=\"8.6\" pip install --no-build-isolation --force-reinstall <package>).",
            ));
        }
        Kind::NcclTimeout => {
            consequence_fix(f, out);
            out.push(find_first_error_fix());
            out.push(fix(
                "Record what each rank was doing",
                "Set TORCH_NCCL_TRACE_BUFFER_SIZE=2000 and TORCH_NCCL_DUMP_ON_TIMEOUT=1 (PyTorch 2.3 or newer) to dump the flight recorder on timeout: it shows which rank missed which collective.",
            ));
            out.push(fix(
                "Make every rank run the same collectives",
                "Evaluation, logging or checkpointing under `if rank == 0:` that calls a collective (or takes longer than the timeout) leaves the others waiting; uneven data (DistributedSampler without drop_last=True) makes one rank run an extra step.",
            ));
            out.push(fix(
                "Raise the timeout only for slow but healthy steps",
                "dist.init_process_group(backend=\"nccl\", timeout=datetime.timedelta(minutes=30)) helps when a step is legitimately slow (first-step compilation, saving a large checkpoint), not when a rank has crashed.",
            ));
        }
        Kind::NcclError | Kind::ProcessGroupAborted => {
            consequence_fix(f, out);
            out.push(find_first_error_fix());
            out.push(fix(
                "Let NCCL say what failed",
                "Rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=INIT,NET for setup problems): the WARN lines name the failing call.",
            ));
            if fact(f, "nccl_error") == Some("ncclSystemError") {
                out.push(fix(
                    "Check shared memory and the network interface",
                    "In Docker give NCCL shared memory (--ipc=host or --shm-size=16g); choose the interface with NCCL_SOCKET_IFNAME=eth0 (your interface); to test, NCCL_P2P_DISABLE=1 or NCCL_IB_DISABLE=1.",
                ));
            }
        }
        Kind::ChildFailed => {
            consequence_fix(f, out);
            out.push(fix(
                "Read the root-cause rank's own output",
                format!(
                    "The real error is in rank {}'s log. torchrun --log-dir logs --redirects 3 --tee 3 keeps one file per rank.",
                    fact(f, "root_cause_rank").unwrap_or("N")
                ),
            ));
            if fact(f, "root_cause_exitcode") == Some("-9")
                || fact(f, "root_cause_signal") == Some("SIGKILL")
            {
                out.push(fix(
                    "Check the host's out-of-memory killer",
                    "`dmesg -T | grep -i -E 'killed process|out of memory'` (or the scheduler's accounting, e.g. sacct) tells whether host RAM ran out; fewer DataLoader workers, smaller prefetch, or loading checkpoints with mmap=True lower host memory.",
                ));
            }
            out.push(fix(
                "Put the traceback into the report",
                "Decorate the entry point with @torch.distributed.elastic.multiprocessing.errors.record (from torch.distributed.elastic.multiprocessing.errors import record).",
            ));
        }
        Kind::Xid => {
            let code = fact(f, "xid").unwrap_or("");
            if let Some(info) = xid_info(code) {
                out.push(fix("Do what NVIDIA recommends for this Xid", info.action));
            }
            out.push(fix(
                "Check the GPU's health",
                "`nvidia-smi -q -d ECC,ROW_REMAPPER` shows memory errors and pending remaps; `dcgmi diag -r 2` runs NVIDIA's diagnostics (a few minutes).",
            ));
            out.push(fix(
                "Keep the kernel log with the job log",
                "`sudo dmesg -T | grep -i xid` (or journalctl -k) around the crash time: the Xid code tells hardware faults from program faults.",
            ));
        }
        Kind::WindowsAccessViolation => {
            out.push(fix(
                "Get a native stack trace",
                "Run from a terminal with `python -X faulthandler train.py` (it prints the Python stack on the crash); Event Viewer → Windows Logs → Application names the faulting module (nvcuda64.dll, cudnn*.dll, an extension's .pyd).",
            ));
            out.push(fix(
                "Rule out DataLoader workers",
                "Try num_workers=0: on Windows each worker is a separate process, and crashes in them end this way.",
            ));
            out.push(fix(
                "Match the native pieces",
                "Reinstall PyTorch and every CUDA extension from wheels built for the same CUDA version, remove other CUDA/cuDNN DLL folders from PATH, update the GPU driver.",
            ));
        }
        Kind::WindowsPagingFile => {
            out.push(fix(
                "Raise the Windows paging file",
                "System Properties → Advanced → Performance Settings → Advanced → Virtual memory → Change: set \"System managed size\" or a custom maximum of tens of GB on the drive with space, then restart.",
            ));
            out.push(fix(
                "Use fewer DataLoader workers",
                "Each worker imports torch and maps the CUDA DLLs again: num_workers=0 to 2, or persistent_workers=True so they start once.",
            ));
            out.push(fix(
                "Free host memory",
                "Close other programs; add RAM if it keeps happening.",
            ));
        }
        Kind::GenericOom => generic_fixes(f, out),
        _ => {}
    }
}

fn device_assert_fixes(f: &Finding, out: &mut Vec<Fix>) {
    out.push(fix(
        "See the failing index clearly",
        "Run one failing step on the CPU (model.cpu(), or CUDA_VISIBLE_DEVICES=\"\" python train.py): the same bug raises a readable IndexError there. Or rerun with CUDA_LAUNCH_BLOCKING=1 so the traceback points at the real operation.",
    ));
    let condition = fact(f, "assertion").unwrap_or("");
    if condition.contains("srcSelectDimSize") || condition.is_empty() {
        out.push(fix(
            "Check token ids against the embedding size",
            "assert input_ids.max() < model.get_input_embeddings().num_embeddings; after adding tokens call model.resize_token_embeddings(len(tokenizer)); make sure the tokenizer belongs to the model.",
        ));
    }
    if condition.contains("n_classes") || condition.is_empty() {
        out.push(fix(
            "Check labels against the number of classes",
            "assert labels.min() >= 0 and labels.max() < num_classes; number classes from 0; mark padding with ignore_index (-100 by default in cross_entropy).",
        ));
    }
    if condition.contains("input_val >= zero") {
        out.push(fix(
            "Give BCE probabilities, or use the logits version",
            "Use torch.nn.BCEWithLogitsLoss on raw logits (numerically safer), or apply torch.sigmoid before BCELoss; check for NaNs in the model output.",
        ));
    }
    out.push(fix(
        "Restart the process after fixing it",
        "After a device-side assert the CUDA context is unusable and every later CUDA call fails; in notebooks restart the kernel. Source builds with TORCH_USE_CUDA_DSA=1 report the failing assertion in the Python error.",
    ));
}

fn generic_fixes(f: &Finding, out: &mut Vec<Fix>) {
    match f.era.as_deref() {
        Some("triton_shared_memory") => {
            out.push(fix(
                "Use a kernel configuration for this GPU",
                "Update the library that ships the kernel (vLLM, unsloth, flash-linear-attention, ...): newer releases often carry configurations for more GPUs. If you own the kernel, lower num_stages or the BLOCK_* sizes in its triton.Config / autotune list.",
            ));
            out.push(fix(
                "Switch to a non-Triton path",
                "Disable the Triton kernel (e.g. torch.compile off, a different attention backend) to test; batch size and memory settings do not affect this error.",
            ));
        }
        Some("llama_cpp") => {
            out.push(fix(
                "Offload fewer layers or shrink the context",
                "Lower -ngl / --n-gpu-layers, reduce the context (-c), quantise the KV cache (--cache-type-k q8_0 --cache-type-v q8_0), lower -b/-ub, or use a smaller quantisation of the model.",
            ));
            out.push(fix(
                "Free the GPU",
                "`nvidia-smi` shows other processes (a second server, a desktop compositor) holding memory; close them or pick another GPU with CUDA_VISIBLE_DEVICES.",
            ));
        }
        Some("ctranslate2") => out.push(fix(
            "Use less memory per request",
            "Load the model with compute_type=\"int8_float16\" (or \"int8\"), lower beam_size and batch_size, use a smaller model, or device=\"cpu\" to test.",
        )),
        Some("onnxruntime") => out.push(fix(
            "Bound ONNX Runtime's arena",
            "For the CUDA provider set provider options {\"gpu_mem_limit\": N, \"arena_extend_strategy\": \"kSameAsRequested\"}; use smaller inputs or batches; load fewer models per GPU.",
        )),
        Some("cupy_oom_class") => out.push(fix(
            "Release or cap CuPy's pool",
            "cupy.get_default_memory_pool().free_all_blocks() returns cached blocks; cupy.get_default_memory_pool().set_limit(size=...) keeps CuPy from taking memory other libraries need.",
        )),
        Some("cuda_driver") | Some("cuda_runtime") | Some("hip") => out.push(fix(
            "Stop frameworks from reserving the whole GPU",
            "TensorFlow: TF_FORCE_GPU_ALLOW_GROWTH=true (or tf.config.experimental.set_memory_growth); JAX: XLA_PYTHON_CLIENT_PREALLOCATE=false or XLA_PYTHON_CLIENT_MEM_FRACTION=.5; and stop other processes shown by `nvidia-smi`.",
        )),
        _ => {}
    }
    if f.era.as_deref() != Some("triton_shared_memory") {
        out.push(workload_fix());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode_str;

    fn only(text: &str) -> Finding {
        let mut findings = decode_str(text);
        assert_eq!(findings.len(), 1, "{text}: {findings:#?}");
        findings.remove(0)
    }

    fn codes(f: &Finding) -> Vec<&str> {
        f.diagnosis
            .verdicts
            .iter()
            .map(|v| v.code.as_str())
            .collect()
    }

    #[test]
    fn masked_ooms_say_so_and_how_to_confirm() {
        for text in [
            "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
            "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.",
            "host:1:2 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes",
            r#"RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":830, please report a bug to PyTorch. "#,
            "RuntimeError: CUDA driver error: device not ready",
        ] {
            let f = only(text);
            assert_eq!(f.category, crate::record::Category::LikelyOom, "{text}");
            let v = &f.diagnosis.verdicts[0];
            assert_eq!(v.code, "masked_oom");
            assert!(v.title.contains("Not a") || v.title.contains("Not an"), "{}", v.title);
            assert!(v.detail.contains("To confirm"), "{}", v.detail);
            assert!(!f.diagnosis.fixes.is_empty());
        }
    }

    #[test]
    fn device_assert_verdicts() {
        let f = only("/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\nRuntimeError: CUDA error: device-side assert triggered\n");
        assert_eq!(codes(&f), ["index_out_of_range"]);
        assert!(f.diagnosis.verdicts[0].detail.contains("vocabulary"));
        let g = only("Loss.cu:94: operator(): block: [0,0,0], thread: [0,0,0] Assertion `input_val >= zero && input_val <= one` failed.\n");
        assert_eq!(codes(&g), ["device_assert"]);
        let h = only("RuntimeError: CUDA error: device-side assert triggered\n");
        assert_eq!(codes(&h), ["device_assert"]);
    }

    #[test]
    fn consequences_point_at_the_oom() {
        let log = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.11 GiB memory in use. Of the allocated memory 75.20 GiB is allocated by PyTorch, and 1.40 GiB is reserved by PyTorch but unallocated.\n[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600030 milliseconds before timing out.\n[rank0]: next\n";
        let findings = decode_str(log);
        assert_eq!(findings.len(), 2, "{findings:#?}");
        let timeout = &findings[1];
        assert_eq!(timeout.kind, Kind::NcclTimeout);
        assert_eq!(timeout.consequence_of, Some(1));
        assert_eq!(codes(timeout), ["collateral_timeout"]);
        assert!(timeout.diagnosis.verdicts[0].detail.contains("finding [1]"));
        assert!(timeout.diagnosis.fixes[0].title.contains("[1]"));
    }

    #[test]
    fn consequences_alone_blame_no_one() {
        let f = only("[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=668, OpType=ALLREDUCE, NumelIn=52, NumelOut=52, Timeout(ms)=600000) ran for 600097 milliseconds before timing out.");
        assert_eq!(f.consequence_of, None);
        assert_eq!(codes(&f), ["collective_timeout"]);
    }

    #[test]
    fn xid_codes() {
        let f = only(
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
        );
        assert_eq!(codes(&f), ["xid_error", "hardware_fault"]);
        assert!(headline(&f).contains("fallen off the bus"));
        let g = only("NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, name=python, Graphics Exception: ESR 0x50df30=0x107000e");
        assert_eq!(codes(&g), ["xid_error"]);
        let h = only("NVRM: Xid (PCI:0000:3b:00): 150, pid=1, something");
        assert_eq!(codes(&h), ["xid_error"]);
        assert!(h.diagnosis.verdicts[0].detail.contains("does not describe"));
        for code in [
            "13", "31", "43", "45", "48", "63", "64", "74", "79", "92", "94", "95", "119",
        ] {
            assert!(xid_info(code).is_some(), "{code}");
        }
    }

    #[test]
    fn every_kind_has_a_headline_verdict_and_fix() {
        for text in [
            "RuntimeError: CUDA error: misaligned address",
            "RuntimeError: CUDA error: unspecified launch failure",
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
            "torch.distributed.DistBackendError: NCCL communicator was aborted on rank 2.",
            "Process finished with exit code -1073741819 (0xC0000005)",
            "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading \"C:\\x\\torch\\lib\\cudnn_cnn_infer64_8.dll\" or one of its dependencies.",
            "RuntimeError: CUDA failed with error out of memory",
            "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. Reducing block sizes or `num_stages` may help.",
        ] {
            let f = only(text);
            assert!(KINDS.contains(&f.kind));
            assert!(!headline(&f).is_empty(), "{text}");
            assert!(!f.diagnosis.verdicts.is_empty(), "{text}");
            assert!(!f.diagnosis.fixes.is_empty(), "{text}");
        }
    }

    #[test]
    fn every_code_has_a_long_explanation() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/explanations");
        let slugs = KINDS.iter().map(|k| k.slug());
        for code in slugs.chain(crate::explain::VERDICT_CODES.iter().copied()) {
            let path = dir.join(format!("{code}.md"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|_| panic!("missing {}", path.display()));
            assert!(text.starts_with(&format!("# {code}: ")), "{code}");
            for section in [
                "## Example",
                "## Why it happens",
                "## How to fix it",
                "## Read more",
            ] {
                assert!(text.contains(section), "{code}: {section}");
            }
        }
    }
}
