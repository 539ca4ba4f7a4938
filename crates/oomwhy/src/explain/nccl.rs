//! Distributed failures: NCCL's own allocation failures, and the errors,
//! timeouts, aborts and launcher reports that follow a failure elsewhere
//! (each says so when the scanner linked it to an earlier finding).

use super::common::{confirm_fix, fact, fix_en, on_device, verdict_en, workload_fix, CONFIRM};
use super::docs::Code;
use super::Explain;
use crate::record::{fact, Diagnosis, Finding, Fix, Kind, Verdict};
use crate::units::format_size as fmt;

/// Explains `Kind::NcclOom` findings.
pub(super) struct NcclOom;

impl Explain for NcclOom {
    fn headline_en(&self, f: &Finding) -> String {
        let device = on_device(f);
        let size = f
            .sizes
            .requested_bytes
            .map(|b| format!(" {}", fmt(b)))
            .unwrap_or_default();
        format!("NCCL could not allocate{size} of GPU memory{device}: an out-of-memory error under another name")
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict_en(
            Code::MaskedOom,
            "Not a PyTorch out-of-memory message, but an out-of-memory error",
            format!(
                "NCCL could not get GPU memory{}. NCCL allocates its communication buffers with cudaMalloc, outside PyTorch's cache, when a communicator is set up and when peers and channels connect, so it fails when PyTorch's cache has already filled the GPU. The `NCCL error ... unhandled cuda error` that PyTorch raises afterwards is the same failure. {CONFIRM}",
                f.sizes
                    .requested_bytes
                    .map(|b| format!(" ({} requested)", fmt(b)))
                    .unwrap_or_default()
            ),
        ))
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix_en(
                "Let NCCL allocate before the model fills the GPU",
                "Initialise the process group and run one collective (e.g. dist.barrier(device_ids=[local_rank])) before building the model and optimizer, so NCCL's buffers exist before PyTorch's cache grows; leave headroom with torch.cuda.set_per_process_memory_fraction(0.9). NCCL_BUFFSIZE (default 4 MiB per channel) and NCCL_MAX_NCHANNELS shrink NCCL's own buffers.",
            ));
        out.push(confirm_fix());
        out.push(workload_fix());
    }
}

/// Explains `Kind::NcclError` findings.
pub(super) struct NcclError;

impl Explain for NcclError {
    fn headline_en(&self, f: &Finding) -> String {
        format!(
            "NCCL reported an error{}{}",
            fact(f, fact::NCCL_ERROR)
                .map(|e| format!(" ({e})"))
                .unwrap_or_default(),
            consequence_suffix(f)
        )
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(collateral(f, "This NCCL error").unwrap_or_else(|| nccl_error_verdict(f)))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        collateral_nccl_fixes(f, out)
    }
}

/// Explains `Kind::NcclTimeout` findings.
pub(super) struct NcclTimeout;

impl Explain for NcclTimeout {
    fn headline_en(&self, f: &Finding) -> String {
        let op = fact(f, fact::OP_TYPE).unwrap_or("collective");
        let ran = fact(f, fact::RAN_FOR_MS)
            .map(|ms| format!(" after {ms} ms"))
            .unwrap_or_default();
        let rank = fact(f, fact::RANK)
            .map(|r| format!(" on rank {r}"))
            .unwrap_or_default();
        format!("An NCCL {op} timed out{ran}{rank}{}", consequence_suffix(f))
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(timeout_verdict(f))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        consequence_fix(f, out);
        out.push(find_first_error_fix());
        out.push(fix_en(
                "Record what each rank was doing",
                "Set TORCH_NCCL_TRACE_BUFFER_SIZE=2000 and TORCH_NCCL_DUMP_ON_TIMEOUT=1 (PyTorch 2.3 or newer) to dump the flight recorder on timeout: it shows which rank missed which collective.",
            ));
        out.push(fix_en(
                "Make every rank run the same collectives",
                "Evaluation, logging or checkpointing under `if rank == 0:` that calls a collective (or takes longer than the timeout) leaves the others waiting; uneven data (DistributedSampler without drop_last=True) makes one rank run an extra step.",
            ));
        out.push(fix_en(
                "Raise the timeout only for slow but healthy steps",
                "dist.init_process_group(backend=\"nccl\", timeout=datetime.timedelta(minutes=30)) helps when a step is legitimately slow (first-step compilation, saving a large checkpoint), not when a rank has crashed.",
            ));
    }
}

/// Explains `Kind::ProcessGroupAborted` findings.
pub(super) struct ProcessGroupAborted;

impl Explain for ProcessGroupAborted {
    fn headline_en(&self, f: &Finding) -> String {
        format!(
            "The NCCL process group was aborted{}{}",
            fact(f, fact::RANK)
                .map(|r| format!(" on rank {r}"))
                .unwrap_or_default(),
            consequence_suffix(f)
        )
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(collateral(f, "This abort").unwrap_or_else(|| {
            verdict_en(
                Code::NcclFailure,
                "The communicator was shut down after an earlier error",
                format!(
                    "Aborting the communicator is how PyTorch's c10d stops a process group after an error or a timeout; it is a consequence, not a cause.{} Find the first error in any rank's log: that is the cause.",
                    fact(f, fact::REASON)
                        .map(|r| format!(" The reason it gives: {r}."))
                        .unwrap_or_default()
                ),
            )
        }))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        collateral_nccl_fixes(f, out)
    }
}

/// Explains `Kind::ChildFailed` findings.
pub(super) struct ChildFailed;

impl Explain for ChildFailed {
    fn headline_en(&self, f: &Finding) -> String {
        let script = fact(f, fact::SCRIPT).unwrap_or("the training script");
        let root = match (
            fact(f, fact::ROOT_CAUSE_RANK),
            fact(f, fact::ROOT_CAUSE_EXITCODE),
        ) {
            (Some(r), Some(e)) => format!(": root cause rank {r}, exit code {e}"),
            _ => String::new(),
        };
        format!(
            "torchrun reports that {script} failed{root}{}",
            consequence_suffix(f)
        )
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(collateral(f, "This launcher report").unwrap_or_else(|| launcher_verdict(f)))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        consequence_fix(f, out);
        out.push(fix_en(
                "Read the root-cause rank's own output",
                format!(
                    "The real error is in rank {}'s log. torchrun --log-dir logs --redirects 3 --tee 3 keeps one file per rank.",
                    fact(f, fact::ROOT_CAUSE_RANK).unwrap_or("N")
                ),
            ));
        if fact(f, fact::ROOT_CAUSE_EXITCODE) == Some("-9")
            || fact(f, fact::ROOT_CAUSE_SIGNAL) == Some("SIGKILL")
        {
            out.push(fix_en(
                    "Check the host's out-of-memory killer",
                    "`dmesg -T | grep -i -E 'killed process|out of memory'` (or the scheduler's accounting, e.g. sacct) tells whether host RAM ran out; fewer DataLoader workers, smaller prefetch, or loading checkpoints with mmap=True lower host memory.",
                ));
        }
        out.push(fix_en(
                "Put the traceback into the report",
                "Decorate the entry point with @torch.distributed.elastic.multiprocessing.errors.record (from torch.distributed.elastic.multiprocessing.errors import record).",
            ));
    }
}

fn consequence_suffix(f: &Finding) -> String {
    f.consequence_of
        .map(|id| format!(" (a consequence of finding [{id}])"))
        .unwrap_or_default()
}

/// The verdict of a consequence kind that follows an earlier OOM.
fn collateral(f: &Finding, what: &str) -> Option<Verdict> {
    let id = f.consequence_of?;
    let root = match f.kind {
        Kind::ChildFailed => match (fact(f, fact::ROOT_CAUSE_RANK), fact(f, fact::ROOT_CAUSE_EXITCODE)) {
            (Some(r), Some(e)) => format!(" Its \"root cause\" (rank {r}, exit code {e}) is only the first exit the launcher observed, not necessarily the rank that ran out of memory."),
            _ => String::new(),
        },
        _ => String::new(),
    };
    Some(verdict_en(
        Code::CollateralFailure,
        &format!("A consequence of finding [{id}], not a separate cause"),
        format!("{what} follows finding [{id}], an earlier (probable) out-of-memory error. When one rank dies, its peers lose their connection to it or wait for it at the next collective, and fail in turn; the launcher then reports every exit.{root} Fix finding [{id}] first: this error will go away with it."),
    ))
}

fn timeout_verdict(f: &Finding) -> Verdict {
    let rank = fact(f, fact::RANK)
        .map(|r| format!("Rank {r}"))
        .unwrap_or_else(|| "A rank".into());
    let op = fact(f, fact::OP_TYPE).unwrap_or("a collective");
    let seq = fact(f, fact::SEQ_NUM)
        .map(|s| format!(" (SeqNum {s})"))
        .unwrap_or_default();
    let ran = fact(f, fact::RAN_FOR_MS)
        .map(|ms| format!(" for {ms} ms"))
        .unwrap_or_default();
    let limit = fact(f, fact::TIMEOUT_MS)
        .map(|ms| format!(" the timeout of {ms} ms"))
        .unwrap_or_else(|| " its timeout".into());
    if let Some(id) = f.consequence_of {
        return verdict_en(
            Code::CollateralTimeout,
            &format!("A consequence of finding [{id}], not a separate cause"),
            format!("{rank} waited{ran} in {op}{seq} for ranks that never joined. Finding [{id}] is an earlier (probable) out-of-memory error: once a rank dies, the others block at the next collective until the NCCL watchdog gives up after{limit}. Fix finding [{id}]; this timeout will go away with it."),
        );
    }
    verdict_en(
        Code::CollectiveTimeout,
        "A collective waited for a rank that never arrived",
        format!("{rank} waited{ran} in {op}{seq} and the NCCL watchdog gave up after{limit}. Some other rank did not reach this collective: it crashed (its log shows the first error), hangs, or is far slower (evaluation, logging or checkpointing on rank 0 only, a data loader stall, uneven numbers of batches). The rank that timed out is usually the victim, not the culprit."),
    )
}

fn nccl_error_verdict(f: &Finding) -> Verdict {
    let meaning = match fact(f, fact::NCCL_ERROR) {
        Some("ncclUnhandledCudaError") => format!(
            "a CUDA call inside NCCL failed{}",
            fact(f, fact::LAST_ERROR)
                .map(|e| format!("; NCCL's last error was `{e}`"))
                .unwrap_or_default()
        ),
        Some("ncclSystemError") => "a system call or external library failed (socket, shared memory, malloc): in containers often a /dev/shm that is too small, otherwise the network interface NCCL picked, or a peer process that exited".into(),
        Some("ncclRemoteError") => "a peer closed the connection: a remote process exited (crashed) or the network failed".into(),
        Some("ncclInternalError") | Some("ncclInvalidUsage") | Some("ncclInvalidArgument") => "NCCL's own consistency check failed: ranks calling different collectives or tensors of different sizes, mismatched NCCL versions, or a bug".into(),
        _ => fact(f, fact::REASON).map_or_else(
            || "the process group's backend reported an error".to_string(),
            |r| format!("it reports: {r}"),
        ),
    };
    verdict_en(
        Code::NcclFailure,
        "Collective communication failed",
        format!("NCCL or PyTorch's c10d failed: {meaning}. When one rank crashes first (an OOM, an assert), the others fail like this at their next collective, so look for the earliest error in every rank's log before debugging NCCL itself."),
    )
}

fn launcher_verdict(f: &Finding) -> Verdict {
    let rank = fact(f, fact::ROOT_CAUSE_RANK)
        .map(|r| format!("rank {r}"))
        .or_else(|| fact(f, "root_cause_local_rank").map(|r| format!("local rank {r}")))
        .unwrap_or_else(|| "a rank the report does not name".into());
    let code = fact(f, fact::ROOT_CAUSE_EXITCODE).unwrap_or("?");
    let signal = fact(f, fact::ROOT_CAUSE_SIGNAL);
    let exit_meaning = match (code, signal) {
        (_, Some("SIGKILL")) | ("-9", _) => "killed with SIGKILL: most often the Linux out-of-memory killer (host RAM, not GPU memory) or the job scheduler; check `dmesg -T | grep -i -E 'killed process|out of memory'`".to_string(),
        (_, Some("SIGABRT")) | ("-6", _) => "aborted by native code: typically c10d's watchdog taking the process down after an NCCL error or timeout, or an uncaught C++ exception".into(),
        (_, Some("SIGSEGV")) | ("-11", _) => "a segmentation fault in native code".into(),
        (_, Some("SIGTERM")) | ("-15", _) => "terminated from outside (the launcher or scheduler), often because another rank failed first".into(),
        ("1", _) => "a Python exception: its traceback is in that rank's own output".into(),
        _ => format!("exit code {code}"),
    };
    let record = if fact(f, fact::ROOT_CAUSE_ERROR_FILE).is_some_and(|e| e.contains("N/A")) {
        " The report has no traceback because the entry point is not decorated with @record (torch.distributed.elastic.multiprocessing.errors.record)."
    } else {
        ""
    };
    verdict_en(
        Code::LauncherReport,
        "The launcher only reports that workers exited",
        format!("torchrun (torchelastic) does not know why workers failed. Its \"root cause\" is the first failure it observed: {rank}, exit code {code}, i.e. {exit_meaning}. The first observed failure can be a victim that timed out rather than the culprit.{record} Read that rank's own output for the real error."),
    )
}

fn consequence_fix(f: &Finding, out: &mut Vec<Fix>) {
    if let Some(id) = f.consequence_of {
        out.push(fix_en(
            &format!("Fix finding [{id}] first"),
            format!("This error is collateral damage of finding [{id}]. Apply that finding's fixes; once no rank runs out of memory, this one disappears."),
        ));
    }
}

fn find_first_error_fix() -> Fix {
    fix_en(
        "Find the first error across all ranks",
        "Give every rank its own log (torchrun --log-dir logs --redirects 3 --tee 3, or prefix lines with the rank) and look for the earliest error; decorate the entry point with @torch.distributed.elastic.multiprocessing.errors.record so tracebacks reach the launcher's report.",
    )
}

/// Fixes for an NCCL error or an aborted communicator: both report a failure
/// that happened elsewhere.
fn collateral_nccl_fixes(f: &Finding, out: &mut Vec<Fix>) {
    consequence_fix(f, out);
    out.push(find_first_error_fix());
    out.push(fix_en(
                "Let NCCL say what failed",
                "Rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=INIT,NET for setup problems): the WARN lines name the failing call.",
            ));
    if fact(f, fact::NCCL_ERROR) == Some("ncclSystemError") {
        out.push(fix_en(
                    "Check shared memory and the network interface",
                    "In Docker give NCCL shared memory (--ipc=host or --shm-size=16g); choose the interface with NCCL_SOCKET_IFNAME=eth0 (your interface); to test, NCCL_P2P_DISABLE=1 or NCCL_IB_DISABLE=1.",
                ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
