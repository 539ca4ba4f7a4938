//! Kernel toolchain failures that are not GPU memory exhaustion
//! (docs/formats.md, "Kernel toolchain"):
//!
//! * Triton's launch check: `triton.runtime.errors.OutOfResources: out of
//!   resource: shared memory, Required: 131072, Hardware limit: 101376.
//!   Reducing block sizes or `num_stages` may help.` (older releases:
//!   `Hardware limitation`). The kernel asks for more on-chip shared memory
//!   per thread block than the GPU has; device memory is not involved.
//! * NVIDIA's PTX assembler running out of host memory while compiling:
//!   `ptxas fatal   : Memory allocation failure`.

use super::text::collapse_repeats;
use super::{re, Family, Message};
use crate::record::{Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    triton: Regex,
    sizes: Regex,
    ptxas: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        triton: re(r"\bout of resource: ([a-z][a-z ]*[a-z])"),
        sizes: re(r"Required: (\d+),? Hardware limit(?:ation)?: (\d+)"),
        ptxas: re(r"\bptxas fatal\s*:\s*[Mm]emory allocation (?:failure|error)"),
    })
}

/// Triton's `OutOfResources` error (shared memory, registers, threads).
pub struct TritonOutOfResources;

impl Family for TritonOutOfResources {
    fn triggers(&self) -> &'static [&'static str] {
        &["out of resource: "]
    }

    fn start(&self, line: &str) -> Option<usize> {
        // The exception name before it stays in the prefix.
        patterns().triton.find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        // A wrapped paste: the sizes on the next line.
        lines.len() < 3
            && !patterns().sizes.is_match(&lines.join(" "))
            && patterns().sizes.is_match(next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let text = message.joined();
        let resource = p.triton.captures(&text)?[1].to_string();
        let mut finding = message.finding(Kind::TritonOutOfResources, message.lines.join("\n"));
        // Triton's class name ends in neither Error nor Exception.
        if finding.exception.is_none() {
            finding.exception = exception_class(message.prefix);
        }
        finding.backend = Some("cuda".into());
        finding.facts.insert("resource".into(), resource);
        if let Some(c) = p.sizes.captures(&text) {
            finding.sizes.requested_bytes = c[1].parse().ok();
            finding
                .sizes
                .extra
                .insert("hardware_limit_bytes".into(), c[2].parse().ok());
        } else {
            finding.truncated = true;
        }
        Some(finding)
    }
}

/// `triton.runtime.errors.OutOfResources` (or `...autotuner.OutOfResources`)
/// at the end of the text before the message.
fn exception_class(prefix: &str) -> Option<String> {
    let name = prefix.trim_end().strip_suffix(':')?;
    let name = name
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_'))
        .next()?;
    name.ends_with("OutOfResources").then(|| name.to_string())
}

/// `ptxas fatal : Memory allocation failure`, repeated lines folded.
pub struct PtxasAllocFailure;

impl Family for PtxasAllocFailure {
    fn triggers(&self) -> &'static [&'static str] {
        &["ptxas fatal"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        patterns().ptxas.find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        lines.len() < 200 && patterns().ptxas.is_match(next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let (text, repeats) = collapse_repeats(message.lines, |l| patterns().ptxas.is_match(l));
        // A paste in bold or backticks: the markup is not the message.
        let text = text.trim_end_matches(['*', '`', '"']).to_string();
        let mut finding = message.finding(Kind::PtxasAllocFailure, text);
        finding.exception = None;
        finding.backend = Some("cuda".into());
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
    fn reads_triton_sizes_in_both_spellings() {
        for (line, required, limit) in [
            ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. Reducing block sizes or `num_stages` may help.", 98_304, 65_536),
            ("OutOfResources: out of resource: shared memory, Required: 163842, Hardware limitation: 101376. reducing the block size or `num_stages` may help.", 163_842, 101_376),
        ] {
            let f = decode_lines(&TritonOutOfResources, &[line]).expect(line);
            assert_eq!(f.kind, Kind::TritonOutOfResources);
            assert_eq!(f.sizes.requested_bytes, Some(required));
            assert_eq!(f.sizes.extra["hardware_limit_bytes"], Some(limit));
            assert_eq!(f.facts["resource"], "shared memory");
        }
    }

    #[test]
    fn a_wrapped_triton_message_keeps_its_sizes() {
        let f = decode_lines(
            &TritonOutOfResources,
            &[
                "triton.runtime.errors.OutOfResources: out of resource: shared memory,",
                "Required: 131072, Hardware limit: 101376.",
            ],
        )
        .expect("wrapped");
        assert_eq!(
            f.exception.as_deref(),
            Some("triton.runtime.errors.OutOfResources")
        );
        assert_eq!(f.sizes.requested_bytes, Some(131_072));
    }

    #[test]
    fn folds_repeated_ptxas_lines() {
        let line = "ptxas fatal   : Memory allocation failure";
        let f = decode_lines(&PtxasAllocFailure, &[line, line]).expect("ptxas");
        assert_eq!(f.kind, Kind::PtxasAllocFailure);
        assert_eq!(f.occurrences, 2);
        assert!(decode_lines(
            &PtxasAllocFailure,
            &["ptxas fatal   : Unresolved extern function"]
        )
        .is_none());
    }
}
