//! XLA out-of-memory as JAX and TensorFlow-with-XLA report it: the
//! preallocated device pool and the pinned host-memory limit.

use super::catalogue::{Cost, FixSpec, Shown};
use super::common::Reading;
use super::common::{extra, fix, framework_fixes, row, verdict, BeyondGpus, FieldRow};
use super::docs::Code;
use super::setting::{on_tpu, shows_keras, shows_torch_xla, Framework, Vendor};
use super::Explain;
use crate::i18n::Said;
use crate::record::{Diagnosis, Era, Finding, Fix, Verdict};
use crate::say;
use crate::say_parts;
use crate::units::format_size as fmt;

/// Explains `Kind::XlaOom` findings.
pub(super) struct XlaOom;

impl Explain for XlaOom {
    fn headline(&self, f: &Finding) -> Said {
        let a = f.sizes.requested_bytes.map(fmt);
        if is_tpu(f) {
            return match a {
                Some(a) => say!(
                    en: "XLA could not allocate {a} of TPU memory (HBM)",
                    zh: "XLA 无法分配 {a} TPU 内存（HBM）",
                    a = a
                ),
                None => say!(
                    en: "XLA's program needs more TPU memory (HBM) than the core has",
                    zh: "XLA 的程序需要的 TPU 内存（HBM）比这个核心的多"
                ),
            };
        }
        match (f.era, a, f.device) {
            (Some(Era::Host), Some(a), _) => say!(
                en: "XLA could not allocate {a} of pinned host memory",
                zh: "XLA 无法分配 {a} 锁页主机内存",
                a = a
            ),
            (_, Some(a), Some(d)) => say!(
                en: "XLA (JAX) could not allocate {a} on GPU {d}",
                zh: "XLA（JAX）无法在 GPU {d} 上分配 {a}",
                a = a,
                d = d
            ),
            (_, Some(a), None) => say!(
                en: "XLA (JAX) could not allocate {a}",
                zh: "XLA（JAX）无法分配 {a}",
                a = a
            ),
            _ => say!(en: "XLA (JAX) ran out of memory", zh: "XLA（JAX）内存不足"),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        let s = &f.sizes;
        if let Some(a) = s.requested_bytes {
            let meaning = if f.era == Some(Era::Host) {
                say!(
                    en: "pinned host memory XLA needed in one piece (exact)",
                    zh: "XLA 需要一次拿到的锁页主机内存（精确值）"
                )
            } else if f.era == Some(Era::HumanReadable) || f.era == Some(Era::TpuBuffer) {
                say!(
                    en: "one buffer XLA needed, as printed (rounded; approximate)",
                    zh: "XLA 需要的一个缓冲区，按报错打印的值（四舍五入，近似值）"
                )
            } else {
                say!(
                    en: "one buffer XLA needed in one piece (exact)",
                    zh: "XLA 需要一次拿到的一个缓冲区（精确值）"
                )
            };
            rows.push(row(
                say!(en: "Trying to allocate", zh: "试图分配"),
                format!("{} ({a} bytes)", fmt(a)),
                meaning,
                false,
            ));
        }
        let program = [
            (
                "program_parameter_bytes",
                say!(en: "Parameters", zh: "参数"),
                say!(
                    en: "the compiled program's input buffers",
                    zh: "编译后程序的输入缓冲区"
                ),
            ),
            (
                "program_output_bytes",
                say!(en: "Outputs", zh: "输出"),
                say!(
                    en: "buffers that may live on after the program (maybe_live_out)",
                    zh: "程序结束后可能还要保留的缓冲区（maybe_live_out）"
                ),
            ),
            (
                "program_temp_bytes",
                say!(en: "Temporaries", zh: "临时缓冲区"),
                say!(
                    en: "scratch buffers the program needs while it runs",
                    zh: "程序运行期间需要的临时缓冲区"
                ),
            ),
            (
                "program_total_bytes",
                say!(en: "Program total", zh: "程序合计"),
                say!(
                    en: "all of the program's buffers, per XLA's BufferAssignment stats",
                    zh: "程序的全部缓冲区，按 XLA 的 BufferAssignment 统计"
                ),
            ),
        ];
        for (key, label, meaning) in program {
            if let Some(v) = extra(f, key) {
                rows.push(row(label, fmt(v), meaning, false));
            }
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        if is_tpu(f) {
            tpu_verdicts(f, out)
        } else {
            xla_verdicts(f, out)
        }
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        if is_tpu(f) {
            framework_fixes(d, out, |_, out| tpu_fixes(f, out))
        } else {
            framework_fixes(d, out, |_, out| xla_fixes(f, out))
        }
    }
}

fn concat(parts: impl IntoIterator<Item = Said>) -> Said {
    let mut all = Said::default();
    for part in parts {
        all.en.push_str(&part.en);
        all.zh.push_str(&part.zh);
    }
    all
}

/// Whether a stream executor's driver-API failure is for pinned host
/// memory: TensorFlow's and jaxlib's `cuda_driver.cc` print `failed to
/// alloc N bytes on host` when cuMemHostAlloc fails, and their host
/// allocator `could not allocate pinned host memory of size: N`.
pub(super) fn pinned_host_alloc(f: &Finding) -> bool {
    f.era == Some(Era::CudaDriver)
        && (f.text.contains("bytes on host") || f.text.contains("pinned host memory"))
}

/// Explains a failed cuMemHostAlloc (see [`pinned_host_alloc`]): page-locked
/// host RAM, not GPU memory.
pub(super) struct PinnedHostAlloc;

impl Explain for PinnedHostAlloc {
    fn headline(&self, f: &Finding) -> Said {
        match f.sizes.requested_bytes {
            Some(a) => say!(
                en: "The CUDA driver could not allocate {a} of pinned host memory",
                zh: "CUDA 驱动无法分配 {a} 锁页主机内存",
                a = fmt(a)
            ),
            None => say!(
                en: "The CUDA driver could not allocate pinned host memory",
                zh: "CUDA 驱动无法分配锁页主机内存"
            ),
        }
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        let size = match f.sizes.requested_bytes {
            Some(a) => say!(en: " for {a}", zh: "（{a}）", a = fmt(a)),
            None => Said::default(),
        };
        let rest = say!(
            en: ": the framework asked the CUDA driver for page-locked host RAM, which it uses as a staging buffer for copies between host and GPU. The machine's free RAM, a container's memory limit or the locked-memory limit (`ulimit -l`) refused it; the GPU's own memory is not involved.",
            zh: "：框架向 CUDA 驱动申请锁页主机内存（RAM），用作主机和 GPU 之间拷贝的中转缓冲区。是机器的空闲内存、容器的内存上限或锁定内存上限（`ulimit -l`）拒绝了它；与 GPU 自己的显存无关。"
        );
        out.push(verdict(
            Code::HostRamExhausted,
            say!(
                en: "Pinned (page-locked) host memory ran out, not GPU memory",
                zh: "用完的是锁页主机内存，不是显存"
            ),
            concat([
                say!(
                    en: "`failed to alloc N bytes on host` and `could not allocate pinned host memory` mean cuMemHostAlloc failed",
                    zh: "`failed to alloc N bytes on host` 和 `could not allocate pinned host memory` 表示 cuMemHostAlloc 失败了"
                ),
                size,
                rest,
            ]),
        ));
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix(
            &CHECK_HOST_PINNED,
            say!(
                en: "Run `free -h` while the job runs and close what else uses RAM; in a container raise its memory limit (docker run --memory, Kubernetes resources.limits.memory); check the locked-memory limit with `ulimit -l` (Docker: --ulimit memlock=-1).",
                zh: "在任务运行时用 `free -h` 查看，关掉其他占内存的程序；在容器里调高它的内存上限（docker run --memory，Kubernetes 的 resources.limits.memory）；用 `ulimit -l` 检查锁定内存上限（Docker：--ulimit memlock=-1）。"
            ),
        ));
        out.push(fix(
            &SMALLER_HOST_TRANSFERS,
            say!(
                en: "Copy less between host and GPU at once: smaller batches or input arrays per transfer, a smaller data-pipeline prefetch buffer, fewer arrays fetched back to the host at once.",
                zh: "一次在主机和 GPU 之间少拷贝一些：每次传输用更小的 batch 或输入数组、调小数据管道的预取缓冲区、一次少取回几个数组到主机。"
            ),
        ));
    }
}

fn xla_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let a = f.sizes.requested_bytes;
    let program = match (
        extra(f, "program_total_bytes"),
        extra(f, "program_temp_bytes"),
    ) {
        (Some(total), Some(temp)) => say!(
            en: "The compiled program's buffers total {total} ({temp} of them temporaries), per XLA's BufferAssignment stats.",
            zh: "按 XLA 的 BufferAssignment 统计，编译后程序的缓冲区共 {total}（其中临时缓冲区 {temp}）。",
            total = fmt(total),
            temp = fmt(temp)
        ),
        (Some(total), None) => say!(
            en: "The compiled program's buffers total {total}.",
            zh: "编译后程序的缓冲区共 {total}。",
            total = fmt(total)
        ),
        _ => Said::default(),
    };
    if f.era == Some(Era::Host) {
        let detail = match a {
            Some(a) => say!(
                en: "XLA needed {size} of pinned (page-locked) host memory — used for host offloading and transfers — and its limit for such memory, 64 GB unless XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB says otherwise, was reached. This is host RAM reserved for the GPU, not GPU memory.",
                zh: "XLA 需要 {size} 锁页（page-locked）主机内存——用于卸载到主机和数据传输——而它给这种内存设的上限（除非 XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB 另有设置，是 64 GB）已经用到头了。这是为 GPU 预留的主机内存（RAM），不是显存。",
                size = fmt(a)
            ),
            None => say!(
                en: "XLA needed more of pinned (page-locked) host memory — used for host offloading and transfers — and its limit for such memory, 64 GB unless XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB says otherwise, was reached. This is host RAM reserved for the GPU, not GPU memory.",
                zh: "XLA 还需要更多锁页（page-locked）主机内存——用于卸载到主机和数据传输——而它给这种内存设的上限（除非 XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB 另有设置，是 64 GB）已经用到头了。这是为 GPU 预留的主机内存（RAM），不是显存。"
            ),
        };
        out.push(verdict(
            Code::XlaHostMemoryLimit,
            say!(
                en: "XLA's pinned host-memory limit is reached (64 GB by default)",
                zh: "XLA 的锁页主机内存达到上限（默认 64 GB）"
            ),
            detail.then(program),
        ));
        return;
    }
    if let Some(a) = a.filter(|&a| BeyondGpus::of(a) == Some(BeyondGpus::Every)) {
        out.push(verdict(
            Code::RequestExceedsCapacity,
            say!(en: "One buffer is larger than any GPU", zh: "一个缓冲区就比任何 GPU 都大"),
            say!(
                en: "XLA needed one buffer of {size} ({a} bytes): more than any single GPU has. An array is far larger than intended (a shape bug, a whole dataset put on the device, an attention matrix over a very long sequence).",
                zh: "XLA 需要一个 {size}（{a} 字节）的缓冲区：比任何单块 GPU 的显存都多。某个数组比预想的大得多（形状写错、把整个数据集放上了设备、对超长序列算的注意力矩阵）。",
                size = fmt(a),
                a = a
            )
            .then(program),
        ));
        return;
    }
    if f.era == Some(Era::DeviceAllocator) {
        // "a buffer" or "1.00 GiB (1073741824 bytes)", then " on GPU N".
        let detail = match (a, f.device) {
            (Some(a), Some(d)) => say!(
                en: "XLA asked the device driver directly for {size} ({a} bytes) on GPU {d} and was refused.",
                zh: "XLA 直接向设备驱动申请 GPU {d} 上的 {size}（{a} 字节），被拒绝了。",
                size = fmt(a),
                a = a,
                d = d
            ),
            (Some(a), None) => say!(
                en: "XLA asked the device driver directly for {size} ({a} bytes) and was refused.",
                zh: "XLA 直接向设备驱动申请 {size}（{a} 字节），被拒绝了。",
                size = fmt(a),
                a = a
            ),
            (None, Some(d)) => say!(
                en: "XLA asked the device driver directly for a buffer on GPU {d} and was refused.",
                zh: "XLA 直接向设备驱动申请 GPU {d} 上的一个缓冲区，被拒绝了。",
                d = d
            ),
            (None, None) => say!(
                en: "XLA asked the device driver directly for a buffer and was refused.",
                zh: "XLA 直接向设备驱动申请一个缓冲区，被拒绝了。"
            ),
        };
        out.push(verdict(
            Code::CapacityExhausted,
            say!(
                en: "The GPU itself had no room for the buffer",
                zh: "GPU 本身已经没有空间放这个缓冲区"
            ),
            detail
                .then(say!(
                    en: "This allocator is used when preallocation is off or XLA_PYTHON_CLIENT_ALLOCATOR=platform is set, so no JAX pool stood in the way: the GPU was full — with this program's arrays, or with another process's memory.",
                    zh: "只有关掉预分配或设了 XLA_PYTHON_CLIENT_ALLOCATOR=platform 时才用这个分配器，所以中间没有 JAX 的内存池：是 GPU 满了——被这个程序的数组占满，或者被别的进程的显存占满。"
                ))
                .then(program),
        ));
        return;
    }
    let detail = match a {
        Some(a) => say!(
            en: "XLA could not get {size} ({a} bytes) in one piece.",
            zh: "XLA 没能一次拿到 {size}（{a} 字节）。",
            size = fmt(a),
            a = a
        ),
        None => say!(
            en: "XLA could not get a buffer in one piece.",
            zh: "XLA 没能一次拿到一个缓冲区。"
        ),
    };
    out.push(verdict(
        Code::XlaPreallocation,
        say!(
            en: "XLA's preallocated GPU pool had no room for the buffer",
            zh: "XLA 预分配的显存池没有空间放这个缓冲区"
        ),
        detail
            .then(say!(
                en: "On GPUs JAX serves every buffer from a pool it reserves when the first JAX operation runs — 75% of the GPU's memory by default (older releases: 90% of the memory free at that moment) — so the limit hit is that pool, not necessarily the card: up to a quarter of the GPU can lie outside it, and a second JAX or TensorFlow process on the same GPU preallocates too and fails at once.",
                zh: "在 GPU 上，JAX 的每个缓冲区都从一个内存池里分配，这个池在第一个 JAX 操作运行时预留——默认是 GPU 显存的 75%（旧版本：当时空闲显存的 90%）——所以碰到的上限是这个池，不一定是整块卡：GPU 最多有四分之一可能在池外；同一块 GPU 上的第二个 JAX 或 TensorFlow 进程也会预分配，并马上失败。"
            ))
            .then(program),
    ));
}

/// A TPU's memory (`setting::on_tpu`): none of the GPU pool's settings
/// (XLA_PYTHON_CLIENT_*) or nvidia-smi apply to it.
fn is_tpu(f: &Finding) -> bool {
    on_tpu(f)
}

pub(super) fn tpu_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    if in_vmem(f) {
        out.push(vmem_verdict(f));
        return;
    }
    if let Some(v) = tpu_free_covers_request(f) {
        out.push(v);
        return;
    }
    let s = &f.sizes;
    let what = match (f.era, s.requested_bytes, s.free_bytes) {
        (Some(Era::TpuCompile), _, _) => match (extra(f, "used_bytes"), s.total_bytes) {
            (Some(used), Some(total)) => say!(
                en: "XLA's TPU compiler found that the program needs {used} of HBM while one TPU core has {total}: it cannot run on one core as it is written; nothing ran yet.",
                zh: "XLA 的 TPU 编译器发现这个程序需要 {used} HBM，而一个 TPU 核心只有 {total}：按现在的写法它在一个核心上跑不了；还什么都没运行。",
                used = fmt(used),
                total = fmt(total)
            ),
            _ => say!(
                en: "XLA's TPU compiler found that the program needs more HBM than one TPU core has; nothing ran yet.",
                zh: "XLA 的 TPU 编译器发现这个程序需要的 HBM 比一个 TPU 核心的多；还什么都没运行。"
            ),
        },
        (_, Some(a), Some(free)) => say!(
            en: "XLA's TPU runtime asked for a buffer of {a} in a TPU core's high-bandwidth memory (HBM) and only {free} was free: the arrays already on that core (weights, optimizer state, activations) fill it.",
            zh: "XLA 的 TPU 运行时要在一个 TPU 核心的高带宽内存（HBM）里分配 {a} 的缓冲区，而只剩 {free} 空闲：这个核心上已有的数组（权重、优化器状态、激活值）把它占满了。",
            a = fmt(a),
            free = fmt(free)
        ),
        (_, Some(a), None) => say!(
            en: "XLA's TPU runtime could not allocate a buffer of {a} in a TPU core's high-bandwidth memory (HBM): the arrays already on that core fill it.",
            zh: "XLA 的 TPU 运行时没能在一个 TPU 核心的高带宽内存（HBM）里分配 {a} 的缓冲区：这个核心上已有的数组把它占满了。",
            a = fmt(a)
        ),
        _ => say!(
            en: "XLA's TPU runtime could not allocate a buffer in a TPU core's high-bandwidth memory (HBM).",
            zh: "XLA 的 TPU 运行时没能在一个 TPU 核心的高带宽内存（HBM）里分配缓冲区。"
        ),
    };
    // The writer says the same job fitted the first time: the core is not
    // too small; what the earlier run left on it holds the memory.
    if f.era != Some(Era::TpuCompile)
        && super::common::shown(f).contains(&Shown::FittedOnEarlierRun)
    {
        out.push(verdict(
            Code::MemoryGrowth,
            say!(
                en: "The same job fitted the first time: memory from the earlier run is still held",
                zh: "同样的任务第一次放得下：上一次运行占用的内存还没释放"
            ),
            what.then(say!(
                en: "The writer says it ran the first time and fails when run again, so the TPU core's memory is not too small for it. In a notebook, running the loading cells again creates new arrays while the earlier ones are still referenced (by variables, by the last outputs), so both copies sit in HBM; a process left over from the earlier run holds the TPU the same way.",
                zh: "报错的人说第一次能跑，再跑一次才失败，所以 TPU 核心的内存对它来说并不小。在 notebook 里，重新运行加载的单元会创建新的数组，而旧的数组还被引用着（被变量、被上一次的输出），于是两份都留在 HBM 里；上一次运行留下的进程也会这样占着 TPU。"
            )),
        ));
        return;
    }
    out.push(verdict(
        Code::CapacityExhausted,
        say!(
            en: "One TPU core's memory (HBM) is too small for what was put on it",
            zh: "一个 TPU 核心的内存（HBM）放不下放到它上面的东西"
        ),
        what.then(say!(
            en: "Each TPU core has its own HBM (8 GiB on a v2 core, 16 GiB or more on later ones) and the host's RAM does not count. Arrays that are not sharded, a model's weights included, are placed whole on one core.",
            zh: "每个 TPU 核心都有自己的 HBM（v2 每核 8 GiB，后来的型号 16 GiB 或更多），主机内存不算在内。没有分片的数组（包括模型权重）会整个放到一个核心上。"
        )),
    ));
}

/// The TPU runtime's headline for a failure whose figures it states in the
/// general grammar's form (`Attempting to reserve 5.88G at the bottom of
/// memory`): TPU memory, whatever program printed it.
pub(super) fn tpu_runtime_headline(f: &Finding) -> Option<Said> {
    if !on_tpu(f) {
        return None;
    }
    if in_vmem(f) {
        return Some(vmem_headline(f));
    }
    let a = fmt(f.sizes.requested_bytes?);
    Some(if f.text.contains("Attempting to reserve") {
        say!(
            en: "The TPU runtime could not reserve {a} of TPU memory (HBM) for a program",
            zh: "TPU 运行时无法为程序预留 {a} 的 TPU 内存（HBM）",
            a = a
        )
    } else {
        say!(
            en: "The TPU runtime could not allocate {a} of TPU memory (HBM)",
            zh: "TPU 运行时无法分配 {a} 的 TPU 内存（HBM）",
            a = a
        )
    })
}

/// A TPU core that had more free HBM than the request (beyond the noise)
/// but not in the one piece the runtime needed: the reading
/// `FreeCoversRequest`, in the TPU's terms. `None` for every other TPU
/// failure.
pub(super) fn tpu_free_covers_request(f: &Finding) -> Option<Verdict> {
    if !on_tpu(f) {
        return None;
    }
    let Reading::FreeCoversRequest {
        requested,
        free,
        usable,
    } = Reading::of(f, true)
    else {
        return None;
    };
    // The runtime reserves a program's memory at the bottom of the HBM.
    let at = if f.text.contains("Attempting to reserve") {
        say!(en: " at the bottom", zh: "底部")
    } else {
        Said::default()
    };
    let figures = match usable {
        Some(usable) => say_parts!(
            en: "The core had {free} free, more than the {request} the TPU runtime needed in one piece{at} of its high-bandwidth memory (HBM), but only {usable} could be reserved there: arrays already on the core (weights, inputs, results kept from earlier steps) sit inside the region the reservation needs, so the free memory is not in one usable piece.",
            zh: "这个 TPU 核心有 {free} 空闲，比 TPU 运行时需要在它的高带宽内存（HBM）{at}一次拿到的 {request} 还多，但那里只有 {usable} 能预留：核心上已有的数组（权重、输入、之前各步留下的结果）正好占在这次预留需要的区域里，所以空闲内存不成一整块。",
            request = Said::same(fmt(requested)),
            free = Said::same(fmt(free)),
            usable = Said::same(fmt(usable)),
            at = at
        ),
        None => say!(
            en: "The core had {free} free, more than the {request} the TPU runtime needed in its high-bandwidth memory (HBM): the free memory is not in one usable piece (arrays already on the core lie between the free ranges), or a limit outside the message applies.",
            zh: "这个 TPU 核心有 {free} 空闲，比 TPU 运行时需要在它的高带宽内存（HBM）里拿到的 {request} 还多：空闲内存不成一整块（核心上已有的数组隔在空闲区间之间），或者有报错之外的上限在起作用。",
            request = fmt(requested),
            free = fmt(free)
        ),
    };
    let title = match usable {
        Some(usable) => say!(
            en: "TPU memory (HBM) is fragmented: {free} free, but only {usable} reservable in one piece for {request}",
            zh: "TPU 内存（HBM）碎片化：空闲 {free}，但一整块能预留的只有 {usable}，不够 {request}",
            free = fmt(free),
            usable = fmt(usable),
            request = fmt(requested)
        ),
        None => say!(
            en: "TPU memory (HBM) is fragmented: {free} free, more than the {request} requested, but not in one piece",
            zh: "TPU 内存（HBM）碎片化：空闲 {free}，比申请的 {request} 多，但不成一整块",
            free = fmt(free),
            request = fmt(requested)
        ),
    };
    Some(verdict(
        Code::FreeExceedsRequest,
        title,
        figures.then(say!(
            en: "This is not plain capacity: the memory exists on the core.",
            zh: "这不是单纯的容量不够：内存在这个核心上是有的。"
        )),
    ))
}

/// The TPU compiler ran out of a core's vector memory (VMEM): the on-chip
/// scratch memory a kernel's tiles live in, not HBM.
fn in_vmem(f: &Finding) -> bool {
    f.facts
        .get("memory_space")
        .is_some_and(|m| m.eq_ignore_ascii_case("vmem"))
        || f.text.contains("memory space vmem")
}

/// "Used 32.42M of 16.00M vmem": what the kernel needs and the limit.
fn vmem_figures(f: &Finding) -> Option<(u64, u64)> {
    Some((extra(f, "used_bytes")?, f.sizes.total_bytes?))
}

fn vmem_headline(f: &Finding) -> Said {
    match vmem_figures(f) {
        Some((used, limit)) => say!(
            en: "A TPU kernel needs {used} of on-chip vector memory (VMEM); the compiler allows {limit}",
            zh: "一个 TPU kernel 需要 {used} 的片上向量存储（VMEM），编译器只允许 {limit}",
            used = fmt(used),
            limit = fmt(limit)
        ),
        None => say!(
            en: "A TPU kernel needs more on-chip vector memory (VMEM) than the compiler allows",
            zh: "一个 TPU kernel 需要的片上向量存储（VMEM）超过了编译器允许的上限"
        ),
    }
}

fn vmem_verdict(f: &Finding) -> Verdict {
    let figures = match vmem_figures(f) {
        Some((used, limit)) => say!(
            en: "XLA's TPU compiler found that one kernel's working set needs {used} of VMEM where {limit} is allowed; nothing ran yet.",
            zh: "XLA 的 TPU 编译器发现某个 kernel 的工作集需要 {used} VMEM，而上限是 {limit}；还什么都没运行。",
            used = fmt(used),
            limit = fmt(limit)
        ),
        None => say!(
            en: "XLA's TPU compiler found that one kernel's working set does not fit in VMEM; nothing ran yet.",
            zh: "XLA 的 TPU 编译器发现某个 kernel 的工作集放不进 VMEM；还什么都没运行。"
        ),
    };
    verdict(
        Code::SharedMemoryLimit,
        say!(
            en: "A kernel's tiles do not fit the TPU core's vector memory (VMEM)",
            zh: "kernel 的 tile 放不进 TPU 核心的向量存储（VMEM）"
        ),
        figures.then(say!(
            en: "VMEM is a TPU core's small on-chip memory (tens of MiB) where a kernel's blocks are staged, not its HBM: the size of the blocks a kernel works on and the compiler's scoped-VMEM limit decide this, so a smaller batch, sharding or freeing HBM need not help.",
            zh: "VMEM 是 TPU 核心上很小的片上存储（几十 MiB），kernel 处理的 block 先放在这里，它不是 HBM：决定这个错误的是 kernel 每次处理的 block 大小和编译器的 scoped VMEM 上限，所以减小 batch、分片或腾出 HBM 都不一定有用。"
        )),
    )
}

/// A Pallas kernel's block shapes and its own VMEM limit.
const VMEM_SMALLER_BLOCKS: FixSpec = FixSpec::new(
    "tpu-kernel-smaller-blocks",
    "Give the kernel smaller blocks or a higher VMEM limit",
    "给 kernel 更小的 block，或调高它的 VMEM 上限",
)
.sources(&["JAX documentation: Pallas TPU (BlockSpec, jax.experimental.pallas.tpu.CompilerParams vmem_limit_bytes)"]);

/// libtpu's scoped-VMEM limit for XLA's own fusions.
const VMEM_COMPILER_LIMIT: FixSpec = FixSpec::new(
    "tpu-compiler-scoped-vmem-limit",
    "Raise the TPU compiler's scoped-VMEM limit",
    "调高 TPU 编译器的 scoped VMEM 上限",
)
.sources(&["libtpu flag --xla_tpu_scoped_vmem_limit_kib (LIBTPU_INIT_ARGS)"]);

/// Keras's distribution API, JAX's shardings and PyTorch/XLA's SPMD all
/// spread arrays over a TPU's cores.
const TPU_SHARD: FixSpec = FixSpec::new(
    "tpu-shard-across-cores",
    "Shard the model across the TPU cores",
    "把模型分片到各个 TPU 核心上",
)
.cost(Cost::Free)
.sources(&[
    "Keras documentation: keras.distribution (ModelParallel, DeviceMesh, LayoutMap)",
    "JAX documentation: Distributed arrays and automatic parallelization (jax.sharding)",
    "PyTorch/XLA documentation: SPMD (torch_xla.distributed.spmd)",
])
.not_first_when(&[Shown::FittedOnEarlierRun]);

/// Frees what an earlier run left on the TPU: a fresh process, or the
/// references dropped. `jax.live_arrays()` lists what is still on the
/// device.
const TPU_FREE_EARLIER_RUN: FixSpec = FixSpec::new(
    "tpu-free-earlier-run",
    "Free what the earlier run left on the TPU",
    "释放上一次运行留在 TPU 上的东西",
)
.cost(Cost::Free)
.sources(&["JAX documentation: jax.live_arrays, jax.Array.delete, jax.clear_caches"]);

const TPU_SMALLER: FixSpec = FixSpec::new(
    "tpu-smaller-model-or-work",
    "Use a smaller or quantised model, or less work per step",
    "换更小或量化的模型，或者每步少做一些",
)
.cost(Cost::Quality)
.sources(&["Keras documentation: Model.quantize (int8)"])
.not_first_when(&[Shown::FittedOnEarlierRun]);

/// Fewer arrays alive on the core when a program is placed: what a
/// fragmented HBM needs first.
const TPU_FEWER_LIVE_ARRAYS: FixSpec = FixSpec::new(
    "tpu-fewer-live-arrays",
    "Keep fewer arrays alive on the TPU, or restart it",
    "让留在 TPU 上的数组少一些，或者重启",
)
.cost(Cost::Free);

/// Which TPU stacks the finding shows, for naming only their APIs.
struct TpuStack {
    keras: bool,
    jax: bool,
    torch_xla: bool,
    tensorflow: bool,
}

impl TpuStack {
    fn of(f: &Finding) -> TpuStack {
        let framework = Framework::of(f);
        let keras = shows_keras(f);
        let torch_xla = shows_torch_xla(f);
        TpuStack {
            keras,
            jax: framework == Framework::Jax,
            torch_xla,
            tensorflow: framework == Framework::TensorFlow && !keras && !torch_xla,
        }
    }
    /// Nothing names the stack: the advice names JAX's and PyTorch/XLA's
    /// APIs, never Keras's.
    fn unknown(&self) -> bool {
        !(self.keras || self.jax || self.torch_xla || self.tensorflow)
    }
}

/// " Keras (JAX backend): ...; JAX: ...": the APIs of the stacks shown.
fn shard_how(stack: &TpuStack) -> Said {
    let mut how = say!(
        en: "A TPU host has several cores (8 on a v2-8 or v3-8), each with its own HBM; an array that is not sharded is placed whole on one core.",
        zh: "一台 TPU 主机有多个核心（v2-8 或 v3-8 上是 8 个），每个都有自己的 HBM；没有分片的数组会整个放到一个核心上。"
    );
    if stack.keras {
        how = how.then(say!(
            en: "Keras (JAX backend): set keras.distribution.ModelParallel with a DeviceMesh and a LayoutMap (KerasHub backbones provide get_layout_map) before from_preset, so the weights are split over the cores.",
            zh: "Keras（JAX 后端）：在 from_preset 之前设置 keras.distribution.ModelParallel，配上 DeviceMesh 和 LayoutMap（KerasHub 的 backbone 提供 get_layout_map），权重就会分到各个核心上。"
        ));
    }
    if stack.jax || stack.unknown() {
        how = how.then(say!(
            en: "JAX: place the parameters with jax.sharding.NamedSharding over a Mesh of all cores (a program's own mesh setting, such as a mesh_dim flag, does the same).",
            zh: "JAX：用覆盖所有核心的 Mesh 上的 jax.sharding.NamedSharding 放置参数（程序自己的 mesh 设置，比如 mesh_dim 参数，效果相同）。"
        ));
    }
    if stack.torch_xla || stack.unknown() {
        how = how.then(say!(
            en: "PyTorch/XLA: its SPMD sharding (torch_xla.distributed.spmd) or FSDP.",
            zh: "PyTorch/XLA：用它的 SPMD 分片（torch_xla.distributed.spmd）或 FSDP。"
        ));
    }
    if stack.tensorflow || stack.unknown() {
        how = how.then(say!(
            en: "TensorFlow: TPUStrategy copies the whole model onto every core, so the weights must fit one core; splitting them needs model parallelism (DTensor).",
            zh: "TensorFlow：TPUStrategy 会把整个模型复制到每个核心上，所以权重必须放得进一个核心；要拆分权重需要模型并行（DTensor）。"
        ));
    }
    how
}

/// A smaller model or less work per step, in the APIs of the stacks shown.
fn smaller_how(stack: &TpuStack) -> Said {
    let quantise = if stack.keras {
        say!(en: " (Keras 3: model.quantize(\"int8\"))", zh: "（Keras 3：model.quantize(\"int8\")）")
    } else {
        Said::default()
    };
    let remat = if stack.tensorflow {
        say!(en: "tf.recompute_grad", zh: "tf.recompute_grad")
    } else if stack.torch_xla && !stack.jax {
        say!(en: "torch.utils.checkpoint", zh: "torch.utils.checkpoint")
    } else {
        say!(en: "jax.checkpoint (remat)", zh: "jax.checkpoint（remat）")
    };
    say_parts!(
        en: "A smaller model or preset, weights in bfloat16 or quantised to int8{quantise}; for the activations, a smaller batch, shorter sequences and {remat} around blocks.",
        zh: "换更小的模型或预设，权重用 bfloat16 或量化成 int8{quantise}；对激活值，减小 batch、缩短序列，并用 {remat} 包住各个块。",
        quantise = quantise,
        remat = remat
    )
}

pub(super) fn tpu_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if in_vmem(f) {
        out.push(fix(
            &VMEM_SMALLER_BLOCKS,
            say!(
                en: "If the kernel is a Pallas kernel (yours or a library's: attention, matmul, MoE kernels), give it smaller block shapes in its BlockSpecs (a smaller tile per grid step), or raise its scoped-VMEM limit with compiler_params=pltpu.CompilerParams(vmem_limit_bytes=...), up to what the chip's VMEM holds.",
                zh: "如果出问题的是 Pallas kernel（你自己的，或库里的注意力、矩阵乘、MoE kernel），就把它 BlockSpec 里的 block 形状调小（每个 grid 步处理更小的 tile），或者用 compiler_params=pltpu.CompilerParams(vmem_limit_bytes=...) 调高它的 scoped VMEM 上限，但不能超过芯片 VMEM 的容量。"
            ),
        ));
        out.push(fix(
            &VMEM_COMPILER_LIMIT,
            say!(
                en: "For XLA's own fused operations, the compiler's scoped-VMEM limit is a libtpu flag: LIBTPU_INIT_ARGS=--xla_tpu_scoped_vmem_limit_kib=N, set before the process starts. Updating JAX or PyTorch/XLA and libtpu can also change how the operation is tiled.",
                zh: "对 XLA 自己融合出来的操作，编译器的 scoped VMEM 上限是 libtpu 的参数：在进程启动前设置 LIBTPU_INIT_ARGS=--xla_tpu_scoped_vmem_limit_kib=N。升级 JAX 或 PyTorch/XLA 以及 libtpu，也可能改变这个操作的切分方式。"
            ),
        ));
        return;
    }
    let stack = TpuStack::of(f);
    if f.era != Some(Era::TpuCompile)
        && super::common::shown(f).contains(&Shown::FittedOnEarlierRun)
    {
        out.push(fix(
            &TPU_FREE_EARLIER_RUN,
            say!(
                en: "Restart the runtime (the notebook's kernel) and run the job once, without running the loading cells a second time. In JAX, to stay in the same process, drop the earlier run's arrays instead: `del` the variables that hold its parameters and outputs, then `gc.collect()`; `jax.live_arrays()` lists what is still on the device, and `jax.clear_caches()` drops compiled programs as well. Then check that no other process holds the TPU.",
                zh: "重启运行时（notebook 的内核），只运行一次任务，不要再运行一遍加载的单元。在 JAX 里如果要留在同一个进程里，就释放上一次运行的数组：`del` 掉持有它的参数和输出的变量，再 `gc.collect()`；`jax.live_arrays()` 会列出还在设备上的数组，`jax.clear_caches()` 还会丢掉已编译的程序。然后确认没有别的进程占着 TPU。"
            ),
        ));
    }
    let shard = fix(&TPU_SHARD, shard_how(&stack));
    let smaller = fix(&TPU_SMALLER, smaller_how(&stack));
    if matches!(Reading::of(f, true), Reading::FreeCoversRequest { .. }) {
        out.push(fix(
            &TPU_FEWER_LIVE_ARRAYS,
            say!(
                en: "The memory is there but not in one piece: keep fewer arrays alive on the TPU when the program is placed (drop references to results and earlier batches you no longer need, move metrics to the host, do not keep a second copy of the weights), and restart the process to begin from an empty HBM. A smaller batch also shrinks what the program needs in one piece.",
                zh: "内存是有的，只是不成一整块：放置程序时让留在 TPU 上的数组少一些（不再需要的结果和之前的 batch 就去掉引用，把指标移到主机上，不要保留第二份权重），并重启进程，从空的 HBM 开始。更小的 batch 也能让程序需要的那一整块变小。"
            ),
        ));
        out.push(smaller);
        return;
    }
    // A TPU host has several cores (every slice but the one-chip v5e-1
    // and v6e-1, which no message names): spreading the arrays over them
    // comes before shrinking the work, for a buffer being placed and for
    // the compiler's estimate alike. Only TensorFlow, whose TPUStrategy
    // copies the whole model onto every core, makes less work per step
    // come first.
    let shard_first = !stack.tensorflow || f.era != Some(Era::TpuCompile);
    if shard_first {
        out.push(shard);
        out.push(smaller);
    } else {
        out.push(smaller);
        out.push(shard);
    }
}

/// `XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB`: read by XLA's GPU client, which
/// JAX and TensorFlow embed.
const RAISE_HOST_LIMIT: FixSpec = FixSpec::new(
    "xla-raise-host-memory-limit",
    "Raise XLA's pinned host-memory limit",
    "调高 XLA 的锁页主机内存上限",
)
.frameworks(&[Framework::Jax, Framework::TensorFlow])
.sources(&["XLA's GPU client (XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB), named by the message"]);

/// Host RAM, container limits and `ulimit -l` bound page-locked memory
/// (cuMemHostAlloc).
const CHECK_HOST_PINNED: FixSpec = FixSpec::new(
    "check-host-ram-for-pinned-memory",
    "Free host RAM for pinned memory",
    "为锁页内存腾出主机内存",
)
.sources(&["CUDA Driver API: cuMemHostAlloc (page-locked host memory)"]);

/// Smaller staging buffers for host-GPU copies.
const SMALLER_HOST_TRANSFERS: FixSpec = FixSpec::new(
    "smaller-host-transfers",
    "Make host transfers smaller",
    "减小主机传输的数据量",
)
.cost(Cost::Speed);

const OFFLOAD_LESS: FixSpec = FixSpec::new(
    "xla-offload-less",
    "Offload less to the host",
    "少往主机卸载一些",
)
.cost(Cost::Speed);

const MEM_FRACTION: FixSpec = FixSpec::new(
    "jax-mem-fraction",
    "Give XLA's pool more of the GPU",
    "让 XLA 的内存池占 GPU 更大的比例",
)
.frameworks(&[Framework::Jax])
.sources(&["JAX documentation: GPU memory allocation (XLA_PYTHON_CLIENT_MEM_FRACTION)"]);

const NO_PREALLOCATE: FixSpec = FixSpec::new(
    "jax-no-preallocate",
    "Allocate on demand when processes share the GPU",
    "多个进程共用 GPU 时按需分配",
)
.frameworks(&[Framework::Jax])
.sources(&["JAX documentation: GPU memory allocation (XLA_PYTHON_CLIENT_PREALLOCATE, XLA_PYTHON_CLIENT_ALLOCATOR)"]);

const LESS_MEMORY: FixSpec = FixSpec::new(
    "jax-computation-less-memory",
    "Make the computation need less memory",
    "让计算需要更少的显存",
)
.frameworks(&[Framework::Jax])
.cost(Cost::Speed)
.sources(&["JAX documentation: jax.checkpoint, buffer donation (donate_argnums)"]);

/// Same title as the CUDA runtime family's; here it names nvidia-smi.
const WHAT_ELSE_HOLDS_GPU: FixSpec = FixSpec::new(
    "xla-check-what-else-holds-gpu",
    "Check what else holds the GPU",
    "检查还有什么占着 GPU",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

const BUFFER_REPORT: FixSpec = FixSpec::new(
    "xla-read-buffer-report",
    "Read XLA's buffer report",
    "看 XLA 的缓冲区报告",
)
.cost(Cost::Look);

fn xla_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if f.era == Some(Era::Host) {
        out.push(fix(
            &RAISE_HOST_LIMIT,
            say!(
                en: "export XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB=128 (or what the machine can spare) before starting, as the message says; the default is 64 GB.",
                zh: "照报错说的，在启动前 export XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB=128（或机器腾得出的大小）；默认是 64 GB。"
            ),
        ));
        out.push(fix(
            &OFFLOAD_LESS,
            say!(
                en: "Reduce what is offloaded to host memory (host-offloaded activations or optimizer state, large device-to-host transfers held at once).",
                zh: "减少卸载到主机内存的东西（卸载到主机的激活值或优化器状态、同时保留的大块设备到主机传输）。"
            ),
        ));
        return;
    }
    // The computation needing less helps on every JAX and comes first: a
    // JAX that already preallocates 90% gains nothing from ".90", and no
    // message dates a 75% pool, so ".90" is offered with its condition.
    out.push(less_memory());
    if f.era != Some(Era::DeviceAllocator) {
        if pool_default(f) == PoolDefault::Undated {
            out.push(fix(
                &MEM_FRACTION,
                say!(
                    en: "On a JAX from mid-2023 on, whose pool is 75% of the GPU by default, export XLA_PYTHON_CLIENT_MEM_FRACTION=.90 before JAX starts makes it 90%; leave some room for the CUDA context and libraries. The message does not date its JAX: an older one already preallocates 90%, and then this changes nothing.",
                    zh: "如果是 2023 年年中以后的 JAX（池默认是 GPU 的 75%），在 JAX 启动前 export XLA_PYTHON_CLIENT_MEM_FRACTION=.90 就能把它调到 90%；给 CUDA 上下文和各种库留一些空间。报错看不出 JAX 的版本：更早的版本本来就预分配 90%，那样这一步没有用。"
                ),
            ));
        }
        out.push(no_preallocate());
    }
    if f.era == Some(Era::DeviceAllocator) {
        out.push(fix(
            &WHAT_ELSE_HOLDS_GPU,
            say!(
                en: "Run nvidia-smi: another process, or another framework in this process (PyTorch's or TensorFlow's cache), may hold the memory XLA asked for.",
                zh: "运行 nvidia-smi：可能是别的进程，或者这个进程里的另一个框架（PyTorch 或 TensorFlow 的缓存）占着 XLA 要的显存。"
            ),
        ));
    }
    if f.text.contains("BufferAssignment") {
        out.push(fix(
            &BUFFER_REPORT,
            say!(
                en: "The lines after `BufferAssignment OOM Debugging.` list the program's largest buffers (Peak buffers) with shapes and the operations that create them: that is where the memory goes.",
                zh: "`BufferAssignment OOM Debugging.` 之后的几行列出了程序里最大的缓冲区（Peak buffers）、它们的形状和产生它们的操作：显存就花在这些地方。"
            ),
        ));
    }
}

/// What the message tells of the jaxlib's preallocated pool. JAX's default
/// was 90% (of the free memory, from jaxlib 0.4.1 of the total) until
/// mid-2023, 75% since (JAX documentation: GPU memory allocation; its
/// changelog): no message form dates a 75% pool, an old log line dates a
/// 90% one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PoolDefault {
    /// An old jaxlib (detect/xla.rs reads it from the message's line).
    Ninety,
    /// Nothing dates it.
    Undated,
}

fn pool_default(f: &Finding) -> PoolDefault {
    if f.version_hint.as_deref() == Some(crate::detect::xla::OLD_JAXLIB) {
        PoolDefault::Ninety
    } else {
        PoolDefault::Undated
    }
}

fn no_preallocate() -> Fix {
    fix(
        &NO_PREALLOCATE,
        say!(
            en: "export XLA_PYTHON_CLIENT_PREALLOCATE=false: JAX then allocates as needed instead of reserving a pool at start, so several processes (or JAX beside PyTorch/TensorFlow) can share a GPU; it is more prone to fragmentation. XLA_PYTHON_CLIENT_ALLOCATOR=platform allocates and frees exactly — very slow, for debugging OOMs only.",
            zh: "export XLA_PYTHON_CLIENT_PREALLOCATE=false：JAX 就会按需分配，而不是一启动就预留一个池，这样多个进程（或 JAX 和 PyTorch/TensorFlow）可以共用一块 GPU；但更容易产生碎片。XLA_PYTHON_CLIENT_ALLOCATOR=platform 会按需精确地分配和释放——非常慢，只用于排查 OOM。"
        ),
    )
}

fn less_memory() -> Fix {
    fix(
        &LESS_MEMORY,
        say!(
            en: "Reduce the batch size; rematerialise activations with jax.checkpoint (jax.remat) around blocks; donate input buffers with jax.jit(..., donate_argnums=...) so outputs reuse them; keep parameters and activations in bfloat16.",
            zh: "减小 batch size；用 jax.checkpoint（jax.remat）包住各个块，重算激活值；用 jax.jit(..., donate_argnums=...) 捐出输入缓冲区，让输出复用它们；参数和激活值用 bfloat16。"
        ),
    )
}

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    CHECK_HOST_PINNED,
    SMALLER_HOST_TRANSFERS,
    RAISE_HOST_LIMIT,
    OFFLOAD_LESS,
    MEM_FRACTION,
    NO_PREALLOCATE,
    LESS_MEMORY,
    WHAT_ELSE_HOLDS_GPU,
    BUFFER_REPORT,
    TPU_SHARD,
    TPU_FREE_EARLIER_RUN,
    TPU_SMALLER,
    TPU_FEWER_LIVE_ARRAYS,
    VMEM_SMALLER_BLOCKS,
    VMEM_COMPILER_LIMIT,
];

#[cfg(test)]
mod tests {
    use crate::explain::test_support::fix_ids as ids;

    /// jaxlib's embedded stream executor failing cuMemHostAlloc
    /// (fixtures/wild/2127.txt: `failed to alloc N bytes on host`, `could
    /// not allocate pinned host memory`) is host RAM: the host fixes, no
    /// GPU preallocation advice. Its `bytes unified memory` sibling
    /// (fixtures/wild/2018.txt) stays a GPU allocation.
    #[test]
    fn pinned_host_memory_is_host_ram() {
        let host = crate::decode_str(include_str!("../../../../fixtures/wild/2127.txt"));
        let f = &host[0];
        let d = &f.diagnosis;
        assert_eq!(d.fixes[0].id, "check-host-ram-for-pinned-memory");
        assert!(d.fixes[0].how.contains("ulimit -l"));
        let all: String = d.fixes.iter().map(|x| x.how.clone()).collect();
        assert!(!all.contains("TF_FORCE_GPU_ALLOW_GROWTH"), "{all}");
        assert!(!all.contains("XLA_PYTHON_CLIENT_PREALLOCATE"), "{all}");
        assert!(d.verdicts[0].title.contains("not GPU memory"));
        assert!(d.verdicts[0]
            .zh
            .as_ref()
            .unwrap()
            .title
            .contains("不是显存"));
        let unified = crate::decode_str(include_str!("../../../../fixtures/wild/2018.txt"));
        let u = unified
            .iter()
            .find(|f| f.text.contains("unified memory"))
            .unwrap();
        assert_ne!(u.diagnosis.fixes[0].id, "check-host-ram-for-pinned-memory");
        assert!(!u.diagnosis.verdicts[0].title.contains("not GPU memory"));
    }

    /// A 2019 jaxlib's log line (a JAX issue paste, fixtures/wild): its
    /// pool is already 90%, so ".90" is not offered; a current jaxlib's
    /// line (fixtures/wild) still gets it.
    #[test]
    fn no_ninety_percent_for_a_jaxlib_that_already_preallocates_it() {
        let old = ids("2019-06-13 01:17:08.886805: E external/org_tensorflow/tensorflow/compiler/xla/python/local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out of memory while trying to allocate 5520758552 bytes.");
        assert!(!ids_have(&old, "jax-mem-fraction"), "{old:?}");
        let new = ids("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.");
        assert!(ids_have(&new, "jax-mem-fraction"), "{new:?}");
    }

    /// The TPU runtime's buffer form (KerasNLP loading Gemma on a TPU VM,
    /// fixtures/wild/1423.txt) and the TPU compiler's (fixtures/wild/214.txt)
    /// are TPU memory: no GPU pool setting, no nvidia-smi. A buffer being
    /// placed is spread over the cores first; a step's program is made
    /// smaller first. A GPU's XLA message keeps the GPU's fixes.
    #[test]
    fn tpu_memory_gets_tpu_fixes() {
        let buffer = include_str!("../../../../fixtures/wild/1423.txt");
        let f = &crate::decode_str(buffer)[0];
        assert_eq!(f.kind, crate::record::Kind::XlaOom);
        assert_eq!(f.sizes.free_bytes, Some(2_469_606_195));
        assert!(
            f.diagnosis.headline.contains("TPU"),
            "{}",
            f.diagnosis.headline
        );
        assert_eq!(
            ids(buffer),
            ["tpu-shard-across-cores", "tpu-smaller-model-or-work"]
        );
        // The compiler's estimate on a host whose stack the message does
        // not name: a TPU host has several cores, spreading comes first.
        let compile = include_str!("../../../../fixtures/wild/214.txt");
        assert_eq!(
            ids(compile),
            ["tpu-shard-across-cores", "tpu-smaller-model-or-work"]
        );
        let gpu = ids("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.");
        assert!(!gpu.iter().any(|x| x.starts_with("tpu-")), "{gpu:?}");
        assert!(ids_have(&gpu, "jax-no-preallocate"), "{gpu:?}");
    }

    /// No message dates a 75% pool: making the computation smaller leads
    /// whatever the jaxlib; ".90" follows with its condition, and not at
    /// all for an old jaxlib's line.
    #[test]
    fn the_computation_leads_whatever_the_jaxlib() {
        for text in [
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.",
            "2019-06-13 01:17:08.886805: E external/org_tensorflow/tensorflow/compiler/xla/python/local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out of memory while trying to allocate 5520758552 bytes.",
        ] {
            assert_eq!(ids(text)[0], "jax-computation-less-memory", "{text}");
        }
    }

    /// JAX on a TPU v3-8 (LWM, fixtures/wild/1646.txt): the compiler found
    /// 21.95G for a 15.48G core. Sharding over the eight cores comes first,
    /// and no Keras API is named for a run that shows no Keras.
    #[test]
    fn a_multi_core_tpu_shards_before_shrinking() {
        let lwm = include_str!("../../../../fixtures/wild/1646.txt");
        let f = &crate::decode_str(lwm)[0];
        assert_eq!(f.diagnosis.fixes[0].id, "tpu-shard-across-cores");
        for fix in &f.diagnosis.fixes {
            assert!(!fix.how.contains("Keras"), "{}: {}", fix.id, fix.how);
        }
        // The runtime's buffer form (fixtures/wild/1423.txt): the same order;
        // its message names no stack, so JAX's and PyTorch/XLA's APIs are
        // named, not Keras's (KerasNLP shows only in the prose above it).
        let buffer = crate::decode_str(include_str!("../../../../fixtures/wild/1423.txt"));
        let how = &buffer[0].diagnosis.fixes[0].how;
        assert!(how.contains("jax.sharding.NamedSharding"), "{how}");
        assert!(!how.contains("Keras"), "{how}");
    }

    /// XLA:TPU's compile-time VMEM overflow (a PyTorch/XLA issue paste,
    /// fixtures/wild/1802.txt): a kernel's tiles and the compiler's scoped
    /// limit, not HBM and not the batch; nothing says GPU or Ampere.
    #[test]
    fn a_vmem_overflow_is_a_kernel_s_tiling() {
        let paste = include_str!("../../../../fixtures/wild/1802.txt");
        let f = &crate::decode_str(paste)[0];
        assert!(
            f.diagnosis.headline.contains("VMEM"),
            "{}",
            f.diagnosis.headline
        );
        assert!(
            f.diagnosis.headline.contains("32.42 MiB"),
            "{}",
            f.diagnosis.headline
        );
        assert_eq!(f.diagnosis.verdicts[0].code, "shared_memory_limit");
        assert_eq!(
            ids(paste),
            [
                "tpu-kernel-smaller-blocks",
                "tpu-compiler-scoped-vmem-limit"
            ]
        );
        let all = format!(
            "{} {}",
            f.diagnosis.verdicts[0].detail,
            f.diagnosis
                .fixes
                .iter()
                .map(|x| x.how.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        );
        for gpu_word in ["GPU", "Ampere", "nvidia-smi"] {
            assert!(!all.contains(gpu_word), "{gpu_word}: {all}");
        }
        // The same compiler's HBM estimate stays an HBM verdict.
        let hbm = include_str!("../../../../fixtures/wild/214.txt");
        assert_eq!(ids(hbm)[0], "tpu-shard-across-cores");
    }

    fn ids_have(ids: &[String], id: &str) -> bool {
        ids.iter().any(|x| x == id)
    }
}
