//! A status-table code that is not an out-of-memory (`gpu_runtime_error`):
//! what the code means, from its table, and the fix its group of codes has.

use super::catalogue::{Cost, FixSpec};
use super::common::{fact, fix, verdict};
use super::docs::Code;
use super::setting::Vendor;
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact as key, Diagnosis, Finding, Fix, Verdict};
use crate::say;

/// Codes that say the driver is older than, or does not match, what the
/// program was built for.
const DRIVER_TOO_OLD: &[&str] = &[
    "cudaErrorInsufficientDriver",
    "cudaErrorCallRequiresNewerDriver",
    "cudaErrorSystemDriverMismatch",
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
    "cudaErrorCompatNotSupportedOnDevice",
    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
    "cudaErrorUnsupportedPtxVersion",
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "hipErrorInsufficientDriver",
    "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER",
    "VK_ERROR_INCOMPATIBLE_DRIVER",
];

/// The unknown error, which the runtime's first calls return when the
/// driver is in a bad state (updated without a reboot, nvidia_uvm not
/// loaded after suspend and resume).
const DRIVER_STATE: &[&str] = &["cudaErrorUnknown", "CUDA_ERROR_UNKNOWN"];

/// The calls that find and open the GPU: the first the runtime makes.
const INIT_CALLS: &[&str] = &[
    "cudaGetDeviceCount",
    "cuInit",
    "cudaSetDevice",
    "cuDeviceGet",
    "cudaGetDevice",
    "CUDA initialization",
];

/// Codes that say no usable GPU was found.
const NO_DEVICE: &[&str] = &[
    "cudaErrorNoDevice",
    "CUDA_ERROR_NO_DEVICE",
    "hipErrorNoDevice",
    "cudaErrorInvalidDevice",
    "CUDA_ERROR_INVALID_DEVICE",
    "hipErrorInvalidDevice",
    "cudaErrorStubLibrary",
    "CUDA_ERROR_STUB_LIBRARY",
    "cudaErrorDevicesUnavailable",
];

/// Codes after which the process's GPU context is unusable: the fault is in
/// a kernel that ran earlier, reported by whichever call came next.
const STICKY_FAULT: &[&str] = &[
    "cudaErrorLaunchTimeout",
    "CUDA_ERROR_LAUNCH_TIMEOUT",
    "cudaErrorHardwareStackError",
    "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "cudaErrorIllegalInstruction",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "cudaErrorInvalidAddressSpace",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    "cudaErrorInvalidPc",
    "CUDA_ERROR_INVALID_PC",
    "cudaErrorECCUncorrectable",
    "CUDA_ERROR_ECC_UNCORRECTABLE",
    "hipErrorLaunchTimeOut",
    "CUBLAS_STATUS_EXECUTION_FAILED",
    "CUDNN_STATUS_EXECUTION_FAILED",
    "VK_ERROR_DEVICE_LOST",
    "ZE_RESULT_ERROR_DEVICE_LOST",
];

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

impl Explain for GpuRuntimeError {
    fn headline(&self, f: &Finding) -> Said {
        match (fact(f, "table_title"), code_of(f)) {
            (Some(who), Some(code)) => say!(
                en: "A {who} call returned {code}",
                zh: "{who} 调用返回了 {code}",
                who = who,
                code = code
            ),
            (Some(who), None) => say!(
                en: "A {who} call returned an error status",
                zh: "{who} 调用返回了错误状态",
                who = who
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
        let status = match (fact(f, "table_title"), code_of(f)) {
            (Some(who), Some(code)) => say!(
                en: "{code} is a {who} status:",
                zh: "{code} 是 {who} 的状态码。",
                code = code,
                who = who
            ),
            (Some(who), None) => say!(
                en: "an error status is a {who} status:",
                zh: "这是 {who} 的一个错误状态。",
                who = who
            ),
            (None, Some(code)) => say!(
                en: "{code} is a GPU runtime status:",
                zh: "{code} 是 GPU 运行时的状态码。",
                code = code
            ),
            (None, None) => say!(
                en: "an error status is a GPU runtime status:",
                zh: "这是 GPU 运行时的一个错误状态。"
            ),
        };
        // The table's meaning is English; the Chinese quotes it as such.
        let meaning = match fact(f, "meaning") {
            Some(meaning) => say!(
                en: "{meaning}",
                zh: "状态码表里的说明（英文原文）：{meaning}",
                meaning = meaning
            ),
            None => say!(
                en: "The table gives no description for it.",
                zh: "状态码表里没有它的说明。"
            ),
        };
        let not_oom = if fact(f, "code_class") == Some("maybe") {
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
        // The meaning's first clause is the answer to "why" when it is short
        // enough to be a title ("The installed NVIDIA CUDA driver is older
        // than the CUDA runtime library").
        let title = match fact(f, "meaning")
            .and_then(|m| m.split(['.', ';']).next())
            .map(str::trim)
            .filter(|clause| (12..=100).contains(&clause.len()))
        {
            Some(clause) => say!(
                en: "{clause}",
                zh: "{clause}（状态码表原文）",
                clause = clause
            ),
            None => say!(en: "What the status code means", zh: "状态码的含义"),
        };
        out.push(verdict(
            Code::GpuStatusCode,
            title,
            status.then(meaning).then(not_oom),
        ));
    }

    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        let name = fact(f, key::ERROR_NAME).unwrap_or("");
        if DRIVER_TOO_OLD.contains(&name) {
            out.push(fix(
                &UPDATE_DRIVER,
                say!(
                    en: "The driver is older than the CUDA (or ROCm) the program was built with. Install a newer driver (`nvidia-smi` shows the highest CUDA version the driver supports), or install a build of the program or framework for an older CUDA.",
                    zh: "驱动比程序编译时用的 CUDA（或 ROCm）旧。装一个更新的驱动（`nvidia-smi` 会显示驱动支持的最高 CUDA 版本），或者换成针对更旧 CUDA 编译的程序或框架版本。"
                ),
            ));
        } else if DRIVER_STATE.contains(&name) && INIT_CALLS.iter().any(|c| f.text.contains(c)) {
            out.push(fix(
                &CHECK_DRIVER_STATE,
                say!(
                    en: "An unknown error from the runtime's first calls is usually the driver's state, not the program. Run `nvidia-smi`: \"Driver/library version mismatch\" means the driver was updated without a reboot, so reboot (or reload the nvidia kernel modules). Check that the nvidia_uvm module is loaded (`lsmod | grep nvidia_uvm`, `sudo modprobe nvidia-uvm`; it is often missing after suspend and resume), and look for Xid errors in `sudo dmesg | grep -i -e xid -e nvrm`.",
                    zh: "运行时最初几个调用返回未知错误，通常是驱动的状态出了问题，不是程序的问题。运行 `nvidia-smi`：如果提示 \"Driver/library version mismatch\"，说明驱动更新后没有重启，重启即可（或重新加载 nvidia 内核模块）。确认 nvidia_uvm 模块已加载（`lsmod | grep nvidia_uvm`，`sudo modprobe nvidia-uvm`；休眠唤醒后常常丢失），并在 `sudo dmesg | grep -i -e xid -e nvrm` 里找 Xid 错误。"
                ),
            ));
        } else if NO_DEVICE.contains(&name) {
            out.push(fix(
                &GPU_VISIBLE,
                say!(
                    en: "Run `nvidia-smi` (or `rocm-smi`) in the same environment; check `CUDA_VISIBLE_DEVICES`, and in a container that it was started with the GPU (`--gpus all`). A stub driver library on the library path also hides the GPU.",
                    zh: "在同一环境里运行 `nvidia-smi`（或 `rocm-smi`）；检查 `CUDA_VISIBLE_DEVICES`；在容器里，检查它启动时带上了 GPU（`--gpus all`）。库路径上的驱动桩库（stub）也会让 GPU 不可见。"
                ),
            ));
        } else if STICKY_FAULT.contains(&name) {
            out.push(fix(
                &FIND_KERNEL,
                say!(
                    en: "The error is reported by a call after the kernel that failed. Run again with `CUDA_LAUNCH_BLOCKING=1` so the failing call is reported where it happens, or under `compute-sanitizer`; a restart is needed to use the GPU again.",
                    zh: "这个错误是由出错 kernel 之后的某个调用报告的。用 `CUDA_LAUNCH_BLOCKING=1` 重跑，让出错的调用在发生的地方报出来，或者在 `compute-sanitizer` 下运行；要重启进程才能再用 GPU。"
                ),
            ));
        }
        if fact(f, "code_class") == Some("maybe") {
            out.push(fix(
                &LIBRARY_HEADROOM,
                say!(
                    en: "Reduce the batch size or the model's footprint, stop other processes on the GPU, and in TensorFlow turn on memory growth (`tf.config.experimental.set_memory_growth(gpu, True)`) so the framework does not take all memory before cuDNN or cuBLAS asks for theirs.",
                    zh: "减小 batch size 或模型的占用，结束这块 GPU 上的其他进程；在 TensorFlow 里打开显存按需增长（`tf.config.experimental.set_memory_growth(gpu, True)`），免得框架在 cuDNN 或 cuBLAS 申请之前就占掉全部显存。"
                ),
            ));
        }
        out.push(fix(
            &LOOK_UP_CODE,
            say!(
                en: "The finding names the table, the code and where its meaning comes from (`oomwhy explain gpu_runtime_error` describes the tables). The call that returned it is usually on the same line or in the traceback.",
                zh: "这条发现写明了状态码表、状态码以及含义的出处（`oomwhy explain gpu_runtime_error` 介绍这些表）。返回它的调用通常就在同一行或 traceback 里。"
            ),
        ));
    }
}

/// Names CUDA's and ROCm's drivers and `nvidia-smi`.
const UPDATE_DRIVER: FixSpec = FixSpec::new(
    "update-gpu-driver",
    "Update the GPU driver",
    "更新 GPU 驱动",
)
.vendors(&[Vendor::Nvidia, Vendor::Amd]);

/// The NVIDIA kernel modules, `nvidia-smi` and the kernel log.
const CHECK_DRIVER_STATE: FixSpec = FixSpec::new(
    "check-gpu-driver-state",
    "Check the driver's state",
    "检查驱动的状态",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

const GPU_VISIBLE: FixSpec = FixSpec::new(
    "check-gpu-visible",
    "Check that the GPU is visible to the process",
    "确认进程看得到 GPU",
)
.vendors(&[Vendor::Nvidia, Vendor::Amd])
.cost(Cost::Look);

/// Same title as the GPU-crash family's; CUDA's tools.
const FIND_KERNEL: FixSpec = FixSpec::new(
    "status-find-failing-kernel",
    "Find the kernel that failed",
    "找出出错的 kernel",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

const LIBRARY_HEADROOM: FixSpec = FixSpec::new(
    "status-leave-memory-for-library",
    "Leave GPU memory for the library",
    "给库留出显存",
);

const LOOK_UP_CODE: FixSpec = FixSpec::new(
    "status-look-up-code",
    "Look up the code in its library's reference",
    "到所属库的文档里查这个状态码",
)
.cost(Cost::Look);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    UPDATE_DRIVER,
    CHECK_DRIVER_STATE,
    GPU_VISIBLE,
    FIND_KERNEL,
    LIBRARY_HEADROOM,
    LOOK_UP_CODE,
];
