//! A status-table code that is not an out-of-memory (`gpu_runtime_error`):
//! what the code means, from its table, and the fix its group of codes has.

use super::common::{fact, fix_en, verdict_en};
use super::docs::Code;
use super::Explain;
use crate::record::{fact as key, Diagnosis, Finding, Fix, Verdict};

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

/// `cudaErrorInsufficientDriver (35)`: the code's name and number.
fn code_of(f: &Finding) -> String {
    match (fact(f, key::ERROR_NAME), fact(f, "error_code")) {
        (Some(name), Some(number)) => format!("{name} ({number})"),
        (Some(name), None) => name.to_string(),
        _ => "an error status".to_string(),
    }
}

impl Explain for GpuRuntimeError {
    fn headline_en(&self, f: &Finding) -> String {
        let who = fact(f, "table_title").unwrap_or("GPU runtime");
        format!("A {who} call returned {}", code_of(f))
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        let who = fact(f, "table_title").unwrap_or("GPU runtime");
        let meaning = fact(f, "meaning").unwrap_or("The table gives no description for it.");
        let mut detail = format!("{} is a {who} status: {meaning}", code_of(f));
        if fact(f, "code_class") == Some("maybe") {
            detail.push_str(" It is not an out-of-memory status, but memory pressure is a common cause: the library could not allocate a handle or workspace and reported it this way.");
        } else {
            detail.push_str(" It is not an out-of-memory error.");
        }
        // The meaning's first clause is the answer to "why" when it is short
        // enough to be a title ("The installed NVIDIA CUDA driver is older
        // than the CUDA runtime library").
        let title = fact(f, "meaning")
            .and_then(|m| m.split(['.', ';']).next())
            .map(str::trim)
            .filter(|clause| (12..=100).contains(&clause.len()))
            .unwrap_or("What the status code means");
        out.push(verdict_en(Code::GpuStatusCode, title, detail));
    }

    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        let name = fact(f, key::ERROR_NAME).unwrap_or("");
        if DRIVER_TOO_OLD.contains(&name) {
            out.push(fix_en(
                "Update the GPU driver",
                "The driver is older than the CUDA (or ROCm) the program was built with. Install a newer driver (`nvidia-smi` shows the highest CUDA version the driver supports), or install a build of the program or framework for an older CUDA.",
            ));
        } else if NO_DEVICE.contains(&name) {
            out.push(fix_en(
                "Check that the GPU is visible to the process",
                "Run `nvidia-smi` (or `rocm-smi`) in the same environment; check `CUDA_VISIBLE_DEVICES`, and in a container that it was started with the GPU (`--gpus all`). A stub driver library on the library path also hides the GPU.",
            ));
        } else if STICKY_FAULT.contains(&name) {
            out.push(fix_en(
                "Find the kernel that failed",
                "The error is reported by a call after the kernel that failed. Run again with `CUDA_LAUNCH_BLOCKING=1` so the failing call is reported where it happens, or under `compute-sanitizer`; a restart is needed to use the GPU again.",
            ));
        }
        if fact(f, "code_class") == Some("maybe") {
            out.push(fix_en(
                "Leave GPU memory for the library",
                "Reduce the batch size or the model's footprint, stop other processes on the GPU, and in TensorFlow turn on memory growth (`tf.config.experimental.set_memory_growth(gpu, True)`) so the framework does not take all memory before cuDNN or cuBLAS asks for theirs.",
            ));
        }
        out.push(fix_en(
            "Look up the code in its library's reference",
            "The finding names the table, the code and where its meaning comes from (`oomwhy explain gpu_runtime_error` describes the tables). The call that returned it is usually on the same line or in the traceback.",
        ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
