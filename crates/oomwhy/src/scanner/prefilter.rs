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
    // Ray's `killed due to the node running low on memory` and the
    // kubelet's `The node was low on resource: memory`.
    "low on ",
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
    // A request over a limit, one key for three triggers: PyTorch's
    // `would exceed allowed memory`, a container's `exceeded memory limit`,
    // TensorFlow's `exceeds 10% of (free) system memory`.
    "exceed",
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
    // Duplicates first: many triggers share a key, and comparing each of
    // several hundred literals with every other was a tenth of a short run.
    literals.sort_unstable();
    literals.dedup();
    // A literal that contains another is redundant: the shorter one already
    // finds its lines.
    let all = literals.clone();
    literals.retain(|l| {
        !all.iter()
            .any(|other| other.len() < l.len() && l.contains(other))
    });
    literals
}

/// Length of a piece: Teddy compares at most the first four bytes of each
/// pattern, so longer pieces would gain nothing.
const PIECE_LEN: usize = 4;

/// Four-byte pieces of the literals, grouped as Teddy's buckets. The
/// prefilter searches for one piece of each literal instead of the literals
/// themselves, and each piece found is checked against its literals at once.
/// A literal takes the first piece listed here that it contains.
///
/// Teddy (aho-corasick's SIMD literal search) first tests every position of
/// the text against each bucket at once: a position passes a bucket when each
/// of its next four bytes has a low half and a high half that some piece of
/// the bucket has there. Each position that passes is checked piece by piece,
/// which is where the time goes when buckets are chosen badly (the search ran
/// at a third of its speed with 64 pieces in an arbitrary order). These
/// pieces and their grouping were chosen together by a search that minimised
/// the positions passing each bucket, plus the pieces' own occurrences, over
/// the benchmark's generated logs, the real pastes in the corpus and the
/// repository's source and documentation; see docs/performance.md.
///
/// There are 16 buckets, Fat Teddy's number (AVX2, taken when there are more
/// than 32 pieces): `teddy_order` lays the pieces out so that each group lands
/// in a bucket of its own.
const BUCKETS: &[&[&[u8; PIECE_LEN]]] = &[
    &[b" is ", b"RT F", b"nccl"],
    &[b"OM w", b"dog ", b"ion ", b"n cu"],
    &[b"-sid", b"ille", b"t():", b"tCod"],
    &[
        b"XIT ",
        b"Xid ",
        b"ent ",
        b"om-k",
        b"xit ",
        b"xite",
        b"\x80\xe6\xad\xbb",
    ],
    &[b"ce I", b"fail", b"o al", b"ove "],
    &[b"able", b"pond", b"q le", b"urne"],
    &[b"(OOM", b"DIA-", b"ttem", b"xcee", b"xits"],
    &[b"TATU", b"VRM:", b"err(", b"tatu", b"uire", b"ult="],
    &[b"noug", b"nter", b"oom_"],
    &[b"-107", b"Allo", b"CL W", b"sali", b"sign"],
    &[b"NPP_", b"s fa", b"ut o"],
    &[b"rror"],
    &[b"IGKI", b"igki", b"in C", b"movi", b"muni", b"w on"],
    &[b"FFT_", b"OUT_", b"OutO", b"ROR_", b"itin", b"ity;"],
    &[b"C000", b"KV c", b"c000", b"mb t", b"t Of"],
    &[b"code", b"ctic", b"kNCC", b"led ", b"lock"],
];

/// Teddy's number of buckets for the pieces above (Fat Teddy).
const TEDDY_BUCKETS: usize = 16;

/// Lays out `groups` (pieces that should share a bucket) as the pattern list
/// aho-corasick's Teddy builder puts in those buckets. Its rule: the pattern
/// with id `i` opens bucket `buckets - 1 - i % buckets` unless an earlier
/// pattern had the same low halves of its bytes, whose bucket it joins. So the
/// first piece of each group (each low-half pattern) must come at an id of the
/// bucket's residue; the others fill the places between. Where nothing is left
/// to fill a place, a piece already placed is repeated there (it joins its own
/// bucket again). Returns the pieces in order, or `None` when they do not fit
/// in `limit` patterns.
pub(super) fn teddy_order<'a>(
    groups: &[Vec<&'a [u8]>],
    buckets: usize,
    limit: usize,
) -> Option<Vec<&'a [u8]>> {
    let low_halves = |piece: &[u8]| -> Vec<u8> { piece.iter().map(|b| b & 0x0f).collect() };
    // Within a group, pieces with the same low halves need only one opening.
    let mut opening: Vec<Vec<&'a [u8]>> = Vec::new();
    let mut joining: Vec<&'a [u8]> = Vec::new();
    for group in groups {
        let mut seen: Vec<Vec<u8>> = Vec::new();
        let mut opens = Vec::new();
        for &piece in group {
            let key = low_halves(piece);
            if seen.contains(&key) {
                joining.push(piece);
            } else {
                seen.push(key);
                opens.push(piece);
            }
        }
        opening.push(opens);
    }
    // The group with the most openings gets the bucket whose places come first.
    opening.sort_by_key(|opens| std::cmp::Reverse(opens.len()));
    if opening.len() > buckets {
        return None;
    }
    let total = opening.iter().map(Vec::len).sum::<usize>() + joining.len();
    let mut order: Vec<&'a [u8]> = Vec::new();
    let mut next = vec![0usize; opening.len()];
    let mut placed = 0;
    while placed < total {
        let residue = order.len() % buckets;
        let piece = if let Some(&piece) = opening.get(residue).and_then(|o| o.get(next[residue])) {
            next[residue] += 1;
            placed += 1;
            piece
        } else if let Some(at) = joining
            .iter()
            .position(|j| order.iter().any(|p| low_halves(p) == low_halves(j)))
        {
            // A piece joins its bucket only after one with its low halves opened it.
            placed += 1;
            joining.remove(at)
        } else {
            // Repeat a piece that already opened its bucket.
            *order.first()?
        };
        order.push(piece);
        if order.len() > limit {
            return None;
        }
    }
    Some(order)
}

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
        /// For each pattern id, the literals containing its piece and
        /// where in each it is (a piece repeated to fill a place in
        /// Teddy's layout has its literals again).
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
                        // Most pieces found in ordinary text (`emor` of any
                        // `memory`) are not in a literal: its first byte
                        // tells, without a call to compare the rest.
                        if haystack.get(start) == literal.first()
                            && haystack[start..].starts_with(literal)
                        {
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

/// The piece the prefilter searches for `literal` (the first listed that it
/// contains), and where it is in it; `None` for a literal with none.
fn piece_of(literal: &str) -> Option<(&'static [u8], usize)> {
    BUCKETS.iter().flat_map(|b| b.iter()).find_map(|piece| {
        memchr::memmem::find(literal.as_bytes(), &piece[..]).map(|at| (&piece[..], at))
    })
}

/// The literals that contain no listed piece (each then searched by its
/// first bytes, in a bucket of its own choosing): none, checked by a test.
#[cfg(test)]
pub(super) fn literals_without_piece() -> Vec<&'static str> {
    prefilter_literals()
        .into_iter()
        .filter(|l| piece_of(l).is_none())
        .collect()
}

/// A literal, and where in it the piece that stands for it is.
type LiteralAt = (&'static [u8], usize);

/// The most patterns the prefilter gives Teddy. aho-corasick refuses Teddy
/// above 64 by a heuristic (more patterns per bucket, more to verify on
/// each bucket hit), which is lifted below so that the layout of `BUCKETS`
/// decides alone: the pieces are chosen rare, so a few more than 64 cost
/// less than the automaton. When additions once pushed them to 75 pieces,
/// eight openings in one bucket no longer fitted, `teddy_order` gave up and
/// Teddy grouped the pieces its own way, a quarter slower on the
/// benchmark's training log; a test now checks that the layout fits. The
/// 114 literals need at least 66 four-byte pieces; the 71 chosen fit 72
/// places.
pub(super) const TEDDY_LIMIT: usize = 72;

/// Whether the prefilter's pieces were laid out in the buckets chosen for
/// them (see `prefilter_stays_small`).
#[cfg(test)]
pub(super) static LAID_OUT: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

#[allow(clippy::expect_used)] // literals always build an automaton; tested on every run
pub(super) fn prefilter() -> &'static Prefilter {
    static SEARCHER: OnceLock<Prefilter> = OnceLock::new();
    SEARCHER.get_or_init(|| {
        let literals = prefilter_literals();
        // Each piece in use, with the literals it stands for.
        let mut stands_for: Vec<(&'static [u8], Vec<LiteralAt>)> = Vec::new();
        let mut unlisted: Vec<&'static [u8]> = Vec::new();
        for literal in &literals {
            let (piece, offset) = piece_of(literal).unwrap_or_else(|| {
                let bytes = literal.as_bytes();
                let piece = &bytes[..PIECE_LEN.min(bytes.len())];
                unlisted.push(piece);
                (piece, 0)
            });
            match stands_for.iter_mut().find(|(p, _)| *p == piece) {
                Some((_, list)) => list.push((literal.as_bytes(), offset)),
                None => stands_for.push((piece, vec![(literal.as_bytes(), offset)])),
            }
        }
        let in_use = |piece: &[u8]| stands_for.iter().any(|(p, _)| *p == piece);
        let mut groups: Vec<Vec<&'static [u8]>> = BUCKETS
            .iter()
            .map(|bucket| {
                bucket
                    .iter()
                    .map(|p| &p[..])
                    .filter(|p| in_use(p))
                    .collect::<Vec<_>>()
            })
            .filter(|g| !g.is_empty())
            .collect();
        unlisted.sort_unstable();
        unlisted.dedup();
        groups.extend(unlisted.into_iter().map(|p| vec![p]));
        let laid_out = teddy_order(&groups, TEDDY_BUCKETS, TEDDY_LIMIT);
        #[cfg(test)]
        LAID_OUT.store(laid_out.is_some(), std::sync::atomic::Ordering::Relaxed);
        let order = laid_out.unwrap_or_else(|| {
            // The buckets do not fit: Teddy groups the pieces its own way.
            groups.concat()
        });
        let by_id: Vec<Vec<LiteralAt>> = order
            .iter()
            .map(|piece| {
                stands_for
                    .iter()
                    .find(|(p, _)| p == piece)
                    .map(|(_, list)| list.clone())
                    .unwrap_or_default()
            })
            .collect();
        let packed = aho_corasick::packed::Config::new()
            .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
            .heuristic_pattern_limits(false)
            .builder()
            .extend(&order)
            .build();
        match packed {
            // Literals shorter than a piece are searched by themselves, so
            // every pattern must have the same length for the pieces to
            // stand for their literals exactly.
            Some(searcher) if order.iter().all(|p| p.len() == PIECE_LEN) => Prefilter::Pieces {
                searcher,
                literals: by_id,
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
