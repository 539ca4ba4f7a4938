//! CuPy's memory pool out-of-memory, with or without a pool limit.

use super::catalogue::{Cost, FixSpec};
use super::common::{extra, fix, framework_fixes, row, verdict, BeyondGpus, FieldRow, Reading};
use super::docs::Code;
use super::setting::Framework;
use super::Explain;
use crate::i18n::Said;
use crate::record::{Diagnosis, Finding, Fix, Verdict};
use crate::say;
use crate::units::{format_signed, format_size as fmt};

/// Explains `Kind::CupyOom` findings.
pub(super) struct CupyOom;

impl Explain for CupyOom {
    fn headline(&self, f: &Finding) -> Said {
        match f.sizes.requested_bytes.map(fmt) {
            Some(size) => say!(
                en: "CuPy could not allocate {size} on the GPU",
                zh: "CuPy 无法在 GPU 上分配 {size}",
                size = size
            ),
            None => say!(en: "CuPy ran out of GPU memory", zh: "CuPy 显存不足"),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        let s = &f.sizes;
        if let Some(n) = s.requested_bytes {
            rows.push(row(
                say!(en: "Allocating", zh: "正在分配"),
                fmt(n),
                say!(
                    en: "the array buffer CuPy tried to allocate (exact)",
                    zh: "CuPy 要分配的数组缓冲区（精确值）"
                ),
                false,
            ));
        }
        if let Some(m) = s.allocated_bytes {
            rows.push(row(
                say!(en: "Allocated so far", zh: "已分配"),
                fmt(m),
                say!(
                    en: "CuPy's pool total (in use plus cached free blocks) when the request came in, before CuPy released its cache and retried: it can exceed what CuPy held at the failure",
                    zh: "申请到来时 CuPy 内存池的总量（在用的加上缓存着的空闲块），在 CuPy 释放缓存并重试之前：可能比失败时 CuPy 实际占用的多"
                ),
                false,
            ));
        }
        if let Some(l) = extra(f, "pool_limit_bytes") {
            rows.push(row(
                say!(en: "Limit set to", zh: "上限设为"),
                fmt(l),
                say!(
                    en: "the pool's cap (MemoryPool.set_limit or CUPY_GPU_MEMORY_LIMIT)",
                    zh: "内存池的上限（MemoryPool.set_limit 或 CUPY_GPU_MEMORY_LIMIT）"
                ),
                false,
            ));
            if let Some(m) = s.allocated_bytes {
                rows.push(row(
                    say!(en: "Room under the limit (derived)", zh: "上限下的余量（推算）"),
                    format_signed(i128::from(l) - i128::from(m)),
                    say!(
                        en: "limit − allocated so far: what was left for this request",
                        zh: "上限 − 已分配：留给这次申请的空间"
                    ),
                    true,
                ));
            }
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        cupy_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        // One array that is itself most of a GPU: smaller pieces first,
        // the pool's settings cannot make it fit.
        let one_array = matches!(Reading::of(f, true), Reading::OneRequestFills { .. });
        framework_fixes(d, out, |has, out| cupy_fixes(has, one_array, out))
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
                say!(
                    en: "CuPy's memory-pool limit refused it, not the GPU",
                    zh: "是 CuPy 内存池的上限拒绝了分配，不是 GPU"
                ),
                say!(
                    en: "CuPy's memory pool is capped at {limit} (MemoryPool.set_limit or CUPY_GPU_MEMORY_LIMIT). It held {held} and needed {needed} more, {sum} in all, over the cap; CuPy checks the cap before asking the GPU, and what it holds includes freed blocks it keeps cached for reuse.",
                    zh: "CuPy 的内存池上限是 {limit}（MemoryPool.set_limit 或 CUPY_GPU_MEMORY_LIMIT）。它已占用 {held}，还要 {needed}，合计 {sum}，超过了上限；CuPy 先检查上限再向 GPU 申请，而它占用的量包括为复用而缓存着的已释放块。",
                    limit = fmt(l),
                    held = fmt(m),
                    needed = fmt(n),
                    sum = fmt(m.saturating_add(n))
                ),
            ));
            return;
        }
    }
    if let Some(n) = n.filter(|&n| BeyondGpus::of(n) == Some(BeyondGpus::Every)) {
        out.push(verdict(
            Code::RequestExceedsCapacity,
            say!(en: "One array is larger than any GPU", zh: "一个数组就比任何 GPU 都大"),
            say!(
                en: "CuPy tried to allocate one array buffer of {size} ({n} bytes): more than any single GPU has. A shape is far larger than intended.",
                zh: "CuPy 要分配一个 {size}（{n} 字节）的数组缓冲区：比任何单块 GPU 的显存都多。某个形状比预想的大得多。",
                size = fmt(n),
                n = n
            ),
        ));
        return;
    }
    let detail = match (n, m) {
        (Some(n), Some(m)) => say!(
            en: "CuPy's pool held {held} when it needed {needed} more. Before raising, CuPy released the pool's cached free blocks, ran Python's garbage collector and retried twice, so the GPU could not provide {needed} even then. Memory held outside CuPy's pool — PyTorch's or TensorFlow's cache in the same process, the CUDA context, other processes — is not counted in the {held}.",
            zh: "CuPy 的内存池已占用 {held}，还需要 {needed}。报错之前，CuPy 已经释放了池里缓存的空闲块、运行了 Python 的垃圾回收并重试了两次，GPU 仍然给不出 {needed}。CuPy 池之外占用的显存——同一进程里 PyTorch 或 TensorFlow 的缓存、CUDA 上下文、其他进程——不算在这 {held} 里。",
            held = fmt(m),
            needed = fmt(n)
        ),
        (Some(n), None) => say!(
            en: "The GPU could not provide {needed} for CuPy. This form of the message comes from CuPy's MemoryAsyncPool (CUDA's stream-ordered allocator), which does not track how much it holds.",
            zh: "GPU 给不出 CuPy 要的 {needed}。这种形式的报错来自 CuPy 的 MemoryAsyncPool（CUDA 的流序分配器），它不统计自己占用了多少。",
            needed = fmt(n)
        ),
        _ => say!(en: "CuPy could not get memory from the GPU.", zh: "CuPy 没能从 GPU 拿到显存。"),
    };
    out.push(verdict(
        Code::CapacityExhausted,
        say!(en: "The workload does not fit in GPU memory", zh: "工作负载放不进显存"),
        detail,
    ));
}

/// `set_limit` and `free_all_blocks`: CuPy's pool API.
const RAISE_POOL_LIMIT: FixSpec = FixSpec::new(
    "cupy-raise-pool-limit",
    "Raise or remove the pool limit, or release cached blocks",
    "调高或去掉内存池上限，或释放缓存块",
)
.frameworks(&[Framework::CuPy])
.sources(&["CuPy documentation: Memory Management (MemoryPool.set_limit, free_all_blocks)"]);

const RELEASE_POOL_CACHE: FixSpec = FixSpec::new(
    "cupy-release-pool-cache",
    "Release CuPy's cached memory when sharing the GPU",
    "与其他库共用 GPU 时释放 CuPy 的缓存",
)
.frameworks(&[Framework::CuPy])
.sources(&["CuPy documentation: Memory Management"]);

const SMALLER_PIECES: FixSpec = FixSpec::new(
    "cupy-process-in-pieces",
    "Process in smaller pieces",
    "分成更小的块处理",
)
.frameworks(&[Framework::CuPy])
.cost(Cost::Speed);

fn cupy_fixes(has: &dyn Fn(Code) -> bool, one_array: bool, out: &mut Vec<Fix>) {
    let pieces = fix(
        &SMALLER_PIECES,
        say!(
            en: "Work on the data in chunks (a few rows or tiles at a time), delete intermediate arrays (del x) as soon as they are done, and prefer in-place operations (out= arguments) for large arrays.",
            zh: "分块处理数据（一次几行或几块），中间数组用完马上删掉（del x），大数组尽量用原地操作（out= 参数）。"
        ),
    );
    if one_array && !has(Code::MemoryLimit) {
        out.push(pieces.clone());
    }
    if has(Code::MemoryLimit) {
        out.push(fix(
            &RAISE_POOL_LIMIT,
            say!(
                en: "cupy.get_default_memory_pool().set_limit(size=...) (or CUPY_GPU_MEMORY_LIMIT) sets the cap; raise it, or call cupy.get_default_memory_pool().free_all_blocks() first — the cap counts freed blocks the pool still caches.",
                zh: "上限由 cupy.get_default_memory_pool().set_limit(size=...)（或 CUPY_GPU_MEMORY_LIMIT）设置；调高它，或先调用 cupy.get_default_memory_pool().free_all_blocks()——池里还缓存着的已释放块也算在上限里。"
            ),
        ));
    }
    out.push(fix(
        &RELEASE_POOL_CACHE,
        say!(
            en: "CuPy's pool keeps freed blocks for reuse. Call cupy.get_default_memory_pool().free_all_blocks() (and cupy.get_default_pinned_memory_pool().free_all_blocks()) after large steps or before handing the GPU to PyTorch/TensorFlow in the same process; cap CuPy with set_limit(fraction=0.5) when both run together.",
            zh: "CuPy 的内存池会留着已释放的块以便复用。在大的计算步骤之后、或在同一进程里把 GPU 交给 PyTorch/TensorFlow 之前，调用 cupy.get_default_memory_pool().free_all_blocks()（以及 cupy.get_default_pinned_memory_pool().free_all_blocks()）；两者一起运行时，用 set_limit(fraction=0.5) 给 CuPy 设上限。"
        ),
    ));
    out.push(pieces);
}

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[RAISE_POOL_LIMIT, RELEASE_POOL_CACHE, SMALLER_PIECES];
