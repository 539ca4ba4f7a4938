//! PyTorch's caching allocator (`CUDA out of memory. Tried to allocate ...`,
//! every era and backend): the numbers' meaning, the memory verdicts, and
//! fixes fitted to the allocator options of the message's PyTorch version.

use super::common::{
    capitalise, fix_en, loading_fix, on_device, row_en, tolerance, verdict_en, workload_fixes,
    FieldRow, GIB, MIB,
};
use super::docs::Code;
use super::pasted;
use super::setting::{available, since, Availability, Vendor};
use super::thresholds::*;
use super::Explain;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Kind, RequestRange, Verdict};
use crate::units::{format_signed, format_size as fmt};

/// Explains `Kind::TorchAllocatorOom` findings.
pub(super) struct TorchAllocatorOom;

impl Explain for TorchAllocatorOom {
    fn headline_en(&self, f: &Finding) -> String {
        let device = on_device(f);
        let backend = match f.backend.as_deref() {
            Some("hip") => " (ROCm/HIP)",
            Some("xpu") => " (Intel XPU)",
            _ => "",
        };
        match (f.era, f.sizes.requested_bytes) {
            (Some(Era::SizeGuard), _) => {
                format!("PyTorch refused an allocation of more than 1 EB{device}: a tensor shape is wrong")
            }
            (_, Some(a)) => format!("PyTorch could not allocate {}{device}{backend}", fmt(a)),
            _ => format!("PyTorch's allocator ran out of memory{device}{backend}"),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let s = &f.sizes;
        let d = &f.diagnosis;
        let era = f.era;
        let malloc_async = era == Some(Era::MallocAsync);
        let gpu = f
            .device
            .map_or("the GPU".to_string(), |d| format!("GPU {d}"));
        let mut rows = Vec::new();

        if let Some(a) = s.requested_bytes {
            let meaning = if malloc_async {
                "the exact size of the tensor being created".to_string()
            } else if let Some(range) = &d.request_range {
                if range.max_bytes == 1 << 20 {
                    "the block the allocator asked CUDA for; the tensor itself was at most 1 MiB (small tensors share 2 MiB blocks)".into()
                } else if range.max_bytes == 20 << 20 {
                    "the block the allocator asked CUDA for; the tensor itself was between 1 and 10 MiB (these share 20 MiB blocks), or 18–20 MiB".into()
                } else {
                    "the block the allocator asked CUDA for: the tensor's size rounded up to a multiple of 2 MiB".into()
                }
            } else {
                "the size of the allocation that failed".into()
            };
            rows.push(row_en("Tried to allocate", fmt(a), meaning, false));
        }
        if let Some(t) = s.total_bytes {
            let label = if malloc_async {
                "Device limit"
            } else {
                "Total capacity"
            };
            rows.push(row_en(
                label,
                fmt(t),
                format!(
                    "all memory of {gpu}, as {} reports it",
                    if f.backend.as_deref() == Some("cuda") {
                        "CUDA"
                    } else {
                        "the driver"
                    }
                ),
                false,
            ));
        }
        if let Some(l) = s.allowed_bytes {
            rows.push(row_en(
            "Allowed",
            fmt(l),
            "the most PyTorch may use in this process (torch.cuda.set_per_process_memory_fraction)",
            false,
        ));
        }
        if let Some(free) = s.free_bytes {
            let meaning = if malloc_async {
                "free on the whole device according to CUDA when the allocation failed"
            } else {
                "free on the whole device when the error was raised, after PyTorch had already returned its unused cache"
            };
            rows.push(row_en("Free", fmt(free), meaning, false));
        }
        for p in &f.processes {
            let meaning = if d.probable_self_pid == Some(p.pid) {
                "probably this process itself (listed under its host PID, as in a container)"
            } else {
                "another process on this GPU, as NVML sees it"
            };
            rows.push(row_en(
                &format!("Process {}", p.pid),
                fmt(p.in_use_bytes),
                meaning,
                false,
            ));
        }
        if let Some(sp) = s.process_in_use_bytes {
            rows.push(row_en(
            "This process",
            fmt(sp),
            "everything this process holds on the GPU: PyTorch's cache plus the CUDA context and other libraries",
            false,
        ));
        }
        if let Some(x) = s.allocated_bytes {
            let (label, meaning) = match era {
            Some(Era::Cached | Era::Reserved | Era::Paren) => ("Already allocated", "memory in live tensors of this process (block sizes, so a bit more than the tensors' bytes)".to_string()),
            Some(Era::MallocAsync) => ("Currently allocated", "memory in live tensors allocated through this backend".to_string()),
            _ if s.private_pools_bytes.is_some() => (
                "Allocated by PyTorch",
                "memory in live tensors, plus the free space in CUDA-graph private pools below".to_string(),
            ),
            _ => ("Allocated by PyTorch", "memory in live tensors of this process (block sizes, so a bit more than the tensors' bytes)".to_string()),
        };
            rows.push(row_en(label, fmt(x), meaning, false));
        }
        if let Some(p) = s.private_pools_bytes {
            rows.push(row_en(
            "Private pools",
            fmt(p),
            "free blocks kept by CUDA graphs' private pools: counted as allocated, usable only by those graphs",
            false,
        ));
        }
        if let Some(c) = s.cached_bytes {
            rows.push(row_en(
            "Cached",
            fmt(c),
            "held by PyTorch but in no tensor (PyTorch ≤1.3's word for reserved-but-unallocated)",
            false,
        ));
        }
        if let Some(u) = s.reserved_unallocated_bytes {
            rows.push(row_en(
                "Reserved but unallocated",
                fmt(u),
                "held by PyTorch but in no tensor: free space inside partly used segments",
                false,
            ));
        }
        if let Some(r) = s.reserved_bytes {
            rows.push(row_en(
                "Reserved in total",
                fmt(r),
                "everything PyTorch's caching allocator holds from CUDA: allocated plus cached",
                false,
            ));
        } else if let Some(r) = d.reserved_bytes {
            rows.push(row_en(
                "Reserved (derived)",
                fmt(r),
                "everything PyTorch's caching allocator holds: allocated + unallocated",
                true,
            ));
        }
        if let Some(n) = d.non_pytorch_bytes {
            rows.push(row_en(
            "Non-PyTorch (derived)",
            fmt(n),
            "this process's memory outside PyTorch's allocator: CUDA context, cuBLAS/cuDNN, NCCL, other libraries",
            true,
        ));
        }
        if let Some(outside) = outside_process(f, d) {
            rows.push(row_en(
                "Outside this process (derived)",
                format_signed(outside.into()),
                if f.processes.is_empty() {
                    "total − free − this process: held by other processes, a desktop session or another container"
                } else {
                    "total − free − this process − the listed processes: held by something the message does not list"
                },
                true,
            ));
        }
        if let (Some(l), Some(a), Some(held)) = (
            s.allowed_bytes,
            s.requested_bytes,
            if malloc_async {
                s.allocated_bytes
            } else {
                d.reserved_bytes
            },
        ) {
            rows.push(row_en(
                "Held + request (derived)",
                fmt(held.saturating_add(a)),
                format!(
                    "what PyTorch holds plus the request, against the {} allowed",
                    fmt(l)
                ),
                true,
            ));
        }
        // Not when the only listed process is this one (a container's own PID).
        let only_self = f.processes.len() == 1 && d.probable_self_pid.is_some();
        if let (Some(o), false) = (d.other_processes_bytes, f.processes.is_empty() || only_self) {
            rows.push(row_en(
                "Other processes (derived)",
                fmt(o),
                "sum of the other processes' memory",
                true,
            ));
        }
        if let Some(outside) = d.outside_allocator_bytes {
            if s.process_in_use_bytes.is_none() && f.processes.is_empty() {
                rows.push(row_en(
                "Outside PyTorch (derived)",
                format_signed(outside.into()),
                if outside < 0 {
                    "total − free − reserved: negative, so these figures contradict each other (see Why)"
                } else {
                    "total − free − reserved: CUDA context, other libraries and other processes together"
                },
                true,
            ));
            }
        }
        // Figures that contradict each other give no shortfall to reason on.
        if let Some(short) = d.shortfall_bytes.filter(|_| !numbers_contradict(f)) {
            let meaning = if short > 0 {
                "requested − free: how much was missing on the device"
            } else {
                "requested − free: negative, the device had more free than requested"
            };
            rows.push(row_en(
                "Shortfall (derived)",
                format_signed(short.into()),
                meaning,
                true,
            ));
        }
        rows
    }
    fn verdicts(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Verdict>) {
        allocator_verdicts(f, d, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        if is_intel_xpu(f) {
            xpu_fixes(f, d, out)
        } else if f.backend.as_deref() == Some("npu") {
            npu_fixes(d, out)
        } else {
            let has = |code: Code| d.verdicts.iter().any(|v| v.code == code.as_str());
            allocator_fixes(f, d, &has, out)
        }
    }
}

/// True for the native caching allocator's rounded "Tried to allocate".
fn is_native_allocator(f: &Finding) -> bool {
    f.kind == Kind::TorchAllocatorOom
        && matches!(f.backend.as_deref(), Some("cuda") | Some("hip"))
        && matches!(
            f.era,
            Some(
                Era::Cached
                    | Era::Reserved
                    | Era::Paren
                    | Era::Capacty
                    | Era::Capacity
                    | Era::Sentence
            )
        )
}

/// The tensor sizes the allocator rounds to the printed request (§2.2):
/// ≤ 1 MiB → 2 MiB, 1–10 MiB → 20 MiB, larger → next multiple of 2 MiB.
pub(super) fn request_range(f: &Finding) -> Option<RequestRange> {
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

/// Checks that the figures can all be true at once.
fn inconsistencies(f: &Finding, d: &Diagnosis) -> Vec<String> {
    let s = &f.sizes;
    let mut problems = Vec::new();
    if f.facts.get(fact::OVERFLOW).is_some_and(|v| v == "true") {
        problems.push("a figure is larger than any real byte count".to_string());
    }
    // NVML's "not available" value (2^64 − 1 bytes) printed as a size, and
    // sizes no device has, are quirks or overflows, not measurements.
    let named = [
        ("total", s.total_bytes),
        ("free", s.free_bytes),
        ("allocated", s.allocated_bytes),
        ("reserved", s.reserved_bytes),
        ("this process", s.process_in_use_bytes),
    ];
    for (name, value) in named {
        match value {
            Some(v) if v >= u64::MAX - (u64::MAX >> 12) => problems.push(format!(
                "{name} reads {} = 2⁶⁴ − 1 bytes, the driver's (NVML's) \"not available\" value printed as a size: the driver could not report it",
                fmt(v)
            )),
            Some(v) if v >= LARGER_THAN_ANY_GPU * 64 => problems.push(format!(
                "{name} reads {}, more than any GPU has by orders of magnitude: an overflowed value",
                fmt(v)
            )),
            _ => {}
        }
    }
    if let (Some(total), Some(allocated)) = (s.total_bytes, s.allocated_bytes) {
        if allocated > total.saturating_add(tolerance(total) + tolerance(allocated)) {
            problems.push(format!(
                "allocated {} is more than the whole card ({})",
                fmt(allocated),
                fmt(total)
            ));
        }
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

fn allocator_verdicts(f: &Finding, d: &Diagnosis, out: &mut Vec<Verdict>) {
    let s = &f.sizes;
    let problems = inconsistencies(f, d);
    let consistent = problems.is_empty();
    if !consistent {
        out.push(verdict_en(
            Code::InconsistentNumbers,
            "The numbers in this message cannot all be true",
            format!(
                "{}. The figures were not sampled at one instant (free memory is read after the failure and can change), or the driver virtualises memory (Windows WDDM's shared-memory fallback, WSL, vGPU, MIG). oomwhy does not reason on them further.",
                capitalise(&problems.join("; "))
            ),
        ));
    }

    if f.era == Some(Era::SizeGuard) {
        out.push(verdict_en(
            Code::RequestExceedsCapacity,
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

    let malloc_async = f.era == Some(Era::MallocAsync);
    let mut limit_binds = false;
    if let (Some(l), Some(a)) = (s.allowed_bytes, requested) {
        // The fraction limit is checked against what PyTorch holds plus the request.
        let held = if malloc_async {
            s.allocated_bytes
        } else {
            d.reserved_bytes
        };
        if let Some(held) = held {
            let need = held.saturating_add(a);
            // Over the limit by more than the printed figures' noise; or at
            // it within the noise while the device itself had room, so that
            // nothing but the limit can have refused.
            let over = need > l.saturating_add(NOISE_MIN);
            let at_limit = need.saturating_add(NOISE_MIN) > l
                && s.free_bytes.is_some_and(|free| free_exceeds(free, a));
            if over || at_limit {
                limit_binds = true;
                out.push(verdict_en(
                    Code::MemoryLimit,
                    "A memory limit set for this process refused it, not the hardware",
                    format!(
                        "PyTorch may use at most {} (set with torch.cuda.set_per_process_memory_fraction). It already holds {} and asked for {} more, {} in all: {}{}.",
                        fmt(l),
                        fmt(held),
                        fmt(a),
                        fmt(need),
                        if over {
                            format!("over the limit by {}", fmt(need - l))
                        } else {
                            "at the limit within the rounding of the printed figures".to_string()
                        },
                        s.free_bytes
                            .filter(|&free| free_exceeds(free, a))
                            .map(|free| format!(", while the device still had {} free", fmt(free)))
                            .unwrap_or_default()
                    ),
                ));
            }
        }
    } else if let (Some(a), Some(free)) = (requested, s.free_bytes) {
        if free_exceeds(free, a) {
            let invisible_limit = matches!(f.era, Some(Era::Capacty))
                || f.version_hint.as_deref() == Some("PyTorch 2.2–2.3");
            if invisible_limit {
                limit_binds = true;
                out.push(verdict_en(
                    Code::MemoryLimit,
                    "Probably a memory limit, not the hardware: free memory exceeds the request",
                    format!(
                        "The device reported {} free, {} more than the {} requested. In PyTorch 2.1–2.3 a limit set with torch.cuda.set_per_process_memory_fraction is not printed in this message, so such a limit is the most likely cause; otherwise memory was freed between the failed allocation and the measurement.",
                        fmt(free),
                        fmt(free - a),
                        fmt(a)
                    ),
                ));
            }
        }
    }

    let total = s.total_bytes.unwrap_or(0);
    let shortfall = d.shortfall_bytes.unwrap_or(0).max(0) as u64;
    // Causes with the bytes each accounts for; ranked by how much of the
    // shortfall they explain once all are known.
    let mut causes: Vec<(u64, Verdict)> = Vec::new();
    if let (Some(a), Some(free), false) = (requested, s.free_bytes, limit_binds) {
        if free_exceeds(free, a) {
            // It explains none of the shortfall: ranked after every cause.
            causes.push((
                0,
                verdict_en(
                    Code::FreeExceedsRequest,
                    "The device reported more free memory than was requested",
                    format!(
                        "The device had {} free, {} more than the {} requested, yet the allocation failed. Free memory is measured after the failure, so memory may have been released in between (another process, or PyTorch returning its cache just before measuring), or a limit outside this message applies ({}{}).",
                        fmt(free),
                        fmt(free - a),
                        fmt(a),
                        match super::setting::Vendor::of(f) {
                            super::setting::Vendor::Nvidia => "MIG, vGPU, a container's GPU memory limit",
                            _ => "a container's or virtual machine's GPU memory limit",
                        },
                        if malloc_async { ", the cudaMallocAsync pool" } else { "" }
                    ),
                ),
            ));
        }
    }
    if let Some(others) = d.other_processes_bytes {
        let (big, decisive) = others_matter(others, total, shortfall);
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
            causes.push((
                others,
                verdict_en(
                    Code::OtherProcesses,
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
                ),
            ));
        }
    } else if let Some((rows, own)) = pasted::smi_others(f, d.reserved_bytes)
        .filter(|_| s.process_in_use_bytes.is_none())
        .filter(|(rows, _)| {
            let others: u64 = rows.iter().filter_map(|p| p.used_bytes).sum();
            let (big, decisive) = others_matter(others, total, shortfall);
            big || decisive
        })
    {
        let others: u64 = rows.iter().filter_map(|p| p.used_bytes).sum();
        causes.push((others, verdict_en(
            Code::OtherProcesses,
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
        )));
    } else if s.process_in_use_bytes.is_none() {
        // No per-process figures: only total − free − reserved is known.
        if let Some(outside) = d
            .outside_allocator_bytes
            .filter(|&o| o > 0)
            .map(|o| o as u64)
        {
            if outside_matters(outside, total, shortfall) {
                causes.push((outside, verdict_en(
                    Code::MemoryOutsidePytorch,
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
                )));
            }
        }
    }
    // The message states what this process holds: the rest of the used
    // memory belongs to someone else, listed or not.
    if let Some(outside) = outside_process(f, d).filter(|&o| o > 0).map(|o| o as u64) {
        if outside_matters(outside, total, shortfall) {
            let listed = d.other_processes_bytes.filter(|&o| o > 0);
            causes.push((outside, verdict_en(
                Code::MemoryOutsideProcess,
                "Memory is held outside this process",
                format!(
                    "Of the {} card, {} is free and this process holds {}{}; the other {} is held outside this process{}: another process this container cannot see, a desktop session, or a second container or virtual machine on the same GPU.{}",
                    fmt(total),
                    s.free_bytes.map(fmt).unwrap_or_default(),
                    s.process_in_use_bytes.map(fmt).unwrap_or_default(),
                    listed.map(|o| format!(" and the listed processes {}", fmt(o))).unwrap_or_default(),
                    fmt(outside),
                    if listed.is_some() { " and the listed processes" } else { "" },
                    if shortfall > 0 && outside >= shortfall {
                        format!(" That is more than the {} that was missing.", fmt(shortfall))
                    } else {
                        String::new()
                    }
                ),
            )));
        }
    }

    let fragmentation = fragmentation_verdict(f, d, limit_binds).or_else(|| {
        // The message alone does not show it; the pasted summary may.
        let evidence = pasted::non_releasable_evidence(f)?;
        Some((
            verdict_en(
                Code::Fragmentation,
                "Memory is fragmented: PyTorch holds free space it cannot use for this request",
                evidence,
            ),
            false,
        ))
    });
    let tensors_dominate = tensors_dominate(s);
    let unused = d.reserved_unallocated_bytes.unwrap_or(0);
    let primary_fragmentation = fragmentation.as_ref().is_some_and(|(_, primary)| *primary);
    if let Some((v, true)) = &fragmentation {
        causes.push((unused, v.clone()));
    }

    if let Some(p) = s.private_pools_bytes {
        // Parked pool memory explains a failure when it is large, or could
        // have served the request and is not a crumb next to the card.
        if p >= GRAPH_POOLS_MIN
            || (requested.is_some_and(|a| p >= a) && p >= GRAPH_POOLS_REQUEST_MIN)
        {
            causes.push((p, verdict_en(
                Code::CudaGraphPools,
                "CUDA graphs keep free memory parked in private pools",
                format!(
                    "{} of the memory PyTorch counts as allocated is free space in CUDA-graph private pools: it stays reserved for the captured graphs and cannot serve other tensors.",
                    fmt(p)
                ),
            )));
        }
    }

    if let Some(n) = d.non_pytorch_bytes {
        if n >= NON_PYTORCH_MIN {
            causes.push((n, verdict_en(
                Code::NonPytorchMemory,
                "This process holds a lot of GPU memory outside PyTorch",
                format!(
                    "This process uses {} in all, of which PyTorch's allocator holds {}; the other {} is the CUDA context (typically 0.3–1 GiB), cuBLAS/cuDNN workspaces, NCCL buffers, or another library in the same process (TensorFlow, JAX, CuPy, a custom extension).",
                    s.process_in_use_bytes.map(fmt).unwrap_or_default(),
                    d.reserved_bytes.map(fmt).unwrap_or_default(),
                    fmt(n)
                ),
            )));
        }
    }

    const SPECIFIC: &[Code] = &[
        Code::OtherProcesses,
        Code::MemoryOutsidePytorch,
        Code::MemoryOutsideProcess,
        Code::Fragmentation,
        Code::CudaGraphPools,
        Code::NonPytorchMemory,
    ];
    let specific = limit_binds
        || causes
            .iter()
            .any(|(_, v)| SPECIFIC.iter().any(|code| v.code == code.as_str()));
    // "Does not fit" needs what this process holds plus the request to be
    // a large part of the card; little allocated and a small request
    // contradict it.
    let own = d.reserved_bytes.or(s.allocated_bytes);
    let small = match (own, requested, s.total_bytes) {
        (Some(own), Some(a), Some(t)) => own.saturating_add(a) < t / FITS_CARD_DIVISOR,
        _ => false,
    };
    // Free memory well beyond the request contradicts it too: by the
    // numbers the allocation fit (free_exceeds_request says so).
    let room = causes
        .iter()
        .any(|(_, v)| v.code == Code::FreeExceedsRequest.as_str());
    // So does fragmentation that, with the free memory, covers the request:
    // the memory exists, only not in one block.
    let contradicted = small || room || primary_fragmentation;
    // A message cut before its figures states only the request: nothing in
    // it shows whether the workload fits, so "does not fit" is not said.
    let figures_known = s.total_bytes.is_some()
        || s.free_bytes.is_some()
        || s.allocated_bytes.is_some()
        || d.reserved_bytes.is_some();
    if !figures_known && !specific && !primary_fragmentation {
        causes.push((
            0,
            verdict_en(
                Code::FiguresMissing,
                "The message was cut before its figures",
                format!(
                    "{} the capacity, free memory and what PyTorch holds, which tell whether the workload does not fit, another process holds the GPU or memory is fragmented, were cut off. The likely cause cannot be read from what is left.",
                    match requested {
                        Some(a) => format!(
                            "{} requested{} is all that is left:",
                            fmt(a),
                            f.device.map(|g| format!(" on GPU {g}")).unwrap_or_default()
                        ),
                        None => "No figure is left:".to_string(),
                    }
                ),
            ),
        ));
    } else if ((!specific && !primary_fragmentation) || (tensors_dominate && !limit_binds))
        && !contradicted
    {
        let detail = match (s.allocated_bytes, s.total_bytes, requested) {
            (Some(x), Some(t), Some(a)) => format!(
                "Live tensors take {} of the {} card and the next allocation needed {} more. The workload needs more memory than this GPU has at this point.",
                fmt(x),
                fmt(t),
                fmt(a)
            ),
            _ => "No other cause is visible in the numbers: the workload needs more memory than this GPU has at this point.".into(),
        };
        causes.push((
            s.allocated_bytes.unwrap_or(0),
            verdict_en(
                Code::CapacityExhausted,
                "The workload does not fit in GPU memory",
                detail,
            ),
        ));
    } else if !specific && !primary_fragmentation && small {
        let (own, a, t) = (own.unwrap_or(0), requested.unwrap_or(0), total);
        causes.push((0, verdict_en(
            Code::NumbersInconclusive,
            "The numbers do not show why it failed",
            format!(
                "PyTorch holds {} and asked for {} more, together {} of the {} card, less than half of it; {}the message shows nothing else large enough to fill the rest. So it is not that the workload cannot fit: the memory was probably held by something the message does not show (another process, a desktop session, another container) or released between the failure and the measurement.",
                fmt(own),
                fmt(a),
                fmt(own.saturating_add(a)),
                fmt(t),
                s.free_bytes.map(|free| format!("{} was free and ", fmt(free))).unwrap_or_default()
            ),
        )));
    }
    if let Some((v, false)) = fragmentation {
        causes.push((0, v));
    }
    // Most of the shortfall first. Among causes that each cover it, a
    // specific cause comes before "does not fit" only when it holds a tenth
    // of the card: with a small shortfall every cause covers it, and a few
    // MiB somewhere do not outrank live tensors that fill the card. Then the
    // larger. Stable: equal causes keep the order above.
    let substantial = |bytes: u64, v: &Verdict| {
        v.code != Code::CapacityExhausted.as_str()
            && total > 0
            && bytes >= total / SPECIFIC_CARD_DIVISOR
    };
    causes.sort_by_key(|(bytes, v)| {
        let explained = if shortfall > 0 {
            (*bytes).min(shortfall)
        } else {
            *bytes
        };
        std::cmp::Reverse((explained, substantial(*bytes, v), *bytes))
    });
    out.extend(causes.into_iter().map(|(_, v)| v));
}

/// Whether the explainer found the message's figures contradicting each other.
fn numbers_contradict(f: &Finding) -> bool {
    f.diagnosis
        .verdicts
        .iter()
        .any(|v| v.code == Code::InconsistentNumbers.as_str())
}

/// Whether live tensors fill most of the card (or of the allowed limit).
fn tensors_dominate(s: &crate::record::Sizes) -> bool {
    match (s.allocated_bytes, s.total_bytes.or(s.allowed_bytes)) {
        (Some(x), Some(t)) => x >= t / 10 * TENSORS_DOMINATE_TENTHS,
        _ => false,
    }
}

/// Whether free memory exceeds the request by more than the noise of the
/// printed figures and the slack one near-full allocation needs.
fn free_exceeds(free: u64, requested: u64) -> bool {
    free >= requested.saturating_add(NOISE_MIN.max(requested / FREE_EXCESS_DIVISOR))
}

/// Whether memory outside PyTorch or this process is large enough to blame.
fn outside_matters(outside: u64, total: u64, shortfall: u64) -> bool {
    outside >= OUTSIDE_MIN
        && outside >= total / OUTSIDE_CARD_DIVISOR
        && (shortfall == 0 || outside >= shortfall)
}

/// total − free − this process − the listed other processes, when the
/// message states what this process holds.
pub(super) fn outside_process(f: &Finding, d: &Diagnosis) -> Option<i64> {
    let s = &f.sizes;
    let own = s.process_in_use_bytes?;
    let others = d.other_processes_bytes.unwrap_or(0);
    i64::try_from(
        i128::from(s.total_bytes?)
            - i128::from(s.free_bytes?)
            - i128::from(own)
            - i128::from(others),
    )
    .ok()
}

/// Whether other processes hold a large part of the card (`big`), or at
/// least the shortfall (`decisive`).
fn others_matter(others: u64, total: u64, shortfall: u64) -> (bool, bool) {
    let big = others >= total / OTHERS_CARD_DIVISOR && others >= OTHERS_MIN;
    let decisive = shortfall > 0 && others >= shortfall && others >= OTHERS_DECISIVE_MIN;
    (big, decisive)
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
        verdict_en(
            Code::RequestExceedsCapacity,
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
    // A few percent of the reserve is the slack every caching allocator
    // carries, and small-pool requests cannot use large segments at all.
    let share_ok = reserved.is_some_and(|r| u >= r / FRAGMENTATION_MAIN_DIVISOR);
    if !share_ok
        || s.requested_bytes
            .is_some_and(|a| a <= SMALL_POOL_REQUEST_MAX)
    {
        return None;
    }
    let (detail, primary) = match s.requested_bytes {
        Some(a) if u >= FRAGMENTATION_MIN && u >= a.saturating_add(NOISE_MIN) => (
            format!(
                "PyTorch holds {} that no tensor uses (reserved {reserved_text}, allocated {}), more than the {} it needed, yet it could not use it: before raising, PyTorch already returned every cached segment it could release, so what remains is free space inside partly used segments, in pieces too small for one {} block. That is fragmentation.",
                fmt(u),
                s.allocated_bytes.map(fmt).unwrap_or_else(|| "?".into()),
                fmt(a),
                fmt(a)
            ),
            true,
        ),
        Some(a) if u >= FRAGMENTATION_MIN && u.saturating_add(free) >= a.saturating_add(NOISE_MIN) => (
            format!(
                "PyTorch holds {} that no tensor uses (free space inside partly used segments) and the device has {} free: together {}, enough for the {} request, but neither piece alone is. The memory exists, just not in one block.",
                fmt(u),
                fmt(free),
                fmt(u.saturating_add(free)),
                fmt(a)
            ),
            true,
        ),
        None if u >= FRAGMENTATION_NO_REQUEST_MIN
            && reserved.is_some_and(|r| u >= r / FRAGMENTATION_NO_REQUEST_DIVISOR) =>
        (
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
        verdict_en(
            Code::Fragmentation,
            "Memory is fragmented: PyTorch holds free space it cannot use for this request",
            detail,
        ),
        primary,
    ))
}

/// The reserved-vs-allocated gap spelled out with its numbers.
pub fn reserved_gap(f: &Finding) -> Option<String> {
    // The verdict says oomwhy reasons no further on figures that contradict
    // each other: the gap between two of them is such reasoning.
    if numbers_contradict(f) {
        return None;
    }
    let s = &f.sizes;
    let d = &f.diagnosis;
    let reserved = d.reserved_bytes.filter(|&r| r > 0)?;
    let allocated = s.allocated_bytes?;
    let gap = d.reserved_unallocated_bytes?;
    let pools = s
        .private_pools_bytes
        .map(|p| {
            format!(
                " ({} of \"allocated\" is free space in CUDA-graph pools)",
                fmt(p)
            )
        })
        .unwrap_or_default();
    let share = gap.saturating_mul(100).checked_div(reserved).unwrap_or(0);
    Some(format!(
        "{} reserved − {} allocated = {} ({share}% of reserved) is held by PyTorch but not used by any tensor{pools}. PyTorch keeps freed blocks cached for reuse; before raising this error it already released every cached segment it could, so this remainder sits in partly used segments and only fits requests that are small enough.",
        fmt(reserved),
        fmt(allocated),
        fmt(gap)
    ))
}

/// Which allocator options this era's PyTorch has, and under which variable.
struct AllocConf {
    env_var: String,
    /// `Some(caveat)` when expandable_segments exists (caveat may be empty).
    expandable_segments: Option<String>,
    /// `Some(caveat)` when max_split_size_mb exists (caveat may be empty).
    max_split: Option<String>,
    note: Option<String>,
}

fn alloc_conf(f: &Finding) -> AllocConf {
    let hint = f.hint.as_ref();
    let hinted_var = hint.and_then(|h| h.env_var.clone());
    let backend = f.backend.as_deref().unwrap_or("cuda");
    let mut note = None;
    let env_var = match (hinted_var.as_deref(), backend) {
        // 2.9–2.10 print the generic name, but 2.9.1 ignored expandable_segments
        // set through it for CUDA (pytorch/pytorch#183387); the CUDA name still works.
        (Some("PYTORCH_ALLOC_CONF"), "cuda") => {
            note = Some("PyTorch 2.9–2.10 print PYTORCH_ALLOC_CONF, but 2.9.1 ignores expandable_segments set that way for CUDA (pytorch/pytorch#183387); PYTORCH_CUDA_ALLOC_CONF still works there (with a deprecation warning).".to_string());
            "PYTORCH_CUDA_ALLOC_CONF".to_string()
        }
        (Some(var), _) => var.to_string(),
        (None, "hip") => "PYTORCH_HIP_ALLOC_CONF".to_string(),
        (None, _) => "PYTORCH_CUDA_ALLOC_CONF".to_string(),
    };
    // An option newer than every release printing this form is dropped;
    // one newer than some of them says from which release.
    let gate = |since| match available(f, since) {
        Availability::Yes => Some(String::new()),
        Availability::From(name) => Some(format!(" ({name})")),
        Availability::Upgrade(_) => None,
    };
    let expandable_segments = gate(since::EXPANDABLE_SEGMENTS);
    let max_split = gate(since::MAX_SPLIT);
    AllocConf {
        env_var,
        expandable_segments,
        max_split,
        note,
    }
}

fn allocator_fixes(f: &Finding, d: &Diagnosis, has: &dyn Fn(Code) -> bool, out: &mut Vec<Fix>) {
    if has(Code::RequestExceedsCapacity) {
        out.push(fix_en(
            "Find the tensor that is far too large",
            "Print the shapes at the failing line (the last frame of your own code in the traceback). Look for a wrong reshape/broadcast, an attention matrix over a very long sequence (use torch.nn.functional.scaled_dot_product_attention or chunk the sequence), or a whole dataset moved to the GPU at once. Allocator settings cannot help here.",
        ));
        return;
    }
    let vendor = Vendor::of(f);
    // Fixes follow the verdicts' order of importance.
    for v in &d.verdicts {
        match v.code.as_str() {
            "memory_limit" => out.push(fix_en(
                "Raise or remove the per-process memory limit",
                format!(
                    "Search your code and framework config for torch.cuda.set_per_process_memory_fraction(...) (some launchers and notebooks set it) and raise the fraction; check {} if none is set.",
                    match vendor {
                        Vendor::Nvidia | Vendor::Unknown => "MIG/vGPU/container GPU limits",
                        _ => "the container's or scheduler's GPU limits",
                    }
                ),
            )),
            "free_exceeds_request" => {
                if f.era == Some(Era::MallocAsync) {
                    // The cudaMallocAsync pool can refuse with free memory left.
                    fragmentation_fixes(f, out);
                }
                out.push(fix_en(
                "Check what changes on the GPU around the crash",
                match vendor {
                    Vendor::Nvidia | Vendor::Unknown => "Watch `nvidia-smi -l 1` while it runs: other jobs starting and stopping, or a MIG/vGPU/container limit below the card's size, explain a failure with memory apparently free. Re-run on an idle GPU (CUDA_VISIBLE_DEVICES=N) to compare.".to_string(),
                    _ => format!("Watch {} while it runs: other jobs starting and stopping, or a container or virtual machine limit below the card's size, explain a failure with memory apparently free. Re-run on an idle GPU ({}) to compare.", vendor.smi(), vendor.visible_devices()),
                },
            ));
            }
            "other_processes" => other_process_fix(f, d, out),
            "memory_outside_pytorch" => {
                out.push(fix_en(
                    "Find who else holds the GPU",
                    format!("Run {} to see other processes and their memory; stop stale jobs and old notebook kernels, or pick an idle GPU with {}.", vendor.smi(), vendor.visible_devices()),
                ));
                out.push(non_pytorch_fix());
            }
            "memory_outside_process" => out.push(fix_en(
                "Find what holds the rest of the GPU",
                format!("Run {} on the host, not inside the container: the memory this process does not hold belongs to another process, a desktop session (a display attached to this GPU), or another container or virtual machine sharing the GPU. Stop it, move the display to another GPU, or pick an idle GPU with {}.", vendor.smi(), vendor.visible_devices()),
            )),
            "fragmentation" => {
                fragmentation_fixes(f, out);
                // Fragmentation is what failed, but with live tensors filling
                // most of the card the workload is tight too: its fixes come
                // next, in case the allocator's cannot make room.
                if tensors_dominate(&f.sizes) {
                    phase_fixes(f, has, out);
                    workload_fixes(f, out);
                }
            }
            "cuda_graph_pools" => out.push(fix_en(
                "Capture fewer or smaller CUDA graphs",
                "Each captured graph keeps its pool. torch.compile(mode=\"reduce-overhead\") captures graphs per input shape: use mode=\"default\" or fewer distinct shapes; in vLLM lower the captured batch sizes or set enforce_eager=True.",
            )),
            "non_pytorch_memory" => out.push(non_pytorch_fix()),
            "numbers_inconclusive" if f.era == Some(Era::MallocAsync) => {
                // The cudaMallocAsync pool is what the numbers cannot see into.
                fragmentation_fixes(f, out);
                workload_fixes(f, out);
            }
            "figures_missing" => {
                out.push(fix_en(
                    "Find the whole message",
                    "Read the full line in the log file or the terminal's scrollback, not a notification or a shortened copy, and run oomwhy on that: its figures (capacity, free, allocated, reserved) decide which fix applies.",
                ));
                phase_fixes(f, has, out);
                workload_fixes(f, out);
            }
            "capacity_exhausted" | "inconsistent_numbers" | "numbers_inconclusive" => {
                phase_fixes(f, has, out);
                workload_fixes(f, out);
            }
            _ => {}
        }
    }
    phase_fixes(f, has, out);
    if out.is_empty() {
        workload_fixes(f, out);
    }
}

fn other_process_fix(f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
    let pids: Vec<String> = f
        .processes
        .iter()
        .filter(|p| Some(p.pid) != d.probable_self_pid)
        .map(|p| match super::pasted::smi_process(f, p.pid) {
            Some(row) => format!("{} = {} on GPU {}", p.pid, row.name, row.gpu),
            None => p.pid.to_string(),
        })
        .take(5)
        .collect();
    let vendor = Vendor::of(f);
    out.push(fix_en(
        "Free the GPU from other processes",
        format!(
            "Run {} to see who holds GPU {}{}; stop stale jobs, old notebook kernels and zombie DataLoader workers, or pick an idle GPU with {}.",
            vendor.smi(),
            f.device.map_or("memory".to_string(), |d| d.to_string()),
            if pids.is_empty() {
                String::new()
            } else {
                format!(" (PIDs {})", pids.join(", "))
            },
            vendor.visible_devices()
        ),
    ));
}

fn non_pytorch_fix() -> Fix {
    fix_en(
        "Stop other GPU libraries in this process from holding memory",
        "TensorFlow and JAX preallocate most of the GPU: TF_FORCE_GPU_ALLOW_GROWTH=true, XLA_PYTHON_CLIENT_PREALLOCATE=false. Release CuPy's pool with cupy.get_default_memory_pool().free_all_blocks(). NCCL buffers grow with NCCL_BUFFSIZE and the number of communicators.",
    )
}

fn fragmentation_fixes(f: &Finding, out: &mut Vec<Fix>) {
    let conf = alloc_conf(f);
    if f.era == Some(Era::MallocAsync) {
        out.push(fix_en(
            "Try the native allocator",
            "This message comes from the cudaMallocAsync backend (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync; ComfyUI enables it by default), which ignores expandable_segments and max_split_size_mb. Remove backend:cudaMallocAsync (ComfyUI: --disable-cuda-malloc) and compare.",
        ));
        return;
    }
    if f.backend.as_deref() == Some("xpu") {
        out.push(fix_en(
            "Release cached memory",
            "Call torch.xpu.empty_cache() between phases (e.g. after evaluation) so that cached blocks can be reused for differently sized tensors.",
        ));
        return;
    }
    if let Some(caveat) = &conf.expandable_segments {
        out.push(fix_en(
            "Let the allocator grow segments instead of fragmenting them",
            format!(
                "export {}=expandable_segments:True{caveat} (set it before Python starts, or in os.environ before the first CUDA call). Not supported on Windows; on WSL2 and Jetson it can itself fail with `CUDA driver error: out of memory`.{}",
                conf.env_var,
                conf.note.as_deref().map(|n| format!(" {n}")).unwrap_or_default()
            ),
        ));
    }
    if let Some(caveat) = &conf.max_split {
        out.push(fix_en(
            "Stop the allocator from splitting large blocks",
            format!(
                "export {}=max_split_size_mb:128{caveat}. Blocks larger than 128 MB are then never split, which leaves fewer unusable slivers; try 128–512, smaller values can cost speed.",
                conf.env_var
            ),
        ));
    }
}

fn phase_fixes(f: &Finding, has: &dyn Fn(Code) -> bool, out: &mut Vec<Fix>) {
    if has(Code::MemoryGrowth) || has(Code::LateFailure) {
        out.push(fix_en(
            "Look for tensors kept across steps",
            "Accumulate metrics with loss.item() (not `total += loss`), .detach().cpu() outputs you keep, clear lists of tensors each epoch, and check for sequence lengths that grow over the run (sort or cap them). torch.cuda.memory._record_memory_history() plus _dump_snapshot() shows which allocations grow.",
        ));
    }
    match f.phase.name.as_str() {
        "evaluation" => out.push(fix_en(
            "Run evaluation without autograd",
            "Wrap evaluation/generation in `with torch.no_grad():` (or torch.inference_mode()) and call model.eval(); without it every activation is kept for a backward pass that never comes. Use a smaller eval batch and move collected outputs to the CPU.",
        )),
        "optimizer_step" => out.push(fix_en(
            "Make the optimizer state smaller",
            "The first optimizer.step() allocates Adam's two moment buffers (2 × the trainable parameters in fp32). Use an 8-bit optimizer (bitsandbytes.optim.AdamW8bit), torch.optim.AdamW(..., foreach=False) to avoid temporary copies, fewer trainable parameters (LoRA), or shard the state (FSDP, DeepSpeed ZeRO).",
        )),
        "backward" => out.push(fix_en(
            "Keep fewer activations for the backward pass",
            "Enable gradient checkpointing (Hugging Face: model.gradient_checkpointing_enable(); plain PyTorch: torch.utils.checkpoint.checkpoint), and reduce the batch or sequence length, which activation memory grows with.",
        )),
        "model_load" => out.push(loading_fix()),
        "checkpoint" => out.push(fix_en(
            "Load checkpoints onto the CPU first",
            "torch.load(path, map_location=\"cpu\") keeps a checkpoint from being materialised on the GPU next to the live model; free the old state (del state_dict) before loading a new one.",
        )),
        "data_loading" => out.push(fix_en(
            "Move data to the GPU one batch at a time",
            "Keep datasets on the CPU and call .to(device, non_blocking=True) per batch inside the loop; do not create CUDA tensors in Dataset.__getitem__ or collate_fn.",
        )),
        "compile" => out.push(fix_en(
            "Give compilation less to autotune",
            "torch.compile(mode=\"max-autotune\") benchmarks many kernels and can need extra memory: use the default mode, or disable compilation once to see whether the model fits without it.",
        )),
        _ => {}
    }
}

/// True for PyTorch allocator messages from Intel GPUs (`XPU` / IPEX `DPCPP`).
fn is_intel_xpu(f: &Finding) -> bool {
    f.kind == Kind::TorchAllocatorOom && matches!(f.backend.as_deref(), Some("xpu" | "dpcpp"))
}

/// The one fix for a request no device of this kind can hold (the Intel and
/// Ascend fix lists; CUDA's names its own attention remedy).
fn tensor_far_too_large() -> Fix {
    fix_en(
        "Find the tensor that is far too large",
        "Print the shapes at the failing line (the last frame of your own code in the traceback): a wrong reshape or broadcast, an attention matrix over a very long sequence, or a whole dataset moved to the device. Allocator settings cannot help here.",
    )
}

/// Fixes for torch_npu's allocator messages (Huawei Ascend): its own
/// allocator variable, device type and tools, not CUDA's.
fn npu_fixes(d: &Diagnosis, out: &mut Vec<Fix>) {
    let has = |code: Code| d.verdicts.iter().any(|v| v.code == code.as_str());
    if has(Code::RequestExceedsCapacity) {
        out.push(tensor_far_too_large());
        return;
    }
    if has(Code::Fragmentation) {
        out.push(fix_en(
            "Stop the allocator from splitting large blocks",
            "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:128 (torch_npu's allocator settings; the message itself suggests max_split_size_mb). Blocks larger than 128 MB are then never split; try 128–512.",
        ));
    }
    out.push(fix_en(
        "Reduce the batch size",
        "Halve the batch size; keep the effective batch with gradient accumulation (accumulate N micro-batches, then optimizer.step()). Activation memory shrinks in proportion.",
    ));
    out.push(fix_en(
        "Use mixed precision",
        "Run the forward pass under torch.autocast(device_type=\"npu\", dtype=torch.bfloat16) (float16 on NPUs without bfloat16): activations take half the memory.",
    ));
    out.push(fix_en(
        "Trade compute for memory with gradient checkpointing",
        "model.gradient_checkpointing_enable() (Hugging Face) or torch.utils.checkpoint.checkpoint around blocks: activations are recomputed in the backward pass instead of stored.",
    ));
    out.push(fix_en(
        "Check what else uses the NPU",
        "`npu-smi info` shows each NPU's memory in use and its processes; stop other processes on the same NPU or select another with ASCEND_RT_VISIBLE_DEVICES=N.",
    ));
}

/// Fixes for PyTorch allocator messages from Intel GPUs: the CUDA options
/// (`PYTORCH_CUDA_ALLOC_CONF`, `expandable_segments`, `nvidia-smi`) do not apply.
fn xpu_fixes(f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
    let has = |code: Code| d.verdicts.iter().any(|v| v.code == code.as_str());
    if has(Code::RequestExceedsCapacity) {
        out.push(tensor_far_too_large());
        return;
    }
    if f.sizes.requested_bytes.is_some_and(|a| a > 4 * GIB) {
        out.push(fix_en(
            "Allow single allocations over 4 GiB",
            "Intel's Level Zero runtime refuses one allocation larger than about 4 GiB unless relaxed: export UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 before Python starts (oneapi-src/unified-runtime#1245), or split the tensor (smaller batch or chunks).",
        ));
    }
    if has(Code::MemoryLimit) {
        out.push(fix_en(
            "Raise or remove the per-process memory limit",
            "Look for torch.xpu.set_per_process_memory_fraction(...) in your code or framework config and raise the fraction.",
        ));
    }
    if has(Code::Fragmentation) {
        out.push(fix_en(
            "Release cached blocks between phases",
            "torch.xpu.empty_cache() — the message's own hint — hands back memory PyTorch caches but no tensor uses, e.g. between training and evaluation. PyTorch already released what it could before raising, and the CUDA allocator's options (expandable_segments, max_split_size_mb) do not apply to Intel GPUs; allocating large, long-lived tensors first reduces fragmentation.",
        ));
    }
    out.push(fix_en(
        "Reduce the batch size",
        "Halve the batch size; keep the effective batch with gradient accumulation (accumulate N micro-batches, then optimizer.step()).",
    ));
    out.push(fix_en(
        "Use mixed precision",
        "Run the forward pass under torch.autocast(device_type=\"xpu\", dtype=torch.bfloat16): activations take half the memory.",
    ));
    out.push(fix_en(
        "Trade compute for memory with gradient checkpointing",
        "model.gradient_checkpointing_enable() (Hugging Face) or torch.utils.checkpoint.checkpoint around blocks; use torch.no_grad() for evaluation.",
    ));
    out.push(fix_en(
        "Check what else uses the GPU",
        format!(
            "Intel's xpu-smi (e.g. `xpu-smi stats -d {}`) shows device memory in use; stop other processes on the same GPU or select another with ZE_AFFINITY_MASK.",
            f.device.unwrap_or(0)
        ),
    ));
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
