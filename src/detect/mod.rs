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

/// True if the text before a match opens a quotation (an odd number of `"`,
/// `'` or backticks): the line quotes a message rather than printing one,
/// as in `if "CUDA out of memory" in str(e):`.
pub fn is_quoted(prefix: &str) -> bool {
    ['"', '\'', '`']
        .iter()
        .any(|q| prefix.chars().filter(|c| c == q).count() % 2 == 1)
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
    }

    #[test]
    fn every_family_has_triggers_that_start_it() {
        for family in FAMILIES {
            assert!(!family.triggers().is_empty());
        }
    }
}
