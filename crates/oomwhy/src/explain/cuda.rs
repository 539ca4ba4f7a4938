//! CUDA runtime and driver errors: out-of-memory outside PyTorch's allocator
//! (no sizes) and illegal memory accesses.

use super::catalogue::{Cost, FixSpec};
use super::common::CHECK_GPU_HOLDERS;
use super::common::{fact, fix, on_device, torch_in_traceback, verdict, workload_fix};
use super::common::{library_headroom_fix, runtime_fix};
use super::docs::Code;
use super::platform::Platform;
use super::setting::{since, Framework, Program, Runtime, Setting, Vendor};
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};
use crate::say;
use crate::say_parts;

/// Explains `Kind::CudaRuntimeOom` findings.
pub(super) struct CudaRuntimeOom;

impl Explain for CudaRuntimeOom {
    fn headline(&self, f: &Finding) -> Said {
        // Named after whoever printed the error.
        let device = on_device(f);
        let reporter = fact(f, fact::REPORTED_BY).or_else(|| other_tool(f));
        match (reporter, device.strip_prefix(" on ")) {
            (Some(tool), Some(device)) => say_parts!(
                en: "A CUDA call ran out of GPU memory on {device} ({tool}; no sizes given)",
                zh: "{tool}在 {device} 上显存不足（报错里没有大小）",
                device = Said::same(device),
                tool = tool_call(tool)
            ),
            (Some(tool), None) => say_parts!(
                en: "A CUDA call ran out of GPU memory ({tool}; no sizes given)",
                zh: "{tool}显存不足（报错里没有大小）",
                tool = tool_call(tool)
            ),
            // PyTorch ≤ 0.4's own allocation (THC's storage or caching
            // allocator): inside PyTorch, not beside it.
            (None, Some(device)) if f.era == Some(Era::Thc) => say!(
                en: "PyTorch (≤ 0.4) ran out of GPU memory on {device} allocating a tensor (no sizes given)",
                zh: "PyTorch（≤ 0.4）在 {device} 上分配张量时显存不足（报错里没有大小）",
                device = device
            ),
            (None, None) if f.era == Some(Era::Thc) => say!(
                en: "PyTorch (≤ 0.4) ran out of GPU memory allocating a tensor (no sizes given)",
                zh: "PyTorch（≤ 0.4）分配张量时显存不足（报错里没有大小）"
            ),
            // Outside PyTorch's allocator only where PyTorch shows: a
            // renderer or an encoder prints the same error.
            (None, Some(device)) if shows_python(f) => say!(
                en: "A CUDA call ran out of GPU memory on {device} (outside PyTorch's allocator; no sizes given)",
                zh: "一次 CUDA 调用在 {device} 上显存不足（发生在 PyTorch 分配器之外；报错里没有大小）",
                device = device
            ),
            (None, None) if shows_python(f) => say!(
                en: "A CUDA call ran out of GPU memory (outside PyTorch's allocator; no sizes given)",
                zh: "一次 CUDA 调用显存不足（发生在 PyTorch 分配器之外；报错里没有大小）"
            ),
            (None, Some(device)) => say!(
                en: "A CUDA call ran out of GPU memory on {device} (no sizes given)",
                zh: "一次 CUDA 调用在 {device} 上显存不足（报错里没有大小）",
                device = device
            ),
            (None, None) => say!(
                en: "A CUDA call ran out of GPU memory (no sizes given)",
                zh: "一次 CUDA 调用显存不足（报错里没有大小）"
            ),
        }
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(runtime_oom_verdict(f))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        runtime_oom_fixes(f, out)
    }
}

/// Explains `Kind::IllegalMemoryAccess` findings.
pub(super) struct IllegalMemoryAccess;

impl Explain for IllegalMemoryAccess {
    fn headline(&self, _f: &Finding) -> Said {
        say!(
            en: "A GPU kernel accessed memory it should not (illegal memory access) — not an out-of-memory error",
            zh: "GPU kernel 访问了不该访问的内存（illegal memory access）——不是显存不足"
        )
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        // cuda-gdb stops in the kernel that faulted: nothing reported it later.
        if f.facts
            .get(fact::REPORTED_BY)
            .is_some_and(|r| r == "cuda-gdb")
        {
            return;
        }
        let detail = if shows_python(f) {
            say!(
                en: "CUDA reports kernel faults asynchronously: the error surfaces at the next call that synchronises with the GPU, not in the kernel that made the bad access. The Python frames above show where PyTorch noticed the fault, which is usually later than where it happened.",
                zh: "CUDA 异步报告 kernel 错误：错误在下一次与 GPU 同步的调用处才冒出来，而不是在做了非法访问的那个 kernel 里。上面的 Python 调用栈显示的是 PyTorch 发现错误的位置，通常晚于真正出错的位置。"
            )
        } else {
            say!(
                en: "CUDA reports kernel faults asynchronously: the error surfaces at the next call that synchronises with the GPU, not in the kernel that made the bad access. The call the message names is where the program noticed the fault, which is usually later than where it happened.",
                zh: "CUDA 异步报告 kernel 错误：错误在下一次与 GPU 同步的调用处才冒出来，而不是在做了非法访问的那个 kernel 里。报错里提到的调用是程序发现错误的位置，通常晚于真正出错的位置。"
            )
        };
        let title = if shows_python(f) {
            say!(
                en: "The traceback probably points at the wrong line",
                zh: "调用栈多半指错了行"
            )
        } else {
            say!(
                en: "The fault probably happened before the call that reports it",
                zh: "出错的位置多半在报告它的那个调用之前"
            )
        };
        out.push(verdict(Code::AsyncErrorLocation, title, detail))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        illegal_access_fixes(f, out)
    }
}

/// The tool that printed the error, when it is not PyTorch (cuDF, TensorRT,
/// darknet, ...): PyTorch's allocator and cache are then beside the point.
fn other_tool(f: &Finding) -> Option<&str> {
    // llama.cpp's ggml, ONNX Runtime and the others print CUDA's error
    // without a reporter fact; the framework the finding shows names them.
    if !f.facts.contains_key(fact::REPORTED_BY) {
        if super::setting::darknet_shows(f) {
            return Some("darknet");
        }
        match Framework::of(f) {
            Framework::Ggml => return Some("llama.cpp (ggml)"),
            Framework::OnnxRuntime => return Some("ONNX Runtime"),
            Framework::TensorFlow => return Some("TensorFlow"),
            Framework::Jax => return Some("JAX"),
            Framework::CuPy => return Some("CuPy"),
            Framework::PyTorch | Framework::Unknown => {}
        }
    }
    let tool = f.facts.get(fact::REPORTED_BY)?;
    (tool != "torch_memory_saver" && !torch_in_traceback(f)).then_some(tool.as_str())
}

/// The tool that printed the error as the subject of a sentence about its
/// CUDA call: English names the tool; Chinese says "the tool's CUDA call",
/// or the call itself when the tool is known only by the call it made.
fn tool_call(tool: &str) -> Said {
    let who = crate::i18n::reporter::said(tool);
    let zh = if crate::i18n::reporter::is_call(tool) {
        who.zh
    } else {
        format!("{} 的一次 CUDA 调用", who.zh)
    };
    Said { en: who.en, zh }
}

fn runtime_oom_verdict(f: &Finding) -> Verdict {
    if let Some(tool) = other_tool(f) {
        // ggml's VMM pool (`ggml_cuda_pool_malloc_vmm`) calls only the
        // driver API (cuMemCreate, cuMemMap, cuMemSetAccess), whose error
        // has the driver's name, not the runtime's.
        let error = if f.text.contains("pool_malloc_vmm") || f.text.contains("cuMem") {
            "CUDA_ERROR_OUT_OF_MEMORY"
        } else {
            fact(f, fact::ERROR_NAME).unwrap_or("cudaErrorMemoryAllocation")
        };
        let device = on_device(f);
        let detail = match device.strip_prefix(" on ") {
            Some(device) => say_parts!(
                en: "{tool} got CUDA's out-of-memory error ({error}) from a CUDA call on {device}. The message carries no sizes, so it does not tell whether the work itself is too large for the card or other processes hold the memory.",
                zh: "{tool}在 {device} 上得到了 CUDA 的显存不足错误（{error}）。报错里没有大小，所以看不出是任务本身对这块卡来说太大，还是其他进程占着显存。",
                tool = tool_call(tool),
                error = Said::same(error),
                device = Said::same(device)
            ),
            None => say_parts!(
                en: "{tool} got CUDA's out-of-memory error ({error}) from a CUDA call. The message carries no sizes, so it does not tell whether the work itself is too large for the card or other processes hold the memory.",
                zh: "{tool}得到了 CUDA 的显存不足错误（{error}）。报错里没有大小，所以看不出是任务本身对这块卡来说太大，还是其他进程占着显存。",
                tool = tool_call(tool),
                error = Said::same(error)
            ),
        };
        return verdict(
            Code::AllocationFailed,
            super::common::allocation_failed_title(f),
            detail,
        );
    }
    match f.era {
        Some(Era::Driver) if Setting::of(f).program.is_native() => verdict(
            Code::OutsideAllocatorOom,
            say!(
                en: "A CUDA driver call ran out of memory",
                zh: "一次 CUDA 驱动调用显存不足"
            ),
            say!(
                en: "The program asked the CUDA driver for GPU memory (an allocation, or the context every program on a GPU needs) and the card had no room left for it, counting what other programs hold. The message carries no sizes.",
                zh: "程序向 CUDA 驱动申请显存（一次分配，或每个用 GPU 的程序都需要的上下文），而算上其他程序占用的部分，这块卡已经没有空间了。报错里没有大小。"
            ),
        ),
        Some(Era::Driver) => verdict(
            Code::OutsideAllocatorOom,
            say!(
                en: "A CUDA driver call ran out of memory",
                zh: "一次 CUDA 驱动调用显存不足"
            ),
            say!(
                en: "`CUDA driver error: out of memory` comes from the CUDA driver API, which PyTorch uses for expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) and for some other features. The message carries no sizes. On WSL2 and Jetson this error appears with expandable segments even when memory is free.",
                zh: "`CUDA driver error: out of memory` 来自 CUDA 驱动 API，PyTorch 的 expandable segments（PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True）和其他一些功能用的就是它。报错里没有大小。在 WSL2 和 Jetson 上，开着 expandable segments 时即使有空闲显存也会出现这个错误。"
            ),
        ),
        Some(Era::Thc) if thc_storage(f) => verdict(
            Code::AllocationFailed,
            say!(
                en: "A tensor's storage did not fit in GPU memory (PyTorch ≤0.4)",
                zh: "一个张量的存储放不进显存（PyTorch ≤0.4）"
            ),
            say!(
                en: "`cuda runtime error (2) : out of memory` at THCStorage.cu is old PyTorch (0.4 and older) failing to allocate a tensor's storage (error 2 is cudaErrorMemoryAllocation): the tensors this step needs did not fit beside what the card already held. It carries no sizes, so oomwhy cannot say whether the work is too large or other processes fill the card.",
                zh: "在 THCStorage.cu 报出的 `cuda runtime error (2) : out of memory` 是旧版 PyTorch（0.4 及更早）给张量分配存储失败（错误 2 就是 cudaErrorMemoryAllocation）：这一步需要的张量放不进这块卡剩下的显存。报错里没有大小，所以 oomwhy 说不出是任务本身太大，还是其他进程占满了这块卡。"
            ),
        ),
        Some(Era::Thc) => verdict(
            Code::OutsideAllocatorOom,
            say!(
                en: "cudaMalloc failed in an old PyTorch (≤0.4)",
                zh: "旧版 PyTorch（≤0.4）里 cudaMalloc 失败"
            ),
            say!(
                en: "`cuda runtime error (2) : out of memory` is how PyTorch 0.4 and older reported any failed CUDA allocation (error 2 is cudaErrorMemoryAllocation). It carries no sizes, so oomwhy cannot say what filled the card.",
                zh: "`cuda runtime error (2) : out of memory` 是 PyTorch 0.4 及更早版本报告任何一次 CUDA 分配失败的方式（错误 2 就是 cudaErrorMemoryAllocation）。报错里没有大小，所以 oomwhy 说不出是什么占满了这块卡。"
            ),
        ),
        _ if !pytorch_shows(f) => verdict(
            Code::AllocationFailed,
            super::common::allocation_failed_title(f),
            say!(
                en: "A CUDA call failed with CUDA's out-of-memory error (cudaErrorMemoryAllocation, 2){device}. The message carries no sizes, so it does not tell whether the work itself is too large for the card or other processes hold the memory.",
                zh: "一次 CUDA 调用因 CUDA 的显存不足错误（cudaErrorMemoryAllocation，2）失败{device}。报错里没有大小，所以看不出是任务本身对这块卡来说太大，还是其他进程占着显存。",
                device = on_device(f)
            ),
        ),
        _ => verdict(
            Code::OutsideAllocatorOom,
            say!(
                en: "A CUDA call outside PyTorch's allocator ran out of memory",
                zh: "PyTorch 分配器之外的一次 CUDA 调用显存不足"
            ),
            say!(
                en: "`CUDA error: out of memory` (unlike `CUDA out of memory. Tried to allocate ...`) is raised by a CUDA runtime call that does not go through PyTorch's caching allocator: creating the CUDA context on a GPU that is already full, cuBLAS/cuDNN handles and workspaces, NCCL buffers, or another library in the process. Memory that PyTorch caches is not available to these calls.",
                zh: "`CUDA error: out of memory`（不同于 `CUDA out of memory. Tried to allocate ...`）是由一次不经过 PyTorch 缓存分配器的 CUDA 运行时调用报出的：在已经占满的 GPU 上创建 CUDA 上下文、cuBLAS/cuDNN 的句柄和工作区、NCCL 缓冲区，或进程里的其他库。PyTorch 缓存着的显存这些调用用不上。"
            ),
        ),
    }
}

fn runtime_oom_fixes(f: &Finding, out: &mut Vec<Fix>) {
    // A program that names itself (FFmpeg's NVENC, darknet) is fixed
    // through its own settings.
    let own = super::generic::program_fixes(f);
    if !own.is_empty() {
        out.extend(own);
        return;
    }
    // Expandable segments are PyTorch's: offered only where PyTorch shows
    // (FFmpeg, Blender and other driver-API users print the same error).
    if f.era == Some(Era::Driver) && Framework::of(f) == Framework::PyTorch {
        out.push(fix(
            &EXPANDABLE_SEGMENTS_OFF_IF_SET,
            say!(
                en: "Remove expandable_segments:True from PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF: the driver-API mapping it uses fails on WSL2 and Jetson even with free memory.",
                zh: "从 PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF 里去掉 expandable_segments:True：它所用的驱动 API 映射在 WSL2 和 Jetson 上即使有空闲显存也会失败。"
            ),
        ));
    }
    // A tensor's storage in old PyTorch: the work itself is as likely as
    // another process, and no library's workspace is involved.
    let storage = f.era == Some(Era::Thc) && thc_storage(f);
    // The phase the traceback shows decides what the tensors were: an
    // evaluation that keeps autograd's graph, or the parameters being placed.
    if storage && f.phase.name == "evaluation" {
        out.push(fix(
            &super::torch::EVAL_WITHOUT_AUTOGRAD,
            say!(
                en: "Run evaluation under `with torch.no_grad():` (PyTorch ≥ 0.4; before it, wrap the inputs as Variable(x, volatile=True)) and call model.eval(): without it every activation is kept for a backward pass that never comes. Sum the loss as a number (loss.item(), loss.data[0] before 0.4), not the tensor, which keeps each batch's graph alive.",
                zh: "评估放在 `with torch.no_grad():` 里运行（PyTorch ≥ 0.4；更早的版本把输入包成 Variable(x, volatile=True)），并调用 model.eval()：不这样做，每个激活值都会为一个永远不会到来的反向传播留着。累加 loss 时用数值（loss.item()，0.4 之前用 loss.data[0]），不要累加张量本身，否则每个 batch 的计算图都会一直留着。"
            ),
        ));
    }
    if storage && f.phase.name == "model_load" {
        out.push(super::common::loading_fix_for(f));
    } else if storage {
        out.push(fix(
            &REDUCE_WORKLOAD,
            say!(
                en: "A smaller batch, sequence length, input size or model: the tensors of the failing step did not fit.",
                zh: "用更小的 batch、序列长度、输入尺寸或模型：出错那一步的张量放不下了。"
            ),
        ));
    }
    let vendor = Vendor::of(f);
    out.push(fix(
        &CHECK_GPU_HOLDERS,
        say!(
            en: "Run {smi}: if other processes fill the card, even creating the GPU context (a few hundred MiB) fails. Stop them or choose another GPU with {visible}.",
            zh: "运行 {smi}：如果其他进程占满了这块卡，连创建 GPU 上下文（几百 MiB）都会失败。结束它们，或用 {visible} 换一块 GPU。",
            smi = vendor.smi(),
            visible = vendor.visible_devices()
        ),
    ));
    // A native program (a renderer, a miner, a model runner in C++) has no
    // PyTorch cache to make room from: its own job is what to shrink.
    match Setting::of(f).program {
        Program::NoModel => {
            out.push(fix(
                &SMALLER_JOB,
                say!(
                    en: "Give the program less to hold on the GPU at once: in a renderer a simpler scene, lower resolution or fewer and smaller textures; in an encoder fewer streams in parallel. Or run it on a GPU with more memory.",
                    zh: "让程序一次在 GPU 上放的东西少一些：渲染器里简化场景、降低分辨率、减少或缩小贴图；编码器里少并行几路。或者换一块显存更大的 GPU。"
                ),
            ));
            return;
        }
        Program::NativeModel => {
            out.push(workload_fix());
            return;
        }
        Program::Unknown => {}
    }
    if other_tool(f).is_some() || !pytorch_shows(f) || super::setting::python_without_torch(f) {
        out.push(super::common::workload_fix_for(f));
        return;
    }
    if storage {
        return;
    }
    // Emptying the cache needs torch.cuda.empty_cache (PyTorch 0.3).
    if !matches!(
        super::setting::available(f, since::EMPTY_CACHE),
        super::setting::Availability::Upgrade(_)
    ) {
        out.push(library_headroom_fix(f));
    }
    match Runtime::of(f) {
        // An engine's own settings bound its memory, not a batch size.
        Some(runtime) => out.push(runtime_fix(runtime)),
        None => out.push(fix(
            &REDUCE_WORKLOAD,
            say!(
                en: "A smaller batch, sequence length or model leaves more room for these allocations.",
                zh: "更小的 batch、序列长度或模型能给这些分配留出更多空间。"
            ),
        )),
    }
}

/// Whether PyTorch's reading applies: not where the message names the
/// failing call as its own CUDA wrapper prints it (CNTK's `CUDA failure 2:
/// out of memory ; GPU=0 ; ... expr=cudaMalloc(...)`: PyTorch never prints
/// `expr=`), nor where it is another program's `CUDA Error: out of memory`
/// (capital E: darknet's `check_error` and other C/C++ tools; PyTorch
/// prints `CUDA error:`) with no Python in sight, unless PyTorch shows in
/// the frames or classes. PyTorch's own bare form keeps PyTorch's reading.
fn pytorch_shows(f: &Finding) -> bool {
    if Framework::of(f) == Framework::PyTorch || torch_in_traceback(f) {
        return true;
    }
    let other_form = f.text.contains("CUDA Error: ")
        && !f.text.contains("CUDA error: ")
        && f.traceback.is_none()
        && f.exception.is_none();
    !f.text.contains("; expr=") && !other_form
}

/// The message came through Python: a traceback, an exception class, or
/// PyTorch's own wording.
fn shows_python(f: &Finding) -> bool {
    f.traceback.is_some()
        || f.exception.is_some()
        || Framework::of(f) == Framework::PyTorch
        || f.text.contains("CUDA_LAUNCH_BLOCKING")
}

fn illegal_access_fixes(f: &Finding, out: &mut Vec<Fix>) {
    // An end user's renderer: its scene, driver and card, not CUDA tools.
    let renderer = super::generic::renderer_crash_fixes(f);
    if !renderer.is_empty() {
        out.extend(renderer);
        return;
    }
    // A program with no Python in sight has no traceback and no train.py.
    let python = shows_python(f);
    // cuda-gdb already stopped in the kernel that faulted.
    let debugger = f
        .facts
        .get(fact::REPORTED_BY)
        .is_some_and(|r| r == "cuda-gdb");
    if !debugger {
        out.push(fix(
        &FIND_REAL_KERNEL,
        if python {
            say!(
                en: "Re-run with CUDA_LAUNCH_BLOCKING=1 so each kernel is checked as it finishes; the traceback then points at the real call. Slower, so reproduce on a small input.",
                zh: "设 CUDA_LAUNCH_BLOCKING=1 重跑，让每个 kernel 在结束时就被检查；这样调用栈会指向真正出错的调用。会变慢，所以用小输入复现。"
            )
        } else {
            say!(
                en: "Re-run with CUDA_LAUNCH_BLOCKING=1 so each kernel is checked as it finishes; the error is then reported by the launch that failed. Slower, so reproduce on a small input.",
                zh: "设 CUDA_LAUNCH_BLOCKING=1 重跑，让每个 kernel 在结束时就被检查；这样报错的就是真正出错的那次 kernel 启动。会变慢，所以用小输入复现。"
            )
        },
    ));
    }
    out.push(fix(
        &COMPUTE_SANITIZER,
        if python {
            say!(
                en: "compute-sanitizer --tool memcheck python train.py names the kernel and the out-of-bounds address (very slow: use a tiny batch).",
                zh: "compute-sanitizer --tool memcheck python train.py 会指出是哪个 kernel、越界的是哪个地址（非常慢：用很小的 batch）。"
            )
        } else {
            say!(
                en: "compute-sanitizer --tool memcheck <program> <arguments> names the kernel and the out-of-bounds address (very slow: use a small input).",
                zh: "compute-sanitizer --tool memcheck <程序> <参数> 会指出是哪个 kernel、越界的是哪个地址（非常慢：用很小的输入）。"
            )
        },
    ));
    // The usual causes are PyTorch's (embeddings, losses, its extensions):
    // not for a crash in another framework (ONNX Runtime's CUDA provider)
    // or a program with no Python in sight (a renderer, a C++ tool).
    if Framework::of(f) == Framework::PyTorch
        || (Framework::of(f) == Framework::Unknown && shows_python(f))
    {
        out.push(fix(
            &USUAL_CAUSES,
            say!(
                en: "An index out of range (embedding ids ≥ num_embeddings, labels ≥ num_classes, gather/scatter indices): run the same step on the CPU for a clear IndexError. Custom CUDA/Triton kernels and extensions (flash-attn, bitsandbytes, apex) built for another PyTorch/CUDA version. Tensors on the wrong device or non-contiguous inputs passed to custom ops.",
                zh: "索引越界（embedding id ≥ num_embeddings、标签 ≥ num_classes、gather/scatter 的索引）：在 CPU 上跑同一步，会得到清楚的 IndexError。为其他 PyTorch/CUDA 版本编译的自定义 CUDA/Triton kernel 和扩展（flash-attn、bitsandbytes、apex）。放错设备的张量，或传给自定义算子的非连续输入。"
            ),
        ));
    }
    // Windows has no dmesg: its driver resets are in the Event Viewer.
    out.push(fix(
        &RULE_OUT_HARDWARE,
        if Platform::of(f) == Platform::Windows {
            say!(
                en: "If it happens at random places, look in Event Viewer (Windows Logs > System) for nvlddmkm events or \"Display driver stopped responding\" (Event ID 4101) at that time, update the driver, and run the GPU alone.",
                zh: "如果出错的位置不固定，在事件查看器（Windows 日志 > 系统）里看那个时刻有没有 nvlddmkm 事件或“显示驱动程序已停止响应”（事件 ID 4101），更新驱动，并让这块 GPU 单独运行。"
            )
        } else {
            say!(
                en: "If it happens at random places, check the kernel log (`sudo dmesg | grep -i xid`) for NVIDIA Xid errors and run the GPU alone.",
                zh: "如果出错的位置不固定，查看内核日志（`sudo dmesg | grep -i xid`）里有没有 NVIDIA Xid 错误，并让这块 GPU 单独运行。"
            )
        },
    ));
}

/// expandable_segments exists from PyTorch 2.1.
const EXPANDABLE_SEGMENTS_OFF_IF_SET: FixSpec = FixSpec::new(
    "expandable-segments-off-if-set",
    "Turn off expandable segments if you set them",
    "如果设置了 expandable segments，先关掉",
)
.frameworks(&[Framework::PyTorch])
.torch_since(since::EXPANDABLE_SEGMENTS)
.sources(&["PyTorch documentation: CUDA semantics, Memory management (expandable_segments)"]);

/// Names the vendor's own tool and device variable.
/// For a program that runs no model: its own job, not a batch size.
const SMALLER_JOB: FixSpec = FixSpec::new(
    "smaller-gpu-job",
    "Give the program less to hold on the GPU",
    "让程序少占一些显存",
)
.cost(Cost::Quality);

/// Whether an old PyTorch's THC error names its tensor-storage allocation
/// (`THCStorage.cu`, `THCStorage.cpp`), PyTorch's own allocation of a
/// tensor rather than a library's workspace.
fn thc_storage(f: &Finding) -> bool {
    f.text.contains("THCStorage.c")
}

const REDUCE_WORKLOAD: FixSpec =
    FixSpec::new("reduce-workload", "Reduce the workload", "减小工作负载")
        .models_only()
        .cost(Cost::Quality);

/// CUDA_LAUNCH_BLOCKING is NVIDIA's CUDA runtime variable.
const FIND_REAL_KERNEL: FixSpec = FixSpec::new(
    "find-real-failing-kernel",
    "Find the kernel that really failed",
    "找出真正出错的 kernel",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look)
.sources(&["CUDA Programming Guide: CUDA_LAUNCH_BLOCKING"]);

/// compute-sanitizer ships with NVIDIA's CUDA toolkit.
const COMPUTE_SANITIZER: FixSpec = FixSpec::new(
    "run-compute-sanitizer",
    "Run under compute-sanitizer",
    "用 compute-sanitizer 运行",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look)
.sources(&["NVIDIA Compute Sanitizer documentation"]);

/// PyTorch's embeddings, losses and extensions.
const USUAL_CAUSES: FixSpec = FixSpec::new(
    "check-illegal-access-usual-causes",
    "Check the usual causes",
    "排查常见原因",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Look);

/// NVIDIA Xid errors in the kernel log.
const RULE_OUT_HARDWARE: FixSpec = FixSpec::new(
    "rule-out-gpu-hardware",
    "Rule out the hardware",
    "排除硬件问题",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    EXPANDABLE_SEGMENTS_OFF_IF_SET,
    REDUCE_WORKLOAD,
    SMALLER_JOB,
    FIND_REAL_KERNEL,
    COMPUTE_SANITIZER,
    USUAL_CAUSES,
    RULE_OUT_HARDWARE,
];

#[cfg(test)]
mod tests {
    fn fixes_and_code(text: &str) -> (Vec<String>, String, String) {
        let f = crate::decode_str(text)
            .into_iter()
            .find(|f| f.kind.slug() == "cuda_runtime_oom")
            .unwrap();
        let ids = f.diagnosis.fixes.iter().map(|x| x.id.clone()).collect();
        let said = f
            .diagnosis
            .fixes
            .iter()
            .map(|x| x.how.clone())
            .collect::<String>();
        (ids, f.explain.join(" "), said)
    }

    /// An old PyTorch's storage OOM whose traceback is in the validation
    /// loop (fixtures/wild/2546.txt, memory jumping during validation):
    /// autograd kept during evaluation is the first thing to rule out, in
    /// that release's API.
    #[test]
    fn a_thc_oom_in_evaluation_leads_with_no_grad() {
        let paste = include_str!("../../../../fixtures/wild/2546.txt");
        let (ids, _, said) = fixes_and_code(paste);
        assert_eq!(ids[0], "eval-without-autograd", "{ids:?}");
        assert!(said.contains("torch.no_grad()"), "{said}");
        assert!(said.contains("volatile=True"), "{said}");
    }

    /// Old PyTorch's THC error at THCStorage.cu is a tensor's storage
    /// (fixtures/cuda_thc_runtime_error_2.log): the workload first, no
    /// outside-the-allocator framing. A THC error elsewhere
    /// (fixtures/wild/113.txt, THCTensorRandom.cu) keeps it.
    #[test]
    fn a_thc_storage_error_is_a_tensor_allocation() {
        let storage = include_str!("../../../../fixtures/cuda_thc_runtime_error_2.log");
        let (ids, codes, said) = fixes_and_code(storage);
        assert_eq!(ids[0], "reduce-workload", "{ids:?}");
        assert!(!codes.contains("outside_allocator_oom"), "{codes}");
        assert!(!said.contains("cuBLAS"), "{said}");
        let other = include_str!("../../../../fixtures/wild/113.txt");
        let (ids, codes, _) = fixes_and_code(other);
        assert!(codes.contains("outside_allocator_oom"), "{codes}");
        assert!(ids.contains(&"empty-torch-cache-before-library-call".to_string()));
    }

    /// torch.cuda.empty_cache exists from PyTorch 0.3.0: a conda build path
    /// naming 0.1.12 (the source tree of a real paste, `pytorch-0.1.12/`)
    /// gets no fix that calls it; the same path naming 0.3.1 does.
    #[test]
    fn empty_cache_is_offered_from_0_3() {
        let at = |release: &str| {
            // A real paste's line with its location moved from THCStorage.cu
            // to THCTensorRandom.cu (fixtures/wild/113.txt), a non-storage
            // allocation; the conda build directory is joined from pieces.
            format!(
                "RuntimeError: cuda runtime error (2) : out of memory at /opt/conda/conda-bld/pytorch_1501969512886/{}/pytorch-{release}/torch/lib/THC/THCTensorRandom.cu:25",
                "work"
            )
        };
        let (old, _, said) = fixes_and_code(&at("0.1.12"));
        assert!(!said.contains("empty_cache"), "{said}");
        assert!(!old.contains(&"empty-torch-cache-before-library-call".to_string()));
        let (new, _, said) = fixes_and_code(&at("0.3.1"));
        assert!(new.contains(&"empty-torch-cache-before-library-call".to_string()));
        assert!(said.contains("empty_cache"), "{said}");
    }
}
