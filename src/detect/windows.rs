//! Windows' fail-fast exit code 0xC0000409 (docs/message-formats.md §9).
//!
//! The same status appears as `-1073740791` (signed, as IDEs print it),
//! `3221226505` (unsigned) or `0xC0000409`. The bare decimal numbers are only
//! taken next to words that make them an exit code, so a log that happens to
//! contain the number elsewhere is not reported.

use super::{Family, Message};
use crate::constant_regex;
use crate::record::{Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

fn anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(concat!(
            r"(?i)(?:(?:exit(?:ed)?|return(?:ed)?|error|status|finished)[\w ]{0,20}?(?:code|status)?\s*[:=]?\s*(?:-1073740791|3221226505)\b",
            r"|\b0xC0000409\b",
            r"|\bSTATUS_STACK_BUFFER_OVERRUN\b)"
        ))
    })
}

/// A process that ended with 0xC0000409.
pub struct FailFast;

impl Family for FailFast {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "-1073740791",
            // The unsigned spelling (3221226505) comes with "exit code" or
            // "exited with", which the host family's triggers already find;
            // a literal starting with digits would slow the prefilter.
            "0xC0000409",
            "0xc0000409",
            "C0000409",
            "STATUS_STACK_BUFFER_OVERRUN",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        anchor().find(line).map(|m| m.start())
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        // The whole line: "Process finished with exit code ..." reads better than its tail.
        let text = format!("{}{}", message.prefix, message.lines.first()?)
            .trim()
            .to_string();
        let mut finding = message.finding(Kind::WindowsFailFast, text);
        finding.exception = None;
        finding
            .facts
            .insert("exit_code".into(), "0xC0000409".into());
        finding
            .facts
            .insert("exit_code_signed".into(), "-1073740791".into());
        finding
            .facts
            .insert("ntstatus".into(), "STATUS_STACK_BUFFER_OVERRUN".into());
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_every_spelling() {
        for line in [
            "Process finished with exit code -1073740791 (0xC0000409)",
            "Process finished with exit code -1073740791",
            "error: process exited with code 3221226505",
            "The program '[1234] python.exe' has exited with code 3221226505 (0xc0000409).",
            "Exception code: 0xc0000409",
        ] {
            assert!(FailFast.start(line).is_some(), "{line}");
        }
    }

    #[test]
    fn ignores_the_number_alone() {
        assert!(FailFast.start("step 3221226505 loss 0.1").is_none());
        assert!(FailFast.start("id=-1073740791").is_none());
    }
}
