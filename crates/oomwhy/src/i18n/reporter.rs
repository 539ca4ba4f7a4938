//! Who reported a failure, in both languages. The detectors record the
//! reporter as an English fact (`reported_by`, which JSON keeps as it is);
//! the phrases they write for it are declared here once, with their Chinese,
//! and the explainer fills a reporter into a sentence only through
//! [`said`], so a description never reaches Chinese text in English. A
//! program's own name (PyTorch, torch-directml, `bmlib_memory`) reads the
//! same in both languages.

use super::Said;

/// A description of a reporter, in English and Chinese.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reporter {
    /// English, as the fact records it.
    pub en: &'static str,
    /// Simplified Chinese.
    pub zh: &'static str,
}

macro_rules! reporters {
    ($($name:ident { en: $en:literal, zh: $zh:literal, })*) => {
        $(#[doc = $en] pub const $name: Reporter = Reporter { en: $en, zh: $zh };)*
        /// Every fixed description, for [`said`] and the tests.
        pub const ALL: &[Reporter] = &[$($name),*];
    };
}

reporters! {
    CUDA_DRIVER_CALL { en: "a CUDA driver API call", zh: "一次 CUDA driver API 调用", }
    CUDA_RUNTIME_CALL { en: "a CUDA runtime call", zh: "一次 CUDA runtime 调用", }
    UNRECOGNISED { en: "an unrecognised program", zh: "一个未能识别的程序", }
    NCNN_VULKAN_TOOL { en: "an ncnn-vulkan tool", zh: "某个 ncnn-vulkan 工具", }
    CPP_BAD_ALLOC { en: "a C++ program (std::bad_alloc)", zh: "一个 C++ 程序（std::bad_alloc）", }
    OLLAMA_CHECK { en: "Ollama (its check before loading a model)", zh: "Ollama（加载模型前的内存检查）", }
    RAY_MONITOR { en: "Ray's raylet (its memory monitor)", zh: "Ray 的 raylet（它的内存监控）", }
    MLX_METAL { en: "MLX's Metal backend", zh: "MLX 的 Metal 后端", }
    WSL_DRIVER { en: "WSL2's GPU driver (dxgkrnl)", zh: "WSL2 的 GPU 驱动（dxgkrnl）", }
    OPENVINO_GPU { en: "OpenVINO's GPU plugin (OpenCL)", zh: "OpenVINO 的 GPU 插件（OpenCL）", }
    NVENC { en: "the NVENC video encoder", zh: "NVENC 视频编码器", }
    NCCL_WATCHDOG { en: "PyTorch's ProcessGroupNCCL watchdog", zh: "PyTorch 的 ProcessGroupNCCL 看门狗", }
    SHELL_SEGFAULT { en: "the shell (the process died of SIGSEGV)", zh: "shell（进程因 SIGSEGV 退出）", }
    TORCH_CACHING_ALLOCATOR { en: "PyTorch's caching allocator", zh: "PyTorch 的缓存分配器", }
    NVML { en: "the NVIDIA driver (NVML)", zh: "NVIDIA 驱动（NVML）", }
    ROCM_HSA { en: "ROCm's runtime (HSA)", zh: "ROCm 运行时（HSA）", }
    NVRM { en: "the NVIDIA kernel driver (NVRM)", zh: "NVIDIA 内核驱动（NVRM）", }
    WINDOWS_TDR { en: "Windows (the display driver's timeout detection and recovery)", zh: "Windows（显示驱动的超时检测与恢复，即 TDR）", }
    JETSON_NVGPU { en: "the Jetson GPU driver (nvgpu)", zh: "Jetson 的 GPU 驱动（nvgpu）", }
    MXNET_POOL { en: "MXNet's pooled storage manager", zh: "MXNet 的池化存储管理器", }
    PADDLE_ALLOCATOR { en: "PaddlePaddle's GPU allocator", zh: "PaddlePaddle 的 GPU 分配器", }
    VULKAN_DRIVER { en: "the Vulkan driver", zh: "Vulkan 驱动", }
    METAL_DRIVER { en: "Apple's Metal driver", zh: "Apple 的 Metal 驱动", }
    ORT_ARENA { en: "ONNX Runtime's BFC arena", zh: "ONNX Runtime 的 BFC arena", }
    CUDA_DRIVER_API_OOM { en: "the CUDA driver API (CUDA_ERROR_OUT_OF_MEMORY)", zh: "CUDA driver API（CUDA_ERROR_OUT_OF_MEMORY）", }
    CUDA_RUNTIME_API_OOM { en: "the CUDA runtime API (cudaErrorMemoryAllocation)", zh: "CUDA runtime API（cudaErrorMemoryAllocation）", }
    VENDOR_TORCH_BACKEND { en: "a vendor PyTorch backend", zh: "某个厂商的 PyTorch 后端", }
    GGML_VULKAN { en: "ggml's Vulkan backend (llama.cpp)", zh: "ggml 的 Vulkan 后端（llama.cpp）", }
    XLA_ASYNC_ALLOCATOR { en: "XLA's cudaMallocAsync allocator", zh: "XLA 的 cudaMallocAsync 分配器", }
    NVIDIA_KERNEL_DRIVER { en: "NVIDIA kernel driver", zh: "NVIDIA 内核驱动", }
    NVIDIA_KERNEL_DRIVER_NVRM { en: "NVIDIA kernel driver (NVRM)", zh: "NVIDIA 内核驱动（NVRM）", }
    WINDOWS_DISPLAY_DRIVER { en: "Windows display driver", zh: "Windows 显示驱动", }
    JETSON_GPU_DRIVER { en: "Jetson GPU driver (nvgpu)", zh: "Jetson GPU 驱动（nvgpu）", }
    ROCM_RUNTIME_HSA { en: "ROCm runtime (HSA)", zh: "ROCm 运行时（HSA）", }
    INTEL_XE { en: "Intel's Xe kernel driver (xe)", zh: "Intel 的 Xe 内核驱动（xe）", }
    INTEL_XE_KERNEL_DRIVER { en: "Intel Xe kernel driver", zh: "Intel Xe 内核驱动", }
    VULKAN_HPP { en: "Vulkan-Hpp wrapper", zh: "Vulkan-Hpp 封装库", }
    MINDSPORE_ASCEND { en: "MindSpore Ascend runtime", zh: "MindSpore 昇腾运行时", }
    INTEL_COMPUTE_RUNTIME { en: "Intel GPU compute runtime (NEO)", zh: "Intel GPU 计算运行时（NEO）", }
    CUDA_DRIVER_COREDUMP { en: "CUDA driver (core dump on exception)", zh: "CUDA 驱动（异常时的核心转储）", }
    LINUX_PCIE_AER { en: "the Linux kernel's PCIe error reporting (AER)", zh: "Linux 内核的 PCIe 错误报告（AER）", }
}

/// Descriptions with a part taken from the message: `(English before,
/// English after, Chinese before, Chinese after)` around the part.
const FORMS: &[(&str, &str, &str, &str)] = &[
    ("native code (", ")", "原生代码（", "）"),
    ("an OpenCL call (", ")", "一次 OpenCL 调用（", "）"),
    ("ggml (", " buffer)", "ggml（", " 缓冲区）"),
];

/// "native code (FILE)": a reporter known only by the source file it names.
pub fn native_code(file: &str) -> String {
    form(0, file)
}

/// "an OpenCL call (NAME)": a reporter known only by the OpenCL status.
pub fn opencl_call(status: &str) -> String {
    form(1, status)
}

/// "ggml (BACKEND buffer)": ggml's backend buffer that could not be allocated.
pub fn ggml_buffer(backend: &str) -> String {
    form(2, backend)
}

fn form(index: usize, part: &str) -> String {
    let (before, after, _, _) = FORMS[index];
    format!("{before}{part}{after}")
}

/// The reporter a `reported_by` fact records, in both languages: a
/// declared description, a form with a part from the message, or a
/// program's own name (the same in both).
pub fn said(reported_by: &str) -> Said {
    if let Some(r) = ALL.iter().find(|r| r.en == reported_by) {
        return Said {
            en: r.en.to_string(),
            zh: r.zh.to_string(),
        };
    }
    for (en_before, en_after, zh_before, zh_after) in FORMS {
        if let Some(part) = reported_by
            .strip_prefix(en_before)
            .and_then(|rest| rest.strip_suffix(en_after))
        {
            return Said {
                en: reported_by.to_string(),
                zh: format!("{zh_before}{part}{zh_after}"),
            };
        }
    }
    Said::same(reported_by)
}

/// Whether the reporter is known only by the kind of call that failed
/// ("a CUDA runtime call"): a sentence then names the call, not a program.
pub fn is_call(reported_by: &str) -> bool {
    [CUDA_DRIVER_CALL.en, CUDA_RUNTIME_CALL.en].contains(&reported_by)
}

/// [`said`] in Chinese.
pub fn zh(reported_by: &str) -> String {
    said(reported_by).zh
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_and_forms_have_chinese() {
        assert_eq!(zh("an unrecognised program"), "一个未能识别的程序");
        assert_eq!(
            zh(&native_code("pool_memory_resource.hpp")),
            "原生代码（pool_memory_resource.hpp）"
        );
        assert_eq!(
            zh(&opencl_call("CL_OUT_OF_RESOURCES")),
            "一次 OpenCL 调用（CL_OUT_OF_RESOURCES）"
        );
        assert_eq!(zh(&ggml_buffer("CUDA0")), "ggml（CUDA0 缓冲区）");
        // A program's own name stays as it is.
        assert_eq!(said("torch-directml"), Said::same("torch-directml"));
        assert_eq!(said("native code"), Said::same("native code"));
    }

    /// The Chinese of a description keeps no English grammar: no article,
    /// no possessive.
    #[test]
    fn chinese_descriptions_are_chinese() {
        for r in ALL {
            assert_ne!(r.en, r.zh, "{r:?}");
            assert!(
                // Chinese words, or at least Chinese brackets.
                r.zh.chars()
                    .any(|c| matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{ff00}'..='\u{ffef}')),
                "{r:?}"
            );
            let words: Vec<&str> = r.zh.split(|c: char| !c.is_ascii_alphabetic()).collect();
            for english in ["a", "an", "the", "of", "its"] {
                assert!(!words.contains(&english), "{r:?}");
            }
            assert!(!r.zh.contains("'s") && !r.zh.contains("’s"), "{r:?}");
        }
        // Every description is declared once.
        for (i, r) in ALL.iter().enumerate() {
            assert!(ALL[..i].iter().all(|o| o.en != r.en), "{r:?}");
        }
    }
}
