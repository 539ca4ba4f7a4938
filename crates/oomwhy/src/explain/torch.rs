//! PyTorch's caching allocator (`CUDA out of memory. Tried to allocate ...`,
//! every era and backend): the numbers' meaning, the memory verdicts, and
//! fixes fitted to the allocator options of the message's PyTorch version.

use super::catalogue::{Cost, Engines, FixSpec, Phases, Shown};
use super::common::{
    capitalise, fix, format_derived, free_exceeds, inference_fixes, loading_fix_for, percent, row,
    tolerance, verdict, workload_fixes, BeyondGpus, FieldRow, Reading, FIND_OVERSIZED_TENSOR, GIB,
    GRADIENT_CHECKPOINTING, MIB, REDUCE_BATCH_SIZE,
};
use super::docs::Code;
use super::pasted;
use super::setting::{
    available, is_inference, since, Availability, Framework, Release, Runtime, Vendor,
};
use super::thresholds::*;
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Kind, RequestRange, Verdict};
use crate::say;
use crate::units::{format_signed, format_size as fmt};

/// A text put together from pieces each already said in both languages
/// (`say!` cannot take a piece whose words differ by language).
fn said(en: String, zh: String) -> Said {
    Said { en, zh }
}

/// Items of a list joined in each language (`, ` and `、`).
fn listed(items: &[Said]) -> Said {
    said(
        items
            .iter()
            .map(|s| s.en.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        items
            .iter()
            .map(|s| s.zh.as_str())
            .collect::<Vec<_>>()
            .join("、"),
    )
}

/// ` on GPU N` (`NPU N` for torch_npu, which numbers Ascend NPUs so), or
/// nothing when the message names no device.
fn device_place(f: &Finding) -> Said {
    let kind = if f.backend.as_deref() == Some("npu") {
        "NPU"
    } else {
        "GPU"
    };
    match f.device {
        Some(index) => say!(en: " on {what} {d}", zh: "在 {what} {d} 上", what = kind, d = index),
        None => Said::default(),
    }
}

/// Explains `Kind::TorchAllocatorOom` findings.
pub(super) struct TorchAllocatorOom;

impl Explain for TorchAllocatorOom {
    fn headline(&self, f: &Finding) -> Said {
        let place = device_place(f);
        let backend = match f.backend.as_deref() {
            Some("hip") => say!(en: " (ROCm/HIP)", zh: "（ROCm/HIP）"),
            Some("xpu") => say!(en: " (Intel XPU)", zh: "（Intel XPU）"),
            _ => Said::default(),
        };
        match (f.era, f.sizes.requested_bytes) {
            (Some(Era::SizeGuard), _) => said(
                format!(
                    "PyTorch refused an allocation of more than 1 EB{}: a tensor shape is wrong",
                    place.en
                ),
                format!(
                    "PyTorch {}拒绝了一次超过 1 EB 的分配：某个张量的形状不对",
                    place.zh
                ),
            ),
            (_, Some(a)) => said(
                format!(
                    "PyTorch could not allocate {}{}{}",
                    fmt(a),
                    place.en,
                    backend.en
                ),
                format!("PyTorch {}分配 {} 失败{}", place.zh, fmt(a), backend.zh),
            ),
            _ => said(
                format!(
                    "PyTorch's allocator ran out of memory{}{}",
                    place.en, backend.en
                ),
                format!("PyTorch 的分配器{}显存不足{}", place.zh, backend.zh),
            ),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let s = &f.sizes;
        let d = &f.diagnosis;
        let era = f.era;
        let malloc_async = era == Some(Era::MallocAsync);
        let mut rows = Vec::new();

        if let Some(a) = s.requested_bytes {
            let meaning = if malloc_async {
                say!(
                    en: "the exact size of the tensor being created",
                    zh: "正在创建的张量的确切大小"
                )
            } else if era == Some(Era::Cached) && is_native_allocator(f) {
                // 0.4–1.3: the first releases of this form rounded large
                // requests to 128 KiB and packed small ones into 1 MiB
                // buffers; the later ones to 2 MiB and 2/20 MiB blocks.
                say!(
                    en: "the block the allocator asked CUDA for: the tensor's size rounded up (to a multiple of 128 KiB or 2 MiB, depending on the release)",
                    zh: "分配器向 CUDA 申请的块：张量的大小向上取整（取决于版本，取整到 128 KiB 或 2 MiB 的倍数）"
                )
            } else if let Some(range) = &d.request_range {
                if range.max_bytes == 1 << 20 {
                    say!(
                        en: "the block the allocator asked CUDA for; the tensor itself was at most 1 MiB (small tensors share 2 MiB blocks)",
                        zh: "分配器向 CUDA 申请的块；张量本身不超过 1 MiB（小张量共用 2 MiB 的块）"
                    )
                } else if range.max_bytes == 20 << 20 {
                    say!(
                        en: "the block the allocator asked CUDA for; the tensor itself was between 1 and 10 MiB (these share 20 MiB blocks), or 18–20 MiB",
                        zh: "分配器向 CUDA 申请的块；张量本身在 1 到 10 MiB 之间（这类张量共用 20 MiB 的块），或在 18–20 MiB 之间"
                    )
                } else {
                    say!(
                        en: "the block the allocator asked CUDA for: the tensor's size rounded up to a multiple of 2 MiB",
                        zh: "分配器向 CUDA 申请的块：张量的大小向上取整到 2 MiB 的倍数"
                    )
                }
            } else {
                say!(
                    en: "the size of the allocation that failed",
                    zh: "失败的那次分配的大小"
                )
            };
            rows.push(row(
                say!(en: "Tried to allocate", zh: "尝试分配"),
                fmt(a),
                meaning,
                false,
            ));
        }
        if let Some(t) = s.total_bytes {
            let label = if malloc_async {
                say!(en: "Device limit", zh: "设备上限")
            } else {
                say!(en: "Total capacity", zh: "总容量")
            };
            let gpu = match f.device {
                Some(index) => say!(en: "GPU {d}", zh: "GPU {d}", d = index),
                None => say!(en: "the GPU", zh: "这块 GPU"),
            };
            let reporter = if f.backend.as_deref() == Some("cuda") {
                say!(en: "CUDA", zh: "CUDA 报告的值")
            } else {
                say!(en: "the driver", zh: "驱动报告的值")
            };
            rows.push(row(
                label,
                fmt(t),
                said(
                    format!("all memory of {}, as {} reports it", gpu.en, reporter.en),
                    format!("{} 的全部显存（{}）", gpu.zh, reporter.zh),
                ),
                false,
            ));
        }
        if let Some(l) = s.allowed_bytes {
            rows.push(row(
                say!(en: "Allowed", zh: "允许上限"),
                fmt(l),
                say!(
                    en: "the most PyTorch may use in this process (torch.cuda.set_per_process_memory_fraction)",
                    zh: "本进程里 PyTorch 最多可以使用的量（torch.cuda.set_per_process_memory_fraction）"
                ),
                false,
            ));
        }
        if let Some(free) = s.free_bytes {
            let meaning = if malloc_async {
                say!(
                    en: "free on the whole device according to CUDA when the allocation failed",
                    zh: "分配失败时 CUDA 报告的整块设备上的空闲显存"
                )
            } else {
                say!(
                    en: "free on the whole device when the error was raised, after PyTorch had already returned its unused cache",
                    zh: "报错时整块设备上的空闲显存，此时 PyTorch 已经归还了没在用的缓存"
                )
            };
            rows.push(row(say!(en: "Free", zh: "空闲"), fmt(free), meaning, false));
        }
        for p in &f.processes {
            let meaning = if d.probable_self_pid == Some(p.pid) && super::cut_in_process_list(f) {
                say!(
                    en: "probably this process itself: the only process listed, and the message is cut before the part that says",
                    zh: "多半就是本进程自己：它是唯一列出的进程，而报错在说明这一点的部分之前就被截断了"
                )
            } else if d.probable_self_pid == Some(p.pid) {
                say!(
                    en: "probably this process itself (listed under its host PID, as in a container)",
                    zh: "多半就是本进程自己（以宿主机上的 PID 列出，在容器里就是这样）"
                )
            } else {
                if super::cut_in_process_list(f) {
                    say!(
                        en: "a process on this GPU, as NVML sees it; the message is cut before the part that says whether it is this one",
                        zh: "这块 GPU 上的一个进程（NVML 看到的）；报错在说明它是不是本进程的部分之前就被截断了"
                    )
                } else {
                    say!(
                        en: "another process on this GPU, as NVML sees it",
                        zh: "这块 GPU 上的另一个进程（NVML 看到的）"
                    )
                }
            };
            rows.push(row(
                say!(en: "Process {pid}", zh: "进程 {pid}", pid = p.pid),
                fmt(p.in_use_bytes),
                meaning,
                false,
            ));
        }
        if let Some(sp) = s.process_in_use_bytes {
            let meaning = if measured_process_bytes(f).is_some() {
                say!(
                    en: "everything this process holds on the GPU: PyTorch's cache plus the CUDA context and other libraries",
                    zh: "本进程在这块 GPU 上占用的全部显存：PyTorch 的缓存加上 CUDA 上下文和其他库"
                )
            } else {
                say!(
                    en: "not a measurement: PyTorch itself holds memory in this process, so the driver's per-process figure did not find it; oomwhy reasons without this figure",
                    zh: "这不是测量值：PyTorch 自己就在本进程里占着显存，所以是驱动按进程统计时没有找到本进程；oomwhy 推理时不用这个数字"
                )
            };
            rows.push(row(
                say!(en: "This process", zh: "本进程"),
                fmt(sp),
                meaning,
                false,
            ));
        }
        if let Some(x) = s.allocated_bytes {
            let in_live_tensors = || {
                say!(
                    en: "memory in live tensors of this process (block sizes, so a bit more than the tensors' bytes)",
                    zh: "本进程存活张量占用的显存（按块大小计，所以比张量本身的字节数略多）"
                )
            };
            let (label, meaning) = match era {
                Some(Era::Cached | Era::Reserved | Era::Paren) => (
                    say!(en: "Already allocated", zh: "已分配"),
                    in_live_tensors(),
                ),
                Some(Era::MallocAsync) => (
                    say!(en: "Currently allocated", zh: "当前已分配"),
                    say!(
                        en: "memory in live tensors allocated through this backend",
                        zh: "通过这个后端分配、仍然存活的张量占用的显存"
                    ),
                ),
                _ if s.private_pools_bytes.is_some() => (
                    say!(en: "Allocated by PyTorch", zh: "PyTorch 已分配"),
                    say!(
                        en: "memory in live tensors, plus the free space in CUDA-graph private pools below",
                        zh: "存活张量占用的显存，加上下面 CUDA graph 私有池里的空闲空间"
                    ),
                ),
                _ => (
                    say!(en: "Allocated by PyTorch", zh: "PyTorch 已分配"),
                    in_live_tensors(),
                ),
            };
            rows.push(row(label, fmt(x), meaning, false));
        }
        if let Some(p) = s.private_pools_bytes {
            rows.push(row(
                say!(en: "Private pools", zh: "私有池"),
                fmt(p),
                say!(
                    en: "free blocks kept by CUDA graphs' private pools: counted as allocated, usable only by those graphs",
                    zh: "CUDA graph 私有池留着的空闲块：算作已分配，只有那些 graph 能用"
                ),
                false,
            ));
        }
        if let Some(c) = s.cached_bytes {
            rows.push(row(
                say!(en: "Cached", zh: "缓存"),
                fmt(c),
                say!(
                    en: "held by PyTorch but in no tensor (PyTorch ≤1.3's word for reserved-but-unallocated)",
                    zh: "PyTorch 持有、但不在任何张量里的显存（PyTorch ≤1.3 对“已预留未分配”的叫法）"
                ),
                false,
            ));
        }
        if let Some(u) = s.reserved_unallocated_bytes {
            rows.push(row(
                say!(en: "Reserved but unallocated", zh: "已预留未分配"),
                fmt(u),
                say!(
                    en: "held by PyTorch but in no tensor: free space inside partly used segments",
                    zh: "PyTorch 持有、但不在任何张量里的显存：部分占用的段里的空闲空间"
                ),
                false,
            ));
        }
        if let Some(r) = s.reserved_bytes {
            rows.push(row(
                say!(en: "Reserved in total", zh: "总共已预留"),
                fmt(r),
                say!(
                    en: "everything PyTorch's caching allocator holds from CUDA: allocated plus cached",
                    zh: "PyTorch 缓存分配器从 CUDA 拿到的全部显存：已分配加缓存"
                ),
                false,
            ));
        } else if let Some(r) = d.reserved_bytes {
            rows.push(row(
                say!(en: "Reserved (derived)", zh: "已预留（推算）"),
                fmt(r),
                say!(
                    en: "everything PyTorch's caching allocator holds: allocated + unallocated",
                    zh: "PyTorch 缓存分配器持有的全部显存：已分配 + 未分配"
                ),
                true,
            ));
        }
        if let Some(n) = d.non_pytorch_bytes {
            rows.push(row(
                say!(en: "Non-PyTorch (derived)", zh: "非 PyTorch（推算）"),
                format_derived(
                    n.into(),
                    &[
                        measured_process_bytes(f).unwrap_or(0),
                        d.reserved_bytes.unwrap_or(0),
                    ],
                ),
                say!(
                    en: "this process's memory outside PyTorch's allocator: CUDA context, cuBLAS/cuDNN, NCCL, other libraries",
                    zh: "本进程在 PyTorch 分配器之外的显存：CUDA 上下文、cuBLAS/cuDNN、NCCL、其他库"
                ),
                true,
            ));
        }
        if let Some(outside) = outside_process(f, d) {
            rows.push(row(
                say!(en: "Outside this process (derived)", zh: "本进程之外（推算）"),
                format_derived(
                    outside.into(),
                    &[
                        s.total_bytes.unwrap_or(0),
                        s.free_bytes.unwrap_or(0),
                        measured_process_bytes(f).unwrap_or(0),
                        d.other_processes_bytes.unwrap_or(0),
                    ],
                ),
                if f.processes.is_empty() {
                    say!(
                        en: "total − free − this process: held by other processes, a desktop session or another container",
                        zh: "总容量 − 空闲 − 本进程：被其他进程、桌面会话或另一个容器占着"
                    )
                } else {
                    say!(
                        en: "total − free − this process − the listed processes: held by something the message does not list",
                        zh: "总容量 − 空闲 − 本进程 − 列出的进程：被报错里没有列出的东西占着"
                    )
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
            rows.push(row(
                say!(en: "Held + request (derived)", zh: "已持有 + 申请（推算）"),
                fmt(held.saturating_add(a)),
                say!(
                    en: "what PyTorch holds plus the request, against the {limit} allowed",
                    zh: "PyTorch 持有的加上这次申请，对比允许的 {limit}",
                    limit = fmt(l)
                ),
                true,
            ));
        }
        // Not when the only listed process is this one (a container's own PID).
        let only_self = f.processes.len() == 1 && d.probable_self_pid.is_some();
        if let (Some(o), false) = (d.other_processes_bytes, f.processes.is_empty() || only_self) {
            rows.push(row(
                say!(en: "Other processes (derived)", zh: "其他进程（推算）"),
                fmt(o),
                say!(
                    en: "sum of the other processes' memory",
                    zh: "其他进程占用的显存之和"
                ),
                true,
            ));
        }
        if let Some(outside) = d.outside_allocator_bytes {
            if measured_process_bytes(f).is_none() && f.processes.is_empty() {
                rows.push(row(
                    say!(en: "Outside PyTorch (derived)", zh: "PyTorch 之外（推算）"),
                    // Signed as computed: a negative figure is what the
                    // Why's contradiction points at.
                    crate::units::format_signed(outside.into()),
                    if outside < 0 {
                        say!(
                            en: "total − free − reserved: negative, so these figures contradict each other (see Why)",
                            zh: "总容量 − 空闲 − 已预留：是负数，所以这些数字互相矛盾（见“原因”）"
                        )
                    } else {
                        say!(
                            en: "total − free − reserved: CUDA context, other libraries and other processes together",
                            zh: "总容量 − 空闲 − 已预留：CUDA 上下文、其他库和其他进程加在一起"
                        )
                    },
                    true,
                ));
            }
        }
        // Figures that contradict each other give no shortfall to reason on.
        if let Some(short) = d.shortfall_bytes.filter(|_| !numbers_contradict(f)) {
            let meaning = if short > 0 {
                say!(
                    en: "requested − free: how much was missing on the device",
                    zh: "申请量 − 空闲：设备上差了多少"
                )
            } else {
                say!(
                    en: "requested − free: negative, the device had more free than requested",
                    zh: "申请量 − 空闲：是负数，设备上的空闲比申请的还多"
                )
            };
            rows.push(row(
                say!(en: "Shortfall (derived)", zh: "缺口（推算）"),
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
            npu_fixes(f, d, out)
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
    // The 0.4–1.3 form's releases did not all use 2 and 20 MiB blocks.
    if !is_native_allocator(f) || f.era == Some(Era::Cached) {
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
fn inconsistencies(f: &Finding, d: &Diagnosis) -> Vec<Said> {
    problems(f, d).into_iter().map(|p| p.said).collect()
}

/// A pair of figures that cannot both be true as printed.
struct Problem {
    said: Said,
    /// Memory beyond the card's own (lent from system RAM) would make the
    /// pair true: more held than the total, held + free beyond it.
    beyond_card: bool,
}

impl From<Said> for Problem {
    fn from(said: Said) -> Self {
        Problem {
            said,
            beyond_card: false,
        }
    }
}

/// The problems found so far, in the order they are said.
struct Problems(Vec<Problem>);

impl Problems {
    fn push(&mut self, problem: impl Into<Problem>) {
        self.0.push(problem.into());
    }
}

/// The figures that cannot all be true at once, each with whether memory
/// beyond the card would explain it.
fn problems(f: &Finding, d: &Diagnosis) -> Vec<Problem> {
    let s = &f.sizes;
    let mut problems = Problems(Vec::new());
    if f.facts.get(fact::OVERFLOW).is_some_and(|v| v == "true") {
        problems.push(say!(
            en: "a figure is larger than any real byte count",
            zh: "有个数字比任何真实的字节数都大"
        ));
    }
    // NVML's "not available" value (2^64 − 1 bytes) printed as a size, and
    // sizes no device has, are quirks or overflows, not measurements.
    let named = [
        (say!(en: "total", zh: "总容量"), s.total_bytes),
        (say!(en: "free", zh: "空闲"), s.free_bytes),
        (say!(en: "allocated", zh: "已分配"), s.allocated_bytes),
        (say!(en: "reserved", zh: "已预留"), s.reserved_bytes),
        (
            say!(en: "this process", zh: "本进程"),
            s.process_in_use_bytes,
        ),
    ];
    for (name, value) in named {
        match value {
            Some(v) if v >= u64::MAX - (u64::MAX >> 12) => problems.push(said(
                format!(
                    "{} reads {} = 2⁶⁴ − 1 bytes, the driver's (NVML's) \"not available\" value printed as a size: the driver could not report it",
                    name.en,
                    fmt(v)
                ),
                format!(
                    "{}的读数是 {} = 2⁶⁴ − 1 字节，这是驱动（NVML）的“不可用”值被当成大小打印了出来：驱动没能报告它",
                    name.zh,
                    fmt(v)
                ),
            )),
            Some(v) if v >= LARGEST_GPU_MEMORY * 64 => problems.push(said(
                format!(
                    "{} reads {}, more than any GPU has by orders of magnitude: an overflowed value",
                    name.en,
                    fmt(v)
                ),
                format!(
                    "{}的读数是 {}，比任何 GPU 的显存都多出几个数量级：是溢出的值",
                    name.zh,
                    fmt(v)
                ),
            )),
            _ => {}
        }
    }
    if let (Some(total), Some(allocated)) = (s.total_bytes, s.allocated_bytes) {
        if allocated > total.saturating_add(tolerance(total) + tolerance(allocated)) {
            problems.push(Problem {
                said: say!(
                    en: "allocated {allocated} is more than the whole card ({total})",
                    zh: "已分配 {allocated} 比整块卡（{total}）还多",
                    allocated = fmt(allocated),
                    total = fmt(total)
                ),
                beyond_card: true,
            });
        }
    }
    if let (Some(total), Some(free), Some(reserved)) =
        (s.total_bytes, s.free_bytes, d.reserved_bytes)
    {
        let tol = tolerance(total) + tolerance(free) + tolerance(reserved) * 2;
        if reserved.saturating_add(free) > total.saturating_add(tol) {
            problems.push(Problem {
                said: say!(
                    en: "reserved {reserved} + free {free} = {sum} is more than the total capacity {total}",
                    zh: "已预留 {reserved} + 空闲 {free} = {sum}，超过了总容量 {total}",
                    sum = fmt(reserved.saturating_add(free)),
                    reserved = fmt(reserved),
                    free = fmt(free),
                    total = fmt(total)
                ),
                beyond_card: true,
            });
        }
    }
    if let (Some(total), Some(free)) = (s.total_bytes, s.free_bytes) {
        if free > total.saturating_add(tolerance(total)) {
            problems.push(say!(
                en: "free {free} is more than the total {total}",
                zh: "空闲 {free} 比总容量 {total} 还多",
                free = fmt(free),
                total = fmt(total)
            ));
        }
    }
    if let (Some(allocated), Some(reserved)) = (s.allocated_bytes, s.reserved_bytes) {
        if allocated > reserved.saturating_add(tolerance(reserved) + tolerance(allocated)) {
            problems.push(say!(
                en: "allocated {allocated} is more than reserved {reserved} (allocated memory is part of reserved memory)",
                zh: "已分配 {allocated} 比已预留 {reserved} 还多（已分配的显存是已预留显存的一部分）",
                allocated = fmt(allocated),
                reserved = fmt(reserved)
            ));
        }
    }
    if let (Some(process), Some(reserved)) = (measured_process_bytes(f), d.reserved_bytes) {
        if process.saturating_add(tolerance(process) + 2 * tolerance(reserved)) < reserved {
            problems.push(say!(
                en: "this process is said to use {process} in all, less than the {reserved} PyTorch alone reserved",
                zh: "报错说本进程一共只用了 {process}，比 PyTorch 单独预留的 {reserved} 还少",
                process = fmt(process),
                reserved = fmt(reserved)
            ));
        }
    }
    if let Some(total) = s.total_bytes {
        for p in &f.processes {
            if p.in_use_bytes > total.saturating_add(tolerance(total)) {
                problems.push(say!(
                    en: "process {pid} is said to hold {held}, more than the whole card ({total}); NVML reports bogus per-process numbers on some systems (e.g. WSL)",
                    zh: "报错说进程 {pid} 占用 {held}，比整块卡（{total}）还多；在某些系统上（如 WSL）NVML 报告的单个进程的数字是错的",
                    pid = p.pid,
                    held = fmt(p.in_use_bytes),
                    total = fmt(total)
                ));
                break;
            }
        }
    }
    problems.0
}

/// " That is more than the {shortfall} that was missing."
fn covers_shortfall(shortfall: u64) -> Said {
    say!(
        en: " That is more than the {shortfall} that was missing.",
        zh: "这比缺少的 {shortfall} 还多。",
        shortfall = fmt(shortfall)
    )
}

/// What one allocator rule decided: the verdicts it adds, and whether the
/// list ends with them (no later rule reads a finding an earlier one has
/// settled).
enum Ruled {
    /// The verdicts are added and the next rule runs.
    Go(Vec<Verdict>),
    /// The verdicts are added and no later rule runs.
    Stop(Vec<Verdict>),
}

/// A rule over the finding and its diagnosis.
type AllocatorRule = fn(&Finding, &Diagnosis) -> Ruled;

/// The caching allocator's rules, in order. PyTorch holding more than the
/// card, with nothing else contradictory, is memory the driver lent from
/// system RAM and the whole story; numbers that cannot all be true are said
/// next; an impossible request (PyTorch's size guard, or more than
/// the card) is the whole story; numbers that contradict each other are not
/// reasoned on further; otherwise a binding memory limit leads the causes,
/// ranked by how much of the shortfall each explains.
const ALLOCATOR_RULES: &[AllocatorRule] = &[
    held_beyond_card,
    inconsistent_numbers,
    size_guard,
    request_beyond_card,
    stop_on_inconsistent_numbers,
    memory_limit,
    ranked_causes,
];

fn allocator_verdicts(f: &Finding, d: &Diagnosis, out: &mut Vec<Verdict>) {
    for rule in ALLOCATOR_RULES {
        match rule(f, d) {
            Ruled::Go(verdicts) => out.extend(verdicts),
            Ruled::Stop(verdicts) => {
                out.extend(verdicts);
                return;
            }
        }
    }
}

/// PyTorch holds more than the card's own memory (allocated, or reserved,
/// beyond the total and its rounding) and nothing else in the message
/// contradicts itself: the driver backed GPU memory with system RAM.
/// NVIDIA's Windows driver does so from 536.40 on when the card is full
/// ("CUDA - Sysmem Fallback Policy"), and the request failed only once that
/// ran out too.
fn held_beyond_card(f: &Finding, d: &Diagnosis) -> Ruled {
    let s = &f.sizes;
    let (Some(total), Some(requested)) = (s.total_bytes, s.requested_bytes) else {
        return Ruled::Go(Vec::new());
    };
    let held = s.allocated_bytes.max(d.reserved_bytes);
    let Some(held) = held.filter(|&h| h > total.saturating_add(tolerance(total) + tolerance(h)))
    else {
        return Ruled::Go(Vec::new());
    };
    // Only the figures that holding more than the card explains may
    // disagree.
    if !problems(f, d).iter().all(|p| p.beyond_card) {
        return Ruled::Go(Vec::new());
    }
    Ruled::Stop(vec![verdict(
        Code::SystemMemoryFallback,
        say!(
            en: "PyTorch already held more than the card has: the driver was lending it system RAM",
            zh: "PyTorch 占用的已经比整块卡还多：驱动在拿系统内存顶替显存"
        ),
        say!(
            en: "PyTorch held {held} on a {total} card. That is only possible when the driver backs GPU memory with system RAM: NVIDIA's Windows driver does so from version 536.40 on when the card is full (the \"CUDA - Sysmem Fallback Policy\" setting), over PCIe and much more slowly; unified-memory devices share RAM the same way. The {requested} request failed once that borrowed memory ran out as well. The workload needs more than this card has: make it smaller, not the allocator's settings.",
            zh: "PyTorch 在一块 {total} 的卡上占了 {held}。只有当驱动用系统内存顶替显存时才可能这样：NVIDIA 的 Windows 驱动从 536.40 版起，在显存占满后会这样做（“CUDA - Sysmem Fallback Policy”设置），走 PCIe，慢得多；统一内存的设备也是这样共用内存。借来的内存也用完后，{requested} 的申请就失败了。这个工作负载需要的比这块卡多：该缩小工作负载，而不是调分配器的设置。",
            held = fmt(held),
            total = fmt(total),
            requested = fmt(requested)
        ),
    )])
}

/// Numbers in the message that cannot all be true (`inconsistencies`).
fn inconsistent_numbers(f: &Finding, d: &Diagnosis) -> Ruled {
    let problems = inconsistencies(f, d);
    if problems.is_empty() {
        return Ruled::Go(Vec::new());
    }
    let joined = said(
        capitalise(
            &problems
                .iter()
                .map(|p| p.en.as_str())
                .collect::<Vec<_>>()
                .join("; "),
        ),
        problems
            .iter()
            .map(|p| p.zh.as_str())
            .collect::<Vec<_>>()
            .join("；"),
    );
    Ruled::Go(vec![verdict(
        Code::InconsistentNumbers,
        say!(
            en: "The numbers in this message cannot all be true",
            zh: "这条报错里的数字不可能同时成立"
        ),
        said(
            format!(
                "{}. The figures were not sampled at one instant (free memory is read after the failure and can change), or the driver virtualises memory (Windows WDDM's shared-memory fallback, WSL, vGPU, MIG). oomwhy does not reason on them further.",
                joined.en
            ),
            format!(
                "{}。这些数字不是在同一时刻采样的（空闲显存是在失败之后读取的，可能已经变了），或者驱动对显存做了虚拟化（Windows WDDM 的共享内存回退、WSL、vGPU、MIG）。oomwhy 不再基于它们往下推理。",
                joined.zh
            ),
        ),
    )])
}

/// PyTorch refuses a single allocation over an exabyte before trying it:
/// a wrong tensor shape, and nothing else to read.
fn size_guard(f: &Finding, _: &Diagnosis) -> Ruled {
    if f.era != Some(Era::SizeGuard) {
        return Ruled::Go(Vec::new());
    }
    Ruled::Stop(vec![verdict(
        Code::RequestExceedsCapacity,
        say!(
            en: "One allocation asked for more than an exabyte",
            zh: "一次分配就要了超过 1 EB"
        ),
        say!(
            en: "PyTorch refuses any single allocation over 1 EB before trying it: no GPU has that much memory. A tensor shape is wrong (an overflowed or uninitialised dimension), not the memory pressure.",
            zh: "PyTorch 对任何超过 1 EB 的单次分配都会直接拒绝，不会去尝试：没有哪块 GPU 有这么多显存。是某个张量的形状错了（维度溢出或未初始化），而不是显存紧张。"
        ),
    )])
}

/// A request larger than the card (`request_too_large`) is the whole story.
fn request_beyond_card(f: &Finding, _: &Diagnosis) -> Ruled {
    let stated_card = f
        .facts
        .get(fact::STATED_CARD_BYTES)
        .and_then(|v| v.parse::<u64>().ok());
    match request_too_large(&f.sizes, stated_card) {
        Some(v) => Ruled::Stop(vec![v]),
        None => Ruled::Go(Vec::new()),
    }
}

/// Numbers that cannot all be true are said (`inconsistent_numbers`) and
/// not reasoned on further.
fn stop_on_inconsistent_numbers(f: &Finding, d: &Diagnosis) -> Ruled {
    if inconsistencies(f, d).is_empty() {
        Ruled::Go(Vec::new())
    } else {
        Ruled::Stop(Vec::new())
    }
}

/// A per-process memory fraction limit that refused the allocation: what
/// PyTorch held, and whether the request went over the limit (or reached
/// it within the printed figures' noise while the device had room).
struct LimitBinding {
    limit: u64,
    held: u64,
    request: u64,
    need: u64,
    over: bool,
}

/// The fraction limit binds where what PyTorch holds plus the request is
/// over it by more than the printed figures' noise (`NOISE_MIN`); or at it
/// within the noise while the device itself had room, so that nothing but
/// the limit can have refused.
fn limit_binding(f: &Finding, d: &Diagnosis) -> Option<LimitBinding> {
    let s = &f.sizes;
    let (l, a) = (s.allowed_bytes?, s.requested_bytes?);
    // The fraction limit is checked against what PyTorch holds plus the request.
    let held = if f.era == Some(Era::MallocAsync) {
        s.allocated_bytes
    } else {
        d.reserved_bytes
    }?;
    let need = held.saturating_add(a);
    let over = need > l.saturating_add(NOISE_MIN);
    let at_limit = need.saturating_add(NOISE_MIN) > l
        && s.free_bytes.is_some_and(|free| free_exceeds(free, a));
    (over || at_limit).then_some(LimitBinding {
        limit: l,
        held,
        request: a,
        need,
        over,
    })
}

/// A memory limit set for this process, not the hardware, refused the
/// allocation (`limit_binding`); it leads the causes.
fn memory_limit(f: &Finding, d: &Diagnosis) -> Ruled {
    let Some(LimitBinding {
        limit: l,
        held,
        request: a,
        need,
        over,
    }) = limit_binding(f, d)
    else {
        return Ruled::Go(Vec::new());
    };
    let s = &f.sizes;
    let how = if over {
        say!(
            en: "over the limit by {excess}",
            zh: "超出上限 {excess}",
            excess = fmt(need - l)
        )
    } else {
        say!(
            en: "at the limit within the rounding of the printed figures",
            zh: "在打印数字的取整误差之内正好到了上限"
        )
    };
    let room = s
        .free_bytes
        .filter(|&free| free_exceeds(free, a))
        .map(|free| {
            say!(
                en: ", while the device still had {free} free",
                zh: "，而设备上还有 {free} 空闲",
                free = fmt(free)
            )
        })
        .unwrap_or_default();
    let figures = say!(
        en: "PyTorch may use at most {limit} (set with torch.cuda.set_per_process_memory_fraction). It already holds {held} and asked for {request} more, {need} in all: ",
        zh: "PyTorch 最多可以使用 {limit}（由 torch.cuda.set_per_process_memory_fraction 设置）。它已经持有 {held}，又申请 {request}，合计 {need}：",
        limit = fmt(l),
        held = fmt(held),
        request = fmt(a),
        need = fmt(need)
    );
    Ruled::Go(vec![verdict(
        Code::MemoryLimit,
        say!(
            en: "A memory limit set for this process refused it, not the hardware",
            zh: "是为这个进程设的显存上限拒绝了分配，不是硬件不够"
        ),
        said(
            format!("{}{}{}.", figures.en, how.en, room.en),
            format!("{}{}{}。", figures.zh, how.zh, room.zh),
        ),
    )])
}

/// The causes that hold memory, each with the bytes it accounts for,
/// ranked by how much of the shortfall they explain once all are known.
fn ranked_causes(f: &Finding, d: &Diagnosis) -> Ruled {
    let s = &f.sizes;
    let limit_binds = limit_binding(f, d).is_some();
    let total = s.total_bytes.unwrap_or(0);
    let shortfall = d.shortfall_bytes.unwrap_or(0).max(0) as u64;
    // On a small desktop card the memory outside PyTorch is what the CUDA
    // context and the display take: nobody else to find, the card is small.
    let desktop = if limit_binds {
        None
    } else {
        desktop_overhead(f, d)
    };
    let fragmentation = fragmentation_verdict(f, d, limit_binds).or_else(|| {
        // The message alone does not show it; the pasted summary may.
        let evidence = pasted::non_releasable_evidence(f)?;
        Some((
            verdict(Code::Fragmentation, fragmentation_title(), evidence),
            false,
        ))
    });
    let unused = d.reserved_unallocated_bytes.unwrap_or(0);
    let primary_fragmentation = fragmentation.as_ref().is_some_and(|(_, primary)| *primary);
    let mut sc = Scene {
        f,
        d,
        total,
        shortfall,
        limit_binds,
        desktop,
        fragmentation,
        primary_fragmentation,
        unused,
        causes: Vec::new(),
    };
    for rule in CAUSE_RULES {
        if let Some(cause) = rule(&sc) {
            sc.causes.push(cause);
        }
    }
    let mut causes = sc.causes;
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
    // Where the cache covers the request (`Reading::CacheCoversRequest`)
    // it leads whatever else holds memory: this process's own allocator
    // could have served it, so its setting is the first fix.
    let cache_leads = |v: &Verdict| primary_fragmentation && v.code == Code::Fragmentation.as_str();
    causes.sort_by_key(|(bytes, v)| {
        let explained = if shortfall > 0 {
            (*bytes).min(shortfall)
        } else {
            *bytes
        };
        std::cmp::Reverse((cache_leads(v), explained, substantial(*bytes, v), *bytes))
    });
    Ruled::Go(causes.into_iter().map(|(_, v)| v).collect())
}

/// What the cause rules read: the finding and its diagnosis, the figures
/// they share, and the causes found so far, each with the bytes it
/// accounts for.
struct Scene<'a> {
    f: &'a Finding,
    d: &'a Diagnosis,
    total: u64,
    shortfall: u64,
    limit_binds: bool,
    /// On a small desktop card, what the CUDA context and the display take.
    desktop: Option<u64>,
    /// Fragmentation, and whether it decides (`fragmentation_verdict`).
    fragmentation: Option<(Verdict, bool)>,
    primary_fragmentation: bool,
    /// Reserved memory that holds no tensor.
    unused: u64,
    causes: Vec<(u64, Verdict)>,
}

/// A rule that finds one cause, with the bytes it accounts for.
type CauseRule = fn(&Scene) -> Option<(u64, Verdict)>;

/// The cause rules, in order; equal causes keep this order when ranked.
const CAUSE_RULES: &[CauseRule] = &[
    free_beyond_request,
    memory_elsewhere,
    outside_this_process,
    leading_fragmentation,
    cuda_graph_pools,
    non_pytorch_memory,
    workload_reading,
    trailing_fragmentation,
];

/// The device reported more free memory than was requested, beyond the
/// noise (`free_exceeds`): it explains none of the shortfall, and
/// contradicts "does not fit".
fn free_beyond_request(sc: &Scene) -> Option<(u64, Verdict)> {
    let f = sc.f;
    let s = &f.sizes;
    let requested = s.requested_bytes;
    let malloc_async = f.era == Some(Era::MallocAsync);
    let limit_binds = sc.limit_binds;
    if let (Some(a), Some(free), false) = (requested, s.free_bytes, limit_binds) {
        if free_exceeds(free, a) {
            let limits = match Vendor::of(f) {
                Vendor::Nvidia => say!(
                    en: "MIG, vGPU, a container's GPU memory limit",
                    zh: "MIG、vGPU、容器的 GPU 显存上限"
                ),
                _ => say!(
                    en: "a container's or virtual machine's GPU memory limit",
                    zh: "容器或虚拟机的 GPU 显存上限"
                ),
            };
            let pool = if malloc_async {
                say!(en: ", the cudaMallocAsync pool", zh: "、cudaMallocAsync 的内存池")
            } else {
                Said::default()
            };
            // PyTorch 2.1–2.3 do not print a per-process fraction limit:
            // one possibility among others, not the likeliest.
            let unprinted = if limit_not_printed(f) {
                say!(
                    en: "a limit set with torch.cuda.set_per_process_memory_fraction, which PyTorch 2.1–2.3 do not print in this message, ",
                    zh: "用 torch.cuda.set_per_process_memory_fraction 设的上限（PyTorch 2.1–2.3 不会在这条报错里打印它）、"
                )
            } else {
                Said::default()
            };
            let figures = say!(
                en: "The device had {free} free, {excess} more than the {request} requested, yet the allocation failed. Free memory is measured after the failure, so memory may have been held and released in between (by another library in this process such as ONNX Runtime, TensorFlow or CuPy, by another process, or by PyTorch returning its cache just before measuring), or a limit outside these figures applies (",
                zh: "设备上有 {free} 空闲，比申请的 {request} 多 {excess}，分配却失败了。空闲显存是在失败之后测的，所以中间可能有显存被释放了（另一个进程，或者 PyTorch 在测量前刚归还了缓存），或者有这条报错之外的上限在起作用（",
                excess = fmt(free - a),
                free = fmt(free),
                request = fmt(a)
            );
            // It explains none of the shortfall: ranked after every cause.
            return Some((
                0,
                verdict(
                    Code::FreeExceedsRequest,
                    say!(
                        en: "The device reported more free memory than was requested",
                        zh: "设备报告的空闲显存比申请的还多"
                    ),
                    said(
                        format!("{}{}{}{}).", figures.en, unprinted.en, limits.en, pool.en),
                        format!("{}{}{}{}）。", figures.zh, unprinted.zh, limits.zh, pool.zh),
                    ),
                ),
            ));
        }
    }
    None
}

/// Memory held by other processes (listed in the message, or in a pasted
/// nvidia-smi table), or else outside PyTorch's allocator where the
/// message states no per-process figures (`others_matter`,
/// `outside_matters`).
fn memory_elsewhere(sc: &Scene) -> Option<(u64, Verdict)> {
    let (f, d) = (sc.f, sc.d);
    let s = &f.sizes;
    let total = sc.total;
    let shortfall = sc.shortfall;
    let desktop = sc.desktop;
    if let Some(others) = d.other_processes_bytes {
        let (big, decisive) = others_matter(others, total, shortfall);
        if big || decisive {
            let names: Vec<Said> = f
                .processes
                .iter()
                .filter(|p| Some(p.pid) != d.probable_self_pid)
                .take(5)
                .map(|p| {
                    let label = pasted::smi_label(f, p.pid);
                    said(
                        format!("PID {} ({}{})", p.pid, fmt(p.in_use_bytes), label.en),
                        format!("PID {}（{}{}）", p.pid, fmt(p.in_use_bytes), label.zh),
                    )
                })
                .collect();
            let names = listed(&names);
            let self_note = d
                .probable_self_pid
                .map(|own_pid| {
                    say!(
                        en: " PID {pid} is probably this process itself (inside a container PyTorch cannot tell its own host PID), so it is not counted.",
                        zh: "PID {pid} 多半就是本进程自己（在容器里 PyTorch 不知道自己在宿主机上的 PID），所以没有计入。",
                        pid = own_pid
                    )
                })
                .unwrap_or_default();
            let more = if decisive {
                covers_shortfall(shortfall)
            } else {
                Said::default()
            };
            let figures = if super::cut_in_process_list(f) {
                say!(
                    en: "Other processes probably hold {others} of the {total} card: ",
                    zh: "这块 {total} 的卡上，多半是其他进程占用了 {others}：",
                    others = fmt(others),
                    total = fmt(total)
                )
            } else {
                say!(
                    en: "Other processes hold {others} of the {total} card: ",
                    zh: "这块 {total} 的卡上，其他进程占用了 {others}：",
                    others = fmt(others),
                    total = fmt(total)
                )
            };
            // Cut before this process's own line: one of those listed may be it.
            let (title, cut) = if super::cut_in_process_list(f) {
                (
                    say!(
                        en: "Other processes probably hold a large part of this GPU",
                        zh: "多半是其他进程占用了这块 GPU 的很大一部分"
                    ),
                    say!(
                        en: " The message is cut before the part that says which listed process is this one (its own line and PyTorch's figures), so one of them may be this process itself: `nvidia-smi` tells.",
                        zh: "报错在说明哪个列出的进程是本进程的部分（本进程那一行和 PyTorch 的数字）之前就被截断了，所以其中一个可能就是本进程自己：用 `nvidia-smi` 可以确认。"
                    ),
                )
            } else {
                (
                    say!(
                        en: "Other processes hold a large part of this GPU",
                        zh: "其他进程占用了这块 GPU 的很大一部分"
                    ),
                    Said::default(),
                )
            };
            return Some((
                others,
                verdict(
                    Code::OtherProcesses,
                    title,
                    said(
                        format!(
                            "{}{}.{}{}{}",
                            figures.en, names.en, self_note.en, more.en, cut.en
                        ),
                        format!(
                            "{}{}。{}{}{}",
                            figures.zh, names.zh, self_note.zh, more.zh, cut.zh
                        ),
                    ),
                ),
            ));
        }
    } else if let Some((rows, own)) = pasted::smi_others(f, d.reserved_bytes)
        .filter(|_| measured_process_bytes(f).is_none())
        .filter(|(rows, _)| {
            let others: u64 = rows.iter().filter_map(|p| p.used_bytes).sum();
            let (big, decisive) = others_matter(others, total, shortfall);
            big || decisive
        })
    {
        let others: u64 = rows.iter().filter_map(|p| p.used_bytes).sum();
        let names = pasted::smi_names(&rows);
        let own = own
            .map(|own_pid| {
                say!(
                    en: " PID {pid} holds at least what PyTorch reserved and is taken to be this process, so it is not counted.",
                    zh: "PID {pid} 占用的至少有 PyTorch 预留的那么多，被当作本进程，所以没有计入。",
                    pid = own_pid
                )
            })
            .unwrap_or_default();
        let more = if shortfall > 0 && others >= shortfall {
            covers_shortfall(shortfall)
        } else {
            Said::default()
        };
        let figures = say!(
            en: "This message does not list processes, but the nvidia-smi output pasted with it shows other processes holding {others} on GPU {gpu}: ",
            zh: "这条报错没有列出进程，但一同贴出的 nvidia-smi 输出显示，其他进程在 GPU {gpu} 上占用了 {others}：",
            others = fmt(others),
            gpu = rows[0].gpu
        );
        let sampled = say!(
            en: " nvidia-smi was sampled at another moment than the error, so these figures show who used the GPU then, not exactly at the failure.",
            zh: "nvidia-smi 的采样时刻和报错不同，这些数字反映的是那时谁在用 GPU，并不正好是失败那一刻。"
        );
        return Some((
            others,
            verdict(
                Code::OtherProcesses,
                say!(
                    en: "Other processes hold a large part of this GPU (per the pasted nvidia-smi output)",
                    zh: "其他进程占用了这块 GPU 的很大一部分（据一同贴出的 nvidia-smi 输出）"
                ),
                said(
                    format!(
                        "{}{}.{}{}{}",
                        figures.en, names.en, own.en, sampled.en, more.en
                    ),
                    format!(
                        "{}{}。{}{}{}",
                        figures.zh, names.zh, own.zh, sampled.zh, more.zh
                    ),
                ),
            ),
        ));
    } else if measured_process_bytes(f).is_none() {
        // No per-process figures: only total − free − reserved is known.
        if let Some(outside) = d
            .outside_allocator_bytes
            .filter(|&o| o > 0)
            .map(|o| o as u64)
        {
            if outside_matters(outside, total, shortfall) && desktop.is_none() {
                let which = match pasted::smi_others(f, d.reserved_bytes) {
                    Some((rows, _)) => {
                        let names = if rows.is_empty() {
                            Said::default()
                        } else {
                            let names = pasted::smi_names(&rows);
                            said(format!(" ({})", names.en), format!("（{}）", names.zh))
                        };
                        let sum = say!(
                            en: "The nvidia-smi output pasted with it (sampled at another moment) shows other processes on this GPU holding only {sum}",
                            zh: "一同贴出的 nvidia-smi 输出（在另一时刻采样）显示，这块 GPU 上的其他进程只占了 {sum}",
                            sum = fmt(rows.iter().filter_map(|p| p.used_bytes).sum())
                        );
                        said(
                            format!(
                                "{}{}, so most of it is probably inside this process.",
                                sum.en, names.en
                            ),
                            format!("{}{}，所以大部分多半在本进程里面。", sum.zh, names.zh),
                        )
                    }
                    None => say!(
                        en: "This message does not list processes, so oomwhy cannot tell which.",
                        zh: "这条报错没有列出进程，所以 oomwhy 分不清是哪一种。"
                    ),
                };
                let figures = say!(
                    en: "Of the {total} card, {free} is free and PyTorch holds {reserved}; the other {outside} is held outside PyTorch's allocator: other processes, or other libraries and the CUDA context in this process. ",
                    zh: "这块 {total} 的卡上，空闲 {free}，PyTorch 持有 {reserved}；其余 {outside} 被 PyTorch 分配器之外的东西占着：其他进程，或者本进程里的其他库和 CUDA 上下文。",
                    total = fmt(total),
                    free = s.free_bytes.map(fmt).unwrap_or_default(),
                    reserved = d.reserved_bytes.map(fmt).unwrap_or_default(),
                    outside = fmt(outside)
                );
                return Some((
                    outside,
                    verdict(
                        Code::MemoryOutsidePytorch,
                        say!(
                            en: "Most of the missing memory is held outside PyTorch's allocator",
                            zh: "缺的显存大部分被 PyTorch 分配器之外的东西占着"
                        ),
                        said(
                            format!("{}{}", figures.en, which.en),
                            format!("{}{}", figures.zh, which.zh),
                        ),
                    ),
                ));
            }
        }
    }
    None
}

/// The message states what this process holds: the rest of the used
/// memory belongs to someone else, listed or not.
fn outside_this_process(sc: &Scene) -> Option<(u64, Verdict)> {
    let (f, d) = (sc.f, sc.d);
    let s = &f.sizes;
    let total = sc.total;
    let shortfall = sc.shortfall;
    if let Some(outside) = outside_process(f, d).filter(|&o| o > 0).map(|o| o as u64) {
        if outside_matters(outside, total, shortfall) {
            let listed = d.other_processes_bytes.filter(|&o| o > 0);
            let (listed_held, and_listed) = match listed {
                Some(o) => (
                    say!(
                        en: " and the listed processes {held}",
                        zh: "，列出的进程占用 {held}",
                        held = fmt(o)
                    ),
                    say!(en: " and the listed processes", zh: "和列出的进程"),
                ),
                None => (Said::default(), Said::default()),
            };
            let more = if shortfall > 0 && outside >= shortfall {
                covers_shortfall(shortfall)
            } else {
                Said::default()
            };
            let figures = say!(
                en: "Of the {total} card, {free} is free and this process holds {in_use}",
                zh: "这块 {total} 的卡上，空闲 {free}，本进程占用 {in_use}",
                total = fmt(total),
                free = s.free_bytes.map(fmt).unwrap_or_default(),
                in_use = measured_process_bytes(f).map(fmt).unwrap_or_default()
            );
            let outside_text = fmt(outside);
            return Some((
                outside,
                verdict(
                    Code::MemoryOutsideProcess,
                    say!(
                        en: "Memory is held outside this process",
                        zh: "显存被这个进程之外的东西占着"
                    ),
                    said(
                        format!(
                            "{}{}; the other {outside_text} is held outside this process{}: another process this container cannot see, a desktop session, or a second container or virtual machine on the same GPU.{}",
                            figures.en, listed_held.en, and_listed.en, more.en
                        ),
                        format!(
                            "{}{}；其余 {outside_text} 被本进程{}之外的东西占着：这个容器里看不到的另一个进程、桌面会话，或者同一块 GPU 上的另一个容器或虚拟机。{}",
                            figures.zh, listed_held.zh, and_listed.zh, more.zh
                        ),
                    ),
                ),
            ));
        }
    }

    None
}

/// Fragmentation that the figures show decides (`fragmentation_verdict`).
fn leading_fragmentation(sc: &Scene) -> Option<(u64, Verdict)> {
    match &sc.fragmentation {
        Some((v, true)) => Some((sc.unused, v.clone())),
        _ => None,
    }
}

/// Free memory parked in CUDA graphs' private pools (`GRAPH_POOLS_MIN`,
/// `GRAPH_POOLS_REQUEST_MIN`).
fn cuda_graph_pools(sc: &Scene) -> Option<(u64, Verdict)> {
    let f = sc.f;
    let s = &f.sizes;
    let requested = s.requested_bytes;
    if let Some(p) = s.private_pools_bytes {
        // Parked pool memory explains a failure when it is large, or could
        // have served the request and is not a crumb next to the card.
        if p >= GRAPH_POOLS_MIN
            || (requested.is_some_and(|a| p >= a) && p >= GRAPH_POOLS_REQUEST_MIN)
        {
            return Some((
                p,
                verdict(
                    Code::CudaGraphPools,
                    say!(
                        en: "CUDA graphs keep free memory parked in private pools",
                        zh: "CUDA graph 把空闲显存留在了私有池里"
                    ),
                    say!(
                        en: "{pools} of the memory PyTorch counts as allocated is free space in CUDA-graph private pools: it stays reserved for the captured graphs and cannot serve other tensors.",
                        zh: "PyTorch 算作已分配的显存里，有 {pools} 是 CUDA graph 私有池中的空闲空间：它一直为捕获的 graph 保留着，不能给别的张量用。",
                        pools = fmt(p)
                    ),
                ),
            ));
        }
    }

    None
}

/// This process's memory outside PyTorch's allocator (`NON_PYTORCH_MIN`).
fn non_pytorch_memory(sc: &Scene) -> Option<(u64, Verdict)> {
    let (f, d) = (sc.f, sc.d);
    if let Some(n) = d.non_pytorch_bytes {
        if n >= NON_PYTORCH_MIN {
            return Some((
                n,
                verdict(
                    Code::NonPytorchMemory,
                    say!(
                        en: "This process holds a lot of GPU memory outside PyTorch",
                        zh: "这个进程在 PyTorch 之外占用了大量显存"
                    ),
                    say!(
                        en: "This process uses {in_use} in all, of which PyTorch's allocator holds {reserved}; the other {non_pytorch} is the CUDA context (typically 0.3–1 GiB), cuBLAS/cuDNN workspaces, NCCL buffers, or another library in the same process (TensorFlow, JAX, CuPy, a custom extension).",
                        zh: "这个进程一共占用 {in_use}，其中 PyTorch 的分配器持有 {reserved}；其余 {non_pytorch} 是 CUDA 上下文（通常 0.3–1 GiB）、cuBLAS/cuDNN 的工作区、NCCL 缓冲区，或者同一进程里的另一个库（TensorFlow、JAX、CuPy、自定义扩展）。",
                        in_use = measured_process_bytes(f).map(fmt).unwrap_or_default(),
                        reserved = d.reserved_bytes.map(fmt).unwrap_or_default(),
                        non_pytorch = fmt(n)
                    ),
                ),
            ));
        }
    }

    None
}

/// The workload does not fit, the figures were cut off, or the numbers
/// do not tell (`FITS_CARD_DIVISOR`, `CONTEXT_TYPICAL_MAX`): read from the
/// causes found before it.
fn workload_reading(sc: &Scene) -> Option<(u64, Verdict)> {
    let (f, d) = (sc.f, sc.d);
    let s = &f.sizes;
    let requested = s.requested_bytes;
    let limit_binds = sc.limit_binds;
    let total = sc.total;
    let desktop = sc.desktop;
    let primary_fragmentation = sc.primary_fragmentation;
    let causes = &sc.causes;
    let tensors_dominate = tensors_dominate(s);
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
    // (On a small desktop card the context and display count as used.)
    let small = match (own, requested, s.total_bytes) {
        (Some(own), Some(a), Some(t)) => {
            own.saturating_add(a).saturating_add(desktop.unwrap_or(0)) < t / FITS_CARD_DIVISOR
        }
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
        let left = match requested {
            Some(a) => {
                let place = match f.device {
                    Some(index) => say!(en: " on GPU {g}", zh: "在 GPU {g} 上", g = index),
                    None => Said::default(),
                };
                said(
                    format!("{} requested{} is all that is left:", fmt(a), place.en),
                    format!("只剩下{}申请的 {}：", place.zh, fmt(a)),
                )
            }
            None => say!(en: "No figure is left:", zh: "一个数字都没剩下："),
        };
        let rest = say!(
            en: " the capacity, free memory and what PyTorch holds, which tell whether the workload does not fit, another process holds the GPU or memory is fragmented, were cut off. The likely cause cannot be read from what is left.",
            zh: "容量、空闲显存和 PyTorch 持有的量都被截掉了，而正是它们能说明是工作负载放不下、另一个进程占着 GPU，还是显存碎片化。从剩下的内容看不出可能的原因。"
        );
        return Some((
            0,
            verdict(
                Code::FiguresMissing,
                say!(
                    en: "The message was cut before its figures",
                    zh: "报错在数字之前就被截断了"
                ),
                said(
                    format!("{}{}", left.en, rest.en),
                    format!("{}{}", left.zh, rest.zh),
                ),
            ),
        ));
    } else if ((!specific && !primary_fragmentation) || (tensors_dominate && !limit_binds))
        && !contradicted
    {
        // Cut after the only process line, taken to be this process: the
        // verdict rests on that guess.
        let guessed = d
            .probable_self_pid
            .filter(|_| super::cut_in_process_list(f))
            .and_then(|pid| f.processes.iter().find(|p| p.pid == pid));
        let detail = match (s.allocated_bytes, s.total_bytes, requested) {
            _ if guessed.is_some() => {
                let p = guessed.map_or((0, 0), |p| (p.pid, p.in_use_bytes));
                say!(
                    en: "PID {pid}, the only process listed, holds {held}, and the message is cut before the part that says whether it is this process. It probably is (in a container PyTorch lists its own process under its host PID): then the workload needs more memory than this GPU has at this point. If PID {pid} is another program, that program holds the GPU: `nvidia-smi` tells.",
                    zh: "唯一列出的进程 PID {pid} 占用了 {held}，而报错在说明它是不是本进程的部分之前就被截断了。多半是本进程（在容器里 PyTorch 以宿主机上的 PID 列出自己的进程）：那样的话，此时工作负载需要的显存比这块 GPU 有的多。如果 PID {pid} 是别的程序，就是它占着 GPU：用 `nvidia-smi` 可以确认。",
                    pid = p.0,
                    held = fmt(p.1)
                )
            }
            _ if super::cut_in_process_list(f) => say!(
                en: "The message is cut after its process lines, before this process's own line and PyTorch's figures, which say what this process holds: the workload probably needs more memory than this GPU has at this point, but the missing part decides. `nvidia-smi` shows who holds the rest.",
                zh: "报错在进程行之后、本进程那一行和 PyTorch 的数字之前就被截断了，而正是它们说明本进程占用了多少：此时工作负载多半需要比这块 GPU 更多的显存，但要由缺失的部分来定。用 `nvidia-smi` 可以看到其余显存被谁占着。"
            ),
            (Some(x), Some(t), Some(a)) if desktop.is_some_and(|o| o <= CONTEXT_TYPICAL_MAX) => {
                say!(
                    en: "Live tensors take {allocated} of the {total} card and the next allocation needed {request} more. The other {outside} outside PyTorch is about what a CUDA context (typically 0.3–0.6 GiB) and the display take, probably not another job: the card is too small for this workload as it is set up.",
                    zh: "存活张量占了这块 {total} 的卡上的 {allocated}，下一次分配还要 {request}。PyTorch 之外的其余 {outside} 大约就是 CUDA 上下文（通常 0.3–0.6 GiB）和显示占用的量，多半不是别的任务：按现在的设置，这块卡放不下这个工作负载。",
                    allocated = fmt(x),
                    total = fmt(t),
                    request = fmt(a),
                    outside = fmt(desktop.unwrap_or(0))
                )
            }
            // More than a context takes: on a card this small the display
            // may explain the rest, but another program may too.
            (Some(x), Some(t), Some(a)) if desktop.is_some() => say!(
                en: "Live tensors take {allocated} of the {total} card and the next allocation needed {request} more. The other {outside} outside PyTorch ({share}% of the card) is more than a CUDA context alone takes (typically 0.3–0.6 GiB): the display, a browser or another program may hold part of it ({smi} shows who). Even without them, the card is small for this workload as it is set up.",
                zh: "存活张量占了这块 {total} 的卡上的 {allocated}，下一次分配还要 {request}。PyTorch 之外的其余 {outside}（占整卡的 {share}%）比单个 CUDA 上下文（通常 0.3–0.6 GiB）多：其中一部分可能被显示、浏览器或别的程序占着（用 {smi} 可以看到是谁）。即便没有它们，按现在的设置，这块卡对这个工作负载来说也偏小。",
                allocated = fmt(x),
                total = fmt(t),
                request = fmt(a),
                outside = fmt(desktop.unwrap_or(0)),
                share = percent(desktop.unwrap_or(0), t),
                smi = Vendor::of(f).smi()
            ),
            (Some(x), Some(t), Some(a)) => say!(
                en: "Live tensors take {allocated} of the {total} card and the next allocation needed {request} more. The workload needs more memory than this GPU has at this point.",
                zh: "存活张量占了这块 {total} 的卡上的 {allocated}，下一次分配还要 {request}。此时工作负载需要的显存比这块 GPU 有的多。",
                allocated = fmt(x),
                total = fmt(t),
                request = fmt(a)
            ),
            _ => say!(
                en: "No other cause is visible in the numbers: the workload needs more memory than this GPU has at this point.",
                zh: "数字里看不出别的原因：此时工作负载需要的显存比这块 GPU 有的多。"
            ),
        };
        // Free memory above the request, but within the noise: said first,
        // so that "does not fit" does not contradict the figure beside it.
        let detail = match (requested, s.free_bytes) {
            (Some(a), Some(free)) if free > a && !free_exceeds(free, a) => say!(
                en: "Its {free} free is only {excess} over the {request} request, within what a full device cannot hand out in one allocation; by the numbers it was full. A full device keeps tens of MiB for the driver's own reserve and page tables, maps memory in 2 MiB pages, and prints its figures rounded.",
                zh: "它报告的空闲 {free} 只比申请的 {request} 多 {excess}，在一块满了的设备一次分配给不出来的范围之内；按这些数字，设备已经满了。满了的设备要给驱动自己的预留和页表留出几十 MiB，显存按 2 MiB 页映射，打印的数字也是四舍五入的。",
                excess = fmt(free - a),
                free = fmt(free),
                request = fmt(a)
            )
            .then(detail),
            _ => detail,
        };
        // While the model loads no batch exists yet: what fills the card
        // is the weights themselves.
        let detail = if super::setting::is_loading(f) {
            detail.then(say!(
                en: "It failed while the model was being loaded (phase: model load), before any batch: the weights alone fill the card.",
                zh: "它是在加载模型时失败的（阶段：模型加载），还没有任何 batch：光是权重就占满了这块卡。"
            ))
        } else if Runtime::of(f) == Some(Runtime::Vllm) && s.allocated_bytes.is_some() {
            // vLLM's KV cache is PyTorch tensors reserved at start-up: the
            // live tensors are mostly that cache, not a batch.
            detail.then(say!(
                en: "In vLLM most of these live tensors are its own reservation: at start-up it takes gpu_memory_utilization (0.9 by default) of the GPU's memory for the weights and a preallocated KV cache, held as PyTorch tensors. What did not fit is a temporary allocation (activations, sampling) in what is left beside that reservation, not a leak: lower gpu_memory_utilization to leave it more room, or lower max_num_seqs and max_model_len so that each step needs less.",
                zh: "在 vLLM 里，这些存活张量大多是它自己预留的：启动时它按 gpu_memory_utilization（默认 0.9）拿走 GPU 的显存，放权重和预先分配的 KV cache，全都以 PyTorch 张量的形式占着。放不下的是这份预留旁边剩下的空间里的一次临时分配（激活值、采样），不是泄漏：调低 gpu_memory_utilization 给它留出更多空间，或者调低 max_num_seqs 和 max_model_len，让每一步需要的更少。"
            ))
        } else {
            detail
        };
        return Some((
            s.allocated_bytes.unwrap_or(0),
            verdict(
                Code::CapacityExhausted,
                if super::cut_in_process_list(f) {
                    say!(
                        en: "The workload probably does not fit in GPU memory",
                        zh: "工作负载多半放不进显存"
                    )
                } else if desktop.is_some() {
                    say!(
                        en: "The card is too small for this workload",
                        zh: "这块卡对这个工作负载来说太小了"
                    )
                } else if f.backend.as_deref() == Some("npu") {
                    say!(
                        en: "The workload does not fit in the NPU's memory",
                        zh: "工作负载放不进 NPU 的显存"
                    )
                } else {
                    say!(
                        en: "The workload does not fit in GPU memory",
                        zh: "工作负载放不进显存"
                    )
                },
                detail,
            ),
        ));
    } else if !specific && !primary_fragmentation && small {
        let (own, a, t) = (own.unwrap_or(0), requested.unwrap_or(0), total);
        let free = s
            .free_bytes
            .map(|free| {
                say!(
                    en: "{free} was free and ",
                    zh: "空闲 {free}，而且",
                    free = fmt(free)
                )
            })
            .unwrap_or_default();
        let figures = say!(
            en: "PyTorch holds {own} and asked for {request} more, together {sum} of the {total} card, less than half of it; ",
            zh: "PyTorch 持有 {own}，又申请 {request}，合计 {sum}，还不到这块 {total} 的卡的一半；",
            sum = fmt(own.saturating_add(a)),
            own = fmt(own),
            request = fmt(a),
            total = fmt(t)
        );
        let rest = say!(
            en: "the message shows nothing else large enough to fill the rest. So it is not that the workload cannot fit: the memory was probably held by something the message does not show (another process, a desktop session, another container) or released between the failure and the measurement.",
            zh: "报错里也看不到别的大到能占满其余空间的东西。所以不是工作负载放不下：显存多半被报错没显示的东西占着（另一个进程、桌面会话、另一个容器），或者在失败和读数之间被释放了。"
        );
        return Some((
            0,
            verdict(
                Code::NumbersInconclusive,
                say!(
                    en: "The numbers do not show why it failed",
                    zh: "从这些数字看不出为什么失败"
                ),
                said(
                    format!("{}{}{}", figures.en, free.en, rest.en),
                    format!("{}{}{}", figures.zh, free.zh, rest.zh),
                ),
            ),
        ));
    }
    None
}

/// Fragmentation that only may contribute: after every cause.
fn trailing_fragmentation(sc: &Scene) -> Option<(u64, Verdict)> {
    match &sc.fragmentation {
        Some((v, false)) => Some((0, v.clone())),
        _ => None,
    }
}

/// The message form omits a per-process fraction limit that may be set:
/// PyTorch 2.1's `capacty` form and the 2.2–2.3 forms.
fn limit_not_printed(f: &Finding) -> bool {
    matches!(f.era, Some(Era::Capacty)) || f.version_hint.as_deref() == Some("PyTorch 2.2–2.3")
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

/// The memory outside PyTorch's allocator when it is no more than the CUDA
/// context and the display take on a small desktop card: the message names
/// no other process (no per-process figures, no pasted nvidia-smi), the
/// card has at most [`SMALL_CARD_MAX`] and the rest is at most
/// [`DESKTOP_OVERHEAD_MAX`].
fn desktop_overhead(f: &Finding, d: &Diagnosis) -> Option<u64> {
    let s = &f.sizes;
    if measured_process_bytes(f).is_some()
        || !f.processes.is_empty()
        || pasted::smi_others(f, d.reserved_bytes).is_some()
    {
        return None;
    }
    let outside = u64::try_from(d.outside_allocator_bytes?).ok()?;
    let total = s.total_bytes?;
    (total <= SMALL_CARD_MAX && outside > 0 && outside <= DESKTOP_OVERHEAD_MAX).then_some(outside)
}

/// Whether memory outside PyTorch or this process is large enough to blame.
fn outside_matters(outside: u64, total: u64, shortfall: u64) -> bool {
    outside >= OUTSIDE_MIN
        && outside >= total / OUTSIDE_CARD_DIVISOR
        && (shortfall == 0 || outside >= shortfall)
}

/// What this process holds on the GPU, as the message states it, unless
/// it reads 0 bytes while PyTorch holds memory in the same process: that
/// figure was not measured (the driver's per-process query did not find
/// this process), and is no reading at all.
pub(super) fn measured_process_bytes(f: &Finding) -> Option<u64> {
    let s = &f.sizes;
    let process = s.process_in_use_bytes?;
    let pytorch_holds = s
        .allocated_bytes
        .or(s.reserved_bytes)
        .is_some_and(|held| held > 0);
    (process > 0 || !pytorch_holds).then_some(process)
}

/// total − free − this process − the listed other processes, when the
/// message states what this process holds.
pub(super) fn outside_process(f: &Finding, d: &Diagnosis) -> Option<i64> {
    let s = &f.sizes;
    let own = measured_process_bytes(f)?;
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

/// One allocation larger than the card, the limit, or any GPU made. When
/// the message does not give the card's size, the size the text around it
/// states (`stated_card`, "RX6800 with 16gb") stands in.
fn request_too_large(s: &crate::record::Sizes, stated_card: Option<u64>) -> Option<Verdict> {
    let a = s.requested_bytes?;
    let stated = stated_card.filter(|_| s.total_bytes.is_none());
    let total = s.total_bytes.or(stated);
    let limit = s.allowed_bytes.filter(|&l| total.is_none_or(|t| l < t));
    let cap = match (total, limit) {
        (Some(t), Some(l)) => Some(l.min(t)),
        (t, l) => t.or(l),
    };
    let what = match (cap, limit) {
        (Some(cap), Some(l)) if l == cap => say!(
            en: "the {cap} this process is allowed",
            zh: "这个进程允许使用的 {cap}",
            cap = fmt(cap)
        ),
        (Some(cap), _) if stated == Some(cap) => say!(
            en: "the whole {cap} card the text states",
            zh: "文字里说的整块 {cap} 的卡",
            cap = fmt(cap)
        ),
        (Some(cap), _) => say!(
            en: "the whole card ({cap})",
            zh: "整块卡（{cap}）",
            cap = fmt(cap)
        ),
        (None, _) => match BeyondGpus::of(a) {
            Some(beyond) => beyond.what(),
            None => return None,
        },
    };
    let too_large = match cap {
        Some(cap) => a > cap,
        // The what above already returned for a size some GPU holds.
        None => true,
    };
    // A stated card that one tensor overflows: at image or sequence sizes
    // near the card, that tensor (attention over a large image) is often
    // as intended, and must get smaller.
    let cause = if stated.is_some() {
        say!(
            en: "the one tensor must get smaller (a lower resolution or batch, attention computed in slices or tiles, memory-efficient attention), unless a shape is wrong.",
            zh: "只能让这一个张量变小（降低分辨率或 batch、分片或分块计算注意力、用省显存的注意力实现），除非是某个形状写错了。"
        )
    } else {
        say!(
            en: "a tensor is far larger than intended (a shape bug, an attention matrix over a very long sequence, a whole dataset moved to the GPU).",
            zh: "某个张量比预想的大得多（形状有 bug、对很长的序列算注意力矩阵、把整个数据集搬到了 GPU 上）。"
        )
    };
    too_large.then(|| {
        let request = fmt(a);
        verdict(
            Code::RequestExceedsCapacity,
            say!(
                en: "One allocation is larger than the GPU can ever provide",
                zh: "单次分配就超过了这块 GPU 最多能提供的显存"
            ),
            said(
                format!(
                    "PyTorch tried to allocate {request} in one piece, more than {}. No setting or cache clean-up can satisfy this: {}",
                    what.en, cause.en
                ),
                format!(
                    "PyTorch 试图一次分配 {request}，比{}还多。任何设置或缓存清理都满足不了它：{}",
                    what.zh, cause.zh
                ),
            ),
        )
    })
}

/// The fragmentation verdict's title.
fn fragmentation_title() -> Said {
    say!(
        en: "Memory is fragmented: PyTorch holds free space it cannot use for this request",
        zh: "显存碎片化：PyTorch 手里的空闲空间用不上这次申请"
    )
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
    // Main when the one memory model says the cache covers the request
    // (`Reading::CacheCoversRequest`): it would fit, by the numbers.
    let covers = matches!(Reading::of(f, true), Reading::CacheCoversRequest { .. });
    let (detail, primary) = match s.requested_bytes {
        Some(a) if u >= FRAGMENTATION_MIN && free_exceeds(u, a) => (
            say!(
                en: "PyTorch holds {unused} that no tensor uses (reserved {reserved}, allocated {allocated}), more than the {request} it needed, yet it could not use it: before raising, PyTorch already returned every cached segment it could release, so what remains is free space inside partly used segments, in pieces too small for one {request} block. That is fragmentation.",
                zh: "PyTorch 持有 {unused} 没有任何张量在用（已预留 {reserved}，已分配 {allocated}），比它需要的 {request} 还多，却用不上：报错之前，PyTorch 已经归还了所有能释放的缓存段，剩下的是部分占用的段里的空闲空间，切成的小块都放不下一整块 {request}。这就是碎片化。",
                unused = fmt(u),
                reserved = &reserved_text,
                allocated = s.allocated_bytes.map(fmt).unwrap_or_else(|| "?".into()),
                request = fmt(a)
            ),
            covers,
        ),
        Some(a) if u >= FRAGMENTATION_MIN && free_exceeds(u.saturating_add(free), a) => (
            say!(
                en: "PyTorch's {unused} unused plus the device's {free} free make {sum}, enough for the {request} request, but neither piece alone is: the unused part is memory PyTorch reserved that no tensor uses, free space inside partly used segments. The memory exists, just not in one block.",
                zh: "PyTorch 持有但没有任何张量在用的 {unused}，加上设备上空闲的 {free}，合计 {sum}，够这次 {request} 的申请，但单独哪一部分都不够：没在用的那部分是部分占用的段里的空闲空间。显存是有的，只是不在一整块里。",
                sum = fmt(u.saturating_add(free)),
                unused = fmt(u),
                free = fmt(free),
                request = fmt(a)
            ),
            covers,
        ),
        None if u >= FRAGMENTATION_NO_REQUEST_MIN
            && reserved.is_some_and(|r| u >= r / FRAGMENTATION_NO_REQUEST_DIVISOR) =>
        {
            (
                say!(
                    en: "PyTorch holds {unused} that no tensor uses, {share}% of the {reserved} it reserved: free space inside partly used segments that larger requests cannot use.",
                    zh: "PyTorch 持有 {unused} 没有任何张量在用，占它预留的 {reserved} 的 {share}%：是部分占用的段里的空闲空间，更大的申请用不上。",
                    unused = fmt(u),
                    share = reserved.map_or(0, |r| percent(u, r)),
                    reserved = &reserved_text
                ),
                true,
            )
        }
        _ => return None,
    };
    let detail = match pasted::non_releasable_evidence(f) {
        Some(evidence) => detail.then(evidence),
        None => detail,
    };
    // With the device's free memory above the request, fragmentation of
    // the reserve explains the failure only under the limit.
    let detail = match (limit_binds, s.requested_bytes, s.free_bytes) {
        (true, Some(a), Some(free)) if free_exceeds(free, a) => detail.then(say!(
            en: "This matters only because of the limit above: without it PyTorch would have taken the {request} from the device's {free} free.",
            zh: "这只是因为上面那个上限才有影响：没有上限的话，PyTorch 会直接从设备空闲的 {free} 里拿这 {request}。",
            request = fmt(a),
            free = fmt(free)
        )),
        // A limit the message form does not print may be what kept the
        // free memory from PyTorch: only then does the reserve matter.
        (false, Some(a), Some(free)) if free_exceeds(free, a) && limit_not_printed(f) => {
            detail.then(say!(
                en: "This matters only if a limit (see above) kept PyTorch from the device's {free} free: without one, PyTorch would have taken the {request} from it.",
                zh: "只有在某个上限（见上文）不让 PyTorch 使用设备上空闲的 {free} 时，这才有影响：没有上限的话，PyTorch 会直接从中拿这 {request}。",
                request = fmt(a),
                free = fmt(free)
            ))
        }
        _ => detail,
    };
    Some((
        verdict(Code::Fragmentation, fragmentation_title(), detail),
        primary,
    ))
}

/// The reserved-vs-allocated gap spelled out with its numbers.
pub fn reserved_gap(f: &Finding) -> Option<Said> {
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
            say!(
                en: " ({pools} of \"allocated\" is free space in CUDA-graph pools)",
                zh: "（“已分配”里有 {pools} 是 CUDA graph 池中的空闲空间）",
                pools = fmt(p)
            )
        })
        .unwrap_or_default();
    let figures = say!(
        en: "{reserved} reserved − {allocated} allocated = {gap} ({share}% of reserved) is held by PyTorch but not used by any tensor",
        zh: "已预留 {reserved} − 已分配 {allocated} = {gap}（占已预留的 {share}%）由 PyTorch 持有，但没有任何张量在用",
        share = percent(gap, reserved),
        reserved = fmt(reserved),
        allocated = fmt(allocated),
        gap = fmt(gap)
    );
    let why = say!(
        en: ". PyTorch keeps freed blocks cached for reuse; before raising this error it already released every cached segment it could, so this remainder sits in partly used segments and only fits requests that are small enough.",
        zh: "。PyTorch 会把释放的块缓存起来复用；报这个错之前，它已经归还了所有能归还的缓存段，剩下的这部分散落在部分占用的段里，只放得下足够小的申请。"
    );
    Some(said(
        format!("{}{}{}", figures.en, pools.en, why.en),
        format!("{}{}{}", figures.zh, pools.zh, why.zh),
    ))
}

/// Which allocator options this era's PyTorch has, and under which variable.
struct AllocConf {
    env_var: String,
    /// `Some(caveat)` when expandable_segments exists (caveat may be empty).
    expandable_segments: Option<Said>,
    /// `Some(caveat)` when max_split_size_mb exists (caveat may be empty).
    max_split: Option<Said>,
    /// The release to upgrade to when no release printing this form has
    /// max_split_size_mb.
    max_split_upgrade: Option<String>,
    note: Option<Said>,
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
            note = Some(say!(
                en: "PyTorch 2.9–2.10 print PYTORCH_ALLOC_CONF, but 2.9.1 ignores expandable_segments set that way for CUDA (pytorch/pytorch#183387); PYTORCH_CUDA_ALLOC_CONF still works there (with a deprecation warning).",
                zh: "PyTorch 2.9–2.10 打印的是 PYTORCH_ALLOC_CONF，但 2.9.1 对 CUDA 会忽略这样设置的 expandable_segments（pytorch/pytorch#183387）；PYTORCH_CUDA_ALLOC_CONF 在那里仍然有效（会给出弃用警告）。"
            ));
            "PYTORCH_CUDA_ALLOC_CONF".to_string()
        }
        (Some(var), _) => var.to_string(),
        (None, "hip") => "PYTORCH_HIP_ALLOC_CONF".to_string(),
        (None, _) => "PYTORCH_CUDA_ALLOC_CONF".to_string(),
    };
    // An option newer than every release printing this form is dropped;
    // one newer than some of them says from which release.
    let gate = |since| match available(f, since) {
        Availability::Yes => Some(Said::default()),
        Availability::From(release) => {
            Some(say!(en: " ({name})", zh: "（{name}）", name = release))
        }
        Availability::Upgrade(_) => None,
    };
    let expandable_segments = gate(since::EXPANDABLE_SEGMENTS);
    let max_split = gate(since::MAX_SPLIT);
    let max_split_upgrade = match available(f, since::MAX_SPLIT) {
        Availability::Upgrade(release) => Some(release),
        _ => None,
    };
    AllocConf {
        env_var,
        expandable_segments,
        max_split,
        max_split_upgrade,
        note,
    }
}

fn allocator_fixes(f: &Finding, d: &Diagnosis, has: &dyn Fn(Code) -> bool, out: &mut Vec<Fix>) {
    if has(Code::RequestExceedsCapacity) {
        out.push(fix(
            &FIND_OVERSIZED_TENSOR,
            say!(
                en: "Print the shapes at the failing line (the last frame of your own code in the traceback). Look for a wrong reshape/broadcast, an attention matrix over a very long sequence (use torch.nn.functional.scaled_dot_product_attention or chunk the sequence), or a whole dataset moved to the GPU at once. Allocator settings cannot help here.",
                zh: "在出错的那一行（调用栈里你自己代码的最后一帧）打印各个张量的形状。找错误的 reshape/广播、对很长的序列算的注意力矩阵（改用 torch.nn.functional.scaled_dot_product_attention，或把序列分块），或者一次搬到 GPU 上的整个数据集。分配器的设置帮不了这种情况。"
            ),
        ));
        return;
    }
    let vendor = Vendor::of(f);
    // Fixes follow the verdicts' order of importance.
    for v in &d.verdicts {
        match v.code.as_str() {
            "memory_limit" => {
                let limits = match vendor {
                    Vendor::Nvidia | Vendor::Unknown => say!(
                        en: "MIG/vGPU/container GPU limits",
                        zh: "MIG/vGPU/容器的 GPU 上限"
                    ),
                    _ => say!(
                        en: "the container's or scheduler's GPU limits",
                        zh: "容器或调度器的 GPU 上限"
                    ),
                };
                out.push(fix(
                    &RAISE_MEMORY_FRACTION,
                    said(
                        format!(
                            "Search your code and framework config for torch.cuda.set_per_process_memory_fraction(...) (some launchers and notebooks set it) and raise the fraction; check {} if none is set.",
                            limits.en
                        ),
                        format!(
                            "在你的代码和框架配置里找 torch.cuda.set_per_process_memory_fraction(...)（有些启动器和 notebook 会设它），把比例调高；如果没有设，检查这些限制：{}。",
                            limits.zh
                        ),
                    ),
                ))
            }
            "free_exceeds_request" => {
                if limit_not_printed(f) {
                    out.push(fix(
                        &LIMIT_OR_OTHER_LIBRARY,
                        say!(
                            en: "Two things refuse memory that shows as free without this message printing them. Search your code and its launchers for torch.cuda.set_per_process_memory_fraction(...) (PyTorch 2.1–2.3 do not print that limit here) and raise or remove it. Check whether another GPU library runs in this process (onnxruntime-gpu, TensorFlow, CuPy: in the imports or `pip list`): its allocations come and go outside PyTorch's figures; compare torch.cuda.memory_reserved() with this process's memory in {smi}.",
                            zh: "有两种东西会拒绝看起来空闲的显存，而这条报错都不会打印出来。在你的代码和启动脚本里找 torch.cuda.set_per_process_memory_fraction(...)（PyTorch 2.1–2.3 不会在这里打印这个上限），把它调高或去掉。再检查这个进程里是不是还跑着别的 GPU 库（onnxruntime-gpu、TensorFlow、CuPy：看 import 或 `pip list`）：它的分配在 PyTorch 的数字之外来来去去；把 torch.cuda.memory_reserved() 和 {smi} 里这个进程的显存对比一下。",
                            smi = vendor.smi()
                        ),
                    ));
                }
                if f.era == Some(Era::MallocAsync) {
                    // The cudaMallocAsync pool can refuse with free memory left.
                    fragmentation_fixes(f, out);
                }
                let how = match vendor {
                    Vendor::Nvidia | Vendor::Unknown => say!(
                        en: "Watch `nvidia-smi -l 1` while it runs: other jobs starting and stopping, or a MIG/vGPU/container limit below the card's size, explain a failure with memory apparently free. Re-run on an idle GPU (CUDA_VISIBLE_DEVICES=N) to compare.",
                        zh: "运行时用 `nvidia-smi -l 1` 观察：其他任务的启停，或者低于整卡容量的 MIG/vGPU/容器上限，都能解释“看起来有空闲显存却失败”。在一块空闲的 GPU 上（CUDA_VISIBLE_DEVICES=N）重跑对比。"
                    ),
                    _ => say!(
                        en: "Watch {smi} while it runs: other jobs starting and stopping, or a container or virtual machine limit below the card's size, explain a failure with memory apparently free. Re-run on an idle GPU ({visible}) to compare.",
                        zh: "运行时用 {smi} 观察：其他任务的启停，或者低于整卡容量的容器或虚拟机上限，都能解释“看起来有空闲显存却失败”。在一块空闲的 GPU 上（{visible}）重跑对比。",
                        smi = vendor.smi(),
                        visible = vendor.visible_devices()
                    ),
                };
                out.push(fix(&WATCH_GPU_AROUND_CRASH, how));
            }
            "other_processes" => other_process_fix(f, d, out),
            "memory_outside_pytorch" => {
                out.push(fix(
                    &FIND_OTHER_GPU_HOLDERS,
                    say!(
                        en: "Run {smi} to see other processes and their memory; stop stale jobs and old notebook kernels, or pick an idle GPU with {visible}.",
                        zh: "运行 {smi} 查看其他进程和它们占用的显存；结束残留的任务和旧的 notebook 内核，或用 {visible} 选一块空闲的 GPU。",
                        smi = vendor.smi(),
                        visible = vendor.visible_devices()
                    ),
                ));
                out.push(non_pytorch_fix(f));
            }
            "memory_outside_process" => out.push(fix(
                &FIND_MEMORY_OUTSIDE_PROCESS,
                say!(
                    en: "Run {smi} on the host, not inside the container: the memory this process does not hold belongs to another process, a desktop session (a display attached to this GPU), or another container or virtual machine sharing the GPU. Stop it, move the display to another GPU, or pick an idle GPU with {visible}.",
                    zh: "在宿主机上（不是在容器里）运行 {smi}：本进程没占的那部分显存属于另一个进程、桌面会话（这块 GPU 接着显示器），或者共用这块 GPU 的另一个容器或虚拟机。结束它、把显示器换到另一块 GPU 上，或者用 {visible} 选一块空闲的 GPU。",
                    smi = vendor.smi(),
                    visible = vendor.visible_devices()
                ),
            )),
            "fragmentation" => {
                fragmentation_fixes(f, out);
                // Fragmentation is what failed, but with live tensors filling
                // most of the card the workload is tight too: its fixes come
                // next, in case the allocator's cannot make room. So they do
                // where this release has no allocator setting against it.
                if tensors_dominate(&f.sizes) || alloc_conf(f).max_split_upgrade.is_some() {
                    phase_fixes(f, has, out);
                    workload_fixes(f, out);
                }
            }
            "cuda_graph_pools" => out.push(fix(
                &FEWER_CUDA_GRAPHS,
                say!(
                    en: "Each captured graph keeps its pool. torch.compile(mode=\"reduce-overhead\") captures graphs per input shape: use mode=\"default\" or fewer distinct shapes; in vLLM lower the captured batch sizes or set enforce_eager=True.",
                    zh: "每个捕获的 graph 都留着自己的池。torch.compile(mode=\"reduce-overhead\") 会按输入形状分别捕获 graph：改用 mode=\"default\" 或减少不同形状的数量；vLLM 里调小捕获的 batch size，或设 enforce_eager=True。"
                ),
            )),
            "non_pytorch_memory" => out.push(non_pytorch_fix(f)),
            "numbers_inconclusive" if f.era == Some(Era::MallocAsync) => {
                // The cudaMallocAsync pool is what the numbers cannot see into.
                fragmentation_fixes(f, out);
                workload_fixes(f, out);
            }
            // PyTorch ≈2.2–2.3 cut the sentence form right after `GPU` in
            // the message itself: no log holds more of it, so the figures
            // must be printed by the program.
            "figures_missing" if cut_by_pytorch(f) => {
                // A front end or engine that names itself has its own fix,
                // which needs no edit of its code: it leads.
                if let Some(runtime) = Runtime::of(f) {
                    out.push(super::common::runtime_fix(runtime));
                }
                out.push(fix(
                    &PRINT_MEMORY_STATE,
                    say!(
                        en: "This PyTorch release cut its own message, so no log holds the rest. Catch torch.cuda.OutOfMemoryError around the failing call and print torch.cuda.mem_get_info() and torch.cuda.memory_summary() there, then run oomwhy on that output: the figures decide which fix applies.",
                        zh: "这个 PyTorch 版本自己截断了报错，日志里不会有后半段。在出错的调用外面捕获 torch.cuda.OutOfMemoryError，在那里打印 torch.cuda.mem_get_info() 和 torch.cuda.memory_summary()，再用 oomwhy 看这段输出：这些数字决定该用哪种办法。"
                    ),
                ));
                phase_fixes(f, has, out);
                workload_fixes(f, out);
            }
            "figures_missing" => {
                out.push(fix(
                    &FIND_WHOLE_MESSAGE,
                    say!(
                        en: "Read the full line in the log file or the terminal's scrollback, not a notification or a shortened copy, and run oomwhy on that: its figures (capacity, free, allocated, reserved) decide which fix applies.",
                        zh: "在日志文件或终端的回滚记录里读完整的那一行，不要用通知或被截短的副本，再用 oomwhy 看它：其中的数字（容量、空闲、已分配、已预留）决定该用哪种办法。"
                    ),
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
    let pids: Vec<Said> = f
        .processes
        .iter()
        .filter(|p| Some(p.pid) != d.probable_self_pid)
        .map(|p| match super::pasted::smi_process(f, p.pid) {
            Some(row) => say!(
                en: "{pid} = {name} on GPU {gpu}",
                zh: "{pid} = GPU {gpu} 上的 {name}",
                pid = p.pid,
                name = &row.name,
                gpu = row.gpu
            ),
            None => say!(en: "{pid}", zh: "{pid}", pid = p.pid),
        })
        .take(5)
        .collect();
    let pids = if pids.is_empty() {
        Said::default()
    } else {
        let pids = listed(&pids);
        said(
            format!(" (PIDs {})", pids.en),
            format!("（PID {}）", pids.zh),
        )
    };
    let vendor = Vendor::of(f);
    let held = match f.device {
        Some(index) => say!(en: "GPU {d}", zh: "GPU {d}", d = index),
        None => say!(en: "GPU memory", zh: "GPU 显存"),
    };
    let run = say!(en: "Run {smi} to see who holds ", zh: "运行 {smi}，看看是谁占着 ", smi = vendor.smi());
    let rest = say!(
        en: "; stop stale jobs, old notebook kernels and zombie DataLoader workers, or pick an idle GPU with {visible}.",
        zh: "；结束残留的任务、旧的 notebook 内核和僵尸 DataLoader worker，或用 {visible} 选一块空闲的 GPU。",
        visible = vendor.visible_devices()
    );
    out.push(fix(
        &FREE_GPU_FROM_OTHER_PROCESSES,
        said(
            format!("{}{}{}{}", run.en, held.en, pids.en, rest.en),
            format!("{}{}{}{}", run.zh, held.zh, pids.zh, rest.zh),
        ),
    ));
}

/// GPU libraries besides PyTorch that the message or its traceback shows.
fn other_gpu_libraries(f: &Finding) -> bool {
    let mut places = f
        .traceback_frames()
        .map(|fr| fr.file.replace('\\', "/").to_ascii_lowercase());
    let text = f.text.to_ascii_lowercase();
    let named = |s: &str| {
        ["tensorflow", "keras", "jax", "cupy"]
            .iter()
            .any(|l| s.contains(l))
    };
    named(&text) || places.any(|p| named(&p))
}

/// Memory this process holds outside PyTorch's allocator: the libraries
/// that preallocate are named only where the message or traceback shows
/// one of them; otherwise how to find what holds it.
fn non_pytorch_fix(f: &Finding) -> Fix {
    if !other_gpu_libraries(f) {
        return fix(
            &FIND_NON_PYTORCH_MEMORY,
            say!(
                en: "Nothing in this message shows another GPU library. Compare this process's memory in {smi} with torch.cuda.memory_reserved(): the difference is the GPU runtime's context (0.3–1 GiB), the BLAS and convolution libraries' workspaces, collective-communication buffers (NCCL_BUFFSIZE, one set per communicator) and every extension or library that allocates device memory itself (custom kernels, offloading or compilation libraries). Print both after each setup step to see which one grows.",
                zh: "这条报错里看不出有别的 GPU 库。把 {smi} 里这个进程的显存和 torch.cuda.memory_reserved() 对比：差值是 GPU 运行时的上下文（0.3–1 GiB）、BLAS 和卷积库的工作区、集合通信的缓冲区（NCCL_BUFFSIZE，每个通信器一份），以及所有自己分配显存的扩展或库（自定义 kernel、卸载或编译相关的库）。在每个初始化步骤之后都打印这两个数，看是哪一部分在增长。",
                smi = Vendor::of(f).smi()
            ),
        );
    }
    fix(
        &STOP_OTHER_LIBRARIES,
        say!(
            en: "TensorFlow and JAX preallocate most of the GPU: TF_FORCE_GPU_ALLOW_GROWTH=true, XLA_PYTHON_CLIENT_PREALLOCATE=false. Release CuPy's pool with cupy.get_default_memory_pool().free_all_blocks(). NCCL buffers grow with NCCL_BUFFSIZE and the number of communicators.",
            zh: "TensorFlow 和 JAX 会预先占用大部分显存：设 TF_FORCE_GPU_ALLOW_GROWTH=true、XLA_PYTHON_CLIENT_PREALLOCATE=false。用 cupy.get_default_memory_pool().free_all_blocks() 释放 CuPy 的内存池。NCCL 的缓冲区随 NCCL_BUFFSIZE 和通信器的数量增长。"
        ),
    )
}

fn fragmentation_fixes(f: &Finding, out: &mut Vec<Fix>) {
    let conf = alloc_conf(f);
    if f.era == Some(Era::MallocAsync) {
        out.push(fix(
            &NATIVE_ALLOCATOR,
            say!(
                en: "This message comes from the cudaMallocAsync backend (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync; ComfyUI enables it by default), which ignores expandable_segments and max_split_size_mb. Remove backend:cudaMallocAsync (ComfyUI: --disable-cuda-malloc) and compare.",
                zh: "这条报错来自 cudaMallocAsync 后端（PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync；ComfyUI 默认开启它），它不理会 expandable_segments 和 max_split_size_mb。去掉 backend:cudaMallocAsync（ComfyUI：--disable-cuda-malloc）再对比。"
            ),
        ));
        return;
    }
    if f.backend.as_deref() == Some("xpu") {
        out.push(fix(
            &XPU_EMPTY_CACHE,
            say!(
                en: "Call torch.xpu.empty_cache() between phases (e.g. after evaluation) so that cached blocks can be reused for differently sized tensors.",
                zh: "在阶段之间（如评估之后）调用 torch.xpu.empty_cache()，让缓存的块能给大小不同的张量复用。"
            ),
        ));
        return;
    }
    if let Some(caveat) = &conf.expandable_segments {
        let note = conf
            .note
            .as_ref()
            .map(|n| said(format!(" {}", n.en), n.zh.clone()))
            .unwrap_or_default();
        let set = say!(
            en: "export {var}=expandable_segments:True",
            zh: "export {var}=expandable_segments:True",
            var = &conf.env_var
        );
        let when = say!(
            en: " (set it before Python starts, or in os.environ before the first CUDA call). Not supported on Windows; on WSL2 and Jetson it can itself fail with `CUDA driver error: out of memory`.",
            zh: "（在 Python 启动之前设置，或在第一次 CUDA 调用之前写进 os.environ）。Windows 不支持；在 WSL2 和 Jetson 上它本身可能报 `CUDA driver error: out of memory`。"
        );
        out.push(fix(
            &EXPANDABLE_SEGMENTS,
            said(
                format!("{}{}{}{}", set.en, caveat.en, when.en, note.en),
                format!("{}{}{}{}", set.zh, caveat.zh, when.zh, note.zh),
            ),
        ));
    }
    if let Some(release) = &conf.max_split_upgrade {
        out.push(fix(
            &FEWER_TENSOR_SIZES,
            say!(
                en: "This message's form dates it before PyTorch 1.10 (from 1.10 it ends with a max_split_size_mb hint), and those releases have no allocator setting against fragmentation. Give tensors fewer distinct sizes: resize or pad inputs to a few fixed shapes, sort or bucket them by length. Upgrading to {release} adds {var}=max_split_size_mb:128.",
                zh: "从这条报错的格式看，它来自 1.10 之前的 PyTorch（从 1.10 起报错结尾带有 max_split_size_mb 提示），那些版本没有对付碎片的分配器设置。让张量的尺寸种类少一些：把输入缩放或填充到几种固定形状，按长度排序或分桶。升级到 {release} 后可以用 {var}=max_split_size_mb:128。",
                release = release,
                var = &conf.env_var
            ),
        ));
    }
    if let Some(caveat) = &conf.max_split {
        let set = say!(
            en: "export {var}=max_split_size_mb:128",
            zh: "export {var}=max_split_size_mb:128",
            var = &conf.env_var
        );
        let what = say!(
            en: ". Blocks larger than 128 MB are then never split, which leaves fewer unusable slivers; try 128–512, smaller values can cost speed.",
            zh: "。这样大于 128 MB 的块就不会再被拆分，用不上的碎片会少一些；可以在 128–512 之间试，值越小越可能拖慢速度。"
        );
        out.push(fix(
            &MAX_SPLIT_SIZE,
            said(
                format!("{}{}{}", set.en, caveat.en, what.en),
                format!("{}{}{}", set.zh, caveat.zh, what.zh),
            ),
        ));
    }
}

fn phase_fixes(f: &Finding, has: &dyn Fn(Code) -> bool, out: &mut Vec<Fix>) {
    // The failing frame allocates DeepSpeed ZeRO's bucket: more precise
    // than the phase's own advice.
    out.extend(super::levers::deepspeed_bucket_fix(f));
    if has(Code::MemoryGrowth) || has(Code::LateFailure) {
        let habits = say!(
            en: "Accumulate metrics with loss.item() (not `total += loss`), .detach().cpu() outputs you keep, clear lists of tensors each epoch, and check for sequence lengths that grow over the run (sort or cap them).",
            zh: "用 loss.item() 累加指标（不要 `total += loss`），要保留的输出先 .detach().cpu()，每个 epoch 清空存张量的列表，并检查序列长度是否在运行中越来越长（排序或设上限）。"
        );
        // The snapshot API is named only where this message's PyTorch has it.
        let snapshot = match available(f, MEMORY_SNAPSHOT) {
            Availability::Yes => say!(
                en: " torch.cuda.memory._record_memory_history() plus _dump_snapshot() shows which allocations grow.",
                zh: "torch.cuda.memory._record_memory_history() 加上 _dump_snapshot() 能看出是哪些分配在增长。"
            ),
            Availability::From(release) => say!(
                en: " torch.cuda.memory._record_memory_history() plus _dump_snapshot() ({name}) shows which allocations grow.",
                zh: "torch.cuda.memory._record_memory_history() 加上 _dump_snapshot()（{name}）能看出是哪些分配在增长。",
                name = release
            ),
            Availability::Upgrade(_) => Said::default(),
        };
        out.push(fix(
            &TENSORS_KEPT_ACROSS_STEPS,
            said(
                format!("{}{}", habits.en, snapshot.en),
                format!("{}{}", habits.zh, snapshot.zh),
            ),
        ));
    }
    match f.phase.name.as_str() {
        "evaluation" => out.push(fix(
            &EVAL_WITHOUT_AUTOGRAD,
            say!(
                en: "Wrap evaluation/generation in `with torch.no_grad():` (or torch.inference_mode()) and call model.eval(); without it every activation is kept for a backward pass that never comes. Use a smaller eval batch and move collected outputs to the CPU.",
                zh: "把评估/生成包在 `with torch.no_grad():`（或 torch.inference_mode()）里，并调用 model.eval()；不这样做，每个激活值都会为一个永远不会到来的反向传播留着。评估用更小的 batch，收集的输出搬到 CPU 上。"
            ),
        )),
        "optimizer_step" => out.push(fix(
            &SMALLER_OPTIMIZER_STATE,
            say!(
                en: "The first optimizer.step() allocates Adam's two moment buffers (2 × the trainable parameters in fp32). Use an 8-bit optimizer (bitsandbytes.optim.AdamW8bit), torch.optim.AdamW(..., foreach=False) to avoid temporary copies, fewer trainable parameters (LoRA), or shard the state (FSDP, DeepSpeed ZeRO).",
                zh: "第一次 optimizer.step() 会分配 Adam 的两份矩估计缓冲区（fp32 下是可训练参数的 2 倍）。用 8 位优化器（bitsandbytes.optim.AdamW8bit），用 torch.optim.AdamW(..., foreach=False) 避免临时副本，减少可训练参数（LoRA），或者把优化器状态分片（FSDP、DeepSpeed ZeRO）。"
            ),
        )),
        "backward" => out.push(fix(
            &FEWER_ACTIVATIONS_FOR_BACKWARD,
            say!(
                en: "Enable gradient checkpointing (Hugging Face: model.gradient_checkpointing_enable(); plain PyTorch: torch.utils.checkpoint.checkpoint), and reduce the batch or sequence length, which activation memory grows with.",
                zh: "打开梯度检查点（Hugging Face：model.gradient_checkpointing_enable()；原生 PyTorch：torch.utils.checkpoint.checkpoint），并减小 batch 或序列长度——激活值占用的显存随它们增长。"
            ),
        )),
        "model_load" => out.push(loading_fix_for(f)),
        "checkpoint" => out.push(fix(
            &LOAD_CHECKPOINT_ON_CPU,
            say!(
                en: "torch.load(path, map_location=\"cpu\") keeps a checkpoint from being materialised on the GPU next to the live model; free the old state (del state_dict) before loading a new one.",
                zh: "torch.load(path, map_location=\"cpu\") 能避免 checkpoint 在 GPU 上、挨着正在用的模型再实体化一份；加载新的之前先释放旧的状态（del state_dict）。"
            ),
        )),
        "data_loading" => out.push(fix(
            &MOVE_DATA_PER_BATCH,
            say!(
                en: "Keep datasets on the CPU and call .to(device, non_blocking=True) per batch inside the loop; do not create CUDA tensors in Dataset.__getitem__ or collate_fn.",
                zh: "数据集留在 CPU 上，在循环里逐个 batch 调用 .to(device, non_blocking=True)；不要在 Dataset.__getitem__ 或 collate_fn 里创建 CUDA 张量。"
            ),
        )),
        "compile" => out.push(fix(
            &COMPILE_LESS_AUTOTUNE,
            say!(
                en: "torch.compile(mode=\"max-autotune\") benchmarks many kernels and can need extra memory: use the default mode, or disable compilation once to see whether the model fits without it.",
                zh: "torch.compile(mode=\"max-autotune\") 会对许多 kernel 做基准测试，可能需要额外的显存：改用默认模式，或者先关掉编译跑一次，看不编译时模型放不放得下。"
            ),
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
    fix(
        &FIND_OVERSIZED_TENSOR,
        say!(
            en: "Print the shapes at the failing line (the last frame of your own code in the traceback): a wrong reshape or broadcast, an attention matrix over a very long sequence, or a whole dataset moved to the device. Allocator settings cannot help here.",
            zh: "在出错的那一行（调用栈里你自己代码的最后一帧）打印各个张量的形状：错误的 reshape 或广播、对很长的序列算的注意力矩阵，或者整个数据集被搬到了设备上。分配器的设置帮不了这种情况。"
        ),
    )
}

/// Fixes for torch_npu's allocator messages (Huawei Ascend): its own
/// allocator variable, device type and tools, not CUDA's.
fn npu_fixes(f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
    let has = |code: Code| d.verdicts.iter().any(|v| v.code == code.as_str());
    let smi = fix(
        &NPU_SMI_CHECK,
        say!(
            en: "`npu-smi info` shows each NPU's memory in use and its processes; stop other processes on the same NPU or select another with ASCEND_RT_VISIBLE_DEVICES=N.",
            zh: "`npu-smi info` 会显示每块 NPU 的显存占用和上面的进程；结束同一块 NPU 上的其他进程，或用 ASCEND_RT_VISIBLE_DEVICES=N 换一块。"
        ),
    );
    // When the top verdict puts most of the missing memory outside this
    // allocator, a smaller batch cannot recover it: who holds it comes first.
    let outside = outside_leads(d);
    if outside {
        out.push(smi.clone());
    }
    if has(Code::RequestExceedsCapacity) {
        out.push(tensor_far_too_large());
        return;
    }
    if has(Code::Fragmentation) {
        out.push(fix(
            &MAX_SPLIT_SIZE,
            say!(
                en: "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:128 (torch_npu's allocator settings; the message itself suggests max_split_size_mb). Blocks larger than 128 MB are then never split; try 128–512.",
                zh: "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:128（torch_npu 分配器的设置；报错本身就建议了 max_split_size_mb）。这样大于 128 MB 的块就不会再被拆分；可以在 128–512 之间试。"
            ),
        ));
    }
    // While the model is being loaded there are no activations yet: what
    // shrinks is the model's own footprint.
    let loading = super::setting::is_loading(f);
    if loading {
        out.push(loading_fix_for(f));
    }
    if !is_inference(f) && !loading {
        out.push(fix(
            &REDUCE_BATCH_SIZE,
            say!(
                en: "Halve the batch size; keep the effective batch with gradient accumulation (accumulate N micro-batches, then optimizer.step()). Activation memory shrinks in proportion.",
                zh: "把 batch size 减半；用梯度累积保持等效 batch（累积 N 个 micro-batch 后再 optimizer.step()）。激活值占用的显存随之成比例减少。"
            ),
        ));
    }
    // A serving engine (vLLM on Ascend) runs the model in the dtype it was
    // started with: autocast around a forward pass is not the user's to add.
    let engine = super::setting::Runtime::of(f).is_some_and(|r| r.is_engine());
    if !loading && !engine {
        out.push(fix(
        &MIXED_PRECISION_NPU,
        say!(
            en: "Run the forward pass under torch.autocast(device_type=\"npu\", dtype=torch.bfloat16) (float16 on NPUs without bfloat16): activations take half the memory.",
            zh: "在 torch.autocast(device_type=\"npu\", dtype=torch.bfloat16) 下跑前向（不支持 bfloat16 的 NPU 用 float16）：激活值只占一半显存。"
        ),
    ));
    }
    if !is_inference(f) && !loading {
        out.push(fix(
            &GRADIENT_CHECKPOINTING,
            say!(
                en: "model.gradient_checkpointing_enable() (Hugging Face) or torch.utils.checkpoint.checkpoint around blocks: activations are recomputed in the backward pass instead of stored.",
                zh: "model.gradient_checkpointing_enable()（Hugging Face），或用 torch.utils.checkpoint.checkpoint 包住各个块：激活值在反向传播时重新计算，而不是存下来。"
            ),
        ));
    }
    if is_inference(f) {
        inference_fixes(f, out);
    }
    if !outside {
        out.push(smi);
    }
}

/// Fixes for PyTorch allocator messages from Intel GPUs: the CUDA options
/// (`PYTORCH_CUDA_ALLOC_CONF`, `expandable_segments`, `nvidia-smi`) do not apply.
fn xpu_fixes(f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
    let has = |code: Code| d.verdicts.iter().any(|v| v.code == code.as_str());
    if has(Code::RequestExceedsCapacity) {
        out.push(tensor_far_too_large());
        return;
    }
    // When the top verdict puts most of the missing memory outside this
    // allocator, a smaller batch cannot recover it: who holds it comes first.
    let outside = outside_leads(d);
    if outside {
        out.push(xpu_smi(f));
    }
    // Level Zero's largest single allocation is just under 4 GiB on Intel
    // GPUs (maxMemAllocSize), so a request of 4.00 GiB is already refused.
    // It comes first unless the figures show the request could not fit the
    // card anyway (what PyTorch allocated plus the request exceeds it).
    let relaxed = f.sizes.requested_bytes.filter(|&a| a >= 4 * GIB).map(|a| {
        let fits = match (f.sizes.total_bytes, f.sizes.allocated_bytes) {
            (Some(total), Some(allocated)) => allocated.saturating_add(a) <= total,
            _ => true,
        };
        (xpu_relaxed_allocation_limits(), fits)
    });
    if let Some((relaxed, true)) = &relaxed {
        out.push(relaxed.clone());
    }
    if has(Code::MemoryLimit) {
        out.push(fix(
            &RAISE_MEMORY_FRACTION,
            say!(
                en: "Look for torch.xpu.set_per_process_memory_fraction(...) in your code or framework config and raise the fraction.",
                zh: "在你的代码或框架配置里找 torch.xpu.set_per_process_memory_fraction(...)，把比例调高。"
            ),
        ));
    }
    if has(Code::Fragmentation) {
        out.push(fix(
            &XPU_RELEASE_CACHED_BLOCKS,
            say!(
                en: "torch.xpu.empty_cache() — the message's own hint — hands back memory PyTorch caches but no tensor uses, e.g. between training and evaluation. PyTorch already released what it could before raising, and the CUDA allocator's options (expandable_segments, max_split_size_mb) do not apply to Intel GPUs; allocating large, long-lived tensors first reduces fragmentation.",
                zh: "torch.xpu.empty_cache()（报错本身给的提示）会交还 PyTorch 缓存着、但没有张量在用的显存，例如在训练和评估之间调用。报错之前 PyTorch 已经释放了能释放的部分，而 CUDA 分配器的选项（expandable_segments、max_split_size_mb）对 Intel GPU 不适用；先分配大的、长期存在的张量可以减少碎片。"
            ),
        ));
    }
    if !is_inference(f) {
        out.push(fix(
            &REDUCE_BATCH_SIZE,
            say!(
                en: "Halve the batch size; keep the effective batch with gradient accumulation (accumulate N micro-batches, then optimizer.step()).",
                zh: "把 batch size 减半；用梯度累积保持等效 batch（累积 N 个 micro-batch 后再 optimizer.step()）。"
            ),
        ));
    }
    out.push(fix(
        &MIXED_PRECISION_XPU,
        say!(
            en: "Run the forward pass under torch.autocast(device_type=\"xpu\", dtype=torch.bfloat16): activations take half the memory.",
            zh: "在 torch.autocast(device_type=\"xpu\", dtype=torch.bfloat16) 下跑前向：激活值只占一半显存。"
        ),
    ));
    if let Some((relaxed, false)) = relaxed {
        out.push(relaxed);
    }
    if !is_inference(f) {
        out.push(fix(
            &GRADIENT_CHECKPOINTING,
            say!(
                en: "model.gradient_checkpointing_enable() (Hugging Face) or torch.utils.checkpoint.checkpoint around blocks; use torch.no_grad() for evaluation.",
                zh: "model.gradient_checkpointing_enable()（Hugging Face），或用 torch.utils.checkpoint.checkpoint 包住各个块；评估时用 torch.no_grad()。"
            ),
        ));
    }
    if is_inference(f) {
        inference_fixes(f, out);
    }
    if !outside {
        out.push(xpu_smi(f));
    }
}

/// Level Zero's single-allocation limit, relaxed.
fn xpu_relaxed_allocation_limits() -> Fix {
    fix(
        &XPU_RELAXED_ALLOCATION_LIMITS,
        say!(
            en: "Intel's Level Zero runtime refuses one allocation larger than about 4 GiB unless relaxed: export UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 before Python starts (oneapi-src/unified-runtime#1245), or split the tensor (smaller batch or chunks).",
            zh: "Intel 的 Level Zero 运行时默认拒绝大于约 4 GiB 的单次分配，除非放宽限制：在 Python 启动前 export UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1（oneapi-src/unified-runtime#1245），或者把张量拆开（更小的 batch 或分块）。"
        ),
    )
}

/// Intel's xpu-smi, the holder check on Intel GPUs.
fn xpu_smi(f: &Finding) -> Fix {
    fix(
        &XPU_SMI_CHECK,
        say!(
            en: "Intel's xpu-smi (e.g. `xpu-smi stats -d {device}`) shows device memory in use; stop other processes on the same GPU or select another with ZE_AFFINITY_MASK.",
            zh: "Intel 的 xpu-smi（如 `xpu-smi stats -d {device}`）会显示设备显存的占用；结束同一块 GPU 上的其他进程，或用 ZE_AFFINITY_MASK 换一块。",
            device = f.device.unwrap_or(0)
        ),
    )
}

/// True when the top verdict puts most of the missing memory outside this
/// allocator (outside PyTorch, outside this process, other processes):
/// then finding its holder is the first fix on every backend.
fn outside_leads(d: &Diagnosis) -> bool {
    d.verdicts.first().is_some_and(|v| {
        [
            Code::MemoryOutsidePytorch,
            Code::MemoryOutsideProcess,
            Code::OtherProcesses,
        ]
        .iter()
        .any(|code| v.code == code.as_str())
    })
}

/// Autocast on Ascend NPUs (torch_npu): the device-generic API with torch_npu's device type.
const MIXED_PRECISION_NPU: FixSpec =
    FixSpec::new("mixed-precision-npu", "Use mixed precision", "使用混合精度")
        .frameworks(&[Framework::PyTorch])
        .vendors(&[Vendor::Ascend])
        .engines(Engines::NotServing)
        .phases(Phases::NotLoading)
        .cost(Cost::Quality);

/// Autocast on Intel GPUs (`device_type="xpu"`).
const MIXED_PRECISION_XPU: FixSpec =
    FixSpec::new("mixed-precision-xpu", "Use mixed precision", "使用混合精度")
        .frameworks(&[Framework::PyTorch])
        .vendors(&[Vendor::Intel])
        .engines(Engines::NotServing)
        .phases(Phases::NotLoading)
        .cost(Cost::Quality);

/// `set_per_process_memory_fraction` (CUDA from 1.8; XPU's with Intel's GPU support).
const RAISE_MEMORY_FRACTION: FixSpec = FixSpec::new(
    "raise-memory-fraction",
    "Raise or remove the per-process memory limit",
    "调高或去掉进程级的显存上限",
)
.frameworks(&[Framework::PyTorch])
.torch_since(since::MEMORY_FRACTION)
.sources(&["PyTorch documentation: torch.cuda.set_per_process_memory_fraction"]);

/// Free memory beyond the request in a form that does not print a
/// fraction limit: the limit and another library in the process, side by side.
const LIMIT_OR_OTHER_LIBRARY: FixSpec = FixSpec::new(
    "unprinted-limit-or-other-library",
    "Look for a memory limit or another GPU library in this process",
    "检查进程里的显存上限或别的 GPU 库",
)
.frameworks(&[Framework::PyTorch])
.torch_since(since::MEMORY_FRACTION)
.cost(Cost::Look)
.sources(&["PyTorch documentation: torch.cuda.set_per_process_memory_fraction"]);

const WATCH_GPU_AROUND_CRASH: FixSpec = FixSpec::new(
    "watch-gpu-around-crash",
    "Check what changes on the GPU around the crash",
    "检查崩溃前后 GPU 上发生了什么变化",
)
.cost(Cost::Look);

const FIND_OTHER_GPU_HOLDERS: FixSpec = FixSpec::new(
    "find-other-gpu-holders",
    "Find who else holds the GPU",
    "找出还有谁占着 GPU",
)
.cost(Cost::Look);

const FIND_MEMORY_OUTSIDE_PROCESS: FixSpec = FixSpec::new(
    "find-memory-outside-process",
    "Find what holds the rest of the GPU",
    "找出是什么占着这块 GPU 的其余显存",
)
.cost(Cost::Look);

const FREE_GPU_FROM_OTHER_PROCESSES: FixSpec = FixSpec::new(
    "free-gpu-from-other-processes",
    "Free the GPU from other processes",
    "让其他进程让出 GPU",
);

/// torch.compile's CUDA graphs (PyTorch ≥ 2.0) and vLLM's.
const FEWER_CUDA_GRAPHS: FixSpec = FixSpec::new(
    "fewer-cuda-graphs",
    "Capture fewer or smaller CUDA graphs",
    "少捕获一些 CUDA graph，或捕获小一些的",
)
.frameworks(&[Framework::PyTorch])
.torch_since(TORCH_COMPILE)
.cost(Cost::Speed)
.sources(&["PyTorch documentation: torch.compile (mode=\"reduce-overhead\")"]);

const STOP_OTHER_LIBRARIES: FixSpec = FixSpec::new(
    "stop-other-libraries-holding-memory",
    "Stop other GPU libraries in this process from holding memory",
    "不要让同进程里的其他 GPU 库占着显存",
)
.frameworks(&[Framework::PyTorch])
.sources(&[
    "TensorFlow GPU guide: Limiting GPU memory growth",
    "JAX documentation: GPU memory allocation",
    "CuPy documentation: Memory Management",
]);

/// Memory outside PyTorch with no other GPU library in sight.
const FIND_NON_PYTORCH_MEMORY: FixSpec = FixSpec::new(
    "find-non-pytorch-memory",
    "Find what in this process holds memory outside PyTorch",
    "找出这个进程里是什么在 PyTorch 之外占着显存",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Look)
.sources(&["PyTorch documentation: torch.cuda.memory_reserved"]);

/// Leaving the `backend:cudaMallocAsync` allocator, a CUDA backend.
const NATIVE_ALLOCATOR: FixSpec = FixSpec::new(
    "native-allocator",
    "Try the native allocator",
    "试试原生分配器",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.sources(&["PyTorch documentation: CUDA semantics, Using custom memory allocators for CUDA"]);

const XPU_EMPTY_CACHE: FixSpec =
    FixSpec::new("xpu-empty-cache", "Release cached memory", "释放缓存的显存")
        .frameworks(&[Framework::PyTorch])
        .vendors(&[Vendor::Intel]);

/// `expandable_segments` (PyTorch ≥ 2.1) under the CUDA or HIP variable.
const EXPANDABLE_SEGMENTS: FixSpec = FixSpec::new(
    "expandable-segments",
    "Let the allocator grow segments instead of fragmenting them",
    "让分配器扩展段，而不是切出碎片",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia, Vendor::Amd])
.torch_since(since::EXPANDABLE_SEGMENTS)
.sources(&[
    "PyTorch documentation: CUDA semantics, Optimizing memory usage with PYTORCH_CUDA_ALLOC_CONF",
])
.applied_when(&["expandable_segments:true"]);

/// `max_split_size_mb` (PyTorch ≈1.10) under the CUDA, HIP or NPU variable.
const MAX_SPLIT_SIZE: FixSpec = FixSpec::new(
    "max-split-size",
    "Stop the allocator from splitting large blocks",
    "不要让分配器拆分大块",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia, Vendor::Amd, Vendor::Ascend])
.torch_since(since::MAX_SPLIT)
.cost(Cost::Speed)
.sources(&[
    "PyTorch documentation: CUDA semantics, Optimizing memory usage with PYTORCH_CUDA_ALLOC_CONF",
]);

/// Fragmentation before `max_split_size_mb` (PyTorch < 1.10): uniform
/// tensor sizes, and the release that has the option.
const FEWER_TENSOR_SIZES: FixSpec = FixSpec::new(
    "fewer-tensor-sizes",
    "Give tensors fewer distinct sizes",
    "让张量的尺寸种类少一些",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia, Vendor::Amd])
.torch_until((1, 9))
.cost(Cost::Quality)
.sources(&["PyTorch documentation: CUDA semantics, Memory management"]);

const TENSORS_KEPT_ACROSS_STEPS: FixSpec = FixSpec::new(
    "tensors-kept-across-steps",
    "Look for tensors kept across steps",
    "找出跨步保留的张量",
)
.frameworks(&[Framework::PyTorch])
.sources(&["PyTorch documentation: Understanding CUDA Memory Usage (_record_memory_history)"]);

pub(super) const EVAL_WITHOUT_AUTOGRAD: FixSpec = FixSpec::new(
    "eval-without-autograd",
    "Run evaluation without autograd",
    "评估时关闭 autograd",
)
.frameworks(&[Framework::PyTorch]);

const SMALLER_OPTIMIZER_STATE: FixSpec = FixSpec::new(
    "smaller-optimizer-state",
    "Make the optimizer state smaller",
    "减小优化器状态",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Quality);

const FEWER_ACTIVATIONS_FOR_BACKWARD: FixSpec = FixSpec::new(
    "fewer-activations-for-backward",
    "Keep fewer activations for the backward pass",
    "为反向传播少保留一些激活值",
)
.frameworks(&[Framework::PyTorch])
.pointless_when(&[Shown::CheckpointingOn])
.cost(Cost::Speed);

const LOAD_CHECKPOINT_ON_CPU: FixSpec = FixSpec::new(
    "load-checkpoint-on-cpu",
    "Load checkpoints onto the CPU first",
    "先把 checkpoint 加载到 CPU 上",
)
.frameworks(&[Framework::PyTorch])
.phases(Phases::Loading);

const MOVE_DATA_PER_BATCH: FixSpec = FixSpec::new(
    "move-data-per-batch",
    "Move data to the GPU one batch at a time",
    "每次只把一个 batch 搬到 GPU 上",
)
.frameworks(&[Framework::PyTorch]);

/// `torch.compile` is in PyTorch from 2.0.
const COMPILE_LESS_AUTOTUNE: FixSpec = FixSpec::new(
    "compile-less-autotune",
    "Give compilation less to autotune",
    "让编译少做些自动调优",
)
.frameworks(&[Framework::PyTorch])
.torch_since(TORCH_COMPILE)
.cost(Cost::Speed);

const FIND_WHOLE_MESSAGE: FixSpec = FixSpec::new(
    "find-whole-message",
    "Find the whole message",
    "找到完整的报错",
)
.cost(Cost::Look);

/// Whether the message is the sentence form cut right after `GPU`, as
/// PyTorch ≈2.2–2.3 printed it, rather than cut by a paste.
fn cut_by_pytorch(f: &Finding) -> bool {
    f.truncated
        && f.era == Some(Era::Sentence)
        && f.text
            .trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '.' | '。'))
            .ends_with("GPU")
}

const PRINT_MEMORY_STATE: FixSpec = FixSpec::new(
    "print-memory-state",
    "Print the memory figures where it fails",
    "在出错处打印显存数字",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Look);

const NPU_SMI_CHECK: FixSpec = FixSpec::new(
    "npu-smi-check",
    "Check what else uses the NPU",
    "检查还有什么在用 NPU",
)
.vendors(&[Vendor::Ascend])
.cost(Cost::Look);

const XPU_RELAXED_ALLOCATION_LIMITS: FixSpec = FixSpec::new(
    "xpu-relaxed-allocation-limits",
    "Allow single allocations over 4 GiB",
    "允许超过 4 GiB 的单次分配",
)
.vendors(&[Vendor::Intel])
.sources(&["oneapi-src/unified-runtime#1245 (UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS)"])
.applied_when(&["ur_l0_enable_relaxed_allocation_limits=1"]);

const XPU_RELEASE_CACHED_BLOCKS: FixSpec = FixSpec::new(
    "xpu-release-cached-blocks",
    "Release cached blocks between phases",
    "在阶段之间释放缓存块",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Intel]);

const XPU_SMI_CHECK: FixSpec = FixSpec::new(
    "xpu-smi-check",
    "Check what else uses the GPU",
    "检查还有什么在用 GPU",
)
.vendors(&[Vendor::Intel])
.cost(Cost::Look);

/// `torch.compile` (and its CUDA-graph modes): PyTorch 2.0.
const TORCH_COMPILE: Release = (2, 0);
/// `torch.cuda.memory._dump_snapshot` with `_record_memory_history`, as
/// "Understanding CUDA Memory Usage" documents them: PyTorch 2.1.
const MEMORY_SNAPSHOT: Release = (2, 1);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    MIXED_PRECISION_NPU,
    MIXED_PRECISION_XPU,
    RAISE_MEMORY_FRACTION,
    LIMIT_OR_OTHER_LIBRARY,
    WATCH_GPU_AROUND_CRASH,
    FIND_OTHER_GPU_HOLDERS,
    FIND_MEMORY_OUTSIDE_PROCESS,
    FREE_GPU_FROM_OTHER_PROCESSES,
    FEWER_CUDA_GRAPHS,
    STOP_OTHER_LIBRARIES,
    FIND_NON_PYTORCH_MEMORY,
    NATIVE_ALLOCATOR,
    XPU_EMPTY_CACHE,
    EXPANDABLE_SEGMENTS,
    MAX_SPLIT_SIZE,
    FEWER_TENSOR_SIZES,
    TENSORS_KEPT_ACROSS_STEPS,
    EVAL_WITHOUT_AUTOGRAD,
    SMALLER_OPTIMIZER_STATE,
    FEWER_ACTIVATIONS_FOR_BACKWARD,
    LOAD_CHECKPOINT_ON_CPU,
    MOVE_DATA_PER_BATCH,
    COMPILE_LESS_AUTOTUNE,
    FIND_WHOLE_MESSAGE,
    PRINT_MEMORY_STATE,
    NPU_SMI_CHECK,
    XPU_RELAXED_ALLOCATION_LIMITS,
    XPU_RELEASE_CACHED_BLOCKS,
    XPU_SMI_CHECK,
];

#[cfg(test)]
mod tests {
    use crate::decode_str;

    fn verdicts(text: &str) -> Vec<String> {
        let findings = decode_str(text);
        assert_eq!(findings.len(), 1, "{text}");
        findings[0]
            .diagnosis
            .verdicts
            .iter()
            .map(|v| v.code.clone())
            .collect()
    }

    use crate::explain::test_support::fix_ids;

    /// The `reserved` form from a Windows paste (fixtures/wild), its
    /// figures varied around the small-card margins.
    fn reserved(total: &str, reserved: &str) -> String {
        format!("RuntimeError: CUDA out of memory. Tried to allocate 200.00 MiB (GPU 0; {total} total capacity; 5.96 GiB already allocated; 0 bytes free; {reserved} reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")
    }

    #[test]
    fn a_small_card_is_too_small_rather_than_shared() {
        // 8.00 GiB card, 1.82 GiB outside PyTorch: context and display.
        let v = verdicts(&reserved("8.00 GiB", "6.18 GiB"));
        assert_eq!(v[0], "capacity_exhausted", "{v:?}");
        assert!(!v.iter().any(|c| c == "memory_outside_pytorch"), "{v:?}");
        let fixes = fix_ids(&reserved("8.00 GiB", "6.18 GiB"));
        assert_eq!(fixes[0], "reduce-batch-size", "{fixes:?}");
        assert!(!fixes.iter().any(|x| x == "find-other-gpu-holders"));
        // The same outside a card just over the margin: someone else may hold it.
        let v = verdicts(&reserved("8.01 GiB", "6.18 GiB"));
        assert_eq!(v[0], "memory_outside_pytorch", "{v:?}");
    }

    #[test]
    fn more_than_context_and_display_is_blamed_even_on_a_small_card() {
        // Exactly the allowance (2.00 GiB outside) is context and display.
        let v = verdicts(&reserved("8.00 GiB", "6.00 GiB"));
        assert_eq!(v[0], "capacity_exhausted", "{v:?}");
        // 2.01 GiB is more than they take.
        let v = verdicts(&reserved("8.00 GiB", "5.99 GiB"));
        assert_eq!(v[0], "memory_outside_pytorch", "{v:?}");
    }

    /// A 1 GB card (a PyTorch ≤ 1.3 paste, fixtures/wild): what PyTorch
    /// holds plus the request is under half the card, but with the context
    /// and display counted it is not, so "does not fit" is not contradicted.
    #[test]
    fn context_and_display_count_as_used_on_a_small_card() {
        let v = verdicts("RuntimeError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 983.69 MiB total capacity; 209.53 MiB already allocated; 69.56 MiB free; 6.47 MiB cached)");
        assert_eq!(v[0], "capacity_exhausted", "{v:?}");
    }

    /// A real 2 GB-card paste (fixtures/wild): what PyTorch holds unused
    /// plus the free memory covers the 264 MiB request, so by the numbers
    /// it would fit (`Reading::CacheCoversRequest`) and fragmentation leads,
    /// even on a small desktop card; on a card of ≤ 8 GiB the margin is the
    /// request and half of it again (below, the workload's size leads).
    #[test]
    fn fragmentation_leads_when_the_cache_and_free_memory_cover_the_request() {
        let text = |allocated: &str, free: &str| {
            format!("RuntimeError: CUDA out of memory. Tried to allocate 264.00 MiB (GPU 0; 2.00 GiB total capacity; {allocated} already allocated; {free} free; 1.02 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")
        };
        // 1044.48 − 788.51 = 255.97 MiB unused + 145.93 MiB free = 401.90 MiB.
        let covered = verdicts(&text("788.51 MiB", "145.93 MiB"));
        assert_eq!(covered[0], "fragmentation", "{covered:?}");
        assert!(!covered.contains(&"capacity_exhausted".to_string()));
        // 1044.48 − 900.00 = 144.48 MiB unused + 251.52 MiB free = 396 MiB:
        // at 1.5 × 264 MiB, covered; 251.51 MiB free is short of it.
        let at = verdicts(&text("900.00 MiB", "251.52 MiB"));
        assert_eq!(at[0], "fragmentation", "{at:?}");
        let short = verdicts(&text("900.00 MiB", "251.51 MiB"));
        assert_eq!(short[0], "capacity_exhausted", "{short:?}");
        // The reserve alone holding it: fragmentation leads on the small card too.
        let above = verdicts(&text("740.00 MiB", "145.93 MiB"));
        assert_eq!(above[0], "fragmentation", "{above:?}");
    }

    /// Memory outside PyTorch on a small card is called the CUDA context
    /// and display only up to a typical context (640 MiB); above it another
    /// program is not ruled out. The 4 GiB card's paste (fixtures/wild/1539.txt)
    /// with free memory set on both sides of the margin.
    #[test]
    fn only_a_context_sized_rest_is_called_the_context() {
        let text = |free: &str| {
            format!("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 960.00 MiB (GPU 0; 4.00 GiB total capacity; 2.45 GiB already allocated; {free} free; 2.50 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")
        };
        let detail = |free: &str| {
            decode_str(&text(free))[0].diagnosis.verdicts[0]
                .detail
                .clone()
        };
        // 4096 − 896 − 2560 = 640 MiB: a context's size.
        let context = detail("896.00 MiB");
        assert!(context.contains("probably not another job"), "{context}");
        // 641 MiB: more than a context, others are possible.
        let more = detail("895.00 MiB");
        assert!(more.contains("another program may hold"), "{more}");
        assert!(!more.contains("not another job"), "{more}");
    }

    /// A request over the card the writer states (an RX 6800 "with 16gb",
    /// fixtures/wild/1546.txt, whose HIP message is cut before its figures)
    /// is one allocation no setting can satisfy; a request under the
    /// stated card leaves the cut message's reading.
    #[test]
    fn a_request_over_the_stated_card_is_too_large() {
        let paste = include_str!("../../../../fixtures/wild/1546.txt");
        assert_eq!(verdicts(paste)[0], "request_exceeds_capacity");
        let fits = paste.replace("16gb", "24gb");
        assert_eq!(verdicts(&fits)[0], "figures_missing");
        let equal = paste.replace("16gb", "18gb");
        assert_eq!(verdicts(&equal)[0], "figures_missing");
    }

    /// The same margin on a data-centre card (fixtures: a 15.90 GiB card):
    /// 1.00 GiB unused plus the free memory against 1 GiB and its margin
    /// (a twentieth, 51.20 MiB).
    #[test]
    fn fragmentation_margin_on_a_large_card() {
        let text = |free: &str| {
            format!("RuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB (GPU 0; 15.90 GiB total capacity; 13.00 GiB already allocated; {free} free; 14.00 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")
        };
        let primary = verdicts(&text("51.20 MiB"));
        assert_eq!(primary[0], "fragmentation", "{primary:?}");
        assert_eq!(fix_ids(&text("51.20 MiB"))[0], "max-split-size");
        let short = verdicts(&text("50.00 MiB"));
        assert_ne!(short[0], "fragmentation", "{short:?}");
    }

    /// A complete message without the hint (before 1.10) is never told to
    /// set max_split_size_mb, only to upgrade for it.
    #[test]
    fn no_max_split_before_1_10() {
        let fixes = fix_ids("RuntimeError: CUDA out of memory. Tried to allocate 548.00 MiB (GPU 0; 6.00 GiB total capacity; 2.85 GiB already allocated; 312.62 MiB free; 4.17 GiB reserved in total by PyTorch)");
        assert!(!fixes.iter().any(|x| x == "max-split-size"), "{fixes:?}");
        assert!(fixes.iter().any(|x| x == "fewer-tensor-sizes"), "{fixes:?}");
        // Cut inside the hint: the option may exist.
        let fixes = fix_ids("RuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB (GPU 0; 15.90 GiB total capacity; 10.00 GiB already allocated; 500.00 MiB free; 14.50 GiB reserved in total by PyTorch) If reserved memory is");
        assert!(fixes.iter().any(|x| x == "max-split-size"), "{fixes:?}");
        assert!(
            !fixes.iter().any(|x| x == "fewer-tensor-sizes"),
            "{fixes:?}"
        );
    }
}

/// Free memory beside the request, read as the one memory model reads it
/// (`common::Reading`), from the audited pastes.
#[cfg(test)]
mod free_beside_the_request {
    use crate::explain::test_support::fix_ids;

    fn first(text: &str) -> crate::record::Finding {
        crate::decode_str(text).remove(0)
    }

    /// A 4 GiB card (fixtures/wild/1539.txt): 51.56 MiB free for a 20 MiB
    /// request is within the noise margin (32 MiB over the request), so the
    /// card is full, and the Why says why the figure beside it does not
    /// contradict that. 52 MiB free is past the margin: then the device
    /// had room, and "does not fit" is not said. (The paste itself holds
    /// 204.80 MiB unused in the cache, which covers the request: there
    /// fragmentation leads; with 2.45 GiB allocated the cache's 51.20 MiB is
    /// slack and the free memory decides.)
    #[test]
    fn free_within_the_noise_is_reconciled_with_a_full_card() {
        let paste = include_str!("../../../../fixtures/wild/1539.txt");
        assert_eq!(first(paste).diagnosis.verdicts[0].code, "fragmentation");
        let text = &paste.replace("2.30 GiB already allocated", "2.45 GiB already allocated");
        let f = first(text);
        let why = &f.diagnosis.verdicts[0];
        assert_eq!(why.code, "capacity_exhausted");
        assert!(
            why.detail.contains("by the numbers it was full"),
            "{}",
            why.detail
        );
        assert!(why
            .zh
            .as_ref()
            .is_some_and(|zh| zh.text.contains("设备已经满了")));
        let past = first(&text.replace("51.56 MiB free", "52.00 MiB free"));
        assert_ne!(past.diagnosis.verdicts[0].code, "capacity_exhausted");
        let at = first(&text.replace("51.56 MiB free", "20.00 MiB free"));
        assert!(!at.diagnosis.verdicts[0]
            .detail
            .contains("by the numbers it was full"));
    }

    /// PyTorch 2.1 with 4.48 GiB free for 60 MiB (fixtures/wild/1540.txt):
    /// the free memory leads; the fragmentation it also shows matters only
    /// under a limit this form does not print, and says so.
    #[test]
    fn fragmentation_beside_free_memory_names_the_limit() {
        let f = first(include_str!("../../../../fixtures/wild/1540.txt"));
        let codes: Vec<&str> = f
            .diagnosis
            .verdicts
            .iter()
            .map(|v| v.code.as_str())
            .collect();
        assert_eq!(codes[..2], ["free_exceeds_request", "fragmentation"]);
        let detail = &f.diagnosis.verdicts[1].detail;
        assert!(detail.contains("only if a limit"), "{detail}");
    }

    /// An Intel GPU refusing 4.00 GiB with 15.11 GiB free
    /// (fixtures/wild/1537.txt): Level Zero's single-allocation limit, just
    /// under 4 GiB, comes first; below 4 GiB it is not offered.
    #[test]
    fn an_intel_gpu_refuses_four_gib_in_one_piece() {
        let text = include_str!("../../../../fixtures/wild/1537.txt");
        assert_eq!(fix_ids(text)[0], "xpu-relaxed-allocation-limits");
        let below =
            fix_ids(&text.replace("Tried to allocate 4.00 GiB", "Tried to allocate 3.99 GiB"));
        assert!(
            !below.iter().any(|x| x == "xpu-relaxed-allocation-limits"),
            "{below:?}"
        );
    }

    /// A 13.74 GiB Intel GPU with 10.10 GiB allocated refusing 4.00 GiB
    /// (fixtures/wild/1451.txt): 14.10 GiB could not fit the card even
    /// with the limit relaxed, so the smaller batch comes first. With
    /// 9.74 GiB allocated the request fits exactly and the limit leads; at
    /// 9.75 GiB it does not.
    #[test]
    fn the_single_allocation_limit_leads_only_where_the_request_fits() {
        let text = include_str!("../../../../fixtures/wild/1451.txt");
        assert_eq!(fix_ids(text)[0], "reduce-batch-size");
        let held = |gib: &str| {
            fix_ids(&text.replace(
                "10.10 GiB is allocated by PyTorch",
                &format!("{gib} GiB is allocated by PyTorch"),
            ))[0]
                .clone()
        };
        assert_eq!(held("9.74"), "xpu-relaxed-allocation-limits");
        assert_eq!(held("9.75"), "reduce-batch-size");
    }

    /// The same Intel GPU with nearly nothing free while PyTorch holds a
    /// few MiB: the memory is outside PyTorch, and xpu-smi comes first, as
    /// npu-smi does on an Ascend NPU.
    #[test]
    fn an_intel_gpu_full_outside_pytorch_looks_for_the_holder_first() {
        let text = include_str!("../../../../fixtures/wild/1537.txt")
            .replace("Tried to allocate 4.00 GiB", "Tried to allocate 512.00 MiB")
            .replace("of which 15.11 GiB is free", "of which 100.00 MiB is free");
        let f = first(&text);
        assert_eq!(f.diagnosis.verdicts[0].code, "memory_outside_pytorch");
        assert_eq!(f.diagnosis.fixes[0].id, "xpu-smi-check");
    }
}
