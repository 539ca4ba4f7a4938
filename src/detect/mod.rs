//! Message families: how to recognise the first line of each kind of message,
//! which following lines belong to it, and how to decode it into a [`Finding`].
//!
//! The scanner knows nothing about any family; it asks [`FAMILIES`] in order
//! (first match wins, so more specific families come first) and feeds the
//! following lines to the one that matched.

use crate::constant_regex;
use crate::record::Finding;
use crate::units::{self, SizeError};
use regex::Regex;

pub mod cuda;
pub mod cupy;
pub mod generic;
pub mod gpu_crash;
pub mod host;
pub mod inference;
pub mod masked;
pub mod mps;
pub mod nccl;
pub mod stated;
pub mod tensorflow;
pub mod torch;
pub mod win_crash;
pub mod windows;
pub mod xid;
pub mod xla;

/// A family of messages that share one grammar.
pub trait Family: Sync {
    /// Literal phrases of which at least one occurs on the first line of every
    /// message of this family. The scanner's prefilter looks only for these.
    fn triggers(&self) -> &'static [&'static str];

    /// Byte offset in `line` where a message of this family starts, if it does.
    fn start(&self, line: &str) -> Option<usize>;

    /// Whether `next` continues the message whose lines so far are `lines`.
    fn continues(&self, _lines: &[String], _next: &str) -> bool {
        false
    }

    /// Whether `next` continues the last line without a space between them:
    /// a terminal that wrapped at a fixed column cut a word in two. Asked
    /// before [`Family::continues`].
    fn glues(&self, _lines: &[String], _next: &str) -> bool {
        false
    }

    /// Decodes the message (its lines, the first one starting at the offset
    /// [`Family::start`] returned) into a finding.
    fn decode(&self, message: &Message<'_>) -> Option<Finding>;
}

/// A message as collected by the scanner, ready to decode.
#[derive(Debug)]
pub struct Message<'a> {
    /// Input name for [`crate::record::Source`].
    pub input: &'a str,
    /// 1-based line number of the first line.
    pub line: u64,
    /// Text of the first line before the message (exception prefix, if any).
    pub prefix: &'a str,
    /// The message's lines; the first starts at the message.
    pub lines: &'a [String],
}

impl Message<'_> {
    /// The lines joined with single spaces, as one paragraph.
    pub fn joined(&self) -> String {
        join_lines(self.lines)
    }

    /// A new finding of `kind` for this message, with `exception` taken from the prefix.
    pub fn finding(&self, kind: crate::record::Kind, text: String) -> Finding {
        let mut finding = Finding::new(kind, self.input, self.line, text);
        finding.exception = exception_name(self.prefix);
        finding
    }
}

/// Joins wrapped lines into one paragraph with single spaces.
pub fn join_lines(lines: &[String]) -> String {
    let mut out = String::new();
    for line in lines {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

/// Every family, most specific first.
pub static FAMILIES: &[&dyn Family] = &[
    &torch::TorchAllocator,
    &torch::MallocAsync,
    &cuda::IllegalAccess,
    &cuda::RuntimeOom,
    &windows::FailFast,
    &mps::MpsOom,
    &host::CpuAllocator,
    &tensorflow::TensorFlowOom,
    &xla::XlaOom,
    &cupy::CupyOom,
    &inference::KvCacheOom,
    &masked::AllocatorAssert,
    &masked::LibraryAllocFailed,
    &masked::DeviceNotReady,
    &gpu_crash::DeviceSideAssert,
    &gpu_crash::KernelError,
    &nccl::Watchdog,
    &nccl::ProcessGroupAborted,
    &nccl::NcclError,
    &nccl::NcclWarnOom,
    &nccl::ChildFailed,
    &xid::Xid,
    &win_crash::AccessViolation,
    &win_crash::PagingFile,
    // Weakest evidence last: SIGKILL and exit-status spellings, then any
    // other message that says an allocation failed.
    &torch::TorchFragment,
    &host::Killed,
    &generic::GenericOom,
];

/// Returns the exception class named at the end of `prefix`, e.g.
/// `torch.OutOfMemoryError` from `"[stuff] torch.OutOfMemoryError: "`.
pub fn exception_name(prefix: &str) -> Option<String> {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        constant_regex(r"((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt)):\s*$")
    });
    re.captures(prefix).map(|c| c[1].to_string())
}

/// True if the text before a match opens a quotation that mentions the
/// message rather than pastes it. Same as [`is_mention`] with nothing after
/// the match.
pub fn is_quoted(prefix: &str) -> bool {
    is_mention(prefix, prefix.len())
}

/// Quote characters whose unmatched opening before a message can make it a
/// mention.
const QUOTES: [char; 3] = ['"', '\'', '`'];

/// True if the message starting at `start` of `line` sits in a quotation that
/// only mentions it, as in `if "CUDA out of memory" in str(e):`.
///
/// People paste errors in backticks, quotes, bold and blockquotes too, so an
/// open quote alone is not enough: what surrounds it decides.
/// * Nothing but markdown before the quote (`> `, `- `, `**`, a list number),
///   or prose ending in a colon (`I get this error: "..."`): a paste.
/// * Code before the quote (`if`, `in`, `print(`, `grep`, `=`, `==`, a
///   comma or an opening bracket): a mention, except a `raise X("...")`
///   whose literal has numbers, which is a printed message.
/// * Other prose before the quote: a paste when the quoted text has a
///   number (a real message states sizes or codes), else a mention.
pub fn is_mention(line: &str, start: usize) -> bool {
    let start = start.min(line.len());
    let Some(prefix) = line.get(..start) else {
        return false;
    };
    // Every quotation still open at the match, innermost last.
    let mut open: Vec<(usize, char)> = QUOTES
        .iter()
        .filter(|q| prefix.chars().filter(|c| c == *q).count() % 2 == 1)
        .filter_map(|q| prefix.rfind(*q).map(|at| (at, *q)))
        .collect();
    open.sort_unstable();
    let Some(&(at, quote)) = open.last() else {
        return false;
    };
    let rest = line.get(start..).unwrap_or("");
    let literal = rest.split(quote).next().unwrap_or(rest);
    let has_number = literal.chars().any(|c| c.is_ascii_digit());
    // Any enclosing quotation opened by code (`logger.info("... 'msg'")`)
    // makes the whole a mention.
    for &(outer, _) in &open {
        let before = prefix[..outer].trim_end();
        if is_code_context(before) {
            let raise = before.contains("raise ") && before.ends_with('(');
            return !(raise && has_number);
        }
    }
    let before = prefix[..at].trim_end();
    let markdown_only = before
        .chars()
        .all(|c| c.is_whitespace() || ">*-+_#|~.:0123456789".contains(c));
    if markdown_only {
        return false;
    }
    // Prose before the quote: a paste only when the quotation ends the line
    // (`I get this error: "..."`), not when a sentence goes on after it
    // (`"..." means another rank stopped`).
    let tail = rest.get(literal.len() + 1..).unwrap_or("");
    let tail_empty = tail
        .trim_matches(|c: char| c.is_whitespace() || ".,;:!?*_)".contains(c))
        .is_empty();
    if tail_empty {
        return !(before.ends_with(':') || before.ends_with("**") || has_number);
    }
    // A sentence that goes on after the quotation: a report of the error
    // when the quoted text has its numbers or codes (`I get "... exit code
    // -1073740791 (0xC0000409)". Is it the GPU?`), except in a docs heading
    // (a `#` title or a whole bold line such as an FAQ question).
    let trimmed = line.trim();
    let heading =
        trimmed.starts_with('#') || (trimmed.starts_with("**") && trimmed.ends_with("**"));
    // The same goes for a quoted exception line after a colon (`the error
    // says: "RuntimeError: ..."`): a printed exception, not a phrase.
    let exception = exception_name(prefix.get(at + 1..).unwrap_or("")).is_some();
    heading || !(has_number || (exception && before.ends_with(':')))
}

/// Whether the text before a quote reads as a statement of code or shell.
fn is_code_context(before: &str) -> bool {
    if before.ends_with(['(', '=', ',', '[', '{', '+', '%']) || before.ends_with("==") {
        return true;
    }
    let last = before
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .find(|w| !w.is_empty())
        .unwrap_or("");
    matches!(
        last,
        "if" | "elif"
            | "in"
            | "not"
            | "and"
            | "or"
            | "return"
            | "grep"
            | "rg"
            | "echo"
            | "print"
            | "assert"
            | "match"
            | "case"
            | "contains"
            | "startswith"
            | "-e"
            | "-E"
            | "-F"
            | "=~"
    )
}

/// Compiles a constant pattern after substituting `{SIZE}` (PyTorch sizes)
/// and `{TF_SIZE}` (TensorFlow/XLA sizes).
pub fn re(pattern: &str) -> Regex {
    crate::constant_regex(
        &pattern
            .replace("{TF_SIZE}", stated::TF_SIZE)
            .replace("{SIZE}", SIZE),
    )
}

/// A size regex fragment with two groups (number, unit) for PyTorch's format.
pub const SIZE: &str = r"(\d+(?:\.\d+)?)\s*(bytes|KiB|MiB|GiB|TiB|KB|MB|GB)";

/// Collects sizes from regex captures, recording a note for any value that
/// cannot be represented instead of failing the whole finding.
pub struct SizeReader<'f> {
    notes: &'f mut Vec<String>,
    /// Set when a printed value was too large for 64 bits.
    pub overflowed: bool,
}

impl<'f> SizeReader<'f> {
    /// A reader that writes its notes to `notes`.
    pub fn new(notes: &'f mut Vec<String>) -> Self {
        SizeReader {
            notes,
            overflowed: false,
        }
    }

    /// Reads the size in groups `at` (number) and `at + 1` (unit) of `caps`.
    pub fn read(&mut self, caps: &regex::Captures<'_>, at: usize, what: &str) -> Option<u64> {
        let number = caps.get(at)?.as_str();
        let unit = caps.get(at + 1)?.as_str();
        self.read_parts(number, unit, what)
    }

    /// Reads a size given as its number and unit label.
    pub fn read_parts(&mut self, number: &str, unit: &str, what: &str) -> Option<u64> {
        match units::to_bytes(number, unit) {
            Ok(bytes) => Some(bytes),
            Err(SizeError::TooLarge(text)) => {
                self.overflowed = true;
                self.notes.push(format!(
                    "{what} `{text}` is too large to be a real byte count"
                ));
                None
            }
            Err(SizeError::Malformed(text)) => {
                self.notes
                    .push(format!("{what} `{text}` could not be read"));
                None
            }
        }
    }
}

/// Finds the first match of `re` in `text` and reads its size at group `at`.
pub fn find_size(
    re: &Regex,
    text: &str,
    at: usize,
    what: &str,
    sizes: &mut SizeReader<'_>,
) -> Option<u64> {
    re.captures(text)
        .and_then(|caps| sizes.read(&caps, at, what))
}

/// Collects a message the way the scanner does (first line from the
/// family's start, then the lines it continues with) and decodes it.
#[cfg(test)]
pub(crate) fn decode_lines(family: &dyn Family, lines: &[&str]) -> Option<Finding> {
    let start = family.start(lines[0])?;
    let mut body = vec![lines[0][start..].to_string()];
    for next in &lines[1..] {
        if !family.continues(&body, next) {
            break;
        }
        body.push(next.to_string());
    }
    let message = Message {
        input: "t",
        line: 1,
        prefix: &lines[0][..start],
        lines: &body,
    };
    family.decode(&message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exception_prefix() {
        assert_eq!(
            exception_name("torch.OutOfMemoryError: ").as_deref(),
            Some("torch.OutOfMemoryError")
        );
        assert_eq!(
            exception_name("RuntimeError: ").as_deref(),
            Some("RuntimeError")
        );
        assert_eq!(
            exception_name("OutOfMemoryError: ").as_deref(),
            Some("OutOfMemoryError")
        );
        assert_eq!(exception_name("").as_deref(), None);
        assert_eq!(exception_name("Some text: ").as_deref(), None);
    }

    #[test]
    fn detects_quotes() {
        assert!(is_quoted("if \""));
        assert!(is_quoted("grep '"));
        assert!(is_quoted("see `"));
        assert!(!is_quoted("RuntimeError: "));
        assert!(!is_quoted("\"a\" then "));
        let line = "`RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB`";
        assert!(!is_mention(line, 1));
        let line = "> **RuntimeError: CUDA out of memory.**";
        assert!(!is_mention(line, 4));
        let line = "I get this error: \"CUDA error: out of memory\"";
        assert!(!is_mention(line, 19));
        let line = "    if \"CUDA out of memory. Tried to allocate\" in str(e):";
        assert!(is_mention(line, 8));
        let line = "print(\"CUDA error: out of memory\")";
        assert!(is_mention(line, 7));
    }

    #[test]
    fn every_family_has_triggers_that_start_it() {
        for family in FAMILIES {
            assert!(!family.triggers().is_empty());
        }
    }
}
