//! GPU crashes that are not out-of-memory errors: device-side asserts,
//! misaligned addresses, launch failures and missing kernel images.

use super::catalogue::{Cost, FixSpec};
use super::common::{fact, fix, verdict};
use super::docs::Code;
use super::platform::{recurs_at_random, Platform};
use super::setting::{Framework, Setting, Vendor};
use super::thresholds::KERNEL_CRASH_LONG_RUN_MIN;
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};
use crate::say;
use crate::say_parts;

/// Explains `Kind::DeviceSideAssert` findings.
pub(super) struct DeviceSideAssert;

impl Explain for DeviceSideAssert {
    fn headline(&self, f: &Finding) -> Said {
        match (fact(f, fact::ASSERTION), fact(f, fact::KERNEL)) {
            (Some(a), Some(k)) => say!(
                en: "A GPU kernel's assertion failed (`{a}` in {k}): a bad index or value, not an out-of-memory error",
                zh: "GPU kernel 的断言失败（{k} 中的 `{a}`）：索引或取值有误，不是显存不足",
                a = a,
                k = k
            ),
            _ => say!(
                en: "A GPU kernel's assertion failed (device-side assert): usually an index out of range, not an out-of-memory error",
                zh: "GPU kernel 的断言失败（device-side assert）：通常是索引越界，不是显存不足"
            ),
        }
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(device_assert_verdict(f))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        device_assert_fixes(f, out)
    }
}

/// Explains `Kind::MisalignedAddress` findings.
pub(super) struct MisalignedAddress;

impl Explain for MisalignedAddress {
    fn headline(&self, _f: &Finding) -> Said {
        say!(
            en: "A GPU kernel made a misaligned memory access: a kernel bug, not an out-of-memory error",
            zh: "GPU kernel 做了未对齐的内存访问：是 kernel 的 bug，不是显存不足"
        )
    }
    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict(
            Code::KernelFault,
            say!(
                en: "A kernel bug: a misaligned memory access",
                zh: "kernel 的 bug：未对齐的内存访问"
            ),
            say!(
                en: "A kernel read or wrote memory at an address not aligned to the size of the access (cudaErrorMisalignedAddress, 716). This is a bug in a kernel, most often a custom CUDA/Triton kernel or an extension (flash-attn, xformers, bitsandbytes, apex) built for another PyTorch/CUDA version, or a tensor with an unusual storage offset or stride passed to one. It is not an out-of-memory error. CUDA reports it asynchronously, so the traceback may point at a later line.",
                zh: "某个 kernel 读写内存时，地址没有按访问的大小对齐（cudaErrorMisalignedAddress，716）。这是 kernel 的 bug，最常见的是自定义的 CUDA/Triton kernel，或为其他 PyTorch/CUDA 版本编译的扩展（flash-attn、xformers、bitsandbytes、apex），也可能是传给它们的张量的 storage offset 或 stride 不寻常。这不是显存不足。CUDA 异步报告这个错误，所以调用栈可能指向更靠后的行。"
            ),
        ))
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix(
            &FIND_FAILED_KERNEL,
            say!(
                en: "Rerun with CUDA_LAUNCH_BLOCKING=1 so the traceback points at the real call, or run `compute-sanitizer --tool memcheck python train.py` on a tiny input to name the kernel.",
                zh: "设 CUDA_LAUNCH_BLOCKING=1 重跑，让调用栈指向真正出错的调用；或者用很小的输入运行 `compute-sanitizer --tool memcheck python train.py`，找出是哪个 kernel。"
            ),
        ));
        out.push(fix(
            &REBUILD_EXTENSION,
            say!(
                en: "Reinstall custom kernels (flash-attn, xformers, bitsandbytes, apex) built for your exact PyTorch and CUDA versions; to test, switch to PyTorch's own kernels (e.g. attn_implementation=\"eager\" or \"sdpa\" in Hugging Face models).",
                zh: "重装为你所用的 PyTorch 和 CUDA 版本编译的自定义 kernel（flash-attn、xformers、bitsandbytes、apex）；排查时换成 PyTorch 自带的 kernel（如 Hugging Face 模型里设 attn_implementation=\"eager\" 或 \"sdpa\"）。"
            ),
        ));
        out.push(fix(
            &CONTIGUOUS_CUSTOM_OPS,
            say!(
                en: "Call .contiguous() on inputs of custom kernels; views with odd storage offsets (slices, narrow) are a common source of misaligned pointers.",
                zh: "对传给自定义 kernel 的输入调用 .contiguous()；storage offset 不寻常的视图（切片、narrow）是未对齐指针的常见来源。"
            ),
        ));
    }
}

/// Explains `Kind::LaunchFailure` findings.
pub(super) struct LaunchFailure;

impl Explain for LaunchFailure {
    fn headline(&self, f: &Finding) -> Said {
        if f.era == Some(Era::CublasExecution) {
            return match fact(f, "call") {
                Some(call) => say!(
                    en: "cuBLAS could not run its GPU kernel in {call} (CUBLAS_STATUS_EXECUTION_FAILED): not an out-of-memory error",
                    zh: "cuBLAS 在 {call} 里没能运行它的 GPU kernel（CUBLAS_STATUS_EXECUTION_FAILED）：不是显存不足",
                    call = call
                ),
                None => say!(
                    en: "cuBLAS could not run its GPU kernel (CUBLAS_STATUS_EXECUTION_FAILED): not an out-of-memory error",
                    zh: "cuBLAS 没能运行它的 GPU kernel（CUBLAS_STATUS_EXECUTION_FAILED）：不是显存不足"
                ),
            };
        }
        say!(
            en: "A GPU kernel crashed while running (unspecified launch failure): not an out-of-memory error",
            zh: "GPU kernel 运行中崩溃（“unspecified launch failure”）：不是显存不足"
        )
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        if f.era == Some(Era::CublasExecution) {
            out.push(verdict(
                Code::KernelFault,
                say!(
                    en: "A cuBLAS kernel failed to launch or run",
                    zh: "cuBLAS 的 kernel 没能启动或运行"
                ),
                say!(
                    en: "CUBLAS_STATUS_EXECUTION_FAILED is cuBLAS's \"the GPU program failed to execute\", most often a kernel that could not be launched. In PyTorch it usually comes from one of three things: an earlier asynchronous CUDA error that cuBLAS is the first to notice (an out-of-range index in an embedding or a loss, which CUDA_LAUNCH_BLOCKING=1 then shows as a device-side assert); a PyTorch/CUDA build that does not support this GPU (a CUDA 10 build on an RTX 30-series card fails like this); or inputs the call cannot take (non-contiguous or enormous matrices). It is not an out-of-memory error.",
                    zh: "CUBLAS_STATUS_EXECUTION_FAILED 是 cuBLAS 的“GPU 程序执行失败”，多数是 kernel 没能启动。在 PyTorch 里它通常有三种来源：cuBLAS 只是第一个发现了之前异步发生的 CUDA 错误（embedding 或 loss 里越界的索引，设 CUDA_LAUNCH_BLOCKING=1 后会显示为 device-side assert）；这个 PyTorch/CUDA 版本不支持这块 GPU（在 RTX 30 系列上用 CUDA 10 的版本就会这样失败）；或者这次调用接受不了输入（不连续或极大的矩阵）。这不是显存不足。"
                ),
            ));
            return;
        }
        if let Some(step) = ran_long(f) {
            let detail = if on_windows(f) {
                say!(
                    en: "The same kernels ran without fault up to progress counter {step}, so on Windows the display watchdog (TDR resets the GPU when one kernel runs longer than about 2 seconds, or when the driver hangs) is likelier than a kernel bug, which would fail every time from the start; then the driver or the hardware. A data-dependent out-of-bounds access remains possible.",
                    zh: "同样的 kernel 一直无故障地跑到了进度计数 {step}，所以在 Windows 上更可能是显示看门狗（某个 kernel 运行超过约 2 秒或驱动卡住时，TDR 会重置 GPU），而不是 kernel 的 bug——那样的 bug 从一开始每次都会失败；其次是驱动或硬件。由数据触发的越界访问也仍有可能。",
                    step = step
                )
            } else {
                say!(
                    en: "The same kernels ran without fault up to progress counter {step}, so a driver or hardware fault (an NVIDIA Xid in the kernel log, such as 13, 31, 43 or 79) or the display watchdog is likelier than a kernel bug, which would fail every time from the start. A data-dependent out-of-bounds access remains possible.",
                    zh: "同样的 kernel 一直无故障地跑到了进度计数 {step}，所以更可能是驱动或硬件故障（内核日志里的 NVIDIA Xid，如 13、31、43 或 79）或者显示看门狗，而不是 kernel 的 bug——那样的 bug 从一开始每次都会失败。由数据触发的越界访问也仍有可能。",
                    step = step
                )
            };
            let title = if on_windows(f) {
                say!(
                    en: "It crashed after a long run: likelier Windows' display watchdog than a kernel bug",
                    zh: "跑了很久之后才崩溃：更可能是 Windows 的显示看门狗，而不是 kernel 的 bug"
                )
            } else {
                say!(
                    en: "It crashed after a long run: likelier the driver or the GPU than a kernel bug",
                    zh: "跑了很久之后才崩溃：更可能是驱动或 GPU 的问题，而不是 kernel 的 bug"
                )
            };
            out.push(verdict(Code::KernelFault, title, detail));
        } else if recurs_at_random(f) {
            let (title, detail) = if on_windows(f) {
                (
                    say!(
                        en: "It fails at random: likelier Windows' display watchdog than a kernel bug",
                        zh: "它随机失败：更可能是 Windows 的显示看门狗，而不是 kernel 的 bug"
                    ),
                    say!(
                        en: "A kernel bug fails at the same place every time; a crash that comes back at random points (or leaves the GPU unusable until a reboot) on a Windows GPU that also drives the display is most often WDDM's TDR resetting the GPU when one kernel runs longer than about 2 seconds, then the driver, power or heat.",
                        zh: "kernel 的 bug 每次都在同一个地方失败；在同时驱动显示器的 Windows GPU 上，随机位置反复出现的崩溃（或崩溃后 GPU 到重启前都不能用）最常见的是 WDDM 的 TDR 在某个 kernel 运行超过约 2 秒时重置了 GPU，其次是驱动、供电或温度。"
                    ),
                )
            } else {
                (
                    say!(
                        en: "It fails at random: likelier the driver or the GPU than a kernel bug",
                        zh: "它随机失败：更可能是驱动或 GPU 的问题，而不是 kernel 的 bug"
                    ),
                    say!(
                        en: "A kernel bug fails at the same place every time; a crash that comes back at random points in a long run, or that leaves the GPU \"busy or unavailable\" until a reboot, points at the driver or the hardware (power, heat, the PCIe link): the kernel log then shows an NVIDIA Xid such as 13, 31, 43, 79 or 109.",
                        zh: "kernel 的 bug 每次都在同一个地方失败；长时间运行中在随机位置反复出现的崩溃，或崩溃后 GPU 到重启前都是 \"busy or unavailable\"，指向驱动或硬件（供电、温度、PCIe 链路）：这时内核日志里会有 NVIDIA Xid，如 13、31、43、79 或 109。"
                    ),
                )
            };
            out.push(verdict(Code::KernelFault, title, detail));
        }
        out.push(verdict(
            Code::KernelFault,
            say!(
                en: "A kernel crashed while running",
                zh: "kernel 在运行中崩溃了"
            ),
            say!(
                en: "`unspecified launch failure` (cudaErrorLaunchFailure, 719; 4 before CUDA 10.1) means a kernel died while executing: an out-of-bounds access in a kernel without bounds checks, a kernel killed by the display watchdog (Windows TDR, or a GPU that also drives a monitor) because it ran too long, or a driver/hardware fault (the kernel log then shows an NVIDIA Xid such as 13, 31 or 43). It is not an out-of-memory error, and the CUDA context is unusable afterwards.",
                zh: "`unspecified launch failure`（cudaErrorLaunchFailure，719；CUDA 10.1 之前是 4）表示某个 kernel 在执行中死掉了：没有边界检查的 kernel 越界访问；kernel 运行太久，被显示看门狗（Windows TDR，或同时接着显示器的 GPU）杀掉；或者驱动/硬件故障（这时内核日志里会有 NVIDIA Xid，如 13、31 或 43）。这不是显存不足，而且之后 CUDA 上下文就不能用了。"
            ),
        ))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        // compute-sanitizer ships from CUDA 11; the THC era's toolkits
        // (CUDA 10 and older) have cuda-memcheck.
        let find_kernel = if before_cuda_11(f) {
            fix(
                &FIND_FAILED_KERNEL,
                say!(
                    en: "Rerun with CUDA_LAUNCH_BLOCKING=1, or under `cuda-memcheck` on a tiny input.",
                    zh: "设 CUDA_LAUNCH_BLOCKING=1 重跑，或者用很小的输入在 `cuda-memcheck` 下运行。"
                ),
            )
        } else {
            fix(
                &FIND_FAILED_KERNEL,
                say!(
                    en: "Rerun with CUDA_LAUNCH_BLOCKING=1, or under `compute-sanitizer --tool memcheck` on a tiny input.",
                    zh: "设 CUDA_LAUNCH_BLOCKING=1 重跑，或者用很小的输入在 `compute-sanitizer --tool memcheck` 下运行。"
                ),
            )
        };
        // After a long run, or a crash that comes back at random, the
        // driver's log comes before a rerun that would take as long to
        // reach the crash again.
        let long = ran_long(f).is_some() || recurs_at_random(f);
        let watchdog = fix(
            &DISPLAY_WATCHDOG,
            say!(
                en: "On a GPU that also drives a monitor (and on Windows, WDDM's TDR), kernels running longer than about 2 seconds are killed: use a GPU without a display, smaller batches per kernel, or raise TdrDelay on Windows.",
                zh: "在同时接着显示器的 GPU 上（以及 Windows 上 WDDM 的 TDR），运行超过约 2 秒的 kernel 会被杀掉：换一块不接显示器的 GPU、让每个 kernel 处理更小的 batch，或在 Windows 上调大 TdrDelay。"
            ),
        );
        // Windows has no dmesg: its driver resets are in the Event Viewer,
        // and after a long run its watchdog comes first.
        let windows = on_windows(f);
        let kernel_log = if windows {
            fix(
                &WINDOWS_EVENT_LOG,
                say!(
                    en: "In Event Viewer (Windows Logs > System), an nvlddmkm event or \"Display driver stopped responding and has successfully recovered\" (Event ID 4101) at the time of the crash means the driver or TDR reset the GPU; update the driver if it recurs.",
                    zh: "在事件查看器（Windows 日志 > 系统）里，崩溃时刻的 nvlddmkm 事件或“显示驱动程序已停止响应，并且已成功恢复”（事件 ID 4101）说明是驱动或 TDR 重置了 GPU；反复出现就更新驱动。"
                ),
            )
        } else {
            fix(
                &DRIVER_KERNEL_LOG,
                say!(
                    en: "`sudo dmesg -T | grep -i xid` shows NVIDIA Xid events at the time of the crash; oomwhy explains them when given that log. If it recurs, update the driver and check power, cooling and the PCIe link.",
                    zh: "`sudo dmesg -T | grep -i xid` 会显示崩溃时的 NVIDIA Xid 事件；把这段日志交给 oomwhy，它会解释这些事件。反复出现就更新驱动，并检查供电、散热和 PCIe 链路。"
                ),
            )
        };
        if long && windows {
            out.push(watchdog.clone());
        }
        if long {
            out.push(kernel_log.clone());
        }
        out.push(find_kernel);
        if f.era == Some(Era::CublasExecution) {
            out.push(fix(
                &BUILD_SUPPORTS_GPU,
                say!(
                    en: "Compare torch.version.cuda and torch.cuda.get_arch_list() with torch.cuda.get_device_capability(): a GPU newer than the build's CUDA (e.g. an RTX 30-series card with CUDA 10.x) needs a PyTorch built for a newer CUDA.",
                    zh: "把 torch.version.cuda 和 torch.cuda.get_arch_list() 与 torch.cuda.get_device_capability() 对比：比这个版本所用 CUDA 更新的 GPU（如用 CUDA 10.x 的 RTX 30 系列）需要换成为更新的 CUDA 编译的 PyTorch。"
                ),
            ));
            out.push(fix(
                &INDICES_ON_CPU,
                say!(
                    en: "Run the failing step once on the CPU: an embedding id ≥ num_embeddings or a label ≥ num_classes then raises a clear IndexError instead of a cuBLAS status.",
                    zh: "把出错的那一步在 CPU 上跑一次：embedding 的 id ≥ num_embeddings 或标签 ≥ num_classes 时，会抛出清楚的 IndexError，而不是 cuBLAS 的状态码。"
                ),
            ));
            return;
        }
        if !long {
            out.push(kernel_log);
        }
        if !(long && windows) {
            out.push(watchdog);
        }
    }
}

/// The last progress counter when a kernel crashed after a long run (see
/// [`KERNEL_CRASH_LONG_RUN_MIN`]); cuBLAS's execution failure is read as
/// its own causes.
fn ran_long(f: &Finding) -> Option<u64> {
    if f.era == Some(Era::CublasExecution) {
        return None;
    }
    f.last_step
        .filter(|&step| step >= KERNEL_CRASH_LONG_RUN_MIN)
}

/// Whether the message comes from a toolkit older than CUDA 11: Torch7's
/// and PyTorch ≤0.4's THC check (`THCudaCheck FAIL`), which predates it.
fn before_cuda_11(f: &Finding) -> bool {
    f.text.contains("THCudaCheck") || f.text.contains("cutorch")
}

/// Whether the finding came from Windows (see [`Platform`]).
fn on_windows(f: &Finding) -> bool {
    Platform::of(f) == Platform::Windows
}

/// Explains `Kind::NoKernelImage` findings.
pub(super) struct NoKernelImage;

impl Explain for NoKernelImage {
    fn headline(&self, f: &Finding) -> Said {
        if let Some(library) = ArchLimited::of(f) {
            return library.headline();
        }
        say!(
            en: "The installed build has no GPU code for this GPU's architecture",
            zh: "安装的版本里没有这块 GPU 架构的 GPU 代码"
        )
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        if let Some(library) = ArchLimited::of(f) {
            out.push(library.verdict());
            return;
        }
        let title = say!(
            en: "The binaries were not built for this GPU",
            zh: "二进制不是为这块 GPU 编译的"
        );
        // A native program (llama.cpp's ggml, a CUDA application) is
        // rebuilt with its own build's architecture list, not PyTorch's.
        if native_build(f) {
            let program = if Framework::of(f) == Framework::Ggml {
                Said {
                    en: "llama.cpp (ggml)".into(),
                    zh: "llama.cpp（ggml）".into(),
                }
            } else {
                say!(en: "the program", zh: "这个程序")
            };
            out.push(verdict(
                Code::ArchMismatch,
                title,
                say_parts!(
                    en: "CUDA found no machine code (and no PTX it could compile) for this GPU's compute capability in the build of {program} that launched the kernel: the build was compiled for other architectures (a new GPU with a build that stops at an older one, or an old GPU the build left out).",
                    zh: "在发起 kernel 的 {program} 的这个版本里，CUDA 找不到这块 GPU 计算能力的机器码（也没有能现场编译的 PTX）：这个版本是为其他架构编译的（新卡配了只编到旧架构的版本，或者旧卡没被编进去）。",
                    program = program
                ),
            ));
            return;
        }
        out.push(verdict(
            Code::ArchMismatch,
            title,
            say!(
                en: "CUDA found no machine code (and no PTX it could compile) for this GPU's compute capability in the library that launched the kernel: a new GPU with a build that stops at an older architecture (e.g. an RTX 50-series sm_120 card with a wheel built for up to sm_90), an old GPU that the build dropped, or an extension compiled with a TORCH_CUDA_ARCH_LIST that does not include this GPU. Compare torch.cuda.get_arch_list() with torch.cuda.get_device_capability(); PyTorch usually warns at start-up that the GPU \"is not compatible with the current PyTorch installation\".",
                zh: "在发起 kernel 的库里，CUDA 找不到这块 GPU 计算能力的机器码（也没有能现场编译的 PTX）：新卡配了只编到旧架构的版本（如 sm_120 的 RTX 50 系列配上最高只到 sm_90 的 wheel）、旧卡已被这个版本放弃，或者扩展编译时的 TORCH_CUDA_ARCH_LIST 没包含这块 GPU。对比 torch.cuda.get_arch_list() 和 torch.cuda.get_device_capability()；PyTorch 通常会在启动时警告这块 GPU \"is not compatible with the current PyTorch installation\"。"
            ),
        ))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        if let Some(library) = ArchLimited::of(f) {
            // No build of it exists for this GPU: another library, not
            // another wheel or TORCH_CUDA_ARCH_LIST.
            out.push(library.fix());
            return;
        }
        if native_build(f) {
            out.push(if Framework::of(f) == Framework::Ggml {
                fix(
                    &LLAMA_CPP_BUILD_FOR_ARCH,
                    say!(
                        en: "Configure with cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=86 (your compute capability without the dot; `nvidia-smi --query-gpu=compute_cap --format=csv` shows it), then cmake --build build; or use a release build, or an Ollama / LM Studio version, whose CUDA build includes this GPU.",
                        zh: "用 cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=86（你的计算能力去掉小数点；`nvidia-smi --query-gpu=compute_cap --format=csv` 可以查看）配置，再 cmake --build build；或者用 CUDA 版本包含这块 GPU 的发布版（或 Ollama / LM Studio 版本）。"
                    ),
                )
            } else {
                fix(
                    &NATIVE_BUILD_FOR_ARCH,
                    say!(
                        en: "Rebuild the program for your GPU's compute capability (`nvidia-smi --query-gpu=compute_cap --format=csv`): nvcc -gencode arch=compute_86,code=sm_86, or CMAKE_CUDA_ARCHITECTURES=86 in a CMake build; or install a release built for this GPU.",
                        zh: "按你的 GPU 的计算能力（`nvidia-smi --query-gpu=compute_cap --format=csv`）重新编译这个程序：nvcc -gencode arch=compute_86,code=sm_86，或 CMake 构建里的 CMAKE_CUDA_ARCHITECTURES=86；或者安装为这块 GPU 编译的发布版。"
                    ),
                )
            });
            return;
        }
        out.push(fix(
            &INSTALL_BUILD_FOR_GPU,
            say!(
                en: "Compare `python -c \"import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())\"`: your capability (e.g. (12, 0) = sm_120) must be in the list. Install a wheel built with a CUDA version that supports the GPU (Blackwell GPUs such as the RTX 50 series need CUDA 12.8 or newer builds); old GPUs need an older PyTorch that still includes them.",
                zh: "运行 `python -c \"import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())\"` 对比：你的计算能力（如 (12, 0) = sm_120）必须在列表里。安装用支持这块 GPU 的 CUDA 版本编译的 wheel（RTX 50 系列等 Blackwell GPU 需要 CUDA 12.8 或更新的版本）；老卡需要仍然包含它的旧版 PyTorch。"
            ),
        ));
        out.push(fix(
            &REBUILD_EXTENSIONS_FOR_ARCH,
            say!(
                en: "If the failing kernel belongs to an extension, rebuild it with TORCH_CUDA_ARCH_LIST set to your capability (e.g. TORCH_CUDA_ARCH_LIST=\"8.6\" pip install --no-build-isolation --force-reinstall <package>).",
                zh: "如果出错的 kernel 属于某个扩展，把 TORCH_CUDA_ARCH_LIST 设为你的计算能力重新编译它（如 TORCH_CUDA_ARCH_LIST=\"8.6\" pip install --no-build-isolation --force-reinstall <package>）。"
            ),
        ));
    }
}

/// Libraries whose CUDA kernels exist for a fixed set of architectures in
/// every build, whatever the CUDA or PyTorch version: where the finding
/// shows one, its range is the verdict and another library the fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArchLimited {
    /// FlashAttention-3 (`hopper/` in the flash-attention repository;
    /// packages `flash_attn_3`, earlier `flashattn_hopper`): its setup.py
    /// passes `-gencode arch=compute_90a,code=sm_90a`, and for its `_sm80.cu`
    /// files `arch=compute_80,code=sm_80`, with no PTX for other GPUs.
    FlashAttention3,
}

impl ArchLimited {
    /// The library the finding shows, in its text, its traceback (files and
    /// code) or the source location its message names.
    fn of(f: &Finding) -> Option<ArchLimited> {
        const FLASH_ATTENTION_3: &[&str] = &["flash_attn_3", "flashattn_hopper", "hopper/flash_"];
        let places = super::setting::places_named(f, &[fact::LOCATION, fact::FILE], true);
        places
            .iter()
            .any(|place| FLASH_ATTENTION_3.iter().any(|mark| place.contains(mark)))
            .then_some(ArchLimited::FlashAttention3)
    }

    fn headline(self) -> Said {
        match self {
            ArchLimited::FlashAttention3 => say!(
                en: "FlashAttention-3 has no kernels for this GPU",
                zh: "FlashAttention-3 没有能在这块 GPU 上运行的 kernel"
            ),
        }
    }

    fn verdict(self) -> Verdict {
        match self {
            ArchLimited::FlashAttention3 => verdict(
                Code::ArchMismatch,
                say!(
                    en: "FlashAttention-3 is built for Hopper (and Ampere) only",
                    zh: "FlashAttention-3 只为 Hopper（和 Ampere）编译"
                ),
                say!(
                    en: "FlashAttention-3's kernels (its hopper/ sources) are compiled only for sm_90a (Hopper: H100, H200, H800, H20) and, in releases with Ampere support, for sm_80 (which Ampere and Ada cards run), with no PTX that could be compiled for any other GPU. On Blackwell (sm_100, sm_120: B200, RTX 50 series) and on GPUs older than Ampere no FlashAttention-3 build has a kernel, whatever the CUDA or PyTorch version; TORCH_CUDA_ARCH_LIST does not change its architectures either.",
                    zh: "FlashAttention-3 的 kernel（它的 hopper/ 源码）只编译成 sm_90a（Hopper：H100、H200、H800、H20），支持 Ampere 的版本再加上 sm_80（Ampere 和 Ada 的卡可以运行），而且不带能为其他 GPU 现场编译的 PTX。在 Blackwell（sm_100、sm_120：B200、RTX 50 系列）和比 Ampere 更老的 GPU 上，任何 FlashAttention-3 版本都没有能运行的 kernel，换什么 CUDA 或 PyTorch 版本都一样；TORCH_CUDA_ARCH_LIST 也改变不了它编译的架构。"
                ),
            ),
        }
    }

    fn fix(self) -> Fix {
        match self {
            ArchLimited::FlashAttention3 => fix(
                &FA3_ANOTHER_ATTENTION,
                say!(
                    en: "Switch the attention to PyTorch's scaled_dot_product_attention (Transformers: attn_implementation=\"sdpa\"), or to FlashAttention-2 (the flash-attn package, attn_implementation=\"flash_attention_2\") where its build includes this GPU. SDPA takes `(batch, heads, seqlen, dim)` where FlashAttention-3 takes `(batch, seqlen, heads, dim)`: transpose(1, 2) around the call. On an Ampere or Ada card, a current FlashAttention-3 built from hopper/ with its sm_80 kernels also runs.",
                    zh: "把注意力换成 PyTorch 的 scaled_dot_product_attention（Transformers 里设 attn_implementation=\"sdpa\"），或者在 FlashAttention-2 的版本包含这块 GPU 时换成它（flash-attn 包，attn_implementation=\"flash_attention_2\"）。SDPA 的输入是 `(batch, heads, seqlen, dim)`，FlashAttention-3 是 `(batch, seqlen, heads, dim)`：调用前后做 transpose(1, 2)。在 Ampere 或 Ada 的卡上，用 hopper/ 重新编译、带 sm_80 kernel 的新版 FlashAttention-3 也能运行。"
                ),
            ),
        }
    }
}

/// FlashAttention-3 has no kernels for the GPU: PyTorch's SDPA or
/// FlashAttention-2 instead.
const FA3_ANOTHER_ATTENTION: FixSpec = FixSpec::new(
    "use-sdpa-or-flash-attention-2",
    "Use PyTorch SDPA or FlashAttention-2 on this GPU",
    "在这块 GPU 上改用 PyTorch SDPA 或 FlashAttention-2",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.sources(&[
    "flash-attention: hopper/setup.py (-gencode arch=compute_90a,code=sm_90a; _sm80.cu files arch=compute_80,code=sm_80)",
    "PyTorch documentation: torch.nn.functional.scaled_dot_product_attention",
]);

/// A program that is neither PyTorch nor Python: llama.cpp's ggml, or a
/// native program that names itself.
fn native_build(f: &Finding) -> bool {
    Framework::of(f) == Framework::Ggml || Setting::of(f).program.is_native() || self_built_cuda(f)
}

/// The error-check helpers that CUDA C/C++ projects print their failures
/// with: the CUDA samples' `checkCudaErrors` (helper_cuda.h), "CUDA by
/// Example"'s `HANDLE_ERROR`, the `gpuErrchk`/"GPUassert:" idiom, and the
/// `cudaCheckError()`, `CUDA_CHECK` and `cudaSafeCall` macros.
const CUDA_CHECK_HELPERS: &[&str] = &[
    "checkCudaErrors",
    "cudaCheckError",
    "CUDA_CHECK",
    "CudaCheckError",
    "cudaSafeCall",
    "cutilSafeCall",
    "HANDLE_ERROR",
    "gpuErrchk",
    "GPUassert",
];

/// A CUDA program built from its own sources: a check helper prints the
/// error, and no Python framework is in sight, so its fix is its own build
/// flags (nvcc -gencode, CMAKE_CUDA_ARCHITECTURES), not a framework's wheel.
fn self_built_cuda(f: &Finding) -> bool {
    f.traceback.is_none()
        && Framework::of(f) == Framework::Unknown
        && CUDA_CHECK_HELPERS
            .iter()
            .any(|h| f.text.contains(h) || f.nearby.contains(h))
}

fn device_assert_verdict(f: &Finding) -> Verdict {
    let Some(condition) = fact(f, fact::ASSERTION) else {
        return verdict(
            Code::DeviceAssert,
            say!(
                en: "A GPU kernel's own check failed",
                zh: "GPU kernel 自己的检查失败了"
            ),
            say!(
                en: "A kernel checked a condition on its input and it failed (cudaErrorAssert, 710; 59 before CUDA 10.1). The kernel prints the failed condition itself (`...: block: [..], thread: [..] Assertion `...` failed.`), usually to standard output, before the Python error or in another log file; that line names the problem. By far the most common cause is an index out of range: a token id ≥ the embedding size, a class label < 0 or ≥ the number of classes, a gather/scatter index outside the tensor. It is not an out-of-memory error, and CUDA reports it asynchronously, so the traceback may point at a later line.",
                zh: "某个 kernel 检查了输入的一个条件，条件不成立（cudaErrorAssert，710；CUDA 10.1 之前是 59）。kernel 会自己打印出失败的条件（`...: block: [..], thread: [..] Assertion `...` failed.`），通常打印到标准输出，出现在 Python 报错之前，或在另一个日志文件里；那一行说明了问题所在。绝大多数情况下原因是索引越界：token id ≥ embedding 大小、类别标签 < 0 或 ≥ 类别数、gather/scatter 的索引超出张量范围。这不是显存不足；CUDA 异步报告这个错误，所以调用栈可能指向更靠后的行。"
            ),
        );
    };
    // The kernel's name, or the English fallback the message form has
    // always printed.
    let checked = match fact(f, fact::KERNEL) {
        Some(kernel) => say!(
            en: "The kernel {kernel} checked `{condition}` and it failed:",
            zh: "kernel {kernel} 检查的条件 `{condition}` 不成立。",
            kernel = kernel,
            condition = condition
        ),
        None => say!(
            en: "The kernel a kernel checked `{condition}` and it failed:",
            zh: "某个 kernel 检查的条件 `{condition}` 不成立。",
            condition = condition
        ),
    };
    let lower = condition.to_ascii_lowercase();
    if condition.contains("input_val >= zero && input_val <= one") {
        return verdict(
            Code::DeviceAssert,
            say!(
                en: "BCELoss got an input outside [0, 1]",
                zh: "BCELoss 收到了 [0, 1] 之外的输入"
            ),
            checked.then(say!(
                en: "binary cross-entropy (torch.nn.BCELoss / F.binary_cross_entropy) received a value below 0 or above 1 (a raw logit, or a NaN). It is not an out-of-memory error.",
                zh: "二元交叉熵（torch.nn.BCELoss / F.binary_cross_entropy）收到了小于 0 或大于 1 的值（未经 sigmoid 的 logit，或 NaN）。这不是显存不足。"
            )),
        );
    }
    let index = lower.contains("index")
        || condition.contains("n_classes")
        || condition.contains("srcSelectDimSize")
        || lower.contains("idx")
        || condition.contains(" < ");
    if !index {
        return verdict(
            Code::DeviceAssert,
            say!(
                en: "A GPU kernel's own check failed",
                zh: "GPU kernel 自己的检查失败了"
            ),
            checked.then(say!(
                en: "some input value was outside what the operation accepts. It is not an out-of-memory error; CUDA reports it asynchronously, so the traceback may point at a later line.",
                zh: "某个输入值超出了这个操作能接受的范围。这不是显存不足；CUDA 异步报告这个错误，所以调用栈可能指向更靠后的行。"
            )),
        );
    }
    let meaning = if condition.contains("srcSelectDimSize") {
        say!(
            en: "an embedding or index_select was given an id ≥ the size of the table: typically a token id ≥ the model's vocabulary size (tokens added to the tokenizer without model.resize_token_embeddings, or the wrong tokenizer for the model).",
            zh: "embedding 或 index_select 收到了 ≥ 表大小的 id：通常是 token id ≥ 模型的词表大小（给 tokenizer 加了 token 却没调用 model.resize_token_embeddings，或者 tokenizer 和模型不配套）。"
        )
    } else if condition.contains("n_classes") {
        say!(
            en: "a class label given to the loss (cross_entropy / nll_loss) is negative or ≥ the number of classes: labels numbered 1..N instead of 0..N-1, a model head with too few outputs, or a padding label such as -1 without ignore_index.",
            zh: "传给 loss（cross_entropy / nll_loss）的类别标签是负数或 ≥ 类别数：标签编号是 1..N 而不是 0..N-1、模型输出头的输出数太少，或者用 -1 这样的填充标签却没设 ignore_index。"
        )
    } else if lower.contains("index out of bounds") || lower.contains("idx") {
        say!(
            en: "an index used by gather, scatter or advanced indexing points outside the dimension it indexes.",
            zh: "gather、scatter 或高级索引用到的某个索引超出了它所索引的那个维度。"
        )
    } else {
        say!(
            en: "an index or size given to the operation is outside the valid range.",
            zh: "传给这个操作的某个索引或大小超出了有效范围。"
        )
    };
    verdict(
        Code::IndexOutOfRange,
        say!(
            en: "An index was out of range on the GPU",
            zh: "GPU 上有索引越界"
        ),
        checked.then(meaning).then(say!(
            en: "It is not an out-of-memory error. CUDA reports it asynchronously, so the Python traceback may point at a later line; the condition above is the reliable clue.",
            zh: "这不是显存不足。CUDA 异步报告这个错误，所以 Python 调用栈可能指向更靠后的行；上面的条件才是可靠的线索。"
        )),
    )
}

fn device_assert_fixes(f: &Finding, out: &mut Vec<Fix>) {
    out.push(fix(
        &SEE_FAILING_INDEX,
        say!(
            en: "Run one failing step on the CPU (model.cpu(), or CUDA_VISIBLE_DEVICES=\"\" python train.py): the same bug raises a readable IndexError there. Or rerun with CUDA_LAUNCH_BLOCKING=1 so the traceback points at the real operation.",
            zh: "在 CPU 上跑一次出错的那一步（model.cpu()，或 CUDA_VISIBLE_DEVICES=\"\" python train.py）：同一个 bug 在那里会抛出看得懂的 IndexError。或者设 CUDA_LAUNCH_BLOCKING=1 重跑，让调用栈指向真正出错的操作。"
        ),
    ));
    let condition = fact(f, fact::ASSERTION).unwrap_or("");
    if condition.contains("srcSelectDimSize") || condition.is_empty() {
        out.push(fix(
            &CHECK_TOKEN_IDS,
            say!(
                en: "assert input_ids.max() < model.get_input_embeddings().num_embeddings; after adding tokens call model.resize_token_embeddings(len(tokenizer)); make sure the tokenizer belongs to the model.",
                zh: "assert input_ids.max() < model.get_input_embeddings().num_embeddings；加了 token 之后调用 model.resize_token_embeddings(len(tokenizer))；确认 tokenizer 和模型是配套的。"
            ),
        ));
    }
    if condition.contains("n_classes") || condition.is_empty() {
        out.push(fix(
            &CHECK_LABELS,
            say!(
                en: "`assert labels.min() >= 0 and labels.max() < num_classes`; number classes from 0; mark padding with ignore_index (-100 by default in cross_entropy).",
                zh: "`assert labels.min() >= 0 and labels.max() < num_classes`；类别从 0 开始编号；填充位置用 ignore_index 标记（cross_entropy 默认是 -100）。"
            ),
        ));
    }
    if condition.contains("input_val >= zero") {
        out.push(fix(
            &BCE_WITH_LOGITS,
            say!(
                en: "Use torch.nn.BCEWithLogitsLoss on raw logits (numerically safer), or apply torch.sigmoid before BCELoss; check for NaNs in the model output.",
                zh: "对未经 sigmoid 的 logit 用 torch.nn.BCEWithLogitsLoss（数值上更稳），或者在 BCELoss 之前先做 torch.sigmoid；检查模型输出里有没有 NaN。"
            ),
        ));
    }
    out.push(fix(
        &RESTART_AFTER_FIX,
        say!(
            en: "After a device-side assert the CUDA context is unusable and every later CUDA call fails; in notebooks restart the kernel. Source builds with TORCH_USE_CUDA_DSA=1 report the failing assertion in the Python error.",
            zh: "device-side assert 之后 CUDA 上下文就不能用了，之后的每个 CUDA 调用都会失败；在 notebook 里要重启内核。用 TORCH_USE_CUDA_DSA=1 从源码编译的版本会在 Python 报错里给出失败的断言。"
        ),
    ));
}

/// CUDA_LAUNCH_BLOCKING and compute-sanitizer are NVIDIA's; the same
/// advice wherever a kernel fault is recognised.
pub(super) const FIND_FAILED_KERNEL: FixSpec = FixSpec::new(
    "find-failed-kernel",
    "Find the kernel that failed",
    "找出出错的 kernel",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look)
.sources(&[
    "CUDA Programming Guide: CUDA_LAUNCH_BLOCKING",
    "NVIDIA Compute Sanitizer documentation",
]);

/// Names PyTorch builds and Hugging Face's attn_implementation.
const REBUILD_EXTENSION: FixSpec = FixSpec::new(
    "rebuild-kernel-extension",
    "Rebuild or update the extension that owns it",
    "重新编译或升级出问题的扩展",
)
.frameworks(&[Framework::PyTorch]);

/// `Tensor.contiguous()`.
const CONTIGUOUS_CUSTOM_OPS: FixSpec = FixSpec::new(
    "contiguous-inputs-to-custom-ops",
    "Pass contiguous tensors to custom ops",
    "给自定义算子传连续的张量",
)
.frameworks(&[Framework::PyTorch]);

/// torch.version.cuda and the CUDA architecture list.
const BUILD_SUPPORTS_GPU: FixSpec = FixSpec::new(
    "check-build-supports-gpu",
    "Check that the build supports this GPU",
    "确认这个版本支持这块 GPU",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

/// PyTorch's embedding and loss arguments; the status is cuBLAS's.
const INDICES_ON_CPU: FixSpec = FixSpec::new(
    "check-indices-on-cpu",
    "Check the indices on the CPU",
    "在 CPU 上检查索引",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

/// NVIDIA Xid events in the kernel log.
const DRIVER_KERNEL_LOG: FixSpec = FixSpec::new(
    "check-driver-kernel-log",
    "Check the driver's kernel log",
    "查看驱动的内核日志",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look)
.sources(&["NVIDIA Xid catalog"]);

/// Windows' System log: nvlddmkm events and TDR recoveries (Event 4101).
const WINDOWS_EVENT_LOG: FixSpec = FixSpec::new(
    "check-windows-event-log",
    "Check the driver's events in Event Viewer",
    "在事件查看器里查看驱动的事件",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look)
.sources(&["Microsoft documentation: Timeout Detection and Recovery (TdrDelay)"]);

/// A display watchdog kills long kernels on any vendor's GPU.
const DISPLAY_WATCHDOG: FixSpec = FixSpec::new(
    "rule-out-display-watchdog",
    "Rule out the display watchdog",
    "排除显示看门狗",
)
.sources(&["Microsoft documentation: Timeout Detection and Recovery (TdrDelay)"]);

/// PyTorch's CUDA wheels and their architecture list.
const INSTALL_BUILD_FOR_GPU: FixSpec = FixSpec::new(
    "install-build-for-gpu",
    "Install a build for your GPU",
    "安装支持你这块 GPU 的版本",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia]);

/// TORCH_CUDA_ARCH_LIST: PyTorch's extension builder, CUDA architectures.
const REBUILD_EXTENSIONS_FOR_ARCH: FixSpec = FixSpec::new(
    "rebuild-extensions-for-arch",
    "Rebuild extensions for this architecture",
    "为这个架构重新编译扩展",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.sources(&["PyTorch documentation: torch.utils.cpp_extension (TORCH_CUDA_ARCH_LIST)"]);

/// llama.cpp's CMake build: GGML_CUDA and CMAKE_CUDA_ARCHITECTURES.
const LLAMA_CPP_BUILD_FOR_ARCH: FixSpec = FixSpec::new(
    "llama-cpp-build-for-arch",
    "Build llama.cpp for your GPU",
    "为你的 GPU 编译 llama.cpp",
)
.frameworks(&[Framework::Ggml])
.vendors(&[Vendor::Nvidia])
.sources(&["llama.cpp: docs/build.md (CUDA, CMAKE_CUDA_ARCHITECTURES)"]);

/// nvcc's -gencode and CMake's CUDA architectures.
const NATIVE_BUILD_FOR_ARCH: FixSpec = FixSpec::new(
    "native-build-for-arch",
    "Rebuild the program for your GPU",
    "为你的 GPU 重新编译这个程序",
)
.vendors(&[Vendor::Nvidia])
.sources(&["CUDA Compiler Driver NVCC documentation: -gencode"]);

/// model.cpu(), CUDA_VISIBLE_DEVICES and CUDA_LAUNCH_BLOCKING.
const SEE_FAILING_INDEX: FixSpec = FixSpec::new(
    "see-failing-index",
    "See the failing index clearly",
    "看清楚是哪个索引出错",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

/// Hugging Face's embedding API on a PyTorch model.
const CHECK_TOKEN_IDS: FixSpec = FixSpec::new(
    "check-token-ids-against-embeddings",
    "Check token ids against the embedding size",
    "检查 token id 是否小于 embedding 大小",
)
.frameworks(&[Framework::PyTorch]);

/// cross_entropy's ignore_index.
const CHECK_LABELS: FixSpec = FixSpec::new(
    "check-labels-against-classes",
    "Check labels against the number of classes",
    "检查标签是否小于类别数",
)
.frameworks(&[Framework::PyTorch]);

const BCE_WITH_LOGITS: FixSpec = FixSpec::new(
    "bce-with-logits",
    "Give BCE probabilities, or use the logits version",
    "给 BCE 传概率，或改用 logits 版本",
)
.frameworks(&[Framework::PyTorch]);

/// The CUDA context and PyTorch's TORCH_USE_CUDA_DSA build option.
const RESTART_AFTER_FIX: FixSpec = FixSpec::new(
    "restart-after-device-assert",
    "Restart the process after fixing it",
    "改完后重启进程",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia]);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    FIND_FAILED_KERNEL,
    FA3_ANOTHER_ATTENTION,
    REBUILD_EXTENSION,
    CONTIGUOUS_CUSTOM_OPS,
    BUILD_SUPPORTS_GPU,
    INDICES_ON_CPU,
    DRIVER_KERNEL_LOG,
    WINDOWS_EVENT_LOG,
    DISPLAY_WATCHDOG,
    INSTALL_BUILD_FOR_GPU,
    REBUILD_EXTENSIONS_FOR_ARCH,
    LLAMA_CPP_BUILD_FOR_ARCH,
    NATIVE_BUILD_FOR_ARCH,
    SEE_FAILING_INDEX,
    CHECK_TOKEN_IDS,
    CHECK_LABELS,
    BCE_WITH_LOGITS,
    RESTART_AFTER_FIX,
];

#[cfg(test)]
mod tests {
    fn fix_ids(text: &str) -> Vec<String> {
        crate::decode_str(text)
            .into_iter()
            .find(|f| f.kind.slug() == "launch_failure")
            .map(|f| f.diagnosis.fixes.iter().map(|x| x.id.clone()).collect())
            .unwrap_or_default()
    }

    /// A launch failure after a long run (fixtures/wild/1848.txt: a BasicSR
    /// log at `iter: 10,100`; 1849.txt: epoch 98 of 150 after 18 hours)
    /// reads the driver's kernel log first; on Windows (fixtures/
    /// launch_failure_windows_desktop.log, step 512) the display watchdog.
    #[test]
    fn a_kernel_crash_after_a_long_run_reads_the_driver_first() {
        for paste in [
            include_str!("../../../../fixtures/wild/1848.txt"),
            include_str!("../../../../fixtures/wild/1849.txt"),
        ] {
            assert_eq!(fix_ids(paste)[0], "check-driver-kernel-log");
            let f = crate::decode_str(paste).into_iter().next().unwrap();
            assert_eq!(
                f.diagnosis.verdicts[0].title,
                "It crashed after a long run: likelier the driver or the GPU than a kernel bug"
            );
            assert!(f.diagnosis.verdicts[0].zh.is_some());
        }
        let windows = include_str!("../../../../fixtures/launch_failure_windows_desktop.log");
        assert_eq!(fix_ids(windows)[0], "rule-out-display-watchdog");
    }

    /// Both sides of the margin (50), and a crash at the first step: the
    /// kernel bug comes first. (The message: fixtures/wild/1849.txt.)
    #[test]
    fn a_kernel_crash_early_in_the_run_hunts_the_kernel_first() {
        let crash = "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    if loss.isfinite().all():\nRuntimeError: CUDA error: unspecified launch failure\n";
        let at = |step: u64| fix_ids(&format!("step: {step} loss 0.3\n{crash}"));
        assert_eq!(at(50)[0], "check-driver-kernel-log");
        assert_eq!(at(49)[0], "find-failed-kernel");
        assert_eq!(at(0)[0], "find-failed-kernel");
        assert_eq!(fix_ids(crash)[0], "find-failed-kernel");
    }

    /// A launch failure the writer says comes back at random reads the
    /// driver first, and on Windows the watchdog and Event Viewer, never
    /// dmesg (fixtures/wild/2255.txt: Torch7, then "all CUDA-capable devices
    /// are busy or unavailable" until a reboot; 2256.txt: CatBoost on
    /// Windows 10). The same message without those words hunts the kernel.
    #[test]
    fn a_kernel_crash_that_recurs_at_random_reads_the_driver_first() {
        let torch7 = include_str!("../../../../fixtures/wild/2255.txt");
        let ids = fix_ids(torch7);
        assert_eq!(ids[0], "check-driver-kernel-log");
        let f = crate::decode_str(torch7).into_iter().next().unwrap();
        let find = f
            .diagnosis
            .fixes
            .iter()
            .find(|x| x.id == "find-failed-kernel")
            .unwrap();
        // The THC era's toolkits predate compute-sanitizer.
        assert!(find.how.contains("cuda-memcheck") && !find.how.contains("compute-sanitizer"));

        let windows = fix_ids(include_str!("../../../../fixtures/wild/2256.txt"));
        assert_eq!(
            windows[..2],
            ["rule-out-display-watchdog", "check-windows-event-log"]
        );
        assert!(!windows.iter().any(|id| id == "check-driver-kernel-log"));

        let plain = "THCudaCheck FAIL file=/tmp/luarocks_cutorch-scm-1-6961/cutorch/lib/THC/generic/THCStorage.c line=147 error=4 : unspecified launch failure\n";
        assert_eq!(fix_ids(plain)[0], "find-failed-kernel");
        assert_eq!(
            fix_ids(&format!(
                "I got the following error message randomly:\n{plain}"
            ))[0],
            "check-driver-kernel-log"
        );
    }

    /// A self-built CUDA program's check helper (fixtures/wild/2253.txt:
    /// `cudaCheckError() failed : no kernel image ...` from a shell script)
    /// is rebuilt with its own nvcc flags, not a PyTorch wheel; the bare
    /// message stays PyTorch's.
    #[test]
    fn a_self_built_cuda_program_is_rebuilt_for_its_gpu() {
        let ids = |text: &str| -> Vec<String> {
            crate::decode_str(text)
                .into_iter()
                .find(|f| f.kind.slug() == "no_kernel_image")
                .map(|f| f.diagnosis.fixes.iter().map(|x| x.id.clone()).collect())
                .unwrap_or_default()
        };
        assert_eq!(
            ids(include_str!("../../../../fixtures/wild/2253.txt"))[0],
            "native-build-for-arch"
        );
        assert_eq!(
            ids("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")[0],
            "install-build-for-gpu"
        );
    }

    /// FlashAttention-3's kernels exist for sm_90a (and sm_80) only: its
    /// "no kernel image" gets that range and another attention first,
    /// never a wheel for a newer CUDA or TORCH_CUDA_ARCH_LIST.
    mod arch_limited {
        use crate::record::{fact, Finding};

        fn fix_ids(f: &Finding) -> Vec<String> {
            f.diagnosis.fixes.iter().map(|x| x.id.clone()).collect()
        }

        /// fixtures/wild/2007.txt names FlashAttention-3's source file
        /// before the message (`flash-attention-main/hopper/
        /// flash_fwd_launch_template.h`, line 197), the place FA3's
        /// CHECK_CUDA prints as `CUDA error (FILE:LINE): ...`; FlashAttention-2
        /// prints its own file there (`/build/source/flash-attn/
        /// flash_fwd_launch_template.h:184`, an RTX 5090 report).
        #[test]
        fn the_message_s_source_location_names_the_library() {
            let paste = include_str!("../../../../fixtures/wild/2007.txt");
            let located = |location: &str| {
                let mut f = crate::decode_str(paste).remove(0);
                f.facts.insert(fact::LOCATION.into(), location.into());
                crate::explain::explain(&mut f);
                f
            };
            let fa3 = located("flash-attention-main/hopper/flash_fwd_launch_template.h:197");
            assert!(
                fa3.diagnosis.headline.contains("FlashAttention-3"),
                "{}",
                fa3.diagnosis.headline
            );
            let ids = fix_ids(&fa3);
            assert_eq!(ids, ["use-sdpa-or-flash-attention-2"], "{ids:?}");
            let detail = &fa3.diagnosis.verdicts[0].detail;
            assert!(
                detail.contains("sm_90a") && detail.contains("sm_120"),
                "{detail}"
            );
            let fa2 = located("/build/source/flash-attn/flash_fwd_launch_template.h:184");
            assert_eq!(fix_ids(&fa2)[0], "install-build-for-gpu");
        }

        /// A Python traceback through FlashAttention-3's interface (installed
        /// as `flashattn_hopper-3.0.0b1-...egg/flash_attn_interface.py`, the
        /// path of a real FA3 report) names it too; FlashAttention-2's own
        /// `flash_attn/flash_attn_interface.py` does not.
        #[test]
        fn a_traceback_through_fa3_names_the_library() {
            let traceback = |file: &str| {
                format!("Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    out = flash_attn_func(q, k, v, causal=True)\n  File \"{file}\", line 460, in flash_attn_func\n    return FlashAttnFunc.apply(\nRuntimeError: CUDA error: no kernel image is available for execution on the device\n")
            };
            let kernel_image = |text: &str| {
                crate::decode_str(text)
                    .into_iter()
                    .find(|f| f.kind.slug() == "no_kernel_image")
                    .expect("a no-kernel-image finding")
            };
            let fa3 = kernel_image(&traceback("/usr/lib/python3.10/site-packages/flashattn_hopper-3.0.0b1-py3.10-linux-x86_64.egg/flash_attn_interface.py"));
            assert_eq!(fix_ids(&fa3), ["use-sdpa-or-flash-attention-2"]);
            let fa2 = kernel_image(&traceback(
                "/usr/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py",
            ));
            assert!(!fix_ids(&fa2).contains(&"use-sdpa-or-flash-attention-2".to_string()));
        }
    }
}
