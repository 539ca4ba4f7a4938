//! Lines decided before. What handling a line amounts to (its log prefixes,
//! its rank, the message that starts on it, if any) is decided once per
//! exact text, or once per shape (figures masked, see [`super::shape`]) when
//! the decision did not depend on the figures' values, and repeated for the
//! next such line without normalising it or trying any family's patterns.
//! A line whose rank has a traceback open, or that comes while a
//! diagnostic table is read, is handled in full.

use super::lines::{detect_start, leading_time_bytes, Pending, Scanner, Start};
use super::memo::{Known, RankAt};
use super::prefilter::literals_with_figures;
use super::shape::FastMap;
use super::shape::{digit_runs, EntryId, KeyKind, Keys};
use super::{MAX_LINE, MAX_RANK_STATES};
use crate::context;
use crate::detect::FAMILIES;
use crate::diagnostics;
use crate::normalize::normalize;

/// Continuation decisions kept at most (then all are forgotten at once).
const MAX_CONTINUATIONS: usize = 1024;

/// Whether `raw`, whose key is `keys`, can be remembered: short, and free
/// of what normalising rewrites rather than cuts off (escape sequences,
/// carriage returns, a JSON record). A line is remembered only when it is
/// UTF-8 too; a line that matches one remembered differs from it in ASCII
/// figures at most, so it is UTF-8 as well, and is decoded as text only
/// where text is needed.
fn rememberable(raw: &[u8], keys: &Keys) -> bool {
    !keys.unusual && !raw.trim_ascii_end().ends_with(b"}")
}

impl Scanner {
    /// Handles `raw` (the line at absolute offset `line_at`, ending before
    /// `next_at`) as decided before, or decides it now and remembers the
    /// decision. False when it must be handled in full (the caller does).
    pub(super) fn handle_known(
        &mut self,
        raw: &[u8],
        (line_at, next_at): (u64, u64),
        before: &[u8],
        offset: u64,
    ) -> bool {
        if self.diagnostic.is_some() || !self.remember {
            return false;
        }
        let keys = self.shapes.keys(raw);
        if !rememberable(raw, &keys) {
            return false;
        }
        let (id, known) = match self.shapes.get(raw, &keys) {
            Some((id, known)) => (id, *known),
            None => {
                let (kind, known) = match std::str::from_utf8(raw) {
                    Ok(text) => self.decide(text),
                    Err(_) => (KeyKind::Exact, None),
                };
                let (id, emptied) = self.shapes.insert(raw, &keys, kind, known);
                if emptied {
                    self.continuations.clear();
                }
                (id, known)
            }
        };
        let Some(known) = known else {
            return false;
        };
        let rank = known.rank(raw);
        if self
            .ranks
            .get(&rank)
            .is_some_and(|state| state.traceback.in_frames())
        {
            return false;
        }
        if !self.apply(raw, id, &known, rank, before, offset) {
            return false;
        }
        // Runs of lines that hold no progress counter need no search for
        // one (see `progress_before`).
        if known.counter_free {
            self.counter_free.extend(line_at, next_at);
        }
        // And runs that state nothing need no reading (see `stated_before`).
        if known.says_nothing {
            self.says_nothing.extend(line_at, next_at);
        }
        true
    }

    /// Decides what handling `line` amounts to, and whether the decision
    /// holds for every line of its shape or only for its exact text.
    /// `None`: it cannot be decided ahead (it opens or chains a traceback,
    /// starts a diagnostic table, or normalising does more than cut off
    /// prefixes).
    pub(super) fn decide(&mut self, line: &str) -> (KeyKind, Option<Known>) {
        let normalized = normalize(line);
        let [normalized] = normalized.as_slice() else {
            return (KeyKind::Exact, None);
        };
        let text = normalized.text.as_str();
        let Some(text_at) = line
            .len()
            .checked_sub(text.len())
            .filter(|&at| line.get(at..) == Some(text))
        else {
            return (KeyKind::Exact, None);
        };
        if context::opens_or_chains_traceback(text) {
            return (KeyKind::Exact, None);
        }
        let detection = detect_start(text);
        let start = detection.start;
        if start.is_none() && diagnostics::start(text).is_some() {
            return (KeyKind::Exact, None);
        }
        // The rank is read again from each line of a shape: from the one
        // run of digits in the prefixes that holds it. Runs of more than
        // nine digits could fail to parse on another line of the shape.
        let prefix = &line.as_bytes()[..text_at];
        let short_figures = digit_runs(prefix).all(|(start, end)| end - start <= 9);
        let (rank, located) = match normalized.rank {
            None => (RankAt::None, short_figures),
            Some(rank) => {
                let mut holding = digit_runs(prefix).filter(|&(start, end)| {
                    std::str::from_utf8(&prefix[start..end])
                        .ok()
                        .and_then(|digits| digits.parse::<u32>().ok())
                        == Some(rank)
                });
                match (holding.next(), holding.next()) {
                    (Some((start, end)), None) if short_figures => {
                        (RankAt::Digits(start, end), true)
                    }
                    _ => (RankAt::Value(rank), false),
                }
            }
        };
        self.shapes.find_figures(line.as_bytes());
        // Normalising decodes an HTML entity by its number (`&#39;`), and
        // only some numbers are characters: such lines by their text.
        let entity = memchr::memmem::find(line.as_bytes(), b"&#").is_some();
        let by_shape = located
            && !entity
            && self.figure_blind(detection.tried)
            && !literals_with_figures()
                .iter()
                .any(|literal| self.shapes.might_contain(literal.as_bytes()));
        let rank = match (by_shape, normalized.rank) {
            (false, Some(value)) => RankAt::Value(value),
            _ => rank,
        };
        let known = Known {
            text_at,
            rank,
            engine: normalized.engine,
            start,
            counter_free: !context::may_start_progress(line.as_bytes()),
            says_nothing: !context::may_state(line.as_bytes()),
        };
        let kind = if by_shape {
            KeyKind::Shape
        } else {
            KeyKind::Exact
        };
        (kind, Some(known))
    }

    /// Whether every family in `families` (bits by place in [`FAMILIES`])
    /// answers the same for every line of the shape of the line last given
    /// to the table: none of the phrases in which it reads figures can be
    /// on such a line, and no figure follows a word after which it reads one.
    fn figure_blind(&self, families: u64) -> bool {
        FAMILIES
            .iter()
            .enumerate()
            .filter(|(index, _)| families & (1 << index) != 0)
            .all(|(_, family)| {
                self.shapes.blind_to(family.start_figure_phrases())
                    && !self.shapes.figure_after_word(family.start_figure_words())
            })
    }

    /// Does what [`Scanner::handle`] does with the line, as `known` says.
    /// False, having changed nothing that handling it in full would not
    /// change the same way, if the line turned out not to be UTF-8 where
    /// text was needed (which a line remembered cannot be).
    fn apply(
        &mut self,
        raw: &[u8],
        id: EntryId,
        known: &Known,
        rank: Option<u32>,
        before: &[u8],
        offset: u64,
    ) -> bool {
        let body = &raw[known.text_at..];
        // Text is needed for a message that starts here; otherwise only
        // when an open message takes the line.
        let mut text = None;
        if known.start.is_some() {
            match std::str::from_utf8(body) {
                Ok(body) => text = Some(body),
                Err(_) => return false,
            }
        }
        if self.ranks.len() >= MAX_RANK_STATES && !self.ranks.contains_key(&rank) {
            self.evict_rank_states();
        }
        let line_no = self.line_no;
        let state = self.ranks.entry(rank).or_default();
        state.last_line = line_no;
        if let Some(pending) = state.pending.as_mut() {
            let fits = pending.bytes + body.len() <= MAX_LINE;
            let (glues, continues) = if fits {
                let Some((glues, continues)) =
                    continuation(&mut self.continuations, pending, id, body, &mut text)
                else {
                    return false;
                };
                (glues, continues)
            } else {
                (false, false)
            };
            if glues || continues {
                let Some(text) = text.or_else(|| std::str::from_utf8(body).ok()) else {
                    return false;
                };
                pending.bytes += text.len();
                // No longer the one remembered line it started as.
                pending.shape = None;
                if glues {
                    if let Some(last) = pending.lines.last_mut() {
                        last.push_str(text);
                    }
                } else {
                    pending.engine = pending.engine.or(known.engine);
                    pending.lines.push(text.to_string());
                }
                return true;
            }
            if let Some(done) = state.pending.take() {
                self.finish_pending(done, rank);
            }
        }
        // Not a traceback's line: the builder has nothing to read in it.
        match (known.start, text) {
            (Some((family_index, start)), Some(text)) => self.start_pending(
                Start {
                    rank,
                    family_index,
                    text,
                    start,
                    engine: known.engine,
                    shape: Some(id),
                    says_nothing: known.says_nothing,
                },
                None,
                leading_time_bytes(raw),
                before,
                offset,
            ),
            _ => {
                if let Some(state) = self.ranks.get_mut(&rank) {
                    state.traceback.settle();
                }
            }
        }
        true
    }
}

/// Whether `body` (the line remembered as `id`) glues onto or continues
/// `pending`: (glues, continues). Decided once per pair of remembered lines
/// while the message is still the one line it started as, when the answer
/// cannot depend on figures: both lines remembered by their exact text, or a
/// family whose `continues` and `glues` read no figure. `text` is `body` as
/// text, decoded here if needed; `None` if it is not UTF-8.
fn continuation<'a>(
    cache: &mut FastMap<(usize, EntryId, EntryId), (bool, bool)>,
    pending: &Pending,
    id: EntryId,
    body: &'a [u8],
    text: &mut Option<&'a str>,
) -> Option<(bool, bool)> {
    let family = pending.family;
    let key = pending
        .shape
        .filter(|shape| {
            pending.lines.len() == 1
                && (family.message_figure_blind()
                    || (shape.kind == KeyKind::Exact && id.kind == KeyKind::Exact))
        })
        .map(|shape| (pending.family_index, shape, id));
    if let Some(decided) = key.and_then(|key| cache.get(&key)) {
        return Some(*decided);
    }
    let line = match *text {
        Some(line) => line,
        None => {
            let line = std::str::from_utf8(body).ok()?;
            *text = Some(line);
            line
        }
    };
    let glues = family.glues(&pending.lines, line);
    let continues = !glues && family.continues(&pending.lines, line);
    if let Some(key) = key {
        if cache.len() >= MAX_CONTINUATIONS {
            cache.clear();
        }
        cache.insert(key, (glues, continues));
    }
    Some((glues, continues))
}
