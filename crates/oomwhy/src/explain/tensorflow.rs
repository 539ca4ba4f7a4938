//! TensorFlow out-of-memory (the BFC allocator and `OpKernelContext`).

use super::catalogue::{Cost, Engines, FixSpec, Shown};
use super::common::{
    creates_variables, fact, fix, framework_fixes, row, verdict, BeyondGpus, FieldRow,
};
use super::docs::Code;
use super::setting::{Framework, Vendor};
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};
use crate::say;
use crate::say_parts;
use crate::units::format_size as fmt;

/// Explains `Kind::TfOom` findings.
pub(super) struct TfOom;

/// Where TensorFlow tried to allocate, as the message names it.
enum Place {
    /// The CPU allocator: host RAM.
    Host,
    /// A GPU with its number.
    Gpu(u32),
    /// The message does not say.
    Unsaid,
}

impl Place {
    fn of(f: &Finding) -> Place {
        if f.backend.as_deref() == Some("cpu") {
            Place::Host
        } else {
            match f.device {
                Some(d) => Place::Gpu(d),
                None => Place::Unsaid,
            }
        }
    }

    /// `" in host RAM"`, `" on GPU 0"` or nothing, to follow an English
    /// sentence; in Chinese `"在主机内存中"`, `"在 GPU 0 上"` or nothing, to
    /// precede the verb.
    fn said(&self) -> Said {
        match self {
            Place::Host => say!(en: " in host RAM", zh: "在主机内存中"),
            Place::Gpu(d) => say!(en: " on GPU {d}", zh: "在 GPU {d} 上", d = d),
            Place::Unsaid => Said::default(),
        }
    }
}

impl Explain for TfOom {
    fn headline(&self, f: &Finding) -> Said {
        let place = Place::of(f);
        let a = f.sizes.requested_bytes.map(fmt);
        match (f.era, a, fact(f, fact::SHAPE)) {
            (Some(Era::BfcAllocator), Some(a), _) => {
                let allocator = fact(f, fact::ALLOCATOR).unwrap_or("(BFC)");
                match place {
                    Place::Host => say!(
                        en: "TensorFlow's allocator {allocator} ran out of memory allocating {a} in host RAM",
                        zh: "TensorFlow 的分配器 {allocator} 在主机内存中分配 {a} 时内存不足",
                        allocator = allocator,
                        a = a
                    ),
                    Place::Gpu(d) => say!(
                        en: "TensorFlow's allocator {allocator} ran out of memory allocating {a} on GPU {d}",
                        zh: "TensorFlow 的分配器 {allocator} 在 GPU {d} 上分配 {a} 时显存不足",
                        allocator = allocator,
                        a = a,
                        d = d
                    ),
                    Place::Unsaid => say!(
                        en: "TensorFlow's allocator {allocator} ran out of memory allocating {a}",
                        zh: "TensorFlow 的分配器 {allocator} 分配 {a} 时内存不足",
                        allocator = allocator,
                        a = a
                    ),
                }
            }
            (_, Some(a), Some(shape)) => say_parts!(
                en: "TensorFlow could not allocate {a} for a tensor of shape {shape}{place}",
                zh: "TensorFlow 无法{place}为形状 {shape} 的张量分配 {a}",
                a = Said::same(a),
                shape = Said::same(shape),
                place = place.said()
            ),
            (_, None, Some(shape)) => match place {
                Place::Host => say!(
                    en: "TensorFlow ran out of memory allocating a tensor of shape {shape} in host RAM",
                    zh: "TensorFlow 在主机内存中分配形状为 {shape} 的张量时内存不足",
                    shape = shape
                ),
                Place::Gpu(d) => say!(
                    en: "TensorFlow ran out of memory allocating a tensor of shape {shape} on GPU {d}",
                    zh: "TensorFlow 在 GPU {d} 上分配形状为 {shape} 的张量时显存不足",
                    shape = shape,
                    d = d
                ),
                Place::Unsaid => say!(
                    en: "TensorFlow ran out of memory allocating a tensor of shape {shape}",
                    zh: "TensorFlow 分配形状为 {shape} 的张量时内存不足",
                    shape = shape
                ),
            },
            _ => match place {
                Place::Host => say!(
                    en: "TensorFlow ran out of memory in host RAM",
                    zh: "TensorFlow 的主机内存不足"
                ),
                Place::Gpu(d) => say!(
                    en: "TensorFlow ran out of memory on GPU {d}",
                    zh: "TensorFlow 在 GPU {d} 上显存不足",
                    d = d
                ),
                Place::Unsaid => {
                    say!(en: "TensorFlow ran out of memory", zh: "TensorFlow 内存不足")
                }
            },
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        let s = &f.sizes;
        if f.era == Some(Era::BfcAllocator) {
            if let Some(a) = s.requested_bytes {
                let meaning = if f.notes.iter().any(|n| n.text.contains("approximate")) {
                    say!(
                        en: "the request as printed (rounded to 2 decimals; the exact byte count is not in this form)",
                        zh: "报错里打印的申请量（四舍五入到两位小数；这种格式里没有精确的字节数）"
                    )
                } else {
                    say!(
                        en: "the block the BFC allocator needed: the request rounded up to a multiple of 256 bytes (exact)",
                        zh: "BFC 分配器需要的块：申请量向上取整到 256 字节的倍数（精确值）"
                    )
                };
                rows.push(row(
                    say!(en: "Trying to allocate", zh: "试图分配"),
                    fmt(a),
                    meaning,
                    false,
                ));
            }
        } else {
            if let Some(shape) = fact(f, fact::SHAPE) {
                rows.push(row(
                    say!(en: "Shape", zh: "形状"),
                    shape.to_string(),
                    say!(
                        en: "dimensions of the tensor TensorFlow tried to create",
                        zh: "TensorFlow 要创建的张量的各个维度"
                    ),
                    false,
                ));
            }
            if let Some(dtype) = fact(f, fact::DTYPE) {
                rows.push(row(
                    say!(en: "Type", zh: "类型"),
                    dtype.to_string(),
                    say!(
                        en: "element type as TensorFlow names it (float = float32, half = float16)",
                        zh: "TensorFlow 所称的元素类型（float = float32，half = float16）"
                    ),
                    false,
                ));
            }
            if let Some(a) = s.requested_bytes {
                rows.push(row(
                    say!(en: "Tensor size (derived)", zh: "张量大小（推算）"),
                    fmt(a),
                    say!(
                        en: "product of the shape × bytes per element = {a} bytes",
                        zh: "形状各维之积 × 每个元素的字节数 = {a} 字节",
                        a = a
                    ),
                    true,
                ));
            }
        }
        if let Some(device) = fact(f, fact::DEVICE_NAME) {
            rows.push(row(
                say!(en: "Device", zh: "设备"),
                device.to_string(),
                say!(en: "where the tensor was to live", zh: "这个张量本该放在哪里"),
                false,
            ));
        }
        if let Some(allocator) = fact(f, fact::ALLOCATOR) {
            rows.push(row(
                say!(en: "Allocator", zh: "分配器"),
                allocator.to_string(),
                say!(
                    en: "TensorFlow's allocator for that device (GPU_N_bfc: the pool it reserved on GPU N)",
                    zh: "TensorFlow 在这个设备上的分配器（GPU_N_bfc：它在 GPU N 上预留的内存池）"
                ),
                false,
            ));
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        tf_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        framework_fixes(d, out, |_, out| tf_fixes(f, out))
    }
}

fn tf_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let a = f.sizes.requested_bytes;
    let host = f.backend.as_deref() == Some("cpu");
    // What could not be allocated, as a noun phrase; in Chinese with a space
    // before a leading figure.
    let what = match (fact(f, fact::SHAPE), fact(f, fact::DTYPE), a) {
        (Some(shape), Some(dtype), Some(a)) => say!(
            en: "{size} for a {dtype} tensor of shape {shape}",
            zh: " {size}，用于一个形状为 {shape}、类型为 {dtype} 的张量",
            size = fmt(a),
            dtype = dtype,
            shape = shape
        ),
        (Some(shape), _, _) => say!(
            en: "a tensor of shape {shape}",
            zh: "一个形状为 {shape} 的张量",
            shape = shape
        ),
        (_, _, Some(a)) => say!(en: "{size}", zh: " {size}", size = fmt(a)),
        _ if host => say!(en: "memory", zh: "内存"),
        _ => say!(en: "memory", zh: "显存"),
    };
    if host {
        out.push(verdict(
            Code::HostRamExhausted,
            say!(
                en: "The machine's RAM ran out (host memory, not GPU memory)",
                zh: "机器的内存（RAM）用完了：是主机内存，不是显存"
            ),
            say_parts!(
                en: "TensorFlow could not allocate {what} in host RAM (allocator {allocator}). This is CPU memory, not GPU memory.",
                zh: "TensorFlow 无法在主机内存中分配{what}（分配器 {allocator}）。这是 CPU 内存，不是显存。",
                what = what,
                allocator = Said::same(fact(f, fact::ALLOCATOR).unwrap_or("cpu"))
            ),
        ));
        return;
    }
    if let Some(a) = a.filter(|&a| BeyondGpus::of(a) == Some(BeyondGpus::Every)) {
        out.push(verdict(
            Code::RequestExceedsCapacity,
            say!(en: "One tensor is larger than any GPU", zh: "一个张量就比任何 GPU 都大"),
            say_parts!(
                en: "TensorFlow tried to allocate {size} ({what}) in one piece: more than any single GPU has. A dimension is far larger than intended (an unbatched dataset, a wrong reshape, an attention matrix over a very long sequence).",
                zh: "TensorFlow 要一次分配 {size}（{what}）：比任何单块 GPU 的显存都多。某个维度比预想的大得多（没有分 batch 的数据集、写错的 reshape、对超长序列算的注意力矩阵）。",
                size = Said::same(fmt(a)),
                what = Said {
                    zh: what.zh.trim_start().to_string(),
                    en: what.en,
                }
            ),
        ));
        return;
    }
    if let Some(node) = fact(f, fact::NODE).filter(|_| creates_variables(f)) {
        out.push(verdict(
            Code::CapacityExhausted,
            say!(
                en: "It failed while creating the model's weights, before any batch ran",
                zh: "它在创建模型权重时就失败了，还没有跑任何 batch"
            ),
            say_parts!(
                en: "The failing node {node} computes a variable's initial value: TensorFlow was creating the model's weights ({what}), before any batch ran, so the batch size is not what filled the memory. Either something else already held the GPU (another process, or another TensorFlow session: each reserves nearly all of the GPU's memory when it starts), or the weights with their optimizer slots do not fit on this card.",
                zh: "出错的节点 {node} 计算的是变量的初始值：TensorFlow 正在创建模型的权重（{what}），还没有跑任何 batch，所以占满显存的不是 batch size。要么是别的东西已经占着 GPU（另一个进程，或另一个 TensorFlow session：每个在启动时都会预留几乎全部显存），要么是权重连同优化器的 slot 变量在这块卡上放不下。",
                node = Said::same(node),
                what = Said {
                    zh: what.zh.trim_start().to_string(),
                    en: what.en,
                }
            ),
        ));
        return;
    }
    // " GPU_0_bfc" after "its allocator", or nothing where unnamed.
    let allocator = match fact(f, fact::ALLOCATOR) {
        Some(name) => say!(en: " {name}", zh: " {name} ", name = name),
        None => Said::default(),
    };
    let place = Place::of(f).said();
    let detail = if f.era == Some(Era::BfcAllocator) {
        // TensorFlow before 1.0 named no allocator in this warning.
        let allocator = match fact(f, fact::ALLOCATOR) {
            Some(name) => say!(en: " {name}", zh: " {name}", name = name),
            None => Said::default(),
        };
        let op = fact(f, fact::OP)
            .map(|op| say!(en: ", requested by op {op}", zh: "（由 op {op} 申请）", op = op))
            .unwrap_or_default();
        say_parts!(
            en: "TensorFlow's BFC allocator{allocator} found no free block for {what}{op}{place}. By default TensorFlow reserves nearly all of the GPU's free memory for this allocator when it starts, so the pool is effectively the card: the tensors TensorFlow keeps alive filled it (or left it too fragmented). The allocation summary TensorFlow prints next lists the chunks in use; the `OOM when allocating tensor` error that usually follows is reported as its own finding.",
            zh: "TensorFlow 的 BFC 分配器{allocator} {place}找不到能放下{what} 的空闲块{op}。TensorFlow 默认在启动时就把 GPU 上几乎全部空闲显存预留给这个分配器，所以这个池实际上就是整块卡：TensorFlow 还留着的张量把它占满了（或者切得太碎）。TensorFlow 接下来打印的分配汇总列出了在用的块；通常随后出现的 `OOM when allocating tensor` 报错会作为单独的一条发现报告。",
            allocator = allocator,
            what = what,
            op = op,
            place = place
        )
    } else {
        let node = fact(f, fact::NODE)
            .map(|n| say!(en: " The failing op is node {n}.", zh: "出错的 op 是节点 {n}。", n = n))
            .unwrap_or_default();
        say_parts!(
            en: "TensorFlow needed {what}{place} and its allocator{allocator} had no free block that large. By default TensorFlow reserves nearly all of the GPU's free memory for this allocator when it starts, so the limit is the card itself (less what other processes held at start-up): the tensors TensorFlow keeps alive — weights, optimizer slots, activations saved for the backward pass — fill it.{node}",
            zh: "TensorFlow {place}需要{what}，而它的分配器{allocator}没有这么大的空闲块。TensorFlow 默认在启动时就把 GPU 上几乎全部空闲显存预留给这个分配器，所以上限就是整块卡本身（减去启动时其他进程占用的）：TensorFlow 还留着的张量——权重、优化器的 slot 变量、为反向传播保存的激活值——把它占满了。{node}",
            what = what,
            place = place,
            allocator = allocator,
            node = node
        )
    };
    out.push(verdict(
        Code::CapacityExhausted,
        say!(en: "The workload does not fit in GPU memory", zh: "工作负载放不进显存"),
        detail,
    ));
}

const REDUCE_HOST_RAM: FixSpec = FixSpec::new(
    "tf-reduce-host-ram",
    "Reduce what is held in host RAM",
    "减少占在主机内存里的数据",
)
.frameworks(&[Framework::TensorFlow])
.sources(&["TensorFlow guide: Better performance with the tf.data API"]);

/// The same advice as PyTorch's "Reduce the batch size" in TensorFlow's
/// API: one catalogue entry for both when the families are merged.
const REDUCE_BATCH_SIZE: FixSpec = FixSpec::new(
    "tf-reduce-batch-size",
    "Reduce the batch size",
    "减小 batch size",
)
.frameworks(&[Framework::TensorFlow])
.engines(Engines::NotServing)
.pointless_when(&[Shown::BatchAlreadyLowered, Shown::BeforeAnyStep])
.cost(Cost::Quality);

/// A failure while the model's variables are created: what holds the GPU,
/// then the weights' own size.
const FREE_GPU_BEFORE_BUILDING: FixSpec = FixSpec::new(
    "tf-free-gpu-before-building",
    "Check what holds the GPU before the model is built",
    "在构建模型之前检查是什么占着 GPU",
)
.frameworks(&[Framework::TensorFlow])
.cost(Cost::Look)
.sources(&["TensorFlow GPU guide: Limiting GPU memory growth"]);

const MIXED_PRECISION: FixSpec =
    FixSpec::new("tf-mixed-precision", "Use mixed precision", "使用混合精度")
        .frameworks(&[Framework::TensorFlow])
        // Keras keeps a mixed policy's variables in float32: no help while
        // the weights are created.
        .pointless_when(&[Shown::BeforeAnyStep])
        .cost(Cost::Quality)
        .sources(&["TensorFlow guide: Mixed precision (tf.keras.mixed_precision)"]);

const CUDA_MALLOC_ASYNC: FixSpec = FixSpec::new(
    "tf-cuda-malloc-async",
    "Try CUDA's asynchronous allocator if memory is fragmented",
    "显存碎片化时试试 CUDA 的异步分配器",
)
.frameworks(&[Framework::TensorFlow])
.vendors(&[Vendor::Nvidia])
.sources(&["TensorFlow GPU guide: TF_GPU_ALLOCATOR=cuda_malloc_async"]);

const ALLOW_GROWTH: FixSpec = FixSpec::new(
    "tf-allow-growth",
    "Stop TensorFlow from taking the whole GPU when it shares the card",
    "与别的进程或库共用一块卡时，别让 TensorFlow 占满整块 GPU",
)
.frameworks(&[Framework::TensorFlow])
.sources(&["TensorFlow GPU guide: Limiting GPU memory growth"]);

const REPORT_TENSOR_ALLOCATIONS: FixSpec = FixSpec::new(
    "tf-report-tensor-allocations",
    "See which tensors hold the memory",
    "看看是哪些张量占着显存",
)
.frameworks(&[Framework::TensorFlow])
.cost(Cost::Look)
.sources(&["TensorFlow API: tf.compat.v1.RunOptions (report_tensor_allocations_upon_oom)"]);

fn tf_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if f.backend.as_deref() == Some("cpu") {
        out.push(fix(
            &REDUCE_HOST_RAM,
            say!(
                en: "Feed data with tf.data pipelines that stream from disk instead of whole NumPy arrays, reduce the batch size and the shuffle buffer, and avoid .cache() on large datasets without a file argument.",
                zh: "用从磁盘流式读取的 tf.data 管道喂数据，而不是整个 NumPy 数组；减小 batch size 和 shuffle 缓冲区；大数据集不要用不带文件参数的 .cache()。"
            ),
        ));
        return;
    }
    if creates_variables(f) {
        out.push(fix(
            &FREE_GPU_BEFORE_BUILDING,
            say!(
                en: "Run `nvidia-smi` before starting: another process (a second TensorFlow job, a notebook kernel left running) may hold the GPU, and TensorFlow reserves nearly all of a GPU's memory per process and per session, so create one session per program (TensorFlow 1) and close the others. If the GPU is free, the weights do not fit: count them (model.summary(), or the variables' shapes), then use a smaller model, float16 weights, or place some layers on another device.",
                zh: "启动前先运行 `nvidia-smi`：可能有另一个进程（第二个 TensorFlow 任务、没关掉的 notebook 内核）占着 GPU，而 TensorFlow 每个进程、每个 session 都会预留几乎全部显存，所以一个程序只创建一个 session（TensorFlow 1），把其余的关掉。如果 GPU 是空的，那就是权重放不下：数一数权重（model.summary()，或各变量的形状），然后换更小的模型、用 float16 权重，或把部分层放到别的设备上。"
            ),
        ));
    }
    out.push(fix(
        &REDUCE_BATCH_SIZE,
        say!(
            en: "Halve the batch size (in model.fit(batch_size=...), or the tf.data .batch(...)); activation memory shrinks in proportion. Use a smaller batch for predict()/evaluate() too.",
            zh: "把 batch size 减半（在 model.fit(batch_size=...) 里，或 tf.data 的 .batch(...) 里）；激活值占用的显存随之成比例减少。predict()/evaluate() 也用更小的 batch。"
        ),
    ));
    out.push(fix(
        &MIXED_PRECISION,
        say!(
            en: "tf.keras.mixed_precision.set_global_policy('mixed_float16') at the start (TensorFlow ≥ 2.4; in 1.15–2.3 it is tf.keras.mixed_precision.experimental.set_policy): activations take half the memory; keep the final layer's output in float32. 'mixed_bfloat16' needs a TPU or an Ampere or newer GPU.",
            zh: "在开头调用 tf.keras.mixed_precision.set_global_policy('mixed_float16')（TensorFlow ≥ 2.4；1.15–2.3 里是 tf.keras.mixed_precision.experimental.set_policy）：激活值只占一半显存；最后一层的输出保持 float32。'mixed_bfloat16' 需要 TPU 或 Ampere 及更新的 GPU。"
        ),
    ));
    if f.facts.contains_key(fact::HINT) || f.era == Some(Era::BfcAllocator) {
        out.push(fix(
            &CUDA_MALLOC_ASYNC,
            say!(
                en: "export TF_GPU_ALLOCATOR=cuda_malloc_async (the BFC allocator's own suggestion): it can reuse freed memory that BFC cannot join into one block.",
                zh: "export TF_GPU_ALLOCATOR=cuda_malloc_async（BFC 分配器自己给的建议）：它能复用 BFC 无法拼成一整块的已释放显存。"
            ),
        ));
    }
    out.push(fix(
        &ALLOW_GROWTH,
        if uses_sessions(f) {
            say!(
                en: "By default TensorFlow reserves nearly all GPU memory at start. If another process or library (PyTorch, JAX, a second TensorFlow process) uses the same GPU, set TF_FORCE_GPU_ALLOW_GROWTH=true, or with TensorFlow 1 sessions create them with config = tf.compat.v1.ConfigProto(); config.gpu_options.allow_growth = True (or per_process_gpu_memory_fraction = 0.5 for a fixed share). This does not give TensorFlow more memory; it leaves room for the others.",
                zh: "TensorFlow 默认在启动时就预留几乎全部显存。如果还有别的进程或库（PyTorch、JAX、另一个 TensorFlow 进程）用同一块 GPU，设 TF_FORCE_GPU_ALLOW_GROWTH=true；用 TensorFlow 1 的 session 时，创建 session 时传入 config = tf.compat.v1.ConfigProto(); config.gpu_options.allow_growth = True（或用 per_process_gpu_memory_fraction = 0.5 固定一个份额）。这不会让 TensorFlow 多得到显存，只是给别人留出空间。"
            )
        } else {
            say!(
                en: "By default TensorFlow reserves nearly all GPU memory at start. If another process or library (PyTorch, JAX, a second TensorFlow process) uses the same GPU, set TF_FORCE_GPU_ALLOW_GROWTH=true or call tf.config.experimental.set_memory_growth(gpu, True) for each GPU before any op runs (TensorFlow 2; with TensorFlow 1 sessions use config.gpu_options.allow_growth = True). This does not give TensorFlow more memory; it leaves room for the others.",
                zh: "TensorFlow 默认在启动时就预留几乎全部显存。如果还有别的进程或库（PyTorch、JAX、另一个 TensorFlow 进程）用同一块 GPU，设 TF_FORCE_GPU_ALLOW_GROWTH=true，或在任何 op 运行之前对每块 GPU 调用 tf.config.experimental.set_memory_growth(gpu, True)（TensorFlow 2；用 TensorFlow 1 的 session 时用 config.gpu_options.allow_growth = True）。这不会让 TensorFlow 多得到显存，只是给别人留出空间。"
            )
        },
    ));
    out.push(fix(
        &REPORT_TENSOR_ALLOCATIONS,
        say!(
            en: "Graph mode: pass tf.compat.v1.RunOptions(report_tensor_allocations_upon_oom=True) to see the allocated tensors at the OOM; the BFC allocator's dump after its warning lists chunk sizes in use.",
            zh: "图模式下：传入 tf.compat.v1.RunOptions(report_tensor_allocations_upon_oom=True)，就能看到 OOM 时已分配的张量；BFC 分配器在警告之后打印的内容列出了在用块的大小。"
        ),
    ));
}

/// True when the traceback (or, without one, the writer's lines) runs through TensorFlow 1's session API (also
/// reached through `tf.compat.v1` in TensorFlow 2).
fn uses_sessions(f: &Finding) -> bool {
    // A traceback the scanner did not read as one (cut, hard-wrapped)
    // still shows the session's frame among the writer's lines.
    if f.traceback.is_none()
        && ["client/session.py", "_call_tf_sessionrun"]
            .iter()
            .any(|m| f.nearby.contains(m))
    {
        return true;
    }
    f.traceback.as_ref().is_some_and(|tb| {
        tb.frames.iter().any(|fr| {
            fr.file
                .replace('\\', "/")
                .contains("tensorflow/python/client/session.py")
        })
    })
}

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    REDUCE_HOST_RAM,
    FREE_GPU_BEFORE_BUILDING,
    REDUCE_BATCH_SIZE,
    MIXED_PRECISION,
    CUDA_MALLOC_ASYNC,
    ALLOW_GROWTH,
    REPORT_TENSOR_ALLOCATIONS,
];

#[cfg(test)]
mod weights_being_created {
    use crate::explain::test_support::fix_ids;

    /// VGG-16 in TensorFlow 1 (fixtures/wild/1801.txt): the failing node
    /// initialises fc6's weights, before any batch ran: what holds the GPU
    /// comes first, never the batch size. The same message from an op of
    /// the training step keeps the batch size first.
    #[test]
    fn an_initializer_node_is_not_the_batch() {
        let paste = include_str!("../../../../fixtures/wild/1801.txt");
        let f = crate::decode_str(paste).remove(0);
        let why = &f.diagnosis.verdicts[0];
        assert!(
            why.title.contains("creating the model's weights"),
            "{}",
            why.title
        );
        assert!(why.zh.as_ref().is_some_and(|zh| zh.title.contains("权重")));
        let fixes = fix_ids(paste);
        assert_eq!(fixes[0], "tf-free-gpu-before-building", "{fixes:?}");
        assert!(
            !fixes.iter().any(|x| x == "tf-reduce-batch-size"),
            "{fixes:?}"
        );
        let step = paste.replace(
            "Node: vgg_16/fc6/weights/Initializer/random_uniform/RandomUniform",
            "Node: vgg_16/fc6/MatMul",
        );
        assert_eq!(fix_ids(&step)[0], "tf-reduce-batch-size");
    }
}
