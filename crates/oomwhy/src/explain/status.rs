//! A status-table code that is not an out-of-memory (`gpu_runtime_error`):
//! what the code means, from its table, and the fix its group of codes has.

use super::catalogue::{Cost, FixSpec};
use super::common::{fact, fix, verdict};
use super::docs::Code;
use super::setting::Vendor;
use super::Explain;
use crate::codes::advice::{self, Advice};
use crate::i18n::Said;
use crate::record::{fact as key, Diagnosis, Finding, Fix, Verdict};
use crate::{say, say_parts};

/// Explains `Kind::GpuRuntimeError` findings.
pub(super) struct GpuRuntimeError;

/// `cudaErrorInsufficientDriver (35)`: the code's name and number, as the
/// table writes them (the same in both languages).
fn code_of(f: &Finding) -> Option<String> {
    match (fact(f, key::ERROR_NAME), fact(f, "error_code")) {
        (Some(name), Some(number)) => Some(format!("{name} ({number})")),
        (Some(name), None) => Some(name.to_string()),
        _ => None,
    }
}

/// A bare CUDA runtime number whose meaning CUDA 10.1 changed (the
/// detector's `numbering` fact): the code with both meanings and the
/// releases each belongs to, instead of the newer name alone.
fn ambiguous_code(f: &Finding) -> Option<Said> {
    if fact(f, "numbering") != Some("ambiguous") {
        return None;
    }
    let (name, old, number) = (
        fact(f, key::ERROR_NAME)?,
        fact(f, "old_cuda_name")?,
        fact(f, "error_code")?,
    );
    Some(say!(
        en: "status {number} ({name} in CUDA 10.1 and later, {old} before CUDA 10.1)",
        zh: "状态码 {number}（CUDA 10.1 及以后是 {name}，CUDA 10.1 之前是 {old}）",
        number = number,
        name = name,
        old = old
    ))
}

/// The code as a sentence names it, both meanings where the number alone
/// does not tell which CUDA release printed it.
fn code_said_for(f: &Finding, code: &str) -> Said {
    ambiguous_code(f).unwrap_or_else(|| code_said(code))
}

/// The code as a sentence names it: a fault's English name (`TDR (timeout
/// detection and recovery)`) has its Chinese in the catalogue.
fn code_said(code: &str) -> Said {
    let zh = crate::i18n::zh::fact_value(key::ERROR_NAME, code).unwrap_or(code);
    Said {
        en: code.to_string(),
        zh: zh.to_string(),
    }
}

/// The advice for the finding's code (`codes/advice.tsv`), a row whose
/// context the finding shows first.
fn advice_of(f: &Finding) -> Option<&'static Advice> {
    let name = fact(f, key::ERROR_NAME)?;
    advice::lookup(name, |word| shows(f, word))
}

/// Whether the finding's text, traceback or reporter holds `word`.
fn shows(f: &Finding, word: &str) -> bool {
    f.text.contains(word)
        || fact(f, "reported_by").is_some_and(|r| r.contains(word))
        || f.traceback.iter().any(|tb| {
            tb.frames
                .iter()
                .any(|frame| frame.file.contains(word) || frame.function.contains(word))
        })
}

/// Who returned the code. An HRESULT names no API by itself: the text says
/// which one (Dawn's `ID3D11Device::...`, the debug layer's `D3D12 ERROR`,
/// DirectML's execution provider); the table's title otherwise.
fn who_of(f: &Finding) -> Option<String> {
    let title = fact(f, "table_title")?;
    if fact(f, "table") != Some("hresult") {
        return Some(title.to_string());
    }
    let api = if f.text.contains("D3D11") {
        "Direct3D 11"
    } else if f.text.contains("DirectML") || f.text.contains("Dml") || f.text.contains("\\dml\\") {
        "DirectML (Direct3D 12)"
    } else if f.text.contains("D3D12") {
        "Direct3D 12"
    } else {
        "DirectX"
    };
    Some(api.to_string())
}

impl Explain for GpuRuntimeError {
    fn headline(&self, f: &Finding) -> Said {
        // A fault family's name is what a runtime or driver logged on its
        // own (an asynchronous fault, a card that did not come up), not a
        // value some call returned.
        if let (Some(who), Some(code)) = (fault_reporter(f), code_of(f)) {
            return say_parts!(
                en: "The {who} reported {code}",
                zh: "{who} 报告了 {code}",
                who = crate::i18n::reporter::said(&who),
                code = code_said_for(f, &code)
            );
        }
        match (who_of(f), code_of(f)) {
            (Some(who), Some(code)) => say_parts!(
                en: "{a} {who} call returned {code}",
                zh: "{a}{who} 调用返回了 {code}",
                a = english_only(capitalised(article(&who))),
                who = crate::i18n::reporter::said(&who),
                code = code_said_for(f, &code)
            ),
            (Some(who), None) => say_parts!(
                en: "{a} {who} call returned an error status",
                zh: "{a}{who} 调用返回了错误状态",
                a = english_only(capitalised(article(&who))),
                who = crate::i18n::reporter::said(&who)
            ),
            (None, Some(code)) => say!(
                en: "A GPU runtime call returned {code}",
                zh: "GPU 运行时调用返回了 {code}",
                code = code
            ),
            (None, None) => say!(
                en: "A GPU runtime call returned an error status",
                zh: "GPU 运行时调用返回了错误状态"
            ),
        }
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        let status = match (who_of(f), code_of(f)) {
            (Some(who), Some(code)) if fault_reporter(f).is_some() => say_parts!(
                en: "{code} is what the {who} logged by itself, not a status a call returned.",
                zh: "{code} 是 {who} 自己记下的，不是某个调用返回的状态码。",
                code = code_said_for(f, &code),
                who = crate::i18n::reporter::said(&who)
            ),
            (Some(who), Some(code)) => say_parts!(
                en: "{code} is {a} {who} status.",
                zh: "{code} 是{a} {who} 的状态码。",
                code = code_said_for(f, &code),
                a = english_only(article(&who).to_string()),
                who = crate::i18n::reporter::said(&who)
            ),
            (Some(who), None) => say_parts!(
                en: "The error status is {a} {who} status.",
                zh: "这是{a} {who} 的一个错误状态。",
                a = english_only(article(&who).to_string()),
                who = crate::i18n::reporter::said(&who)
            ),
            (None, Some(code)) => say!(
                en: "{code} is a GPU runtime status.",
                zh: "{code} 是 GPU 运行时的状态码。",
                code = code
            ),
            (None, None) => Said::default(),
        };
        let maybe = fact(f, "code_class") == Some("maybe");
        let not_oom = if maybe {
            say!(
                en: "It is not an out-of-memory status, but memory pressure is a common cause: the library could not allocate a handle or workspace and reported it this way.",
                zh: "它本身不是显存不足的状态码，但显存吃紧是常见原因：库没能分配到句柄或工作区，就这样报了出来。"
            )
        } else {
            say!(
                en: "It is not an out-of-memory error.",
                zh: "它不是显存不足错误。"
            )
        };
        // The kernel declares work-group local memory (detect/memory_kind.rs):
        // the resource that ran out is that memory's per-work-group limit.
        if work_group_local(f) {
            out.push(verdict(
                Code::SharedMemoryLimit,
                say!(
                    en: "The kernel asks for more work-group local memory than the device allows per work-group, not device memory",
                    zh: "kernel 申请的工作组本地内存超过了设备每个工作组的上限，用完的不是显存"
                ),
                status.then(say!(
                    en: "The kernel declares work-group local memory (shared local memory, SLM): `work_group_static`, a `local_accessor` or `group_local_memory`. Each work-group gets at most the device's `info::device::local_mem_size` of it, and the runtime may use part of that itself (a `sycl::stream` in the kernel does). A launch that asks for more is refused with OUT_OF_RESOURCES; freeing device memory does not help.",
                    zh: "这个 kernel 声明了工作组本地内存（共享本地内存，SLM）：`work_group_static`、`local_accessor` 或 `group_local_memory`。每个工作组最多只能用设备的 `info::device::local_mem_size` 这么多，运行时自己还可能占用其中一部分（kernel 里用了 `sycl::stream` 就会）。申请得更多，启动就会被以 OUT_OF_RESOURCES 拒绝；腾出显存没有用。"
                )),
            ));
            return;
        }
        // A number whose meaning CUDA 10.1 changed: neither meaning is
        // explained as the answer, the message does not say which applies.
        if let Some(code) = ambiguous_code(f) {
            out.push(verdict(
                Code::GpuStatusCode,
                say!(
                    en: "The number means different errors before and after CUDA 10.1",
                    zh: "这个数字在 CUDA 10.1 前后代表不同的错误"
                ),
                say_parts!(
                    en: "The message prints {code}. CUDA 10.1 renumbered the runtime's errors, and old releases of PyTorch and TensorFlow (built with CUDA 10.0 or older) print the old numbers: the CUDA release the program was built with decides which it is. Look for the runtime's own string next to the number or in the lines above it.",
                    zh: "报错打印的是{code}。CUDA 10.1 重新编排了运行时的错误码，用 CUDA 10.0 或更早版本构建的旧版 PyTorch 和 TensorFlow 打印的是旧编号：程序是用哪个 CUDA 版本构建的，决定了它是哪一个。在数字旁边或上面几行找运行时自己的错误说明文字。",
                    code = code
                ),
            ));
            return;
        }
        // The advice says what the code means in practice, in both
        // languages; the code's place in its table follows.
        if let Some(advice) = advice_of(f) {
            let why = said(advice.why);
            // A row for a code that may mean memory says so itself.
            let tail = if maybe { status } else { status.then(not_oom) };
            out.push(verdict(
                Code::GpuStatusCode,
                said(advice.title),
                why.then(tail),
            ));
            return;
        }
        // No code at all: the line says a call failed but not how (a check
        // macro's stack whose error line was cut above it, a wrapper that
        // prints the call only). Saying what "the status code" means, or
        // that it is no out-of-memory error, would be a guess.
        if code_of(f).is_none() {
            out.push(verdict(
                Code::GpuStatusCode,
                no_code_title(),
                no_code_detail(f),
            ));
            return;
        }
        // A code without advice: the table's meaning, which is English;
        // the Chinese quotes it as such.
        let meaning = match fact(f, "meaning") {
            Some(meaning) => say!(
                en: "{meaning}",
                zh: "状态码表里的说明（英文原文）：“{meaning}”",
                meaning = meaning
            ),
            None => say!(
                en: "The table gives no description for it.",
                zh: "状态码表里没有它的说明。"
            ),
        };
        // The meaning's first clause is the answer to "why" when it is short
        // enough to be a title; the Chinese title says what kind of code it
        // is rather than print English.
        let title = match fact(f, "meaning")
            .and_then(|m| m.split(['.', ';']).next())
            .map(str::trim)
            .filter(|clause| (12..=100).contains(&clause.len()))
        {
            Some(clause) => Said {
                en: clause.to_string(),
                zh: match code_of(f) {
                    Some(code) => format!("{code} 的含义（见下方状态码表原文）"),
                    None => "状态码的含义".to_string(),
                },
            },
            None => say!(en: "What the status code means", zh: "状态码的含义"),
        };
        out.push(verdict(
            Code::GpuStatusCode,
            title,
            status.then(meaning).then(not_oom),
        ));
    }

    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        if work_group_local(f) {
            out.push(fix(
                &FIT_LOCAL_MEMORY,
                say!(
                    en: "Query `device.get_info<sycl::info::device::local_mem_size>()` and keep the kernel's local memory below it with headroom: shrink the `work_group_static` array or the `local_accessor`, or the work-group size it scales with, and take `sycl::stream` out of the kernel.",
                    zh: "查询 `device.get_info<sycl::info::device::local_mem_size>()`，让 kernel 的本地内存留有余量地低于它：缩小 `work_group_static` 数组或 `local_accessor`，或者缩小与之成比例的工作组大小，并把 `sycl::stream` 从 kernel 里去掉。"
                ),
            ));
            return;
        }
        let advice = advice_of(f);
        let first = advice.and_then(|a| Some((fix_spec(a.fix)?, a)));
        if let Some((spec, advice)) = first {
            out.push(fix(spec, said(advice.how)));
        }
        let first_id = first.map(|(spec, _)| spec.id);
        if fact(f, "code_class") == Some("maybe") && first_id != Some(LIBRARY_HEADROOM.id) {
            // TensorFlow's setting only where TensorFlow shows.
            let how = if super::setting::Framework::of(f) == super::setting::Framework::TensorFlow
                || shows(f, "tensorflow")
            {
                say!(
                    en: "Reduce the batch size or the model's footprint, stop other processes on the GPU, and turn on TensorFlow's memory growth (TensorFlow 2: `tf.config.experimental.set_memory_growth(gpu, True)`; TensorFlow 1: `gpu_options.allow_growth = True`) so it does not take all memory before cuDNN or cuBLAS asks for theirs.",
                    zh: "减小 batch size 或模型的占用，结束这块 GPU 上的其他进程，并打开 TensorFlow 的显存按需增长（TensorFlow 2：`tf.config.experimental.set_memory_growth(gpu, True)`；TensorFlow 1：`gpu_options.allow_growth = True`），免得它在 cuDNN 或 cuBLAS 申请之前就占掉全部显存。"
                )
            } else {
                say!(
                    en: "Reduce the batch size or the model's footprint and stop other processes on the GPU, so the library finds memory for its own buffers.",
                    zh: "减小 batch size 或模型的占用，并结束这块 GPU 上的其他进程，让库能分到它自己的缓冲区所需的显存。"
                )
            };
            out.push(fix(&LIBRARY_HEADROOM, how));
        }
        if first.is_none() {
            if code_of(f).is_none() {
                out.push(fix(&FIND_FIRST_ERROR, no_code_how(f)));
                return;
            }
            // A decoded code without advice: the honest first step for
            // any runtime, never a pointer back to the table it came from.
            out.push(fix(&FIRST_ERROR_THEN_UPDATE, runtime_first_step(f)));
        }
        // Pointing back to the tables helps only where the table gave no
        // meaning, after the first step.
        if first.is_none() && fact(f, "meaning").is_none() {
            out.push(fix(
                &LOOK_UP_CODE,
                say!(
                    en: "The finding names the table, the code and where its meaning comes from (`oomwhy explain gpu_runtime_error` describes the tables). The call that returned it is usually on the same line or in the traceback.",
                    zh: "这条发现写明了状态码表、状态码以及含义的出处（`oomwhy explain gpu_runtime_error` 介绍这些表）。返回它的调用通常就在同一行或 traceback 里。"
                ),
            ));
        }
    }
}

/// Whether the finding is about CUDA: its library, call or stack says so.
fn about_cuda(f: &Finding) -> bool {
    who_of(f).is_some_and(|who| who.contains("CUDA"))
        || fact(f, "call").is_some_and(|call| call.to_ascii_lowercase().contains("cuda"))
        || shows(f, "cuda")
        || shows(f, "CUDA")
}

/// A device-to-host copy: where a program first waits for the GPU, so it is
/// where an earlier kernel's fault usually surfaces.
fn device_to_host_copy(f: &Finding) -> bool {
    f.text.contains("DeviceToHost") || f.text.contains("DtoH")
}

fn no_code_title() -> Said {
    say!(
        en: "The message does not say which error the call returned",
        zh: "这条消息没有写出调用返回的是哪个错误"
    )
}

fn no_code_detail(f: &Finding) -> Said {
    let what = say!(
        en: "This line reports that a GPU runtime call failed but carries no error code or name: the error line was cut off above it, or the call failed asynchronously and is reporting an earlier failure.",
        zh: "这一行只说明某个 GPU 运行时调用失败了，没有带错误码或错误名：错误那一行在它上方被截掉了，或者这个调用是异步失败的，报告的是更早的一个错误。"
    );
    if device_to_host_copy(f) {
        what.then(say!(
            en: "A failing device-to-host copy usually reports an earlier kernel's fault: the copy is where the program first waits for the GPU.",
            zh: "从显存拷回主机的拷贝失败，通常报告的是之前某个 kernel 的错误：程序是在这次拷贝时才第一次等待 GPU。"
        ))
    } else {
        what
    }
}

fn no_code_how(f: &Finding) -> Said {
    let find = say!(
        en: "Search the log above this line for the first error the runtime printed (for CUDA, a line with `CUDA error:`); it names the code and the call.",
        zh: "在这一行上方的日志里找运行时打印的第一个错误（CUDA 的话是带 `CUDA error:` 的那一行）；它会写出错误码和调用。"
    );
    if about_cuda(f) {
        find.then(say!(
            en: "If there is none, rerun with `CUDA_LAUNCH_BLOCKING=1` so the failing call reports its own error, or under `compute-sanitizer` to find the kernel that faulted.",
            zh: "如果没有，设 `CUDA_LAUNCH_BLOCKING=1` 重跑，让出错的调用报告它自己的错误，或者在 `compute-sanitizer` 下运行，找出出错的 kernel。"
        ))
    } else {
        find
    }
}

/// The first step for a decoded code no advice row covers.
fn runtime_first_step(f: &Finding) -> Said {
    let who = who_of(f).unwrap_or_else(|| "GPU".to_string());
    // A table titled "CUDA runtime" is a runtime already; "OpenCL" is not.
    let runtime = if who.ends_with("runtime") || who.ends_with("Runtime") {
        crate::i18n::reporter::said(&who)
    } else {
        say_parts!(
            en: "{who} runtime",
            zh: "{who} 运行时",
            who = crate::i18n::reporter::said(&who)
        )
    };
    say_parts!(
        en: "Look above this line for an earlier error in the same run: a later call often fails because of it. If this is the first, update the GPU driver and the {runtime}; if it stays, report it to the project that made the call, with this line and the versions.",
        zh: "在这一行上方找同一次运行里更早的错误：后面的调用常常是因为它才失败的。如果这就是第一个错误，更新 GPU 驱动和 {runtime}；如果还在，把这一行和版本号报告给发起这个调用的项目。",
        runtime = runtime
    )
}

/// The runtime or driver whose own log line the finding is (a fault family:
/// ROCr's memory access fault, NVRM, nvgpu, Windows' TDR), by its table
/// title; `None` for a status some call returned, which names its table.
fn fault_reporter(f: &Finding) -> Option<String> {
    if fact(f, "table").is_some() || fact(f, "reported_by").is_none() {
        return None;
    }
    fact(f, "table_title").map(str::to_string)
}

/// The indefinite article for a name, as it is read aloud: "an" before a
/// vowel and before initialisms read from an N ("an NCCL", "an NVIDIA",
/// "an nvJPEG"); "a" otherwise ("a cuDNN", "a HIP", "a MIOpen").
fn article(name: &str) -> &'static str {
    let mut chars = name.chars();
    let first = chars.next().unwrap_or(' ');
    let second = chars.next().unwrap_or(' ');
    let vowel = "aeiouAEIOU".contains(first);
    let spelled_n = first == 'N' && second.is_ascii_uppercase()
        || matches!(first, 'N' | 'n') && matches!(second, 'v' | 'V');
    if vowel || spelled_n {
        "an"
    } else {
        "a"
    }
}

/// A word only English needs (an article); the Chinese has none.
fn english_only(word: String) -> Said {
    Said {
        en: word,
        zh: String::new(),
    }
}

/// "an" → "An", for the start of a headline.
fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The first fix the advice table gives for a status code, for a family
/// that finds the code inside its own message (NCCL's `Last error:` naming
/// a CUDA error): the code's own fix rather than a general one.
pub(super) fn advice_fix(
    name: &str,
    seen: impl Fn(&str) -> bool,
) -> Option<(Fix, &'static Advice)> {
    let advice = advice::lookup(name, seen)?;
    let spec = fix_spec(advice.fix)?;
    Some((fix(spec, said(advice.how)), advice))
}

/// A text of the advice table, as a sentence in both languages.
pub(super) fn said(text: advice::Both) -> Said {
    Said {
        en: text.en.to_string(),
        zh: text.zh.to_string(),
    }
}

/// Whether the kernel's work-group local memory is what ran out.
fn work_group_local(f: &Finding) -> bool {
    fact(f, key::MEMORY) == Some(crate::detect::memory_kind::WORK_GROUP_LOCAL)
}

/// SYCL's local-memory query and the kernel's local allocations.
const FIT_LOCAL_MEMORY: FixSpec = FixSpec::new(
    "fit-work-group-local-memory",
    "Fit the kernel's local memory to the device's limit",
    "让 kernel 的本地内存符合设备上限",
)
.sources(&[
    "SYCL 2020 specification: info::device::local_mem_size; sycl_ext_oneapi_work_group_static",
]);

/// The fix an advice row names, by id.
fn fix_spec(id: &str) -> Option<&'static FixSpec> {
    FIXES.iter().find(|spec| spec.id == id)
}

/// Names CUDA's and ROCm's drivers and `nvidia-smi`.
const UPDATE_DRIVER: FixSpec = FixSpec::new(
    "update-gpu-driver",
    "Update the GPU driver",
    "更新 GPU 驱动",
)
.vendors(&[Vendor::Nvidia, Vendor::Amd]);

/// The kernel modules, `nvidia-smi` (or `rocm-smi`, `npu-smi`) and the kernel log.
const CHECK_DRIVER_STATE: FixSpec = FixSpec::new(
    "check-gpu-driver-state",
    "Check the driver's state",
    "检查驱动的状态",
)
.vendors(&[Vendor::Nvidia, Vendor::Amd, Vendor::Ascend])
.cost(Cost::Look);

const GPU_VISIBLE: FixSpec = FixSpec::new(
    "check-gpu-visible",
    "Check that the GPU is visible to the process",
    "确认进程看得到 GPU",
)
.vendors(&[Vendor::Nvidia, Vendor::Amd])
.cost(Cost::Look);

/// Same title as the GPU-crash family's; CUDA's tools and HIP's
/// serialisation switch.
const FIND_KERNEL: FixSpec = FixSpec::new(
    "status-find-failing-kernel",
    "Find the kernel that failed",
    "找出出错的 kernel",
)
.vendors(&[Vendor::Nvidia, Vendor::Amd, Vendor::Ascend])
.cost(Cost::Look)
.sources(&[
    "CUDA Programming Guide: CUDA_LAUNCH_BLOCKING",
    "compute-sanitizer documentation",
    "HIP documentation: Debugging with HIP (AMD_SERIALIZE_KERNEL, HIP_LAUNCH_BLOCKING, rocgdb)",
    "torch_npu documentation: ASCEND_LAUNCH_BLOCKING",
]);

const LIBRARY_HEADROOM: FixSpec = FixSpec::new(
    "status-leave-memory-for-library",
    "Leave GPU memory for the library",
    "给库留出显存",
);

const FREE_MEMORY: FixSpec = FixSpec::new(
    "status-free-gpu-memory",
    "Free memory or ask for less",
    "释放内存或少申请一些",
);

/// Compute capabilities and architecture lists: NVIDIA's and AMD's.
const BUILD_FOR_GPU: FixSpec = FixSpec::new(
    "status-build-for-this-gpu",
    "Check that the build supports this GPU",
    "确认这个版本支持这块 GPU",
)
.vendors(&[Vendor::Nvidia, Vendor::Amd]);

const AVOID_WATCHDOG: FixSpec = FixSpec::new(
    "status-avoid-display-watchdog",
    "Keep each kernel under the display watchdog's limit",
    "让每个 kernel 不超过显示看门狗的时限",
)
.sources(&["Microsoft Learn: TDR registry keys (TdrDelay)"]);

/// Metal's command buffers, which macOS's GPU watchdog times on a Mac.
const SHORTEN_METAL_BUFFERS: FixSpec = FixSpec::new(
    "status-shorten-metal-command-buffers",
    "Give each Metal command buffer less work",
    "让每个 Metal 命令缓冲区少做一些工作",
)
.vendors(&[Vendor::Apple])
.sources(&["MLX's and its users' reports of Metal's Impacting Interactivity aborts"]);

/// Engines' switches that turn CUDA graphs off.
const NO_CUDA_GRAPHS: FixSpec = FixSpec::new(
    "status-run-without-cuda-graphs",
    "Run once without CUDA graphs",
    "关掉 CUDA graph 跑一次",
)
.vendors(&[Vendor::Nvidia, Vendor::Amd])
.cost(Cost::Look)
.sources(&[
    "SGLang server arguments: --disable-cuda-graph",
    "vLLM engine arguments: --enforce-eager",
]);

const MATCH_VERSIONS: FixSpec = FixSpec::new(
    "status-match-library-versions",
    "Match the library versions",
    "让库的版本互相匹配",
)
.vendors(&[Vendor::Nvidia]);

const GPU_RESET: FixSpec = FixSpec::new(
    "status-check-gpu-reset",
    "Find why the GPU was reset, and update its driver",
    "查明 GPU 为什么被重置，并更新驱动",
)
.sources(&["Microsoft Learn: Timeout Detection and Recovery (TDR)"]);

const CHECK_ECC: FixSpec = FixSpec::new(
    "status-check-ecc",
    "Check the GPU memory's ECC errors",
    "检查显存的 ECC 错误",
)
.cost(Cost::Look);

/// `nvidia-smi` compute modes and NVIDIA's MPS.
const GPU_MODE: FixSpec = FixSpec::new(
    "status-check-gpu-mode",
    "Check the GPU's compute mode and MPS",
    "检查 GPU 的计算模式和 MPS",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

const UNSUPPORTED_FEATURE: FixSpec = FixSpec::new(
    "status-avoid-unsupported-feature",
    "Turn off the feature the platform lacks",
    "关掉平台不支持的功能",
);

const OTHER_CUDNN_PATH: FixSpec = FixSpec::new(
    "status-other-cudnn-path",
    "Try another cuDNN path for these inputs",
    "为这些输入换一条 cuDNN 路径",
)
.vendors(&[Vendor::Nvidia]);

/// NCCL's (and RCCL's) debug switch.
const NCCL_DEBUG_LOG: FixSpec = FixSpec::new(
    "status-nccl-debug-log",
    "Rerun with NCCL's debug log",
    "打开 NCCL 的调试日志重跑",
)
.cost(Cost::Look)
.sources(&["NCCL documentation: Environment Variables (NCCL_DEBUG)"]);

/// Driver API calls (`cuCtxPushCurrent`) and CUDA's first error.
const FIRST_CUDA_ERROR: FixSpec = FixSpec::new(
    "status-find-first-cuda-error",
    "Find the first CUDA error before it",
    "找到它之前的第一个 CUDA 错误",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

/// nvgpu's `[MMU FAULT]` lines.
const READ_FAULT_LINES: FixSpec = FixSpec::new(
    "status-read-fault-lines",
    "Read the driver's fault lines",
    "读驱动记下的出错信息",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

/// A message without its error: the first error line above it.
const FIND_FIRST_ERROR: FixSpec = FixSpec::new(
    "status-find-first-error",
    "Find the first error line above it",
    "找到它上方的第一条错误",
)
.cost(Cost::Look);

/// A decoded code no advice covers: an earlier error, then the driver.
const FIRST_ERROR_THEN_UPDATE: FixSpec = FixSpec::new(
    "status-first-error-then-update",
    "Find the first error before it, then update the driver",
    "先找它之前的第一个错误，再更新驱动",
)
.cost(Cost::Look);

const LOOK_UP_CODE: FixSpec = FixSpec::new(
    "status-look-up-code",
    "Look up the code in its library's reference",
    "到所属库的文档里查这个状态码",
)
.cost(Cost::Look);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`); the
/// advice rows name them by id.
pub(super) const FIXES: &[FixSpec] = &[
    FIT_LOCAL_MEMORY,
    UPDATE_DRIVER,
    CHECK_DRIVER_STATE,
    GPU_VISIBLE,
    FIND_KERNEL,
    LIBRARY_HEADROOM,
    FREE_MEMORY,
    BUILD_FOR_GPU,
    AVOID_WATCHDOG,
    SHORTEN_METAL_BUFFERS,
    NO_CUDA_GRAPHS,
    MATCH_VERSIONS,
    GPU_RESET,
    CHECK_ECC,
    GPU_MODE,
    UNSUPPORTED_FEATURE,
    OTHER_CUDNN_PATH,
    NCCL_DEBUG_LOG,
    FIRST_CUDA_ERROR,
    READ_FAULT_LINES,
    FIND_FIRST_ERROR,
    FIRST_ERROR_THEN_UPDATE,
    LOOK_UP_CODE,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;

    /// The status finding of a real paste, with its Why (title and detail)
    /// and its first fix, in English and Chinese.
    struct Screen {
        why: (String, String),
        why_zh: (String, String),
        fix: (String, String, String),
        fix_zh: (String, String),
    }

    fn screen(paste: &str) -> Screen {
        let findings = crate::decode_str(paste);
        let f = findings
            .iter()
            .find(|f| f.kind == Kind::GpuRuntimeError)
            .unwrap_or_else(|| panic!("no status finding: {findings:#?}"));
        let v = &f.diagnosis.verdicts[0];
        let v_zh = v.zh.clone().unwrap();
        let x = &f.diagnosis.fixes[0];
        let x_zh = x.zh.clone().unwrap();
        Screen {
            why: (v.title.clone(), v.detail.clone()),
            why_zh: (v_zh.title, v_zh.text),
            fix: (x.id.clone(), x.title.clone(), x.how.clone()),
            fix_zh: (x_zh.title, x_zh.text),
        }
    }

    /// No English sentence stands in for the Chinese.
    fn chinese(text: &str) -> bool {
        advice::has_chinese(text) && !text.contains("状态码表原文")
    }

    #[test]
    fn cudnn_execution_failed_in_caffe_checks_the_build_first() {
        // fixtures/wild/1427.txt: Caffe's CHECK on a cuDNN status.
        let s = screen(include_str!("../../../../fixtures/wild/1427.txt"));
        assert_eq!(s.why.0, "cuDNN could not run its GPU kernel");
        assert!(
            s.why.1.contains("does not support this GPU's architecture"),
            "{}",
            s.why.1
        );
        assert_eq!(s.fix.0, "status-build-for-this-gpu");
        assert!(s.fix.2.contains("compute_cap"), "{}", s.fix.2);
        assert!(chinese(&s.why_zh.0) && chinese(&s.why_zh.1) && chinese(&s.fix_zh.1));
        assert!(s.why_zh.1.contains("架构"), "{}", s.why_zh.1);
    }

    #[test]
    fn cudnn_execution_failed_inside_tensorrt_names_its_tactics() {
        // fixtures/wild/1429.txt: TensorRT's convolution runner during an engine build.
        // Its `../rtSafe/... (483) - Cudnn Error in executeConv` form is
        // TensorRT 7's: TensorRT 7's workspace option, not TensorRT 8's
        // tactic sources or 8.4's memory pools.
        let s = screen(include_str!("../../../../fixtures/wild/1429.txt"));
        assert_eq!(s.why.0, "A cuDNN tactic failed inside TensorRT 7 or older");
        assert_eq!(s.fix.0, "status-match-library-versions");
        assert!(s.fix.2.contains("--workspace=<MiB>"), "{}", s.fix.2);
        assert!(s.fix.2.contains("max_workspace_size"), "{}", s.fix.2);
        assert!(!s.fix.2.contains("--memPoolSize"), "{}", s.fix.2);
        assert!(
            s.fix
                .2
                .contains("(`--tacticSources=-CUDNN`) needs TensorRT 8"),
            "{}",
            s.fix.2
        );
        assert!(s.fix_zh.1.contains("--workspace=<MiB>"), "{}", s.fix_zh.1);
        assert!(chinese(&s.why_zh.0) && chinese(&s.why_zh.1));
    }

    #[test]
    fn stream_capture_in_sglang_turns_cuda_graphs_off() {
        // fixtures/wild/1570.txt: SGLang's MoE gate during CUDA-graph capture.
        let s = screen(include_str!("../../../../fixtures/wild/1570.txt"));
        assert_eq!(
            s.why.0,
            "Something ran that CUDA graph capture does not allow"
        );
        assert_eq!(s.fix.0, "status-run-without-cuda-graphs");
        assert!(s.fix.2.contains("--disable-cuda-graph") && s.fix.2.contains("sgl-kernel"));
        assert_eq!(s.fix_zh.0, "关掉 CUDA graph 跑一次");
        assert!(chinese(&s.why_zh.1) && s.why_zh.0.contains("CUDA graph"));
    }

    #[test]
    fn device_hung_is_a_tdr_with_its_registry_key() {
        // fixtures/wild/1518.txt (Dawn on Direct3D 11) and 1519.txt (the
        // Direct3D 12 debug layer's TDR message).
        for paste in [
            include_str!("../../../../fixtures/wild/1518.txt"),
            include_str!("../../../../fixtures/wild/1519.txt"),
        ] {
            let s = screen(paste);
            assert_eq!(s.why.0, "The GPU hung and Windows reset it (a TDR)");
            assert_eq!(s.fix.0, "status-check-gpu-reset");
            assert!(s.fix.2.contains("TdrDelay") && s.fix.2.contains("Event Viewer"));
            assert!(s.fix_zh.1.contains("TdrDelay") && s.fix_zh.1.contains("事件查看器"));
            assert!(chinese(&s.why_zh.0) && chinese(&s.why_zh.1));
        }
    }

    #[test]
    fn an_hresult_names_the_api_the_text_names() {
        let d3d11 = crate::decode_str(include_str!("../../../../fixtures/wild/1518.txt"));
        assert!(d3d11
            .iter()
            .any(|f| f.diagnosis.headline.contains("A Direct3D 11 call")));
        // fixtures/wild/1563.txt: ONNX Runtime's DirectML execution provider.
        let dml = crate::decode_str(include_str!("../../../../fixtures/wild/1563.txt"));
        let f = dml
            .iter()
            .find(|f| f.kind == Kind::GpuRuntimeError)
            .unwrap();
        assert!(
            f.diagnosis.headline.contains("DirectML"),
            "{}",
            f.diagnosis.headline
        );
        assert!(!f.diagnosis.headline.contains("DirectX 12"));
    }

    #[test]
    fn device_removed_under_directml_suggests_the_cpu_provider() {
        let s = screen(include_str!("../../../../fixtures/wild/1563.txt"));
        assert_eq!(s.fix.0, "status-check-gpu-reset");
        assert!(s.fix.2.contains("CPU execution provider"), "{}", s.fix.2);
        assert!(s.why.1.contains("driver was reset"), "{}", s.why.1);
        assert!(chinese(&s.why_zh.0) && chinese(&s.fix_zh.1));
    }

    #[test]
    fn an_nvgpu_mmu_fault_points_at_the_fault_lines() {
        // fixtures/wild/1439.txt: a Jetson camera pipeline's copy-engine fault.
        let s = screen(include_str!("../../../../fixtures/wild/1439.txt"));
        assert_eq!(s.why.0, "The Jetson GPU faulted on an unmapped address");
        assert_eq!(s.fix.0, "status-read-fault-lines");
        assert!(s.fix.2.contains("[MMU FAULT]") && s.fix.2.contains("0x0"));
        assert!(chinese(&s.why_zh.1) && chinese(&s.fix_zh.1));
    }

    #[test]
    fn a_code_without_advice_keeps_english_out_of_the_chinese_title() {
        // fixtures/wild/1509.txt: RMM's free failing with cudaErrorMissingConfiguration,
        // a code with no advice row.
        assert!(advice::lookup("cudaErrorMissingConfiguration", |_| false).is_none());
        let s = screen(include_str!("../../../../fixtures/wild/1509.txt"));
        assert!(!s.why_zh.0.contains("The "), "{}", s.why_zh.0);
        assert!(advice::has_chinese(&s.why_zh.0), "{}", s.why_zh.0);
        // Its English title is still the table's meaning.
        assert!(s.why.0.contains("not previously configured"), "{}", s.why.0);
        // Its first fix is a first step for the runtime, not the table again.
        assert_eq!(s.fix.0, "status-first-error-then-update");
    }

    /// The whole first screen and detail of a paste, in both languages.
    fn report(paste: &str) -> String {
        crate::decode_str(paste)
            .iter()
            .map(|f| {
                let d = &f.diagnosis;
                let zh = d.headline_zh.clone().unwrap_or_default();
                let verdicts = d
                    .verdicts
                    .iter()
                    .map(|v| format!("{} {} {:?}", v.title, v.detail, v.zh));
                let fixes = d
                    .fixes
                    .iter()
                    .map(|x| format!("{} {} {:?}", x.title, x.how, x.zh));
                format!(
                    "{} {zh} {}",
                    d.headline,
                    verdicts.chain(fixes).collect::<Vec<_>>().join(" ")
                )
            })
            .collect()
    }

    #[test]
    fn a_rocm_memory_access_fault_is_an_asynchronous_fault_not_a_call() {
        // fixtures/wild/1640.txt: `... on address (nil). Reason: Page not present ...`.
        let null = crate::decode_str(include_str!("../../../../fixtures/wild/1640.txt"));
        let f = null
            .iter()
            .find(|f| f.kind == Kind::GpuRuntimeError)
            .unwrap();
        assert_eq!(
            f.diagnosis.headline,
            "The ROCm runtime (HSA) reported Memory access fault"
        );
        let s = screen(include_str!("../../../../fixtures/wild/1640.txt"));
        assert_eq!(
            s.why.0,
            "A kernel on the AMD GPU dereferenced a null pointer"
        );
        assert!(s.why.1.contains("asynchronous") && s.why.1.contains("printf"));
        assert_eq!(s.fix.0, "status-find-failing-kernel");
        for word in [
            "AMD_SERIALIZE_KERNEL=3",
            "HIP_LAUNCH_BLOCKING=1",
            "rocgdb",
            "hipMalloc",
        ] {
            assert!(s.fix.2.contains(word), "{word}: {}", s.fix.2);
            assert!(s.fix_zh.1.contains(word), "{word}: {}", s.fix_zh.1);
        }
        assert!(chinese(&s.why_zh.0) && chinese(&s.why_zh.1) && chinese(&s.fix_zh.1));
        // fixtures/wild/1726.txt: the same fault at a real address is not
        // called a null pointer.
        let s = screen(include_str!("../../../../fixtures/wild/1726.txt"));
        assert_eq!(
            s.why.0,
            "A kernel on the AMD GPU touched an unmapped address"
        );
        assert!(
            !s.why.1.contains("nil") && !s.why.1.contains("null"),
            "{}",
            s.why.1
        );
        assert!(s.why.1.contains("asynchronous"), "{}", s.why.1);
        assert!(s.fix.2.contains("AMD_SERIALIZE_KERNEL=3") && s.fix.2.contains("rocgdb"));
        let fault = crate::decode_str(include_str!("../../../../fixtures/wild/1726.txt"));
        let headline = &fault[0].diagnosis.headline;
        assert!(!headline.contains("call returned"), "{headline}");
        assert!(
            s.why.1.contains("not a status a call returned"),
            "{}",
            s.why.1
        );
    }

    #[test]
    fn rm_init_adapter_names_the_driver_checks_and_an_nvidia() {
        // fixtures/wild/1645.txt and 1003.txt: NVRM's RmInitAdapter failure.
        for paste in [
            include_str!("../../../../fixtures/wild/1645.txt"),
            include_str!("../../../../fixtures/wild/1003.txt"),
        ] {
            let s = screen(paste);
            assert_eq!(s.fix.0, "check-gpu-driver-state");
            for word in [
                "dmesg",
                "/proc/driver/nvidia/version",
                "nouveau",
                "mokutil",
                "lspci",
                "eGPU",
            ] {
                assert!(s.fix.2.contains(word), "{word}: {}", s.fix.2);
            }
            assert!(s.fix_zh.1.contains("nouveau") && chinese(&s.fix_zh.1));
            let all = report(paste);
            assert!(all.contains("The NVIDIA kernel driver (NVRM) reported RmInitAdapter failed"));
            assert!(
                !all.contains("A NVIDIA") && !all.contains("a NVIDIA"),
                "{all}"
            );
            assert!(!all.contains("status-look-up-code") && !all.contains("Look up the code"));
        }
    }

    #[test]
    fn a_table_status_is_still_returned_by_a_call_with_its_article() {
        // fixtures/wild/1427.txt: Caffe's cuDNN status; the table names it.
        let all = report(include_str!("../../../../fixtures/wild/1427.txt"));
        assert!(all.contains("A cuDNN call returned"), "{all}");
        assert!(all.contains("is a cuDNN status"), "{all}");
    }

    #[test]
    fn the_article_follows_how_a_name_is_read() {
        for (name, a) in [
            ("NVIDIA kernel driver (NVRM)", "an"),
            ("NCCL", "an"),
            ("NPP", "an"),
            ("nvJPEG", "an"),
            ("Nvidia", "an"),
            ("OpenCL", "an"),
            ("ONNX Runtime", "an"),
            ("cuDNN", "a"),
            ("HIP runtime", "a"),
            ("MIOpen", "a"),
            ("Vulkan", "a"),
            ("Nothing", "a"),
            ("", "a"),
        ] {
            assert_eq!(article(name), a, "{name}");
        }
        assert_eq!(capitalised("an"), "An");
    }

    #[test]
    fn every_advice_row_names_a_fix_of_this_family() {
        for row in advice::all() {
            assert!(
                fix_spec(row.fix).is_some(),
                "{}: no fix {}",
                row.id,
                row.fix
            );
        }
    }

    /// What no status finding's first screen may say when its message
    /// carries no code.
    fn claims_a_code(s: &Screen) -> bool {
        let all = format!("{} {} {} {}", s.why.0, s.why.1, s.fix.1, s.fix.2);
        all.contains("status code")
            || all.contains("not an out-of-memory")
            || all.contains("Look up the code")
            || s.why_zh.0.contains("状态码的含义")
    }

    #[test]
    fn a_cuda_check_stack_cut_above_its_error_line_finds_the_error_above() {
        // fixtures/wild/2058.txt: PyTorch's NCCL watchdog stack from
        // c10_cuda_check_implementation; the `CUDA error:` line was cut above.
        let s = screen(include_str!("../../../../fixtures/wild/2058.txt"));
        assert!(!claims_a_code(&s), "{:?} {:?}", s.why, s.fix);
        assert!(s.why.0.contains("does not say which error"), "{}", s.why.0);
        assert!(s.why.1.contains("cut off above"), "{}", s.why.1);
        assert!(!s.why.1.contains("device-to-host"), "{}", s.why.1);
        assert_eq!(s.fix.0, "status-find-first-error");
        assert!(s.fix.2.contains("CUDA_LAUNCH_BLOCKING=1"), "{}", s.fix.2);
        assert!(s.fix.2.contains("compute-sanitizer"), "{}", s.fix.2);
        assert!(chinese(&s.why_zh.0) && chinese(&s.why_zh.1) && chinese(&s.fix_zh.1));
    }

    #[test]
    fn a_failing_device_to_host_copy_without_a_code_points_at_an_earlier_kernel() {
        // fixtures/wild/2147.txt: ONNX Runtime's `CUDA error executing
        // cudaMemcpy(..., cudaMemcpyDeviceToHost)`, printed without the error.
        let s = screen(include_str!("../../../../fixtures/wild/2147.txt"));
        assert!(!claims_a_code(&s), "{:?} {:?}", s.why, s.fix);
        assert!(
            s.why
                .1
                .contains("device-to-host copy usually reports an earlier kernel"),
            "{}",
            s.why.1
        );
        assert_eq!(s.fix.0, "status-find-first-error");
        assert!(s.why_zh.1.contains("kernel"), "{}", s.why_zh.1);
    }

    #[test]
    fn a_decoded_code_without_advice_gets_a_first_step_not_a_look_up() {
        // fixtures/wild/2042.txt: OpenVINO's GPU plugin, OpenCL -54.
        let s = screen(include_str!("../../../../fixtures/wild/2042.txt"));
        assert!(advice::lookup("CL_INVALID_WORK_GROUP_SIZE", |_| false).is_none());
        assert_eq!(s.fix.0, "status-first-error-then-update");
        assert!(
            s.fix
                .2
                .contains("update the GPU driver and the OpenCL runtime"),
            "{}",
            s.fix.2
        );
        assert!(s.why.1.contains("not valid for the kernel"), "{}", s.why.1);
        assert!(chinese(&s.fix_zh.1), "{}", s.fix_zh.1);
    }

    #[test]
    fn metal_access_revoked_sends_to_the_first_gpu_error() {
        // fixtures/wild/2107.txt: `Ignored (for causing prior/excessive GPU
        // errors) (00000004:kIOAccelCommandBufferCallbackErrorSubmissionsIgnored)`.
        let s = screen(include_str!("../../../../fixtures/wild/2107.txt"));
        assert_eq!(s.fix.0, "status-find-first-error");
        assert!(s.why.0.contains("after earlier GPU errors"), "{}", s.why.0);
        assert!(s.fix.2.contains("first GPU error above"), "{}", s.fix.2);
        assert!(chinese(&s.why_zh.0) && chinese(&s.fix_zh.1));
    }

    #[test]
    fn no_status_finding_of_the_corpus_offers_a_look_up_first() {
        // Every wild paste with a status finding: a code or none, the first
        // fix is never the table look-up.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/wild");
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("txt") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            for f in crate::decode_str(&text) {
                if f.kind != Kind::GpuRuntimeError {
                    continue;
                }
                if let Some(first) = f.diagnosis.fixes.first() {
                    assert_ne!(first.id, LOOK_UP_CODE.id, "{}", path.display());
                }
                if code_of(&f).is_none() {
                    let v = &f.diagnosis.verdicts[0];
                    assert!(
                        !v.detail.contains("not an out-of-memory"),
                        "{}",
                        path.display()
                    );
                }
            }
        }
    }
}
