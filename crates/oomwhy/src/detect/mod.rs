//! Message families: how to recognise the first line of each kind of message,
//! which following lines belong to it, and how to decode it into a [`Finding`].
//!
//! The scanner knows nothing about any family; it asks [`FAMILIES`] in order
//! (first match wins, so more specific families come first) and feeds the
//! following lines to the one that matched.

use crate::record::Finding;

#[cfg(test)]
pub use text::is_quoted;
pub use text::{exception_name, find_size, in_comment, is_mention, join_lines, re, SizeReader};

pub mod cluster;
pub mod cuda;
pub mod cudnn;
pub mod cupy;
pub mod disguised;
pub mod generic;
pub mod genre;
pub mod gpu_crash;
pub mod gpu_lost;
pub mod grammar;
pub mod host;
pub mod inference;
pub mod jvm;
pub mod launcher;
pub mod memory_kind;
pub mod mps;
pub mod nccl;
pub mod signal;
pub mod status;
pub mod tensorflow;
pub mod text;
pub mod toolchain;
pub mod torch;
pub mod vendor_gpu;
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

    /// The phrases in which [`Family::start`] reads a figure's value (a
    /// digit, or a hex digit of a `0x` number), or `None` when it may read
    /// one anywhere. On a line where none of the phrases is, in any case,
    /// `start` reads where the figures are but not their values: two lines
    /// that differ only in figures of the same length get the same answer.
    /// The scanner then decides such lines once per shape (a log that
    /// repeats a warning with a new timestamp and size on each line, or
    /// source code that quotes a message with a different number in each
    /// copy). `None` unless `start` was checked.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        None
    }

    /// Words after which [`Family::start`] also reads a number's value,
    /// besides in [`Family::start_figure_phrases`] (`CUDA error 2`,
    /// `cudaMalloc returned 35`, `err(2)`, `status=-3`): the number follows
    /// the word, in any case, past spaces, `=`, `:`, `(` and a sign. A
    /// phrase could not say this: any number of spaces may come between. A
    /// line where no figure follows one of them is decided once per shape
    /// as [`Family::start_figure_phrases`] says. Empty unless `start` was
    /// checked.
    fn start_figure_words(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether [`Family::continues`] and [`Family::glues`] read no figure's
    /// value (only where figures are), and [`Family::decode`] reads nothing
    /// from a timestamp that starts the message's prefix. The scanner then
    /// decides whether a line continues a one-line message once per pair of
    /// shapes, and decodes a message repeated under a new timestamp once.
    /// `false` unless each of those was checked.
    fn message_figure_blind(&self) -> bool {
        false
    }
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

/// Every family, most specific first.
pub static FAMILIES: &[&dyn Family] = &[
    &torch::TorchAllocator,
    &torch::MallocAsync,
    &cuda::IllegalAccess,
    &cuda::RuntimeOom,
    &windows::FailFast,
    &mps::MpsOom,
    &host::CpuAllocator,
    // A resource manager's own kill at its own limit (YARN, Ray, Dask).
    &cluster::ResourceManager,
    // The JVM's own limits (`java.lang.OutOfMemoryError: Java heap space`).
    &jvm::JvmOom,
    &tensorflow::TensorFlowOom,
    &xla::XlaOom,
    &cupy::CupyOom,
    &inference::KvCacheOom,
    &inference::ExecutorMemory,
    &disguised::AllocatorAssert,
    &cudnn::CudnnNotSupported,
    &disguised::LibraryAllocFailed,
    &disguised::DeviceNotReady,
    &gpu_crash::DeviceSideAssert,
    &gpu_crash::KernelError,
    &nccl::Watchdog,
    &nccl::ProcessGroupAborted,
    &nccl::NcclError,
    &nccl::NcclWarnOom,
    &nccl::NcclShm,
    &nccl::ChildFailed,
    &xid::Xid,
    &gpu_lost::GpuFallenOffBus,
    &toolchain::TritonOutOfResources,
    &toolchain::PtxasAllocFailure,
    &windows::AccessViolation,
    &windows::PagingFile,
    &windows::D3d12AllocCheck,
    &signal::WorkerSignal,
    &signal::ElasticAgentSignal,
    &cuda::OrtCallFailed,
    &signal::GdbSignal,
    &signal::CudaGdbException,
    &signal::LauncherSignal,
    // DeepSpeed's launcher's kills and return code, before the exit-status
    // spellings of the host family read its `-9`.
    &launcher::DeepSpeedLauncher,
    &signal::ExitStatusSignal,
    &torch::CutStack,
    // A status-table code the families above did not claim.
    &status::StatusCode,
    // Weakest evidence last: SIGKILL and exit-status spellings, then any
    // other message that says an allocation failed.
    &torch::TorchFragment,
    &host::Killed,
    &generic::GenericOom,
    &vendor_gpu::VendorGpuOom,
    &mps::MpsBufferSize,
    // A status-table code that says memory ran out, in a form none of the
    // families above reads.
    &status::StatusOom,
    // No family knows the stack: a statement, evidence and a resource.
    &grammar::Grammar,
];

/// Collects a message the way the scanner does (first line from the
/// family's start unless it is quoted, then the lines it continues with)
/// and decodes it.
#[cfg(test)]
pub(crate) fn decode_lines(family: &dyn Family, lines: &[&str]) -> Option<Finding> {
    let start = family.start(lines[0])?;
    if is_mention(lines[0], start) {
        return None;
    }
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
        // Prose that says the quotation is what was printed.
        let line = "It kept on giving me `cuMemAlloc failed: out of memory` errors, which never occurred before.";
        assert!(!is_mention(line, 21));
        let line =
            "VPT threw a \"ptxas fatal: memory allocation error\" when tried with a RTX-2060.";
        assert!(!is_mention(line, 13));
        // A printed constructor with numbers is not a call in code.
        let line = "fails with `Error: Warmup(Generation(\"Not enough memory to handle 4096 prefill tokens.\"))`";
        assert!(!is_mention(line, 39));
        // Unquoted, but a diff line or a sentence about the error.
        let line = "+> [Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid=1, name=python, Graphics SM Warp Exception";
        assert!(is_mention(line, 30));
        let line =
            "A CUDA error: device-side assert triggered is an error that's often caused by labels";
        assert!(is_mention(line, 14));
        let line = "The error: CUDA error: device-side assert triggered";
        assert!(!is_mention(line, 11));
    }

    #[test]
    fn a_quotation_the_poster_says_they_got_is_not_a_mention() {
        // A wild paste (ollama): the runner's error quoted in brackets
        // after `I get the same error as OP`.
        let line = "but then, if I try to \"ollama run\" it, I get the same error as OP (`\"Error: llama runner process has terminated: signal: killed\"`) with similar logs.";
        let at = line.find("signal: killed").unwrap_or(0);
        assert!(!is_mention(line, at));
        // The nearest sentences about an error: a condition, a question, a
        // negation, another person, and code that calls with the text.
        for line in [
            "If I get the same error as OP (`\"Error: llama runner process has terminated: signal: killed\"`) I restart it.",
            "Why do I get the error (`\"Error: llama runner process has terminated: signal: killed\"`) here?",
            "I no longer get the error (`\"Error: llama runner process has terminated: signal: killed\"`) with 0.5.",
            "You get the same error as OP (`\"Error: llama runner process has terminated: signal: killed\"`) when memory runs out.",
            "    assert_error(\"Error: llama runner process has terminated: signal: killed\")",
        ] {
            let at = line.find("signal: killed").unwrap_or(0);
            assert!(is_mention(line, at), "{line}");
        }
    }

    #[test]
    fn every_family_has_triggers_that_start_it() {
        for family in FAMILIES {
            assert!(!family.triggers().is_empty());
        }
    }
}
