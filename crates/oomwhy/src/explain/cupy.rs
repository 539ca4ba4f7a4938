//! CuPy's memory pool out-of-memory, with or without a pool limit.

use super::catalogue::{Cost, FixSpec};
use super::common::{
    extra, fix, format_derived, framework_fixes, row, verdict, BeyondGpus, FieldRow, Reading,
};
use super::docs::Code;
use super::setting::Framework;
use super::Explain;
use crate::i18n::Said;
use crate::record::{Diagnosis, Era, Finding, Fix, Verdict};
use crate::say;
use crate::units::format_size as fmt;

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
                if f.era == Some(Era::Legacy) {
                    say!(
                        en: "CuPy's pool total after it released its cached free blocks and retried (the message's total minus the request): mostly arrays the program still held",
                        zh: "CuPy 释放缓存的空闲块并重试之后内存池的总量（报错里的 total 减去这次申请）：大部分是程序仍然持有的数组"
                    )
                } else {
                    say!(
                        en: "CuPy's pool total (in use plus cached free blocks) when the request came in, before CuPy released its cache and retried: it can exceed what CuPy held at the failure",
                        zh: "申请到来时 CuPy 内存池的总量（在用的加上缓存着的空闲块），在 CuPy 释放缓存并重试之前：可能比失败时 CuPy 实际占用的多"
                    )
                },
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
                    format_derived(i128::from(l) - i128::from(m), &[l, m]),
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
        let shared = other_framework_in_process(f);
        let training = in_training_loop(f);
        framework_fixes(d, out, |has, out| {
            cupy_fixes(has, one_array, shared, training, out)
        })
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
        (Some(n), Some(m)) => {
            let when = if f.era == Some(Era::Legacy) {
                say!(
                    en: "CuPy's pool still held {held} after giving back its cached blocks, and the GPU could not provide {needed} more. Before raising, CuPy released the pool's cached free blocks and retried, then ran Python's garbage collector and retried again; this form's total is counted after that, so the {held} is mostly arrays the program still references.",
                    zh: "CuPy 把缓存的块还回去之后，内存池仍占着 {held}，GPU 再也给不出 {needed}。报错之前，CuPy 先释放了池里缓存的空闲块并重试，又运行了 Python 的垃圾回收再重试；这种报错的 total 是在这之后统计的，所以这 {held} 大部分是程序还在引用的数组。",
                    held = fmt(m),
                    needed = fmt(n)
                )
            } else {
                say!(
                    en: "CuPy's pool held {held} (arrays in use plus cached free blocks) when it needed {needed} more. Before raising, CuPy released the pool's cached free blocks and retried, then ran Python's garbage collector, released them again and retried, so the GPU could not provide {needed} even with the cache given back.",
                    zh: "需要再分配 {needed} 时，CuPy 的内存池已占用 {held}（在用的数组加上缓存着的空闲块）。报错之前，CuPy 先释放了池里缓存的空闲块并重试，又运行了 Python 的垃圾回收、再次释放并重试，缓存都还回去了，GPU 仍然给不出 {needed}。",
                    held = fmt(m),
                    needed = fmt(n)
                )
            };
            let outside = if other_framework_in_process(f) {
                say!(
                    en: "Memory held outside CuPy's pool — the other framework's cache in this process, the CUDA context, other processes — is not counted in the {held}, and CuPy cannot release it.",
                    zh: "CuPy 池之外占用的显存——这个进程里另一个框架的缓存、CUDA 上下文、其他进程——不算在这 {held} 里，CuPy 也释放不了。",
                    held = fmt(m)
                )
            } else {
                say!(
                    en: "Memory held outside CuPy's pool — the CUDA context, other processes on the GPU — is not counted in the {held}.",
                    zh: "CuPy 池之外占用的显存——CUDA 上下文、这块 GPU 上的其他进程——不算在这 {held} 里。",
                    held = fmt(m)
                )
            };
            when.then(outside)
        }
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
    "Free the other framework's cache and cap CuPy's pool",
    "释放另一个框架的缓存，并给 CuPy 的内存池设上限",
)
.frameworks(&[Framework::CuPy])
.sources(&["CuPy documentation: Memory Management"]);

const SMALLER_PIECES: FixSpec = FixSpec::new(
    "cupy-process-in-pieces",
    "Process in smaller pieces and drop arrays you no longer need",
    "分成更小的块处理，并释放不再需要的数组",
)
.frameworks(&[Framework::CuPy])
.cost(Cost::Speed)
.sources(&["CuPy documentation: Memory Management (MemoryPool.used_bytes, total_bytes)"]);

/// Frameworks with their own GPU cache that CuPy's retry cannot reach:
/// the package names as their tracebacks and messages print them.
const OTHER_FRAMEWORKS: &[&str] = &["torch", "pytorch", "tensorflow", "keras", "jax", "jaxlib"];

/// True when another framework with its own GPU cache (PyTorch, TensorFlow,
/// JAX) shows in the finding: its traceback, its message or its exception.
/// Only then can releasing CuPy's cache leave room for the other one, or
/// the other one's cache be what CuPy could not get: CuPy itself frees its
/// pool's cached blocks and retries before it raises (`_try_malloc`), so
/// for a process that runs CuPy alone that release has already happened.
fn other_framework_in_process(f: &Finding) -> bool {
    let names_one = |text: &str| {
        text.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| OTHER_FRAMEWORKS.contains(&word.to_ascii_lowercase().as_str()))
    };
    let in_traceback = f.traceback.as_ref().is_some_and(|tb| {
        tb.frames
            .iter()
            .chain(tb.chained.iter().flat_map(|c| c.frames.iter()))
            .any(|fr| names_one(&fr.file) || fr.code.as_deref().is_some_and(names_one))
    });
    in_traceback || names_one(&f.text) || f.exception.as_deref().is_some_and(names_one)
}

const TRAINING_BATCH_SIZE: FixSpec = FixSpec::new(
    "cupy-training-batch-size",
    "Reduce the batch size",
    "减小 batch size",
)
.frameworks(&[Framework::CuPy])
.cost(Cost::Speed)
.sources(&["Chainer documentation: Trainer, StandardUpdater, SerialIterator"]);

/// Directories of training loops that allocate through CuPy's pool, as a
/// traceback shows them (Chainer's Trainer and Updaters): each update holds
/// one mini-batch's activations, so the batch size is the lever.
const CUPY_TRAINING_LOOPS: &[&str] = &["/chainer/training/"];

fn in_training_loop(f: &Finding) -> bool {
    f.traceback.as_ref().is_some_and(|tb| {
        tb.frames
            .iter()
            .chain(tb.chained.iter().flat_map(|c| c.frames.iter()))
            .map(|fr| fr.file.replace('\\', "/").to_ascii_lowercase())
            .any(|file| CUPY_TRAINING_LOOPS.iter().any(|dir| file.contains(dir)))
    })
}

fn cupy_fixes(
    has: &dyn Fn(Code) -> bool,
    one_array: bool,
    shared: bool,
    training: bool,
    out: &mut Vec<Fix>,
) {
    // In a training loop one update holds a mini-batch: its size leads,
    // unless one array is itself the GPU or a cap or another cache binds.
    if training && !one_array && !shared && !has(Code::MemoryLimit) {
        out.push(fix(
            &TRAINING_BATCH_SIZE,
            say!(
                en: "The traceback runs through Chainer's training loop (Trainer → Updater): each update holds one mini-batch's arrays and activations. Halve the batch size given to the iterator (SerialIterator(dataset, batch_size) or MultiprocessIterator), or shorten the inputs (image size, sequence length).",
                zh: "调用栈经过 Chainer 的训练循环（Trainer → Updater）：每次更新都要占着一个 mini-batch 的数组和激活值。把传给 iterator 的 batch size 减半（SerialIterator(dataset, batch_size) 或 MultiprocessIterator），或者缩小输入（图片尺寸、序列长度）。"
            ),
        ));
    }
    let pieces = fix(
        &SMALLER_PIECES,
        if has(Code::MemoryLimit) {
            say!(
                en: "Work on the data in chunks (a few rows or tiles at a time), delete intermediate arrays (del x) as soon as they are done, and prefer in-place operations (out= arguments) for large arrays.",
                zh: "分块处理数据（一次几行或几块），中间数组用完马上删掉（del x），大数组尽量用原地操作（out= 参数）。"
            )
        } else {
            say!(
            en: "CuPy already gave its cached blocks back and retried before raising, so what fills the GPU is arrays the program still references (or other processes: check nvidia-smi). Work on the data in chunks (a few rows or tiles at a time), drop references to arrays you no longer need (del x; results kept in lists or dicts stay alive), and prefer in-place operations (out= arguments) for large arrays; cupy.get_default_memory_pool().used_bytes() before the failing step shows how much is still live.",
            zh: "CuPy 报错之前已经把缓存的块还回去并重试过了，所以占满 GPU 的是程序还在引用的数组（或者其他进程：用 nvidia-smi 查看）。分块处理数据（一次几行或几块），不再需要的数组及时去掉引用（del x；存在列表或字典里的结果会一直占着），大数组尽量用原地操作（out= 参数）；在出错那一步之前打印 cupy.get_default_memory_pool().used_bytes()，可以看到还有多少显存被数组占着。"
            )
        },
    );
    // Pieces lead unless a pool limit or another framework's cache is the
    // first thing to fix; otherwise they come last.
    let pieces_first = (one_array || !shared) && !has(Code::MemoryLimit);
    if pieces_first {
        out.push(pieces.clone());
    }
    if has(Code::MemoryLimit) {
        out.push(fix(
            &RAISE_POOL_LIMIT,
            say!(
                en: "cupy.get_default_memory_pool().set_limit(size=...) (or CUPY_GPU_MEMORY_LIMIT) sets the cap; raise it, or call cupy.get_default_memory_pool().free_all_blocks() first — the cap counts freed blocks the pool still caches, and CuPy checks it before releasing anything.",
                zh: "上限由 cupy.get_default_memory_pool().set_limit(size=...)（或 CUPY_GPU_MEMORY_LIMIT）设置；调高它，或先调用 cupy.get_default_memory_pool().free_all_blocks()——池里还缓存着的已释放块也算在上限里，而 CuPy 检查上限时还没有释放任何缓存。"
            ),
        ));
    }
    if shared {
        out.push(fix(
            &RELEASE_POOL_CACHE,
            say!(
                en: "CuPy releases its own cached blocks before it raises, but not the other framework's cache in the same process. Free that one before the CuPy step (torch.cuda.empty_cache() for PyTorch; TensorFlow and JAX keep what they reserved, so start them with memory growth or a smaller memory fraction), call cupy.get_default_memory_pool().free_all_blocks() before handing the GPU back, and cap CuPy with set_limit(fraction=0.5) when both run together.",
                zh: "CuPy 报错之前会释放它自己缓存的块，但释放不了同一进程里另一个框架的缓存。在 CuPy 这一步之前先把那边的缓存释放掉（PyTorch 用 torch.cuda.empty_cache()；TensorFlow 和 JAX 不会交还已经预留的显存，要在启动时开启按需增长或调小显存比例），把 GPU 交回去之前调用 cupy.get_default_memory_pool().free_all_blocks()，两者一起运行时用 set_limit(fraction=0.5) 给 CuPy 设上限。"
            ),
        ));
    }
    if !pieces_first {
        out.push(pieces);
    }
}

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    RAISE_POOL_LIMIT,
    RELEASE_POOL_CACHE,
    SMALLER_PIECES,
    TRAINING_BATCH_SIZE,
];

#[cfg(test)]
mod tests {
    /// A real CuPy traceback with nothing but CuPy in it (the legacy form,
    /// fixtures/wild/2057.txt).
    const CUPY_ALONE: &str = include_str!("../../../../fixtures/wild/2057.txt");

    /// A frame of PyTorch's own code, as Python prints it in a traceback
    /// that runs through `torch.nn` (the `module.py` frame of every model
    /// call in PyTorch 2.x).
    const TORCH_FRAME: &str = "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1501, in _call_impl\n";

    fn fix_ids(text: &str) -> Vec<String> {
        let findings = crate::decode_str(text);
        let f = findings.first().expect("a CuPy finding");
        f.diagnosis.fixes.iter().map(|x| x.id.clone()).collect()
    }

    /// CuPy frees its pool's cached blocks and retries before raising, so
    /// in a process that runs CuPy alone, releasing that cache again is not
    /// offered: smaller pieces and dropped arrays lead.
    #[test]
    fn cupy_alone_gets_no_cache_release() {
        let ids = fix_ids(CUPY_ALONE);
        assert_eq!(ids[0], "cupy-process-in-pieces", "{ids:?}");
        assert!(
            !ids.iter().any(|id| id == "cupy-release-pool-cache"),
            "{ids:?}"
        );
    }

    /// One PyTorch frame in the same traceback is another framework's
    /// cache in the process: then freeing it (and capping CuPy) comes first.
    /// Chainer, which allocates through CuPy's pool, is not another cache.
    #[test]
    fn another_framework_in_the_traceback_brings_the_cache_release_back() {
        let chainer = include_str!("../../../../fixtures/cupy_oom_chainer_legacy.log");
        // Chainer's training loop: the batch size leads, pieces follow.
        let ids = fix_ids(chainer);
        assert_eq!(
            ids[..2],
            ["cupy-training-batch-size", "cupy-process-in-pieces"]
        );
        let frame = "  File \"/workspace/src/models/unet.py\"";
        let shared = chainer.replacen(frame, &format!("{TORCH_FRAME}{frame}"), 1);
        assert_ne!(shared, chainer);
        let ids = fix_ids(&shared);
        assert_eq!(ids[0], "cupy-release-pool-cache", "{ids:?}");
        assert!(
            ids.contains(&"cupy-process-in-pieces".to_string()),
            "{ids:?}"
        );
        // A package whose name only contains a framework's name is not it.
        let lookalike = shared.replace("/torch/", "/torchlike/");
        assert_eq!(fix_ids(&lookalike)[0], "cupy-training-batch-size");
        // Without the training loop's frames, pieces lead again.
        let no_loop = chainer.replace("/chainer/training/", "/chainer/");
        assert_eq!(fix_ids(&no_loop)[0], "cupy-process-in-pieces");
    }

    /// The legacy form's total is counted after CuPy released its cache; the
    /// current form's "allocated so far" before it (cupy/cuda/memory.pyx,
    /// `_try_malloc`): the Why says which.
    #[test]
    fn the_why_says_when_the_total_was_counted() {
        let why = |text: &str| {
            let f = crate::decode_str(text).remove(0);
            f.diagnosis.verdicts[0].detail.clone()
        };
        let legacy = why(CUPY_ALONE);
        assert!(legacy.contains("counted after that"), "{legacy}");
        assert!(!legacy.contains("PyTorch"), "{legacy}");
        let current = why(include_str!("../../../../fixtures/wild/621.txt"));
        assert!(
            current.contains("cached free blocks) when it needed"),
            "{current}"
        );
    }
}
