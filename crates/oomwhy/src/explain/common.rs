//! Pieces shared by every family's explanation: building verdicts, fixes
//! and field rows, reading facts, rounding tolerance, and the fixes shared
//! by several families.

pub(super) use super::catalogue::fix;
use super::catalogue::{Cost, Engines, FixSpec, Phases, Shown};
use super::docs::Code;
use super::setting::{
    available, is_inference, is_loading, since, Availability, Framework, Program, Runtime, Setting,
    Vendor,
};
use super::thresholds::{
    FAILS_AT_START_MAX_STEP, FRAGMENTATION_MAIN_DIVISOR, FRAGMENTATION_MIN, FREE_EXCESS_DIVISOR,
    HOST_REQUEST_IMPLAUSIBLE, HOST_REQUEST_IMPOSSIBLE, LARGEST_GPU_MEMORY, LATE_FAILURE_MIN_STEP,
    NEARLY_LARGEST_GPU_MEMORY, NOISE_MIN, ONE_REQUEST_LARGE, ONE_REQUEST_SHARE_DIVISOR,
    SMALL_CARD_CACHE_COVER_HALVES, SMALL_CARD_MAX, SMALL_POOL_REQUEST_MAX,
};
use crate::i18n::Said;
pub use crate::record::FieldRow;
use crate::record::{Chinese, Diagnosis, Finding, Fix, Kind, Verdict};
use crate::say;
use crate::say_parts;
use crate::units::format_size as fmt;
// The explainers take the size units from here with the other shared pieces.
pub(super) use crate::units::{GIB, MIB};

/// Largest rounding error of a figure PyTorch printed for this value.
/// Sizes reach u64::MAX (`17179869184.00 GiB`), so every `size + tolerance`
/// below saturates (regression test r6_sizes_near_u64_max_do_not_overflow_the_explainer).
/// A figure derived as a difference of printed figures: within their
/// combined rounding of zero it is shown as "≈ 0", never as a stray
/// "1 bytes" that only the rounding made.
pub(super) fn format_derived(value: i128, inputs: &[u64]) -> String {
    let slack: u128 = inputs.iter().map(|&v| u128::from(tolerance(v))).sum();
    if value.unsigned_abs() <= slack {
        "≈ 0".to_string()
    } else {
        crate::units::format_signed(value)
    }
}

pub(super) fn tolerance(value: u64) -> u64 {
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

/// Whether free memory exceeds the request by more than the noise of the
/// printed figures and the slack one near-full allocation needs
/// ([`NOISE_MIN`], a [`FREE_EXCESS_DIVISOR`]th of the request).
pub(super) fn free_exceeds(free: u64, requested: u64) -> bool {
    free >= requested.saturating_add(NOISE_MIN.max(requested / FREE_EXCESS_DIVISOR))
}

/// `part` as a whole percentage of `whole`, rounded to the nearest (30.6 %
/// is 31 %, 17.9 % is 18 %), not cut; 0 when `whole` is 0. Only a whole is
/// 100 %: 99.95 % reads 99 %, since "100 % of reserved is unused" would
/// deny the allocation the same line states.
pub(super) fn percent(part: u64, whole: u64) -> u64 {
    if whole == 0 {
        return 0;
    }
    let scaled = u128::from(part) * 100;
    let whole = u128::from(whole);
    let rounded = u64::try_from((scaled + whole / 2) / whole).unwrap_or(u64::MAX);
    match rounded {
        100 if scaled < whole * 100 => 99,
        n => n,
    }
}

/// What a failed allocation's own figures say, read the same way for every
/// stack (PyTorch's caching allocator, TensorFlow's BFC, ONNX Runtime's
/// arena, XLA on a TPU): the one memory model the families' first verdict
/// and first fix follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// One request is itself most of the device or of the stated limit
    /// ([`ONE_REQUEST_SHARE_DIVISOR`]), or, where neither is stated, at
    /// least [`ONE_REQUEST_LARGE`]: that one tensor must get smaller; no
    /// allocator or arena setting makes one buffer this large fit.
    OneRequestFills {
        requested: u64,
        capacity: Option<u64>,
    },
    /// The device stated more free memory than the request, beyond the
    /// noise: not plain capacity. What refused it is a limit, a
    /// reservation, or free memory that is not in one usable piece
    /// (`usable`: what the stack says it could reserve in one piece).
    FreeCoversRequest {
        requested: u64,
        free: u64,
        usable: Option<u64>,
    },
    /// What the allocator holds but no tensor uses (`unused`: reserved −
    /// allocated), with the device's free memory (`free`, within a stated
    /// limit), covers the request beyond the same noise: what this process
    /// uses plus the request is at most the device less the memory held
    /// outside the allocator. By the numbers it would fit; the allocator's
    /// cache, split into pieces, refused it, not the card's size. The unused
    /// part counts only above the slack every caching allocator carries
    /// ([`FRAGMENTATION_MIN`], a [`FRAGMENTATION_MAIN_DIVISOR`]th of the
    /// reserve) and for requests above the small pool's
    /// ([`SMALL_POOL_REQUEST_MAX`]).
    CacheCoversRequest {
        requested: u64,
        unused: u64,
        free: u64,
    },
    /// Neither: the figures are read by the family (capacity, memory held
    /// elsewhere, or too few figures).
    Other,
}

impl Reading {
    /// The reading of `f`'s stated figures. `per_tensor`: the allocator
    /// asks for one tensor or buffer at a time (not a program that
    /// allocates its whole model in one buffer, as llama.cpp does).
    pub(super) fn of(f: &Finding, per_tensor: bool) -> Reading {
        let s = &f.sizes;
        let Some(requested) = s.requested_bytes else {
            return Reading::Other;
        };
        // What can be used in one piece, where the stack states it: the
        // TPU runtime's `reservable`.
        let usable = extra(f, "reservable_bytes");
        if let Some(free) = s.free_bytes {
            let short_in_one_piece = usable.is_none_or(|u| u < requested);
            if free_exceeds(free, requested) && short_in_one_piece {
                return Reading::FreeCoversRequest {
                    requested,
                    free,
                    usable,
                };
            }
        }
        if let Some(cache) = Reading::cache_covers(f, requested) {
            return cache;
        }
        if !per_tensor {
            return Reading::Other;
        }
        let capacity = match (s.total_bytes, s.allowed_bytes) {
            (Some(t), Some(l)) => Some(t.min(l)),
            (t, l) => t.or(l),
        };
        let fills = match capacity {
            Some(c) => requested >= c / ONE_REQUEST_SHARE_DIVISOR,
            // The free memory bounds what the device had; without it and
            // without the device's size, only the size itself can tell.
            None => s.free_bytes.is_none() && requested >= ONE_REQUEST_LARGE,
        };
        if fills {
            Reading::OneRequestFills {
                requested,
                capacity,
            }
        } else {
            Reading::Other
        }
    }

    /// [`Reading::CacheCoversRequest`], where the figures show it.
    fn cache_covers(f: &Finding, requested: u64) -> Option<Reading> {
        let s = &f.sizes;
        let unused = s
            .reserved_unallocated_bytes
            .or(s.cached_bytes)
            .or_else(|| s.reserved_bytes?.checked_sub(s.allocated_bytes?))?;
        let reserved = s
            .reserved_bytes
            .or_else(|| s.allocated_bytes?.checked_add(unused))?;
        if requested <= SMALL_POOL_REQUEST_MAX
            || unused < FRAGMENTATION_MIN
            || unused < reserved / FRAGMENTATION_MAIN_DIVISOR
        {
            return None;
        }
        // Under a stated limit, only the device memory the limit leaves counts.
        let free = s.free_bytes.unwrap_or(0);
        let free = match s.allowed_bytes {
            Some(limit) => free.min(limit.saturating_sub(reserved)),
            None => free,
        };
        let room = unused.saturating_add(free);
        // On a small card a cache that only just covers the request is the
        // allocator's normal slack as much as fragmentation: live tensors
        // and memory outside fill the card, and the batch size is the lever.
        let small_card = s.total_bytes.is_some_and(|t| t <= SMALL_CARD_MAX);
        if small_card
            && room.saturating_mul(2) < requested.saturating_mul(SMALL_CARD_CACHE_COVER_HALVES)
        {
            return None;
        }
        free_exceeds(room, requested).then_some(Reading::CacheCoversRequest {
            requested,
            unused,
            free,
        })
    }
}

/// The first verdict for a request that is itself most of the device
/// (`Reading::OneRequestFills`); `who` names the allocator that asked.
pub(super) fn one_request_verdict(f: &Finding, who: Said) -> Option<Verdict> {
    let Reading::OneRequestFills {
        requested,
        capacity,
    } = Reading::of(f, true)
    else {
        return None;
    };
    let size = Said::same(fmt(requested));
    let share = match capacity {
        Some(capacity) => say!(
            en: "{share}% of the {capacity} the device has (or this process may use)",
            zh: "占设备（或这个进程可用）的 {capacity} 的 {share}%",
            share = percent(requested, capacity),
            capacity = fmt(capacity)
        ),
        None => say!(
            en: "all of an 8 GiB card and half of a 16 GiB one",
            zh: "相当于一整块 8 GiB 的卡，或 16 GiB 卡的一半"
        ),
    };
    Some(verdict(
        Code::AllocationFailed,
        say_parts!(
            en: "One buffer of {size} is itself too large",
            zh: "单单一块 {size} 的缓冲区就太大了",
            size = size.clone()
        ),
        say_parts!(
            en: "{who} asked for {size} in one piece, for one tensor: {share}. However the allocator is set up, one buffer this large leaves little or nothing for the rest of the work; its size follows from the input shapes (batch, sequence length, resolution), or a dimension is far larger than intended.",
            zh: "{who} 一次申请了 {size}，只为一个张量：{share}。不管分配器怎么设置，这么大的一块缓冲区都会让其余的工作几乎没有空间；它的大小由输入的形状（batch、序列长度、分辨率）决定，要么就是某个维度比预想的大得多。",
            who = who,
            size = size,
            share = share
        ),
    ))
}

/// The fix that makes the one large tensor smaller, for any stack whose
/// allocator asks per tensor: its size follows from the inputs.
pub(super) const SHRINK_ONE_TENSOR: FixSpec = FixSpec::new(
    "shrink-the-one-large-tensor",
    "Make that one tensor smaller",
    "让这一个张量变小",
)
.models_only()
.cost(Cost::Quality);

/// [`SHRINK_ONE_TENSOR`] with `how_to_feed` naming where the stack takes
/// its input shapes.
pub(super) fn shrink_one_tensor_fix(requested: u64, how_to_feed: Said) -> Fix {
    fix(
        &SHRINK_ONE_TENSOR,
        say_parts!(
            en: "One buffer of {size} is the problem, not the allocator: its size follows from the input shapes. Feed a smaller batch, a shorter sequence or a lower resolution{feed}, or split the input into chunks and run them one after another; a dimension far larger than intended is a shape bug. Allocator and arena settings cannot make one buffer this large fit.",
            zh: "问题在这一块 {size} 的缓冲区，不在分配器：它的大小由输入的形状决定。用更小的 batch、更短的序列或更低的分辨率{feed}，或者把输入切成几块依次运行；某个维度比预想的大得多就是形状写错了。分配器和 arena 的设置都没法让这么大的一块缓冲区放下。",
            size = Said::same(fmt(requested)),
            feed = how_to_feed
        ),
    )
}

/// The writer's words or the log's settings that say the batch size is
/// already 1, or was lowered without effect: `batch_size=1`,
/// `micro_batch_size = 1`, "changed the batch size to 1", "even with batch
/// size 1", "I reduced the batch size", "adjusted the batch size ... but it
/// didn't work" (also as the common typo "bath size"), `bs=1`.
fn batch_lowered_pattern() -> &'static crate::GatedRegex {
    // Every alternative holds `bat` (`batch`, `bath`) or `bs`.
    static RE: crate::GatedRegex = crate::GatedRegex::new(
        &["bat", "bs"],
        r"(?i)\bbatch[ _-]?size\w*\s*(?:=|:|of|to|is|as)?\s*1\b|batch_size\w*\s*=\s*1\b|\bbs\s*=\s*1\b|\b(?:reduced|lowered|decreased|shrank|shrunk|tried (?:reducing|lowering|decreasing|to reduce|to lower))\s+(?:the\s+|my\s+|our\s+)?bat(?:c)?h|\bbat(?:c)?h[ _-]?size[^.
]{0,80}?(?:didn'?t|did not|doesn'?t|does not|won'?t) (?:work|help)",
    );
    &RE
}

/// Words and settings that say gradient (activation) checkpointing is on.
fn checkpointing_pattern() -> &'static crate::GatedRegex {
    static RE: crate::GatedRegex = crate::GatedRegex::new(
        &["checkpointing"],
        r"(?i)gradient_checkpointing_enable\(|(?:gradient|activation)_checkpointing\s*[=:]\s*(?:true|1)\b|--gradient[_-]checkpointing(?:\s+(?:true|1)\b|\s*$|\s+--)|(?:already|even with|while) (?:using |enabled? )?(?:gradient|activation) checkpointing",
    );
    &RE
}

/// What the paste shows beyond its figures (see [`Shown`]), read once from
/// the message as found (with the writer's words on its lines), its
/// traceback and the failing node: fixes that repeat what was done, or that
/// cannot apply before any batch ran, are not offered.
pub(super) fn shown(f: &Finding) -> Vec<Shown> {
    let mut out = Vec::new();
    // The writer's lines around the message count as much as its own
    // ("I tried to change the batch size to 1" under the paste).
    let said = |re: &crate::GatedRegex| re.is_match(&f.text) || re.is_match(&f.nearby);
    if said(batch_lowered_pattern()) {
        out.push(Shown::BatchAlreadyLowered);
    }
    let frames = || {
        f.traceback.iter().flat_map(|tb| {
            tb.frames
                .iter()
                .chain(tb.chained.iter().flat_map(|c| c.frames.iter()))
        })
    };
    // A frame in PyTorch's checkpoint module, or Hugging Face's wrapper.
    let checkpoint_frame = frames().any(|fr| {
        fr.file
            .replace('\\', "/")
            .ends_with("torch/utils/checkpoint.py")
            || fr.function == "_gradient_checkpointing_func"
    });
    if checkpoint_frame || said(checkpointing_pattern()) {
        out.push(Shown::CheckpointingOn);
    }
    if is_loading(f) || creates_variables(f) {
        out.push(Shown::BeforeAnyStep);
    }
    if said(super::catalogue::four_bit_pattern()) {
        out.push(Shown::QuantisedTo4Bits);
    }
    // The writer's own lines, not the message (which asks to raise the
    // limit): one line that refuses and names shared memory, or names a
    // limit or parameter where the message is about shared memory.
    let shm_message = shared_memory_pattern().is_match(&f.text);
    if f.nearby.lines().any(|line| {
        refusal_pattern().is_match(line)
            && (shared_memory_pattern().is_match(line)
                || (shm_message && setting_word_pattern().is_match(line)))
    }) {
        out.push(Shown::SharedMemoryFixed);
    }
    if said(fitted_first_time_pattern()) {
        out.push(Shown::FittedOnEarlierRun);
    }
    let mut form = None;
    for spec in super::ALL_FIXES.iter().flat_map(|fixes| fixes.iter()) {
        if spec.applied_when.is_empty() {
            continue;
        }
        let form = form.get_or_insert_with(|| {
            super::catalogue::settings_form(&format!("{}\n{}", f.text, f.nearby))
        });
        if spec
            .applied_when
            .iter()
            .any(|setting| super::catalogue::shows_applied(form, setting))
        {
            out.push(Shown::Applied(spec.id));
        }
    }
    out
}

/// The writer says a setting cannot be changed where they run: "does not
/// support such a parameter", "not allowed", "can't change".
fn refusal_pattern() -> &'static crate::GatedRegex {
    // Every alternative holds `not`, `n't`, `cannot` or `no way`.
    static RE: crate::GatedRegex = crate::GatedRegex::new(
        &["not", "n't", "no way"],
        r"(?i)\b(?:does|do|is|are|will|would)(?:n't| not) (?:support|allow|let|permit)\b|\bnot (?:supported|allowed|permitted|possible)\b|\bcan(?:'t|not) (?:change|set|raise|increase|alter|modify|configure)\b|\bno way to (?:change|set|raise|increase|alter|modify|configure)\b",
    );
    &RE
}

/// A setting by kind: "such a parameter", "the limit", "that option".
fn setting_word_pattern() -> &'static crate::GatedRegex {
    static RE: crate::GatedRegex = crate::GatedRegex::new(
        &["param", "limit", "option", "flag", "setting"],
        r"(?i)\b(?:param(?:eter)?s?|limits?|options?|flags?|settings?)\b",
    );
    &RE
}

/// Shared memory by name: its words, /dev/shm, Docker's `--shm-size` and
/// `--ipc`.
fn shared_memory_pattern() -> &'static crate::GatedRegex {
    static RE: crate::GatedRegex = crate::GatedRegex::new(
        &["shared", "shm", "ipc"],
        r"(?i)shared[ _-]?memory|\bshm\b|shm[_-]?size|--ipc\b",
    );
    &RE
}

/// The writer says the same job ran the first time ("The script ran
/// properly the first time", "it worked the first time"). "It ran out of
/// memory the first time" is not that.
fn fitted_first_time_pattern() -> &'static crate::GatedRegex {
    static RE: crate::GatedRegex = crate::GatedRegex::new(
        &["first time"],
        r"(?i)\b(?:ran|runs|worked|works|executed|finished|succeeded|loaded)(?:\s+(?:fine|ok|okay|properly|successfully|well|correctly|without (?:any )?(?:errors?|problems?|issues?)))?\s+(?:the|on the|for the)\s+first time\b|\bfirst time\b[^.\n]{0,20}?\b(?:ran|worked|it was|was) (?:fine|ok|okay|properly|successfully)\b",
    );
    &RE
}

/// The failing TensorFlow node creates a variable's initial value
/// (`vgg_16/fc6/weights/Initializer/random_uniform/RandomUniform`): the
/// model's weights were being created, before any batch ran.
pub(super) fn creates_variables(f: &Finding) -> bool {
    fact(f, crate::record::fact::NODE).is_some_and(|node| node.contains("/Initializer/"))
}

/// A verdict, its title and detail in both languages.
pub(super) fn verdict(code: Code, title: Said, detail: Said) -> Verdict {
    Verdict {
        code: code.as_str().to_string(),
        title: title.en,
        detail: detail.en,
        zh: Some(Chinese {
            title: title.zh,
            text: detail.zh,
        }),
    }
}

pub(super) fn context_verdicts(f: &Finding, growth: Option<(u64, u64)>, out: &mut Vec<Verdict>) {
    if !f.category.is_oom() {
        return;
    }
    if let Some((before, now)) = growth {
        out.push(verdict(
            Code::MemoryGrowth,
            say!(
                en: "Memory grew between repeated OOMs: something accumulates",
                zh: "多次 OOM 之间显存在增长：有东西在累积"
            ),
            say!(
                en: "Allocated memory rose at each of the last three OOMs on this device, from {before} to {now}. Memory that keeps growing between steps points at tensors kept alive across iterations (a loss summed without .item(), outputs appended to a list, a growing cache or sequence length).",
                zh: "这块设备上最近三次 OOM 时已分配的显存一次比一次多，从 {before} 涨到 {now}。显存在步与步之间持续增长，说明有张量跨迭代一直存活：没用 .item() 就累加的 loss、追加到列表里的输出、不断变大的缓存或序列长度。",
                before = fmt(before),
                now = fmt(now)
            ),
        ));
    } else if let Some(step) = f
        .last_step
        .filter(|_| !super::setting::saving_checkpoint(f))
    {
        // A checkpoint being written is not a step: its counter says
        // nothing about batches. The same OOM printed again means the program went on after it (a
        // loop that catches OOM and logs it): the counter then says nothing
        // about whether the configuration fits.
        if step <= FAILS_AT_START_MAX_STEP && f.occurrences <= 1 {
            // A counter may count completed steps (tqdm's 1/100) or name the
            // step it starts (`step 0 | loss ...` printed after step 0):
            // at 1, one or two steps ran; at 0, at most one.
            let detail = if step == 0 {
                say!(
                    en: "The last progress counter before the crash reads 0: at most one step completed, so this configuration does not fit, or fits only once. Change the configuration (batch, sequence length, precision), not a leak.",
                    zh: "崩溃前最后的进度计数是 0：最多只跑完了一步，所以这套配置放不下，或者只能跑一次。要改的是配置（batch、序列长度、精度），而不是去找泄漏。"
                )
            } else {
                say!(
                    en: "The last progress counter before the crash reads {step}: one or two steps completed (depending on whether the counter starts at 0), then the next ran out. The configuration fits barely, not steadily: the first optimizer.step() creates the optimizer's state, and a later batch can be larger than the first. Change the configuration (batch, sequence length, precision), not a leak.",
                    zh: "崩溃前最后的进度计数是 {step}：跑完了一到两步（取决于计数从 0 还是 1 开始），下一步就不够了。这套配置只是勉强放得下，撑不住：第一次 optimizer.step() 才创建优化器状态，后面的 batch 也可能比最初的大。要改的是配置（batch、序列长度、精度），而不是去找泄漏。",
                    step = step
                )
            };
            out.push(verdict(
                Code::FailsAtStart,
                say!(en: "It failed within its first steps", zh: "在最初几步之内就失败了"),
                detail,
            ));
        } else if step >= LATE_FAILURE_MIN_STEP {
            out.push(verdict(
                Code::LateFailure,
                say!(en: "It failed after many successful steps", zh: "成功跑了很多步之后才失败"),
                say!(
                    en: "The last progress counter before the crash reads {step}: the same configuration ran many times before. Either one batch was larger than the others (variable sequence lengths, a big last batch, an evaluation pass) or memory grows over time (tensors kept across steps).",
                    zh: "崩溃前最后的进度计数是 {step}：同样的配置之前已经跑过很多次。要么某个 batch 比其他的大（变长序列、较大的最后一个 batch、评估阶段），要么占用随时间增长（有张量跨步保留）。",
                    step = step
                ),
            ));
        }
    }
}

pub(super) fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A row, its label and meaning in both languages.
pub(super) fn row(label: Said, value: String, meaning: Said, derived: bool) -> FieldRow {
    FieldRow {
        label: label.en,
        value,
        meaning: meaning.en,
        derived,
        zh: Some(Chinese {
            title: label.zh,
            text: meaning.zh,
        }),
    }
}

pub(super) fn extra(f: &Finding, key: &str) -> Option<u64> {
    f.sizes.extra.get(key).copied().flatten()
}

pub(super) fn fact<'f>(f: &'f Finding, key: &str) -> Option<&'f str> {
    f.facts.get(key).map(String::as_str)
}

pub(super) fn on_device(f: &Finding) -> String {
    // torch_npu numbers Ascend NPUs as `NPU N`.
    let what = if f.backend.as_deref() == Some("npu") {
        "NPU"
    } else {
        "GPU"
    };
    f.device
        .map(|d| format!(" on {what} {d}"))
        .unwrap_or_default()
}

/// The device the finding names (`GPU 0`; torch_npu numbers Ascend NPUs
/// as `NPU 0`), for text in both languages.
pub(super) fn device_name(f: &Finding) -> Option<String> {
    let what = if f.backend.as_deref() == Some("npu") {
        "NPU"
    } else {
        "GPU"
    };
    f.device.map(|d| format!("{what} {d}"))
}

/// Rerunning smaller and watching the card: `nvidia-smi` and PyTorch's
/// memory summary.
pub(super) const CONFIRM_MEMORY: FixSpec = FixSpec::new(
    "confirm-that-it-is-memory",
    "Confirm that it is memory",
    "确认是不是显存问题",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

pub(super) fn confirm_fix(f: &Finding) -> Fix {
    // Inference has no training batch to halve: a shorter input is the
    // smaller run.
    let smaller = if is_inference(f) {
        say!(
            en: "Rerun with a shorter input (a shorter prompt, fewer new tokens, a lower resolution, one request at a time)",
            zh: "用更短的输入重跑（更短的 prompt、更少的新 token、更低的分辨率、一次只处理一个请求）"
        )
    } else {
        say!(en: "Rerun with half the batch size", zh: "把 batch size 减半重跑")
    };
    let rest = say!(
        en: ": if the error disappears or comes later, it was memory. Watch `nvidia-smi -l 1` while it runs and print torch.cuda.memory_summary() just before the failing step.",
        zh: "：错误消失或推迟出现，就是显存的问题。运行时用 `nvidia-smi -l 1` 观察，并在出错那一步之前打印 torch.cuda.memory_summary()。"
    );
    fix(
        &CONFIRM_MEMORY,
        Said {
            en: format!("{}{}", smaller.en, rest.en),
            zh: format!("{}{}", smaller.zh, rest.zh),
        },
    )
}

/// Inference in less memory: the weights' precision and placement, and
/// how much is generated at once.
pub(super) const INFERENCE_IN_LESS_MEMORY: FixSpec = FixSpec::new(
    "inference-in-less-memory",
    "Run inference in less memory",
    "用更少的显存做推理",
)
.frameworks(&[Framework::PyTorch])
.engines(Engines::NotServing)
.phases(Phases::NotLoading)
.cost(Cost::Quality)
.sources(&[
    "Hugging Face Transformers documentation: from_pretrained (torch_dtype, device_map, quantization_config)",
    "Hugging Face Accelerate documentation: big model inference (device_map, offloading)",
]);

/// Inference's own fixes: the engine's or front end's settings where one
/// is named, otherwise the weights' precision and placement.
pub(super) fn inference_fixes(f: &Finding, out: &mut Vec<Fix>) {
    match Runtime::of(f) {
        Some(runtime) => out.push(runtime_fix(runtime)),
        None => out.push(inference_fix(f)),
    }
}

fn inference_fix(f: &Finding) -> Fix {
    // A message form that ends before 4-bit loading existed gets the
    // precision and placement of its own time.
    if matches!(
        available(f, since::FOUR_BIT_LOADING),
        Availability::Upgrade(_)
    ) {
        return fix(
            &INFERENCE_IN_LESS_MEMORY,
            say!(
                en: "Inference keeps no gradients, so its memory is the weights plus what one call computes. Keep the weights in half precision (model.half()), use a smaller model, or split it over several GPUs. Give each call less (fewer inputs per call, shorter sequences, a lower resolution), and check that nothing else holds the GPU ({smi}).",
                zh: "推理不保留梯度，所以显存就是权重加上一次调用算出来的东西。权重用半精度（model.half()），换更小的模型，或者把它拆到多块 GPU 上。每次调用少给它一些（每次更少的输入、更短的序列、更低的分辨率），并确认没有别的进程占着 GPU（{smi}）。",
                smi = Vendor::of(f).smi()
            ),
        );
    }
    fix(
        &INFERENCE_IN_LESS_MEMORY,
        say!(
            en: "Inference keeps no gradients, so its memory is the weights plus what one call computes. Load the weights in half precision (from_pretrained(..., torch_dtype=torch.float16), bfloat16 on an Ampere or newer GPU, or model.half()) or in 8 or 4 bits (quantization_config=BitsAndBytesConfig(load_in_4bit=True)), use a smaller model, or spread it over several GPUs and the CPU (Hugging Face: device_map=\"auto\"). Give each call less (fewer prompts or images, fewer new tokens, a shorter context, a lower resolution), and check that nothing else holds the GPU ({smi}).",
            zh: "推理不保留梯度，所以显存就是权重加上一次调用算出来的东西。用半精度加载权重（from_pretrained(..., torch_dtype=torch.float16)，Ampere 及更新的 GPU 上也可以用 bfloat16，或者 model.half()），或者用 8 位或 4 位加载（quantization_config=BitsAndBytesConfig(load_in_4bit=True)），换更小的模型，或者把它分到多块 GPU 和 CPU 上（Hugging Face：device_map=\"auto\"）。每次调用少给它一些（更少的 prompt 或图片、更少的新 token、更短的上下文、更低的分辨率），并确认没有别的进程占着 GPU（{smi}）。",
            smi = Vendor::of(f).smi()
        ),
    )
}

/// The title of a verdict that can only say an allocation failed. When the
/// message gives no size at all, the title says the most likely cause the
/// paste supports instead of what the message lacks (that remark stays in
/// the verdict's detail): a cache's size the program logged just before,
/// the TensorFlow op that failed, the phase (an engine build, loading),
/// or the stack's own usual cause.
pub(super) fn allocation_failed_title(f: &Finding) -> Said {
    // A runtime's code that names its host allocation (`..._OUT_OF_HOST_MEMORY`).
    if f.facts.get("memory").map(String::as_str) == Some("host") {
        say!(
            en: "The runtime's status names host memory, not the GPU's",
            zh: "运行时的状态码指的是主机内存，而不是显存"
        )
    } else if gives_no_sizes(f) {
        likely_cause_without_sizes(f)
    } else {
        say!(
            en: "A GPU allocation failed: out of memory",
            zh: "一次 GPU 显存分配失败：显存不足"
        )
    }
}

/// Whether the message states no size at all.
pub(super) fn gives_no_sizes(f: &Finding) -> bool {
    let s = &f.sizes;
    [
        s.requested_bytes,
        s.total_bytes,
        s.free_bytes,
        s.allocated_bytes,
        s.reserved_bytes,
    ]
    .iter()
    .all(Option::is_none)
        && s.extra.values().all(Option::is_none)
}

/// The remark, for a verdict's detail, that the message states no size.
pub(super) fn no_sizes_note(f: &Finding) -> Said {
    if gives_no_sizes(f) {
        say!(
            en: "The message itself gives no sizes, so it does not show how much was asked for or what else held the memory.",
            zh: "报错本身没有给出任何大小，所以看不出申请了多少，也看不出还有什么在占用。"
        )
    } else {
        Said::default()
    }
}

/// A prompt cache's size as the program logged it on a line before the
/// message (mlx_lm.server's `Prompt Cache: 10 sequences, 15.55 GB`).
fn prompt_cache_pattern() -> &'static crate::GatedRegex {
    static RE: crate::GatedRegex = crate::GatedRegex::new(
        &["prompt cache"],
        r"(?i)\bprompt cache\b[^\n]{0,60}?\b(\d+(?:\.\d+)?) ?([KMGT]i?B)\b",
    );
    &RE
}

/// TensorRT's builder timing tactics (`getBestTactic`, `timeReformat`) or
/// announcing a build, in the message or the lines around it.
fn tensorrt_building(f: &Finding) -> bool {
    const MARKS: &[&str] = &[
        "getBestTactic",
        "timeReformat",
        "Building the TensorRT Engine",
        "Building TensorRT engine",
        "buildEngineWithConfig",
        "buildSerializedNetwork",
    ];
    MARKS
        .iter()
        .any(|m| f.text.contains(m) || f.nearby.contains(m))
}

/// The writer says it failed while the model loaded ("it just stops
/// loading the model into memory", "fails while loading the weights").
fn loading_said_pattern() -> &'static crate::GatedRegex {
    static RE: crate::GatedRegex = crate::GatedRegex::new(
        &["loading"],
        r"(?i)\b(?:while|when|during|stops?|stopped|fails?|failed|crash(?:es|ed)?)\s+(?:at\s+|in\s+)?loading\s+(?:the\s+|its\s+)?(?:model|weights)\b",
    );
    &RE
}

/// A server's prompt cache, capped by its own options.
const PROMPT_CACHE_CAP: FixSpec = FixSpec::new(
    "cap-prompt-cache",
    "Cap the prompt cache",
    "给 prompt cache 设上限",
)
.sources(&["mlx-lm: mlx_lm/server.py (--prompt-cache-size, --prompt-cache-bytes)"]);

/// Where the program logged its prompt cache's size just before an
/// out-of-memory failure, capping that cache leads the fixes.
pub(super) fn prompt_cache_lead(f: &Finding, out: &mut Vec<Fix>) {
    if !f.category.is_oom() || !prompt_cache_pattern().is_match(&f.nearby) {
        return;
    }
    out.retain(|x| x.id != PROMPT_CACHE_CAP.id);
    out.insert(
        0,
        fix(
            &PROMPT_CACHE_CAP,
            say!(
                en: "The cache keeps earlier requests' KV caches and grows with them. Cap it by size as well as by count: mlx_lm.server keeps up to --prompt-cache-size entries (10 by default) and takes --prompt-cache-bytes as a limit on their total size.",
                zh: "这个缓存保留之前请求的 KV cache，会随着请求变多而变大。除了限制条数，也要限制大小：mlx_lm.server 最多保留 --prompt-cache-size 条（默认 10 条），并用 --prompt-cache-bytes 限制它们的总大小。"
            ),
        ),
    );
}

/// Where the paste shows TensorRT building an engine (timing tactics), the
/// build's own limits (batch, profiles, workspace) come before freeing the
/// GPU: what the build needs is set by them.
pub(super) fn tensorrt_build_lead(f: &Finding, out: &mut Vec<Fix>) {
    if fact(f, crate::record::fact::REPORTED_BY) != Some("TensorRT") || !tensorrt_building(f) {
        return;
    }
    if let Some(i) = out
        .iter()
        .position(|x| x.id == "tensorrt-smaller-engine-limits")
    {
        let lead = out.remove(i);
        out.insert(0, lead);
    }
}

fn likely_cause_without_sizes(f: &Finding) -> Said {
    let reporter = match fact(f, crate::record::fact::REPORTED_BY) {
        Some(r) => r,
        None if Framework::of(f) == Framework::OnnxRuntime => "ONNX Runtime",
        None => "",
    };
    let cache = prompt_cache_pattern();
    if let Some(c) = cache
        .may_match(&f.nearby)
        .then(|| cache.regex().captures(&f.nearby))
        .flatten()
    {
        let size = format!("{} {}", &c[1], &c[2]);
        return say!(
            en: "The program's prompt cache held {size} just before: most likely what filled the memory",
            zh: "就在失败前，程序的 prompt cache 占着 {size}：最可能就是它占满了内存",
            size = size
        );
    }
    // TensorFlow's graph-mode mark of the op that failed, as the detector
    // recorded it (`[[{{node NAME}}]]`).
    if let Some(node) = fact(f, crate::record::fact::NODE) {
        return say!(
            en: "TensorFlow's op {node} found no memory left for its output: this step's tensors did not fit beside what was already held",
            zh: "TensorFlow 的算子 {node} 没有内存可以放它的输出了：这一步的张量放不进已占用之外剩下的空间",
            node = node
        );
    }
    if reporter == "TensorRT" && tensorrt_building(f) {
        return say!(
            en: "Building the TensorRT engine ran out of GPU memory while timing layer tactics: the build's batch size and workspace decide how much it needs",
            zh: "构建 TensorRT engine 时，在给各层的 tactic 计时时显存不足：需要多少取决于构建时的 batch size 和 workspace"
        );
    }
    if is_loading(f) || loading_said_pattern().is_match(&f.nearby) {
        return say!(
            en: "It failed while the model was being loaded: the model's weights and buffers do not fit in the memory the device could give",
            zh: "在加载模型时失败：模型的权重和缓冲区放不进设备能给出的显存"
        );
    }
    match reporter {
        "ONNX Runtime" => say!(
            en: "Most likely ONNX Runtime's memory arenas filled the GPU (each session's arena grows to its largest use and keeps it)",
            zh: "最可能是 ONNX Runtime 的内存 arena 占满了显存（每个会话的 arena 会涨到它用过的最大值，并一直留着）"
        ),
        "RAPIDS Memory Manager (RMM)" => say!(
            en: "Most likely the data on the GPU and the algorithm's working memory outgrew the free GPU memory (RAPIDS keeps both on the GPU)",
            zh: "最可能是 GPU 上的数据加上算法的工作内存超出了空闲显存（RAPIDS 把两者都放在 GPU 上）"
        ),
        "MLX's Metal backend" => say!(
            en: "Most likely MLX's arrays and caches outgrew the share of unified memory macOS lets the GPU use",
            zh: "最可能是 MLX 的数组和缓存超出了 macOS 允许 GPU 使用的那部分统一内存"
        ),
        _ => say!(
            en: "What was already on the GPU left no room for the program's next allocation",
            zh: "GPU 上已有的东西没有给程序的下一次分配留下空间"
        ),
    }
}

/// Nothing in it is specific to one framework.
pub(super) const SMALLER_WORKLOAD: FixSpec = FixSpec::new(
    "make-workload-smaller",
    "Make the workload smaller",
    "缩小工作负载",
)
.models_only()
.cost(Cost::Quality);

/// The workload fix for messages whose framework is not known: nothing in
/// it is specific to one framework.
pub(super) fn workload_fix() -> Fix {
    fix(
        &SMALLER_WORKLOAD,
        say!(
            en: "Halve the batch size, shorten sequences or lower the resolution, use lower precision (float16, or bfloat16 on an Ampere or newer GPU; a quantised model for inference), or a smaller model.",
            zh: "把 batch size 减半，缩短序列或降低分辨率，用更低的精度（float16，Ampere 及更新的 GPU 上也可以用 bfloat16；推理时可用量化模型），或者换更小的模型。"
        ),
    )
}

/// [`workload_fix`] for a finding whose text names its GPU: bfloat16 only
/// where that GPU has it.
pub(super) fn model_workload_fix_for(f: &Finding) -> Fix {
    match super::setting::named_gpu_has_bf16(&f.text) {
        Some(true) => fix(
            &SMALLER_WORKLOAD,
            say!(
                en: "Halve the batch size, shorten sequences or lower the resolution, use lower precision (bfloat16 or float16, or a quantised model for inference), or a smaller model.",
                zh: "把 batch size 减半，缩短序列或降低分辨率，用更低的精度（bfloat16 或 float16，推理时可用量化模型），或者换更小的模型。"
            ),
        ),
        Some(false) => fix(
            &SMALLER_WORKLOAD,
            say!(
                en: "Halve the batch size, shorten sequences or lower the resolution, use float16 (this GPU predates Ampere and has no bfloat16; a quantised model for inference), or a smaller model.",
                zh: "把 batch size 减半，缩短序列或降低分辨率，用 float16（这块 GPU 早于 Ampere，不支持 bfloat16；推理时可用量化模型），或者换更小的模型。"
            ),
        ),
        None => workload_fix(),
    }
}

/// Words that show the failing work was a model's, in the message, its
/// reporter or its backend: only then is the workload advice about
/// batches, sequences and precision.
const MODEL_WORDS: &[&str] = &[
    "model",
    "tensor",
    "batch",
    "train",
    "layer",
    "infer",
    "weights",
    "token",
    "epoch",
    "torch",
    "cudnn",
    "cublas",
    "directml",
    "onnx",
    "tensorflow",
    "paddle",
    "mindspore",
    "caffe",
    "mxnet",
    "xla",
    "jax",
    "keras",
];

/// The finding shows a model's work: a kind only frameworks report, a
/// framework, Python's traceback or exception class, or a model's words.
pub(super) fn shows_a_model(f: &Finding) -> bool {
    if !matches!(f.kind, Kind::GenericOom | Kind::CudaRuntimeOom)
        || Framework::of(f) != Framework::Unknown
        || f.traceback.is_some()
        || f.exception.is_some()
    {
        return true;
    }
    let said = [
        Some(f.text.as_str()),
        fact(f, crate::record::fact::REPORTED_BY),
        f.backend.as_deref(),
    ];
    said.into_iter()
        .flatten()
        .map(str::to_ascii_lowercase)
        .any(|s| MODEL_WORDS.iter().any(|w| s.contains(w)))
}

/// The workload fix for a program that is not known to run a model: its
/// own inputs, in no model's terms.
pub(super) fn smaller_work_fix() -> Fix {
    fix(
        &SMALLER_WORK,
        say!(
            en: "Give the program fewer or smaller inputs at once (smaller images or data, a lower resolution, fewer items processed together), or run it on a GPU with more memory.",
            zh: "一次给程序少一些、小一些的输入（更小的图像或数据、更低的分辨率、同时处理的项目更少），或者换一块显存更大的 GPU。"
        ),
    )
}

/// The workload fix fitted to the program: a model's advice only where the
/// finding shows a model.
pub(super) fn workload_fix_for(f: &Finding) -> Fix {
    // A program with its own levers (llama.cpp's family, a data library)
    // is fixed through them, not a model-training recipe.
    if let Some(lever) = super::levers::program_lever(f) {
        return lever;
    }
    if shows_a_model(f) || Setting::of(f).program == Program::NativeModel {
        model_workload_fix_for(f)
    } else {
        smaller_work_fix()
    }
}

/// Any program's workload, in no model's terms.
const SMALLER_WORK: FixSpec = FixSpec::new(
    "make-work-smaller",
    "Make the work smaller",
    "缩小这次的工作量",
)
.cost(Cost::Quality);

/// True when the message or its traceback shows PyTorch.
pub(super) fn is_pytorch(f: &Finding) -> bool {
    matches!(
        f.kind,
        Kind::TorchAllocatorOom | Kind::CudaRuntimeOom | Kind::MpsOom | Kind::DeviceSideAssert
    ) || f
        .exception
        .as_deref()
        .is_some_and(|e| e.starts_with("torch."))
        || torch_in_traceback(f)
}

/// True when a traceback frame is in PyTorch's own package.
pub(super) fn torch_in_traceback(f: &Finding) -> bool {
    f.traceback.as_ref().is_some_and(|tb| {
        tb.frames
            .iter()
            .any(|fr| fr.file.replace('\\', "/").contains("/torch/"))
    })
}

/// Half precision, quantisation and sharding while the parameters load:
/// PyTorch's and Hugging Face's loading API, not an engine's settings.
pub(super) const LOAD_IN_LESS_MEMORY: FixSpec = FixSpec::new(
    "load-model-in-less-memory",
    "Load the model in less memory",
    "用更少的显存加载模型",
)
.frameworks(&[Framework::PyTorch])
.engines(Engines::NotServing)
.phases(Phases::Loading)
.cost(Cost::Quality)
.sources(&["Hugging Face Transformers documentation: from_pretrained (torch_dtype, device_map, quantization_config)"]);

/// The fix for an OOM while a model's parameters were loaded, moved or converted.
pub(super) fn loading_fix() -> Fix {
    fix(
        &LOAD_IN_LESS_MEMORY,
        say!(
            en: "The parameters themselves do not fit, so smaller batches or recomputing activations cannot help here. Load the weights in half precision (Hugging Face: from_pretrained(..., torch_dtype=torch.bfloat16); plain PyTorch: model.half() or .to(torch.bfloat16) on the CPU before moving it), quantised (BitsAndBytesConfig(load_in_4bit=True)), or spread over devices and the CPU (device_map=\"auto\", FSDP or DeepSpeed ZeRO-3 to shard across GPUs); load checkpoints with torch.load(path, map_location=\"cpu\") before moving them.",
            zh: "放不下的是参数本身，所以减小 batch 或重算激活值都帮不上忙。用半精度加载权重（Hugging Face：from_pretrained(..., torch_dtype=torch.bfloat16)；原生 PyTorch：先在 CPU 上 model.half() 或 .to(torch.bfloat16)，再搬到 GPU），或者量化加载（BitsAndBytesConfig(load_in_4bit=True)），或者分散到多个设备和 CPU 上（device_map=\"auto\"；用 FSDP 或 DeepSpeed ZeRO-3 在多块 GPU 间分片）；加载 checkpoint 时先用 torch.load(path, map_location=\"cpu\")，再搬到 GPU。"
        ),
    )
}

/// [`loading_fix`], for a finding of one of several ranks: each rank loads
/// a whole copy unless the weights are sharded, and a rank that loads onto
/// another rank's GPU doubles that GPU's share.
pub(super) fn loading_fix_for(f: &Finding) -> Fix {
    let mut out = loading_fix();
    let rank = f.first_rank.or_else(|| f.ranks.first().copied());
    if let Some(rank) = rank {
        let more = say!(
            en: " With several ranks (this is rank {rank}), each loads a whole copy of the weights unless FSDP or DeepSpeed ZeRO-3 shards them; check that each rank loads onto its own GPU (torch.cuda.set_device(LOCAL_RANK) before loading), not all onto one.",
            zh: " 有多个 rank 时（这是 rank {rank}），除非用 FSDP 或 DeepSpeed ZeRO-3 分片，每个 rank 都会加载一整份权重；并确认每个 rank 加载到自己的 GPU 上（加载前调用 torch.cuda.set_device(LOCAL_RANK)），而不是全都挤到同一块上。",
            rank = rank
        );
        out.how.push_str(&more.en);
        if let Some(zh) = out.zh.as_mut() {
            zh.text.push_str(&more.zh);
        }
    }
    out
}

/// Gradient accumulation keeps the effective batch at the cost of more steps.
pub(super) const REDUCE_BATCH_SIZE: FixSpec = FixSpec::new(
    "reduce-batch-size",
    "Reduce the batch size",
    "减小 batch size",
)
.frameworks(&[Framework::PyTorch])
.engines(Engines::NotServing)
.phases(Phases::Training)
.pointless_when(&[Shown::BatchAlreadyLowered, Shown::BeforeAnyStep])
.cost(Cost::Speed);

/// `torch.autocast(device_type="cuda")`, from PyTorch 1.10 (the text notes
/// the 1.6–1.9 form where the message allows those releases).
pub(super) const MIXED_PRECISION: FixSpec = FixSpec::new(
    "mixed-precision-autocast",
    "Use mixed precision",
    "使用混合精度",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia, Vendor::Amd])
.torch_since(since::AUTOCAST)
.engines(Engines::NotServing)
.phases(Phases::Training)
.cost(Cost::Quality)
.sources(&[
    "PyTorch documentation: Automatic Mixed Precision (torch.autocast, torch.amp.GradScaler)",
]);

/// `torch.cuda.amp`, the only native mixed precision of PyTorch 1.6–1.9.
pub(super) const MIXED_PRECISION_CUDA_AMP: FixSpec = FixSpec::new(
    "mixed-precision-cuda-amp",
    "Use mixed precision with torch.cuda.amp",
    "用 torch.cuda.amp 做混合精度",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia, Vendor::Amd])
.torch_since(since::CUDA_AMP)
.torch_until((1, 9))
.engines(Engines::NotServing)
.phases(Phases::Training)
.cost(Cost::Quality)
.sources(&["PyTorch 1.6 documentation: torch.cuda.amp"]);

/// Releases before 1.6 have no native mixed precision: upgrade, or half
/// precision by hand.
pub(super) const HALF_PRECISION_OLD_TORCH: FixSpec = FixSpec::new(
    "half-precision-before-amp",
    "Upgrade PyTorch for mixed precision, or use half precision",
    "升级 PyTorch 以使用混合精度，或者改用半精度",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia, Vendor::Amd])
.torch_until((1, 5))
.engines(Engines::NotServing)
.phases(Phases::Training)
.cost(Cost::Quality);

/// `gradient_checkpointing_enable` and `torch.utils.checkpoint`.
pub(super) const GRADIENT_CHECKPOINTING: FixSpec = FixSpec::new(
    "gradient-checkpointing",
    "Trade compute for memory with gradient checkpointing",
    "用梯度检查点以计算换显存",
)
.frameworks(&[Framework::PyTorch])
.engines(Engines::NotServing)
.phases(Phases::Training)
.pointless_when(&[Shown::CheckpointingOn, Shown::BeforeAnyStep])
.cost(Cost::Speed)
.sources(&["PyTorch documentation: torch.utils.checkpoint"]);

pub(super) const SHORTEN_SEQUENCES: FixSpec = FixSpec::new(
    "shorten-sequences",
    "Shorten sequences or shrink inputs",
    "缩短序列或缩小输入",
)
.models_only()
.phases(Phases::NotLoading)
.cost(Cost::Quality);

/// Workload fixes fitted to what the finding ran in: an inference engine's
/// or front end's own settings, loading fixes while parameters were moved,
/// otherwise PyTorch training advice in the API of the message's release.
pub(super) fn workload_fixes(f: &Finding, out: &mut Vec<Fix>) {
    // The failing frame allocates DeepSpeed ZeRO's bucket: its size is in
    // the config, ahead of the batch.
    if let Some(bucket) = super::levers::deepspeed_bucket_fix(f) {
        out.push(bucket);
    }
    if let Some(runtime) = Runtime::of(f) {
        out.push(runtime_fix(runtime));
        if runtime.is_engine() {
            return;
        }
    }
    if is_loading(f) {
        out.push(loading_fix_for(f));
        return;
    }
    if !is_pytorch(f) {
        out.push(workload_fix_for(f));
        return;
    }
    if Runtime::of(f).is_some() {
        return;
    }
    // generate(), pipelines, evaluation: no gradients, no optimizer, so
    // no training remedies.
    if is_inference(f) {
        out.push(inference_fix(f));
        out.push(shorten_sequences());
        return;
    }
    out.push(fix(
        &REDUCE_BATCH_SIZE,
        say!(
            en: "Halve the batch size; keep the effective batch with gradient accumulation (accumulate N micro-batches, then optimizer.step()). Activation memory shrinks in proportion.",
            zh: "把 batch size 减半；用梯度累积保持等效 batch（累积 N 个 micro-batch 后再调用 optimizer.step()）。激活值占用的显存随之成比例减少。"
        ),
    ));
    out.push(mixed_precision(f));
    if f.phase.name != "backward" {
        out.push(fix(
            &GRADIENT_CHECKPOINTING,
            say!(
                en: "model.gradient_checkpointing_enable() (Hugging Face) or torch.utils.checkpoint.checkpoint around blocks: activations are recomputed in the backward pass instead of stored.",
                zh: "model.gradient_checkpointing_enable()（Hugging Face），或用 torch.utils.checkpoint.checkpoint 包住各个块：激活值在反向传播时重新计算，而不是一直存着。"
            ),
        ));
    }
    out.push(shorten_sequences());
}

fn shorten_sequences() -> Fix {
    fix(
        &SHORTEN_SEQUENCES,
        say!(
            en: "Memory for attention and activations grows with sequence length (and image resolution); cap max_length or crop inputs.",
            zh: "注意力和激活值占用的显存随序列长度（以及图像分辨率）增长；限制 max_length 或裁剪输入。"
        ),
    )
}

/// `note (scaler).` in both languages: the two pieces differ by language,
/// so they cannot be one `say!` argument.
fn with_scaler(note: Said, scaler: Said) -> Said {
    Said {
        en: format!("{} ({}).", note.en, scaler.en),
        zh: format!("{}（{}）。", note.zh, scaler.zh),
    }
}

/// Mixed precision in the API of the releases that print this message.
fn mixed_precision(f: &Finding) -> Fix {
    let dtype_note = if Vendor::of(f) == Vendor::Amd {
        say!(
            en: "bfloat16 where the GPU supports it (torch.cuda.is_bf16_supported()), otherwise float16 with a gradient scaler",
            zh: "GPU 支持时用 bfloat16（torch.cuda.is_bf16_supported()），否则用 float16 配合梯度缩放器"
        )
    } else {
        say!(
            en: "bfloat16 needs an Ampere or newer NVIDIA GPU (compute capability ≥ 8.0; check torch.cuda.is_bf16_supported()), otherwise use float16 with a gradient scaler",
            zh: "bfloat16 需要 Ampere 或更新的 NVIDIA GPU（计算能力 ≥ 8.0；用 torch.cuda.is_bf16_supported() 检查），否则用 float16 配合梯度缩放器"
        )
    };
    let scaler = match available(f, since::AMP_GRAD_SCALER) {
        Availability::Yes => say!(
            en: "torch.amp.GradScaler(\"cuda\")",
            zh: "torch.amp.GradScaler(\"cuda\")"
        ),
        _ => say!(
            en: "torch.cuda.amp.GradScaler(); from PyTorch 2.3 also torch.amp.GradScaler(\"cuda\"), the form 2.4 asks for when it deprecates the former",
            zh: "torch.cuda.amp.GradScaler()；从 PyTorch 2.3 起也可以用 torch.amp.GradScaler(\"cuda\")，2.4 弃用前者后要求用这种写法"
        ),
    };
    match available(f, since::AUTOCAST) {
        Availability::Yes => fix(
            &MIXED_PRECISION,
            say!(
                en: "Run the forward pass under torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16): activations take half the memory.",
                zh: "在 torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16) 下跑前向：激活值只占一半显存。"
            )
            .then(with_scaler(dtype_note, scaler)),
        ),
        Availability::From(_) => fix(
            &MIXED_PRECISION,
            say!(
                en: "Run the forward pass under torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16) (PyTorch ≥ 1.10; in 1.6–1.9 use torch.cuda.amp.autocast(), which is float16 only; before 1.6 there is no native mixed precision): activations take half the memory.",
                zh: "在 torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16) 下跑前向（PyTorch ≥ 1.10；1.6–1.9 用 torch.cuda.amp.autocast()，只支持 float16；1.6 之前没有原生混合精度）：激活值只占一半显存。"
            )
            .then(with_scaler(dtype_note, scaler)),
        ),
        Availability::Upgrade(_) => match available(f, since::CUDA_AMP) {
            Availability::Upgrade(name) => fix(
                &HALF_PRECISION_OLD_TORCH,
                say!(
                    en: "This PyTorch has no native mixed precision: upgrade to {name} for torch.cuda.amp.autocast() with torch.cuda.amp.GradScaler() (torch.autocast from 1.10), or cast the model to half precision with model.half() and keep the loss in float32.",
                    zh: "这个版本的 PyTorch 还没有原生混合精度：升级到 {name}，就能用 torch.cuda.amp.autocast() 配合 torch.cuda.amp.GradScaler()（torch.autocast 从 1.10 起才有）；或者用 model.half() 把模型转成半精度，loss 保持 float32。",
                    name = name
                ),
            ),
            _ => fix(
                &MIXED_PRECISION_CUDA_AMP,
                say!(
                    en: "Run the forward pass under torch.cuda.amp.autocast() with torch.cuda.amp.GradScaler() (float16; PyTorch 1.6–1.9 — torch.autocast and bfloat16 need ≥ 1.10): activations take half the memory.",
                    zh: "在 torch.cuda.amp.autocast() 下跑前向，配合 torch.cuda.amp.GradScaler()（float16；PyTorch 1.6–1.9——torch.autocast 和 bfloat16 需要 ≥ 1.10）：激活值只占一半显存。"
                ),
            ),
        },
    }
}

pub(super) const VLLM_LESS_TO_FIT: FixSpec = FixSpec::new(
    "vllm-less-to-fit",
    "Give vLLM less to fit",
    "让 vLLM 需要的显存少一些",
)
.engines(Engines::Only(&[Runtime::Vllm]))
.cost(Cost::Quality)
.sources(&["vLLM documentation: engine arguments"]);

pub(super) const SGLANG_LESS_TO_FIT: FixSpec = FixSpec::new(
    "sglang-less-to-fit",
    "Give SGLang less to fit",
    "让 SGLang 需要的显存少一些",
)
.engines(Engines::Only(&[Runtime::Sglang]))
.cost(Cost::Quality)
.sources(&["SGLang documentation: server arguments"]);

pub(super) const TGI_LESS_TO_FIT: FixSpec = FixSpec::new(
    "tgi-less-to-fit",
    "Give text-generation-inference less to fit",
    "让 text-generation-inference 需要的显存少一些",
)
.engines(Engines::Only(&[Runtime::Tgi]))
.cost(Cost::Quality)
.sources(&["text-generation-inference documentation: launcher arguments"]);

/// diffusers' pipeline methods; `torch_dtype` is PyTorch's.
pub(super) const DIFFUSERS_LOW_MEMORY: FixSpec = FixSpec::new(
    "diffusers-low-memory",
    "Use diffusers' low-memory modes",
    "使用 diffusers 的低显存模式",
)
.frameworks(&[Framework::PyTorch])
.engines(Engines::Only(&[Runtime::Diffusers]))
.cost(Cost::Speed)
.sources(&["diffusers documentation: Reduce memory usage"]);

pub(super) const COMFYUI_LOW_VRAM: FixSpec = FixSpec::new(
    "comfyui-low-vram",
    "Use ComfyUI's low-VRAM modes",
    "使用 ComfyUI 的低显存模式",
)
.engines(Engines::Only(&[Runtime::ComfyUi]))
.cost(Cost::Speed)
.sources(&["ComfyUI command-line options (--lowvram, --novram)"])
.applied_when(&["--lowvram", "--novram"]);

/// The settings that bound an inference engine's or front end's memory.
pub(super) fn runtime_fix(runtime: Runtime) -> Fix {
    match runtime {
        Runtime::Vllm => fix(
            &VLLM_LESS_TO_FIT,
            say!(
                en: "Lower --max-model-len (the context every sequence may reach) and --max-num-seqs (sequences batched at once); lower --gpu-memory-utilization when other processes share the GPU (raise it toward 0.95 only when vLLM is alone); --enforce-eager skips CUDA-graph capture and its memory; --tensor-parallel-size N splits the model over N GPUs; a quantised checkpoint shrinks the weights.",
                zh: "调低 --max-model-len（每个序列最长能到的上下文）和 --max-num-seqs（一次批处理的序列数）；有其他进程共用 GPU 时调低 --gpu-memory-utilization（只有 vLLM 独占这块卡时才往 0.95 调高）；--enforce-eager 跳过 CUDA graph 捕获，省下它占的显存；--tensor-parallel-size N 把模型分到 N 块 GPU 上；量化的 checkpoint 能缩小权重。"
            ),
        ),
        Runtime::Sglang => fix(
            &SGLANG_LESS_TO_FIT,
            say!(
                en: "Lower --mem-fraction-static when other processes share the GPU or the activations do not fit, --context-length and --max-running-requests; --disable-cuda-graph skips graph capture; --tp-size N splits the model over N GPUs; or use a quantised checkpoint.",
                zh: "有其他进程共用 GPU 或激活值放不下时调低 --mem-fraction-static，再调低 --context-length 和 --max-running-requests；--disable-cuda-graph 跳过 CUDA graph 捕获；--tp-size N 把模型分到 N 块 GPU 上；或者用量化的 checkpoint。"
            ),
        ),
        Runtime::Tgi => fix(
            &TGI_LESS_TO_FIT,
            say!(
                en: "Lower --max-total-tokens, --max-input-tokens and --max-batch-prefill-tokens; --cuda-memory-fraction leaves room for other processes; --num-shard N splits the model over N GPUs; --quantize shrinks the weights.",
                zh: "调低 --max-total-tokens、--max-input-tokens 和 --max-batch-prefill-tokens；用 --cuda-memory-fraction 给其他进程留出空间；--num-shard N 把模型分到 N 块 GPU 上；--quantize 缩小权重。"
            ),
        ),
        Runtime::Diffusers => fix(
            &DIFFUSERS_LOW_MEMORY,
            say!(
                en: "pipe.enable_model_cpu_offload() (or enable_sequential_cpu_offload() for the least memory), pipe.enable_attention_slicing(), pipe.enable_vae_tiling() for large images, torch_dtype=torch.float16 when loading; or a lower resolution and fewer images per prompt.",
                zh: "pipe.enable_model_cpu_offload()（要最省显存就用 enable_sequential_cpu_offload()）、pipe.enable_attention_slicing()、大图用 pipe.enable_vae_tiling()，加载时设 torch_dtype=torch.float16；或者降低分辨率、减少每个 prompt 生成的图片数。"
            ),
        ),
        Runtime::ComfyUi => fix(
            &COMFYUI_LOW_VRAM,
            say!(
                en: "Start ComfyUI with --lowvram (or --novram), decode with the \"VAE Decode (Tiled)\" node, use fp16/fp8 model weights, a lower resolution or batch size; close other GPU applications.",
                zh: "用 --lowvram（或 --novram）启动 ComfyUI，用 \"VAE Decode (Tiled)\" 节点解码，使用 fp16/fp8 的模型权重，降低分辨率或 batch size；关掉其他占用 GPU 的程序。"
            ),
        ),
    }
}

/// How one request compares with every accelerator made, for a message
/// that does not give the device's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BeyondGpus {
    /// More than any device has.
    Every,
    /// More than any device but the few largest (256–288 GB), and nearly
    /// all of one of those.
    AllButTheLargest,
}

impl BeyondGpus {
    /// The one rule every family reads an oversized request by: above
    /// these sizes the size itself is wrong, whatever else the message
    /// lacks or suggests.
    pub(super) fn of(bytes: u64) -> Option<BeyondGpus> {
        if bytes > LARGEST_GPU_MEMORY {
            Some(BeyondGpus::Every)
        } else if bytes > NEARLY_LARGEST_GPU_MEMORY {
            Some(BeyondGpus::AllButTheLargest)
        } else {
            None
        }
    }

    /// "any GPU has": what the request is more than.
    pub(super) fn what(self) -> Said {
        match self {
            BeyondGpus::Every => say!(en: "any GPU has", zh: "任何 GPU 的显存"),
            BeyondGpus::AllButTheLargest => say!(
                en: "any GPU has but the few largest (256–288 GB)",
                zh: "除了最大的几款（256–288 GB）以外任何 GPU 的显存"
            ),
        }
    }
}

/// Printing shapes: any framework.
pub(super) const FIND_OVERSIZED_TENSOR: FixSpec = FixSpec::new(
    "find-oversized-tensor",
    "Find the tensor that is far too large",
    "找出那个大得离谱的张量",
)
.cost(Cost::Look);

pub(super) const MEMORY_KEPT_ACROSS_STEPS: FixSpec = FixSpec::new(
    "memory-kept-across-steps",
    "Look for memory kept across steps",
    "找出跨步累积的占用",
)
.phases(Phases::NotLoading);

/// The fixes of the families whose messages state their own numbers outside
/// PyTorch's CUDA allocator: a request no device can hold gets only the fix
/// for that; otherwise the family's own fixes, then the one for memory that
/// grows across steps.
pub(super) fn framework_fixes(
    d: &Diagnosis,
    out: &mut Vec<Fix>,
    specific: impl FnOnce(&dyn Fn(Code) -> bool, &mut Vec<Fix>),
) {
    let has = |code: Code| d.verdicts.iter().any(|v| v.code == code.as_str());
    if has(Code::RequestExceedsCapacity) {
        out.push(fix(
            &FIND_OVERSIZED_TENSOR,
            say!(
                en: "Print the shapes at the failing line (the last frame of your own code in the traceback). Look for an overflowed or wrong dimension, a whole dataset materialised at once, or a pairwise/attention matrix over very long inputs. Memory settings cannot help here.",
                zh: "在出错的那一行（调用栈里你自己代码的最后一帧）打印各个张量的形状。找溢出或算错的维度、一次整个生成出来的数据集，或者对超长输入算的两两/注意力矩阵。这种情况调内存或显存的设置都没用。"
            ),
        ));
        return;
    }
    specific(&has, out);
    if has(Code::MemoryGrowth) || has(Code::LateFailure) {
        out.push(fix(
            &MEMORY_KEPT_ACROSS_STEPS,
            say!(
                en: "If it ran for a while first, something accumulates: losses summed as tensors instead of floats, outputs appended to a list, caches that grow, or sequences that get longer over the run.",
                zh: "如果先跑了一段时间才出错，说明有东西在累积：loss 作为张量而不是 float 累加、输出被追加到列表里、缓存不断变大，或者序列越跑越长。"
            ),
        ));
    }
}

/// Before 1.8 PyTorch cannot cap its cache: emptying it is what is left.
pub(super) const EMPTY_CACHE_BEFORE_LIBRARY: FixSpec = FixSpec::new(
    "empty-torch-cache-before-library-call",
    "Empty PyTorch's cache before the library call",
    "在调用库之前清空 PyTorch 的缓存",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.torch_until((1, 7))
.cost(Cost::Speed);

/// `torch.cuda.set_per_process_memory_fraction`, from PyTorch 1.8.
pub(super) const LEAVE_ROOM_OUTSIDE_CACHE: FixSpec = FixSpec::new(
    "leave-room-outside-torch-cache",
    "Leave room outside PyTorch's cache",
    "在 PyTorch 的缓存之外留出空间",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.torch_since(since::MEMORY_FRACTION)
.sources(&["PyTorch documentation: torch.cuda.set_per_process_memory_fraction"]);

/// Room for cuBLAS, cuDNN, cuSOLVER and NCCL, which allocate with cudaMalloc
/// beside PyTorch's cache: a cap on the cache where this PyTorch has one
/// (`set_per_process_memory_fraction`, 1.8), else emptying it.
pub(super) fn library_headroom_fix(f: &Finding) -> Fix {
    match available(f, since::MEMORY_FRACTION) {
        Availability::Upgrade(_) => fix(
            &EMPTY_CACHE_BEFORE_LIBRARY,
            say!(
                en: "cuBLAS, cuDNN, cuSOLVER and NCCL allocate with cudaMalloc directly and cannot use memory PyTorch has cached. Call torch.cuda.empty_cache() just before the failing call; stop other processes on the GPU (`nvidia-smi`). Capping PyTorch's cache (torch.cuda.set_per_process_memory_fraction) needs PyTorch ≥ 1.8.",
                zh: "cuBLAS、cuDNN、cuSOLVER 和 NCCL 直接用 cudaMalloc 分配，用不上 PyTorch 缓存着的显存。在出错的调用之前调用 torch.cuda.empty_cache()；停掉 GPU 上的其他进程（`nvidia-smi`）。给 PyTorch 的缓存设上限（torch.cuda.set_per_process_memory_fraction）需要 PyTorch ≥ 1.8。"
            ),
        ),
        Availability::From(name) => fix(
            &LEAVE_ROOM_OUTSIDE_CACHE,
            say!(
                en: "cuBLAS, cuDNN, cuSOLVER and NCCL allocate with cudaMalloc directly and cannot use memory PyTorch has cached. Cap PyTorch with torch.cuda.set_per_process_memory_fraction(0.9) ({name}), or call torch.cuda.empty_cache() before the failing call; stop other processes on the GPU (`nvidia-smi`).",
                zh: "cuBLAS、cuDNN、cuSOLVER 和 NCCL 直接用 cudaMalloc 分配，用不上 PyTorch 缓存着的显存。用 torch.cuda.set_per_process_memory_fraction(0.9) 给 PyTorch 设上限（{name}），或在出错的调用之前调用 torch.cuda.empty_cache()；停掉 GPU 上的其他进程（`nvidia-smi`）。",
                name = name
            ),
        ),
        Availability::Yes => fix(
            &LEAVE_ROOM_OUTSIDE_CACHE,
            say!(
                en: "cuBLAS, cuDNN, cuSOLVER and NCCL allocate with cudaMalloc directly and cannot use memory PyTorch has cached. Cap PyTorch with torch.cuda.set_per_process_memory_fraction(0.9), or call torch.cuda.empty_cache() before the failing call; stop other processes on the GPU (`nvidia-smi`).",
                zh: "cuBLAS、cuDNN、cuSOLVER 和 NCCL 直接用 cudaMalloc 分配，用不上 PyTorch 缓存着的显存。用 torch.cuda.set_per_process_memory_fraction(0.9) 给 PyTorch 设上限，或在出错的调用之前调用 torch.cuda.empty_cache()；停掉 GPU 上的其他进程（`nvidia-smi`）。"
            ),
        ),
    }
}

/// The fixes several families share: one entry each, wherever offered.
/// Several families' first look for a CUDA error with no sizes.
pub(super) const CHECK_GPU_HOLDERS: FixSpec = FixSpec::new(
    "check-what-holds-gpu",
    "Check what else holds the GPU",
    "检查还有什么占着 GPU",
)
.cost(Cost::Look);

pub(super) const FIXES: &[FixSpec] = &[
    PROMPT_CACHE_CAP,
    CHECK_GPU_HOLDERS,
    SHRINK_ONE_TENSOR,
    CONFIRM_MEMORY,
    SMALLER_WORKLOAD,
    SMALLER_WORK,
    LOAD_IN_LESS_MEMORY,
    REDUCE_BATCH_SIZE,
    INFERENCE_IN_LESS_MEMORY,
    MIXED_PRECISION,
    MIXED_PRECISION_CUDA_AMP,
    HALF_PRECISION_OLD_TORCH,
    GRADIENT_CHECKPOINTING,
    SHORTEN_SEQUENCES,
    VLLM_LESS_TO_FIT,
    SGLANG_LESS_TO_FIT,
    TGI_LESS_TO_FIT,
    DIFFUSERS_LOW_MEMORY,
    COMFYUI_LOW_VRAM,
    FIND_OVERSIZED_TENSOR,
    MEMORY_KEPT_ACROSS_STEPS,
    EMPTY_CACHE_BEFORE_LIBRARY,
    LEAVE_ROOM_OUTSIDE_CACHE,
    NATIVE_STACK_TRACE,
    MATCH_NATIVE_PIECES,
    FREE_HOST_MEMORY,
];

/// Native crashes on Linux and Windows (signal.rs, windows.rs): the stack
/// trace's tools differ by platform, the advice does not.
pub(super) const NATIVE_STACK_TRACE: FixSpec = FixSpec::new(
    "native-stack-trace",
    "Get a native stack trace",
    "拿到原生调用栈",
)
.cost(Cost::Look)
.sources(&["Python documentation: faulthandler"]);

/// Reinstalling PyTorch and its CUDA extensions for one CUDA version.
pub(super) const MATCH_NATIVE_PIECES: FixSpec = FixSpec::new(
    "match-native-pieces",
    "Match the native pieces",
    "让各个原生组件的版本匹配",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia]);

/// Host RAM, the paging file: nothing about the GPU.
pub(super) const FREE_HOST_MEMORY: FixSpec =
    FixSpec::new("free-host-memory", "Free host memory", "释放主机内存");

#[cfg(test)]
mod first_steps_tests {
    /// The first finding's verdict codes and their details.
    fn verdicts(text: &str) -> Vec<(String, String)> {
        crate::decode_str(text)[0]
            .diagnosis
            .verdicts
            .iter()
            .map(|v| (v.code.clone(), v.detail.clone()))
            .collect()
    }

    /// nanoGPT on an Intel GPU (fixtures/xpu_capacity_early.log): steps 0
    /// and 1 ran, so "does not fit even once" is never said; counter 0 says
    /// at most one step ran; from 2 the counter claims nothing.
    #[test]
    fn a_counter_of_one_means_steps_ran() {
        let log = include_str!("../../../../fixtures/xpu_capacity_early.log");
        let at = |step: &str| {
            verdicts(&log.replace("step 1 | loss", &format!("step {step} | loss")))
                .into_iter()
                .find(|(code, _)| code == "fails_at_start")
                .map(|(_, detail)| detail)
        };
        let one = at("1").expect("fails_at_start at step 1");
        assert!(one.contains("one or two steps completed"), "{one}");
        assert!(!one.contains("even once"), "{one}");
        let zero = verdicts(&log.replace("step 1 | loss", "step 0 | loss"))
            .into_iter()
            .find(|(code, _)| code == "fails_at_start");
        let zero = zero.expect("fails_at_start at step 0").1;
        assert!(zero.contains("at most one step completed"), "{zero}");
        assert!(at("2").is_none());
    }

    /// A loop that catches OOM and logs it (fixtures/torch_cached_era_warning_retries.log):
    /// the same OOM printed twice means the program went on, so the counter
    /// before it claims nothing; printed once, it does.
    #[test]
    fn a_repeated_oom_is_not_a_first_step_failure() {
        let log = include_str!("../../../../fixtures/torch_cached_era_warning_retries.log");
        let findings = crate::decode_str(log);
        assert!(findings[0].occurrences > 1);
        assert!(findings[0]
            .diagnosis
            .verdicts
            .iter()
            .all(|v| v.code != "fails_at_start"));
        let first_two: String = log.lines().take(2).map(|l| format!("{l}\n")).collect();
        let once = crate::decode_str(&first_two);
        assert_eq!(once[0].occurrences, 1);
        assert!(once[0]
            .diagnosis
            .verdicts
            .iter()
            .any(|v| v.code == "fails_at_start"));
    }
}

#[cfg(test)]
mod allocation_failed_title_tests {
    fn title(text: &str) -> String {
        crate::decode_str(text)[0].diagnosis.verdicts[0]
            .title
            .clone()
    }

    /// darknet's bare CUDA error (fixtures/wild/272.txt) gives no size: the
    /// title says what still follows, and the detail says no size shows.
    /// TensorRT-LLM's failed build (fixtures/wild/733.txt)
    /// states 24793579520 bytes: the title stays the failure, and the Why
    /// line carries the figure. TensorRT's skipped tactic (fixtures/wild/1237.txt)
    /// says what it means.
    #[test]
    fn the_title_says_what_can_be_concluded() {
        let darknet = title("CUDA Error: out of memory\ndarknet: ./src/cuda.c:36: check_error: Assertion `0' failed.\nAborted (core dumped)\n");
        assert!(!darknet.contains("no sizes"), "{darknet}");
        assert!(darknet.contains("no room"), "{darknet}");
        let sized = title("[11/10/2023-06:30:40] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)\n[11/10/2023-06:30:40] [TRT] [W] Requested amount of GPU memory (24793579520 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.\n[11/10/2023-06:30:40] [TRT-LLM] [E] Engine building failed, please check the error log.\n");
        assert_eq!(sized, "A GPU allocation failed: out of memory");
        let tactic = title("[E] [defaultAllocator.cpp::allocate::19] Error code 1: cuda Runtime (out of memory)TE] Error code: 9: skipping tactic 0x0000000000000000 due to exception [tunablegraph.cpp:create:116] autotuning: user allocator error allocating 86114305024-byte buffer\n");
        assert!(tactic.contains("not fatal"), "{tactic}");
    }

    fn why(text: &str) -> (String, String, String) {
        let f = crate::decode_str(text).remove(0);
        let v = &f.diagnosis.verdicts[0];
        let zh = v.zh.as_ref().map_or(String::new(), |z| z.title.clone());
        (v.title.clone(), v.detail.clone(), zh)
    }

    /// A message with no figures: the Why is the most likely cause the
    /// paste supports, in both languages, and the no-sizes remark is in
    /// the detail, never the title. Real pastes, from fixtures/wild.
    #[test]
    fn a_message_without_sizes_gets_a_cause_not_a_remark() {
        // 3244: mlx_lm.server logged its prompt cache's size just before.
        let (title, detail, zh) = why("20:19:46 INFO - Prompt Cache: 10 sequences, 15.55 GB\nlibc++abi: terminating due to uncaught exception of type std::runtime_error:\n[METAL] Command buffer execution failed: Insufficient Memory\n(00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n");
        assert!(title.contains("prompt cache held 15.55 GB"), "{title}");
        assert!(zh.contains("15.55 GB"), "{zh}");
        assert!(detail.contains("gives no sizes"), "{detail}");
        let ids = crate::explain::test_support::fix_ids("20:19:46 INFO - Prompt Cache: 10 sequences, 15.55 GB\n[METAL] Command buffer execution failed: Insufficient Memory\n");
        assert_eq!(ids[0], "cap-prompt-cache", "{ids:?}");
        // 3107: TensorFlow's failing op, by its node (TensorFlow's own
        // verdict, once its marks name the program, names the op).
        let (_, detail, _) = why("tensorflow.python.framework.errors_impl.ResourceExhaustedError: 2 root error(s) found.\n  (0) Resource exhausted: failed to allocate memory\n         [[{{node bert/encoder/block_0/feedforward_1/dense_1/scalar_mul/parallel_4/mul}}]]\n");
        assert!(detail.contains("node bert/encoder/block_0/"), "{detail}");
        // 3328: TensorRT's engine build timing tactics.
        let (title, detail, _) = why("File does not exist : ../configs/yolov3-kHALF-batch64.engine\nBuilding the TensorRT Engine...\nERROR: ../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)\nWARNING: Get cuda error during getBestTactic: (Unnamed Layer* 1) [ElementWise]\n");
        assert!(title.contains("Building the TensorRT engine"), "{title}");
        let ids = crate::explain::test_support::fix_ids("Building the TensorRT Engine...\nERROR: ../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)\nWARNING: Get cuda error during getBestTactic: (Unnamed Layer* 1) [ElementWise]\n");
        assert_eq!(ids[0], "tensorrt-smaller-engine-limits", "{ids:?}");
        assert!(detail.contains("no sizes"), "{detail}");
        // 3320: ONNX Runtime's arenas.
        let (title, _, zh) = why(&std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/wild/3320.txt"
        ))
        .unwrap_or_default());
        assert!(title.contains("ONNX Runtime's memory arenas"), "{title}");
        assert!(zh.contains("arena"), "{zh}");
        // 3304: the writer says it stops while loading the model.
        let (title, _, _) = why("When ever i run it using mlc_chat_cli --local-id vicuna-v1-7b-q3f16_0, it just stops loading the model into memory with this error : \n  Check failed: (__e == VK_SUCCESS) is false: Vulkan Error, code=-2: VK_ERROR_OUT_OF_DEVICE_MEMORY\n");
        assert!(
            title.contains("while the model was being loaded"),
            "{title}"
        );
        // 3314: RAPIDS.
        let (title, _, _) = why("MemoryError: std::bad_alloc: out_of_memory: CUDA error at: ../include/rmm/mr/device/cuda_memory_resource.hpp:70: cudaErrorMemoryAllocation out of memory\n");
        assert!(title.contains("RAPIDS keeps both"), "{title}");
        // 3339: TensorFlow on ROCm prints its sizes beside the status; the
        // detail does not say it has none.
        let (_, detail, _) = why("2019-01-08 19:06:11.303639: E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate 7.35G (7889485824 bytes) from device: hipError_t(1002)\n");
        assert!(!detail.contains("no sizes"), "{detail}");
    }
}

/// The memory model (`Reading`) decides the first verdict and the first
/// fix in every family, checked over every fixture and every real paste
/// in `fixtures/wild`: free memory above the request is never "memory is
/// full" with a smaller workload first; one request that is most of the
/// device never gets an allocator's setting first; memory held outside the
/// allocator gets its holder looked for first.
#[cfg(test)]
mod one_memory_model_over_the_fixtures {
    use super::Reading;
    use crate::record::{Era, Finding, Kind};

    /// First fixes that make the workload smaller.
    const WORKLOAD: &[&str] = &[
        "reduce-batch-size",
        "make-workload-smaller",
        "make-work-smaller",
        "tf-reduce-batch-size",
        "tpu-smaller-model-or-work",
        "jax-computation-less-memory",
        "confirm-that-it-is-memory",
    ];
    /// First fixes that tune an allocator, an arena or a pool.
    const ALLOCATOR_SETTINGS: &[&str] = &[
        "onnxruntime-bound-arena",
        "expandable-segments",
        "max-split-size",
        "native-allocator",
        "cupy-release-pool-cache",
        "stop-framework-preallocation",
        "jax-no-preallocate",
        "jax-mem-fraction",
        "tf-cuda-malloc-async",
        "tf-allow-growth",
    ];
    /// First fixes that look for who holds the memory.
    const HOLDERS: &[&str] = &[
        "find-other-gpu-holders",
        "find-memory-outside-process",
        "free-gpu-from-other-processes",
        "find-non-pytorch-memory",
        "stop-other-libraries-holding-memory",
        "npu-smi-check",
        "xpu-smi-check",
        "check-what-holds-gpu",
        "free-the-gpu",
        "xla-check-what-else-holds-gpu",
    ];

    /// Allocators that ask per tensor, as the families read them.
    fn per_tensor(f: &Finding) -> bool {
        matches!(
            f.kind,
            Kind::TorchAllocatorOom | Kind::TfOom | Kind::CupyOom
        ) || matches!(f.era, Some(Era::Onnxruntime | Era::CupyOomClass))
    }

    #[test]
    fn the_figures_decide_the_first_verdict_and_fix() {
        let pastes = crate::explain::test_support::fixture_pastes();
        assert!(pastes.len() > 500, "fixtures not found: {}", pastes.len());
        let (mut wrong, mut seen) = (Vec::new(), [0usize; 4]);
        for (path, text) in &pastes {
            for f in crate::decode_str(text) {
                let d = &f.diagnosis;
                let (Some(first_verdict), Some(first_fix)) = (d.verdicts.first(), d.fixes.first())
                else {
                    continue;
                };
                // Figures that contradict each other decide nothing.
                if first_verdict.code == "inconsistent_numbers" {
                    continue;
                }
                let fix = first_fix.id.as_str();
                if [
                    "memory_outside_pytorch",
                    "memory_outside_process",
                    "other_processes",
                ]
                .contains(&first_verdict.code.as_str())
                {
                    seen[0] += 1;
                    if !HOLDERS.contains(&fix) {
                        wrong.push(format!("{path}: memory held outside, first fix {fix}"));
                    }
                }
                match Reading::of(&f, per_tensor(&f)) {
                    Reading::FreeCoversRequest { .. } => {
                        seen[1] += 1;
                        if first_verdict.code == "capacity_exhausted" || WORKLOAD.contains(&fix) {
                            wrong.push(format!(
                                "{path}: free covers the request, yet {} / {fix}",
                                first_verdict.code
                            ));
                        }
                    }
                    // It would fit by the numbers: never "does not fit",
                    // never a smaller workload first.
                    Reading::CacheCoversRequest { .. } => {
                        seen[3] += 1;
                        if first_verdict.code == "capacity_exhausted" || WORKLOAD.contains(&fix) {
                            wrong.push(format!(
                                "{path}: the cache covers the request, yet {} / {fix}",
                                first_verdict.code
                            ));
                        }
                    }
                    Reading::OneRequestFills { .. } if per_tensor(&f) => {
                        seen[2] += 1;
                        if ALLOCATOR_SETTINGS.contains(&fix) {
                            wrong.push(format!("{path}: one request fills the device, yet {fix}"));
                        }
                    }
                    _ => {}
                }
            }
        }
        // Each class is among the pastes (G14's NPU, G23's TPU, G18's ONNX
        // Runtime arena and PyTorch's own messages).
        assert!(seen.iter().all(|&n| n >= 3), "classes seen: {seen:?}");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}

/// The reading's margins, from real messages whose figures are moved to
/// either side of each margin.
#[cfg(test)]
mod reading_tests {
    use crate::explain::test_support::fix_ids;

    /// The TPU runtime under PyTorch/XLA (a TPU v3-8; the paste is
    /// fixtures/wild/1709.txt): 14.74G free but 4.62G reservable for a
    /// 5.88G reservation.
    const TPU_RESERVE: &str = "2021-11-10 17:01:24.065497: W tensorflow/core/framework/op_kernel.cc:1692] OP_REQUIRES failed at tpu_execute_op.cc:266 : Resource exhausted: Attempting to reserve 5.88G at the bottom of memory. That was not possible. There are 14.74G free, 0B reserved, and 4.62G reservable.";

    #[test]
    fn tpu_memory_that_is_free_but_not_reservable_is_fragmentation() {
        let f = &crate::decode_str(TPU_RESERVE)[0];
        let d = &f.diagnosis;
        assert!(d.headline.contains("TPU memory (HBM)"), "{}", d.headline);
        assert!(!d.headline.contains("GPU"), "{}", d.headline);
        let why = &d.verdicts[0];
        assert_eq!(why.code, "free_exceeds_request");
        assert!(why.title.contains("fragmented"), "{}", why.title);
        assert!(why.detail.contains("14.74 GiB free"), "{}", why.detail);
        assert!(
            why.detail.contains("4.62 GiB could be reserved"),
            "{}",
            why.detail
        );
        let zh = why.zh.as_ref().expect("Chinese");
        assert!(zh.title.contains("碎片化"), "{}", zh.title);
        assert_eq!(d.fixes[0].id, "tpu-fewer-live-arrays");
        for fix in &d.fixes {
            for gpu_word in ["Ampere", "nvidia-smi", "Keras"] {
                assert!(!fix.how.contains(gpu_word), "{}: {}", fix.id, fix.how);
            }
        }
    }

    /// Free above the request by the noise margin (32 MiB, or a twentieth
    /// of the request, whichever is larger: 50 MiB for 1000 MiB) is
    /// fragmentation; free within it is the core's capacity.
    #[test]
    fn the_free_margin_has_two_sides() {
        let at = |free: &str| {
            let text = TPU_RESERVE
                .replace("5.88G", "1000.00M")
                .replace("14.74G free", &format!("{free} free"))
                .replace("4.62G reservable", "500.00M reservable");
            crate::decode_str(&text)[0].diagnosis.verdicts[0]
                .code
                .clone()
        };
        assert_eq!(at("1050.00M"), "free_exceeds_request");
        assert_eq!(at("1049.00M"), "capacity_exhausted");
        assert_eq!(
            fix_ids(&TPU_RESERVE.replace("14.74G free", "5.90G free"))[0],
            "tpu-shard-across-cores"
        );
    }

    /// ONNX Runtime's arena asked for one 8,388,608,000-byte buffer
    /// (fixtures/wild/1647.txt): that tensor must shrink before the arena's
    /// limits are worth setting.
    const ORT_ARENA: &str = "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running FusedMatMul node. Name:'MatMul_92_FusedMatMulAndScale' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:331 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool) Failed to allocate memory for requested buffer of size 8388608000";

    #[test]
    fn one_buffer_that_fills_a_gpu_is_shrunk_first() {
        let f = &crate::decode_str(ORT_ARENA)[0];
        assert_eq!(
            fix_ids(ORT_ARENA),
            ["shrink-the-one-large-tensor", "onnxruntime-bound-arena"]
        );
        let why = &f.diagnosis.verdicts[0];
        assert!(why.title.contains("7.81 GiB"), "{}", why.title);
        assert!(why
            .zh
            .as_ref()
            .is_some_and(|zh| zh.title.contains("缓冲区")));
        // 4 GiB, ONE_REQUEST_LARGE, is the margin: at it, the tensor
        // first; a byte below, the arena's own fix.
        let sized = |n: u64| fix_ids(&ORT_ARENA.replace("8388608000", &n.to_string()));
        assert_eq!(sized(4 << 30)[0], "shrink-the-one-large-tensor");
        assert_eq!(sized((4 << 30) - 1)[0], "onnxruntime-bound-arena");
    }

    /// CuPy's pool (fixtures/wild/621.txt states 24.6 GiB for one array):
    /// smaller pieces first; a small array keeps the pool's own fix first
    /// where another framework shares the process (a PyTorch frame above).
    #[test]
    fn one_array_that_fills_a_gpu_is_processed_in_pieces_first() {
        let text = include_str!("../../../../fixtures/wild/621.txt");
        assert_eq!(fix_ids(text)[0], "cupy-process-in-pieces");
        let shared = format!("Traceback (most recent call last):\n  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1501, in _call_impl\n{text}");
        let at = |bytes: &str| fix_ids(&shared.replace("26,409,535,488", bytes))[0].clone();
        assert_eq!(at("4,294,967,296"), "cupy-process-in-pieces");
        assert_eq!(at("4,294,967,295"), "cupy-release-pool-cache");
    }
}

/// What the paste shows beyond its figures (`shown`) rules out the fixes
/// that repeat it, in every family (the catalogue's `pointless_when`).
#[cfg(test)]
mod shown_in_the_paste {

    /// The audited paste (fixtures/wild/1821.txt) with the writer's words
    /// on the message's line saying the batch is already 1, in the forms
    /// configs and prose use; a larger batch is no evidence.
    #[test]
    fn a_batch_already_at_one_is_read_from_the_words() {
        let paste = include_str!("../../../../fixtures/wild/1821.txt");
        let said = |words: &str| {
            let text = paste.replace(
                "the configs[e.g.: bath size and feature dim] many times , but it didn't work.",
                words,
            );
            let f = crate::decode_str(&text).remove(0);
            super::shown(&f).contains(&super::Shown::BatchAlreadyLowered)
        };
        for words in [
            "the batch size to 1, still the same.",
            "per_device_train_batch_size=1 already.",
            "everything, even with batch size 1.",
            "micro_batch_size = 1.",
            "it: I reduced the batch size.",
        ] {
            assert!(said(words), "{words}");
        }
        for words in ["the batch size to 16.", "batch_size=128.", "nothing."] {
            assert!(!said(words), "{words}");
        }
    }

    /// The audited paste whose writer says adjusting the "bath size" many
    /// times "didn't work" (fixtures/wild/1821.txt): no batch fix.
    #[test]
    fn a_batch_lowered_without_effect_is_not_reduced_again() {
        let paste = include_str!("../../../../fixtures/wild/1821.txt");
        let f = crate::decode_str(paste).remove(0);
        assert!(super::shown(&f).contains(&super::Shown::BatchAlreadyLowered));
        let worked = crate::decode_str(&paste.replace("it didn't work", "it worked")).remove(0);
        assert!(!super::shown(&worked).contains(&super::Shown::BatchAlreadyLowered));
    }

    /// The patterns read from the paste and the lines around it, each
    /// compiled only where the text holds one of its words, decide every
    /// fixture and real paste (message, nearby lines and whole file) as the
    /// pattern alone does.
    #[test]
    fn gated_patterns_decide_as_their_patterns_do() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut texts = Vec::new();
        for dir in [root.clone(), root.join("wild")] {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    if let Ok(text) = std::fs::read_to_string(&path) {
                        for f in crate::decode_str(&text) {
                            texts.push(f.text);
                            texts.push(f.nearby);
                        }
                        texts.push(text);
                    }
                }
            }
        }
        assert!(texts.len() > 1000, "{}", texts.len());
        let mut gated = vec![
            super::batch_lowered_pattern(),
            super::checkpointing_pattern(),
            super::super::catalogue::four_bit_pattern(),
        ];
        gated.extend(super::super::setting::engine_nearby_patterns().map(|(re, _)| re));
        let mut matched = 0;
        for re in gated {
            for text in &texts {
                let whole = re.regex().is_match(text);
                assert_eq!(re.is_match(text), whole, "{text}");
                matched += usize::from(whole);
            }
        }
        assert!(matched > 0);
    }

    /// Checkpointing as Hugging Face's API and command line spell it on;
    /// `=False` is not on.
    #[test]
    fn checkpointing_on_is_read_from_its_settings() {
        let on = super::checkpointing_pattern();
        for text in [
            "model.gradient_checkpointing_enable()",
            "--gradient_checkpointing True --bf16 True",
            "TrainingArguments(gradient_checkpointing=True, per_device_train_batch_size=4)",
        ] {
            assert!(on.is_match(text), "{text}");
        }
        for text in [
            "gradient_checkpointing=False",
            "--gradient_checkpointing False",
        ] {
            assert!(!on.is_match(text), "{text}");
        }
    }

    /// Over every fixture and real paste: where the paste shows a fix was
    /// done, that fix is never offered.
    #[test]
    fn no_fix_repeats_what_the_paste_shows() {
        let mut wrong = Vec::new();
        for (path, text) in crate::explain::test_support::fixture_pastes() {
            for f in crate::decode_str(&text) {
                let shown = super::shown(&f);
                for fix in &f.diagnosis.fixes {
                    if crate::explain::fixes::spec(&fix.id).is_some_and(|s| s.pointless(&shown)) {
                        wrong.push(format!("{path}: {}", fix.id));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}

/// Shares are rounded to the nearest percent, not cut: the audited
/// 2.64 of 8.63 GiB is 31 % (30.6 %), 1.3956 of 7.79 GiB is 18 % (17.9 %);
/// half a percent rounds up, just under it rounds down.
#[cfg(test)]
mod percent_tests {
    use super::percent;

    #[test]
    fn shares_are_rounded_not_cut() {
        assert_eq!(percent(2640, 8630), 31);
        assert_eq!(percent(13956, 77900), 18);
        assert_eq!(percent(5, 1000), 1);
        assert_eq!(percent(4, 1000), 0);
        assert_eq!(percent(2 * 1024 * 1024 - 1024, 2 * 1024 * 1024), 99);
        assert_eq!(percent(995, 1000), 99);
        assert_eq!(percent(1000, 1000), 100);
        assert_eq!(percent(1, 0), 0);
        assert_eq!(percent(u64::MAX, 1), u64::MAX);
    }
}

/// One host (CPU) tensor too large to be what the program meant: beyond any
/// machine, or beyond any desktop's RAM. The request then leads, not the
/// machine's RAM: a wrong or mismatched shape asked for it.
pub(super) fn implausible_host_request(n: u64) -> Option<Verdict> {
    let headline = if n >= HOST_REQUEST_IMPOSSIBLE {
        say!(
            en: "One CPU tensor asked for more RAM than any machine has",
            zh: "一个 CPU 张量要的内存比任何机器都多"
        )
    } else if n >= HOST_REQUEST_IMPLAUSIBLE {
        say!(
            en: "This request is implausible: one CPU tensor asked for more RAM than a desktop has",
            zh: "这次申请不合常理：一个 CPU 张量要的内存比台式机的全部内存还多"
        )
    } else {
        return None;
    };
    Some(verdict(
        Code::RequestExceedsCapacity,
        headline,
        say!(
            en: "PyTorch tried to create one tensor of {n} bytes ({size}) in host RAM. Find which tensor has this size: a shape is wrong (an overflowed or uninitialised dimension, two tensors of mismatched shapes broadcast against each other — as when merging checkpoints of different architectures —, an outer product or distance matrix over a whole dataset, a dense matrix that should be sparse). No amount of memory tuning helps.",
            zh: "PyTorch 想在主机内存里创建一个 {n} 字节（{size}）的张量。先找出是哪个张量有这么大：是某个形状错了（溢出或未初始化的维度、两个形状不匹配的张量互相广播——比如合并不同架构的 checkpoint 时——、对整个数据集算的外积或距离矩阵、本该稀疏却做成稠密的矩阵）。怎么调内存都没用。",
            n = n,
            size = fmt(n)
        ),
    ))
}

/// A first fix that what the writer states rules out (the platform does not
/// allow it, the same job fitted before) is not offered first. Real pastes,
/// from fixtures/wild.
#[cfg(test)]
mod stated_rules_out_tests {
    use super::shown;
    use crate::explain::catalogue::Shown;
    use crate::explain::test_support::fix_ids;

    // 3121: SageMaker, where the writer found no way to raise /dev/shm.
    const SAGEMAKER: &str = "I am running into errors like \nRuntimeError: DataLoader worker (pid 256) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n\nAs far as I understand, this means the workers are using too much memory transferring it to the main process, and this error is being raised. The usual fix would be just to increase the memory bus limit, but it seems that sagemaker does not support such a parameter: https://stackoverflow.com/questions/71660619/how-to-alter-shared-memory-for-sagemaker-docker-containers (at least, that's the only result I found, from 4 years ago)\n";

    // 3307: JAX on a TPU, fine the first time, out of memory on a rerun.
    const RERUN: &str = "I ran the whole colab script on my TPU server\n\nThe script ran properly the first time, but sometime later, when I again ran the script I got the following error\n\n`jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 15.65G. That was not possible. There are 11.08G free.; (0x0x0_HBM0)`\n\nCan anyone please tell what is the exact cause of the error and how to fix this?";

    #[test]
    fn a_platform_that_fixes_shared_memory_puts_less_in_flight_first() {
        let f = crate::decode_str(SAGEMAKER).remove(0);
        assert!(
            shown(&f).contains(&Shown::SharedMemoryFixed),
            "{:?}",
            f.nearby
        );
        let ids = fix_ids(SAGEMAKER);
        assert_eq!(ids[0], "less-in-flight-between-workers", "{ids:?}");
        // Still offered, later: `df -h /dev/shm` tells what the platform gives.
        assert!(ids.iter().any(|x| x == "more-shared-memory"), "{ids:?}");
        // Without the writer's line, the usual order.
        let bare = SAGEMAKER.split("\n\n").next().unwrap_or_default();
        assert_eq!(fix_ids(bare)[0], "more-shared-memory");
    }

    #[test]
    fn a_job_that_fitted_the_first_time_frees_the_earlier_run_first() {
        let f = crate::decode_str(RERUN).remove(0);
        assert!(
            shown(&f).contains(&Shown::FittedOnEarlierRun),
            "{:?}",
            f.nearby
        );
        let v = &f.diagnosis.verdicts[0];
        assert!(v.title.contains("earlier run"), "{}", v.title);
        assert!(!f
            .diagnosis
            .verdicts
            .iter()
            .any(|v| v.title.contains("too small")));
        let ids = fix_ids(RERUN);
        assert_eq!(ids[0], "tpu-free-earlier-run", "{ids:?}");
        // Running out the first time says nothing of the kind.
        let first = RERUN.replace(
            "ran properly the first time",
            "ran out of memory the first time",
        );
        let f = crate::decode_str(&first).remove(0);
        assert!(!shown(&f).contains(&Shown::FittedOnEarlierRun));
        assert_eq!(fix_ids(&first)[0], "tpu-shard-across-cores");
    }
}
