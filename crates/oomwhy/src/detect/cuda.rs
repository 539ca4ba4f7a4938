//! CUDA runtime and driver errors (docs/formats.md §2.3 E0/E1, §4):
//! out-of-memory without sizes, and illegal memory access.

use super::text::{continues_with_boilerplate, message_text};
use super::{Family, Message};
use crate::constant_regex;
use crate::record::{fact, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct RuntimePatterns {
    anchor: Regex,
    thc: Regex,
    thc_check: Regex,
    other: Regex,
    theano: Regex,
}

fn runtime_patterns() -> &'static RuntimePatterns {
    static P: OnceLock<RuntimePatterns> = OnceLock::new();
    P.get_or_init(|| RuntimePatterns {
        anchor: constant_regex(r"\b(CUDA|HIP) ([Ee]rror|driver error):\s*out of memory"),
        thc: constant_regex(r"cuda runtime error \(2\) : out of memory(?: at (\S+:\d+))?"),
        thc_check: constant_regex(
            r"THCudaCheck FAIL file=(\S+) line=(\d+) error=2 : out of memory",
        ),
        // Other tools that report the driver's or runtime's own error code
        // (Numba, KeOps, pygpu, JCuda: the driver API name; tinygrad, ggml,
        // spconv: the number 2; PyCUDA: `cuMemAlloc failed`; torch_memory_saver:
        // `CUresult error result=2`; darknet: `Cuda malloc failed`; Theano:
        // `Error allocating N bytes of device memory (out of memory). Driver
        // report F bytes free and T bytes total`); cuDF and RMM: `CUDA error
        // [encountered ]at: FILE:LINE: [2 ]cudaErrorMemoryAllocation out of
        // memory` (the error's name, then its string); TensorRT: `Cuda Error in
        // CALL: 2 (out of memory)`.
        other: constant_regex(
            r"\bCUDA error (?:encountered )?at: \S+: (?:\d+ )?cudaErrorMemoryAllocation out of memory|\bcudaErrorMemoryAllocation out of memory\b|\bCuda Error in \S.{0,200}?: 2 \(out of memory\)|\bCUDA_ERROR_OUT_OF_MEMORY\b|\bCUDA [Ee]rror 2, out of memory|\bCUDA error 2 at \S+: out of memory|\b[Cc]uda failed with error 2\b|\bcuda runtime error: out of memory|\bcuMemAlloc failed: out of memory|\bCUresult error\s+result=2\b|\bCuda malloc failed\b|\bError allocating \d+ bytes of device memory \(out of memory\)",
        ),
        theano: constant_regex(
            r"Error allocating (\d+) bytes of device memory \(out of memory\)\.(?: Driver report (\d+) bytes free and (\d+) bytes total)?",
        ),
    })
}

/// Who printed a tool's form of the runtime's or driver's error (`other`).
fn reporter(matched: &str) -> &'static str {
    use crate::i18n::reporter as R;
    const BY_FORM: &[(&str, &str)] = &[
        ("CUDA error encountered at", "cuDF"),
        ("CUDA error at", "RAPIDS Memory Manager (RMM)"),
        ("Cuda Error in", "TensorRT"),
        ("CUDA Error 2, out of memory", "tinygrad"),
        ("CUDA error 2 at", "ggml"),
        ("uda failed with error 2", "spconv"),
        ("cuMemAlloc failed", "PyCUDA"),
        ("CUresult error", "torch_memory_saver"),
        ("Cuda malloc failed", "darknet"),
        ("Error allocating", "Theano"),
        ("CUDA_ERROR_OUT_OF_MEMORY", R::CUDA_DRIVER_CALL.en),
    ];
    BY_FORM
        .iter()
        .find(|(form, _)| matched.contains(form))
        .map_or(R::CUDA_RUNTIME_CALL.en, |(_, by)| by)
}

/// `CUDA error: out of memory`, `CUDA driver error: out of memory`,
/// `cuda runtime error (2) : out of memory at ...` and `THCudaCheck FAIL ... error=2`.
pub struct RuntimeOom;

impl Family for RuntimeOom {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "error: out of memory",
            "error (2) : out of memory",
            "error=2 : out of memory",
            "rror:out of memory",
            "Error: out of memory",
            "CUDA_ERROR_OUT_OF_MEMORY",
            "Error 2, out of memory",
            "failed: out of memory",
            "result=2",
            "Cuda malloc failed",
            "cudaErrorMemoryAllocation out of memory",
            ": 2 (out of memory)",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        let p = runtime_patterns();
        if let Some(m) = [&p.anchor, &p.thc, &p.thc_check]
            .iter()
            .find_map(|re| re.find(line))
        {
            return Some(m.start());
        }
        let m = p.other.find(line)?;
        // A framework's own report that states what it tried to allocate
        // (TensorFlow's `failed to allocate 32.00M (33554432 bytes) from
        // device: CUDA_ERROR_OUT_OF_MEMORY`, its `failed to alloc N bytes
        // unified memory` and `... on host`) belongs to that framework.
        let before = &line[..m.start()];
        if before.contains("allocate")
            || before.contains("from device")
            || before.contains("failed to alloc ")
        {
            return None;
        }
        // Source code that names the constant (`if (result ==
        // CUDA_ERROR_OUT_OF_MEMORY)`, `case CUDA_ERROR_OUT_OF_MEMORY:`) is
        // not a report of it.
        let code = ["==", "!=", "=", "(", ",", "case", "return", "<<"];
        if code.iter().any(|c| before.trim_end().ends_with(c)) {
            return None;
        }
        Some(m.start())
    }

    /// The error's number 2 in the forms that print it; elsewhere the
    /// patterns match digits as a class.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&[
            "error (2)",
            "error=2",
            ": 2 (",
            "rror 2,",
            "error 2 at",
            "with error 2",
            "result=2",
        ])
    }

    /// `continues` compares words; `decode` reads from the prefix only an
    /// exception's name at its end.
    fn message_figure_blind(&self) -> bool {
        true
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        // ggml prints the failing device on the next line (past its own
        // abort line, where that came first); darknet its `check_error`
        // assertion, which names it.
        ggml_error_continues(lines, next)
            || (lines.len() == 1 && is_darknet_assert(next))
            || continues_with_boilerplate(lines, next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = runtime_patterns();
        let first = message.lines.first()?;
        let mut finding = message.finding(Kind::CudaRuntimeOom, message_text(message.lines));
        finding.device = stated_device(message.lines);
        if let Some(caps) = p.anchor.captures(first) {
            finding.backend = Some(caps[1].to_ascii_lowercase());
            let driver = &caps[2] == "driver error";
            finding.era = Some(if driver { Era::Driver } else { Era::Runtime });
            finding.facts.insert(
                fact::ERROR_NAME.into(),
                if driver {
                    "CUDA_ERROR_OUT_OF_MEMORY"
                } else {
                    "cudaErrorMemoryAllocation"
                }
                .into(),
            );
        } else if let Some(caps) = p.thc.captures(first) {
            finding.backend = Some("cuda".into());
            finding.era = Some(Era::Thc);
            finding.version_hint = Some("PyTorch ≤0.4".into());
            finding.facts.insert("error_code".into(), "2".into());
            if let Some(at) = caps.get(1) {
                finding
                    .facts
                    .insert(fact::LOCATION.into(), at.as_str().to_string());
            }
        } else if let Some(caps) = p.thc_check.captures(first) {
            finding.backend = Some("cuda".into());
            finding.era = Some(Era::Thc);
            finding.version_hint = Some("PyTorch ≤0.4".into());
            finding.facts.insert("error_code".into(), "2".into());
            finding
                .facts
                .insert(fact::LOCATION.into(), format!("{}:{}", &caps[1], &caps[2]));
        } else if let Some(m) = p.other.find(first) {
            if let Some(c) = p.theano.captures(&message.joined()) {
                let n = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<u64>().ok());
                finding.sizes.requested_bytes = n(1);
                finding.sizes.free_bytes = n(2);
                finding.sizes.total_bytes = n(3);
            }
            finding.backend = Some("cuda".into());
            finding
                .facts
                .insert(fact::REPORTED_BY.into(), reporter(m.as_str()).into());
            let named = m.as_str().contains("CUDA_ERROR") || m.as_str().starts_with("CUresult");
            finding.era = Some(if named { Era::Driver } else { Era::Runtime });
            finding.facts.insert(
                fact::ERROR_NAME.into(),
                if named {
                    "CUDA_ERROR_OUT_OF_MEMORY"
                } else {
                    "cudaErrorMemoryAllocation"
                }
                .into(),
            );
        }
        // The program that printed the error, where its own marks show:
        // FFmpeg's log context before the message (`[h264_nvenc @ 0x55d0...]
        // ...cuCtxCreate(...) failed -> CUDA_ERROR_OUT_OF_MEMORY`), darknet's
        // `check_error` assertion after it.
        if let Some(c) = ffmpeg_context().captures(message.prefix.trim_start()) {
            finding
                .facts
                .insert(fact::REPORTED_BY.into(), format!("FFmpeg ({})", &c[1]));
            // Creating the encoder's CUDA context is not opening a session.
            if message.prefix.contains("cuCtxCreate") {
                finding
                    .facts
                    .insert(fact::LOCATION.into(), "cuCtxCreate".into());
            }
        } else if message.lines.iter().skip(1).any(|l| is_darknet_assert(l)) {
            finding
                .facts
                .insert(fact::REPORTED_BY.into(), "darknet".into());
        }
        Some(finding)
    }
}

/// The device a CUDA error's own fields name: CNTK's and ONNX Runtime's
/// `CUDA failure N: ... ; GPU=0 ; hostname=...` (and `CUBLAS failure N:
/// ... ; GPU=0 ;`), ggml's follow-up line `current device: 0, in function
/// ...`. A field that is not a small index (ONNX Runtime prints an unset
/// one as `GPU=-2011338632`) names none.
pub(super) fn stated_device(lines: &[String]) -> Option<u32> {
    let index = |rest: &str| -> Option<u32> {
        let digits = rest.split(|c: char| !c.is_ascii_digit()).next()?;
        (!digits.is_empty() && digits.len() <= 4)
            .then(|| digits.parse().ok())
            .flatten()
    };
    lines.iter().find_map(|line| {
        if let Some((_, rest)) = line.split_once("; GPU=") {
            return index(rest);
        }
        line.trim_start()
            .strip_prefix("current device: ")
            .and_then(index)
    })
}

/// Whether `next` continues ggml's CUDA error whose lines so far are
/// `lines`. `ggml_cuda_error` logs the error, then `current device: N, in
/// function F at FILE:LINE` and the failed statement, then aborts with
/// `FILE:LINE: CUDA error` (older releases: `GGML_ASSERT: FILE:LINE:
/// !"CUDA error"`). The three lines go through ggml's log callback, which
/// llama.cpp's programs hand to an asynchronous logger, while the abort
/// writes to stderr at once: the abort line can come right after the
/// error, before the device line. The device line is taken right after
/// the error or after that abort line.
pub(super) fn ggml_error_continues(lines: &[String], next: &str) -> bool {
    match lines {
        [_] => next.trim_start().starts_with("current device: ") || is_ggml_cuda_abort(next),
        [_, abort] => {
            is_ggml_cuda_abort(abort) && next.trim_start().starts_with("current device: ")
        }
        _ => false,
    }
}

/// ggml's abort after a CUDA error, in its own source file:
/// `ggml/src/ggml-cuda/ggml-cuda.cu:98: CUDA error` (`ROCm error`, `MUSA
/// error` in those builds), `GGML_ASSERT: ...ggml-cuda.cu:229: !"CUDA error"`.
fn is_ggml_cuda_abort(line: &str) -> bool {
    let line = line.trim();
    line.contains("ggml-cuda") && (line.ends_with(" error") || line.ends_with(" error\""))
}

/// FFmpeg's log context: `[h264_nvenc @ 0x55d020323ac0] `.
fn ffmpeg_context() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"^\[(\w+) @ (?:0x)?[0-9a-fA-F]+\] "))
}

/// darknet's `check_error` assertion after a CUDA error:
/// `darknet: ./src/cuda.c:36: check_error: Assertion `0' failed.`
fn is_darknet_assert(line: &str) -> bool {
    line.contains(": check_error: Assertion")
}

fn illegal_anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(concat!(
            r"(?:\b(?:CUDA|HIP) error: an illegal memory access was encountered",
            r"|CUDA failure \d+: an illegal memory access",
            r"|CUDA failure 700\b",
            r"|\bcudaErrorIllegalAddress\b",
            r"|\bCUDA_ERROR_ILLEGAL_ADDRESS\b",
            r"|\ban illegal memory access was encountered)"
        ))
    })
}

/// The CUDA runtime's string for an illegal address.
const ILLEGAL_STRING: &str = "an illegal memory access was encountered";

/// The shortest cut of [`ILLEGAL_STRING`] read as it (`an illeg`).
const ILLEGAL_CUT_MIN: usize = 8;

/// An error prefix that names CUDA at the end of a line, then the start of
/// the runtime's string cut there: `RuntimeError: CUDA error: an illeg`
/// (a page's hard wrap, the rest on the next line), `ds4: CUDA end commands
/// failed: an illegal memory a` (a paste cut short). Group 1 is the cut.
fn illegal_cut_anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(r"(?:\b(?:CUDA|HIP) error|\bCUDA\b[^:\n]{0,60}\bfailed): (an ille[a-z ]*)$")
    })
}

/// Where a cut of the runtime's string starts at the end of `line`, and the
/// cut: a prefix of [`ILLEGAL_STRING`] of at least [`ILLEGAL_CUT_MIN`]
/// bytes, shorter than the whole.
fn illegal_cut(line: &str) -> Option<(usize, &str)> {
    let c = illegal_cut_anchor().captures(line.trim_end())?;
    let cut = c.get(1)?.as_str();
    let is_cut = cut.len() >= ILLEGAL_CUT_MIN
        && cut.len() < ILLEGAL_STRING.len()
        && ILLEGAL_STRING.starts_with(cut);
    is_cut.then(|| (c.get(0).map_or(0, |m| m.start()), cut))
}

/// The error number an illegal-access message prints (`CUDA failure 77: ...`).
fn printed_code() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"^(?:CUDA|HIP) failure (\d+)\b"))
}

/// `CUDA error: an illegal memory access was encountered` and its spellings.
pub struct IllegalAccess;

impl Family for IllegalAccess {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "illegal memory access",
            "cudaErrorIllegalAddress",
            "CUDA_ERROR_ILLEGAL_ADDRESS",
            "CUDA failure 700",
            // The runtime's string cut at the end of a line (`CUDA error:
            // an illeg`), on the piece `ille`.
            ": an ille",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        illegal_anchor()
            .find(line)
            .map(|m| m.start())
            .or_else(|| illegal_cut(line).map(|(start, _)| start))
    }

    /// The rest of the runtime's string on the next line, after a line that
    /// ends in its cut (`... CUDA error: an illeg` / `al memory access was
    /// encountered ...`): a wrap that split a word.
    fn glues(&self, lines: &[String], next: &str) -> bool {
        let [first] = lines else {
            return false;
        };
        let Some((_, cut)) = illegal_cut(first) else {
            return false;
        };
        let rest = &ILLEGAL_STRING[cut.len()..];
        let next = next.trim_end();
        !next.is_empty() && (next.starts_with(rest) || rest.starts_with(next))
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        continues_with_boilerplate(lines, next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        let mut finding = message.finding(Kind::IllegalMemoryAccess, message_text(message.lines));
        finding.backend = Some(
            if first.starts_with("HIP") {
                "hip"
            } else {
                "cuda"
            }
            .into(),
        );
        let hip = first.starts_with("HIP");
        finding.facts.insert(
            fact::ERROR_NAME.into(),
            if hip {
                "hipErrorIllegalAddress"
            } else {
                "cudaErrorIllegalAddress"
            }
            .into(),
        );
        // A printed code is kept as printed: CUDA before 10.1 numbered this
        // error 77, later releases 700 (the code when none is printed).
        // THC's check prints it before the string, on the prefix
        // (`THCudaCheck FAIL file=... line=278 error=77 : an illegal ...`):
        // a number from before CUDA 10.1 is kept as printed too.
        let printed = printed_code().captures(first).map(|c| c[1].to_string());
        finding
            .facts
            .insert("error_code".into(), printed.unwrap_or_else(|| "700".into()));
        let line = format!("{}{}", message.prefix, first);
        if let Some(old) = (!hip)
            .then(|| super::text::old_number_for(&line, "cudaErrorIllegalAddress"))
            .flatten()
        {
            super::text::numbered_before_10_1(&mut finding, old, "cudaErrorIllegalAddress", "700");
        }
        let joined = message.joined();
        finding.device = stated_device(message.lines);
        if joined.contains("asynchronously reported") {
            finding.facts.insert("async_warning".into(), "true".into());
        }
        Some(finding)
    }
}

/// ONNX Runtime's CUDA execution provider returning a failed call as a
/// status (`CUDA_RETURN_IF_ERROR` and its cuBLAS, cuDNN, cuRAND, cuFFT and
/// cuSPARSE siblings in `core/providers/cuda/cuda_common.h`): `CUDA error
/// executing cudaMemcpy(dst_data, src_data, bytes, cudaMemcpyDeviceToHost)`,
/// raised as `[ONNXRuntimeError] : 1 : FAIL : ...`. The code itself went
/// only to ORT's log before it, so the finding is a GPU runtime error whose
/// code is not in the message: a crash, not an out of memory.
pub struct OrtCallFailed;

fn ort_call() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(r"\b(CUDA|CUBLAS|CUDNN|CURAND|CUFFT|CUSPARSE) error executing (\w+)\(")
    })
}

impl Family for OrtCallFailed {
    fn triggers(&self) -> &'static [&'static str] {
        &["error executing "]
    }

    fn start(&self, line: &str) -> Option<usize> {
        ort_call().find(line).map(|m| m.start())
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let text = message.joined();
        let c = ort_call().captures(&text)?;
        let mut finding = message.finding(Kind::GpuRuntimeError, text.trim_end().to_string());
        finding.backend = Some("cuda".into());
        let library = match &c[1] {
            "CUDA" => "CUDA runtime",
            "CUBLAS" => "cuBLAS",
            "CUDNN" => "cuDNN",
            "CURAND" => "cuRAND",
            "CUFFT" => "cuFFT",
            _ => "cuSPARSE",
        };
        finding.facts.insert("library".into(), library.into());
        finding.facts.insert(fact::CALL.into(), c[2].to_string());
        finding
            .facts
            .insert(fact::REPORTED_BY.into(), "ONNX Runtime".into());
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_illegal_access_cut_at_a_line_end() {
        // A traceback flattened onto lines a page wrapped (wild paste): the
        // runtime's string split inside a word.
        let first = "_engine_run_backward( File \"/opt/conda/lib/python3.11/site-packages/torch/autograd/graph.py\", line 823, in _engine_run_backward return Variable._execution_engine.run_backward( # Calls into the C++ engine to run the backward pass ^^^^^ RuntimeError: CUDA error: an illeg";
        let next = "al memory access was encountered Compile with TORCH_USE_CUDA_DSA to enable device-side assertions.";
        let start = IllegalAccess.start(first).unwrap();
        let mut body = lines(&[&first[start..]]);
        // The scanner glues the next line on, without a space.
        assert!(IllegalAccess.glues(&body, next));
        body[0].push_str(next);
        let m = Message {
            input: "t",
            line: 1,
            prefix: &first[..start],
            lines: &body,
        };
        let f = IllegalAccess.decode(&m).unwrap();
        assert_eq!(f.kind, Kind::IllegalMemoryAccess);
        assert!(
            f.text
                .starts_with("CUDA error: an illegal memory access was encountered"),
            "{}",
            f.text
        );
        // A log line cut short where the paste ends (wild paste).
        let line = "ds4: CUDA end commands failed: an illegal memory a";
        assert_eq!(IllegalAccess.start(line), Some(5));
        // Too short to tell, or another string.
        assert!(IllegalAccess
            .start("RuntimeError: CUDA error: an ill")
            .is_none());
        assert!(IllegalAccess
            .start("RuntimeError: CUDA error: an illegal instruction was encountered")
            .is_none());
        // The next line glues only when it carries the rest of the string.
        let first = vec!["RuntimeError: CUDA error: an illeg".to_string()];
        assert!(IllegalAccess.glues(&first, "al memory access was encountered"));
        assert!(!IllegalAccess.glues(&first, "Traceback (most recent call last):"));
    }

    #[test]
    fn runtime_oom_spellings() {
        for (line, era) in [
            ("RuntimeError: CUDA error: out of memory", "runtime"),
            ("RuntimeError: CUDA driver error: out of memory", "driver"),
            ("RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265", "thc"),
            ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=844 error=2 : out of memory", "thc"),
            // cuDF, RMM and TensorRT name the runtime's error.
            ("RuntimeError: CUDA error encountered at: ../src/bitmask/null_mask.cu:93: 2 cudaErrorMemoryAllocation out of memory", "runtime"),
            ("MemoryError: std::bad_alloc: out_of_memory: CUDA error at: /opt/conda/include/rmm/mr/device/cuda_memory_resource.hpp:70: cudaErrorMemoryAllocation out of memory", "runtime"),
            ("[E] [TRT] C:\\source\\rtSafe\\safeRuntime.cpp (25) - Cuda Error in nvinfer1::internal::DefaultAllocator::allocate: 2 (out of memory)", "runtime"),
        ] {
            let start = RuntimeOom.start(line).expect(line);
            let body = lines(&[&line[start..]]);
            let m = Message { input: "t", line: 1, prefix: &line[..start], lines: &body };
            let f = RuntimeOom.decode(&m).unwrap();
            assert_eq!(f.era.map(Era::slug), Some(era), "{line}");
        }
    }

    #[test]
    fn boilerplate_continues() {
        let first = lines(&["CUDA error: out of memory"]);
        assert!(RuntimeOom.continues(&first, "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."));
        assert!(RuntimeOom.continues(
            &first,
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."
        ));
        assert!(RuntimeOom.continues(&first, "Search for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information."));
        assert!(!RuntimeOom.continues(&first, "Epoch 1"));
    }

    #[test]
    fn illegal_access_spellings() {
        for line in [
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "CUDA failure 700: an illegal memory access was encountered",
            "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
            "error: cudaErrorIllegalAddress",
        ] {
            assert!(IllegalAccess.start(line).is_some(), "{line}");
        }
        assert!(IllegalAccess.start("CUDA error: out of memory").is_none());
    }

    #[test]
    fn ggml_device_line_is_read_past_the_abort_line_before_it() {
        // A mirror of a llama.cpp issue: ggml's abort line came between the
        // error and its device line.
        let text = "CUDA error: out of memory\nggml/src/ggml-cuda/ggml-cuda.cu: CUDA error\ncurrent device: 0, in function alloc\nggml_cuda_device_malloc(&ptr, look_ahead_size, device)\nThe same binary runs fine on Windows 10/11 with identical hardware.\n";
        let found = crate::decode_str(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::CudaRuntimeOom);
        assert_eq!(found[0].device, Some(0));
        // Real order, device line first, and a second device line later is
        // not taken.
        let text = "CUDA error: out of memory\n  current device: 1, in function alloc at ggml-cuda.cu:420\n  cudaMalloc(&ptr, size)\nggml/src/ggml-cuda/ggml-cuda.cu:98: CUDA error\n";
        assert_eq!(crate::decode_str(text)[0].device, Some(1));
        let lines = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(!ggml_error_continues(
            &lines(&["CUDA error: out of memory", "some other line"]),
            "current device: 3, in function alloc"
        ));
    }

    #[test]
    fn devices_a_cuda_error_states() {
        let lines = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // CNTK and ONNX Runtime (wild pastes), ggml's follow-up line.
        for (text, device) in [
            (&["CUDA failure 2: out of memory ; GPU=0 ; hostname=MSI ; expr=cudaMalloc((void**) &deviceBufferPtr, sizeof(AllocatedElemType) * numElements)"][..], Some(0)),
            (&["RuntimeError: CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=1 ;"][..], Some(1)),
            (&["CUDA error: no kernel image is available for execution on the device", "  current device: 2, in function ggml_cuda_compute_forward at ggml-cuda.cu:2761"][..], Some(2)),
            // ONNX Runtime's unset device is no index.
            (&["onnxruntime::CudaCall CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=-2011338632 ; expr=cudaSetDevice(info_.device_id); "][..], None),
            (&["CUDA failure 2: out of memory ; GPU=12345 ;"][..], None),
        ] {
            assert_eq!(stated_device(&lines(text)), device, "{text:?}");
        }
    }
}
