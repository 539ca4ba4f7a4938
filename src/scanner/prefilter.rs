//! The literal prefilter: the trigger phrases every family, diagnostic and
//! traceback starts with, searched as one multi-literal pattern.

use crate::detect::FAMILIES;
use crate::diagnostics;
use regex::bytes::Regex as BytesRegex;
use std::sync::OnceLock;

/// Phrases that start a traceback or a chain; always worth a look.
pub(super) const TRACEBACK_TRIGGERS: &[&str] = &[
    "Traceback (most recent call last)",
    "During handling of the above exception",
    "The above exception was the direct cause",
];

/// Short phrases that stand for every trigger containing them. The
/// prefilter searches for these instead, so that it stays a small set of
/// literals (the regex crate's SIMD multi-literal search handles a few dozen;
/// with a hundred it falls back to a much slower automaton). Each is rare in
/// ordinary log lines (`ordinary_log_lines_miss_the_prefilter`), and the
/// families' own `start` checks keep the precision.
pub(super) const KEYS: &[&str] = &[
    "ut of memory",
    "Out Of Memory",
    "OutOfMemory",
    "OUT_OF_MEMORY",
    "cudaError",
    "CUDA_ERROR_",
    "hipError",
    "HIP_ERROR_",
    "CUDA failure ",
    "STATUS_",
    "nccl",
    "NCCL error",
    "NCCL Error",
    "ASSERT FAILED",
    "Assertion `",
    "oom-kill",
    "oom_kill",
    "oom_reaper",
    "SIGKILL",
    "CPUAllocator: ",
    "Failed to allocate",
    "KV cache",
    // Literals that start with common bytes make the search slower.
    "summary, device ID",
    "while trying to allocate",
    "seq len (",
    "itcode",
    // Both chained-traceback separators.
    "above exception",
    "Traceback (most recent call last)",
];

#[doc(hidden)]
/// The literals the prefilter searches for: every trigger, each replaced by
/// a key it contains, without duplicates or literals containing another.
pub fn prefilter_literals() -> Vec<&'static str> {
    let mut triggers: Vec<&'static str> = TRACEBACK_TRIGGERS.to_vec();
    triggers.extend_from_slice(diagnostics::TRIGGERS);
    for family in FAMILIES {
        triggers.extend_from_slice(family.triggers());
    }
    let mut literals: Vec<&'static str> = triggers
        .iter()
        .map(|t| KEYS.iter().copied().find(|k| t.contains(k)).unwrap_or(t))
        .collect();
    // A literal that contains another is redundant: the shorter one already
    // finds its lines.
    let all = literals.clone();
    literals.retain(|l| !all.iter().any(|other| other != l && l.contains(other)));
    literals.sort_unstable();
    literals.dedup();
    literals
}

#[allow(clippy::expect_used)] // escaped literals always compile; tested on every run
pub(super) fn prefilter() -> &'static BytesRegex {
    static RE: OnceLock<BytesRegex> = OnceLock::new();
    RE.get_or_init(|| {
        let literals = prefilter_literals();
        let pattern = literals
            .iter()
            .map(|l| regex::escape(l))
            .collect::<Vec<_>>()
            .join("|");
        BytesRegex::new(&pattern).expect("escaped literals always compile")
    })
}

/// Counts newlines with memchr's SIMD search.
pub(super) fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}
