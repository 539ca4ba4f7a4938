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

/// Length of a piece: Teddy compares at most the first four bytes of each
/// pattern, so longer pieces would gain nothing.
const PIECE_LEN: usize = 4;

/// Four-byte pieces of the literals that ordinary logs and source code
/// rarely contain, in order of preference. The prefilter searches for one
/// piece of each literal instead of the literals themselves: a few dozen
/// pieces that seldom occur are found faster than the literals whose
/// first four bytes (what a SIMD literal search compares first) are common
/// in text, and each piece found is checked against its literals at once.
/// A literal with none of these is searched by its first four bytes.
///
/// The order matters: Teddy puts the 1st, 17th, 33rd and 49th piece in
/// one bucket, the 2nd, 18th, ... in the next, and a bucket whose pieces
/// share fewer bits lets fewer ordinary bytes through to be checked. This
/// order let through the fewest of 16 MiB of logs and source code.
const PIECES: &[&[u8; PIECE_LEN]] = &[
    b"-107",
    b"oom_",
    b"CL e",
    b"xit ",
    b"ity;",
    b"C000",
    b"k (m",
    b"udaE",
    b"KV c",
    b"cks:",
    b"d ad",
    b"OutO",
    b"SIGK",
    b"TUS_",
    b"nccl",
    b"DA_E",
    b"UT_O",
    b"y, d",
    b"oo s",
    b"U is",
    b"hipE",
    b"or 1",
    b"NVRM",
    b" ava",
    b"ht c",
    b"cati",
    b"ille",
    b"xite",
    b"on `",
    b"DIA-",
    b"itco",
    b"ERT ",
    b"\xe5\xb7\xb2\xe6",
    b"oom-",
    b"CL W",
    b"xas ",
    b"c000",
    b"or: ",
    b"n ra",
    b"xcee",
    b" to ",
    b"epti",
    b"iled",
    b"ut o",
    b"eq l",
    b"ered",
    b"nal:",
    b" Mem",
    b"lt=2",
    b"gh m",
    b"CL E",
    b"XIT ",
    b"ailu",
    // `Segmentation fault` and ROCr's `Memory access fault by GPU node-`
    // share it (it took the place of `Segm`, so the count stays).
    b" fau",
];

/// The literal search: aho-corasick's packed (Teddy) searcher, called
/// directly, finds the pieces; each piece found is checked against the
/// literals it stands for. Through the `regex` crate the literals ran Teddy
/// and then a lazy DFA on each candidate; searched directly, the literals
/// themselves made Teddy check a candidate every few bytes of an ordinary
/// log (their first bytes, such as `xit ` or `Kill`, are common). Where
/// Teddy is not available (no SSSE3 or NEON), an Aho-Corasick automaton
/// searches the literals.
pub(super) enum Prefilter {
    Pieces {
        searcher: aho_corasick::packed::Searcher,
        /// For each piece (by pattern id), the literals containing it and
        /// where in each it is.
        literals: Vec<Vec<(&'static [u8], usize)>>,
    },
    Automaton(aho_corasick::AhoCorasick),
}

impl Prefilter {
    /// The start of a literal in `haystack` at or after `from`, on the
    /// first line that has one (not necessarily the first on that line: a
    /// literal never spans lines, and one is enough to look at a line).
    pub(super) fn find_at(&self, haystack: &[u8], from: usize) -> Option<usize> {
        if from > haystack.len() {
            return None;
        }
        match self {
            Prefilter::Pieces { searcher, literals } => {
                let mut at = from;
                while let Some(m) =
                    searcher.find_in(haystack, aho_corasick::Span::from(at..haystack.len()))
                {
                    let piece = m.start();
                    for &(literal, offset) in &literals[m.pattern().as_usize()] {
                        let Some(start) = piece.checked_sub(offset).filter(|&s| s >= from) else {
                            continue;
                        };
                        if haystack[start..].starts_with(literal) {
                            return Some(start);
                        }
                    }
                    at = piece + 1;
                }
                None
            }
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
}

/// The piece the prefilter searches for `literal`, and where it is in it.
fn piece_of(literal: &'static str) -> (&'static [u8], usize) {
    let bytes = literal.as_bytes();
    PIECES
        .iter()
        .find_map(|piece| memchr::memmem::find(bytes, &piece[..]).map(|at| (&piece[..], at)))
        .unwrap_or((&bytes[..PIECE_LEN.min(bytes.len())], 0))
}

#[allow(clippy::expect_used)] // literals always build an automaton; tested on every run
pub(super) fn prefilter() -> &'static Prefilter {
    static SEARCHER: OnceLock<Prefilter> = OnceLock::new();
    SEARCHER.get_or_init(|| {
        let literals = prefilter_literals();
        let mut pieces: Vec<&'static [u8]> = Vec::new();
        let mut by_piece: Vec<Vec<(&'static [u8], usize)>> = Vec::new();
        for literal in &literals {
            let (piece, offset) = piece_of(literal);
            let at = pieces.iter().position(|p| *p == piece).unwrap_or_else(|| {
                pieces.push(piece);
                by_piece.push(Vec::new());
                pieces.len() - 1
            });
            by_piece[at].push((literal.as_bytes(), offset));
        }
        // In the order of PIECES (see there); pieces not listed last.
        let rank = |piece: &[u8]| {
            PIECES
                .iter()
                .position(|p| &p[..] == piece)
                .unwrap_or(PIECES.len())
        };
        let mut order: Vec<usize> = (0..pieces.len()).collect();
        order.sort_by_key(|&i| (rank(pieces[i]), pieces[i]));
        let pieces: Vec<&'static [u8]> = order.iter().map(|&i| pieces[i]).collect();
        let by_piece: Vec<Vec<(&'static [u8], usize)>> = order
            .iter()
            .map(|&i| std::mem::take(&mut by_piece[i]))
            .collect();
        let packed = aho_corasick::packed::Config::new()
            .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
            .builder()
            .extend(&pieces)
            .build();
        match packed {
            // Literals shorter than a piece are searched by themselves, so
            // every pattern must have the same length for the pieces to
            // stand for their literals exactly.
            Some(searcher) if pieces.iter().all(|p| p.len() == PIECE_LEN) => Prefilter::Pieces {
                searcher,
                literals: by_piece,
            },
            _ => Prefilter::Automaton(
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

/// Calls `each` with the start of every occurrence in `text` of a family's
/// literal and the families (as bits by their place in [`FAMILIES`]) that
/// have it. A family can start a message only on a line with one: each
/// family's triggers occur on its first line, and each literal is part of
/// the trigger it stands for.
pub(super) fn triggers_in(text: &[u8], mut each: impl FnMut(usize, u64)) {
    let gate = family_gate();
    for m in gate.automaton.find_overlapping_iter(text) {
        each(m.start(), gate.families[m.pattern().as_usize()]);
    }
}

/// The triggers and literals that hold a digit: a line with one in it may
/// be decided differently from a line of the same shape with other figures
/// there.
pub(super) fn literals_with_figures() -> &'static [&'static str] {
    static LITERALS: OnceLock<Vec<&'static str>> = OnceLock::new();
    LITERALS.get_or_init(|| {
        let mut all = prefilter_literals();
        all.extend_from_slice(TRACEBACK_TRIGGERS);
        all.extend_from_slice(diagnostics::TRIGGERS);
        for family in FAMILIES {
            all.extend_from_slice(family.triggers());
            all.extend(family.triggers().iter().map(|t| literal_for(t)));
        }
        all.retain(|l| l.bytes().any(|b| b.is_ascii_digit()));
        all.sort_unstable();
        all.dedup();
        all
    })
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
