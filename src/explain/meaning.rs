//! What each number means, in the words of the message's own PyTorch era.

use crate::record::{Finding, Kind};
use crate::units::{format_signed, format_size as fmt};

/// One row of the "what the numbers mean" table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRow {
    /// The field's name as the message (or oomwhy, for derived rows) calls it.
    pub label: String,
    /// The value, formatted like PyTorch formats sizes.
    pub value: String,
    /// One line saying what the number is here.
    pub meaning: String,
    /// True for numbers oomwhy computed rather than read.
    pub derived: bool,
}

fn row(label: &str, value: String, meaning: impl Into<String>, derived: bool) -> FieldRow {
    FieldRow {
        label: label.to_string(),
        value,
        meaning: meaning.into(),
        derived,
    }
}

/// A one-line statement of what happened.
pub fn headline(f: &Finding) -> String {
    let device = f.device.map(|d| format!(" on GPU {d}")).unwrap_or_default();
    match f.kind {
        Kind::TorchAllocatorOom => {
            let backend = match f.backend.as_deref() {
                Some("hip") => " (ROCm/HIP)",
                Some("xpu") => " (Intel XPU)",
                _ => "",
            };
            match (f.era.as_deref(), f.sizes.requested_bytes) {
                (Some("size_guard"), _) => {
                    format!("PyTorch refused an allocation of more than 1 EB{device}: a tensor shape is wrong")
                }
                (_, Some(a)) => format!("PyTorch could not allocate {}{device}{backend}", fmt(a)),
                _ => format!("PyTorch's allocator ran out of memory{device}{backend}"),
            }
        }
        Kind::CudaRuntimeOom => {
            format!("A CUDA call ran out of GPU memory{device} (outside PyTorch's allocator; no sizes given)")
        }
        Kind::IllegalMemoryAccess => {
            "A GPU kernel accessed memory it should not (illegal memory access) — not an out-of-memory error".into()
        }
        Kind::WindowsFailFast => {
            "The process was ended by Windows' fail-fast (0xC0000409): a native crash with no Python error".into()
        }
        Kind::MpsOom
        | Kind::HostOom
        | Kind::HostOomKilled
        | Kind::TfOom
        | Kind::XlaOom
        | Kind::CupyOom
        | Kind::KvCacheOom => super::families_stated::headline(f),
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
        | Kind::GenericOom => super::families_masked::headline(f),
        Kind::MemorySnapshot => crate::snapshot::headline(f),
    }
}

/// Rows for the stated and derived numbers, in reading order.
pub fn field_rows(f: &Finding) -> Vec<FieldRow> {
    if super::families_stated::handles(f.kind) {
        return super::families_stated::field_rows(f);
    }
    if f.kind != Kind::TorchAllocatorOom {
        return Vec::new();
    }
    let s = &f.sizes;
    let d = &f.diagnosis;
    let era = f.era.as_deref().unwrap_or("");
    let malloc_async = era == "malloc_async";
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
        rows.push(row("Tried to allocate", fmt(a), meaning, false));
    }
    if let Some(t) = s.total_bytes {
        let label = if malloc_async {
            "Device limit"
        } else {
            "Total capacity"
        };
        rows.push(row(
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
        rows.push(row(
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
        rows.push(row("Free", fmt(free), meaning, false));
    }
    for p in &f.processes {
        let meaning = if d.probable_self_pid == Some(p.pid) {
            "probably this process itself (listed under its host PID, as in a container)"
        } else {
            "another process on this GPU, as NVML sees it"
        };
        rows.push(row(
            &format!("Process {}", p.pid),
            fmt(p.in_use_bytes),
            meaning,
            false,
        ));
    }
    if let Some(sp) = s.process_in_use_bytes {
        rows.push(row(
            "This process",
            fmt(sp),
            "everything this process holds on the GPU: PyTorch's cache plus the CUDA context and other libraries",
            false,
        ));
    }
    if let Some(x) = s.allocated_bytes {
        let (label, meaning) = match era {
            "cached" | "reserved" | "paren" => ("Already allocated", "memory in live tensors of this process (block sizes, so a bit more than the tensors' bytes)".to_string()),
            "malloc_async" => ("Currently allocated", "memory in live tensors allocated through this backend".to_string()),
            _ if s.private_pools_bytes.is_some() => (
                "Allocated by PyTorch",
                "memory in live tensors, plus the free space in CUDA-graph private pools below".to_string(),
            ),
            _ => ("Allocated by PyTorch", "memory in live tensors of this process (block sizes, so a bit more than the tensors' bytes)".to_string()),
        };
        rows.push(row(label, fmt(x), meaning, false));
    }
    if let Some(p) = s.private_pools_bytes {
        rows.push(row(
            "Private pools",
            fmt(p),
            "free blocks kept by CUDA graphs' private pools: counted as allocated, usable only by those graphs",
            false,
        ));
    }
    if let Some(c) = s.cached_bytes {
        rows.push(row(
            "Cached",
            fmt(c),
            "held by PyTorch but in no tensor (PyTorch ≤1.3's word for reserved-but-unallocated)",
            false,
        ));
    }
    if let Some(u) = s.reserved_unallocated_bytes {
        rows.push(row(
            "Reserved but unallocated",
            fmt(u),
            "held by PyTorch but in no tensor: free space inside partly used segments",
            false,
        ));
    }
    if let Some(r) = s.reserved_bytes {
        rows.push(row(
            "Reserved in total",
            fmt(r),
            "everything PyTorch's caching allocator holds from CUDA: allocated plus cached",
            false,
        ));
    } else if let Some(r) = d.reserved_bytes {
        rows.push(row(
            "Reserved (derived)",
            fmt(r),
            "everything PyTorch's caching allocator holds: allocated + unallocated",
            true,
        ));
    }
    if let Some(n) = d.non_pytorch_bytes {
        rows.push(row(
            "Non-PyTorch (derived)",
            fmt(n),
            "this process's memory outside PyTorch's allocator: CUDA context, cuBLAS/cuDNN, NCCL, other libraries",
            true,
        ));
    }
    // Not when the only listed process is this one (a container's own PID).
    let only_self = f.processes.len() == 1 && d.probable_self_pid.is_some();
    if let (Some(o), false) = (d.other_processes_bytes, f.processes.is_empty() || only_self) {
        rows.push(row(
            "Other processes (derived)",
            fmt(o),
            "sum of the other processes' memory",
            true,
        ));
    }
    if let Some(outside) = d.outside_allocator_bytes {
        if s.process_in_use_bytes.is_none() && f.processes.is_empty() {
            rows.push(row(
                "Outside PyTorch (derived)",
                format_signed(outside.into()),
                if outside < 0 {
                    "total − free − reserved: negative, so these figures contradict each other (see below)"
                } else {
                    "total − free − reserved: CUDA context, other libraries and other processes together"
                },
                true,
            ));
        }
    }
    if let Some(short) = d.shortfall_bytes {
        let meaning = if short > 0 {
            "requested − free: how much was missing on the device"
        } else {
            "requested − free: negative, the device had more free than requested"
        };
        rows.push(row(
            "Shortfall (derived)",
            format_signed(short.into()),
            meaning,
            true,
        ));
    }
    rows
}

/// The reserved-vs-allocated gap spelled out with its numbers.
pub fn reserved_gap(f: &Finding) -> Option<String> {
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
