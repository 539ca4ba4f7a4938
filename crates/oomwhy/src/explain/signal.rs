//! Deaths by a fatal signal other than SIGKILL: DataLoader workers (a bus
//! error is `/dev/shm` running out) and the wrapped command of `oomwhy run`.

use super::common::{fact, fix_en, verdict_en};
use super::docs::Code;
use super::Explain;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};

/// Explains `Kind::FatalSignal` findings.
pub(super) struct FatalSignal;

/// Whether the finding is shared memory running out rather than a crash.
fn shm_exhausted(f: &Finding) -> bool {
    fact(f, fact::MEMORY).is_some()
}

fn from_worker(f: &Finding) -> bool {
    f.era == Some(Era::Dataloader)
}

fn signal(f: &Finding) -> &str {
    fact(f, fact::SIGNAL).unwrap_or("a fatal signal")
}

/// The signal's name without its number: `SIGABRT` of `SIGABRT (6)`.
fn signal_name(f: &Finding) -> &str {
    signal(f).split(" (").next().unwrap_or_default()
}

impl Explain for FatalSignal {
    fn headline_en(&self, f: &Finding) -> String {
        match (from_worker(f), shm_exhausted(f)) {
            (true, true) => {
                "A DataLoader worker ran out of shared memory (/dev/shm) and died of a bus error"
                    .into()
            }
            (true, false) => format!(
                "A DataLoader worker crashed in native code ({})",
                signal_name(f)
            ),
            (false, _) => match fact(f, fact::NTSTATUS) {
                Some(status) => format!("The command ended with the Windows crash status {status}"),
                None => format!("The command was killed by {}", signal(f)),
            },
        }
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        if fact(f, fact::NTSTATUS) == Some("STATUS_NO_MEMORY") {
            out.push(verdict_en(
                Code::HostRamExhausted,
                "The machine's memory ran out (host memory, not GPU memory)",
                "0xC0000017 (STATUS_NO_MEMORY) means Windows could not give the process more virtual memory: RAM and the paging file were used up. The GPU's memory is not involved.".into(),
            ));
        } else if from_worker(f) && shm_exhausted(f) {
            out.push(verdict_en(
                Code::DevShmFull,
                "/dev/shm is too small for the DataLoader's workers",
                "DataLoader workers hand every batch to the main process through shared memory, files in /dev/shm (a RAM-backed tmpfs). When it is full, a worker's write into it faults with SIGBUS. Docker gives a container only 64 MB of /dev/shm unless told otherwise, which a few image batches exceed. This is host memory, not GPU memory; when the container's own memory limit is hit at the same time, the worker may be killed (SIGKILL) instead.".into(),
            ));
        } else {
            let where_ = if from_worker(f) {
                "a DataLoader worker process"
            } else {
                "the command"
            };
            let extra = if signal(f).starts_with("SIGBUS") {
                " A bus error in a job that uses DataLoader workers is usually /dev/shm running out."
            } else {
                ""
            };
            out.push(verdict_en(
                Code::NativeCrash,
                "Native code crashed",
                format!(
                    "{} stopped {where_}: native code (a C/C++ extension, an image or video decoder, a CUDA library, or memory corrupted earlier) faulted or aborted, so Python printed no traceback for the cause.{extra} It is not an out-of-memory error by itself.",
                    signal(f)
                ),
            ));
        }
    }

    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        if fact(f, fact::NTSTATUS) == Some("STATUS_NO_MEMORY") {
            out.push(fix_en(
                "Free host memory",
                "Use fewer DataLoader workers, load the dataset lazily instead of into RAM, close other programs, or raise the Windows paging file.",
            ));
            return;
        }
        if from_worker(f) && shm_exhausted(f) {
            out.push(fix_en(
                "Give the container more shared memory",
                "Docker: `docker run --shm-size=16g ...` (or `--ipc=host`); docker compose: `shm_size: 16gb`; Kubernetes: mount an `emptyDir` with `medium: Memory` at /dev/shm. Check the size with `df -h /dev/shm`.",
            ));
            out.push(fix_en(
                "Keep less in flight between workers and the main process",
                "Lower num_workers, the batch size or prefetch_factor; num_workers=0 confirms the diagnosis (no shared memory is used then).",
            ));
            return;
        }
        if from_worker(f) {
            out.push(fix_en(
                "Get the real error with num_workers=0",
                "Run the loader in the main process (num_workers=0): the crash then happens there, where `python -X faulthandler` prints the Python stack of the faulting call.",
            ));
            out.push(fix_en(
                "Suspect threads inside forked workers",
                "Libraries that start threads (OpenCV, some image and audio decoders) can crash in forked workers: call cv2.setNumThreads(0) in the dataset, or use multiprocessing_context=\"spawn\".",
            ));
        } else {
            out.push(fix_en(
                "Get a native stack trace",
                "Run with `python -X faulthandler` (prints the Python stack on SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL), or under gdb: `gdb -ex run --args python train.py`, then `bt`.",
            ));
        }
        out.push(fix_en(
            "Match the native pieces",
            "Reinstall PyTorch and every compiled extension for the same PyTorch and CUDA versions; update the GPU driver.",
        ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
