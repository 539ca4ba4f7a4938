//! oomwhy explains why a GPU ran out of memory.
//!
//! It reads training logs, finds every out-of-memory error and related CUDA
//! crash (PyTorch's caching allocator in every era, CUDA runtime errors,
//! illegal memory accesses, Windows fail-fast exits), decodes each into a
//! [`Finding`] with exact byte counts, and explains it.
//!
//! Data flows [`input`] (the front door) → scanner (logs) or snapshot
//! reader (PyTorch memory snapshots) → [`record`] → [`explain`] → [`render`].
//!
//! # The public API in four calls
//!
//! * [`decode_str`] decodes and explains a pasted message;
//! * [`scan`] reads any [`std::io::Read`] as the command reads standard
//!   input (plain, compressed, a memory snapshot, a tar archive), in
//!   bounded memory, and [`Analysis`] explains what one or more scans
//!   found; [`scan_paths`] reads files and directories as the command does
//!   and explains them at once;
//! * [`explain::docs::lookup`] gives the long explanation of a code;
//! * [`render::render`] writes findings as text, JSON, NDJSON, Markdown or
//!   GitHub annotations to any [`std::io::Write`].
//!
//! For input that arrives over time, [`scan_streaming`] hands out each
//! finding when it is complete, and [`LiveAnalysis`] explains it. Below the
//! front door, [`scan_log`], [`scan_log_streaming`] and [`Stream`] search
//! text as a log whatever its first bytes are.
//!
//! ```
//! let log = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB \
//!     (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; \
//!     1.56 GiB free; 7.88 GiB reserved in total by PyTorch)";
//!
//! // 1. Decode a string.
//! let findings = oomwhy::decode_str(log);
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings[0].sizes.requested_bytes, Some(2 << 30));
//! // 7.88 GiB reserved + 1.56 GiB free is more than 8.00 GiB total.
//! assert_eq!(findings[0].diagnosis.verdicts[0].code, "inconsistent_numbers");
//!
//! // 2. Scan a reader (a file, a pipe; compressed or not) and explain what
//! //    it held. For paths and directories: `oomwhy::scan_paths(&["logs/"])`.
//! let mut analysis = oomwhy::Analysis::new();
//! analysis.add(oomwhy::scan(log.as_bytes(), "train.log")?);
//! let (findings, summary) = analysis.finish();
//! assert_eq!(summary.oom, 1);
//!
//! // 3. The long explanation of each code the finding names.
//! let (code, text) = oomwhy::explain::docs::lookup(&findings[0].explain[0])?;
//! assert_eq!(code, "torch_allocator_oom");
//! assert!(text.contains("## How to fix it"));
//!
//! // 4. Render to any writer.
//! use oomwhy::render::{render, Format, RenderOptions};
//! let mut out = Vec::new();
//! render(Format::Json, &findings, &summary, RenderOptions::default(), &mut out)?;
//! let json: serde_json::Value = serde_json::from_slice(&out)?;
//! assert_eq!(json["schema_version"], 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Layers
//!
//! Each module imports only the ones below it (`tests/tools/import_cycles.py`
//! checks that no two files import each other, directly or round about):
//!
//! 1. leaves: [`units`] (sizes, [`units::GIB`] and the other units) and
//!    `escape` ([`render::sanitize`]);
//! 2. [`record`], the findings as plain data (the JSON contract, the
//!    snapshot report included);
//! 3. [`i18n`], the message families and the snapshot reader;
//! 4. [`Error`] and the log scanner;
//! 5. [`input`], the front door that routes every input to one of them;
//! 6. [`explain`], [`Analysis`], the renderers, then the fleet [`summary`].
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// No panicking shortcuts on input-dependent paths: a log is untrusted
// input. The few
// remaining ones are constant regexes, each allowed where it is built.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The public modules: the front door, the record, its explanation and
// rendering, and what the command and the Python package build on.
/// The status-code tables (`codes/*.tsv`, docs/codes.md): public so that
/// the integration tests can check every row in every printed form.
#[doc(hidden)]
pub mod codes;
pub mod exit;
pub mod explain;
pub mod follow;
pub mod i18n;
pub mod input;
pub mod record;
pub mod render;
pub mod schema;
pub mod summary;
pub mod units;

// Internals: reached through the front door and the re-exports below.
mod analysis;
pub(crate) mod context;
pub(crate) mod detect;
pub(crate) mod diagnostics;
mod error;
mod escape;
pub(crate) mod normalize;
pub(crate) mod scanner;
pub(crate) mod snapshot;

pub use analysis::{
    decode_str, scan_entries, scan_entries_with, scan_paths, Analysis, LiveAnalysis, Notice,
    ScanReport,
};
pub use error::{Error, Result};
pub use input::{scan, scan_streaming};
pub use record::{Finding, Summary};
/// The log scanner alone, below the front door: searches text as a log
/// whatever its first bytes are (no decompressing, no snapshots). For
/// callers that already hold text (`oomwhy run`'s pipes, fuzzing).
pub use scanner::{scan as scan_log, scan_streaming as scan_log_streaming};
pub use scanner::{ScanOutcome, Stream, MAX_FINDINGS, MAX_LINE};
pub use snapshot::{PickleError, SnapshotError};

/// The snapshot reader's data-only pickle decoder, for the fuzz targets.
#[doc(hidden)]
pub use snapshot::pickle;

/// Compiles one of the crate's constant patterns. The only place a pattern
/// can fail to compile, and none does: every pattern is compiled by the unit
/// tests of the module that owns it, so a typo fails `cargo test`, never a user.
#[allow(clippy::expect_used)]
pub(crate) fn constant_regex(pattern: &str) -> regex::Regex {
    regex::Regex::new(&ascii_classes(pattern)).expect("constant regex")
}

/// A constant case-insensitive pattern that is compiled only when a text
/// could match it: every match holds one of `needles` (ASCII words), so
/// a text that holds none of them, ignoring ASCII case, is no match and the
/// pattern is not compiled. A crash's explanation tries several such
/// patterns on the message and the lines around it, and each `(?i)` pattern
/// took 0.3–1 ms to compile (Unicode case folding) where the text names
/// none of their words.
///
/// The gate is exact: under `(?i)` an ASCII letter also matches the two
/// non-ASCII characters whose case folds to ASCII, `K` (U+212A, Kelvin) and
/// `ſ` (U+017F, long s), so a text holding either goes to the pattern.
pub(crate) struct GatedRegex {
    needles: &'static [&'static str],
    pattern: &'static str,
    compiled: std::sync::OnceLock<regex::Regex>,
}

impl GatedRegex {
    pub(crate) const fn new(needles: &'static [&'static str], pattern: &'static str) -> Self {
        GatedRegex {
            needles,
            pattern,
            compiled: std::sync::OnceLock::new(),
        }
    }

    /// The compiled pattern.
    pub(crate) fn regex(&self) -> &regex::Regex {
        self.compiled.get_or_init(|| constant_regex(self.pattern))
    }

    /// Whether `text` could hold a match (see the type's note).
    pub(crate) fn may_match(&self, text: &str) -> bool {
        if text.contains(['\u{212A}', '\u{17F}']) {
            return true;
        }
        let bytes = text.as_bytes();
        self.needles.iter().any(|needle| {
            let needle = needle.as_bytes();
            needle.len() <= bytes.len()
                && bytes
                    .windows(needle.len())
                    .any(|w| w.eq_ignore_ascii_case(needle))
        })
    }

    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.may_match(text) && self.regex().is_match(text)
    }
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

    /// The gate lets through every text the pattern matches: its words in
    /// any ASCII case, and the two non-ASCII letters `(?i)` folds to ASCII.
    #[test]
    fn a_gated_pattern_matches_as_the_pattern_does() {
        static RE: super::GatedRegex = super::GatedRegex::new(&["kvs"], r"(?i)kvs");
        for text in ["kvs", "a KVS b", "KvS", "\u{212A}vs", "kv\u{17F}"] {
            assert!(RE.regex().is_match(text), "{text}");
            assert!(RE.may_match(text) && RE.is_match(text), "{text}");
        }
        for text in ["", "kv", "k v s", "akvsb", "kvs\u{e9}"] {
            assert_eq!(RE.is_match(text), RE.regex().is_match(text), "{text}");
        }
        assert!(!RE.may_match("no such word"));
    }

    #[test]
    fn a_pattern_naming_non_ascii_text_keeps_unicode_classes() {
        assert_eq!(ascii_classes(r"\b第 (\d)"), r"\b第 (\d)");
        assert!(constant_regex(r"\b第 (\d)").is_match("在 第 3 行"));
    }
}
