//! The literal prefilter: the trigger phrases every family, diagnostic and
//! traceback starts with, searched as one multi-literal pattern.

use crate::detect::FAMILIES;
use crate::diagnostics;
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
    // Also Vulkan's `ErrorOutOfDeviceMemory`.
    "OutOf",
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
    // `oom_kill`, `oom_reaper` (the kernel's OOM lines).
    "oom_",
    "SIGKILL",
    // `is killed by signal: Killed` (DataLoader), `signal: killed` (Go).
    "signal: ",
    "CPUAllocator: ",
    "Failed to allocate",
    "KV cache",
    // Literals that start with common bytes make the search slower.
    "summary, device ID",
    "while trying to allocate",
    "seq len (",
    "itcode",
    // Exit-status spellings (`exit code`, `Exit Status`, `exit with`, ...)
    // and NCCL's and the NVIDIA driver's log lines: one key each.
    "xit ",
    "XIT ",
    "NCCL WARN",
    "NVRM: ",
    // Windows crash statuses in every spelling (`0xC0000005`, `C0000409`,
    // `0xc0000409`, an event log's `ExceptionCode c0000005`, `-1073741819`).
    // Keys that start with digits or a space would slow the search: every
    // number in a log would be a candidate.
    "C0000",
    "c0000",
    "-107374",
    // Both chained-traceback separators.
    "above exception",
    "Traceback (most recent call last)",
];

/// The literal that stands for `trigger` in the search: the first key it
/// contains, or the trigger itself.
fn literal_for(trigger: &'static str) -> &'static str {
    KEYS.iter()
        .copied()
        .find(|k| trigger.contains(k))
        .unwrap_or(trigger)
}

#[doc(hidden)]
/// The literals the prefilter searches for: every trigger, each replaced by
/// a key it contains, without duplicates or literals containing another.
pub fn prefilter_literals() -> Vec<&'static str> {
    static LITERALS: OnceLock<Vec<&'static str>> = OnceLock::new();
    LITERALS.get_or_init(literals).clone()
}

fn literals() -> Vec<&'static str> {
    let mut triggers: Vec<&'static str> = TRACEBACK_TRIGGERS.to_vec();
    triggers.extend_from_slice(diagnostics::TRIGGERS);
    for family in FAMILIES {
        triggers.extend_from_slice(family.triggers());
    }
    let mut literals: Vec<&'static str> = triggers.iter().map(|t| literal_for(t)).collect();
    // A literal that contains another is redundant: the shorter one already
    // finds its lines.
    let all = literals.clone();
    literals.retain(|l| !all.iter().any(|other| other != l && l.contains(other)));
    literals.sort_unstable();
    literals.dedup();
    literals
}

/// The literal search. aho-corasick's packed (Teddy) searcher is called
/// directly: through the `regex` crate the same literals ran Teddy on their
/// 4-byte prefixes and then confirmed each candidate with a lazy DFA, which
/// profiling showed cost about as much again as the SIMD search itself.
/// Where Teddy is not available (no SSSE3 or NEON), an Aho-Corasick
/// automaton does the same job more slowly.
pub(super) enum Prefilter {
    Packed(aho_corasick::packed::Searcher),
    Automaton(aho_corasick::AhoCorasick),
}

impl Prefilter {
    /// The start of the first match at or after `from` in `haystack`.
    pub(super) fn find_at(&self, haystack: &[u8], from: usize) -> Option<usize> {
        if from > haystack.len() {
            return None;
        }
        match self {
            Prefilter::Packed(searcher) => searcher
                .find_in(haystack, aho_corasick::Span::from(from..haystack.len()))
                .map(|m| m.start()),
            Prefilter::Automaton(automaton) => automaton
                .find(aho_corasick::Input::new(haystack).span(from..haystack.len()))
                .map(|m| m.start()),
        }
    }

    /// Whether any literal occurs in `haystack`.
    #[cfg(test)]
    pub(super) fn is_match(&self, haystack: &[u8]) -> bool {
        self.find_at(haystack, 0).is_some()
    }

    /// The starts of the (non-overlapping, leftmost-first) matches.
    pub(super) fn starts<'a>(&'a self, haystack: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
        let mut from = 0;
        std::iter::from_fn(move || {
            let start = self.find_at(haystack, from)?;
            // Past the start is enough: only starts are used, and a longer
            // step could skip a match that overlaps this one.
            from = start + 1;
            Some(start)
        })
    }
}

#[allow(clippy::expect_used)] // literals always build an automaton; tested on every run
pub(super) fn prefilter() -> &'static Prefilter {
    static SEARCHER: OnceLock<Prefilter> = OnceLock::new();
    SEARCHER.get_or_init(|| {
        let literals = prefilter_literals();
        let packed = aho_corasick::packed::Config::new()
            .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
            // Teddy handles more than 64 literals (in "fat" buckets).
            .heuristic_pattern_limits(false)
            .builder()
            .extend(&literals)
            .build();
        match packed {
            Some(searcher) => Prefilter::Packed(searcher),
            None => Prefilter::Automaton(
                aho_corasick::AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                    .build(&literals)
                    .expect("a few dozen short literals always build"),
            ),
        }
    })
}

/// Which families can start on a line: those with one of their literals in
/// it. Trying only those, instead of every family's patterns on every line
/// the prefilter passed, keeps lines that only look like a message cheap.
struct FamilyGate {
    automaton: aho_corasick::AhoCorasick,
    /// For each literal, the families (bits by their place in [`FAMILIES`])
    /// that have it.
    families: Vec<u64>,
}

/// The families, as bits by their place in [`FAMILIES`], whose literals
/// occur in `text`. A family can start a message only on such a line: each
/// family's triggers occur on its first line, and each literal is part of
/// the trigger it stands for.
pub(super) fn families_in(text: &[u8]) -> u64 {
    let gate = family_gate();
    gate.automaton
        .find_overlapping_iter(text)
        .fold(0, |bits, m| bits | gate.families[m.pattern().as_usize()])
}

#[allow(clippy::expect_used)] // literals always build an automaton; tested on every run
fn family_gate() -> &'static FamilyGate {
    static GATE: OnceLock<FamilyGate> = OnceLock::new();
    GATE.get_or_init(|| {
        const _: () = assert!(FAMILIES.len() <= 64, "families are bits of a u64");
        let mut literals: Vec<&'static str> = Vec::new();
        let mut families: Vec<u64> = Vec::new();
        for (index, family) in FAMILIES.iter().enumerate() {
            for trigger in family.triggers() {
                let literal = literal_for(trigger);
                let at = literals
                    .iter()
                    .position(|l| *l == literal)
                    .unwrap_or_else(|| {
                        literals.push(literal);
                        families.push(0);
                        literals.len() - 1
                    });
                families[at] |= 1 << index;
            }
        }
        FamilyGate {
            automaton: aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::Standard)
                // Built once per run, used on short lines only: a DFA's
                // build took a twelfth of a one-message run and searched no
                // faster here.
                .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                .build(&literals)
                .expect("a few dozen short literals always build"),
            families,
        }
    })
}

/// Counts newlines with memchr's SIMD search.
pub(super) fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}
