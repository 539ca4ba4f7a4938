//! oomwhy explains why a GPU ran out of memory.
//!
//! It reads training logs, finds every out-of-memory error and related CUDA
//! crash (PyTorch's caching allocator in every era, CUDA runtime errors,
//! illegal memory accesses, Windows fail-fast exits), decodes each into a
//! [`record::Finding`] with exact byte counts, and explains it.
//!
//! Data flows input → [`scanner`] → [`record`] → [`explain`] → [`render`].
//!
//! # The public API in four calls
//!
//! * [`decode_str`] decodes and explains a pasted message;
//! * [`scan`] reads any [`std::io::Read`] in bounded memory, and
//!   [`Analysis`] explains what one or more scans found;
//! * [`explain::docs::lookup`] gives the long explanation of a code;
//! * [`render::render`] writes findings as text, JSON, NDJSON, Markdown or
//!   GitHub annotations to any [`std::io::Write`].
//!
//! For input that arrives over time, [`scan_streaming`] and [`Stream`] hand
//! out each finding when it is complete, and [`LiveAnalysis`] explains it.
//!
//! ```
//! let log = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB \
//!     (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; \
//!     1.56 GiB free; 7.88 GiB reserved in total by PyTorch)";
//!
//! // Decode a string.
//! let findings = oomwhy::decode_str(log);
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings[0].sizes.requested_bytes, Some(2 << 30));
//! // 7.88 GiB reserved + 1.56 GiB free is more than 8.00 GiB total.
//! assert_eq!(findings[0].diagnosis.verdicts[0].code, "inconsistent_numbers");
//!
//! // Scan a reader (a file, a pipe) and explain what it held.
//! let mut analysis = oomwhy::Analysis::new();
//! analysis.add(oomwhy::scan(log.as_bytes(), "train.log")?);
//! let (findings, summary) = analysis.finish();
//! assert_eq!(summary.oom, 1);
//!
//! // The long explanation of each code the finding names.
//! let (code, text) = oomwhy::explain::docs::lookup(&findings[0].explain[0])?;
//! assert_eq!(code, "torch_allocator_oom");
//! assert!(text.contains("## How to fix it"));
//!
//! // Render to any writer.
//! use oomwhy::render::{render, Format, RenderOptions};
//! let mut out = Vec::new();
//! render(Format::Json, &findings, &summary, RenderOptions::default(), &mut out)?;
//! let json: serde_json::Value = serde_json::from_slice(&out)?;
//! assert_eq!(json["schema_version"], 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// No panicking shortcuts on input-dependent paths: a log is untrusted
// input. The few
// remaining ones are constant regexes, each allowed where it is built.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod context;
pub mod detect;
pub mod diagnostics;
pub mod error;
mod escape;
pub mod exit;
pub mod explain;
pub mod follow;
pub mod i18n;
pub mod input;
pub mod normalize;
pub mod record;
pub mod render;
pub mod scanner;
pub mod schema;
pub mod snapshot;
pub mod summary;
pub mod units;

use std::collections::HashMap;

pub use error::{Error, Result};

/// Compiles one of the crate's constant patterns. The only place a pattern
/// can fail to compile, and none does: every pattern is compiled by the unit
/// tests of the module that owns it, so a typo fails `cargo test`, never a user.
#[allow(clippy::expect_used)]
pub(crate) fn constant_regex(pattern: &str) -> regex::Regex {
    regex::Regex::new(&ascii_classes(pattern)).expect("constant regex")
}

/// `pattern` with its digit, word and word-boundary classes made ASCII:
/// `\d` is `[0-9]`, `\w` is `[0-9A-Za-z_]`, `\b` is `(?-u:\b)`.
///
/// What these classes read in a message is ASCII (numbers, identifiers,
/// units), and every number is parsed as ASCII digits. Unicode's classes are
/// thousands of ranges each: compiling the crate's patterns with them took
/// about 9 ms, the largest part of a short run, and a Unicode word boundary
/// stops the fast regex engine at the first non-ASCII byte (a progress bar's
/// `█`). Spaces (`\s`) stay Unicode: pasted text can hold no-break spaces;
/// and a pattern that names non-ASCII text (`第`) keeps Unicode classes,
/// since its word boundaries must see such characters as word characters.
fn ascii_classes(pattern: &str) -> String {
    if !pattern.is_ascii() {
        return pattern.to_string();
    }
    let mut out = String::with_capacity(pattern.len() + 32);
    let mut chars = pattern.chars();
    // Nesting depth of character classes: `\b` is only valid outside them.
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('d') => out.push_str("[0-9]"),
                Some('w') => out.push_str("[0-9A-Za-z_]"),
                Some('b') if depth == 0 => out.push_str("(?-u:\\b)"),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            '[' => {
                depth += 1;
                out.push(c);
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}
pub use record::{Finding, Summary};
pub use scanner::{scan, scan_streaming, ScanOutcome, Stream};

/// Collects the findings of several inputs into one explained report.
#[derive(Debug, Default)]
pub struct Analysis {
    findings: Vec<Finding>,
    summary: Summary,
}

impl Analysis {
    /// An empty analysis.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the outcome of scanning one input.
    pub fn add(&mut self, outcome: ScanOutcome) {
        let offset = self.findings.len();
        self.summary.inputs += 1;
        self.summary.lines += outcome.lines;
        self.summary.bytes += outcome.bytes;
        for (local, mut finding) in outcome.findings.into_iter().enumerate() {
            finding.id = offset + local + 1;
            // Consequences point at a local index until they get global ids.
            finding.consequence_of = finding.consequence_of.map(|i| offset + i + 1);
            self.findings.push(finding);
        }
    }

    /// Adds the outcome of an input whose reading failed part-way (a
    /// truncated archive): what was found before the error counts, and so
    /// does the error.
    pub fn add_failed(&mut self, outcome: ScanOutcome) {
        self.add(outcome);
        self.summary.input_errors += 1;
    }

    /// Records an input that could not be read.
    pub fn add_error(&mut self) {
        self.summary.inputs += 1;
        self.summary.input_errors += 1;
    }

    /// Explains every finding and returns them with the summary.
    pub fn finish(mut self) -> (Vec<Finding>, Summary) {
        snapshot::join(&mut self.findings);
        explain::explain_all(&mut self.findings);
        snapshot::after_explain(&mut self.findings);
        let s = &mut self.summary;
        s.findings = self.findings.len();
        for f in &self.findings {
            s.count(f.category);
        }
        (self.findings, self.summary)
    }
}

/// Explains findings one at a time, as a streaming scan hands them out
/// ([`scan_streaming`], [`Stream`]), for output that cannot wait for the end
/// of the input (NDJSON, `--follow`, `oomwhy run`).
///
/// Findings get run-wide ids in the order they are explained, and verdicts
/// that compare with earlier findings (memory growth) see the earlier
/// findings of the whole run. The inputs of one run need distinct names.
#[derive(Debug, Default)]
pub struct LiveAnalysis {
    summary: Summary,
    /// Recent findings, a few per kind, device and rank, for [`explain::explain_after`].
    history: Vec<Finding>,
    /// (input, id within the input) → run-wide id, for `consequence_of`.
    ids: HashMap<(String, usize), usize>,
}

/// Earlier findings kept per kind, device and rank for [`LiveAnalysis`].
const HISTORY_PER_KEY: usize = 8;
/// Id mappings kept for [`LiveAnalysis`]; consequences follow their cause closely.
const MAX_ID_MAPPINGS: usize = 100_000;

impl LiveAnalysis {
    /// An empty analysis.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that an input is about to be read.
    pub fn begin_input(&mut self) {
        self.summary.inputs += 1;
    }

    /// Records an input that could not be read (to the end, or at all).
    pub fn add_error(&mut self) {
        self.summary.input_errors += 1;
    }

    /// Adds the line and byte counts of an input read to its end.
    pub fn end_input(&mut self, outcome: &ScanOutcome) {
        self.summary.lines += outcome.lines;
        self.summary.bytes += outcome.bytes;
    }

    /// Explains a finding handed out by a streaming scan, gives it its
    /// run-wide id and counts it. A finding made by hand (id 0) is welcome too.
    pub fn explain(&mut self, mut finding: Finding) -> Finding {
        let id = self.summary.findings + 1;
        if self.ids.len() >= MAX_ID_MAPPINGS {
            self.ids.clear();
        }
        if finding.id > 0 {
            self.ids
                .insert((finding.source.input.clone(), finding.id), id);
        }
        finding.consequence_of = finding
            .consequence_of
            .and_then(|local| self.ids.get(&(finding.source.input.clone(), local + 1)))
            .copied();
        finding.id = id;
        explain::explain_after(&self.history, &mut finding);
        snapshot::after_explain(std::slice::from_mut(&mut finding));

        let key = |f: &Finding| (f.kind, f.device, f.first_rank);
        let same = self.history.iter().filter(|h| key(h) == key(&finding));
        if same.count() >= HISTORY_PER_KEY {
            if let Some(oldest) = self.history.iter().position(|h| key(h) == key(&finding)) {
                self.history.remove(oldest);
            }
        }
        self.history.push(finding.clone());

        let s = &mut self.summary;
        s.findings += 1;
        s.count(finding.category);
        finding
    }

    /// The counts so far.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }
}

/// Finds and explains every message in `text` (e.g. a pasted error).
pub fn decode_str(text: &str) -> Vec<Finding> {
    let mut analysis = Analysis::new();
    // Reading from a byte slice cannot fail.
    if let Ok(outcome) = scan(text.as_bytes(), "<stdin>") {
        analysis.add(outcome);
    }
    analysis.finish().0
}

#[cfg(test)]
mod tests {
    use super::{ascii_classes, constant_regex};

    #[test]
    fn classes_become_ascii_outside_and_inside_brackets() {
        assert_eq!(ascii_classes(r"\d+"), "[0-9]+");
        assert_eq!(ascii_classes(r"[\w.-]+"), "[[0-9A-Za-z_].-]+");
        assert_eq!(ascii_classes(r"\bGPU\b"), r"(?-u:\b)GPU(?-u:\b)");
        // An escaped backslash is not the start of a class.
        assert_eq!(ascii_classes(r"C:\\data"), r"C:\\data");
        assert_eq!(ascii_classes(r"\s\(\)"), r"\s\(\)");
    }

    #[test]
    fn ascii_classes_keep_their_meaning_on_ascii_text() {
        let re = constant_regex(r"\b(\w+) at (\d+)\b");
        let caps = re.captures("error_1 at 42;").expect("matches");
        assert_eq!((&caps[1], &caps[2]), ("error_1", "42"));
        // Digits of other scripts are not numbers to parse.
        assert!(!constant_regex(r"^\d+$").is_match("٣٤"));
        // Spaces stay Unicode: a pasted no-break space still separates.
        assert!(constant_regex(r"of\smemory").is_match("of\u{a0}memory"));
    }

    #[test]
    fn a_pattern_naming_non_ascii_text_keeps_unicode_classes() {
        assert_eq!(ascii_classes(r"\b第 (\d)"), r"\b第 (\d)");
        assert!(constant_regex(r"\b第 (\d)").is_match("在 第 3 行"));
    }
}
