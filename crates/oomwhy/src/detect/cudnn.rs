//! `CUDNN_STATUS_NOT_SUPPORTED` (docs/formats.md, "cuDNN"): cuDNN has
//! no implementation for the requested configuration. PyTorch prints it as
//! `RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may
//! appear if you passed in a non-contiguous input.` It is a crash, not an
//! OOM; large batches can cause it (a tensor past cuDNN's 2^31-element
//! limits, a workspace that could not be allocated), so the finding is
//! raised to `likely_oom` only when the message itself says memory ran out.

use super::text::collapse_repeats;
use super::{is_mention, re, Family, Message};
use crate::record::{Category, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

fn status() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| re(r"\b(?:[Cc]u[Dd][Nn][Nn] error: )?CUDNN_STATUS_NOT_SUPPORTED\b"))
}

/// `cuDNN error: CUDNN_STATUS_NOT_SUPPORTED` and the status alone.
pub struct CudnnNotSupported;

impl Family for CudnnNotSupported {
    fn triggers(&self) -> &'static [&'static str] {
        &["CUDNN_STATUS_NOT_SUPPORTED"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        status()
            .find_iter(line)
            .map(|m| m.start())
            .find(|&at| !is_mention(line, at))
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        let t = next.trim_start();
        // PyTorch's hint, wrapped; repeats of the same status.
        lines.len() < 200
            && (status().is_match(next)
                || (lines.len() < 3
                    && (t.starts_with("non-contiguous") || t.starts_with("input."))))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let (text, repeats) = collapse_repeats(message.lines, |l| status().is_match(l));
        let joined = message.joined();
        let mut finding = message.finding(Kind::CudnnNotSupported, text);
        finding.backend = Some("cuda".into());
        finding.facts.insert("library".into(), "cudnn".into());
        finding
            .facts
            .insert("status".into(), "CUDNN_STATUS_NOT_SUPPORTED".into());
        if joined.contains("non-contiguous") {
            finding
                .facts
                .insert("hint".into(), "non-contiguous input".into());
        }
        if joined.to_ascii_lowercase().contains("out of memory") {
            finding.category = Category::LikelyOom;
            finding
                .facts
                .insert("memory_evidence".into(), "out of memory stated".into());
        }
        // A finding starts at one occurrence; each repeated line is one more.
        finding.occurrences += repeats as u64;
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::decode_lines;

    #[test]
    fn is_a_crash_unless_memory_is_stated() {
        let f = decode_lines(
            &CudnnNotSupported,
            &["RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input."],
        )
        .expect("torch");
        assert_eq!(f.kind, Kind::CudnnNotSupported);
        assert_eq!(f.category, Category::Crash);
        assert_eq!(f.exception.as_deref(), Some("RuntimeError"));
        assert_eq!(f.facts["hint"], "non-contiguous input");
        let f = decode_lines(
            &CudnnNotSupported,
            &["RuntimeError: CUDNN_STATUS_NOT_SUPPORTED"],
        )
        .expect("bare");
        assert_eq!(f.category, Category::Crash);
        assert!(decode_lines(
            &CudnnNotSupported,
            &["    if \"CUDNN_STATUS_NOT_SUPPORTED\" in str(e):"]
        )
        .is_none());
    }
}
