//! Turns a record into an explanation: derived numbers, verdicts with the
//! reasoning spelled out, fixes that fit the message's era, and the meaning of
//! every field as the user's PyTorch version uses it.
//!
//! Thresholds (documented in README.md "Verdicts"):
//! * `fragmentation`: reserved-but-unallocated ≥ 64 MiB and either ≥ the
//!   request, or together with free memory ≥ the request (the memory exists,
//!   not in one piece). Without a request size: ≥ 1 GiB and ≥ 20 % of reserved.
//! * `other_processes`: other processes hold ≥ 10 % of the card and ≥ 512 MiB,
//!   or ≥ 256 MiB and at least the shortfall.
//! * `non_pytorch_memory`: this process holds ≥ 1.5 GiB outside PyTorch's
//!   allocator (a CUDA context alone is about 0.3–1 GiB).
//! * `cuda_graph_pools`: private pools hold ≥ the request or ≥ 1 GiB.
//! * `capacity_exhausted`: no other cause explains the failure, or live
//!   tensors fill ≥ 70 % of the card.
//! * Consistency allows each printed figure its rounding (±half its last digit).
//!
//! Diagnostics pasted alongside (nvidia-smi, `torch.cuda.memory_summary()`,
//! within 500 lines of the error; see [`crate::diagnostics`]):
//! * nvidia-smi names the PIDs of the message's process list (name, GPU).
//! * Without a process list, nvidia-smi's rows on the failing GPU stand in
//!   for it (own process: the smallest row ≥ what PyTorch reserved and
//!   ≤ 3 GiB more; none when nvidia-smi ran after the crash): the
//!   `other_processes` thresholds apply to them, and the verdict says the
//!   figures come from nvidia-smi, sampled at another moment.
//! * The summary's non-releasable memory backs `fragmentation` when it is
//!   ≥ 64 MiB and ≥ the request (no request: ≥ 1 GiB and ≥ 20 % of reserved);
//!   alone it gives the verdict when the message has no sizes.
//! * Its peaks and `cudaMalloc retries` are added to the main verdict's
//!   detail; ≥ 10 retries reads as "repeatedly at the limit".

pub mod docs;
mod families_masked;
mod families_stated;
mod fixes;
mod meaning;
mod pasted;

use crate::record::{Category, Diagnosis, Finding, Kind, RequestRange, Verdict};
use crate::units::format_size as fmt;

pub use meaning::{field_rows, headline, reserved_gap, FieldRow};

/// Every verdict code the explainer can give (see [`docs`]); a code is never
/// removed or renamed, only retired with a note in its explanation.
pub use docs::VERDICT_CODES;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Fills in `diagnosis` and `explain` for every finding. Findings are
/// explained together because repeated OOMs say more than one alone.
pub fn explain_all(findings: &mut [Finding]) {
    for i in 0..findings.len() {
        let growth = memory_growth(&findings[..i], &findings[i]);
        let finding = &mut findings[i];
        finding.diagnosis = diagnose(finding, growth);
        finding.explain = explain_codes(finding);
    }
}

/// Explains `finding` as [`explain_all`] would if `earlier` were the findings
/// before it, for findings that arrive one at a time. Only earlier findings
/// of the same kind, device and rank matter (the last few are enough).
pub fn explain_after(earlier: &[Finding], finding: &mut Finding) {
    let growth = memory_growth(earlier, finding);
    finding.diagnosis = diagnose(finding, growth);
    finding.explain = explain_codes(finding);
}

/// Explains one finding on its own.
pub fn explain(finding: &mut Finding) {
    explain_all(std::slice::from_mut(finding));
}

/// Growth across repeated OOMs of the same device/rank: at least two earlier
/// OOMs and allocated memory rising at each (by ≥ 5 % and ≥ 256 MiB overall).
/// Two OOMs alone can differ because batches differ; three rising ones
/// point at something that accumulates.
fn memory_growth(earlier: &[Finding], current: &Finding) -> Option<(u64, u64)> {
    let now = current.sizes.allocated_bytes?;
    let mut previous = earlier
        .iter()
        .rev()
        .filter(|e| {
            e.kind == current.kind
                && e.device == current.device
                && e.first_rank == current.first_rank
        })
        .filter_map(|e| e.sizes.allocated_bytes);
    let last = previous.next()?;
    let before_last = previous.next()?;
    // Saturating: sizes can be as large as u64::MAX (issue 6).
    let rising = |a: u64, b: u64| b > a.saturating_add(a / 20);
    (rising(before_last, last) && rising(last, now) && now - before_last >= 256 * MIB)
        .then_some((before_last, now))
}

/// Largest rounding error of a figure PyTorch printed for this value.
/// Sizes reach u64::MAX (`17179869184.00 GiB`), so every `size + tolerance`
/// below saturates (issue 6, r6_sizes_near_u64_max_do_not_overflow_the_explainer).
fn tolerance(value: u64) -> u64 {
    let unit = if value > GIB {
        GIB
    } else if value > MIB {
        MIB
    } else if value > 1024 {
        1024
    } else {
        return 0;
    };
    unit / 200 + 1
}

fn diagnose(f: &Finding, growth: Option<(u64, u64)>) -> Diagnosis {
    let s = &f.sizes;
    let mut d = Diagnosis::default();
    let unallocated = s.reserved_unallocated_bytes.or(s.cached_bytes);
    d.reserved_bytes = s
        .reserved_bytes
        .or_else(|| s.allocated_bytes?.checked_add(unallocated?));
    d.reserved_unallocated_bytes =
        unallocated.or_else(|| d.reserved_bytes?.checked_sub(s.allocated_bytes?));
    if let (Some(process), Some(reserved)) = (s.process_in_use_bytes, d.reserved_bytes) {
        d.non_pytorch_bytes = Some(process.saturating_sub(reserved));
    }
    if !f.processes.is_empty() {
        if s.process_in_use_bytes.is_none() {
            // In a container the own process is listed under its host PID:
            // the item that is at least what PyTorch reserved, and closest to it.
            d.probable_self_pid = d.reserved_bytes.and_then(|reserved| {
                f.processes
                    .iter()
                    .filter(|p| {
                        p.in_use_bytes.saturating_add(tolerance(p.in_use_bytes)) >= reserved
                    })
                    .min_by_key(|p| p.in_use_bytes)
                    .map(|p| p.pid)
            });
        }
        let others: u64 = f
            .processes
            .iter()
            .filter(|p| Some(p.pid) != d.probable_self_pid)
            .map(|p| p.in_use_bytes)
            .fold(0u64, u64::saturating_add);
        d.other_processes_bytes = Some(others);
    }
    if let (Some(requested), Some(free)) = (s.requested_bytes, s.free_bytes) {
        d.shortfall_bytes = i64::try_from(i128::from(requested) - i128::from(free)).ok();
    }
    if let (Some(total), Some(free), Some(reserved)) =
        (s.total_bytes, s.free_bytes, d.reserved_bytes)
    {
        d.outside_allocator_bytes =
            i64::try_from(i128::from(total) - i128::from(free) - i128::from(reserved)).ok();
    }
    d.request_range = request_range(f);
    d.verdicts = verdicts(f, &d, growth);
    d.fixes = fixes::fixes(f, &d);
    d
}

/// True for the native caching allocator's rounded "Tried to allocate".
fn is_native_allocator(f: &Finding) -> bool {
    f.kind == Kind::TorchAllocatorOom
        && matches!(f.backend.as_deref(), Some("cuda") | Some("hip"))
        && matches!(
            f.era.as_deref(),
            Some("cached" | "reserved" | "paren" | "capacty" | "capacity" | "sentence")
        )
}

/// The tensor sizes the allocator rounds to the printed request (§2.2):
/// ≤ 1 MiB → 2 MiB, 1–10 MiB → 20 MiB, larger → next multiple of 2 MiB.
fn request_range(f: &Finding) -> Option<RequestRange> {
    if !is_native_allocator(f) {
        return None;
    }
    let a = f.sizes.requested_bytes?;
    let (min, max) = if a == 2 * MIB {
        (1, MIB)
    } else if a == 20 * MIB {
        // 1–10 MiB requests get a 20 MiB block; so do 18–20 MiB ones,
        // rounded up to a multiple of 2 MiB.
        (MIB + 1, 20 * MIB)
    } else if a >= 10 * MIB {
        (a.saturating_sub(2 * MIB) + 1, a)
    } else {
        return None;
    };
    Some(RequestRange {
        min_bytes: min,
        max_bytes: max,
    })
}

fn verdict(code: &str, title: &str, detail: String) -> Verdict {
    debug_assert!(
        VERDICT_CODES.contains(&code),
        "{code} is not in VERDICT_CODES"
    );
    Verdict {
        code: code.to_string(),
        title: title.to_string(),
        detail,
    }
}

/// Checks that the figures can all be true at once.
fn inconsistencies(f: &Finding, d: &Diagnosis) -> Vec<String> {
    let s = &f.sizes;
    let mut problems = Vec::new();
    if f.facts.get("overflow").is_some_and(|v| v == "true") {
        problems.push("a figure is larger than any real byte count".to_string());
    }
    if let (Some(total), Some(free), Some(reserved)) =
        (s.total_bytes, s.free_bytes, d.reserved_bytes)
    {
        let tol = tolerance(total) + tolerance(free) + tolerance(reserved) * 2;
        if reserved.saturating_add(free) > total.saturating_add(tol) {
            problems.push(format!(
                "reserved {} + free {} = {} is more than the total capacity {}",
                fmt(reserved),
                fmt(free),
                fmt(reserved.saturating_add(free)),
                fmt(total)
            ));
        }
    }
    if let (Some(total), Some(free)) = (s.total_bytes, s.free_bytes) {
        if free > total.saturating_add(tolerance(total)) {
            problems.push(format!(
                "free {} is more than the total {}",
                fmt(free),
                fmt(total)
            ));
        }
    }
    if let (Some(allocated), Some(reserved)) = (s.allocated_bytes, s.reserved_bytes) {
        if allocated > reserved.saturating_add(tolerance(reserved) + tolerance(allocated)) {
            problems.push(format!(
                "allocated {} is more than reserved {} (allocated memory is part of reserved memory)",
                fmt(allocated),
                fmt(reserved)
            ));
        }
    }
    if let (Some(process), Some(reserved)) = (s.process_in_use_bytes, d.reserved_bytes) {
        if process.saturating_add(tolerance(process) + 2 * tolerance(reserved)) < reserved {
            problems.push(format!(
                "this process is said to use {} in all, less than the {} PyTorch alone reserved",
                fmt(process),
                fmt(reserved)
            ));
        }
    }
    if let Some(total) = s.total_bytes {
        for p in &f.processes {
            if p.in_use_bytes > total.saturating_add(tolerance(total)) {
                problems.push(format!(
                    "process {} is said to hold {}, more than the whole card ({}); NVML reports bogus per-process numbers on some systems (e.g. WSL)",
                    p.pid,
                    fmt(p.in_use_bytes),
                    fmt(total)
                ));
                break;
            }
        }
    }
    problems
}

fn verdicts(f: &Finding, d: &Diagnosis, growth: Option<(u64, u64)>) -> Vec<Verdict> {
    let mut out = Vec::new();
    match f.kind {
        Kind::TorchAllocatorOom => allocator_verdicts(f, d, &mut out),
        Kind::CudaRuntimeOom => out.push(runtime_oom_verdict(f)),
        Kind::IllegalMemoryAccess => out.push(verdict(
            "async_error_location",
            "The traceback probably points at the wrong line",
            "CUDA reports kernel faults asynchronously: the error surfaces at the next call that synchronises with the GPU, not in the kernel that made the bad access. The Python frames above show where PyTorch noticed the fault, which is usually later than where it happened.".into(),
        )),
        Kind::MpsOom
        | Kind::HostOom
        | Kind::HostOomKilled
        | Kind::TfOom
        | Kind::XlaOom
        | Kind::CupyOom
        | Kind::KvCacheOom => families_stated::verdicts(f, &mut out),
        Kind::WindowsFailFast => out.push(verdict(
            "native_fail_fast",
            "Native code stopped the process on purpose",
            "0xC0000409 is Windows' fail-fast status: native code (the C runtime's abort(), std::terminate(), a failed check in a DLL) ended the process at once, bypassing Python, so there is no Python traceback and no error message. Despite its name (STATUS_STACK_BUFFER_OVERRUN) it rarely means a stack overrun.".into(),
        )),
        Kind::LibraryAllocFailed
        | Kind::NcclOom
        | Kind::AllocatorAssert
        | Kind::DeviceNotReady
        | Kind::DeviceSideAssert
        | Kind::MisalignedAddress
        | Kind::LaunchFailure
        | Kind::NoKernelImage
        | Kind::NcclError
        | Kind::NcclTimeout
        | Kind::ProcessGroupAborted
        | Kind::ChildFailed
        | Kind::Xid
        | Kind::WindowsAccessViolation
        | Kind::WindowsPagingFile
        | Kind::GenericOom => families_masked::verdicts(f, &mut out),
        // Verdicts come from the snapshot analysis (snapshot::after_explain).
        Kind::MemorySnapshot => {}
    }
    if let Some(note) = pasted::summary_note(f) {
        // The peaks and retries belong to the main memory verdict.
        const MAIN: &[&str] = &[
            "capacity_exhausted",
            "fragmentation",
            "other_processes",
            "memory_outside_pytorch",
        ];
        let main = MAIN
            .iter()
            .find_map(|code| out.iter().position(|v| v.code == *code))
            .or((!out.is_empty()).then_some(0));
        if let Some(i) = main {
            out[i].detail = format!("{} {note}", out[i].detail);
        }
    }
    context_verdicts(f, growth, &mut out);
    out
}

fn runtime_oom_verdict(f: &Finding) -> Verdict {
    match f.era.as_deref() {
        Some("driver") => verdict(
            "outside_allocator_oom",
            "A CUDA driver call ran out of memory",
            "`CUDA driver error: out of memory` comes from the CUDA driver API, which PyTorch uses for expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) and for some other features. The message carries no sizes. On WSL2 and Jetson this error appears with expandable segments even when memory is free.".into(),
        ),
        Some("thc") => verdict(
            "outside_allocator_oom",
            "cudaMalloc failed in an old PyTorch (≤0.4)",
            "`cuda runtime error (2) : out of memory` is how PyTorch 0.4 and older reported any failed CUDA allocation (error 2 is cudaErrorMemoryAllocation). It carries no sizes, so oomwhy cannot say what filled the card.".into(),
        ),
        _ => verdict(
            "outside_allocator_oom",
            "A CUDA call outside PyTorch's allocator ran out of memory",
            "`CUDA error: out of memory` (unlike `CUDA out of memory. Tried to allocate ...`) is raised by a CUDA runtime call that does not go through PyTorch's caching allocator: creating the CUDA context on a GPU that is already full, cuBLAS/cuDNN handles and workspaces, NCCL buffers, or another library in the process. Memory that PyTorch caches is not available to these calls.".into(),
        ),
    }
}

/// No single GPU has this much memory (the largest have a few hundred GiB).
const LARGER_THAN_ANY_GPU: u64 = 1 << 40;

fn allocator_verdicts(f: &Finding, d: &Diagnosis, out: &mut Vec<Verdict>) {
    let s = &f.sizes;
    let problems = inconsistencies(f, d);
    let consistent = problems.is_empty();
    if !consistent {
        out.push(verdict(
            "inconsistent_numbers",
            "The numbers in this message cannot all be true",
            format!(
                "{}. The figures were not sampled at one instant (free memory is read after the failure and can change), or the driver virtualises memory (Windows WDDM's shared-memory fallback, WSL, vGPU, MIG). oomwhy does not reason on them further.",
                capitalise(&problems.join("; "))
            ),
        ));
    }

    if f.era.as_deref() == Some("size_guard") {
        out.push(verdict(
            "request_exceeds_capacity",
            "One allocation asked for more than an exabyte",
            "PyTorch refuses any single allocation over 1 EB before trying it: no GPU has that much memory. A tensor shape is wrong (an overflowed or uninitialised dimension), not the memory pressure.".into(),
        ));
        return;
    }

    let requested = s.requested_bytes;
    if let Some(v) = request_too_large(s) {
        out.push(v);
        return;
    }
    if !consistent {
        return;
    }

    let malloc_async = f.era.as_deref() == Some("malloc_async");
    let mut limit_binds = false;
    if let (Some(l), Some(a)) = (s.allowed_bytes, requested) {
        // The fraction limit is checked against what PyTorch holds plus the request.
        let held = if malloc_async {
            s.allocated_bytes
        } else {
            d.reserved_bytes
        };
        if let Some(held) = held {
            if held
                .saturating_add(a)
                .saturating_add(tolerance(held) + tolerance(l))
                > l
            {
                limit_binds = true;
                out.push(verdict(
                    "memory_limit",
                    "A memory limit set for this process refused it, not the hardware",
                    format!(
                        "PyTorch may use at most {} (set with torch.cuda.set_per_process_memory_fraction). It already holds {} and asked for {} more, {} in all: over the limit{}.",
                        fmt(l),
                        fmt(held),
                        fmt(a),
                        fmt(held.saturating_add(a)),
                        s.free_bytes
                            .filter(|&free| free >= a)
                            .map(|free| format!(", while the device still had {} free", fmt(free)))
                            .unwrap_or_default()
                    ),
                ));
            }
        }
    } else if let (Some(a), Some(free)) = (requested, s.free_bytes) {
        if free >= a.saturating_add(tolerance(free)) {
            let invisible_limit = matches!(f.era.as_deref(), Some("capacty"))
                || f.version_hint.as_deref() == Some("PyTorch 2.2–2.3");
            if invisible_limit {
                limit_binds = true;
                out.push(verdict(
                    "memory_limit",
                    "Probably a memory limit, not the hardware: free memory exceeds the request",
                    format!(
                        "The device reported {} free, more than the {} requested. In PyTorch 2.1–2.3 a limit set with torch.cuda.set_per_process_memory_fraction is not printed in this message, so such a limit is the most likely cause; otherwise memory was freed between the failed allocation and the measurement.",
                        fmt(free),
                        fmt(a)
                    ),
                ));
            } else {
                out.push(verdict(
                    "free_exceeds_request",
                    "The device reported more free memory than was requested",
                    format!(
                        "The device had {} free, more than the {} requested, yet the allocation failed. Free memory is measured after the failure, so memory may have been released in between (another process, or PyTorch returning its cache just before measuring), or a limit outside this message applies (MIG, vGPU, a container's GPU memory limit{}).",
                        fmt(free),
                        fmt(a),
                        if malloc_async { ", the cudaMallocAsync pool" } else { "" }
                    ),
                ));
            }
        }
    }

    let total = s.total_bytes.unwrap_or(0);
    let shortfall = d.shortfall_bytes.unwrap_or(0).max(0) as u64;
    if let Some(others) = d.other_processes_bytes {
        let big = others >= total / 10 && others >= 512 * MIB;
        let decisive = shortfall > 0 && others >= shortfall && others >= 256 * MIB;
        if big || decisive {
            let names: Vec<String> = f
                .processes
                .iter()
                .filter(|p| Some(p.pid) != d.probable_self_pid)
                .take(5)
                .map(|p| {
                    format!(
                        "PID {} ({}{})",
                        p.pid,
                        fmt(p.in_use_bytes),
                        pasted::smi_label(f, p.pid)
                    )
                })
                .collect();
            let self_note = d
                .probable_self_pid
                .map(|pid| format!(" PID {pid} is probably this process itself (inside a container PyTorch cannot tell its own host PID), so it is not counted."))
                .unwrap_or_default();
            out.push(verdict(
                "other_processes",
                "Other processes hold a large part of this GPU",
                format!(
                    "Other processes hold {} of the {} card: {}.{self_note}{}",
                    fmt(others),
                    fmt(total),
                    names.join(", "),
                    if decisive {
                        format!(
                            " That is more than the {} that was missing.",
                            fmt(shortfall)
                        )
                    } else {
                        String::new()
                    }
                ),
            ));
        }
    } else if let Some((rows, own)) = pasted::smi_others(f, d.reserved_bytes)
        .filter(|_| s.process_in_use_bytes.is_none())
        .filter(|(rows, _)| {
            let others: u64 = rows.iter().filter_map(|p| p.used_bytes).sum();
            let big = others >= total / 10 && others >= 512 * MIB;
            big || (shortfall > 0 && others >= shortfall && others >= 256 * MIB)
        })
    {
        let others: u64 = rows.iter().filter_map(|p| p.used_bytes).sum();
        out.push(verdict(
            "other_processes",
            "Other processes hold a large part of this GPU (per the pasted nvidia-smi output)",
            format!(
                "This message does not list processes, but the nvidia-smi output pasted with it shows other processes holding {} on GPU {}: {}.{} nvidia-smi was sampled at another moment than the error, so these figures show who used the GPU then, not exactly at the failure.{}",
                fmt(others),
                rows[0].gpu,
                pasted::smi_names(&rows),
                own.map(|pid| format!(" PID {pid} holds at least what PyTorch reserved and is taken to be this process, so it is not counted.")).unwrap_or_default(),
                if shortfall > 0 && others >= shortfall {
                    format!(" That is more than the {} that was missing.", fmt(shortfall))
                } else {
                    String::new()
                }
            ),
        ));
    } else if s.process_in_use_bytes.is_none() {
        // No per-process figures: only total − free − reserved is known.
        if let Some(outside) = d
            .outside_allocator_bytes
            .filter(|&o| o > 0)
            .map(|o| o as u64)
        {
            if outside >= GIB && outside >= total / 10 && (shortfall == 0 || outside >= shortfall) {
                out.push(verdict(
                    "memory_outside_pytorch",
                    "Most of the missing memory is held outside PyTorch's allocator",
                    format!(
                        "Of the {} card, {} is free and PyTorch holds {}; the other {} is held outside PyTorch's allocator: other processes, or other libraries and the CUDA context in this process. {}",
                        fmt(total),
                        s.free_bytes.map(fmt).unwrap_or_default(),
                        d.reserved_bytes.map(fmt).unwrap_or_default(),
                        fmt(outside),
                        match pasted::smi_others(f, d.reserved_bytes) {
                            Some((rows, _)) => format!(
                                "The nvidia-smi output pasted with it (sampled at another moment) shows other processes on this GPU holding only {}{}, so most of it is probably inside this process.",
                                fmt(rows.iter().filter_map(|p| p.used_bytes).sum()),
                                if rows.is_empty() { String::new() } else { format!(" ({})", pasted::smi_names(&rows)) }
                            ),
                            None => "This message does not list processes, so oomwhy cannot tell which.".into(),
                        }
                    ),
                ));
            }
        }
    }

    let fragmentation = fragmentation_verdict(f, d, limit_binds).or_else(|| {
        // The message alone does not show it; the pasted summary may.
        let evidence = pasted::non_releasable_evidence(f)?;
        Some((
            verdict(
                "fragmentation",
                "Memory is fragmented: PyTorch holds free space it cannot use for this request",
                evidence,
            ),
            false,
        ))
    });
    let tensors_dominate = match (s.allocated_bytes, s.total_bytes.or(s.allowed_bytes)) {
        (Some(x), Some(t)) => x >= t / 10 * 7,
        _ => false,
    };
    let primary_fragmentation = fragmentation.as_ref().is_some_and(|(_, primary)| *primary);
    if let Some((v, true)) = &fragmentation {
        out.push(v.clone());
    }

    if let Some(p) = s.private_pools_bytes {
        if requested.is_some_and(|a| p >= a) || p >= GIB {
            out.push(verdict(
                "cuda_graph_pools",
                "CUDA graphs keep free memory parked in private pools",
                format!(
                    "{} of the memory PyTorch counts as allocated is free space in CUDA-graph private pools: it stays reserved for the captured graphs and cannot serve other tensors.",
                    fmt(p)
                ),
            ));
        }
    }

    if let Some(n) = d.non_pytorch_bytes {
        if n >= 3 * GIB / 2 {
            out.push(verdict(
                "non_pytorch_memory",
                "This process holds a lot of GPU memory outside PyTorch",
                format!(
                    "This process uses {} in all, of which PyTorch's allocator holds {}; the other {} is the CUDA context (typically 0.3–1 GiB), cuBLAS/cuDNN workspaces, NCCL buffers, or another library in the same process (TensorFlow, JAX, CuPy, a custom extension).",
                    s.process_in_use_bytes.map(fmt).unwrap_or_default(),
                    d.reserved_bytes.map(fmt).unwrap_or_default(),
                    fmt(n)
                ),
            ));
        }
    }

    let specific = out.iter().any(|v| {
        matches!(
            v.code.as_str(),
            "memory_limit"
                | "free_exceeds_request"
                | "other_processes"
                | "memory_outside_pytorch"
                | "fragmentation"
                | "cuda_graph_pools"
                | "non_pytorch_memory"
        )
    });
    if (!specific && !primary_fragmentation) || (tensors_dominate && !limit_binds) {
        let detail = match (s.allocated_bytes, s.total_bytes, requested) {
            (Some(x), Some(t), Some(a)) => format!(
                "Live tensors take {} of the {} card and the next allocation needed {} more. The workload needs more memory than this GPU has at this point.",
                fmt(x),
                fmt(t),
                fmt(a)
            ),
            _ => "No other cause is visible in the numbers: the workload needs more memory than this GPU has at this point.".into(),
        };
        out.push(verdict(
            "capacity_exhausted",
            "The workload does not fit in GPU memory",
            detail,
        ));
    }
    if let Some((v, false)) = fragmentation {
        out.push(v);
    }
}

/// One allocation larger than the card, the limit, or any GPU made.
fn request_too_large(s: &crate::record::Sizes) -> Option<Verdict> {
    let a = s.requested_bytes?;
    let limit = s
        .allowed_bytes
        .filter(|&l| s.total_bytes.is_none_or(|t| l < t));
    let cap = match (s.total_bytes, limit) {
        (Some(t), Some(l)) => Some(l.min(t)),
        (t, l) => t.or(l),
    };
    let what = match (cap, limit) {
        (Some(cap), Some(l)) if l == cap => format!("the {} this process is allowed", fmt(cap)),
        (Some(cap), _) => format!("the whole card ({})", fmt(cap)),
        (None, _) => "any GPU has".to_string(),
    };
    let too_large = match cap {
        Some(cap) => a > cap,
        None => a >= LARGER_THAN_ANY_GPU,
    };
    too_large.then(|| {
        verdict(
            "request_exceeds_capacity",
            "One allocation is larger than the GPU can ever provide",
            format!(
                "PyTorch tried to allocate {} in one piece, more than {what}. No setting or cache clean-up can satisfy this: a tensor is far larger than intended (a shape bug, an attention matrix over a very long sequence, a whole dataset moved to the GPU).",
                fmt(a)
            ),
        )
    })
}

/// The fragmentation verdict, and whether it is the main explanation
/// (the unused reserved memory alone could hold the request and is a
/// noticeable share of what PyTorch reserved) or a secondary one.
fn fragmentation_verdict(f: &Finding, d: &Diagnosis, limit_binds: bool) -> Option<(Verdict, bool)> {
    let s = &f.sizes;
    let u = d.reserved_unallocated_bytes?;
    let reserved = d.reserved_bytes;
    // Under a binding limit free device memory is not available anyway.
    let free = if limit_binds {
        0
    } else {
        s.free_bytes.unwrap_or(0)
    };
    let reserved_text = reserved.map(fmt).unwrap_or_else(|| "?".into());
    let (detail, primary) = match s.requested_bytes {
        Some(a) if u >= 64 * MIB && u >= a => (
            format!(
                "PyTorch holds {} that no tensor uses (reserved {reserved_text}, allocated {}), more than the {} it needed, yet it could not use it: before raising, PyTorch already returned every cached segment it could release, so what remains is free space inside partly used segments, in pieces too small for one {} block. That is fragmentation.",
                fmt(u),
                s.allocated_bytes.map(fmt).unwrap_or_else(|| "?".into()),
                fmt(a),
                fmt(a)
            ),
            reserved.is_some_and(|r| u >= r / 20),
        ),
        Some(a) if u >= 64 * MIB && u.saturating_add(free) >= a => (
            format!(
                "PyTorch holds {} that no tensor uses (free space inside partly used segments) and the device has {} free: together {}, enough for the {} request, but neither piece alone is. The memory exists, just not in one block.",
                fmt(u),
                fmt(free),
                fmt(u.saturating_add(free)),
                fmt(a)
            ),
            false,
        ),
        None if u >= GIB && reserved.is_some_and(|r| u >= r / 5) => (
            format!(
                "PyTorch holds {} that no tensor uses, {}% of the {reserved_text} it reserved: free space inside partly used segments that larger requests cannot use.",
                fmt(u),
                reserved.map_or(0, |r| u.saturating_mul(100) / r.max(1))
            ),
            true,
        ),
        _ => return None,
    };
    let detail = match pasted::non_releasable_evidence(f) {
        Some(evidence) => format!("{detail} {evidence}"),
        None => detail,
    };
    Some((
        verdict(
            "fragmentation",
            "Memory is fragmented: PyTorch holds free space it cannot use for this request",
            detail,
        ),
        primary,
    ))
}

fn context_verdicts(f: &Finding, growth: Option<(u64, u64)>, out: &mut Vec<Verdict>) {
    if f.category == Category::Crash {
        return;
    }
    if let Some((before, now)) = growth {
        out.push(verdict(
            "memory_growth",
            "Memory grew between repeated OOMs: something accumulates",
            format!(
                "Allocated memory rose at each of the last three OOMs on this device, from {} to {}. Memory that keeps growing between steps points at tensors kept alive across iterations (a loss summed without .item(), outputs appended to a list, a growing cache or sequence length).",
                fmt(before),
                fmt(now)
            ),
        ));
    } else if let Some(step) = f.last_step {
        if step <= 1 {
            out.push(verdict(
                "fails_at_start",
                "It failed at the very first step",
                format!("The last progress counter before the crash reads {step}: this configuration does not fit even once. Change the configuration (batch, sequence length, precision), not a leak."),
            ));
        } else if step >= 100 {
            out.push(verdict(
                "late_failure",
                "It failed after many successful steps",
                format!("The last progress counter before the crash reads {step}: the same configuration ran many times before. Either one batch was larger than the others (variable sequence lengths, a big last batch, an evaluation pass) or memory grows over time (tensors kept across steps)."),
            ));
        }
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Codes for `oomwhy explain`: the kind first, then each verdict.
fn explain_codes(f: &Finding) -> Vec<String> {
    let mut codes = vec![f.kind.slug().to_string()];
    for v in &f.diagnosis.verdicts {
        if !codes.contains(&v.code) {
            codes.push(v.code.clone());
        }
    }
    codes
}

#[cfg(test)]
mod tests;
