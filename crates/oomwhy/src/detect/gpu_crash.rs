//! GPU crashes next to OOMs that are not OOMs (docs/formats.md §4.1):
//! device-side asserts with the kernel's `Assertion ... failed.` lines,
//! misaligned addresses, launch failures and missing kernel images.

use super::text::reported_token;
use super::text::{continues_with_boilerplate, is_boilerplate, message_text};
use super::{exception_name, Family, Message};
use crate::constant_regex;
use crate::context::{TracebackBuilder, TracebackEvent};
use crate::record::{fact, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct AssertPatterns {
    /// `/path/Indexing.cu:1146: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.`
    kernel_line: Regex,
    /// The same without the source location (some builds, HIP).
    kernel_line_bare: Regex,
    error: Regex,
    traceback_shape: Regex,
}

fn assert_patterns() -> &'static AssertPatterns {
    static P: OnceLock<AssertPatterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = constant_regex;
        AssertPatterns {
            kernel_line: re(
                r"(\S+\.(?:cu|cuh|h|hpp|cpp|hip)):(\d+): (\S.*?): block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion `(.*)` failed",
            ),
            kernel_line_bare: re(
                r"(\S+): block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion `(.*)` failed",
            ),
            error: re(
                r"(?:\b(CUDA|HIP) error: )?device-side assert triggered|\bcudaErrorAssert\b|\bCUDA_ERROR_ASSERT\b",
            ),
            traceback_shape: re(
                r"^(?:Traceback \(most recent call last\):|\s|During handling of the above exception|The above exception was the direct cause|$)",
            ),
        }
    })
}

/// One kernel assertion line: (source location, kernel, condition).
fn kernel_assertion(line: &str) -> Option<(usize, Option<String>, String, String)> {
    let p = assert_patterns();
    if let Some(c) = p.kernel_line.captures(line) {
        return Some((
            c.get(0)?.start(),
            Some(format!("{}:{}", &c[1], &c[2])),
            c[3].to_string(),
            c[4].to_string(),
        ));
    }
    let c = p.kernel_line_bare.captures(line)?;
    Some((c.get(0)?.start(), None, c[1].to_string(), c[2].to_string()))
}

/// The `device-side assert triggered` error, reported (not quoted in prose).
fn assert_error(line: &str) -> Option<regex::Match<'_>> {
    assert_patterns()
        .error
        .find_iter(line)
        .find(|m| m.as_str().contains(' ') || reported_token(line, m.start()))
}

/// `CUDA error: device-side assert triggered` and the `Assertion ... failed.`
/// lines the kernel prints, in either order. When the kernel's lines come
/// first, the traceback between them and the error belongs to this message.
pub struct DeviceSideAssert;

impl Family for DeviceSideAssert {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "device-side assert triggered",
            "] Assertion `",
            "cudaErrorAssert",
            "CUDA_ERROR_ASSERT",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        let kernel = kernel_assertion(line).map(|k| k.0);
        let error = assert_error(line).map(|m| m.start());
        match (kernel, error) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        if lines.len() >= 400 {
            return false;
        }
        if kernel_assertion(next).is_some() || is_boilerplate(next) {
            return true;
        }
        if next
            .trim_start()
            .starts_with("Device-side assertion tracking was not enabled")
        {
            return true;
        }
        let have_error = lines.iter().any(|l| assert_error(l).is_some());
        !have_error
            && (assert_error(next).is_some() || assert_patterns().traceback_shape.is_match(next))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let mut kept: Vec<String> = Vec::new();
        let mut conditions: Vec<(Option<String>, String, String)> = Vec::new();
        let mut kernel_lines = 0u64;
        let mut error_prefix: Option<String> = None;
        let mut backend = "cuda";
        let mut traceback = None;
        let mut builder = TracebackBuilder::default();
        for (i, line) in message.lines.iter().enumerate() {
            if let Some((start, location, kernel, condition)) = kernel_assertion(line) {
                kernel_lines += 1;
                let key = (location, kernel, condition);
                if !conditions.contains(&key) {
                    if conditions.len() < 3 {
                        kept.push(line[start..].trim_end().to_string());
                    }
                    conditions.push(key);
                }
                continue;
            }
            if let Some(m) = assert_error(line) {
                if error_prefix.is_none() {
                    let prefix = if i == 0 {
                        message.prefix
                    } else {
                        &line[..m.start()]
                    };
                    error_prefix = Some(prefix.to_string());
                    if line[m.start()..].starts_with("HIP") {
                        backend = "hip";
                    }
                    if i > 0 && builder.feed(line) == TracebackEvent::ExceptionLine {
                        traceback = builder.take_completed();
                    }
                    kept.push(line[m.start()..].trim_end().to_string());
                }
                continue;
            }
            if is_boilerplate(line) || line.trim_start().starts_with("Device-side assertion") {
                if !line.trim_start().starts_with("frame #") {
                    kept.push(line.trim_end().to_string());
                }
                continue;
            }
            // Traceback lines between the kernel's lines and the error.
            builder.feed(line);
        }
        let mut finding = message.finding(Kind::DeviceSideAssert, kept.join("\n"));
        finding.exception = error_prefix.as_deref().and_then(exception_name);
        finding.backend = Some(backend.into());
        finding.traceback = traceback;
        finding
            .facts
            .insert(fact::ERROR_NAME.into(), "cudaErrorAssert".into());
        finding.facts.insert("error_code".into(), "710".into());
        // Old releases print the number from before CUDA 10.1 (59).
        if let Some(old) = super::text::old_number_for(
            &format!("{}{}", message.prefix, message.joined()),
            "cudaErrorAssert",
        ) {
            super::text::numbered_before_10_1(&mut finding, old, "cudaErrorAssert", "710");
        }
        if let Some((location, kernel, condition)) = conditions.first() {
            finding
                .facts
                .insert(fact::ASSERTION.into(), condition.clone());
            finding.facts.insert(fact::KERNEL.into(), kernel.clone());
            if let Some(location) = location {
                finding.facts.insert("source".into(), location.clone());
            }
            finding
                .facts
                .insert("assertion_lines".into(), kernel_lines.to_string());
        }
        if conditions.len() > 1 {
            let others: Vec<&str> = conditions[1..].iter().map(|c| c.2.as_str()).collect();
            finding
                .facts
                .insert("other_assertions".into(), others.join("; "));
        }
        if error_prefix.is_none() {
            finding.facts.insert("error_line".into(), "missing".into());
        }
        Some(finding)
    }
}

/// The three other kernel errors: (kind, anchor). The runtime's string is
/// read after any wrapper that prints it as CUDA's or HIP's error: PyTorch's
/// `CUDA error: `, Triton's launcher's `Triton Error [CUDA]: ` (its
/// driver module's `PyErr_Format`).
fn kernel_error_anchors() -> &'static [(Kind, Regex, &'static str, &'static str)] {
    static P: OnceLock<Vec<(Kind, Regex, &'static str, &'static str)>> = OnceLock::new();
    P.get_or_init(|| {
        let re = constant_regex;
        vec![
            (
                Kind::MisalignedAddress,
                re(r"(?:\b(?:CUDA|HIP) error|\bTriton Error \[(?:CUDA|HIP)\]): misaligned address\b|\bcudaErrorMisalignedAddress\b|\bCUDA_ERROR_MISALIGNED_ADDRESS\b|\bCUDA failure 716\b"),
                "cudaErrorMisalignedAddress",
                "716",
            ),
            (
                Kind::LaunchFailure,
                // cuBLAS's "the GPU program failed to execute", as PyTorch's
                // TORCH_CUDABLAS_CHECK prints it (`CUDA error:
                // CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm(...)``)
                // or another library prints the status alone.
                re(r"(?:\b(?:CUDA|HIP) error|\bTriton Error \[(?:CUDA|HIP)\]): unspecified launch failure\b|\bcudaErrorLaunchFailure\b|\bCUDA_ERROR_LAUNCH_FAILED\b|\bCUDA failure 719\b|\b(?:CUDA error: )?CUBLAS_STATUS_EXECUTION_FAILED\b"),
                "cudaErrorLaunchFailure",
                "719",
            ),
            (
                Kind::NoKernelImage,
                re(r"(?:\b(?:CUDA|HIP) error: |\bTriton Error \[(?:CUDA|HIP)\]: )?\bno kernel image is available for execution on the device\b|\bcudaErrorNoKernelImageForDevice\b|\bCUDA_ERROR_NO_BINARY_FOR_GPU\b|\bhipErrorNoBinaryForGpu\b"),
                "cudaErrorNoKernelImageForDevice",
                "209",
            ),
        ]
    })
}

/// The first reported kernel error on the line: (kind, start, name, code).
fn kernel_error(line: &str) -> Option<(Kind, usize, &'static str, &'static str)> {
    kernel_error_anchors()
        .iter()
        .filter_map(|(kind, re, name, code)| {
            re.find_iter(line)
                .find(|m| m.as_str().contains(' ') || reported_token(line, m.start()))
                .map(|m| (*kind, m.start(), *name, *code))
        })
        .min_by_key(|k| k.1)
}

/// A C, CUDA or Python source file with its line, as a message names where
/// it was raised.
fn source_location() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"[\w./\\-]+\.(?:cuh|cu|hpp|h|cc|cpp|cxx|c|py)\b(?::\d+)?"))
}

/// The cuBLAS call PyTorch names after a failed status (`when calling `cublasSgemm( handle, ...)``);
/// the call is sometimes cut before its closing backtick.
fn cublas_call() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"CUBLAS_STATUS_EXECUTION_FAILED when calling `?(\w+)"))
}

/// `CUDA error: misaligned address`, `CUDA error: unspecified launch failure`
/// and `CUDA error: no kernel image is available for execution on the device`.
pub struct KernelError;

impl Family for KernelError {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "misaligned address",
            "cudaErrorMisalignedAddress",
            "CUDA_ERROR_MISALIGNED_ADDRESS",
            "CUDA failure 716",
            "unspecified launch failure",
            "cudaErrorLaunchFailure",
            "CUDA_ERROR_LAUNCH_FAILED",
            "CUDA failure 719",
            "CUBLAS_STATUS_EXECUTION_FAILED",
            "no kernel image is available",
            "cudaErrorNoKernelImageForDevice",
            "CUDA_ERROR_NO_BINARY_FOR_GPU",
            "hipErrorNoBinaryForGpu",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        kernel_error(line).map(|k| k.1)
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        // ggml prints the failing device and function on the next line
        // (`current device: 0, in function ggml_cuda_compute_forward at
        // .../ggml-cuda.cu:2761`), which names the program, past its abort
        // line where that came first.
        super::cuda::ggml_error_continues(lines, next) || continues_with_boilerplate(lines, next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        let (kind, start, name, code) = kernel_error(first)?;
        let mut finding = message.finding(kind, message_text(message.lines));
        // The source file the message names before its error (`CUDA error
        // (…/hopper/flash_fwd_launch_template.h:197): no kernel image …`):
        // which library failed, e.g. one built for a fixed set of GPUs.
        let before = format!("{}{}", message.prefix, &first[..start]);
        if let Some(location) = source_location().find(&before) {
            finding
                .facts
                .insert(fact::LOCATION.into(), location.as_str().to_string());
        }
        let hip = first.starts_with("HIP")
            || first.starts_with("Triton Error [HIP]")
            || first.contains("hipError");
        finding.backend = Some(if hip { "hip" } else { "cuda" }.into());
        let cublas = cublas_call().captures(first);
        if kind == Kind::LaunchFailure && first.contains("CUBLAS_STATUS_EXECUTION_FAILED") {
            finding.era = Some(Era::CublasExecution);
            finding.facts.insert("library".into(), "cublas".into());
            finding
                .facts
                .insert("status".into(), "CUBLAS_STATUS_EXECUTION_FAILED".into());
            if let Some(call) = cublas.and_then(|c| c.get(1)) {
                finding
                    .facts
                    .insert("call".into(), call.as_str().to_string());
            }
        } else if hip && kind == Kind::NoKernelImage && first.contains("hipErrorNoBinaryForGpu") {
            finding
                .facts
                .insert(fact::ERROR_NAME.into(), "hipErrorNoBinaryForGpu".into());
        } else {
            finding.facts.insert(fact::ERROR_NAME.into(), name.into());
            finding.facts.insert("error_code".into(), code.into());
            // Old releases print the number from before CUDA 10.1 (`error=48
            // : no kernel image ...`, 209 since): kept as printed.
            if let Some(old) = (!hip)
                .then(|| super::text::old_number_for(&format!("{}{}", message.prefix, first), name))
                .flatten()
            {
                super::text::numbered_before_10_1(&mut finding, old, name, code);
            }
        }
        finding.device = super::cuda::stated_device(message.lines);
        if message.joined().contains("asynchronously reported") {
            finding.facts.insert("async_warning".into(), "true".into());
        }
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::decode_lines as collect;

    /// FlashAttention-3's own check names its header before the error
    /// (a real report on an RTX 5090, quoted in prose in another): the file
    /// is kept as the finding's location.
    #[test]
    fn the_file_before_a_kernel_error_is_its_location() {
        for (line, location) in [
            ("CUDA error (/home/user/flash-attention/hopper/flash_fwd_launch_template.h:197): no kernel image is available for execution on the device", "/home/user/flash-attention/hopper/flash_fwd_launch_template.h:197"),
            ("At line 197 of the path `flash-attention-main/hopper/flash_fwd_launch_template.h`, an error is reported: “no kernel image is available for execution on the device”.", "flash-attention-main/hopper/flash_fwd_launch_template.h"),
        ] {
            let f = collect(&KernelError, &[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(f.facts.get(fact::LOCATION).map(String::as_str), Some(location));
        }
        let f = collect(&KernelError, &["RuntimeError: CUDA error: no kernel image is available for execution on the device"]).unwrap();
        assert_eq!(f.facts.get(fact::LOCATION), None);
    }

    #[test]
    fn kernel_lines_then_traceback_then_error() {
        let f = collect(
            &DeviceSideAssert,
            &[
                "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [193,0,0], thread: [96,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
                "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [193,0,0], thread: [97,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
                "Traceback (most recent call last):",
                "  File \"train.py\", line 41, in <module>",
                "    loss = model(input_ids, labels=labels).loss",
                "RuntimeError: CUDA error: device-side assert triggered",
                "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
                "",
                "Epoch 2",
            ],
        )
        .unwrap();
        assert_eq!(f.kind, Kind::DeviceSideAssert);
        assert_eq!(f.facts["assertion"], "srcIndex < srcSelectDimSize");
        assert_eq!(f.facts["kernel"], "indexSelectLargeIndex");
        assert_eq!(f.facts["assertion_lines"], "2");
        assert_eq!(f.exception.as_deref(), Some("RuntimeError"));
        let tb = f.traceback.as_ref().unwrap();
        assert_eq!(tb.frames.len(), 1);
        assert_eq!(tb.frames[0].function, "<module>");
        assert!(f.text.contains("CUDA error: device-side assert triggered"));
        assert!(!f.text.contains("File \""));
    }

    #[test]
    fn error_then_kernel_lines() {
        let f = collect(
            &DeviceSideAssert,
            &[
                "torch.AcceleratorError: CUDA error: device-side assert triggered",
                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
                "../aten/src/ATen/native/cuda/Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.",
                "next",
            ],
        )
        .unwrap();
        assert_eq!(f.facts["assertion"], "t >= 0 && t < n_classes");
        assert_eq!(
            f.facts["source"],
            "../aten/src/ATen/native/cuda/Loss.cu:240"
        );
        assert_eq!(f.exception.as_deref(), Some("torch.AcceleratorError"));
    }

    #[test]
    fn assertion_spellings() {
        for (line, condition) in [
            ("/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:367: operator(): block: [0,0,0], thread: [0,0,0] Assertion `idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"` failed.", "idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\""),
            ("C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\cuda\\Loss.cu:94: block: [0,0,0], thread: [0,0,0] Assertion `input_val >= zero && input_val <= one` failed.", "input_val >= zero && input_val <= one"),
            ("indexSelectSmallIndex: block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.", "srcIndex < srcSelectDimSize"),
        ] {
            let f = collect(&DeviceSideAssert, &[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(f.facts["assertion"], condition);
            assert_eq!(f.facts["error_line"], "missing");
        }
    }

    #[test]
    fn assert_negatives() {
        for line in [
            "    if \"device-side assert triggered\" in str(e):",
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
            "assert x.shape[0] == 3, 'Assertion `x` failed'",
        ] {
            let found = DeviceSideAssert
                .start(line)
                .filter(|&s| !crate::detect::is_quoted(&line[..s]));
            assert!(found.is_none(), "{line}");
        }
    }

    #[test]
    fn kernel_error_spellings() {
        for (line, kind) in [
            ("RuntimeError: CUDA error: misaligned address", Kind::MisalignedAddress),
            ("torch.AcceleratorError: CUDA error: misaligned address", Kind::MisalignedAddress),
            ("CUDA failure 716: misaligned address", Kind::MisalignedAddress),
            ("RuntimeError: CUDA error: unspecified launch failure", Kind::LaunchFailure),
            ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`", Kind::LaunchFailure),
            ("报错RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling cublasSgemm，cuda10.0   cudnn7.4.0", Kind::LaunchFailure),
            ("error: cudaErrorLaunchFailure", Kind::LaunchFailure),
            ("RuntimeError: CUDA error: no kernel image is available for execution on the device", Kind::NoKernelImage),
            ("CUDA error 209 at ggml-cuda.cu:123: no kernel image is available for execution on the device", Kind::NoKernelImage),
            ("HIP error: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", Kind::NoKernelImage),
        ] {
            let f = collect(&KernelError, &[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(f.kind, kind, "{line}");
        }
        assert!(KernelError
            .start("if err == cudaErrorLaunchFailure:")
            .is_none());
        assert!(KernelError
            .start("misaligned address in CPU code")
            .is_none());
    }
}
