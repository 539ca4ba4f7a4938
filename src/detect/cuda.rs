//! CUDA runtime and driver errors (docs/message-formats.md §2.3 E0/E1, §4):
//! out-of-memory without sizes, and illegal memory access.

use super::text::{continues_with_boilerplate, message_text};
use super::{Family, Message};
use crate::constant_regex;
use crate::record::{Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct RuntimePatterns {
    anchor: Regex,
    thc: Regex,
    thc_check: Regex,
}

fn runtime_patterns() -> &'static RuntimePatterns {
    static P: OnceLock<RuntimePatterns> = OnceLock::new();
    P.get_or_init(|| RuntimePatterns {
        anchor: constant_regex(r"\b(CUDA|HIP) (error|driver error): out of memory"),
        thc: constant_regex(r"cuda runtime error \(2\) : out of memory(?: at (\S+:\d+))?"),
        thc_check: constant_regex(
            r"THCudaCheck FAIL file=(\S+) line=(\d+) error=2 : out of memory",
        ),
    })
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
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        let p = runtime_patterns();
        [&p.anchor, &p.thc, &p.thc_check]
            .iter()
            .find_map(|re| re.find(line))
            .map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        continues_with_boilerplate(lines, next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = runtime_patterns();
        let first = message.lines.first()?;
        let mut finding = message.finding(Kind::CudaRuntimeOom, message_text(message.lines));
        if let Some(caps) = p.anchor.captures(first) {
            finding.backend = Some(caps[1].to_ascii_lowercase());
            let driver = &caps[2] == "driver error";
            finding.era = Some(if driver { "driver" } else { "runtime" }.into());
            finding.facts.insert(
                "error_name".into(),
                if driver {
                    "CUDA_ERROR_OUT_OF_MEMORY"
                } else {
                    "cudaErrorMemoryAllocation"
                }
                .into(),
            );
        } else if let Some(caps) = p.thc.captures(first) {
            finding.backend = Some("cuda".into());
            finding.era = Some("thc".into());
            finding.version_hint = Some("PyTorch ≤0.4".into());
            finding.facts.insert("error_code".into(), "2".into());
            if let Some(at) = caps.get(1) {
                finding
                    .facts
                    .insert("location".into(), at.as_str().to_string());
            }
        } else if let Some(caps) = p.thc_check.captures(first) {
            finding.backend = Some("cuda".into());
            finding.era = Some("thc".into());
            finding.version_hint = Some("PyTorch ≤0.4".into());
            finding.facts.insert("error_code".into(), "2".into());
            finding
                .facts
                .insert("location".into(), format!("{}:{}", &caps[1], &caps[2]));
        }
        Some(finding)
    }
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
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        illegal_anchor().find(line).map(|m| m.start())
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
            "error_name".into(),
            if hip {
                "hipErrorIllegalAddress"
            } else {
                "cudaErrorIllegalAddress"
            }
            .into(),
        );
        // A printed code is kept as printed: CUDA before 10.1 numbered this
        // error 77, later releases 700 (the code when none is printed).
        let printed = printed_code().captures(first).map(|c| c[1].to_string());
        finding
            .facts
            .insert("error_code".into(), printed.unwrap_or_else(|| "700".into()));
        let joined = message.joined();
        if joined.contains("asynchronously reported") {
            finding.facts.insert("async_warning".into(), "true".into());
        }
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
    fn runtime_oom_spellings() {
        for (line, era) in [
            ("RuntimeError: CUDA error: out of memory", "runtime"),
            ("RuntimeError: CUDA driver error: out of memory", "driver"),
            ("RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265", "thc"),
            ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=844 error=2 : out of memory", "thc"),
        ] {
            let start = RuntimeOom.start(line).expect(line);
            let body = lines(&[&line[start..]]);
            let m = Message { input: "t", line: 1, prefix: &line[..start], lines: &body };
            let f = RuntimeOom.decode(&m).unwrap();
            assert_eq!(f.era.as_deref(), Some(era), "{line}");
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
}
