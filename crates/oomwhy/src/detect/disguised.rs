//! Out-of-memory errors under another name (docs/formats.md §2.6,
//! §4.2, §4.3): a CUDA library that cannot allocate
//! its handle or workspace, an internal assert of PyTorch's caching allocator
//! raised on the OOM path, and the driver's `device not ready` under memory
//! pressure. None of these messages says "out of memory"; each usually means it.

use super::text::{
    collapse_repeats, continues_with_boilerplate, is_boilerplate, message_text, reported_token,
};
use super::{is_mention, Family, Message};
use crate::constant_regex;
use crate::record::{fact, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

/// What a library status line says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LibraryFailure {
    start: usize,
    library: &'static str,
    status: String,
    call: Option<String>,
}

struct LibraryPatterns {
    torch_cublas: Regex,
    torch_cudnn: Regex,
    torch_cusolver: Regex,
    tf_handle: Regex,
    bare: Regex,
}

fn library_patterns() -> &'static LibraryPatterns {
    static P: OnceLock<LibraryPatterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = constant_regex;
        LibraryPatterns {
            // TORCH_CUDABLAS_CHECK: "CUDA error: " status " when calling `" #EXPR "`".
            torch_cublas: re(r"\bCUDA error: (CUBLAS_STATUS_[A-Z_]+) when calling `([^`]*)`"),
            // AT_CUDNN_CHECK: "cuDNN error: " cudnnGetErrorString(status).
            torch_cudnn: re(r"\bcuDNN error: (CUDNN_STATUS_ALLOC_FAILED)\b"),
            // TORCH_CUSOLVER_CHECK: "cusolver error: " status ", when calling `" #EXPR "`".
            torch_cusolver: re(r"\bcusolver error: (CUSOLVER_STATUS_[A-Z_]+|\d+), when calling `([^`]*)`"),
            // TensorFlow's stream executor. Its NOT_INITIALIZED states no
            // failed allocation (cuBLAS: cublasCreate failed or the library
            // was not initialised): the status table reads it, as it reads
            // cuDNN's, with the table's note that memory is a common cause.
            tf_handle: re(r"\b(?:failed to create (cublas) handle: (CUBLAS_STATUS_ALLOC_FAILED)|[Cc]ould not create (cudnn) handle: (CUDNN_STATUS_ALLOC_FAILED))\b"),
            // The status alone, as MXNet, CNTK, Lua Torch or CuPy print it.
            bare: re(r"\b(CUBLAS|CUDNN|CUSOLVER)_STATUS_ALLOC_FAILED\b"),
        }
    })
}

/// cuSOLVER's status numbers (cusolver_common.h), printed by old PyTorch.
fn cusolver_status_name(code: &str) -> Option<&'static str> {
    Some(match code {
        "1" => "CUSOLVER_STATUS_NOT_INITIALIZED",
        "2" => "CUSOLVER_STATUS_ALLOC_FAILED",
        "7" => "CUSOLVER_STATUS_INTERNAL_ERROR",
        _ => return None,
    })
}

/// Classifies a line as a library allocation failure, if it is one. Handle
/// creation failing with NOT_INITIALIZED / INTERNAL_ERROR counts (the handle
/// allocates a workspace); other statuses at other calls do not.
fn library_failure(line: &str) -> Option<LibraryFailure> {
    let p = library_patterns();
    if let Some(c) = p.torch_cublas.captures(line) {
        let status = &c[1];
        let call = &c[2];
        let handle = call.contains("Create(");
        if status == "CUBLAS_STATUS_ALLOC_FAILED"
            || (status == "CUBLAS_STATUS_NOT_INITIALIZED" && handle)
        {
            return Some(LibraryFailure {
                start: c.get(0)?.start(),
                library: "cublas",
                status: status.to_string(),
                call: Some(call.to_string()),
            });
        }
    }
    if let Some(c) = p.torch_cudnn.captures(line) {
        return Some(LibraryFailure {
            start: c.get(0)?.start(),
            library: "cudnn",
            status: c[1].to_string(),
            call: None,
        });
    }
    if let Some(c) = p.torch_cusolver.captures(line) {
        let status = cusolver_status_name(&c[1]).map_or_else(|| c[1].to_string(), str::to_string);
        let call = &c[2];
        let handle = call.starts_with("cusolverDnCreate");
        let counts = status == "CUSOLVER_STATUS_ALLOC_FAILED"
            || (handle
                && matches!(
                    status.as_str(),
                    "CUSOLVER_STATUS_NOT_INITIALIZED" | "CUSOLVER_STATUS_INTERNAL_ERROR"
                ));
        if counts {
            return Some(LibraryFailure {
                start: c.get(0)?.start(),
                library: "cusolver",
                status,
                call: Some(call.to_string()),
            });
        }
    }
    if let Some(c) = p.tf_handle.captures(line) {
        let (library, status, call) = match (c.get(1), c.get(3)) {
            (Some(_), _) => ("cublas", c.get(2)?.as_str(), "cublasCreate"),
            _ => ("cudnn", c.get(4)?.as_str(), "cudnnCreate"),
        };
        return Some(LibraryFailure {
            start: c.get(0)?.start(),
            library,
            status: status.to_string(),
            call: Some(call.to_string()),
        });
    }
    for c in p.bare.captures_iter(line) {
        let m = c.get(0)?;
        if reported_token(line, m.start()) && !is_mention(line, m.start()) {
            // The status alone says little: the message is the whole line.
            return Some(LibraryFailure {
                start: 0,
                library: match &c[1] {
                    "CUBLAS" => "cublas",
                    "CUDNN" => "cudnn",
                    _ => "cusolver",
                },
                status: m.as_str().to_string(),
                call: None,
            });
        }
    }
    None
}

/// `CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)``,
/// `cuDNN error: CUDNN_STATUS_ALLOC_FAILED`, `cusolver error: ...`, and
/// TensorFlow's `failed to create cublas handle: ...`.
pub struct LibraryAllocFailed;

impl Family for LibraryAllocFailed {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "CUBLAS_STATUS_ALLOC_FAILED",
            "CUBLAS_STATUS_NOT_INITIALIZED",
            "CUDNN_STATUS_ALLOC_FAILED",
            "CUSOLVER_STATUS_",
            "cusolver error: ",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        library_failure(line).map(|f| f.start)
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        if lines.len() >= 200 {
            return false;
        }
        if is_boilerplate(next) {
            return true;
        }
        // TensorFlow prints the handle failure once per attempt.
        match (library_failure(&lines[0]), library_failure(next)) {
            (Some(a), Some(b)) => a.library == b.library && a.status == b.status,
            _ => false,
        }
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        let failure = library_failure(first)?;
        let (text, repeats) = collapse_repeats(message.lines, |l| {
            library_failure(l)
                .is_some_and(|f| f.library == failure.library && f.status == failure.status)
        });
        let mut finding = message.finding(Kind::LibraryAllocFailed, text);
        finding.backend = Some("cuda".into());
        finding
            .facts
            .insert(fact::LIBRARY.into(), failure.library.into());
        finding
            .facts
            .insert(fact::STATUS.into(), failure.status.clone());
        if let Some(call) = failure.call {
            finding.facts.insert(fact::CALL.into(), call);
        }
        // CNTK's `cuDNN failure 2: CUDNN_STATUS_ALLOC_FAILED ; GPU=0 ; ...`.
        finding.device = super::cuda::stated_device(message.lines);
        // A finding starts at one occurrence; each repeated line is one more.
        finding.occurrences += repeats as u64;
        Some(finding)
    }
}

fn allocator_assert_anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(concat!(
            r#"(NVML_SUCCESS == [^"]{1,160}?|!handles_\.at\(i\)) ?INTERNAL ASSERT FAILED at "#,
            r#""([^"]*CUDACachingAllocator\.cpp)":(\d+)"#
        ))
    })
}

/// The assert's first line when a terminal wrapped it before the path.
fn allocator_assert_wrapped() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r#"(NVML_SUCCESS == [^"]{1,160}?|!handles_\.at\(i\)) ?INTERNAL ASSERT FAILED at\s*$"#,
        )
    })
}

/// PyTorch caching-allocator asserts raised on the OOM path instead of the
/// OOM message: the three NVML spellings (§2.6) and `!handles_.at(i)`.
pub struct AllocatorAssert;

impl Family for AllocatorAssert {
    fn triggers(&self) -> &'static [&'static str] {
        &["INTERNAL ASSERT FAILED"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        allocator_assert_anchor()
            .find(line)
            .or_else(|| allocator_assert_wrapped().find(line))
            .map(|m| m.start())
    }

    /// A terminal hard-wrapped the assert after `FAILED at`: the quoted
    /// path and line come on the next line.
    fn continues(&self, lines: &[String], next: &str) -> bool {
        if lines.len() == 1 && allocator_assert_wrapped().is_match(&lines[0]) {
            return allocator_assert_anchor().is_match(&format!("{} {}", lines[0], next.trim()));
        }
        continues_with_boilerplate(lines, next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = match message.lines {
            [head, path, ..] if allocator_assert_wrapped().is_match(head) => {
                format!("{head} {}", path.trim())
            }
            [head, ..] => head.clone(),
            [] => return None,
        };
        let caps = allocator_assert_anchor().captures(&first)?;
        let condition = caps[1].trim().to_string();
        let mut finding = message.finding(Kind::AllocatorAssert, message_text(message.lines));
        finding.backend = Some("cuda".into());
        finding.era = Some(if condition.starts_with("NVML") {
            Era::Nvml
        } else {
            Era::Handles
        });
        finding.facts.insert(fact::ASSERT.into(), condition);
        finding.facts.insert(fact::FILE.into(), caps[2].to_string());
        finding.facts.insert(fact::LINE.into(), caps[3].to_string());
        Some(finding)
    }
}

fn not_ready_anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"\b(CUDA|HIP) driver error: device not ready\b"))
}

/// `CUDA driver error: device not ready` (CUDA_ERROR_NOT_READY from a driver
/// call PyTorch checks; seen when WSL2 cannot make memory resident).
pub struct DeviceNotReady;

impl Family for DeviceNotReady {
    fn triggers(&self) -> &'static [&'static str] {
        &["driver error: device not ready"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        not_ready_anchor().find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        continues_with_boilerplate(lines, next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let caps = not_ready_anchor().captures(message.lines.first()?)?;
        let mut finding = message.finding(Kind::DeviceNotReady, message_text(message.lines));
        finding.backend = Some(caps[1].to_ascii_lowercase());
        finding
            .facts
            .insert(fact::ERROR_NAME.into(), "CUDA_ERROR_NOT_READY".into());
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(family: &dyn Family, line: &str) -> Option<Finding> {
        crate::detect::decode_lines(family, &[line])
    }

    #[test]
    fn library_spellings() {
        for (line, library, status, call) in [
            ("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "cublas", "CUBLAS_STATUS_ALLOC_FAILED", Some("cublasCreate(handle)")),
            ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`", "cublas", "CUBLAS_STATUS_NOT_INITIALIZED", Some("cublasCreate(handle)")),
            ("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasLtMatmul( ltHandle, computeDesc.descriptor())`", "cublas", "CUBLAS_STATUS_ALLOC_FAILED", Some("cublasLtMatmul( ltHandle, computeDesc.descriptor())")),
            ("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED", "cudnn", "CUDNN_STATUS_ALLOC_FAILED", None),
            ("RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling `cusolverDnCreate(handle)`", "cusolver", "CUSOLVER_STATUS_ALLOC_FAILED", Some("cusolverDnCreate(handle)")),
            ("RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnCreate(handle)`", "cusolver", "CUSOLVER_STATUS_INTERNAL_ERROR", Some("cusolverDnCreate(handle)")),
            ("RuntimeError: cusolver error: 7, when calling `cusolverDnCreate(handle)`", "cusolver", "CUSOLVER_STATUS_INTERNAL_ERROR", Some("cusolverDnCreate(handle)")),
            ("2020-11-17 19:56:29.679590: E tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED", "cublas", "CUBLAS_STATUS_ALLOC_FAILED", Some("cublasCreate")),
            ("2020-06-01 10:00:00.1: E tensorflow/stream_executor/cuda/cuda_dnn.cc:328] Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED", "cudnn", "CUDNN_STATUS_ALLOC_FAILED", Some("cudnnCreate")),
            ("mxnet.base.MXNetError: [16:26:09] src/operator/nn/./cudnn/cudnn_convolution-inl.h:713: Check failed: e == CUDNN_STATUS_SUCCESS (2 vs. 0) cuDNN: CUDNN_STATUS_ALLOC_FAILED", "cudnn", "CUDNN_STATUS_ALLOC_FAILED", None),
            ("cuDNN failure 2: CUDNN_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=h ; expr=finder(calgo, algoPerf)", "cudnn", "CUDNN_STATUS_ALLOC_FAILED", None),
        ] {
            let f = decode(&LibraryAllocFailed, line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(f.kind, Kind::LibraryAllocFailed);
            assert_eq!(f.facts["library"], library, "{line}");
            assert_eq!(f.facts["status"], status, "{line}");
            assert_eq!(f.facts.get("call").map(String::as_str), call, "{line}");
        }
    }

    #[test]
    fn library_negatives() {
        for line in [
            // Not an allocation: other statuses at other calls.
            "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`",
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasSgemm(handle)`",
            "torch._C._LinAlgError: cusolver error: CUSOLVER_STATUS_EXECUTION_FAILED, when calling `cusolverDnSgetrf( handle, m, n)`",
            "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR",
            // Mentions, not reports.
            "# retry on CUBLAS_STATUS_ALLOC_FAILED",
            "    case CUDNN_STATUS_ALLOC_FAILED:",
            "if status == CUSOLVER_STATUS_ALLOC_FAILED:",
        ] {
            assert!(LibraryAllocFailed.start(line).is_none(), "{line}");
        }
    }

    #[test]
    fn folds_repeated_tensorflow_lines() {
        let lines: Vec<String> = [
            "failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED",
            "2020-11-17 19:56:29.699014: E tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert!(LibraryAllocFailed.continues(&lines[..1], &lines[1]));
        assert!(!LibraryAllocFailed.continues(&lines[..1], "Epoch 1/10"));
        let m = Message {
            input: "t",
            line: 1,
            prefix: "",
            lines: &lines,
        };
        let f = LibraryAllocFailed.decode(&m).unwrap();
        assert_eq!(f.occurrences, 2);
        assert_eq!(f.text.lines().count(), 1);
    }

    #[test]
    fn allocator_assert_spellings() {
        for (line, condition, at) in [
            (r#"RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":830, please report a bug to PyTorch. "#, "NVML_SUCCESS == r", "830"),
            (r#"RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlInit_v2_() INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":1123, please report a bug to PyTorch. "#, "NVML_SUCCESS == DriverAPI::get()->nvmlInit_v2_()", "1123"),
            (r#"RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlDeviceGetHandleByPciBusId_v2_( pci_id, &nvml_device) INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":1154, please report a bug to PyTorch. "#, "NVML_SUCCESS == DriverAPI::get()->nvmlDeviceGetHandleByPciBusId_v2_( pci_id, &nvml_device)", "1154"),
            (r#"!handles_.at(i) INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":430, please report a bug to PyTorch."#, "!handles_.at(i)", "430"),
        ] {
            let f = decode(&AllocatorAssert, line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(f.kind, Kind::AllocatorAssert);
            assert_eq!(f.facts["assert"], condition);
            assert_eq!(f.facts["line"], at);
        }
    }

    #[test]
    fn other_allocator_asserts_are_not_ooms() {
        for line in [
            r#"RuntimeError: it->second->use_count > 0 INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":2630, please report a bug to PyTorch."#,
            r#"RuntimeError: head->prev == nullptr && head->pool != nullptr INTERNAL ASSERT FAILED at "/opt/conda/c10/cuda/CUDACachingAllocator.cpp":747"#,
            r#"NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDAFunctions.cpp":100"#,
        ] {
            assert!(AllocatorAssert.start(line).is_none(), "{line}");
        }
    }

    #[test]
    fn device_not_ready() {
        let f = decode(
            &DeviceNotReady,
            "RuntimeError: CUDA driver error: device not ready",
        )
        .unwrap();
        assert_eq!(f.kind, Kind::DeviceNotReady);
        assert_eq!(f.exception.as_deref(), Some("RuntimeError"));
        assert!(DeviceNotReady
            .start("CUDA error: device not ready")
            .is_none());
    }

    #[test]
    fn reported_tokens() {
        let at = |l: &str, t: &str| reported_token(l, l.find(t).unwrap());
        assert!(at("CUDA_ERROR_OUT_OF_MEMORY", "CUDA"));
        assert!(at("from device: CUDA_ERROR_OUT_OF_MEMORY", "CUDA"));
        assert!(at(
            "Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY",
            "CUDA"
        ));
        assert!(at("HIP error hipErrorOutOfMemory", "hip"));
        assert!(at("cuDNN failure 2: CUDNN_STATUS_ALLOC_FAILED", "CUDNN"));
        assert!(!at("if err == cudaErrorMemoryAllocation:", "cuda"));
        assert!(!at("case cudaErrorMemoryAllocation:", "cuda"));
        assert!(!at("Search for `cudaErrorMemoryAllocation' in", "cuda"));
        assert!(!at("handle CUDA_ERROR_OUT_OF_MEMORY gracefully", "CUDA"));
        // A pasted header's enum member is a definition, not a report.
        assert!(!at("    hipErrorOutOfMemory = 2,", "hip"));
        assert!(!at("CUDA_ERROR_OUT_OF_MEMORY = 2", "CUDA"));
        assert!(at("hipErrorOutOfMemory == 2 returned by hipMalloc", "hip"));
    }
}
