//! Apple MPS out-of-memory: PyTorch's high-watermark limit against the
//! machine's unified memory.

use super::catalogue::{Cost, FixSpec};
use super::common::{
    extra, fact, fix, format_derived, framework_fixes, row, tolerance, verdict, FieldRow, GIB,
};
use super::docs::Code;
use super::setting::{Framework, Vendor};
use super::thresholds::{MPS_OTHER_DOMINATES_RATIO, OUTSIDE_MIN};
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Diagnosis, Finding, Fix, Verdict};
use crate::say;
use crate::units::format_size as fmt;

/// Explains `Kind::MpsOom` findings.
pub(super) struct MpsOom;

impl Explain for MpsOom {
    fn headline(&self, f: &Finding) -> Said {
        match f.sizes.requested_bytes.map(fmt) {
            Some(a) => say!(
                en: "PyTorch could not allocate {a} on the Apple GPU (MPS)",
                zh: "PyTorch 无法在 Apple GPU（MPS）上分配 {a}",
                a = a
            ),
            None => say!(
                en: "PyTorch's MPS backend ran out of memory on the Apple GPU",
                zh: "PyTorch 的 MPS 后端在 Apple GPU 上内存不足"
            ),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        let s = &f.sizes;
        if let Some(a) = s.requested_bytes {
            let meaning = match fact(f, fact::POOL) {
                Some("shared") => say!(
                    en: "the buffer the MPS allocator needed on the shared pool (memory the CPU can also read), the tensor rounded up to its allocation size",
                    zh: "MPS 分配器在共享池（CPU 也能读的内存）里需要的缓冲区：张量大小向上取整到它的分配粒度"
                ),
                Some("private") => say!(
                    en: "the buffer the MPS allocator needed on the private pool (GPU-only memory), the tensor rounded up to its allocation size",
                    zh: "MPS 分配器在私有池（只有 GPU 能用的内存）里需要的缓冲区：张量大小向上取整到它的分配粒度"
                ),
                _ => say!(
                    en: "the buffer the MPS allocator needed, the tensor rounded up to its allocation size",
                    zh: "MPS 分配器需要的缓冲区：张量大小向上取整到它的分配粒度"
                ),
            };
            rows.push(row(
                say!(en: "Tried to allocate", zh: "试图分配"),
                fmt(a),
                meaning,
                false,
            ));
        }
        if let Some(x) = s.allocated_bytes {
            rows.push(row(
                say!(en: "MPS allocated", zh: "MPS 已分配"),
                fmt(x),
                say!(
                    en: "memory in buffers PyTorch's MPS allocator holds",
                    zh: "PyTorch 的 MPS 分配器持有的缓冲区里的内存"
                ),
                false,
            ));
        }
        let o = extra(f, "other_allocations_bytes");
        if let Some(o) = o {
            rows.push(row(
                say!(en: "Other allocations", zh: "其他分配"),
                fmt(o),
                say!(
                    en: "other Metal memory of this process, outside PyTorch's allocator (MPSGraph caches, intermediate buffers, other frameworks)",
                    zh: "这个进程在 PyTorch 分配器之外的其他 Metal 内存（MPSGraph 缓存、中间缓冲区、其他框架）"
                ),
                false,
            ));
        }
        let m = extra(f, "max_allowed_bytes");
        if let Some(m) = m {
            rows.push(row(
                say!(en: "Max allowed", zh: "允许的上限"),
                fmt(m),
                say!(
                    en: "the high-watermark limit: PYTORCH_MPS_HIGH_WATERMARK_RATIO (1.7 by default) × Metal's recommended working set",
                    zh: "high watermark 上限：PYTORCH_MPS_HIGH_WATERMARK_RATIO（默认 1.7）× Metal 推荐的工作集大小"
                ),
                false,
            ));
        }
        if let (Some(x), Some(o), Some(a)) = (s.allocated_bytes, o, s.requested_bytes) {
            let sum = x.saturating_add(o).saturating_add(a);
            rows.push(row(
                say!(en: "Total with request (derived)", zh: "加上这次申请的总量（推算）"),
                fmt(sum),
                say!(
                    en: "allocated + other + request: what the allocation would have brought the process to",
                    zh: "已分配 + 其他分配 + 这次申请：这次分配成功后进程会用到的量"
                ),
                true,
            ));
            if let Some(m) = m {
                rows.push(row(
                    say!(en: "Room under the limit (derived)", zh: "上限下的余量（推算）"),
                    format_derived(i128::from(m) - i128::from(x) - i128::from(o), &[m, x, o]),
                    say!(
                        en: "max allowed − allocated − other: what was left for this request",
                        zh: "允许的上限 − 已分配 − 其他分配：留给这次申请的空间"
                    ),
                    true,
                ));
            }
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        mps_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        framework_fixes(d, out, |has, out| mps_fixes(f, has, out))
    }
}

/// Metal memory outside PyTorch's allocator ("other allocations") dwarfs
/// what PyTorch's MPS allocator holds: a smaller batch frees little of it.
fn other_dominates(f: &Finding) -> bool {
    match (f.sizes.allocated_bytes, extra(f, "other_allocations_bytes")) {
        (Some(x), Some(o)) => o >= OUTSIDE_MIN && o >= x.saturating_mul(MPS_OTHER_DOMINATES_RATIO),
        _ => false,
    }
}

fn mps_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let x = f.sizes.allocated_bytes;
    let o = extra(f, "other_allocations_bytes");
    let a = f.sizes.requested_bytes;
    let m = extra(f, "max_allowed_bytes");
    let figures = match (x, o, a) {
        (Some(x), Some(o), Some(a)) => Some((x, o, a, x.saturating_add(o).saturating_add(a))),
        _ => None,
    };
    let dominates = other_dominates(f);
    if let (true, Some(x), Some(o)) = (dominates, x, o) {
        out.push(verdict(
            Code::NonPytorchMemory,
            say!(
                en: "Metal memory outside PyTorch's allocator filled it, not PyTorch's tensors",
                zh: "占满内存的是 PyTorch 分配器之外的 Metal 内存，不是 PyTorch 的张量"
            ),
            say!(
                en: "Other allocations are {other} against {own} in PyTorch's MPS allocator: a smaller batch frees little of it. The known cause is MPSGraph's cache of compiled graphs and the cached Metal buffers, which grow with every new input shape: when sequence lengths or image sizes vary from batch to batch they grow over the run like a leak, and in many PyTorch releases torch.mps.empty_cache() does not clear the graph cache. The other possibility is another framework using the GPU in the same process.",
                zh: "其他分配有 {other}，而 PyTorch 的 MPS 分配器只有 {own}：减小 batch 腾不出多少。已知的原因是 MPSGraph 缓存的编译好的计算图和缓存的 Metal 缓冲区，每遇到一种新的输入形状就多一份：序列长度或图片尺寸每个 batch 都不一样时，它们会在运行中像内存泄漏一样不断增长，而且在很多 PyTorch 版本里 torch.mps.empty_cache() 清不掉计算图缓存。另一种可能是同一进程里还有别的框架在用 GPU。",
                other = fmt(o),
                own = fmt(x)
            ),
        ));
    }
    let other_note = match (x, o) {
        (Some(x), Some(o)) if !dominates && o > x && o >= GIB => say!(
            en: "Other allocations ({other}) exceed PyTorch's own ({own}): this is Metal memory of the process outside PyTorch's allocator — MPSGraph's cached graphs and intermediate buffers, or another framework in the same process.",
            zh: "其他分配（{other}）比 PyTorch 自己的（{own}）还多：这是进程在 PyTorch 分配器之外的 Metal 内存——MPSGraph 缓存的计算图和中间缓冲区，或者同一进程里的另一个框架。",
            other = fmt(o),
            own = fmt(x)
        ),
        _ => Said::default(),
    };
    match (m, figures) {
        (Some(m), Some((x, o, a, sum))) => {
            let slack = tolerance(x) + tolerance(o) + tolerance(a) + tolerance(m);
            if sum.saturating_add(slack) >= m {
                let sum_against_limit = if sum > m {
                    say!(
                        en: "MPS allocated {x} + other allocations {o} + this request {a} = {sum}, {over} over the max allowed {m}.",
                        zh: "MPS 已分配 {x} + 其他分配 {o} + 这次申请 {a} = {sum}，比允许的上限 {m} 多出 {over}。",
                        x = fmt(x),
                        o = fmt(o),
                        a = fmt(a),
                        over = fmt(sum - m),
                        sum = fmt(sum),
                        m = fmt(m)
                    )
                } else {
                    say!(
                        en: "MPS allocated {x} + other allocations {o} + this request {a} = {sum}, within the rounding of the printed figures of the max allowed {m}.",
                        zh: "MPS 已分配 {x} + 其他分配 {o} + 这次申请 {a} = {sum}，在打印数字的舍入误差之内达到了允许的上限 {m}。",
                        x = fmt(x),
                        o = fmt(o),
                        a = fmt(a),
                        sum = fmt(sum),
                        m = fmt(m)
                    )
                };
                out.push(verdict(
                    Code::MpsHighWatermark,
                    say!(
                        en: "PyTorch's MPS memory limit refused it, not the machine",
                        zh: "是 PyTorch 的 MPS 内存上限拒绝了分配，不是机器内存不够"
                    ),
                    sum_against_limit
                        .then(say!(
                            en: "That limit is PyTorch's high watermark: PYTORCH_MPS_HIGH_WATERMARK_RATIO (1.7 by default) × Metal's recommended working set for this GPU ({working_set} if the default ratio is in use). PyTorch checks it before asking macOS, so the machine may still have had memory; the limit exists to keep macOS from swapping itself into a freeze.",
                            zh: "这个上限是 PyTorch 的 high watermark：PYTORCH_MPS_HIGH_WATERMARK_RATIO（默认 1.7）× Metal 为这块 GPU 推荐的工作集大小（如果用的是默认比例，就是 {working_set}）。PyTorch 在向 macOS 申请之前就检查它，所以机器可能还有内存；设这个上限是为了不让 macOS 大量换页直到卡死。",
                            working_set = fmt(m * 10 / 17)
                        ))
                        .then(other_note),
                ));
            } else {
                out.push(verdict(
                    Code::UnifiedMemoryExhausted,
                    say!(
                        en: "macOS could not provide the memory, below PyTorch's limit",
                        zh: "还没到 PyTorch 的上限，是 macOS 给不出内存"
                    ),
                    say!(
                        en: "MPS allocated {x} + other allocations {o} + this request {a} = {sum}, less than the max allowed {m}: the high-watermark limit did not refuse this. Metal itself could not provide {a}: on Apple silicon the GPU shares unified memory with macOS and every running app, so what is free depends on everything else on the machine.",
                        zh: "MPS 已分配 {x} + 其他分配 {o} + 这次申请 {a} = {sum}，小于允许的上限 {m}：不是 high watermark 上限拒绝的。是 Metal 本身给不出 {a}：在 Apple 芯片上，GPU 和 macOS 以及所有正在运行的应用共用统一内存，所以还剩多少取决于机器上的其他一切。",
                        x = fmt(x),
                        o = fmt(o),
                        a = fmt(a),
                        sum = fmt(sum),
                        m = fmt(m)
                    )
                    .then(other_note),
                ));
            }
        }
        (Some(m), None) => out.push(verdict(
            Code::MpsHighWatermark,
            say!(
                en: "PyTorch's MPS memory limit was on; the message is cut off before all figures",
                zh: "PyTorch 的 MPS 内存上限是开着的；报错在给出全部数字之前就被截断了"
            ),
            say!(
                en: "The message names a max allowed of {m}, PyTorch's high-watermark limit, so the limit was on; the figures needed to tell whether it refused this allocation are missing.",
                zh: "报错里写了允许的上限 {m}，也就是 PyTorch 的 high watermark 上限，所以上限是开着的；但判断是不是它拒绝了这次分配所需的数字缺失了。",
                m = fmt(m)
            ),
        )),
        (None, _) => {
            let numbers = figures
                .map(|(x, o, a, sum)| {
                    say!(
                        en: "PyTorch held {x} and other Metal allocations {o}; with this request {a} that is {sum}.",
                        zh: "PyTorch 持有 {x}，其他 Metal 分配 {o}；加上这次申请的 {a}，共 {sum}。",
                        x = fmt(x),
                        o = fmt(o),
                        a = fmt(a),
                        sum = fmt(sum)
                    )
                })
                .unwrap_or_default();
            out.push(verdict(
                Code::UnifiedMemoryExhausted,
                say!(
                    en: "macOS ran out of memory for the GPU (the MPS limit was off)",
                    zh: "macOS 给 GPU 的内存用完了（MPS 上限已关闭）"
                ),
                say!(
                    en: "This form of the message has no max allowed: the high-watermark limit was turned off (PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0), so nothing in PyTorch refused the allocation — Metal could not get the memory from macOS. On Apple silicon the GPU shares unified memory with macOS and every running app.",
                    zh: "这种格式的报错里没有允许的上限：high watermark 上限被关掉了（PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0），所以 PyTorch 里没有任何东西拒绝这次分配——是 Metal 没能从 macOS 拿到内存。在 Apple 芯片上，GPU 和 macOS 以及所有正在运行的应用共用统一内存。"
                )
                .then(numbers)
                .then(other_note),
            ));
        }
    }
}

/// The generic advice of the same title in PyTorch's API for the MPS device.
const WORKLOAD_SMALLER: FixSpec = FixSpec::new(
    "mps-make-workload-smaller",
    "Make the workload smaller",
    "缩小工作负载",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Apple])
.cost(Cost::Quality);

const HIGH_WATERMARK: FixSpec = FixSpec::new(
    "mps-high-watermark-ratio",
    "Raise PyTorch's MPS limit — knowing the risk",
    "调高 PyTorch 的 MPS 上限（要清楚风险）",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Apple])
.sources(&["PyTorch documentation: MPS environment variables (PYTORCH_MPS_HIGH_WATERMARK_RATIO, PYTORCH_MPS_LOW_WATERMARK_RATIO)"]);

const EMPTY_CACHE: FixSpec = FixSpec::new(
    "mps-empty-cache",
    "Release memory Metal holds outside PyTorch's tensors",
    "释放 Metal 在 PyTorch 张量之外占着的内存",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Apple])
.sources(&["PyTorch documentation: torch.mps.empty_cache"]);

const FIXED_SHAPES: FixSpec = FixSpec::new(
    "mps-fixed-input-shapes",
    "Give the GPU fixed input shapes",
    "让 GPU 看到固定的输入形状",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Apple])
.sources(&["PyTorch documentation: torch.mps.empty_cache"]);

const LEAVE_UNIFIED_MEMORY: FixSpec = FixSpec::new(
    "mps-leave-unified-memory",
    "Leave unified memory to PyTorch",
    "把统一内存留给 PyTorch",
)
.vendors(&[Vendor::Apple]);

const SPLIT_LARGE_OPERATION: FixSpec = FixSpec::new(
    "mps-split-large-operation",
    "Split the large operation",
    "把大的运算拆开",
)
.vendors(&[Vendor::Apple])
.cost(Cost::Speed);

fn mps_fixes(f: &Finding, has: &dyn Fn(Code) -> bool, out: &mut Vec<Fix>) {
    // Inference has no batch to accumulate gradients over.
    let smaller = if super::setting::is_inference(f) {
        say!(
            en: "Give each call less (fewer prompts or images, fewer new tokens, a shorter context, a lower resolution); load the weights in half precision (from_pretrained(..., torch_dtype=torch.float16) or model.to(torch.float16)) or use a smaller or more quantised model; for diffusers pipelines call pipe.enable_attention_slicing().",
            zh: "每次调用少给它一些（更少的 prompt 或图片、更少的新 token、更短的上下文、更低的分辨率）；用半精度加载权重（from_pretrained(..., torch_dtype=torch.float16) 或 model.to(torch.float16)），或者换更小或量化程度更高的模型；diffusers 的 pipeline 调用 pipe.enable_attention_slicing()。"
        )
    } else {
        say!(
            en: "Reduce the batch size (keep the effective batch with gradient accumulation), the resolution or the sequence length; run in half precision (model.to(torch.float16) or torch.autocast(device_type=\"mps\", dtype=torch.float16)); for diffusers pipelines call pipe.enable_attention_slicing().",
            zh: "减小 batch size（用梯度累积保持等效 batch）、分辨率或序列长度；用半精度运行（model.to(torch.float16) 或 torch.autocast(device_type=\"mps\", dtype=torch.float16)）；diffusers 的 pipeline 调用 pipe.enable_attention_slicing()。"
        )
    };
    let outside_leads = has(Code::NonPytorchMemory);
    if outside_leads {
        out.push(fix(
            &FIXED_SHAPES,
            say!(
                en: "Pad inputs to a fixed length or to a few bucket sizes (the tokenizer's padding=\"max_length\" with a fixed max_length, or pad_to_multiple_of in the data collator; one image size), so MPSGraph reuses its cached graphs instead of building one per shape; update PyTorch, whose MPS caches keep improving; and call torch.mps.empty_cache() every few steps (Hugging Face Trainer: torch_empty_cache_steps).",
                zh: "把输入补齐到固定长度或少数几档长度（tokenizer 用 padding=\"max_length\" 加固定的 max_length，或者在 data collator 里设 pad_to_multiple_of；图片用同一尺寸），让 MPSGraph 复用缓存的计算图，而不是每种形状建一个；升级 PyTorch，它的 MPS 缓存在不断改进；并且每隔几步调用一次 torch.mps.empty_cache()（Hugging Face Trainer：torch_empty_cache_steps）。"
            ),
        ));
    } else {
        out.push(fix(&WORKLOAD_SMALLER, smaller.clone()));
    }
    // Raising the limit only postpones a cache that keeps growing: last then.
    let raise_limit = has(Code::MpsHighWatermark).then(|| {
        fix(
            &HIGH_WATERMARK,
            say!(
                en: "export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 (before Python starts) removes the limit, as the message suggests: PyTorch may then take more unified memory than macOS recommends for the GPU, the system swaps heavily and can freeze or crash (\"may cause system failure\"). A value between the default 1.7 and 2.0 (the most it accepts on unified memory) raises the limit less riskily. Lower values such as 0.7 do the opposite — PyTorch fails sooner and macOS stays responsive; set PYTORCH_MPS_LOW_WATERMARK_RATIO no higher than it (e.g. 0.5), or PyTorch rejects the setting.",
                zh: "照报错的提示，（在 Python 启动前）export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 可以去掉上限：但 PyTorch 之后可能占用比 macOS 建议给 GPU 的更多统一内存，系统会大量换页，可能卡死或崩溃（\"may cause system failure\"）。设成默认的 1.7 到 2.0（统一内存上它接受的最大值）之间的值，提高上限的风险更小。0.7 这样更低的值则相反——PyTorch 更早失败，macOS 保持流畅；这时 PYTORCH_MPS_LOW_WATERMARK_RATIO 要设得不高于它（如 0.5），否则 PyTorch 会拒绝这个设置。"
            ),
        )
    });
    if !outside_leads {
        out.extend(raise_limit.clone());
    }
    let other = extra(f, "other_allocations_bytes").unwrap_or(0);
    if other >= GIB {
        out.push(fix(
            &EMPTY_CACHE,
            say!(
                en: "Other allocations are {other}: call torch.mps.empty_cache() between phases (e.g. after loading or evaluation), delete models and outputs you no longer need, and avoid running a second framework on the GPU in the same process.",
                zh: "其他分配有 {other}：在阶段之间（如加载或评估之后）调用 torch.mps.empty_cache()，删掉不再需要的模型和输出，并避免在同一进程里让第二个框架也用 GPU。",
                other = fmt(other)
            ),
        ));
    }
    out.push(fix(
        &LEAVE_UNIFIED_MEMORY,
        say!(
            en: "The GPU shares RAM with macOS: quit memory-heavy apps (browsers, IDEs, other Python processes) and check Activity Monitor's Memory Pressure; load models in float16 to halve their footprint.",
            zh: "GPU 和 macOS 共用内存：退出占内存多的应用（浏览器、IDE、其他 Python 进程），看看活动监视器里的“内存压力”；用 float16 加载模型，占用减半。"
        ),
    ));
    if outside_leads {
        out.push(fix(&WORKLOAD_SMALLER, smaller));
        out.extend(raise_limit);
    }
    if f.sizes.requested_bytes.is_some_and(|a| a >= 4 * GIB) {
        out.push(fix(
            &SPLIT_LARGE_OPERATION,
            say!(
                en: "A single request of several GiB usually comes from attention or a large matmul over the whole input: process it in chunks (smaller tiles, sliced attention).",
                zh: "一次就申请好几 GiB，通常来自对整个输入做的注意力或大矩阵乘法：分块处理（更小的分块、切片注意力）。"
            ),
        ));
    }
}

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    WORKLOAD_SMALLER,
    HIGH_WATERMARK,
    EMPTY_CACHE,
    FIXED_SHAPES,
    LEAVE_UNIFIED_MEMORY,
    SPLIT_LARGE_OPERATION,
];
