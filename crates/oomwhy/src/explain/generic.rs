//! The fallback: any other message that says a GPU allocation failed
//! (ONNX Runtime, llama.cpp, CTranslate2, Triton's shared memory, ...).

use super::catalogue::{Cost, FixSpec};
use super::common::runtime_fix;
use super::common::BeyondGpus;
use super::common::{
    capitalise, device_name, fact, fix, framework_fixes, one_request_verdict,
    shrink_one_tensor_fix, smaller_work_fix, verdict, workload_fix, workload_fix_for,
    workload_fixes, Reading,
};
use super::docs::Code;
use super::levers::{llama_levers, LlamaFamily};
use super::setting::{on_tpu, Framework, NamedProgram, ProgramClass, Runtime, Vendor};
use super::toolchain::{NON_TRITON_PATH, TRITON_KERNEL_CONFIG};
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Category, Diagnosis, Era, Finding, Fix, Verdict};
use crate::say;
use crate::say_parts;
use crate::units::format_size as fmt;

/// Explains `Kind::GenericOom` findings.
pub(super) struct GenericOom;

impl Explain for GenericOom {
    fn headline(&self, f: &Finding) -> Said {
        if tensorflow_runtime_error(f) {
            return super::tensorflow::TfOom.headline(f);
        }
        // The stream executor's failed allocation logged at info level: the
        // BFC allocator asks again for less, as after its own warning.
        if retried_by_tensorflow(f) {
            return super::tf_warning::TfAllocatorWarning.headline(f);
        }
        if tactic_skipped_by_tensorrt(f) {
            return skipped_tactic_headline(f);
        }
        // A GPU kernel driver's own line (NVRM's NV_ERR_NO_MEMORY): the
        // driver's reading, not a program's.
        if super::driver_log::kernel_driver(f).is_some() {
            if let Some(headline) = super::driver_log::headline(f) {
                return headline;
            }
        }
        if stated_in_prose(f) && f.sizes.requested_bytes.is_none() {
            return prose_headline(f);
        }
        generic_headline(f)
    }
    fn verdicts(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Verdict>) {
        if tensorflow_runtime_error(f) {
            return super::tensorflow::TfOom.verdicts(f, d, out);
        }
        if retried_by_tensorflow(f) {
            return super::tf_warning::TfAllocatorWarning.verdicts(f, d, out);
        }
        // A warning never gets the out-of-memory verdicts.
        if tactic_skipped_by_tensorrt(f) {
            return;
        }
        if super::driver_log::kernel_driver(f).is_some() {
            if let Some(v) = super::driver_log::verdict_of(f) {
                out.push(v);
                return;
            }
        }
        if let Some(v) = larger_than_the_gpu(f) {
            out.push(v);
            return;
        }
        // TPU memory, whatever program printed it, is explained as a TPU's.
        if on_tpu(f) {
            super::xla::tpu_verdicts(f, out);
            return;
        }
        if let Some(v) = one_buffer_allocator(f).and_then(|a| one_request_verdict(f, a.who)) {
            out.push(v);
            return;
        }
        // A vendor's or platform's limit is the verdict (`limits.rs` puts
        // it first): "an allocation failed" beside it adds nothing.
        if super::limits::PlatformLimit::of(f).is_some() {
            return;
        }
        if stated_in_prose(f) && super::common::gives_no_sizes(f) {
            out.push(prose_verdict(f));
            return;
        }
        out.push(generic_verdict(f))
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        if tensorflow_runtime_error(f) {
            return super::tensorflow::TfOom.fixes(f, d, out);
        }
        if retried_by_tensorflow(f) {
            return super::tf_warning::TfAllocatorWarning.fixes(f, d, out);
        }
        if tactic_skipped_by_tensorrt(f) {
            out.push(fix(
                &TENSORRT_CHECK_BUILD_FINISHED,
                say!(
                    en: "TensorRT's builder skips a tactic whose memory does not fit and goes on with the others, so this warning is not the failure. Look further down the log for an error (`[E]`, `Error Code`) or a failed build: only that is one. If the engine was built, nothing is wrong; building on a GPU nothing else uses lets TensorRT also time the tactics that need more memory (they can be faster).",
                    zh: "TensorRT 的 builder 会跳过显存放不下的 tactic，接着尝试其他 tactic，所以这条警告不是失败本身。往日志后面找报错（`[E]`、`Error Code`）或构建失败的提示：只有那才是失败。如果 engine 已经构建出来，就没有问题；在没有其他程序使用的 GPU 上构建，TensorRT 还能测试那些需要更多显存的 tactic（它们可能更快）。"
                ),
            ));
            return;
        }
        if super::driver_log::kernel_driver(f).is_some() && super::driver_log::fixes(f, out) {
            return;
        }
        framework_fixes(d, out, |_, out| {
            if on_tpu(f) {
                super::xla::tpu_fixes(f, out);
                return;
            }
            // One request that is most of the device: that tensor first.
            if let (Some(a), Reading::OneRequestFills { requested, .. }) =
                (one_buffer_allocator(f), Reading::of(f, true))
            {
                out.push(shrink_one_tensor_fix(requested, a.feed));
            }
            generic_fixes(f, out)
        });
        super::stack::fit_fixes_to_stack(f, out);
    }
}

/// Whether the failure is stated only in the writer's words (`I get OOM
/// at 16k context`, `it keeps running out of memory`): no program's
/// message is in the text.
fn stated_in_prose(f: &Finding) -> bool {
    fact(f, "stated_in_prose") == Some("true")
}

/// The stack the writer names with the error (`CUDA out of memory`), if
/// any: a device word alone names none.
fn named_stack(f: &Finding) -> Option<&str> {
    fact(f, fact::REPORTED_BY).filter(|r| *r != crate::i18n::reporter::UNRECOGNISED.en)
}

/// The headline of a failure the writer states in prose: what they say,
/// and that it is only their words, never a reading of a message.
fn prose_headline(f: &Finding) -> Said {
    match named_stack(f) {
        Some(who) => say!(
            en: "Out of memory: the writer states it in prose, with no message ({who})",
            zh: "显存不足：只有作者的叙述，没有报错（{who}）",
            who = who
        ),
        None => say!(
            en: "Out of memory: the writer states it in prose, with no message",
            zh: "显存不足：只有作者的叙述，没有报错"
        ),
    }
}

/// The verdict on a failure stated in prose without a figure: nothing in
/// the text says how much was asked for, how large the device is or what
/// held it, so the explanation says so instead of reading a message. Which
/// memory is only known where the writer names a device's stack.
fn prose_verdict(f: &Finding) -> Verdict {
    let device = fact(f, crate::record::fact::MEMORY) == Some("device");
    let (title, memory) = match named_stack(f) {
        None if device => (
            say!(
                en: "No message to read: what filled the device's memory does not show",
                zh: "没有可读的报错：看不出是什么占满了显存"
            ),
            say!(
                en: "the device's memory ran out",
                zh: "显存用完了"
            ),
        ),
        Some(who) => (
            say!(
                en: "No message to read: what filled the device's memory does not show",
                zh: "没有可读的报错：看不出是什么占满了显存"
            ),
            say!(
                en: "the device's memory ran out ({who})",
                zh: "显存用完了（{who}）",
                who = who
            ),
        ),
        None => (
            say!(
                en: "No message to read: what filled the memory does not show",
                zh: "没有可读的报错：看不出是什么占满了显存或内存"
            ),
            say!(
                en: "memory ran out, without saying which",
                zh: "显存或内存用完了，但没说是哪一种"
            ),
        ),
    };
    verdict(
        Code::AllocationFailed,
        title,
        say_parts!(
            en: "The text says, in the writer's own words, that {memory}. The program's own message is not in it, so the size of the request, the memory's capacity and what held it are not known; the program's full message (and, for a GPU, nvidia-smi or the framework's memory summary at the failure) would show them.",
            zh: "文中只是作者用自己的话说{memory}。程序自己的报错不在其中，所以请求的大小、容量以及是什么占着它都无从得知；程序完整的报错（如果是 GPU，再加上失败时的 nvidia-smi 或框架的显存摘要）才能说明这些。",
            memory = memory
        ),
    )
}

/// TensorFlow's own runtime error in a form its family does not read
/// (`Resource exhausted: failed to allocate memory` with the op node that
/// failed), shown by its marks in the message or the lines around it, with
/// no size: explained as TensorFlow's out-of-memory, in its own API.
fn tensorflow_runtime_error(f: &Finding) -> bool {
    Framework::of(f) == Framework::TensorFlow
        && f.era.is_none()
        && f.category == Category::Oom
        && f.sizes.requested_bytes.is_none()
        && !on_tpu(f)
}

/// A failed allocation the detector found logged as a warning (the stream
/// executor's at info level), which TensorFlow's allocator retries.
fn retried_by_tensorflow(f: &Finding) -> bool {
    f.category == Category::Warning && f.era == Some(Era::CudaDriver)
}

/// TensorRT's builder skipping a tactic that needs more memory than is
/// free, which the detector found as a warning: it tries another tactic.
fn tactic_skipped_by_tensorrt(f: &Finding) -> bool {
    f.category == Category::Warning && f.era == Some(Era::Tensorrt)
}

fn skipped_tactic_headline(f: &Finding) -> Said {
    match (
        f.sizes.requested_bytes.map(fmt),
        f.sizes.free_bytes.map(fmt),
    ) {
        (Some(needed), Some(free)) => say!(
            en: "Warning, not an error: TensorRT skipped a tactic that needed {needed} ({free} free) and tried another",
            zh: "只是警告，不是报错：TensorRT 跳过了一个需要 {needed} 显存的 tactic（可用 {free}），改试别的 tactic",
            needed = needed,
            free = free
        ),
        (Some(needed), None) => say!(
            en: "Warning, not an error: TensorRT skipped a tactic that needed {needed} and tried another",
            zh: "只是警告，不是报错：TensorRT 跳过了一个需要 {needed} 显存的 tactic，改试别的 tactic",
            needed = needed
        ),
        _ => say!(
            en: "Warning, not an error: TensorRT skipped a tactic that needed more memory and tried another",
            zh: "只是警告，不是报错：TensorRT 跳过了一个显存不够的 tactic，改试别的 tactic"
        ),
    }
}

/// An allocator that asks for one tensor's buffer at a time, and where
/// its program takes the input shapes that size it.
struct PerTensorAllocator {
    who: Said,
    feed: Said,
}

/// ONNX Runtime's arena and CuPy's pool allocate per tensor: one request
/// is one tensor (`Reading::OneRequestFills` applies to them).
fn one_buffer_allocator(f: &Finding) -> Option<PerTensorAllocator> {
    match f.era {
        Some(Era::Onnxruntime) => Some(PerTensorAllocator {
            who: say!(en: "ONNX Runtime's arena", zh: "ONNX Runtime 的 arena"),
            feed: say!(
                en: " (the shapes of the inputs passed to session.run)",
                zh: "（也就是传给 session.run 的输入的形状）"
            ),
        }),
        Some(Era::CupyOomClass) => Some(PerTensorAllocator {
            who: say!(en: "CuPy's memory pool", zh: "CuPy 的内存池"),
            feed: say!(
                en: " (the shapes of the arrays created)",
                zh: "（也就是所创建数组的形状）"
            ),
        }),
        _ => None,
    }
}

/// A fragment that is empty in both languages when `value` is `None`.
fn maybe(value: Option<&str>, en: impl Fn(&str) -> String, zh: impl Fn(&str) -> String) -> Said {
    match value {
        Some(v) => Said {
            en: en(v),
            zh: zh(v),
        },
        None => Said::default(),
    }
}

fn generic_headline(f: &Finding) -> Said {
    if let Some(headline) = super::xla::tpu_runtime_headline(f) {
        return headline;
    }
    let size = f.sizes.requested_bytes.map(fmt);
    if f.era == Some(Era::TritonSharedMemory) {
        return match (size, extra_limit(f)) {
            (Some(req), Some(limit)) => say!(
                en: "A Triton kernel needs {req} of shared memory per block; this GPU allows {limit}",
                zh: "Triton kernel 每个 block 需要 {req} 的 shared memory，这块 GPU 只允许 {limit}",
                req = req,
                limit = fmt(limit)
            ),
            _ => say!(
                en: "A Triton kernel needs more shared memory per block than this GPU has",
                zh: "Triton kernel 每个 block 需要的 shared memory 超过了这块 GPU 的上限"
            ),
        };
    }
    let reporter = fact(f, fact::REPORTED_BY);
    let who_en = reporter.unwrap_or("A GPU allocation");
    let device = device_name(f);
    let on_en = device
        .as_deref()
        .map(|d| format!(" on {d}"))
        .unwrap_or_default();
    let on_zh = device
        .as_deref()
        .map(|d| format!("在 {d} 上"))
        .unwrap_or_default();
    let on = Said {
        en: on_en,
        zh: on_zh,
    };
    let mut said = generic_allocation_headline(size, reporter, who_en, device, on);
    // A runtime's code that names its host allocation (`..._OUT_OF_HOST_MEMORY`):
    // the Chinese lead names host memory, not the GPU's.
    if fact(f, fact::MEMORY) == Some("host") {
        if let Some(rest) = said.zh.strip_prefix("显存不足：") {
            said.zh = format!("内存不足：{rest}");
        }
    }
    said
}

fn generic_allocation_headline(
    size: Option<String>,
    reporter: Option<&str>,
    who_en: &str,
    device: Option<String>,
    on: Said,
) -> Said {
    match (size, reporter) {
        (Some(s), Some(who)) => say_parts!(
            en: "Out of memory: {who} could not allocate {s}{on}",
            zh: "显存不足：{who} 无法{on}分配 {s}",
            who = Said {
                en: who.to_string(),
                zh: reporter_zh(who),
            },
            s = Said::same(s),
            on = on
        ),
        (Some(s), None) => say_parts!(
            en: "Out of memory: {who} could not allocate {s}{on}",
            zh: "显存不足：{on}分配 {s} 失败{who}",
            // The Chinese sentence has no subject: it says what failed.
            who = Said {
                en: who_en.to_string(),
                zh: String::new(),
            },
            s = Said::same(s),
            on = on
        ),
        // Chinese names the reporter as the subject, not in nested brackets.
        (None, Some(who)) => say_parts!(
            en: "Out of memory: an allocation failed{at} ({who})",
            zh: "显存不足：{who} 报告{at}一次分配失败了",
            at = Said {
                en: on.en,
                zh: device
                    .as_deref()
                    .map(|d| format!(" {d} 上的"))
                    .unwrap_or_default(),
            },
            who = Said {
                en: who.to_string(),
                zh: reporter_zh(who),
            }
        ),
        (None, None) => say_parts!(
            en: "Out of memory: an allocation failed{at} ({who})",
            zh: "显存不足：{at}一次 GPU 分配失败了{who}",
            at = Said {
                en: on.en,
                zh: device
                    .as_deref()
                    .map(|d| format!("{d} 上的"))
                    .unwrap_or_default(),
            },
            who = Said {
                en: who_en.to_string(),
                zh: String::new(),
            }
        ),
    }
}

/// The GPU's shared memory per block, when the message states it.
fn extra_limit(f: &Finding) -> Option<u64> {
    f.sizes.extra.get("hardware_limit_bytes").copied().flatten()
}

/// A request larger than the whole device, when the message states both;
/// without the device's size, one larger than any GPU (1 TiB): such a size
/// was computed wrong, and no memory setting bears on it.
fn larger_than_the_gpu(f: &Finding) -> Option<Verdict> {
    let requested = f.sizes.requested_bytes?;
    let by = maybe(
        fact(f, fact::REPORTED_BY),
        |who| format!(" ({who})"),
        |who| format!("（{}）", reporter_zh(who)),
    );
    let size = fmt(requested);
    let Some(total) = f.sizes.total_bytes else {
        return BeyondGpus::of(requested).map(|beyond| {
            let title = match beyond {
                BeyondGpus::Every => say!(
                    en: "One allocation is larger than any GPU",
                    zh: "单次分配就比任何 GPU 都大"
                ),
                BeyondGpus::AllButTheLargest => say!(
                    en: "One allocation is larger than nearly any GPU",
                    zh: "单次分配就比几乎所有 GPU 都大"
                ),
            };
            verdict(
                Code::RequestExceedsCapacity,
                title,
                say_parts!(
                    en: "An allocation of {size} was requested in one piece{by}: more than {what}, so this is not memory pressure and no setting or freed memory can make room for it. The size itself is wrong: an overflowed or uninitialised dimension, or a negative size read as an unsigned number.",
                    zh: "一次性申请了 {size}{by}：比{what}都多，所以这不是显存吃紧，任何设置或释放出来的显存都腾不出这么大的空间。是这个大小本身算错了：维度溢出或未初始化，或者负数被当成了无符号数。",
                    size = Said::same(&size),
                    by = by.clone(),
                    what = beyond.what()
                ),
            )
        });
    };
    (requested > total).then(|| {
        let total = fmt(total);
        verdict(
            Code::RequestExceedsCapacity,
            say!(
                en: "One allocation is larger than this GPU",
                zh: "单次分配就比这块 GPU 还大"
            ),
            say_parts!(
                en: "An allocation of {size} was requested on a GPU with {total} in all{by}: no setting and no freed memory can make room for it. An array is far larger than intended: a shape bug, a whole dataset put on the device, or an attention or pairwise matrix over very long inputs.",
                zh: "在一块总共只有 {total} 的 GPU 上一次性申请了 {size}{by}：任何设置或释放出来的显存都腾不出这么大的空间。某个数组比预想的大得多：形状写错了、把整个数据集放上了设备，或者对超长输入算注意力矩阵或两两矩阵。",
                size = Said::same(&size),
                total = Said::same(total),
                by = by
            ),
        )
    })
}

fn generic_verdict(f: &Finding) -> Verdict {
    let size = f.sizes.requested_bytes.map(fmt);
    let device = device_name(f);
    // " on GPU 0" / "在 GPU 0 上": where the device is named.
    let on = maybe(
        device.as_deref(),
        |d| format!(" on {d}"),
        |d| format!("在 {d} 上"),
    );
    let on_en = on.en.clone();
    if f.era == Some(Era::TritonSharedMemory) {
        let limit = extra_limit(f).map(fmt);
        let first = say_parts!(
            en: "A Triton kernel was compiled to use {amount} of shared memory per thread block, more than this GPU's limit of {limit}.",
            zh: "Triton kernel 编译出来每个 thread block 要用{amount} shared memory，超过了这块 GPU 的上限{limit}。",
            amount = Said {
                en: size.clone().unwrap_or_else(|| "more".into()),
                zh: size.as_deref().map(|s| format!(" {s} 的")).unwrap_or_else(|| "的".into()),
            },
            limit = Said {
                en: limit.clone().unwrap_or_else(|| "its".into()),
                zh: limit.as_deref().map(|l| format!(" {l}")).unwrap_or_default(),
            }
        );
        return verdict(
            Code::SharedMemoryLimit,
            say!(
                en: "A kernel's configuration does not fit this GPU's shared memory",
                zh: "kernel 的配置超出了这块 GPU 的 shared memory"
            ),
            first.then(say!(
                en: "Shared memory is fast on-chip memory of each multiprocessor, not the GPU's main memory: a smaller batch or freeing GPU memory will not help. The kernel's tile sizes and pipeline stages (BLOCK_* and num_stages) were chosen for a GPU with more shared memory, e.g. an A100/H100 configuration running on a consumer card.",
                zh: "shared memory 是每个多处理器（SM）上的高速片上内存，不是 GPU 的主显存：减小 batch 或释放显存都没有用。kernel 的 tile 大小和流水线级数（BLOCK_* 和 num_stages）是按 shared memory 更多的 GPU 选的，比如在消费级显卡上跑 A100/H100 的配置。"
            )),
        );
    }
    let what = match f.era {
        Some(Era::LlamaCpp) => say_parts!(
            en: "llama.cpp asked cudaMalloc for {amount}{on} and the driver refused: the model weights, the KV cache or a compute buffer do not fit in the free GPU memory.",
            zh: "llama.cpp {on}向 cudaMalloc 申请{amount}，被驱动拒绝了：模型权重、KV cache 或某个计算缓冲区放不进空闲的显存。",
            amount = Said {
                en: size.clone().unwrap_or_else(|| "a buffer".into()),
                zh: size.as_deref().map(|s| format!(" {s}")).unwrap_or_else(|| "一个缓冲区".into()),
            },
            on = on.clone()
        ),
        Some(Era::Ctranslate2) => say!(
            en: "CTranslate2 (used by faster-whisper, WhisperX and others) failed a CUDA allocation: the model, the beams or the batch do not fit in the free GPU memory.",
            zh: "CTranslate2（faster-whisper、WhisperX 等都用它）的一次 CUDA 分配失败了：模型、beam 或 batch 放不进空闲的显存。"
        ),
        Some(Era::Onnxruntime) => say_parts!(
            en: "ONNX Runtime's memory arena could not get a buffer of {amount}. The message does not say whether that arena belongs to the CUDA execution provider or to the CPU; with the CUDA provider it is GPU memory.",
            zh: "ONNX Runtime 的内存池（arena）拿不到{amount}的缓冲区。报错没有说这个 arena 属于 CUDA execution provider 还是 CPU；如果是 CUDA provider，就是显存。",
            amount = Said {
                en: size.clone().unwrap_or_else(|| "the requested size".into()),
                zh: size.as_deref().map(|s| format!("一块 {s} ")).unwrap_or_else(|| "所申请大小".into()),
            }
        ),
        Some(Era::TorchOomClass) => say!(
            en: "PyTorch's OutOfMemoryError was raised, but without its allocator's usual \"Tried to allocate ...\" text: a library raised the class with its own message, or the message was cut off.",
            zh: "抛出了 PyTorch 的 OutOfMemoryError，但没有它的分配器通常带的 \"Tried to allocate ...\" 文字：要么是某个库用自己的消息抛出了这个异常类，要么是报错被截断了。"
        ),
        Some(Era::CupyOomClass) => match size.as_deref() {
            Some(s) => say!(
                en: "CuPy's memory pool could not allocate {s}.",
                zh: "CuPy 的内存池无法分配 {s}。",
                s = s
            ),
            None => say!(
                en: "CuPy's memory pool could not allocate the requested block.",
                zh: "CuPy 的内存池无法分配所申请的块。"
            ),
        },
        Some(Era::CudaDriver) | Some(Era::CudaRuntime) | Some(Era::Hip) => {
            let api = Said::same(if f.era == Some(Era::Hip) {
                "HIP"
            } else {
                "CUDA"
            });
            let error = fact(f, fact::ERROR_NAME);
            let error = Said {
                en: error.unwrap_or("an out-of-memory error").to_string(),
                zh: error.unwrap_or("显存不足").to_string(),
            };
            let amount = Said {
                en: size
                    .as_deref()
                    .map(|s| format!(" for {s}"))
                    .unwrap_or_default(),
                zh: size
                    .as_deref()
                    .map(|s| format!(" {s} "))
                    .unwrap_or_default(),
            };
            let place = Said {
                en: on_en.clone(),
                zh: device
                    .as_deref()
                    .map(|d| format!("在 {d} 上，"))
                    .unwrap_or_default(),
            };
            if Framework::of(f) == Framework::CuPy {
                say_parts!(
                    en: "A {api} allocation failed with {error}{amount}{place}. CuPy raises this from a CUDA runtime call it makes directly (its memory pool reports its own failures as OutOfMemoryError); memory that CuPy's pool keeps cached for reuse is not available to that call.",
                    zh: "{place}{api} 分配{amount}失败，错误是 {error}。CuPy 直接发起的 CUDA 运行时调用失败时会抛出这个错误（它的内存池自己的失败报的是 OutOfMemoryError）；CuPy 内存池为复用而缓存着的显存，这次调用用不上。",
                    api = api,
                    error = error,
                    amount = amount,
                    place = place
                )
            } else if !preallocating_framework_shows(f) {
                // No framework shown: what the code means for any program.
                say_parts!(
                    en: "A {api} allocation failed with {error}{amount}{place}: the GPU had no free memory for the request. The program's own allocations, another process, or memory still held after an earlier crash can fill it.",
                    zh: "{place}{api} 分配{amount}失败，错误是 {error}：GPU 上没有可满足这次请求的空闲显存。占满它的可能是程序自己的分配、别的进程，或者之前崩溃后仍未释放的显存。",
                    api = api,
                    error = error,
                    amount = amount,
                    place = place
                )
            } else {
                say_parts!(
                    en: "A {api} allocation failed with {error}{amount}{place}. TensorFlow and JAX print this when their allocator cannot get memory; TensorFlow also reserves most of the GPU when it starts, leaving little for other libraries.",
                    zh: "{place}{api} 分配{amount}失败，错误是 {error}。TensorFlow 和 JAX 的分配器拿不到显存时会打印这个；TensorFlow 启动时还会预留 GPU 的大部分显存，留给其他库的很少。",
                    api = api,
                    error = error,
                    amount = amount,
                    place = place
                )
            }
        }
        Some(Era::Paddle) => paddle_what(f, size.as_deref(), on.clone()),
        // Without ggml's buffers or a stated size nothing shows what the
        // program put on the GPU: the verdict does not guess its size.
        // ncnn's tools name their own tiles.
        Some(Era::Vulkan)
            if NamedProgram::of(f).is_some_and(|p| {
                matches!(
                    p.class,
                    ProgramClass::TiledUpscaler | ProgramClass::NcnnTool
                )
            }) =>
        {
            program_note(f)
        }
        Some(Era::Vulkan) if !vulkan_shows_workload(f) => say!(
            en: "A Vulkan device-memory allocation failed (VK_ERROR_OUT_OF_DEVICE_MEMORY). The message states no sizes, so it does not show that the program's data is too large for the GPU: this error can also come from the driver or from the library's choice of memory heap, not only from a full GPU.",
            zh: "一次 Vulkan 设备内存（显存）分配失败（VK_ERROR_OUT_OF_DEVICE_MEMORY）。报错里没有任何大小，所以看不出是程序的数据对这块 GPU 来说太大：这个错误也可能来自驱动，或来自库对内存堆（heap）的选择，不一定是 GPU 被占满了。"
        ),
        Some(Era::Vulkan) => {
            let ggml = fact(f, fact::REPORTED_BY).filter(|r| r.contains("ggml"));
            say_parts!(
                en: "A Vulkan device-memory allocation{amount}{place} failed (VK_ERROR_OUT_OF_DEVICE_MEMORY){inside}: what the program put on the GPU (for a language model: its weights, its context or KV cache, and compute buffers) does not fit in the free memory.",
                zh: "{place}一次{amount}Vulkan 设备内存（显存）分配失败（VK_ERROR_OUT_OF_DEVICE_MEMORY）{inside}：程序放到 GPU 上的东西（对语言模型来说：权重、上下文或 KV cache，以及计算缓冲区）放不进空闲的显存。",
                amount = Said {
                    en: size.as_deref().map(|s| format!(" of {s}")).unwrap_or_default(),
                    zh: size.as_deref().map(|s| format!(" {s} 的 ")).unwrap_or_else(|| " ".into()),
                },
                place = maybe(device.as_deref(), |d| format!(" on {d}"), |d| format!("在 {d} 上，")),
                inside = maybe(ggml, |r| format!(", in {r}"), |r| format!("，发生在 {} 中", reporter_zh(r)))
            )
        }
        _ if deserialising_engine(f) => {
            let amount = Said {
                en: size
                    .as_deref()
                    .map(|s| format!(" {s} of"))
                    .unwrap_or_default(),
                zh: size
                    .as_deref()
                    .map(|s| format!(" {s} 的"))
                    .unwrap_or_default(),
            };
            say_parts!(
                en: "TensorRT could not get{amount} GPU memory while deserialising an engine that was already built: loading puts the engine's weights and its own memory on the GPU, so what else holds the GPU (other engines loaded beside it, such as the other parts of the same pipeline, and other processes) and the size the engine was built for decide it. The builder's workspace plays no part in loading.",
                zh: "TensorRT 在反序列化一个已经构建好的 engine 时拿不到{amount}显存：加载会把 engine 的权重和它自己需要的显存放到 GPU 上，所以决定成败的是还有什么占着 GPU（和它一起加载的其他 engine，比如同一个流水线的其他部分，以及其他进程），以及 engine 构建时所定的尺寸。加载时不涉及 builder 的 workspace。",
                amount = amount
            )
        }
        // TensorRT's default allocator with no sign of a build: the phase
        // is not shown, the GPU's free memory is what is known.
        _ if fact(f, fact::REPORTED_BY) == Some("TensorRT")
            && f.era != Some(Era::Tensorrt)
            && !building_engine(f) =>
        {
            let amount = Said {
                en: size.clone().unwrap_or_else(|| "a buffer".into()),
                zh: size
                    .as_deref()
                    .map(|s| format!(" {s}"))
                    .unwrap_or_else(|| "一块缓冲区".into()),
            };
            say_parts!(
                en: "TensorRT's allocator asked CUDA for {amount} and was refused: the GPU had no free block that large. The message does not show whether TensorRT was building an engine, loading one or running it; in each, what else holds the GPU takes from that room.",
                zh: "TensorRT 的分配器向 CUDA 申请{amount}，被拒绝了：GPU 上没有这么大的空闲块。报错看不出 TensorRT 当时是在构建 engine、加载 engine 还是运行它；无论哪种，占着 GPU 的其他东西都会挤掉这部分空间。",
                amount = amount
            )
        }
        Some(Era::Tensorrt) => match size.as_deref() {
            Some(s) => say!(
                en: "TensorRT could not get {s} of GPU memory (Error Code 2: OutOfMemory), while building an engine (its tactics and workspace) or running it.",
                zh: "TensorRT 拿不到 {s} 的显存（Error Code 2: OutOfMemory），发生在构建 engine（它的 tactic 和 workspace）或运行它的时候。",
                s = s
            ),
            None => say!(
                en: "TensorRT could not get the GPU memory it needed (Error Code 2: OutOfMemory), while building an engine (its tactics and workspace) or running it.",
                zh: "TensorRT 拿不到它需要的显存（Error Code 2: OutOfMemory），发生在构建 engine（它的 tactic 和 workspace）或运行它的时候。"
            ),
        },
        Some(Era::Metal) => say!(
            en: "Apple's Metal driver stopped a GPU command buffer with \"Insufficient Memory\": macOS could not give the GPU the memory this work needed. On Apple silicon the GPU shares the machine's RAM (unified memory), so the model, its working buffers and every other app draw on the same memory.",
            zh: "Apple 的 Metal 驱动以 \"Insufficient Memory\" 中止了一个 GPU 命令缓冲区：macOS 给不了 GPU 这项工作需要的内存。在 Apple 芯片上，GPU 和整台机器共用内存（统一内存），所以模型、它的工作缓冲区和其他所有应用都从同一块内存里取用。"
        ),
        _ => {
            let reporter = fact(f, fact::REPORTED_BY);
            say_parts!(
                en: "{who} reported that an allocation failed{place}.",
                zh: "{who} 报告{place}一次分配失败了。",
                who = Said {
                    en: sentence_start(reporter.unwrap_or("The backend")),
                    zh: reporter.map_or_else(|| "后端".to_string(), reporter_zh),
                },
                place = maybe(device.as_deref(), |d| format!(" on {d}"), |d| format!("在 {d} 上的"))
            )
            .then(program_note(f))
            .then(trtllm_executor_note(f))
            .then(super::common::no_sizes_note(f))
        }
    };
    let what = what.then(skipped_tactic_note(f));
    // Printed again is not retried: TensorRT's builder moves on to the
    // next tactic, and a paste can hold two programs' runs.
    let repeated = if f.occurrences > 1 && !is_skipped_tactic(f) {
        say!(
            en: "The same failure was printed {n} times.",
            zh: "同样的失败打印了 {n} 次。",
            n = f.occurrences
        )
    } else {
        Said::default()
    };
    // What can be concluded, not the headline again; a context that does
    // not fit says more than "an allocation failed".
    let title = if creates_a_context(f) {
        say!(
            en: "Creating the CUDA context failed: the GPU is full or unusable",
            zh: "创建 CUDA 上下文失败：GPU 已被占满或无法使用"
        )
    } else if is_skipped_tactic(f) && !build_failed(f) {
        say!(
            en: "TensorRT skipped a tactic that did not fit, which by itself is not fatal",
            zh: "TensorRT 跳过了一个放不下的 tactic，这本身并不致命"
        )
    } else if deserialising_engine(f) {
        say!(
            en: "Loading an already built TensorRT engine did not fit in the free GPU memory",
            zh: "加载一个已经构建好的 TensorRT engine 时，空闲显存放不下"
        )
    } else if super::stack::named_remedy(&f.text).is_some() {
        say!(
            en: "The program's own message says what to change",
            zh: "程序自己的报错说明了该改什么"
        )
    } else if let Some(r) = TrtllmExecutorReport::of(f) {
        say!(
            en: "TensorRT-LLM could not fit its {component} in the {free} GiB left free of {total} GiB",
            zh: "TensorRT-LLM 的 {component} 放不进 {total} GiB 中剩下的 {free} GiB 空闲显存",
            component = r.component.as_str(),
            free = r.free_gib.as_str(),
            total = r.total_gib.as_str()
        )
    } else if let Some((title, _)) = super::levers::data_library_reading(f) {
        // A data library's message says what failed, where it gives no size.
        title
    } else {
        super::common::allocation_failed_title(f)
    };
    verdict(Code::AllocationFailed, title, what.then(repeated))
}

/// A Vulkan failure whose message shows what was on the GPU: ggml's
/// buffers, or a stated size.
fn vulkan_shows_workload(f: &Finding) -> bool {
    fact(f, fact::REPORTED_BY).is_some_and(|r| r.contains("ggml"))
        || f.sizes.requested_bytes.is_some()
}

/// TensorRT's builder reports the memory a tactic could not get (its
/// virtual memory buffer's `resizePhysical`, `skipping tactic ... due to
/// exception`, autotuning's buffer) and goes on with the next tactic.
fn is_skipped_tactic(f: &Finding) -> bool {
    let tensorrt = f.era == Some(Era::Tensorrt) || fact(f, fact::REPORTED_BY) == Some("TensorRT");
    const MARKS: &[&str] = &["resizePhysical", "skipping tactic", "autotuning"];
    let location = fact(f, fact::LOCATION).unwrap_or("");
    tensorrt
        && MARKS
            .iter()
            .any(|m| f.text.contains(m) || location.contains(m))
}

/// TensorRT failed while deserialising an engine (its runtime's
/// `safeDeserialize.cpp::load`, "Could not deserialize engine"), not while
/// building one.
fn deserialising_engine(f: &Finding) -> bool {
    let tensorrt = f.era == Some(Era::Tensorrt) || fact(f, fact::REPORTED_BY) == Some("TensorRT");
    let location = fact(f, fact::LOCATION).unwrap_or("");
    tensorrt
        && [location, f.text.as_str()]
            .iter()
            .any(|t| t.contains("eserializ") || t.contains("eserialis"))
}

/// The finding shows TensorRT building an engine: a tactic it skipped, the
/// builder, or the build's own failure.
fn building_engine(f: &Finding) -> bool {
    is_skipped_tactic(f)
        || build_failed(f)
        || [
            "Builder",
            "builder",
            "buildSerializedNetwork",
            "buildEngine",
        ]
        .iter()
        .any(|w| f.text.contains(w))
}

/// The log shows the engine build failed right after the error.
fn build_failed(f: &Finding) -> bool {
    f.text
        .contains(crate::detect::generic::TENSORRT_BUILD_FAILED)
}

fn skipped_tactic_note(f: &Finding) -> Said {
    if !is_skipped_tactic(f) {
        return Said::default();
    }
    if build_failed(f) {
        return say!(
            en: "The builder went on after the first failures, but the log shows the engine build failed: the engine needs more memory than this GPU had free.",
            zh: "builder 在最初几次失败后还继续了，但日志显示 engine 构建失败了：这个 engine 需要的显存比这块 GPU 当时空闲的多。"
        );
    }
    say!(
        en: "TensorRT prints this while building an engine when one tactic's memory does not fit, then tries the next tactic: by itself it is not fatal. If the build went on and wrote the engine, the engine is valid (a tactic that needed more memory was skipped, which can make it slower); only a build that stops here failed for lack of memory.",
        zh: "TensorRT 在构建 engine 时，如果某个 tactic 需要的显存放不下，就会打印这条错误，然后尝试下一个 tactic：它本身并不致命。如果构建继续下去并写出了 engine，这个 engine 是有效的（只是跳过了一个需要更多显存的 tactic，可能会慢一些）；只有在这里停下的构建才是因为显存不足而失败。"
    )
}

/// What PaddlePaddle's allocator was refused, and Paddle's own advice.
fn paddle_what(f: &Finding, size: Option<&str>, on: Said) -> Said {
    let free = f.sizes.free_bytes.map(fmt);
    // What Paddle's allocator already held on the GPU, when the message says.
    let used = f.sizes.extra.get("used_bytes").copied().flatten().map(fmt);
    // The message gives no total: who holds the rest is unknown.
    let advice = match &used {
        Some(used) => say!(
            en: "The message does not give the GPU's size: if {used} is close to it, Paddle's own work fills the card and a smaller batch is the fix; if not, another process holds the rest (Paddle's own advice: check whether another process is using this GPU).",
            zh: "报错没有给出 GPU 的总容量：如果 {used} 接近它，就是 Paddle 自己的任务占满了卡，减小 batch 就行；否则是另一个进程占着其余的显存（Paddle 自己的建议：检查是否有其他进程在用这块 GPU）。",
            used = used
        ),
        None => say!(
            en: "Paddle's own advice in the message: check whether another process is using this GPU; if none is, use a smaller batch.",
            zh: "报错里 Paddle 自己的建议是：检查是否有其他进程在用这块 GPU；如果没有，就减小 batch。"
        ),
    };
    say_parts!(
        en: "PaddlePaddle's allocator asked the driver for {amount}{on} and was refused{left}{held}.",
        zh: "PaddlePaddle 的分配器{on}向驱动申请{amount}，被拒绝了{left}{held}。",
        amount = Said {
            en: size.unwrap_or("a new chunk").to_string(),
            zh: size.map(|s| format!(" {s}")).unwrap_or_else(|| "一块新的显存块".into()),
        },
        on = on,
        left = maybe(
            free.as_deref(),
            |free| format!(": only {free} was still available"),
            |free| format!("：当时只剩 {free} 可用")
        ),
        held = maybe(
            used.as_deref(),
            |used| format!(", with {used} already allocated by Paddle"),
            |used| format!("，而 Paddle 自己已经分配了 {used}")
        )
    )
    .then(advice)
}

/// The vendor's own tool and visible-devices variable, picked per finding.
const FREE_THE_GPU: FixSpec = FixSpec::new("free-the-gpu", "Free the GPU", "腾出这块 GPU");

/// Vulkan runs on any vendor's GPU: the text names each vendor's tool.
const CLOSE_OTHER_GPU_PROGRAMS: FixSpec = FixSpec::new(
    "close-other-gpu-programs",
    "Close other programs that use the GPU",
    "关掉其他占用 GPU 的程序",
);

/// NVIDIA's image-processing library (NPP): the images and scratch
/// buffers a call allocates.
const NPP_IMAGES_AND_BUFFERS: FixSpec = FixSpec::new(
    "npp-images-and-buffers",
    "Check the images and buffers NPP was asked to allocate",
    "检查让 NPP 分配的图像和缓冲区",
)
.sources(&["NVIDIA NPP documentation: image memory management (nppiMalloc, scratch buffers)"]);

/// An NPP call failed: its status name (`NPP_MEMORY_ALLOCATION_ERR`) or a
/// wrapper's NPP exception (managedCuda's `Source=NPP`).
fn npp_call(f: &Finding) -> bool {
    let reporter = fact(f, fact::REPORTED_BY).unwrap_or("");
    reporter.contains("NPP")
        || fact(f, fact::ERROR_NAME).is_some_and(|n| n.starts_with("NPP_"))
        || f.text.contains("NPP_MEMORY_ALLOCATION_ERR")
}

/// TensorRT's optimisation profiles and builder workspace.
const TENSORRT_SMALLER_LIMITS: FixSpec = FixSpec::new(
    "tensorrt-smaller-engine-limits",
    "Build the engine with smaller limits",
    "用更小的上限构建 engine",
)
.cost(Cost::Quality);

/// Apple silicon's unified memory.
const LEAVE_GPU_MORE_RAM: FixSpec = FixSpec::new(
    "leave-gpu-more-unified-memory",
    "Leave the GPU more of the machine's memory",
    "给 GPU 多留一些机器的内存",
)
.vendors(&[Vendor::Apple]);

/// CTranslate2's `compute_type`, `beam_size`, `batch_size`.
const CTRANSLATE2_LESS_PER_REQUEST: FixSpec = FixSpec::new(
    "ctranslate2-less-per-request",
    "Use less memory per request",
    "让每个请求少用些显存",
)
.cost(Cost::Quality)
.sources(&["CTranslate2 documentation: quantization (compute_type)"]);

/// The CUDA execution provider's options.
const ONNXRUNTIME_ARENA: FixSpec = FixSpec::new(
    "onnxruntime-bound-arena",
    "Bound ONNX Runtime's arena",
    "给 ONNX Runtime 的 arena 设上限",
)
.frameworks(&[Framework::OnnxRuntime])
.sources(&[
    "ONNX Runtime documentation: CUDA Execution Provider (gpu_mem_limit, arena_extend_strategy)",
]);

const CUPY_RELEASE_OR_CAP: FixSpec = FixSpec::new(
    "cupy-release-or-cap-pool",
    "Release or cap CuPy's pool",
    "释放 CuPy 的内存池或给它设上限",
)
.frameworks(&[Framework::CuPy])
.sources(&["CuPy documentation: Memory Management"]);

/// TensorFlow's and JAX's preallocation settings.
const STOP_PREALLOCATION: FixSpec = FixSpec::new(
    "stop-framework-preallocation",
    "Stop frameworks from reserving the whole GPU",
    "不要让框架预留整块 GPU",
)
.frameworks(&[Framework::TensorFlow, Framework::Jax])
.sources(&[
    "TensorFlow documentation: Use a GPU (set_memory_growth)",
    "JAX documentation: GPU memory allocation",
])
.applied_when(&[
    "allow_growth=true",
    "set_memory_growth(",
    "xla_python_client_preallocate=false",
]);

fn generic_fixes(f: &Finding, out: &mut Vec<Fix>) {
    // A program that names itself is fixed through its own settings.
    let own = program_fixes(f);
    if !own.is_empty() {
        out.extend(own);
        return;
    }
    match f.era {
        Some(Era::TritonSharedMemory) => {
            out.push(fix(
                &TRITON_KERNEL_CONFIG,
                say!(
                    en: "Update the library that ships the kernel (vLLM, unsloth, flash-linear-attention, ...): newer releases often carry configurations for more GPUs. If you own the kernel, lower num_stages or the BLOCK_* sizes in its triton.Config / autotune list.",
                    zh: "升级提供这个 kernel 的库（vLLM、unsloth、flash-linear-attention 等）：新版本通常带有适配更多 GPU 的配置。如果 kernel 是你自己写的，就在它的 triton.Config / autotune 列表里调低 num_stages 或 BLOCK_* 的大小。"
                ),
            ));
            out.push(fix(
                &NON_TRITON_PATH,
                say!(
                    en: "Disable the Triton kernel (e.g. torch.compile off, a different attention backend) to test; batch size and memory settings do not affect this error.",
                    zh: "先关掉这个 Triton kernel 试试（比如关闭 torch.compile、换一个注意力后端）；batch size 和显存设置对这个错误没有影响。"
                ),
            ));
        }
        Some(Era::LlamaCpp) => {
            out.push(llama_levers(f, LlamaFamily::of(f).unwrap_or(LlamaFamily::LlamaCpp)));
            out.push(free_the_gpu(f));
        }
        Some(Era::Paddle) => {
            // Paddle's own allocation far above what was left free: its own
            // work fills what it could see, so less work comes first.
            let used = f.sizes.extra.get("used_bytes").copied().flatten();
            let own_work_fills = match (used, f.sizes.free_bytes) {
                (Some(used), Some(free)) => used >= free.saturating_mul(super::thresholds::PADDLE_OWN_WORK_RATIO),
                _ => false,
            };
            if own_work_fills {
                out.push(super::common::workload_fix_for(f));
                out.push(free_the_gpu(f));
            } else {
                out.push(free_the_gpu(f));
            }
        }
        Some(Era::Vulkan) => {
            let ggml = fact(f, fact::REPORTED_BY).is_some_and(|r| r.contains("ggml"));
            if ggml {
                out.push(llama_levers(f, LlamaFamily::of(f).unwrap_or(LlamaFamily::Ggml)));
            } else if vulkan_shows_workload(f) || super::levers::program_lever(f).is_some() {
                // A program with its own levers (MLC-LLM) is fixed through them.
                out.push(workload_fix_for(f));
            }
            // Vulkan runs on any vendor's GPU: no one vendor's tools.
            out.push(close_other_gpu_programs());
            if !vulkan_shows_workload(f) {
                out.push(fix(
                    &UPDATE_VULKAN_DRIVER_AND_LIBRARY,
                    say!(
                        en: "If the GPU is not full, the size of the work is not the cause: update the GPU driver and the Vulkan library the program uses, and report the failure to that library with the driver version and `vulkaninfo`'s memory heaps.",
                        zh: "如果 GPU 并没有被占满，原因就不在工作量的大小：更新 GPU 驱动和程序所用的 Vulkan 库，并把驱动版本和 `vulkaninfo` 列出的内存堆一起报告给这个库。"
                    ),
                ));
            }
        }
        Some(Era::Metal) => {
            out.push(workload_fix());
            out.push(fix(
                &LEAVE_GPU_MORE_RAM,
                say!(
                    en: "Quit other apps that hold much memory (Activity Monitor → Memory): on Apple silicon they take from the same RAM the GPU uses. A Mac with more unified memory is the other way out.",
                    zh: "退出占用大量内存的其他应用（活动监视器 → 内存）：在 Apple 芯片上，它们和 GPU 用的是同一块内存。另一条路是换一台统一内存更大的 Mac。"
                ),
            ));
        }
        Some(Era::Ctranslate2) => out.push(fix(
            &CTRANSLATE2_LESS_PER_REQUEST,
            say!(
                en: "Load the model with compute_type=\"int8_float16\" (or \"int8\"), lower beam_size and batch_size, use a smaller model, or device=\"cpu\" to test.",
                zh: "用 compute_type=\"int8_float16\"（或 \"int8\"）加载模型，调低 beam_size 和 batch_size，换更小的模型，或者用 device=\"cpu\" 测试。"
            ),
        )),
        Some(Era::Onnxruntime) => out.push(fix(
            &ONNXRUNTIME_ARENA,
            say!(
                en: "For the CUDA provider set provider options {{\"gpu_mem_limit\": N, \"arena_extend_strategy\": \"kSameAsRequested\"}}; use smaller inputs or batches; load fewer models per GPU.",
                zh: "CUDA provider 设置 provider options {{\"gpu_mem_limit\": N, \"arena_extend_strategy\": \"kSameAsRequested\"}}；用更小的输入或 batch；每块 GPU 上少加载几个模型。"
            ),
        )),
        Some(Era::CupyOomClass) => out.push(cupy_release_or_cap()),
        // CuPy's own runtime error: its pool, not another framework's.
        Some(Era::CudaDriver) | Some(Era::CudaRuntime) | Some(Era::Hip)
            if Framework::of(f) == Framework::CuPy =>
        {
            out.push(cupy_release_or_cap())
        }
        // No framework shown: first see what holds the GPU.
        Some(Era::CudaDriver) | Some(Era::CudaRuntime) | Some(Era::Hip)
            if !preallocating_framework_shows(f) =>
        {
            out.push(fix(
                &FREE_THE_GPU,
                say!(
                    en: "Check what holds the GPU with {smi} and stop it; memory still held after a crash or a hung process is freed only when that process ends (or after a reboot).",
                    zh: "用 {smi} 查看是谁占着 GPU，并结束它；崩溃或卡死的进程占着的显存，要等那个进程结束（或重启机器）才会释放。",
                    smi = Vendor::of(f).smi()
                ),
            ))
        }
        Some(Era::CudaDriver) | Some(Era::CudaRuntime) | Some(Era::Hip) => out.push(fix(
            &STOP_PREALLOCATION,
            say!(
                en: "TensorFlow: TF_FORCE_GPU_ALLOW_GROWTH=true (or tf.config.experimental.set_memory_growth); JAX: XLA_PYTHON_CLIENT_PREALLOCATE=false or XLA_PYTHON_CLIENT_MEM_FRACTION=.5; and stop other processes shown by {smi}.",
                zh: "TensorFlow：TF_FORCE_GPU_ALLOW_GROWTH=true（或 tf.config.experimental.set_memory_growth）；JAX：XLA_PYTHON_CLIENT_PREALLOCATE=false 或 XLA_PYTHON_CLIENT_MEM_FRACTION=.5；再结束 {smi} 显示的其他进程。",
                smi = Vendor::of(f).smi()
            ),
        )),
        _ => {}
    }
    // llama.cpp, ONNX Runtime, CTranslate2 and CuPy have their own fixes
    // above; a training-style workload fix does not apply to them.
    if !matches!(
        f.era,
        Some(
            Era::TritonSharedMemory
                | Era::LlamaCpp
                | Era::Onnxruntime
                | Era::Ctranslate2
                | Era::CupyOomClass
                | Era::Metal
                | Era::Tensorrt
                | Era::Vulkan
        )
    ) {
        workload_fixes(f, out);
    }
}

/// TensorFlow or JAX shows in the finding (a traceback, or the source
/// path TensorFlow's and XLA's C++ logs print): their preallocation is
/// then the likely holder of the GPU.
fn preallocating_framework_shows(f: &Finding) -> bool {
    matches!(Framework::of(f), Framework::TensorFlow | Framework::Jax)
        || ["tensorflow/", "xla/", "jaxlib"]
            .iter()
            .any(|mark| f.text.contains(mark))
}

/// Other processes holding the GPU, and how to see them.
fn free_the_gpu(f: &Finding) -> Fix {
    let vendor = Vendor::of(f);
    fix(
        &FREE_THE_GPU,
        say!(
            en: "{smi} shows other processes (a second server, a desktop compositor) holding memory; close them or pick another GPU with {visible}.",
            zh: "{smi} 会列出占着显存的其他进程（第二个服务、桌面合成器）；关掉它们，或者用 {visible} 换一块 GPU。",
            smi = capitalise(vendor.smi()),
            visible = vendor.visible_devices()
        ),
    )
}

/// What else holds the GPU: each vendor's tool for Vulkan, which runs on
/// any vendor's GPU; the vendor's own tool otherwise.
fn other_holders(f: &Finding) -> Fix {
    if f.era == Some(Era::Vulkan) || f.text.contains("Vulkan") {
        close_other_gpu_programs()
    } else {
        free_the_gpu(f)
    }
}

fn close_other_gpu_programs() -> Fix {
    fix(
        &CLOSE_OTHER_GPU_PROGRAMS,
        say!(
            en: "A second model server, a game or a browser's GPU process holds memory too; your GPU vendor's tool (nvidia-smi, rocm-smi, or Task Manager's GPU view on Windows) shows who holds how much.",
            zh: "另一个模型服务、游戏或浏览器的 GPU 进程也占着显存；用你的 GPU 厂商的工具（nvidia-smi、rocm-smi，或 Windows 任务管理器的 GPU 视图）查看谁占了多少。"
        ),
    )
}

/// CuPy's pool: its cached blocks and its cap.
fn cupy_release_or_cap() -> Fix {
    fix(
        &CUPY_RELEASE_OR_CAP,
        say!(
            en: "cupy.get_default_memory_pool().free_all_blocks() returns cached blocks; cupy.get_default_memory_pool().set_limit(size=...) keeps CuPy from taking memory other libraries need.",
            zh: "cupy.get_default_memory_pool().free_all_blocks() 归还缓存着的块；cupy.get_default_memory_pool().set_limit(size=...) 让 CuPy 不去占用其他库需要的显存。"
        ),
    )
}

/// NVENC's own status text and calls, and FFmpeg's NVENC encoders: what
/// shows a hardware video encoder failed to open.
const NVENC_WORDS: &[&str] = &["_nvenc", "nvenc", "NVENC", "OpenEncodeSessionEx"];

/// The fixes of a program that names itself and whose memory is not a
/// model's workload (NVENC) or is set in its own files (darknet's .cfg);
/// empty for every other finding.
/// TensorRT-LLM's executor report of a component that did not fit: the
/// component, the GPU's total and what was free before it was tried, in
/// GiB (`tensorrt_llm` executor creation, "insufficient GPU memory").
struct TrtllmExecutorReport {
    component: String,
    total_gib: String,
    free_gib: String,
}

impl TrtllmExecutorReport {
    fn of(f: &Finding) -> Option<TrtllmExecutorReport> {
        static RE: std::sync::OnceLock<[regex::Regex; 3]> = std::sync::OnceLock::new();
        let [component, total, free] = RE.get_or_init(|| {
            [
                crate::constant_regex(
                    r"The following component could not be created: ([^\n]{1,80})",
                ),
                crate::constant_regex(r"Total GPU memory \(GiB\): (\d+(?:\.\d+)?)"),
                crate::constant_regex(
                    r"Free GPU memory before component creation attempt \(GiB\): (\d+(?:\.\d+)?)",
                ),
            ]
        });
        if fact(f, fact::REPORTED_BY) != Some("TensorRT-LLM") {
            return None;
        }
        let first = |re: &regex::Regex| re.captures(&f.text).map(|c| c[1].trim().to_string());
        Some(TrtllmExecutorReport {
            component: first(component)?,
            total_gib: first(total)?,
            free_gib: first(free)?,
        })
    }
}

/// The figures of TensorRT-LLM's executor report, in the Why.
fn trtllm_executor_note(f: &Finding) -> Said {
    let Some(r) = TrtllmExecutorReport::of(f) else {
        return Said::default();
    };
    say!(
        en: "Its executor could not create the {component}: {free} GiB of the GPU's {total} GiB was free before it tried, the model and the components created before it holding the rest. TensorRT-LLM sizes the KV cache from the memory free at that point (kv_cache_config.free_gpu_memory_fraction of it, 0.9 by default) and needs room beside it for the batch's activations.",
        zh: "它的 executor 没能创建 {component}：尝试之前，这块 GPU 的 {total} GiB 里还有 {free} GiB 空闲，其余被模型和之前创建的组件占着。TensorRT-LLM 按那时的空闲显存来定 KV cache 的大小（取其中的 kv_cache_config.free_gpu_memory_fraction，默认 0.9），而且旁边还要给这一批的激活留出空间。",
        component = r.component.as_str(),
        free = r.free_gib.as_str(),
        total = r.total_gib.as_str()
    )
}

/// TensorRT-LLM's own levers for an executor that did not fit.
const TRTLLM_SMALLER_KV_AND_BATCH: FixSpec = FixSpec::new(
    "trtllm-smaller-kv-cache-and-batch",
    "Give TensorRT-LLM's KV cache and batch less memory",
    "给 TensorRT-LLM 的 KV cache 和 batch 少分些显存",
)
.cost(Cost::Quality)
.sources(&[
    "TensorRT-LLM documentation: How to Change KV Cache Behavior (KvCacheConfig free_gpu_memory_fraction)",
    "TensorRT-LLM documentation: Memory Usage of TensorRT-LLM",
]);

pub(super) fn program_fixes(f: &Finding) -> Vec<Fix> {
    // An image-processing library's call: the images and buffers it was
    // asked for, and what else holds the card; no model runs in it.
    if npp_call(f) {
        return vec![
            fix(
                &NPP_IMAGES_AND_BUFFERS,
                say!(
                    en: "NPP takes device memory only for what it is asked to hold: images and buffers (nppiMalloc_*, or a wrapper's image class such as managedCuda's NPPImage_*) and the scratch buffers whose sizes the *GetBufferSize* calls return. Check the width, height and channels of the image whose allocation failed (a size read wrong, zero or huge, fails the same way); free or reuse the images and scratch buffers a loop allocates for every frame (nppiFree, or Dispose in managedCuda), and split very large images into tiles.",
                    zh: "NPP 只为它被要求保存的东西申请显存：图像和缓冲区（nppiMalloc_*，或封装库的图像类，比如 managedCuda 的 NPPImage_*），以及 *GetBufferSize* 调用返回大小的临时缓冲区。检查分配失败的那张图像的宽、高和通道数（尺寸读错了，为零或极大，也会这样失败）；循环里每帧都分配的图像和临时缓冲区要释放或复用（nppiFree，managedCuda 里用 Dispose），特别大的图像分块处理。"
                ),
            ),
            other_holders(f),
        ];
    }
    if TrtllmExecutorReport::of(f).is_some() {
        return vec![
            fix(
                &TRTLLM_SMALLER_KV_AND_BATCH,
                say!(
                    en: "Lower kv_cache_config.free_gpu_memory_fraction (KvCacheConfig(free_gpu_memory_fraction=0.7); trtllm-serve: --kv_cache_free_gpu_memory_fraction 0.7) so the KV cache leaves room, and lower max_batch_size, max_num_tokens and max_seq_len so each step needs less; more tensor parallelism or a quantised checkpoint leaves each GPU less of the model.",
                    zh: "调低 kv_cache_config.free_gpu_memory_fraction（KvCacheConfig(free_gpu_memory_fraction=0.7)；trtllm-serve 用 --kv_cache_free_gpu_memory_fraction 0.7），让 KV cache 留出空间；调低 max_batch_size、max_num_tokens 和 max_seq_len，让每一步需要的更少；加大张量并行或换量化的 checkpoint，每块 GPU 上的模型部分就更小。"
                ),
            ),
            other_holders(f),
        ];
    }
    // llama.cpp and the programs built on it: their own options first,
    // then what else holds the GPU.
    if let Some(family) = LlamaFamily::of(f) {
        return vec![llama_levers(f, family), other_holders(f)];
    }
    let reporter = fact(f, fact::REPORTED_BY).unwrap_or("");
    let nvenc = NVENC_WORDS
        .iter()
        .any(|w| f.text.contains(w) || reporter.contains(w));
    // Creating the encoder's CUDA context is not opening a session: a
    // context that does not fit means the card's memory is really taken.
    if nvenc && creates_a_context(f) && !f.text.contains("OpenEncodeSession") {
        return vec![
            fix(
                &super::common::CHECK_GPU_HOLDERS,
                say!(
                    en: "The encoder could not even create its CUDA context (cuCtxCreate), which needs a few hundred MiB before any frame is encoded: the GPU's memory is really taken, or the GPU is unusable. Run `nvidia-smi` to see what holds it (another program, a stuck process, or a desktop on a small card); stop it, or choose another GPU (FFmpeg: -gpu N for the nvenc encoders).",
                    zh: "编码器连自己的 CUDA 上下文都建不了（cuCtxCreate），而这在编码任何一帧之前就要几百 MiB：GPU 的显存确实被占满了，或者这块 GPU 用不了。运行 `nvidia-smi` 看是谁占着（别的程序、卡住的进程，或小显存卡上的桌面）；结束它，或换一块 GPU（FFmpeg 的 nvenc 编码器用 -gpu N）。"
                ),
            ),
            nvenc_driver_fix(),
        ];
    }
    if !nvenc {
        if let Some(named) = NamedProgram::of(f) {
            let own = named_program_fixes(f, named);
            if !own.is_empty() {
                return own;
            }
        }
    }
    if nvenc {
        return vec![
            fix(
                &NVENC_FEWER_SESSIONS,
                say!(
                    en: "NVENC reports out of memory when it cannot open another encode session, whatever the free memory: GeForce cards allow only a few sessions at once per system (the driver's limit has been 3, then 5 from 2023 and 8 from drivers of 2024; NVIDIA's Video Encode and Decode GPU Support Matrix lists it). Count the encoders running at once (ffmpeg processes, OBS, Plex, a game recorder: `nvidia-smi --query-gpu=encoder.stats.sessionCount --format=csv`) and run fewer in parallel.",
                    zh: "NVENC 无法再打开一个编码会话时就会报显存不足，不管还剩多少显存：GeForce 卡整个系统同时只允许几个会话（驱动的上限先是 3 个，2023 年起是 5 个，2024 年起的驱动是 8 个；NVIDIA 的 Video Encode and Decode GPU Support Matrix 列出了这个数）。数一数同时在跑的编码器（ffmpeg 进程、OBS、Plex、录屏软件：`nvidia-smi --query-gpu=encoder.stats.sessionCount --format=csv`），少并行几个。"
                ),
            ),
            nvenc_driver_fix(),
            fix(
                &super::common::CHECK_GPU_HOLDERS,
                say!(
                    en: "Run `nvidia-smi`: another encoder or a program that fills the GPU's memory keeps NVENC from creating its CUDA context. Stop it, or choose another GPU (FFmpeg: -gpu N for the nvenc encoders).",
                    zh: "运行 `nvidia-smi`：另一个编码器，或占满显存的程序，会让 NVENC 建不了它的 CUDA 上下文。结束它，或换一块 GPU（FFmpeg 的 nvenc 编码器用 -gpu N）。"
                ),
            ),
        ];
    }
    if f.era == Some(Era::Tensorrt) || reporter == "TensorRT" {
        let mut fixes = Vec::new();
        if is_skipped_tactic(f) && !build_failed(f) {
            fixes.push(fix(
                &TENSORRT_CHECK_BUILD_FINISHED,
                say!(
                    en: "Look at the end of the build log: if TensorRT went on and wrote the engine (trtexec prints that the engine was built and saved), this error only skipped a tactic and can be ignored. Build on a GPU nothing else uses to let TensorRT try the tactics that need more memory.",
                    zh: "看构建日志的结尾：如果 TensorRT 继续下去并写出了 engine（trtexec 会打印 engine 已构建并保存），这个错误只是跳过了一个 tactic，可以忽略。在没有其他程序使用的 GPU 上构建，TensorRT 才能尝试那些需要更多显存的 tactic。"
                ),
            ));
        }
        // Loading a built engine, or a phase the message does not show:
        // what else holds the GPU is the first thing to look at.
        if deserialising_engine(f) {
            fixes.push(fix(
                &super::common::CHECK_GPU_HOLDERS,
                say!(
                    en: "Run `nvidia-smi` before loading: other processes, and other engines this program already loaded (a diffusion pipeline loads several: text encoder, UNet, VAE), take the memory the engine needs. Load fewer engines at once or free the GPU; an engine built for smaller maximum shapes (its optimisation profiles) also needs less when loaded.",
                    zh: "加载前运行 `nvidia-smi`：其他进程，以及这个程序已经加载的其他 engine（扩散模型的流水线会加载好几个：文本编码器、UNet、VAE）占掉了这个 engine 需要的显存。一次少加载几个 engine，或腾出 GPU；按更小的最大形状（优化 profile）构建的 engine 加载时也需要更少的显存。"
                ),
            ));
            return fixes;
        }
        if !building_engine(f) {
            fixes.push(free_the_gpu(f));
        }
        // ONNX Runtime's TensorRT execution provider builds the engine
        // itself: its limits are the provider's options.
        if Framework::of(f) == Framework::OnnxRuntime {
            fixes.push(fix(
                &TENSORRT_SMALLER_LIMITS,
                say!(
                    en: "ONNX Runtime's TensorRT execution provider builds the engine: lower its provider option trt_max_workspace_size (or ORT_TENSORRT_MAX_WORKSPACE_SIZE), give dynamic inputs smaller maximum shapes (trt_profile_min_shapes, trt_profile_opt_shapes, trt_profile_max_shapes), feed smaller inputs or batches, and build on a GPU nothing else uses; trt_engine_cache_enable keeps a built engine so later runs do not build it again.",
                    zh: "引擎由 ONNX Runtime 的 TensorRT execution provider 构建：调小它的 provider 选项 trt_max_workspace_size（或 ORT_TENSORRT_MAX_WORKSPACE_SIZE），给动态输入设更小的最大形状（trt_profile_min_shapes、trt_profile_opt_shapes、trt_profile_max_shapes），输入或 batch 小一些，并在没有其他程序使用的 GPU 上构建；trt_engine_cache_enable 会保存构建好的引擎，之后运行不必再构建。"
                ),
            ));
            return fixes;
        }
        fixes.push(fix(
            &TENSORRT_SMALLER_LIMITS,
            say!(
                en: "Lower the engine's maximum batch size and sequence lengths (its optimisation profiles; for TensorRT-LLM max_batch_size, max_input_len, max_seq_len) and the builder's workspace limit, and build on a GPU nothing else uses.",
                zh: "调小 engine 的最大 batch size 和序列长度（它的优化 profile；TensorRT-LLM 里是 max_batch_size、max_input_len、max_seq_len）以及 builder 的 workspace 上限，并在没有其他程序使用的 GPU 上构建。"
            ),
        ));
        return fixes;
    }
    if reporter == "darknet" || super::setting::darknet_shows(f) {
        return vec![
            fix(
                &DARKNET_SMALLER_PASSES,
                say!(
                    en: "In the model's .cfg, keep batch and raise subdivisions (16, 32 or 64) so each pass on the GPU holds batch/subdivisions images, or lower width and height (multiples of 32); random=1 in the detection layers resizes the network while training and needs more memory, random=0 does not.",
                    zh: "在模型的 .cfg 里保持 batch 不变、调大 subdivisions（16、32 或 64），让每次上 GPU 的只有 batch/subdivisions 张图；或者调小 width 和 height（32 的倍数）；检测层里的 random=1 会在训练中放大网络，需要更多显存，random=0 则不会。"
                ),
            ),
            fix(
                &super::common::CHECK_GPU_HOLDERS,
                say!(
                    en: "Run `nvidia-smi`: if other processes fill the card, even creating the GPU context (a few hundred MiB) fails. Stop them or choose another GPU (darknet: -gpus N, or CUDA_VISIBLE_DEVICES=N).",
                    zh: "运行 `nvidia-smi`：如果其他进程占满了这块卡，连创建 GPU 上下文（几百 MiB）都会失败。结束它们，或换一块 GPU（darknet 用 -gpus N，或 CUDA_VISIBLE_DEVICES=N）。"
                ),
            ),
        ];
    }
    Vec::new()
}

/// NVENC's concurrent-session limit on consumer cards.
const NVENC_FEWER_SESSIONS: FixSpec = FixSpec::new(
    "nvenc-fewer-sessions",
    "Run fewer encoding sessions at once",
    "同时少开几个编码会话",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Speed)
.sources(&["NVIDIA: Video Encode and Decode GPU Support Matrix (concurrent sessions)"]);

/// The NVENC API a program was built with and the driver it needs
/// (FFmpeg's nv-codec-headers).
const NVENC_DRIVER_FOR_ENCODER: FixSpec = FixSpec::new(
    "nvenc-driver-for-encoder",
    "Use a driver recent enough for the encoder's NVENC API",
    "用足够新、能支持编码器所用 NVENC API 的驱动",
)
.vendors(&[Vendor::Nvidia])
.sources(&["FFmpeg: nv-codec-headers README (minimum driver versions)"]);

/// The driver and the Vulkan library, for a failure no size explains.
const UPDATE_VULKAN_DRIVER_AND_LIBRARY: FixSpec = FixSpec::new(
    "update-vulkan-driver-and-library",
    "Update the driver and the Vulkan library",
    "更新驱动和 Vulkan 库",
)
.cost(Cost::Look);

/// TensorRT's builder skips a tactic whose memory does not fit.
const TENSORRT_CHECK_BUILD_FINISHED: FixSpec = FixSpec::new(
    "tensorrt-check-build-finished",
    "Check whether the engine was built",
    "先看 engine 是否已经构建出来",
)
.cost(Cost::Look)
.sources(&["TensorRT Developer Guide: tactic selection and memory (builder workspace)"]);

/// darknet's .cfg: batch, subdivisions, width, height, random.
const DARKNET_SMALLER_PASSES: FixSpec = FixSpec::new(
    "darknet-smaller-passes",
    "Put fewer images on the GPU per pass",
    "让每次上 GPU 的图片少一些",
)
.cost(Cost::Speed)
.sources(&["darknet (AlexeyAB) README: How to train (subdivisions, width, height, random)"]);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    TRTLLM_SMALLER_KV_AND_BATCH,
    NVENC_FEWER_SESSIONS,
    NVENC_DRIVER_FOR_ENCODER,
    TENSORRT_CHECK_BUILD_FINISHED,
    UPDATE_VULKAN_DRIVER_AND_LIBRARY,
    DARKNET_SMALLER_PASSES,
    FREE_THE_GPU,
    CLOSE_OTHER_GPU_PROGRAMS,
    TENSORRT_SMALLER_LIMITS,
    NPP_IMAGES_AND_BUFFERS,
    LEAVE_GPU_MORE_RAM,
    CTRANSLATE2_LESS_PER_REQUEST,
    ONNXRUNTIME_ARENA,
    CUPY_RELEASE_OR_CAP,
    STOP_PREALLOCATION,
    RENDERER_SMALLER_SCENE,
    RENDERER_DRIVER_AND_CLOCKS,
    RECONSTRUCTION_SMALLER_VOLUME,
    NCNN_SMALLER_TILES,
    NCNN_SMALLER_JOB,
    MXNET_LESS_AT_ONCE,
    DIRECTML_LESS_AT_ONCE,
];

fn nvenc_driver_fix() -> Fix {
    fix(
        &NVENC_DRIVER_FOR_ENCODER,
        say!(
            en: "A program built with a newer NVENC API than the driver supports cannot open the encoder (FFmpeg: each release's nv-codec-headers name the minimum driver). Install a current driver, or use a build of the program made for the driver you have.",
            zh: "程序编译时用的 NVENC API 比驱动支持的新，就打不开编码器（FFmpeg：每个版本的 nv-codec-headers 都写明了最低驱动版本）。装一个新的驱动，或者换一个针对你现有驱动编译的程序版本。"
        ),
    )
}

/// The failing call creates the program's CUDA context: the driver's
/// `cuCtxCreate`, or OpenCV's `cv::cuda::setDevice` (cudaSetDevice and a
/// first runtime call). Nothing of the work is on the GPU yet.
fn creates_a_context(f: &Finding) -> bool {
    fact(f, fact::LOCATION) == Some("cuCtxCreate")
        || f.text.contains("cuCtxCreate")
        || f.text.contains("in function 'setDevice'")
}

/// OpenCV's `cv::cuda::HostMem` (cuda_host_mem.cpp): page-locked host
/// memory, not GPU memory.
fn opencv_host_memory(f: &Finding) -> bool {
    f.text.contains("cuda_host_mem")
}

/// A reporter in Chinese: the descriptions the detectors write are
/// declared with their Chinese in `i18n::reporter`; a program's own name
/// stays as it is.
fn reporter_zh(reporter: &str) -> String {
    crate::i18n::reporter::zh(reporter)
}

/// A reporter at the start of a sentence: a phrase ("an unrecognised
/// program") is capitalised, a program's own name (torch-directml) is not.
fn sentence_start(reporter: &str) -> String {
    if ["a ", "an ", "the "]
        .iter()
        .any(|a| reporter.starts_with(a))
    {
        capitalise(reporter)
    } else {
        reporter.to_string()
    }
}

/// What the named program keeps on the GPU, after the sentence that says
/// who reported the failure; empty for a program no class describes.
fn program_note(f: &Finding) -> Said {
    let Some(named) = NamedProgram::of(f) else {
        return Said::default();
    };
    let name = named.name;
    match named.class {
        ProgramClass::Renderer => say!(
            en: "{name} is a renderer: it keeps the scene on the GPU while it renders (geometry and its acceleration structure, textures, and the image buffers), so the scene as it is set up does not fit in the GPU memory left free.",
            zh: "{name} 是渲染器：渲染时它把场景放在 GPU 上（几何体及其加速结构、贴图，以及图像缓冲区），所以按现在的设置，这个场景放不进剩下的空闲显存。",
            name = name
        ),
        ProgramClass::VisionLibrary if creates_a_context(f) => {
            let host = if opencv_host_memory(f) {
                say!(
                    en: " The failure in cuda_host_mem.cpp's allocate that follows is cv::cuda::HostMem: page-locked host memory, not GPU memory; it needs the same CUDA context, so it fails after setDevice did.",
                    zh: "后面 cuda_host_mem.cpp 的 allocate 失败来自 cv::cuda::HostMem：那是锁页的主机内存，不是显存；它也需要同一个 CUDA 上下文，所以 setDevice 失败后它也跟着失败。"
                )
            } else {
                Said::default()
            };
            say!(
                en: "OpenCV's cv::cuda::setDevice selects the GPU and creates its CUDA context (cudaSetDevice, then a first CUDA call) before any image is on the GPU. Out of memory there means the card had no room even for the context: other processes hold its memory, or the GPU is unusable (exclusive-process mode held by another process, a wedged driver).",
                zh: "OpenCV 的 cv::cuda::setDevice 选中 GPU 并创建它的 CUDA 上下文（cudaSetDevice，再加第一次 CUDA 调用），这时还没有任何图像放上 GPU。在这里显存不足，说明这块卡连上下文都放不下：其他进程占着它的显存，或者这块 GPU 用不了（被另一个进程以独占模式占用，或驱动卡死）。"
            )
            .then(host)
        }
        ProgramClass::VisionLibrary if opencv_host_memory(f) => say!(
            en: "The failing call is cv::cuda::HostMem's allocate: page-locked host memory (RAM the GPU can copy from directly), not GPU memory. The machine could not pin that much RAM.",
            zh: "失败的是 cv::cuda::HostMem 的 allocate：那是锁页的主机内存（GPU 能直接拷贝的内存），不是显存。这台机器锁不住这么多内存。"
        ),
        ProgramClass::VisionLibrary => say!(
            en: "OpenCV's CUDA module allocates each GpuMat and each algorithm's buffers with cudaMalloc: the images and buffers on the GPU at once do not fit in its free memory.",
            zh: "OpenCV 的 CUDA 模块用 cudaMalloc 分配每个 GpuMat 和各个算法的缓冲区：同时放在 GPU 上的图像和缓冲区放不进空闲的显存。"
        ),
        ProgramClass::Reconstruction => say!(
            en: "{name} reconstructs a 3D volume: it reserves its voxel storage (the hash table and the voxel blocks) on the GPU, sized by its scene settings rather than by the input, usually all at once when it starts.",
            zh: "{name} 做三维重建：它在 GPU 上预留体素存储（哈希表和体素块），大小由它的场景设置决定，而不是由输入决定，通常在启动时一次性分配。",
            name = name
        ),
        ProgramClass::TiledUpscaler => say!(
            en: "ncnn's Vulkan upscalers (Real-ESRGAN, waifu2x, Real-CUGAN and others) run the model over the image tile by tile; this is ncnn's message that one Vulkan allocation (vkAllocateMemory) did not fit. ncnn goes on after a failed allocation, so an image may still be written: one that is noise, black or garbled was spoiled by the failed allocations and is no result.",
            zh: "ncnn 的 Vulkan 放大工具（Real-ESRGAN、waifu2x、Real-CUGAN 等）把图像切成小块（tile）逐块跑模型；这是 ncnn 报告某一次 Vulkan 分配（vkAllocateMemory）放不下的消息。分配失败后 ncnn 会继续往下跑，所以仍可能写出图像：如果图像是噪点、全黑或花屏，那就是被失败的分配弄坏了，不能算结果。"
        ),
        ProgramClass::NcnnTool => say!(
            en: "This is ncnn's message that a Vulkan allocation (vkAllocateMemory) did not fit in the GPU's memory while the program ran its model. ncnn goes on after a failed allocation, so an output may still be written: one that is noise, black or garbled was spoiled by the failed allocations and is no result.",
            zh: "这是 ncnn 报告程序跑模型时某一次 Vulkan 分配（vkAllocateMemory）放不进显存的消息。分配失败后 ncnn 会继续往下跑，所以仍可能写出结果：如果结果是噪点、全黑或花屏，那就是被失败的分配弄坏了，不能算结果。"
        ),
        ProgramClass::MlFramework if name == crate::detect::grammar::program_names::MXNET => say!(
            en: "`cudaMalloc retry failed` is MXNet's pooled allocator: when cudaMalloc fails it releases every buffer its pool keeps for reuse and tries again; the retry failed too, so the memory is really not there.",
            zh: "`cudaMalloc retry failed` 来自 MXNet 的池化分配器：cudaMalloc 失败时，它会释放内存池里缓存待复用的所有缓冲区，然后再试一次；重试也失败了，说明显存确实不够。"
        ),
        ProgramClass::MlFramework => say!(
            en: "This is DirectML's message (torch-directml, the PyTorch backend for any DirectX 12 GPU on Windows, used by the DirectML builds of Stable Diffusion web UI): the GPU's dedicated memory could not hold the tensor.",
            zh: "这是 DirectML 的消息（torch-directml：Windows 上面向任何 DirectX 12 GPU 的 PyTorch 后端，Stable Diffusion web UI 的 DirectML 版本用的就是它）：GPU 的专用显存放不下这个张量。"
        ),
        ProgramClass::DataLibrary => super::levers::data_library_reading(f)
            .map(|(_, detail)| detail)
            .unwrap_or_default(),
        ProgramClass::MediaEncoder => Said::default(),
    }
}

/// The named program's own fixes; empty where its class has none.
fn named_program_fixes(f: &Finding, named: NamedProgram) -> Vec<Fix> {
    let vendor = Vendor::of(f);
    let holders = |how: Said| fix(&super::common::CHECK_GPU_HOLDERS, how);
    match named.class {
        ProgramClass::Renderer => vec![
            renderer_fix(named.name),
            holders(say!(
                en: "Other programs on the same GPU take from the scene's room: {smi} lists them (a second Blender, a game, a browser). A viewport in Rendered view keeps its own copy of the scene while a final render runs.",
                zh: "同一块 GPU 上的其他程序会挤占场景的空间：{smi} 会列出它们（另一个 Blender、游戏、浏览器）。视口处于渲染预览（Rendered）模式时，最终渲染期间它还会另存一份场景。",
                smi = vendor.smi()
            )),
        ],
        ProgramClass::VisionLibrary if creates_a_context(f) => vec![holders(say!(
            en: "Run {smi} before the program starts: if other processes fill the card, stop them or pick another GPU with {visible}; `nvidia-smi -q -d COMPUTE` shows an Exclusive_Process mode that lets only one process use the GPU. If the GPU is empty and the call still fails, the driver is in a bad state: reboot or reload it.",
            zh: "在程序启动前运行 {smi}：如果其他进程占满了这块卡，结束它们，或用 {visible} 换一块 GPU；`nvidia-smi -q -d COMPUTE` 能看出是否处于只允许一个进程使用 GPU 的 Exclusive_Process 模式。如果 GPU 是空的、调用仍然失败，说明驱动状态异常：重启机器或重新加载驱动。",
            smi = vendor.smi(),
            visible = vendor.visible_devices()
        ))],
        ProgramClass::VisionLibrary if opencv_host_memory(f) => vec![fix(
            &super::common::FREE_HOST_MEMORY,
            say!(
                en: "Allocate fewer or smaller cv::cuda::HostMem buffers (page-locked RAM cannot be swapped out, so the system limits it); use ordinary memory where copies need not be asynchronous, and free RAM for the rest.",
                zh: "少分配或分配小一些的 cv::cuda::HostMem 缓冲区（锁页内存不能换出，系统会限制它的总量）；不需要异步拷贝的地方用普通内存，并给其余部分腾出内存。"
            ),
        )],
        ProgramClass::VisionLibrary => vec![
            smaller_work_fix(),
            holders(say!(
                en: "Run {smi}: other processes on the card take from the room OpenCV's buffers need. Stop them or pick another GPU with {visible}.",
                zh: "运行 {smi}：卡上的其他进程会挤占 OpenCV 缓冲区需要的空间。结束它们，或用 {visible} 换一块 GPU。",
                smi = vendor.smi(),
                visible = vendor.visible_devices()
            )),
        ],
        ProgramClass::Reconstruction => vec![
            fix(
                &RECONSTRUCTION_SMALLER_VOLUME,
                if named.name == crate::detect::grammar::program_names::INFINITAM {
                    say!(
                        en: "Reserve fewer voxel blocks and hash entries: in InfiniTAM they are set at build time (SDF_LOCAL_BLOCK_NUM and SDF_BUCKET_NUM in ITMLib's defines), with the voxel size and the volume's range in its scene parameters; rebuild with smaller values for a card with little memory, or a coarser voxel size.",
                        zh: "少预留一些体素块和哈希表项：InfiniTAM 里它们在编译时确定（ITMLib 定义里的 SDF_LOCAL_BLOCK_NUM 和 SDF_BUCKET_NUM），体素大小和体积范围在它的场景参数里；显存小的卡就用更小的值重新编译，或者用更粗的体素。"
                    )
                } else {
                    say!(
                        en: "Reserve a smaller volume: fewer voxel blocks or hash entries, a coarser voxel size, or a smaller range of the scene, in the program's settings.",
                        zh: "预留更小的体积：在程序的设置里减少体素块或哈希表项，用更粗的体素，或缩小场景范围。"
                    )
                },
            ),
            holders(say!(
                en: "Run {smi}: a desktop and other programs hold part of a small card before the program starts.",
                zh: "运行 {smi}：在程序启动之前，桌面和其他程序就已经占了小显存卡的一部分。",
                smi = vendor.smi()
            )),
        ],
        ProgramClass::TiledUpscaler => vec![fix(
            &NCNN_SMALLER_TILES,
            say!(
                en: "Pass -t 200, 100 or 32 (0, the default, lets the tool choose from the GPU's memory); a smaller scale factor (-s) or a smaller input image also needs less. Run one instance at a time per GPU.",
                zh: "用 -t 200、100 或 32（默认的 0 让工具按显存自己选）；更小的放大倍数（-s）或更小的输入图像也更省显存。每块 GPU 同时只跑一个实例。"
            ),
        )],
        ProgramClass::NcnnTool => vec![
            fix(
                &NCNN_SMALLER_JOB,
                say!(
                    en: "Use the program's own options (see its --help or README) for a smaller output or input size, or a smaller model. Check that it runs on the GPU you expect: ncnn lists the devices it found, numbered, when it starts (an integrated GPU or a software renderer such as llvmpipe has little memory).",
                    zh: "用程序自己的选项（看它的 --help 或 README）换更小的输出或输入尺寸，或更小的模型。确认它跑在你想用的 GPU 上：ncnn 启动时会列出它找到的设备并编号（集成显卡或 llvmpipe 这类软件渲染器的显存很少）。"
                ),
            ),
            holders(say!(
                en: "Run {smi}: other programs on the card take from the room the model needs. Stop them; if the GPU is nearly empty and allocations still fail, update the GPU driver.",
                zh: "运行 {smi}：卡上的其他程序会挤占模型需要的空间。结束它们；如果 GPU 几乎是空的、分配仍然失败，就更新显卡驱动。",
                smi = vendor.smi()
            )),
        ],
        ProgramClass::MlFramework if named.name == crate::detect::grammar::program_names::MXNET => {
            vec![fix(
                &MXNET_LESS_AT_ONCE,
                say!(
                    en: "A smaller batch size or input size (the data shape the network is bound with); MXNET_CUDNN_AUTOTUNE_DEFAULT=0 stops cuDNN's autotuning from trying large workspaces; MXNET_GPU_MEM_POOL_RESERVE (a percentage, 5 by default) leaves more of the card outside MXNet's pool for other libraries. Check that nothing else holds the GPU ({smi}).",
                    zh: "更小的 batch size 或输入尺寸（网络绑定的 data shape）；MXNET_CUDNN_AUTOTUNE_DEFAULT=0 让 cuDNN 的自动调优不去尝试大的工作区；MXNET_GPU_MEM_POOL_RESERVE（百分比，默认 5）给 MXNet 内存池之外的其他库多留一些显存。并确认没有别的进程占着 GPU（{smi}）。",
                    smi = vendor.smi()
                ),
            )]
        }
        // ComfyUI on DirectML (its --directml mode): ComfyUI's own
        // options, not the A1111 web UI's.
        ProgramClass::MlFramework if Runtime::of(f) == Some(Runtime::ComfyUi) => {
            vec![runtime_fix(Runtime::ComfyUi)]
        }
        ProgramClass::DataLibrary => super::levers::data_library_fix(f)
            .into_iter()
            .chain([free_the_gpu(f)])
            .collect(),
        ProgramClass::MlFramework => vec![fix(
            &DIRECTML_LESS_AT_ONCE,
            say!(
                en: "A smaller image size or batch, and for a Stable Diffusion web UI a smaller Hires. fix upscale and the --medvram (or --lowvram) start option. Task Manager → Performance → GPU shows how much dedicated GPU memory other programs hold.",
                zh: "更小的图像尺寸或 batch；如果是 Stable Diffusion web UI，调小 Hires. fix 的放大倍数，并用 --medvram（或 --lowvram）启动。任务管理器 → 性能 → GPU 能看到其他程序占了多少专用显存。"
            ),
        )],
        ProgramClass::MediaEncoder => Vec::new(),
    }
}

/// A renderer's GPU crash (Cycles' `ILLEGAL_ADDRESS in cuCtxSynchronize()`),
/// for the person rendering: the scene's memory, the driver, the card's
/// stability; empty for any other program.
pub(super) fn renderer_crash_fixes(f: &Finding) -> Vec<Fix> {
    let Some(named) = NamedProgram::of(f).filter(|p| p.class == ProgramClass::Renderer) else {
        return Vec::new();
    };
    vec![
        renderer_fix(named.name),
        fix(
            &RENDERER_DRIVER_AND_CLOCKS,
            say!(
                en: "In a renderer an illegal address often follows a scene that barely fits, and otherwise a driver or an unstable card: install the current driver and the current release of {name}, put an overclocked or undervolted card back to stock clocks, watch its temperature, and see whether the same scene renders on the CPU.",
                zh: "在渲染器里，非法地址错误常常出现在场景勉强放得下显存的时候，其次是驱动问题或显卡不稳定：装上最新的驱动和最新版本的 {name}，把超频或降压的显卡恢复到默认频率，留意温度，再看同一个场景用 CPU 能否渲染。",
                name = named.name
            ),
        ),
    ]
}

/// The driver and the card's clocks, for a renderer's GPU crash.
const RENDERER_DRIVER_AND_CLOCKS: FixSpec = FixSpec::new(
    "renderer-driver-and-clocks",
    "Rule out the driver and the card's clocks",
    "排除驱动和显卡频率的问题",
)
.cost(Cost::Look);

/// A renderer's own lever, its scene, in its own terms where it is known.
fn renderer_fix(name: &str) -> Fix {
    use crate::detect::grammar::program_names as n;
    let how = match name {
        n::BLENDER => say!(
            en: "Render Properties → Simplify (lower Max Subdivision, and a Texture Limit for Cycles), smaller or fewer image textures, fewer particles, hair and high-poly objects. If it still does not fit, render with the CPU, or GPU + CPU (Preferences → System), which keeps the scene in RAM.",
            zh: "渲染属性 → 简化（Simplify）里调低最大细分（Max Subdivision），给 Cycles 设贴图上限（Texture Limit）；用更小或更少的图像贴图，减少粒子、毛发和高面数物体。还是放不下，就用 CPU 渲染，或 GPU + CPU（偏好设置 → 系统），场景就放在内存里。"
        ),
        n::MITSUBA => say!(
            en: "Render less at once: Mitsuba's GPU variants trace all samples of the image together, so memory grows with resolution × samples per pixel; render fewer samples per pass (samples_per_pass in Mitsuba 2's integrators, or several renders with different seeds averaged), a smaller film, or a scene with smaller textures. A CPU variant (scalar_* or llvm_*) keeps everything in RAM.",
            zh: "一次少渲染一些：Mitsuba 的 GPU 变体把整幅图像的所有采样一起追踪，所以显存随分辨率 × 每像素采样数增长；每一遍少渲染一些采样（Mitsuba 2 积分器的 samples_per_pass，或用不同种子渲染几次再取平均），用更小的 film，或更小的场景贴图。CPU 变体（scalar_* 或 llvm_*）把一切放在内存里。"
        ),
        _ => say!(
            en: "Smaller or fewer textures, less geometry (lower subdivision, instances instead of copies), a lower output resolution. If it still does not fit, render with the CPU or a hybrid CPU + GPU mode where {name} has one, which keeps the scene in RAM.",
            zh: "用更小或更少的贴图，减少几何体（降低细分，用实例代替复制），降低输出分辨率。还是放不下，就用 CPU 渲染，或用 {name} 提供的 CPU + GPU 混合模式，场景就放在内存里。",
            name = name
        ),
    };
    fix(&RENDERER_SMALLER_SCENE, how)
}

/// A renderer's scene: geometry, textures, resolution; or the CPU.
const RENDERER_SMALLER_SCENE: FixSpec = FixSpec::new(
    "renderer-smaller-scene",
    "Make the scene smaller on the GPU",
    "减小场景在 GPU 上占的显存",
)
.cost(Cost::Quality)
.sources(&["Blender Manual: Cycles GPU rendering, Render Properties → Simplify"]);

/// A reconstruction's voxel volume.
const RECONSTRUCTION_SMALLER_VOLUME: FixSpec = FixSpec::new(
    "reconstruction-smaller-volume",
    "Reserve a smaller voxel volume",
    "预留更小的体素空间",
)
.cost(Cost::Quality);

/// The ncnn-vulkan tools' `-t` tile size.
const NCNN_SMALLER_TILES: FixSpec = FixSpec::new(
    "ncnn-smaller-tiles",
    "Lower the tile size",
    "调小 tile 大小",
)
.cost(Cost::Speed)
.sources(&["Real-ESRGAN-ncnn-vulkan and waifu2x-ncnn-vulkan README (-t tile-size)"]);

/// An ncnn program's own options for a smaller job, and the GPU it runs on.
const NCNN_SMALLER_JOB: FixSpec = FixSpec::new(
    "ncnn-smaller-job",
    "Give the model less to hold at once",
    "让模型一次要放的东西少一些",
)
.cost(Cost::Quality);

/// MXNet's batch, cuDNN autotuning and pool reserve.
const MXNET_LESS_AT_ONCE: FixSpec = FixSpec::new(
    "mxnet-less-at-once",
    "Give MXNet less at once",
    "减少一次交给 MXNet 的数据",
)
.cost(Cost::Quality)
.sources(&["MXNet documentation: environment variables (MXNET_GPU_MEM_POOL_RESERVE, MXNET_CUDNN_AUTOTUNE_DEFAULT)"]);

/// DirectML's tensors: image size, batch, the web UI's low-memory options.
const DIRECTML_LESS_AT_ONCE: FixSpec = FixSpec::new(
    "directml-less-at-once",
    "Give the GPU less at once",
    "减少一次放到 GPU 上的数据",
)
.cost(Cost::Quality);

#[cfg(test)]
mod paddle_order_tests {
    use crate::explain::test_support::fix_ids;

    /// PaddlePaddle on an 8 GB card (fixtures/wild/1468.txt): 7.29 GiB its
    /// own and 155 MiB free, so its own work fills what it saw and less
    /// work comes first. At exactly 4 times the free memory still; just
    /// under it, another process may hold the rest and freeing the GPU
    /// leads.
    #[test]
    fn paddle_s_own_work_leads_when_it_fills_the_card() {
        let paste = include_str!("../../../../fixtures/wild/1468.txt");
        assert_eq!(fix_ids(paste)[0], "make-workload-smaller");
        let with_free = |free: &str| paste.replace("155.187500MB", free);
        // 7.288696 GB / 4 = 1.822174 GB.
        assert_eq!(
            fix_ids(&with_free("1.822174GB"))[0],
            "make-workload-smaller"
        );
        assert_eq!(fix_ids(&with_free("1.822175GB"))[0], "free-the-gpu");
    }
}

#[cfg(test)]
mod tensorrt_phase_tests {
    use crate::explain::test_support::fix_ids;

    /// A Stable Diffusion TensorRT pipeline loading its UNet engine
    /// (fixtures/wild/1929.txt): the runtime's safeDeserialize failure is
    /// loading a built engine, so what holds the GPU comes first and the
    /// builder's workspace is not offered; the allocator's line before it,
    /// which shows no phase, looks at the GPU before the build limits.
    #[test]
    fn loading_a_built_engine_is_not_building_one() {
        let paste = include_str!("../../../../fixtures/wild/1929.txt");
        let findings = crate::decode_str(paste);
        let load = findings
            .iter()
            .find(|f| f.text.contains("Error Code 2"))
            .expect("the deserialisation error");
        let ids: Vec<&str> = load.diagnosis.fixes.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(ids, ["check-what-holds-gpu"]);
        assert!(load.diagnosis.verdicts[0].title.contains("already built"));
        assert_eq!(
            fix_ids(paste),
            ["free-the-gpu", "tensorrt-smaller-engine-limits"]
        );
    }

    /// The same allocator's line where the log shows the build (the engine
    /// build failing after it, fixtures/wild/733.txt): the build's limits
    /// lead. With the word "builder" alone the same holds.
    #[test]
    fn a_build_keeps_the_build_limits_first() {
        let build = include_str!("../../../../fixtures/wild/733.txt");
        assert_eq!(fix_ids(build)[0], "tensorrt-smaller-engine-limits");
        let allocator = "[E] 1: [defaultAllocator.cpp::allocate::19] Error Code 1: Cuda Runtime (out of memory)\n[W] Requested amount of GPU memory (1180463648 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.";
        assert_eq!(fix_ids(allocator)[0], "free-the-gpu");
        let with_builder = allocator.replace("[W] Requested", "[W] Builder: Requested");
        assert_eq!(fix_ids(&with_builder)[0], "tensorrt-smaller-engine-limits");
    }
}

#[cfg(test)]
mod stack_from_the_paste {
    use crate::explain::setting::{Framework, Program};

    /// A TensorFlow 1.x session's `Resource exhausted: failed to allocate
    /// memory` with its op node (fixtures/wild/3107.txt): TensorFlow's, in
    /// its own API, never "an unrecognised program".
    #[test]
    fn a_tensorflow_node_annotation_names_tensorflow() {
        let paste = include_str!("../../../../fixtures/wild/3107.txt");
        let f = crate::decode_str(paste).remove(0);
        assert_eq!(Framework::of(&f), Framework::TensorFlow);
        assert_eq!(f.facts["reported_by"], "TensorFlow");
        assert!(f.facts["node"].starts_with("bert/encoder/"));
        assert!(
            f.diagnosis.headline.starts_with("TensorFlow"),
            "{}",
            f.diagnosis.headline
        );
        assert!(!f.diagnosis.headline.contains("unrecognised"));
        let ids: Vec<&str> = f.diagnosis.fixes.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(ids.first(), Some(&"tf-reduce-batch-size"), "{ids:?}");
        assert!(ids.contains(&"tf-report-tensor-allocations"), "{ids:?}");
        // The session's frame among the lines before: TensorFlow 1's config.
        let growth = f.diagnosis.fixes.iter().find(|x| x.id == "tf-allow-growth");
        assert!(growth.is_some_and(|x| x.how.contains("ConfigProto")));
    }

    /// ggml's CUDA error (fixtures/wild/3242.txt): llama.cpp's, fixed
    /// through its own options; no PyTorch API.
    #[test]
    fn a_ggml_cuda_error_gets_no_pytorch_fix() {
        let paste = include_str!("../../../../fixtures/wild/3242.txt");
        let f = crate::decode_str(paste).remove(0);
        assert_eq!(Framework::of(&f), Framework::Ggml);
        assert_eq!(Program::of(&f), Program::NativeModel);
        assert!(
            f.diagnosis.headline.contains("llama.cpp"),
            "{}",
            f.diagnosis.headline
        );
        for x in &f.diagnosis.fixes {
            assert!(!x.how.contains("torch"), "{}: {}", x.id, x.how);
            assert!(!x.title.contains("PyTorch"), "{}", x.title);
        }
        for v in &f.diagnosis.verdicts {
            assert!(!v.title.contains("PyTorch"), "{}", v.title);
        }
    }
}
