//! Out-of-memory errors under another name: a CUDA library that cannot
//! allocate, the caching allocator's internal assert on its OOM path, and
//! `device not ready` under memory pressure. Each verdict says the message
//! is not an OOM message, why it usually means one, and how to confirm.

use super::catalogue::{Cost, FixSpec};
use super::common::{confirm_fix, fact, fix, library_headroom_fix, verdict, workload_fixes};
use super::common::{workload_fix, CHECK_GPU_HOLDERS};
use super::docs::Code;
use super::setting::{since, Framework, Vendor};
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};
use crate::say;
use crate::say_parts;

/// How to confirm that a message under another name was an out-of-memory
/// error, in both languages.
pub(super) fn confirm() -> Said {
    say!(
        en: "To confirm: rerun with half the batch size (if the error goes away or comes later, it was memory); watch `nvidia-smi -l 1` while it runs; print torch.cuda.memory_summary() just before the failing step.",
        zh: "要确认：把 batch size 减半重跑（错误消失或推迟出现，就是显存的问题）；运行时用 `nvidia-smi -l 1` 观察；在出错那一步之前打印 torch.cuda.memory_summary()。"
    )
}

/// `confirm` in words that fit any framework: no PyTorch call.
fn confirm_any() -> Said {
    say!(
        en: "To confirm: rerun with smaller inputs or half the batch (if the error goes away or comes later, it was memory); watch `nvidia-smi -l 1` while it runs.",
        zh: "要确认：用更小的输入或减半的 batch 重跑（错误消失或推迟出现，就是显存的问题）；运行时用 `nvidia-smi -l 1` 观察。"
    )
}

/// Two texts written as one sentence, with nothing between them: a clause
/// that is there only when the message gives its figures.
pub(super) fn joined(first: Said, next: Said) -> Said {
    Said {
        en: first.en + &next.en,
        zh: first.zh + &next.zh,
    }
}

/// Explains `Kind::LibraryAllocFailed` findings.
pub(super) struct LibraryAllocFailed;

impl Explain for LibraryAllocFailed {
    fn headline(&self, f: &Finding) -> Said {
        if let Some(headline) = super::driver_log::headline(f) {
            return headline;
        }
        let status = fact(f, fact::STATUS);
        if status == Some("CUDNN_STATUS_NOT_SUPPORTED") {
            return say!(
                en: "cuDNN has no algorithm for this call (CUDNN_STATUS_NOT_SUPPORTED): an unsupported size or configuration, sometimes memory",
                zh: "cuDNN 没有适用于这个调用的算法（CUDNN_STATUS_NOT_SUPPORTED）：尺寸或配置不受支持，有时是显存不足"
            );
        }
        if other_reporter(f).is_some() && after_failed_read(f) {
            return say!(
                en: "std::bad_alloc right after a failed file read: most likely a size taken from that failed read, not memory running out",
                zh: "读文件失败后紧接着出现 std::bad_alloc：多半是那次失败的读取得到了错误的大小，而不是内存用完了"
            );
        }
        if let Some(reporter) = other_reporter(f).filter(|_| memory_unknown(f)) {
            return say_parts!(
                en: "{reporter} could not allocate memory (an uncaught std::bad_alloc): probably out of memory, host RAM or a GPU allocator's",
                zh: "{reporter} 分配内存失败（未捕获的 std::bad_alloc）：多半是内存不足，可能是主机内存，也可能是 GPU 分配器的显存",
                reporter = crate::i18n::reporter::said(reporter)
            );
        }
        if let Some(buffer) = ggml_buffer(f) {
            return say!(
                en: "ggml could not allocate its {buffer}: probably out of memory, but the message does not say so",
                zh: "ggml 没能分配它的 {buffer}：多半是内存不足，但报错没有明说",
                buffer = buffer
            );
        }
        if let Some(reporter) = other_reporter(f) {
            return say_parts!(
                en: "{reporter} ran out of resources on the GPU: probably out of GPU memory under another name",
                zh: "{reporter} 在 GPU 上资源不足：多半其实就是显存不足",
                reporter = crate::i18n::reporter::said(reporter)
            );
        }
        let lib = library_name(f);
        let failed = match (status, fact(f, fact::CALL)) {
            (Some(status), Some(call)) => say!(
                en: "{lib} failed with {status} at {call}",
                zh: "{lib} 在 {call} 处失败（{status}）",
                lib = lib,
                status = status,
                call = call
            ),
            (Some(status), None) => say!(
                en: "{lib} failed with {status}",
                zh: "{lib} 调用失败（{status}）",
                lib = lib,
                status = status
            ),
            (None, Some(call)) => say!(
                en: "{lib} failed with an allocation failure at {call}",
                zh: "{lib} 在 {call} 处分配失败",
                lib = lib,
                call = call
            ),
            (None, None) => say!(
                en: "{lib} failed with an allocation failure",
                zh: "{lib} 分配失败",
                lib = lib
            ),
        };
        let meaning = if is_alloc_failed(f) {
            say!(
                en: ": the library could not get GPU memory",
                zh: "：库拿不到显存"
            )
        } else {
            say!(
                en: ": probably out of GPU memory under another name",
                zh: "：多半其实就是显存不足"
            )
        };
        joined(failed, meaning)
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(super::driver_log::verdict_of(f).unwrap_or_else(|| library_verdict(f)))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        // A driver's own failure, or a message that blames the driver: the
        // driver's and the platform's fixes, not a program's.
        if super::driver_log::fixes(f, out) {
            return;
        }
        if other_reporter(f).is_some() && after_failed_read(f) {
            out.push(fix(
                &CHECK_FILE_READ,
                say!(
                    en: "Check the file the program failed to read just before: that the path is right from the directory it runs in (a relative path is resolved from the working directory), that the file exists, is readable and complete, and that it was written for this program's version (a TensorRT engine only loads with the TensorRT version and the GPU it was built on: rebuild it on this machine). Make the loader stop when the read fails instead of going on with the size it got.",
                    zh: "检查程序在这之前没能读取的那个文件：从程序运行的目录看路径是否正确（相对路径是相对于工作目录的），文件是否存在、可读、完整，是否是为这个程序的版本生成的（TensorRT engine 只能用生成它的那个 TensorRT 版本和那块 GPU 加载：在这台机器上重新生成）。让加载代码在读取失败时就停下，而不是拿着读到的大小继续往下走。"
                ),
            ));
            out.push(fix(
                &CHECK_BOTH_MEMORIES,
                say!(
                    en: "If the file is read correctly and it still fails, memory may really have run out: watch the host RAM (`free -h`, `top`; `tegrastats` on a Jetson) and the GPU's memory while it runs to see which one fills.",
                    zh: "如果文件读得没问题，它还是失败，那才可能真是内存不足：运行时观察主机内存（`free -h`、`top`；Jetson 上用 `tegrastats`）和显存，看是哪一个被占满。"
                ),
            ));
            return;
        }
        if other_reporter(f).is_some() && memory_unknown(f) {
            out.push(fix(
                &CHECK_BOTH_MEMORIES,
                say!(
                    en: "Watch both memories while it runs (`free -h` or `top` for RAM, nvidia-smi or rocm-smi for the GPU) to see which one fills; then give the job less data at once (a smaller problem size or batch) or run it where that memory is larger. A size computed wrong (negative or huge) throws the same exception: check the size of the allocation that failed.",
                    zh: "运行时同时观察两种内存（`free -h` 或 `top` 看主机内存，nvidia-smi 或 rocm-smi 看显存），看是哪一个被占满；然后让任务一次处理更少的数据（更小的问题规模或 batch），或者换到那种内存更大的机器上运行。算错的大小（负数或极大的数）也会抛出同样的异常：检查失败的那次分配要的大小。"
                ),
            ));
            return;
        }
        if other_reporter(f).is_some() && super::driver_log::on_jetson(f) {
            // A Jetson shares system memory with the GPU and has no nvidia-smi.
            out.push(fix(
                &CHECK_GPU_HOLDERS,
                say!(
                    en: "Watch the board's memory with `tegrastats` (a Jetson has no nvidia-smi; its GPU uses system memory) and stop the other programs that hold it.",
                    zh: "用 `tegrastats` 观察板子的内存（Jetson 没有 nvidia-smi；它的 GPU 用的是系统内存），结束占着内存的其他程序。"
                ),
            ));
            out.push(workload_fix());
            return;
        }
        if other_reporter(f).is_some() {
            // A program with its own levers (llama.cpp's ggml) names them.
            let own = super::generic::program_fixes(f);
            if !own.is_empty() {
                out.extend(own);
                return;
            }
            // Not cuBLAS, not PyTorch: the program's own GPU memory.
            out.push(fix(
                &CHECK_GPU_HOLDERS,
                say!(
                    en: "Check what else holds the GPU (the vendor's tool: nvidia-smi, rocm-smi, xpu-smi or intel_gpu_top) and stop it, or use another device.",
                    zh: "检查还有什么占着 GPU（用厂商的工具：nvidia-smi、rocm-smi、xpu-smi 或 intel_gpu_top），结束它，或者换一个设备。"
                ),
            ));
            out.push(workload_fix());
            return;
        }
        match fact(f, fact::STATUS) {
            Some("CUDNN_STATUS_NOT_SUPPORTED") => out.push(fix(
                &RULE_OUT_INPUT,
                say!(
                    en: "If a smaller batch does not help, make the input contiguous (x = x.contiguous()) and, to test, run with torch.backends.cudnn.enabled = False: if that works, the input layout or shape is unsupported, not memory.",
                    zh: "如果减小 batch 没用，先把输入变成连续的（x = x.contiguous()），并设 torch.backends.cudnn.enabled = False 试一下：能跑通就说明是输入的布局或形状不受支持，不是显存。"
                ),
            )),
            Some("CUBLAS_STATUS_NOT_INITIALIZED") => out.push(fix(
                &RULE_OUT_INDEX,
                say!(
                    en: "Run one step on the CPU: an IndexError there means a token id or label is out of range and corrupted the GPU context. Check that the tokenizer matches the model (len(tokenizer) ≤ the embedding size).",
                    zh: "在 CPU 上跑一步：如果那里出现 IndexError，说明有 token id 或标签越界，破坏了 GPU 上下文。检查 tokenizer 和模型是否配套（len(tokenizer) ≤ embedding 大小）。"
                ),
            )),
            _ => {}
        }
        if is_tensorflow(f) {
            // TensorFlow reserves the GPU up front; cuBLAS/cuDNN then find none.
            out.push(fix(
                &TF_ROOM_FOR_LIBRARIES,
                say!(
                    en: "TensorFlow takes nearly all GPU memory at start, so the library's own cudaMalloc finds none: set TF_FORCE_GPU_ALLOW_GROWTH=true, or call tf.config.experimental.set_memory_growth(gpu, True) for each GPU before any op runs (TensorFlow 1 sessions: config.gpu_options.allow_growth = True). Stop other processes on the GPU (`nvidia-smi`).",
                    zh: "TensorFlow 一启动就占掉几乎全部显存，库自己的 cudaMalloc 就拿不到了：设 TF_FORCE_GPU_ALLOW_GROWTH=true，或在任何操作运行之前对每块 GPU 调用 tf.config.experimental.set_memory_growth(gpu, True)（TensorFlow 1 的 session：config.gpu_options.allow_growth = True）。结束这块 GPU 上的其他进程（`nvidia-smi`）。"
                ),
            ));
            out.push(fix(
                &CONFIRM_MEMORY,
                say!(
                    en: "Rerun with half the batch size: if the error disappears or comes later, it was memory. Watch `nvidia-smi -l 1` while it runs.",
                    zh: "把 batch size 减半重跑：错误消失或推迟出现，就是显存的问题。运行时用 `nvidia-smi -l 1` 观察。"
                ),
            ));
            workload_fixes(f, out);
            return;
        }
        match library_host(f) {
            Framework::PyTorch => {
                out.push(confirm_fix(f));
                out.push(library_headroom_fix(f));
            }
            host => {
                // Another framework's (or no shown framework's) allocator:
                // its own lever first, then the framework-free check.
                if host == Framework::OnnxRuntime {
                    out.push(fix(
                        &ORT_ROOM_FOR_LIBRARIES,
                        say!(
                            en: "ONNX Runtime's arena grows and keeps what it takes, so the library's own cudaMalloc finds no room: cap it with the CUDA provider options {{\"gpu_mem_limit\": N, \"arena_extend_strategy\": \"kSameAsRequested\"}}, use smaller inputs or batches, and load fewer models or sessions per GPU. Stop other processes on the GPU (`nvidia-smi`).",
                            zh: "ONNX Runtime 的 arena 会不断增长并留着拿到的显存，库自己的 cudaMalloc 就找不到空间：用 CUDA provider options {{\"gpu_mem_limit\": N, \"arena_extend_strategy\": \"kSameAsRequested\"}} 给它设上限，用更小的输入或 batch，每块 GPU 上少加载几个模型或 session。结束这块 GPU 上的其他进程（`nvidia-smi`）。"
                        ),
                    ));
                }
                out.push(fix(
                    &CONFIRM_MEMORY,
                    say!(
                        en: "Rerun with smaller inputs or half the batch: if the error disappears or comes later, it was memory. Watch `nvidia-smi -l 1` while it runs to see what holds the GPU.",
                        zh: "用更小的输入或减半的 batch 重跑：错误消失或推迟出现，就是显存的问题。运行时用 `nvidia-smi -l 1` 观察是谁占着 GPU。"
                    ),
                ));
            }
        }
        workload_fixes(f, out);
    }
}

/// The framework whose allocator shares the GPU with the library's own
/// cudaMalloc, as far as the paste shows it. "... when calling
/// `cublasCreate(handle)`" is PyTorch's wording for a failed library call.
fn library_host(f: &Finding) -> Framework {
    if is_tensorflow(f) {
        return Framework::TensorFlow;
    }
    match Framework::of(f) {
        Framework::Unknown if f.text.contains("when calling `") => Framework::PyTorch,
        shown => shown,
    }
}

/// An `*_ALLOC_FAILED` status is the library's own out-of-memory report.
fn is_alloc_failed(f: &Finding) -> bool {
    fact(f, fact::STATUS).is_some_and(|s| s.ends_with("ALLOC_FAILED"))
}

/// True when the message or its traceback comes from TensorFlow.
fn is_tensorflow(f: &Finding) -> bool {
    // "failed to create cublas handle" is TensorFlow's stream executor's
    // wording; PyTorch prints "... when calling `cublasCreate(handle)`".
    f.text.contains("tensorflow/")
        || f.text.contains("failed to create cublas handle")
        || f.exception
            .as_deref()
            .is_some_and(|e| e.starts_with("tensorflow."))
        || f.traceback.as_ref().is_some_and(|tb| {
            tb.frames
                .iter()
                .any(|fr| fr.file.replace('\\', "/").contains("/tensorflow/"))
        })
}

/// Explains `Kind::AllocatorAssert` findings.
pub(super) struct AllocatorAssert;

impl Explain for AllocatorAssert {
    fn headline(&self, _f: &Finding) -> Said {
        say!(
            en: "PyTorch's allocator failed an internal assert on its out-of-memory path: probably out of GPU memory",
            zh: "PyTorch 的分配器在处理显存不足时内部断言失败：很可能是显存不足"
        )
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(allocator_assert_verdict(f))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        if f.era == Some(Era::Handles) {
            out.push(fix(
                &EXPANDABLE_SEGMENTS_OFF,
                say!(
                    en: "Remove expandable_segments:True from PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF: the ordinary allocator then reports a normal out-of-memory error with its numbers (on WSL2 expandable segments are a known source of failures).",
                    zh: "从 PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF 里去掉 expandable_segments:True：普通分配器就会报出带数字的正常显存不足错误（在 WSL2 上 expandable segments 是已知的故障来源）。"
                ),
            ));
        }
        out.push(confirm_fix(f));
        workload_fixes(f, out);
        out.push(fix(
            &NUMBERS_ANOTHER_WAY,
            say!(
                en: "The assert hides the out-of-memory message's figures: print torch.cuda.mem_get_info() and torch.cuda.memory_summary() before the failing step to see free and reserved memory.",
                zh: "这个断言把显存不足报错里的数字盖住了：在出错那一步之前打印 torch.cuda.mem_get_info() 和 torch.cuda.memory_summary()，看空闲和已预留的显存。"
            ),
        ));
    }
}

/// Explains `Kind::DeviceNotReady` findings.
pub(super) struct DeviceNotReady;

impl Explain for DeviceNotReady {
    fn headline(&self, _f: &Finding) -> Said {
        say!(
            en: "`CUDA driver error: device not ready`: under memory pressure (WSL2) this usually means the GPU ran out of memory",
            zh: "`CUDA driver error: device not ready`：在显存吃紧时（WSL2）这通常意味着 GPU 显存不足"
        )
    }
    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict(
            Code::MaskedOom,
            say!(
                en: "Not an out-of-memory message, but under memory pressure it usually means one",
                zh: "报错里没说显存不足，但在显存吃紧时它通常就是"
            ),
            say!(
                en: "`device not ready` (CUDA_ERROR_NOT_READY) normally means \"not finished yet\" and is not an error at all; PyTorch raises it when a driver call it checks returns it. It has been reported on WSL2 when the driver could not make memory resident (dmesg shows `dxgkio_make_resident ... -12`, i.e. ENOMEM) while nvidia-smi still showed free memory, and disappeared when the job used less GPU memory (microsoft/WSL#41176; mberr/torch-max-mem#45 lists it among OOM-under-pressure messages).",
                zh: "`device not ready`（CUDA_ERROR_NOT_READY）本来的意思是“还没完成”，根本不是错误；PyTorch 检查的某个驱动调用返回了它，PyTorch 就把它当错误抛出。有人在 WSL2 上遇到过：驱动没能让显存驻留（dmesg 显示 `dxgkio_make_resident ... -12`，即 ENOMEM），而 nvidia-smi 还显示有空闲显存；任务少用一些显存后它就消失了（microsoft/WSL#41176；mberr/torch-max-mem#45 把它列为显存吃紧时出现的报错之一）。"
            )
            .then(confirm()),
        ))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix(
            &LESS_THAN_SMI_FREE,
            say!(
                en: "On WSL2 the memory that can actually be made resident is below what nvidia-smi reports: lower the share a framework takes (vLLM --gpu-memory-utilization 0.8, smaller KV cache), the batch or the model size. `dmesg | grep -i make_resident` shows the driver's ENOMEM.",
                zh: "在 WSL2 上真正能驻留的显存比 nvidia-smi 报告的少：调低框架占用的比例（vLLM --gpu-memory-utilization 0.8、更小的 KV cache）、batch 或模型大小。`dmesg | grep -i make_resident` 会显示驱动的 ENOMEM。"
            ),
        ));
        out.push(confirm_fix(f));
        workload_fixes(f, out);
    }
}

fn library_name(f: &Finding) -> &'static str {
    match fact(f, fact::LIBRARY) {
        Some("cudnn") => "cuDNN",
        Some("cusolver") => "cuSOLVER",
        _ => "cuBLAS",
    }
}

/// A program the general grammar found reported the failure (OpenVINO's GPU
/// plugin, an OpenCL runtime), not one of the CUDA libraries this family
/// reads by name.
fn other_reporter(f: &Finding) -> Option<&str> {
    fact(f, fact::LIBRARY)
        .is_none()
        .then(|| fact(f, fact::REPORTED_BY))
        .flatten()
}

/// A C++ `std::bad_alloc` that names no memory (the general grammar's
/// `memory: unknown`): host RAM or a device allocator's.
fn memory_unknown(f: &Finding) -> bool {
    fact(f, fact::MEMORY) == Some("unknown")
}

/// A bare `std::bad_alloc` (no memory named) where the writer's lines
/// around it show the program failed to open or read a file (`could not
/// open`, `failed to read`, `Error reading engine file`, `read PATH error`,
/// `No such file or directory`): C++ loaders size their buffer from the
/// file (`tellg()` returns -1 after a failed open, a length field read from
/// nothing is garbage), and `new char[size]` with that size throws
/// `bad_alloc` without any memory running out.
pub(super) fn after_failed_read(f: &Finding) -> bool {
    static RE: crate::GatedRegex = crate::GatedRegex::new(
        &["open", "read", "no such file"],
        r"(?i)\b(?:could\s?n[o']t|can\s?n[o']t|unable to|failed to|fail to) (?:open|read)\b|\berror (?:reading|opening)\b|\bno such file or directory\b|\bread\s+\S+\s+(?:error|failed)\b",
    );
    memory_unknown(f) && !f.nearby.is_empty() && RE.is_match(&f.nearby)
}

/// The file a loader failed to read, before any memory.
const CHECK_FILE_READ: FixSpec = FixSpec::new(
    "check-file-read-before-bad-alloc",
    "Check the file it failed to read",
    "检查它没能读取的那个文件",
)
.cost(Cost::Look)
.sources(&["cppreference: std::basic_istream::tellg (returns -1 on failure)"]);

/// Finds which memory filled before shrinking the job.
const CHECK_BOTH_MEMORIES: FixSpec = FixSpec::new(
    "check-which-memory-filled",
    "Find which memory filled",
    "找出是哪种内存满了",
)
.cost(Cost::Look);

/// ggml's `unable to allocate CUDA0 buffer` (llama.cpp's model loader, as
/// the general grammar records it): the buffer's name (`CUDA0 buffer`,
/// `backend buffer`).
fn ggml_buffer(f: &Finding) -> Option<&str> {
    fact(f, fact::REPORTED_BY)?
        .strip_prefix("ggml (")?
        .strip_suffix(')')
        .filter(|b| b.ends_with(" buffer"))
}

fn library_verdict(f: &Finding) -> Verdict {
    if other_reporter(f).is_some() && after_failed_read(f) {
        return verdict(
            Code::AllocationFailed,
            say!(
                en: "A failed file read just before it: most likely a wrong size, not memory",
                zh: "紧挨着它之前读文件失败了：多半是大小出错，而不是内存不够"
            ),
            say!(
                en: "The program ended with an uncaught std::bad_alloc right after it reported that it could not read a file. A loader that sizes its buffer from the file gets a wrong size when the read fails (tellg() returns -1 after a failed open, a length read from nothing is garbage), and new[] with that size throws std::bad_alloc without any memory running out. Only if the file is read correctly and it still fails did memory (host RAM or the GPU allocator's) run out.",
                zh: "程序刚报告读不了某个文件，紧接着就因未捕获的 std::bad_alloc 终止了。按文件大小分配缓冲区的加载代码在读取失败时会拿到错误的大小（打开失败后 tellg() 返回 -1，从空读取得到的长度是垃圾值），用这个大小做 new[] 就会抛出 std::bad_alloc，而内存其实并没有用完。只有文件读取正常、它仍然失败时，才是内存（主机内存或 GPU 分配器的显存）真的用完了。"
            ),
        );
    }
    if let Some(buffer) = ggml_buffer(f) {
        return verdict(
            Code::MaskedOom,
            say!(
                en: "An allocation failed; the message does not say why",
                zh: "一次分配失败了；报错没说原因"
            ),
            say!(
                en: "The model loader could not get a {buffer} for the model's weights or context. In ggml's source that happens when the backend's own allocation fails (most often the device has too little free memory for it, but any error of its allocator ends the same way), when one tensor is larger than the largest buffer the backend allows, or, for the CPU's buffer type, when host RAM runs out. The message carries no sizes; the lines the loader printed before it (each buffer's size, a failed cudaMalloc) say which.",
                zh: "模型加载器没能为模型的权重或上下文分配到 {buffer}。在 ggml 的源码里，这发生在后端自己的分配失败时（最常见的是设备上空闲的显存不够，但分配器的任何错误结局都一样）、某个张量比后端允许的最大缓冲区还大时，或者（CPU 缓冲区类型时）主机内存用完时。报错里没有大小；加载器在它之前打印的那些行（每个缓冲区的大小、失败的 cudaMalloc）会说明是哪一种。",
                buffer = buffer
            ),
        );
    }
    if let Some(reporter) = other_reporter(f).filter(|_| memory_unknown(f)) {
        return verdict(
            Code::MaskedOom,
            say!(
                en: "An allocation failed; the message does not say which memory",
                zh: "一次分配失败了；报错没说是哪种内存"
            ),
            say_parts!(
                en: "{reporter} ended with an uncaught std::bad_alloc: C++'s operator new (or an allocator that throws the same exception) could not get the memory it asked for. Most often the machine's RAM or the GPU allocator's memory ran out; a size computed wrong (negative or huge) throws it too. The message carries no sizes and does not name the memory.",
                zh: "{reporter} 因未捕获的 std::bad_alloc 而终止：C++ 的 operator new（或抛出同一种异常的分配器）没能拿到它要的内存。最常见的是主机内存或 GPU 分配器的显存用完了；算错的大小（负数或极大的数）也会抛出它。报错里没有大小，也没说是哪种内存。",
                reporter = crate::i18n::reporter::said(reporter)
            ),
        );
    }
    if let Some(reporter) = other_reporter(f) {
        // The message's own figures are none; the writer may state the
        // device's memory on a line after it (`GPU 0: 357 MiB free, 45.7 GB
        // used`).
        let sizes = match (f.device, f.sizes.free_bytes) {
            (Some(device), Some(free)) => {
                let used = f.sizes.extra.get("used_bytes").copied().flatten();
                match used {
                    Some(used) => say!(
                        en: "It carries no sizes; the writer states that GPU {device} had {free} free and {used} in use.",
                        zh: "报错里没有大小；写报告的人说 GPU {device} 当时空闲 {free}，已用 {used}。",
                        device = device,
                        free = crate::units::format_size(free),
                        used = crate::units::format_size(used)
                    ),
                    None => say!(
                        en: "It carries no sizes; the writer states that GPU {device} had {free} free.",
                        zh: "报错里没有大小；写报告的人说 GPU {device} 当时空闲 {free}。",
                        device = device,
                        free = crate::units::format_size(free)
                    ),
                }
            }
            // A size printed beside the status (TensorFlow's `failed to
            // allocate 7.35G (7889485824 bytes)`) is not "no sizes".
            _ if states_bytes(&f.text) => Said::default(),
            _ => say!(en: "It carries no sizes.", zh: "报错里没有大小。"),
        };
        return verdict(
            Code::MaskedOom,
            say!(
                en: "Not an out-of-memory message, but it usually means one",
                zh: "报错里没说显存不足，但实际上多半就是"
            ),
            say_parts!(
                en: "{reporter} reported that it ran out of resources on the GPU. It does not say memory, but on a GPU such a status most often means the device's memory (or another per-device limit) was exhausted. {sizes}",
                zh: "{reporter} 报告它在 GPU 上资源不足。报错没说是显存，但在 GPU 上这种状态最常见的意思是设备的显存（或别的按设备的上限）用完了。{sizes}",
                reporter = crate::i18n::reporter::said(reporter),
                sizes = sizes
            ),
        );
    }
    let lib = library_name(f);
    let status = fact(f, fact::STATUS).unwrap_or("an error");
    // "{lib} returned {status}", with the call when the message names it.
    let returned = match fact(f, fact::CALL) {
        Some(call) => say!(
            en: "{lib} returned {status} when calling `{call}`",
            zh: "{lib} 在调用 `{call}` 时返回了 {status}",
            lib = lib,
            status = status,
            call = call
        ),
        None => say!(
            en: "{lib} returned {status}",
            zh: "{lib} 返回了 {status}",
            lib = lib,
            status = status
        ),
    };
    let detail = match status {
        "CUDNN_STATUS_NOT_SUPPORTED" => say!(
            en: "cuDNN returned CUDNN_STATUS_NOT_SUPPORTED: it has no algorithm for this call. Mostly that is the input's size or configuration (batch × spatial sizes beyond cuDNN's 32-bit indexing, an unusual dtype or layout, a non-contiguous input, as PyTorch's note says); only sometimes is it memory, when no algorithm's workspace fits, which is why PyTorch Lightning and Hugging Face accelerate list this exact message among out-of-memory errors (pytorch/pytorch#4107). A smaller batch shrinks both, so test with torch.backends.cudnn.enabled = False as well.",
            zh: "cuDNN 返回了 CUDNN_STATUS_NOT_SUPPORTED：它没有适用于这个调用的算法。多数情况是输入的尺寸或配置（batch × 空间尺寸超出 cuDNN 的 32 位索引、不常见的 dtype 或布局、不连续的输入，正如 PyTorch 的提示所说）；只是有时才是显存：没有哪个算法的工作区放得下，所以 PyTorch Lightning 和 Hugging Face accelerate 把这条报错原样列为显存不足错误之一（pytorch/pytorch#4107）。减小 batch 对两者都有效，所以还要设 torch.backends.cudnn.enabled = False 测一下。"
        )
        .then(confirm()),
        "CUBLAS_STATUS_NOT_INITIALIZED" | "CUSOLVER_STATUS_NOT_INITIALIZED" | "CUSOLVER_STATUS_INTERNAL_ERROR" => joined(
            returned,
            say!(
                en: ": it could not set up its handle. This is not PyTorch's out-of-memory message, but creating the handle allocates a workspace with cudaMalloc, outside PyTorch's cache, and the most common reason it fails is that the GPU is full (maintainers' answers in QwenLM/Qwen#120 and EleutherAI/lm-evaluation-harness#1689). Less often it is a CUDA/driver mismatch, or an earlier out-of-range index (e.g. a token id ≥ the vocabulary size) that corrupted the context.",
                zh: "：它没能建立自己的句柄。这不是 PyTorch 的显存不足报错，但创建句柄时会在 PyTorch 缓存之外用 cudaMalloc 分配工作区，而失败最常见的原因就是 GPU 满了（见维护者在 QwenLM/Qwen#120 和 EleutherAI/lm-evaluation-harness#1689 里的回答）。少数情况下是 CUDA 与驱动版本不匹配，或者更早的一次索引越界（如 token id ≥ 词表大小）破坏了上下文。"
            ),
        )
        .then(confirm()),
        _ if is_tensorflow(f) => joined(
            returned,
            say!(
                en: ". This is not TensorFlow's out-of-memory message, but {lib} allocates its handle and workspace with its own cudaMalloc, outside TensorFlow's allocator, so the status means the GPU had no room left for it: TensorFlow reserves nearly all GPU memory when it starts unless memory growth is on, and another process may hold the rest.",
                zh: "。这不是 TensorFlow 的显存不足报错，但 {lib} 在 TensorFlow 的分配器之外用自己的 cudaMalloc 分配句柄和工作区，所以这个状态说明 GPU 上已经没有留给它的空间：除非打开了显存按需增长，TensorFlow 一启动就会预留几乎全部显存，其余的可能被别的进程占着。",
                lib = lib
            ),
        ),
        _ => match library_host(f) {
            Framework::PyTorch => joined(
                returned,
                say!(
                    en: ". This is not PyTorch's out-of-memory message, but {lib} allocates its handle and workspace with cudaMalloc, outside PyTorch's cache, so the status means the GPU had no room left for it, often because PyTorch's cache or another process held the memory.",
                    zh: "。这不是 PyTorch 的显存不足报错，但 {lib} 在 PyTorch 的缓存之外用 cudaMalloc 分配句柄和工作区，所以这个状态说明 GPU 上已经没有留给它的空间，常常是因为显存被 PyTorch 的缓存或别的进程占着。",
                    lib = lib
                ),
            )
            .then(confirm()),
            Framework::OnnxRuntime => joined(
                returned,
                say!(
                    en: " inside ONNX Runtime's CUDA provider. {lib} allocates its handle and workspace with its own cudaMalloc, outside ONNX Runtime's memory arena, so the status means the GPU had no room left for it, often because the arena (which grows and keeps what it takes) or another process held the memory.",
                    zh: "，发生在 ONNX Runtime 的 CUDA provider 里。{lib} 在 ONNX Runtime 的内存 arena 之外用自己的 cudaMalloc 分配句柄和工作区，所以这个状态说明 GPU 上已经没有留给它的空间，常常是因为显存被 arena（它会增长并留着拿到的显存）或别的进程占着。",
                    lib = lib
                ),
            )
            .then(confirm_any()),
            Framework::Jax => joined(
                returned,
                say!(
                    en: ". {lib} allocates its handle and workspace with its own cudaMalloc, outside XLA's allocator, so the status means the GPU had no room left for it: JAX preallocates most of the GPU's memory when it starts unless XLA_PYTHON_CLIENT_PREALLOCATE=false, and another process may hold the rest.",
                    zh: "。{lib} 在 XLA 的分配器之外用自己的 cudaMalloc 分配句柄和工作区，所以这个状态说明 GPU 上已经没有留给它的空间：除非设了 XLA_PYTHON_CLIENT_PREALLOCATE=false，JAX 一启动就会预留 GPU 的大部分显存，其余的可能被别的进程占着。",
                    lib = lib
                ),
            )
            .then(confirm_any()),
            Framework::CuPy => joined(
                returned,
                say!(
                    en: ". {lib} allocates its handle and workspace with its own cudaMalloc, outside CuPy's memory pool, so the status means the GPU had no room left for it, often because CuPy's pool (which keeps freed blocks cached) or another process held the memory.",
                    zh: "。{lib} 在 CuPy 的内存池之外用自己的 cudaMalloc 分配句柄和工作区，所以这个状态说明 GPU 上已经没有留给它的空间，常常是因为显存被 CuPy 的内存池（它会缓存释放掉的块）或别的进程占着。",
                    lib = lib
                ),
            )
            .then(confirm_any()),
            _ => joined(
                returned,
                say!(
                    en: ". {lib} allocates its handle and workspace with its own cudaMalloc, so the status means the GPU had no room left for it: the program's own allocations or another process held the memory.",
                    zh: "。{lib} 用自己的 cudaMalloc 分配句柄和工作区，所以这个状态说明 GPU 上已经没有留给它的空间：显存被程序自己的分配或别的进程占着。",
                    lib = lib
                ),
            )
            .then(confirm_any()),
        },
    };
    let headline = if is_alloc_failed(f) {
        say!(
            en: "An allocation-failed status: the library's own out-of-memory report",
            zh: "分配失败状态码：这是库自己报告的显存不足"
        )
    } else {
        say!(
            en: "Not an out-of-memory message, but it usually means one",
            zh: "报错里没说显存不足，但实际上多半就是"
        )
    };
    verdict(Code::MaskedOom, headline, detail)
}

fn allocator_assert_verdict(f: &Finding) -> Verdict {
    let at = match (fact(f, fact::FILE), fact(f, fact::LINE)) {
        (Some(file), Some(line)) => say!(
            en: " ({file}:{line})",
            zh: "（{file}:{line}）",
            file = file,
            line = line
        ),
        _ => Said::default(),
    };
    let detail = if f.era == Some(Era::Handles) {
        joined(
            joined(
                say!(
                    en: "`!handles_.at(i)` is an internal assert",
                    zh: "`!handles_.at(i)` 是一个内部断言"
                ),
                at,
            ),
            say!(
                en: " in the expandable-segments code of PyTorch's caching allocator (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True), which maps physical memory into a growing segment. It has been reported under heavy memory pressure (mberr/torch-max-mem#45) and on WSL2 while decoding a large video (pytorch/pytorch#166234), i.e. when mapping more memory failed. It replaces the out-of-memory message rather than being a separate bug in your code.",
                zh: "，位于 PyTorch 缓存分配器的 expandable segments 代码里（PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True），这段代码把物理显存映射进一个不断增长的段。有人在显存极度吃紧时（mberr/torch-max-mem#45）和在 WSL2 上解码大视频时（pytorch/pytorch#166234）遇到过它，也就是映射更多显存失败的时候。它取代了显存不足的报错，而不是你代码里另一个单独的 bug。"
            ),
        )
    } else {
        let assert = fact(f, fact::ASSERT).unwrap_or("NVML_SUCCESS == r");
        joined(
            joined(
                say!(
                    en: "`{assert}` failed",
                    zh: "`{assert}` 失败",
                    assert = assert
                ),
                at,
            ),
            say!(
                en: " while PyTorch was building its out-of-memory message: since 2.1 the message lists the processes using the GPU, which PyTorch asks NVML for, and that query fails on MIG instances, Jetson and some containers. The allocation had already failed; the assert only hides the usual \"CUDA out of memory\" text and its numbers (pytorch/pytorch#122068, fal-ai/fal#478, pytorch/pytorch#185240).",
                zh: "，发生在 PyTorch 组装显存不足报错的时候：从 2.1 起，这条报错会列出使用这块 GPU 的进程，PyTorch 要向 NVML 查询它们，而这个查询在 MIG 实例、Jetson 和一些容器里会失败。分配在此之前就已经失败了；这个断言只是盖住了平常的 \"CUDA out of memory\" 文字和其中的数字（pytorch/pytorch#122068、fal-ai/fal#478、pytorch/pytorch#185240）。"
            ),
        )
    };
    verdict(
        Code::MaskedOom,
        say!(
            en: "Not an out-of-memory message, but raised on the out-of-memory path",
            zh: "报错里没说显存不足，但它是在处理显存不足时抛出的"
        ),
        detail.then(confirm()),
    )
}

/// `x.contiguous()` and `torch.backends.cudnn.enabled`; cuDNN is NVIDIA's.
const RULE_OUT_INPUT: FixSpec = FixSpec::new(
    "rule-out-unsupported-input",
    "Rule out the input itself",
    "排除输入本身的问题",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

/// Chosen by cuBLAS's status: NVIDIA's library.
const RULE_OUT_INDEX: FixSpec = FixSpec::new(
    "rule-out-out-of-range-index",
    "Rule out an out-of-range index",
    "排除索引越界",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

/// TensorFlow's memory growth; names cuBLAS, cuDNN and nvidia-smi.
const TF_ROOM_FOR_LIBRARIES: FixSpec = FixSpec::new(
    "tensorflow-room-for-cublas-cudnn",
    "Let TensorFlow leave room for cuBLAS and cuDNN",
    "让 TensorFlow 给 cuBLAS 和 cuDNN 留出空间",
)
.frameworks(&[Framework::TensorFlow])
.vendors(&[Vendor::Nvidia])
.sources(&["TensorFlow documentation: tf.config.experimental.set_memory_growth"]);

/// ONNX Runtime's CUDA provider options; cuBLAS and cuDNN are NVIDIA's.
const ORT_ROOM_FOR_LIBRARIES: FixSpec = FixSpec::new(
    "onnxruntime-room-for-cublas-cudnn",
    "Bound ONNX Runtime's arena",
    "给 ONNX Runtime 的 arena 设上限",
)
.frameworks(&[Framework::OnnxRuntime])
.vendors(&[Vendor::Nvidia])
.sources(&[
    "ONNX Runtime documentation: CUDA Execution Provider (gpu_mem_limit, arena_extend_strategy)",
]);

/// Halve the batch and watch nvidia-smi: the same advice as
/// `common::confirm_fix`, in the words that fit any framework.
/// The framework-free form of `common::CONFIRM_MEMORY` (which names
/// PyTorch's memory summary): the same advice, so the same title.
const CONFIRM_MEMORY: FixSpec = FixSpec::new(
    "confirm-memory-by-halving-batch",
    "Confirm that it is memory",
    "确认是不是显存问题",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

/// expandable_segments exists from PyTorch 2.1.
const EXPANDABLE_SEGMENTS_OFF: FixSpec = FixSpec::new(
    "expandable-segments-off",
    "Turn off expandable segments",
    "关掉 expandable segments",
)
.frameworks(&[Framework::PyTorch])
.torch_since(since::EXPANDABLE_SEGMENTS)
.sources(&["PyTorch documentation: CUDA semantics, Memory management (expandable_segments)"]);

/// torch.cuda.mem_get_info and memory_summary.
const NUMBERS_ANOTHER_WAY: FixSpec = FixSpec::new(
    "get-memory-numbers-another-way",
    "Get the numbers another way",
    "换一种方式拿到这些数字",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Look);

/// WSL2 with NVIDIA's driver and nvidia-smi.
const LESS_THAN_SMI_FREE: FixSpec = FixSpec::new(
    "use-less-than-smi-free",
    "Use less of the GPU than nvidia-smi shows free",
    "只用比 nvidia-smi 显示的空闲更少的显存",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Quality);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    RULE_OUT_INPUT,
    RULE_OUT_INDEX,
    TF_ROOM_FOR_LIBRARIES,
    ORT_ROOM_FOR_LIBRARIES,
    CONFIRM_MEMORY,
    EXPANDABLE_SEGMENTS_OFF,
    NUMBERS_ANOTHER_WAY,
    LESS_THAN_SMI_FREE,
    CHECK_BOTH_MEMORIES,
    CHECK_FILE_READ,
];

/// Whether a message prints a byte count (`(7889485824 bytes)`).
fn states_bytes(text: &str) -> bool {
    static RE: crate::GatedRegex = crate::GatedRegex::new(&["bytes"], r"\b\d+ bytes\b");
    RE.is_match(text)
}

#[cfg(test)]
mod bad_alloc_after_a_failed_read {
    use crate::explain::test_support::fix_ids;

    /// A TensorRT program that could not read its engine file, then a bare
    /// `std::bad_alloc` (fixtures/wild/3326.txt): the file first, memory as
    /// the alternative; still likely_oom. Without the read error the same
    /// lines keep the memory reading.
    #[test]
    fn the_file_comes_before_the_memory() {
        let paste = include_str!("../../../../fixtures/wild/3326.txt");
        let f = crate::decode_str(paste).remove(0);
        assert_eq!(f.category, crate::record::Category::LikelyOom);
        assert!(f.diagnosis.verdicts[0].title.contains("failed file read"));
        let fixes = fix_ids(paste);
        assert_eq!(
            fixes,
            [
                "check-file-read-before-bad-alloc",
                "check-which-memory-filled"
            ]
        );
        let bare = paste.replace("read ./yolo/engine/cuofen_fp16.engine error!\n", "");
        assert_eq!(fix_ids(&bare)[0], "check-which-memory-filled");
        for read_error in [
            "Error reading engine file",
            "could not open model.engine",
            "ERROR: failed to read weights.bin",
            "open: No such file or directory",
        ] {
            let text = format!("{read_error}\nterminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\nAborted (core dumped)\n");
            assert_eq!(
                fix_ids(&text)[0],
                "check-file-read-before-bad-alloc",
                "{read_error}"
            );
        }
    }
}
