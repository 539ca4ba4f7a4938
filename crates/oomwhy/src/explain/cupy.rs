//! CuPy's memory pool out-of-memory, with or without a pool limit.

use super::common::{extra, fix, framework_fixes, row, verdict, FieldRow, TIB};
use super::docs::Code;
use super::Explain;
use crate::record::{Diagnosis, Finding, Fix, Verdict};
use crate::units::{format_signed, format_size as fmt};

/// Explains `Kind::CupyOom` findings.
pub(super) struct CupyOom;

impl Explain for CupyOom {
    fn headline(&self, f: &Finding) -> String {
        let a = f.sizes.requested_bytes.map(fmt);
        match a {
            Some(a) => format!("CuPy could not allocate {a} on the GPU"),
            None => "CuPy ran out of GPU memory".into(),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        let s = &f.sizes;
        if let Some(n) = s.requested_bytes {
            rows.push(row(
                "Allocating",
                fmt(n),
                "the array buffer CuPy tried to allocate (exact)",
                false,
            ));
        }
        if let Some(m) = s.allocated_bytes {
            rows.push(row("Allocated so far", fmt(m), "CuPy's pool total (in use plus cached free blocks) when the request came in, before CuPy released its cache and retried: it can exceed what CuPy held at the failure", false));
        }
        if let Some(l) = extra(f, "pool_limit_bytes") {
            rows.push(row(
                "Limit set to",
                fmt(l),
                "the pool's cap (MemoryPool.set_limit or CUPY_GPU_MEMORY_LIMIT)",
                false,
            ));
            if let Some(m) = s.allocated_bytes {
                rows.push(row(
                    "Room under the limit (derived)",
                    format_signed(i128::from(l) - i128::from(m)),
                    "limit − allocated so far: what was left for this request",
                    true,
                ));
            }
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        cupy_verdicts(f, out)
    }
    fn fixes(&self, _f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        framework_fixes(d, out, |has, out| cupy_fixes(has, out))
    }
}

fn cupy_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let n = f.sizes.requested_bytes;
    let m = f.sizes.allocated_bytes;
    let l = extra(f, "pool_limit_bytes");
    if let (Some(n), Some(m), Some(l)) = (n, m, l) {
        if m.saturating_add(n) > l {
            out.push(verdict(
                Code::MemoryLimit,
                "CuPy's memory-pool limit refused it, not the GPU",
                format!(
                    "CuPy's memory pool is capped at {} (MemoryPool.set_limit or CUPY_GPU_MEMORY_LIMIT). It held {} and needed {} more, {} in all, over the cap; CuPy checks the cap before asking the GPU, and what it holds includes freed blocks it keeps cached for reuse.",
                    fmt(l),
                    fmt(m),
                    fmt(n),
                    fmt(m.saturating_add(n))
                ),
            ));
            return;
        }
    }
    if let Some(n) = n.filter(|&n| n >= TIB) {
        out.push(verdict(
            Code::RequestExceedsCapacity,
            "One array is larger than any GPU",
            format!("CuPy tried to allocate one array buffer of {} ({n} bytes): more than any single GPU has. A shape is far larger than intended.", fmt(n)),
        ));
        return;
    }
    let detail = match (n, m) {
        (Some(n), Some(m)) => format!(
            "CuPy's pool held {} when it needed {} more. Before raising, CuPy released the pool's cached free blocks, ran Python's garbage collector and retried twice, so the GPU could not provide {} even then. Memory held outside CuPy's pool — PyTorch's or TensorFlow's cache in the same process, the CUDA context, other processes — is not counted in the {}.",
            fmt(m),
            fmt(n),
            fmt(n),
            fmt(m)
        ),
        (Some(n), None) => format!(
            "The GPU could not provide {} for CuPy. This form of the message comes from CuPy's MemoryAsyncPool (CUDA's stream-ordered allocator), which does not track how much it holds.",
            fmt(n)
        ),
        _ => "CuPy could not get memory from the GPU.".into(),
    };
    out.push(verdict(
        Code::CapacityExhausted,
        "The workload does not fit in GPU memory",
        detail,
    ));
}

fn cupy_fixes(has: &dyn Fn(Code) -> bool, out: &mut Vec<Fix>) {
    if has(Code::MemoryLimit) {
        out.push(fix(
            "Raise or remove the pool limit, or release cached blocks",
            "cupy.get_default_memory_pool().set_limit(size=...) (or CUPY_GPU_MEMORY_LIMIT) sets the cap; raise it, or call cupy.get_default_memory_pool().free_all_blocks() first — the cap counts freed blocks the pool still caches.",
        ));
    }
    out.push(fix(
        "Release CuPy's cached memory when sharing the GPU",
        "CuPy's pool keeps freed blocks for reuse. Call cupy.get_default_memory_pool().free_all_blocks() (and cupy.get_default_pinned_memory_pool().free_all_blocks()) after large steps or before handing the GPU to PyTorch/TensorFlow in the same process; cap CuPy with set_limit(fraction=0.5) when both run together.",
    ));
    out.push(fix(
        "Process in smaller pieces",
        "Work on the data in chunks (a few rows or tiles at a time), delete intermediate arrays (del x) as soon as they are done, and prefer in-place operations (out= arguments) for large arrays.",
    ));
}
