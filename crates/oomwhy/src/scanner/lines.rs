//! Lines: the fast path between prefilter hits and the per-rank state
//! machine that starts and continues messages.

use super::block::{Block, HitLine};
use super::collect::{Collector, Hold};
use super::memo::{Decoded, Known, QuietRun};
use super::prefilter::{count_newlines, prefilter, triggers_in};
use super::shape::{EntryId, FastMap, ShapeTable};
use super::{ScanOutcome, LOOKBACK, MAX_LINE, MAX_RANK_STATES};
use crate::context::{stated_nearby, TracebackBuilder, TracebackEvent};
use crate::detect::{self, Family, FAMILIES};
use crate::diagnostics::{self, Parsed};
use crate::normalize::{normalize, Normalized};
use crate::record::Traceback;
use std::collections::VecDeque;

/// A message starting on a line: for [`Scanner::start_pending`].
pub(super) struct Start<'a> {
    pub(super) rank: Option<u32>,
    pub(super) family_index: usize,
    /// The normalised line.
    pub(super) text: &'a str,
    /// Where in `text` the message starts.
    pub(super) start: usize,
    pub(super) engine: Option<&'static str>,
    pub(super) shape: Option<EntryId>,
    /// The line holds no word its prefix could state (see
    /// [`crate::context::may_state`]); false when not known.
    pub(super) says_nothing: bool,
}

/// How [`Scanner::process_region`] finds the lines of a region worth a look.
#[derive(Clone, Copy)]
pub(super) enum Lines<'a> {
    /// The block's hit lines, listed when it was read; the block line
    /// numbers at the region's start and end.
    Listed {
        hits: &'a [HitLine],
        index_at_from: u64,
        index_at_to: u64,
    },
    /// Not listed: search with the prefilter. The region's newlines, when known.
    Unlisted { newlines: Option<u64> },
}

pub(super) struct Pending {
    pub(super) family: &'static dyn Family,
    /// The family's place in [`FAMILIES`].
    pub(super) family_index: usize,
    /// The remembered line the message started on, if it was one.
    pub(super) shape: Option<EntryId>,
    pub(super) lines: Vec<String>,
    /// Bytes in `lines`; a message takes no more lines past MAX_LINE.
    pub(super) bytes: usize,
    /// Order in which pending messages started, to finish them in order.
    pub(super) seq: u64,
    pub(super) prefix: String,
    pub(super) line: u64,
    pub(super) traceback: Option<Traceback>,
    /// Another rank's traceback left open at the end of the input, for the
    /// phase of a message that has none of its own.
    pub(super) nearby_traceback: Option<Traceback>,
    pub(super) last_step: Option<u64>,
    /// The timestamp of the line it started on.
    pub(super) time: Option<LineTime>,
    /// The serving engine a line prefix of the message named, or a
    /// command line just before it launched.
    pub(super) engine: Option<&'static str>,
    /// The card size the text just before the message states.
    pub(super) stated_card_bytes: Option<u64>,
    /// The lines just before the message, and its own line's prefix, that
    /// may tell how the job ran (`context::nearby_lines_in`).
    pub(super) nearby: String,
    /// The message starts on the exception line of a traceback that
    /// followed an earlier message of its rank (see [`Hold`]).
    pub(super) follows: Option<Hold>,
}

#[derive(Default)]
pub(super) struct RankState {
    pub(super) pending: Option<Pending>,
    pub(super) traceback: TracebackBuilder,
    /// Line last fed to this state, to evict the least recently seen.
    pub(super) last_line: u64,
}

impl RankState {
    pub(super) fn is_active(&self) -> bool {
        self.pending.is_some() || self.traceback.in_frames()
    }
}

pub(super) struct Scanner {
    pub(super) input: String,
    /// Number of the line that starts at the current position (1-based).
    pub(super) line_no: u64,
    /// True when the previous piece ended without a newline (a cut line).
    pub(super) in_cut_line: bool,
    /// True when the last processed byte was not a newline.
    pub(super) mid_line: bool,
    /// By rank. Nothing depends on the map's order (what is finished or
    /// evicted is sorted first), so a fast hash serves.
    pub(super) ranks: FastMap<Option<u32>, RankState>,
    pub(super) collector: Collector,
    /// Blocks already processed, kept for the progress look-back.
    pub(super) recent: VecDeque<Block>,
    /// Absolute offset up to which progress counters were searched.
    pub(super) progress_until: u64,
    pub(super) last_step: Option<u64>,
    /// Absolute offset up to which the lines before messages were read for
    /// what they state, and the last engine and card size found there (with
    /// their absolute offsets).
    pub(super) stated_until: u64,
    pub(super) stated_engine: Option<(u64, &'static str)>,
    pub(super) stated_card: Option<(u64, u64)>,
    /// Lines read before messages that may tell how the job ran, with
    /// their absolute offsets (the last few).
    pub(super) stated_lines: VecDeque<(u64, String)>,
    /// The collected finding the next few lines are read for (its index
    /// in the collector) and how many lines are left to read.
    pub(super) after: Option<(usize, u32)>,
    /// Findings waiting for a traceback printed after their message.
    pub(super) holds: Vec<Hold>,
    pub(super) outcome: ScanOutcome,
    /// The diagnostic table being collected, if any (any rank).
    pub(super) diagnostic: Option<diagnostics::Block>,
    /// Recently parsed diagnostics, and whether a finding claimed each.
    pub(super) recent_diagnostics: VecDeque<(Parsed, bool)>,
    /// Pending messages started so far (for [`Pending::seq`]).
    pub(super) started: u64,
    /// The timestamp that starts the line being processed, if any.
    pub(super) line_time: Option<LineTime>,
    /// Lines decided before, by text or shape (see [`super::known`]).
    pub(super) shapes: ShapeTable<Option<Known>>,
    /// Whether a line continues a one-line message, by (family, the
    /// remembered line the message is, the remembered line): (glues, continues).
    pub(super) continuations: FastMap<(usize, EntryId, EntryId), (bool, bool)>,
    /// Messages decoded before (see [`Scanner::finish_pending`]), by the
    /// hash of what decoding depends on.
    pub(super) decoded: FastMap<u64, Decoded>,
    /// A buffer for that key, kept between messages.
    pub(super) decode_key: Vec<u8>,
    /// The last run of lines, one after another, that were handled as
    /// remembered and hold no progress counter.
    pub(super) counter_free: QuietRun,
    /// The same for a run of remembered lines that state nothing about the
    /// job (see [`crate::context::may_state`]).
    pub(super) says_nothing: QuietRun,
    /// Whether lines and messages decided before are remembered (tests
    /// compare with a scanner that decides everything afresh).
    pub(super) remember: bool,
}

impl Scanner {
    pub(super) fn new(input: &str) -> Self {
        Scanner {
            input: input.to_string(),
            line_no: 1,
            in_cut_line: false,
            mid_line: false,
            ranks: FastMap::default(),
            collector: Collector::default(),
            recent: VecDeque::new(),
            progress_until: 0,
            last_step: None,
            stated_until: 0,
            stated_engine: None,
            stated_card: None,
            stated_lines: VecDeque::new(),
            after: None,
            holds: Vec::new(),
            outcome: ScanOutcome::default(),
            diagnostic: None,
            recent_diagnostics: VecDeque::new(),
            started: 0,
            line_time: None,
            shapes: ShapeTable::default(),
            continuations: FastMap::default(),
            decoded: FastMap::default(),
            decode_key: Vec::new(),
            counter_free: QuietRun::default(),
            says_nothing: QuietRun::default(),
            remember: true,
        }
    }

    pub(super) fn at_line_start(&self) -> bool {
        !self.mid_line
    }

    /// Keeps a processed block for look-back; returns buffers no longer needed.
    pub(super) fn retire(&mut self, mut block: Block) -> Vec<Vec<u8>> {
        let mut freed = Vec::new();
        // Look-back is bounded by the bytes kept, so a short block (what a
        // quiet followed log was flushed with) must not keep a whole
        // buffer: thousands of them once held hundreds of megabytes.
        if block.data.capacity() > 2 * block.len + 4096 {
            let bytes = block.bytes().to_vec();
            freed.push(std::mem::replace(&mut block.data, bytes));
        }
        self.recent.push_back(block);
        let kept = |recent: &VecDeque<Block>| recent.iter().skip(1).map(|b| b.len).sum::<usize>();
        while self.recent.len() > 1 && kept(&self.recent) >= LOOKBACK {
            if let Some(old) = self.recent.pop_front() {
                freed.push(old.data);
            }
        }
        freed
    }

    pub(super) fn is_idle(&self) -> bool {
        // The lines just after a finding are read for the writer's words.
        self.after.is_none()
            && self.diagnostic.is_none()
            && !self.ranks.values().any(RankState::is_active)
    }

    /// Processes data[from..to], which ends at a newline, at EOF or at a cut.
    /// `offset` is the absolute offset of `data[0]`; `lines` says how to find
    /// the lines worth a look.
    pub(super) fn process_region(
        &mut self,
        data: &[u8],
        offset: u64,
        from: usize,
        to: usize,
        lines: Lines<'_>,
    ) {
        let mut pos = from;
        // Listed: the block line number at `pos`. Unlisted: the newlines
        // left in data[pos..to], when known.
        let (mut index, mut remaining) = match lines {
            Lines::Listed { index_at_from, .. } => (index_at_from, None),
            Lines::Unlisted { newlines } => (0, newlines),
        };
        while pos < to {
            if self.is_idle() {
                // Fast path: jump to the next line with a prefilter hit,
                // listed when the block was read, or searched for here.
                match lines {
                    Lines::Listed {
                        hits, index_at_to, ..
                    } => {
                        let next = hits[hits.partition_point(|h| h.start < pos)..]
                            .first()
                            .filter(|h| h.start < to);
                        let Some(&HitLine { start, index: at }) = next else {
                            self.add_lines(index_at_to - index);
                            return;
                        };
                        self.add_lines(at - index);
                        index = at;
                        pos = start;
                    }
                    Lines::Unlisted { .. } => {
                        let Some(hit) = prefilter().find_at(&data[..to], pos) else {
                            let n = remaining.unwrap_or_else(|| count_newlines(&data[pos..to]));
                            self.add_lines(n);
                            return;
                        };
                        let line_start =
                            memchr::memrchr(b'\n', &data[pos..hit]).map_or(pos, |i| pos + i + 1);
                        let n = count_newlines(&data[pos..line_start]);
                        self.add_lines(n);
                        remaining = remaining.map(|r| r.saturating_sub(n));
                        pos = line_start;
                    }
                }
            }
            let (line_end, next) = match memchr::memchr(b'\n', &data[pos..to]) {
                Some(i) => (pos + i, pos + i + 1),
                None => (to, to),
            };
            self.process_line(data, offset, pos, line_end);
            if next > line_end {
                self.add_lines(1);
                index += 1;
                remaining = remaining.map(|r| r.saturating_sub(1));
            }
            pos = next;
        }
    }

    pub(super) fn add_lines(&mut self, n: u64) {
        if n > 0 {
            self.in_cut_line = false;
        }
        self.line_no += n;
        self.outcome.lines += n;
    }

    pub(super) fn process_line(&mut self, data: &[u8], offset: u64, from: usize, to: usize) {
        let raw = &data[from..to];
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        // The lines after a finding are read for the writer's words; the
        // line that ends a message is the first of them.
        let reading = self.after.is_some();
        if reading {
            self.read_after(raw);
        }
        // The next line starts after the newline (a cut line has none: its
        // span then ends one byte late, which only breaks a run).
        let span = (offset + from as u64, offset + to as u64 + 1);
        if !self.handle_known(raw, span, &data[..from], offset) {
            self.process_unknown_line(raw, &data[..from], offset);
        }
        if !reading && self.after.is_some() {
            self.read_after(raw);
        }
    }

    fn process_unknown_line(&mut self, raw: &[u8], before: &[u8], offset: u64) {
        self.line_time = leading_time_bytes(raw);
        // A carriage return inside a line is a progress-bar redraw: each part is a line.
        for piece in raw.split(|&b| b == b'\r') {
            let text = String::from_utf8_lossy(piece);
            for normalized in normalize(&text) {
                self.handle(normalized, before, offset);
            }
        }
    }

    /// Handles one normalised line; `before` holds the bytes of the current
    /// block (or carried line) before it, starting at absolute `offset`.
    pub(super) fn handle(&mut self, line: Normalized, before: &[u8], offset: u64) {
        if self.ranks.len() >= MAX_RANK_STATES && !self.ranks.contains_key(&line.rank) {
            self.evict_rank_states();
        }
        if let Some(block) = self.diagnostic.as_mut() {
            if block.continues(&line.text) {
                return;
            }
            if let Some(block) = self.diagnostic.take() {
                self.finish_diagnostic(&block);
            }
        }
        let state = self.ranks.entry(line.rank).or_default();
        state.last_line = self.line_no;

        if let Some(pending) = state.pending.as_mut() {
            let fits = pending.bytes + line.text.len() <= MAX_LINE;
            if fits && pending.family.glues(&pending.lines, &line.text) {
                pending.bytes += line.text.len();
                pending.shape = None;
                if let Some(last) = pending.lines.last_mut() {
                    last.push_str(&line.text);
                }
                return;
            }
            // Bounded: up to 200 boilerplate lines of up to MAX_LINE each
            // could otherwise pile up in one message (a hostile or runaway log).
            if fits && pending.family.continues(&pending.lines, &line.text) {
                pending.bytes += line.text.len();
                pending.shape = None;
                pending.engine = pending.engine.or(line.engine);
                pending.lines.push(line.text);
                return;
            }
            let done = state.pending.take();
            if let Some(done) = done {
                self.finish_pending(done, line.rank);
            }
        }

        let state = self.ranks.entry(line.rank).or_default();
        let event = state.traceback.feed(&line.text);
        if event == TracebackEvent::Consumed {
            return;
        }
        let detected = detect_start(&line.text).start;
        let state = self.ranks.entry(line.rank).or_default();
        let Some((family_index, start)) = detected else {
            if event == TracebackEvent::ExceptionLine && !self.holds.is_empty() {
                self.traceback_ended(line.rank);
            }
            let state = self.ranks.entry(line.rank).or_default();
            state.traceback.settle();
            if let Some(kind) = diagnostics::start(&line.text) {
                self.diagnostic = Some(diagnostics::Block::new(kind, self.line_no, line.text));
            }
            return;
        };
        let traceback = if event == TracebackEvent::ExceptionLine {
            state.traceback.take_completed()
        } else {
            None
        };
        let follows = match traceback {
            Some(_) if !self.holds.is_empty() => self.claim_hold(line.rank),
            _ => None,
        };
        let time = self.line_time;
        self.start_pending(
            Start {
                rank: line.rank,
                family_index,
                text: &line.text,
                start,
                engine: line.engine,
                shape: None,
                says_nothing: false,
            },
            traceback,
            time,
            before,
            offset,
        );
        if follows.is_some() {
            if let Some(pending) = self
                .ranks
                .get_mut(&line.rank)
                .and_then(|s| s.pending.as_mut())
            {
                pending.follows = follows;
            }
        }
    }

    /// Starts the message that `start` describes, for its rank.
    pub(super) fn start_pending(
        &mut self,
        start: Start<'_>,
        traceback: Option<Traceback>,
        time: Option<LineTime>,
        before: &[u8],
        offset: u64,
    ) {
        let Start {
            rank,
            family_index,
            text,
            start,
            engine,
            shape,
            says_nothing,
        } = start;
        let last_step = self.progress_before(before, offset);
        let stated = self.stated_before(before, offset);
        let engine = engine.or(stated.engine);
        self.started += 1;
        let pending = Pending {
            family: FAMILIES[family_index],
            family_index,
            shape,
            bytes: text.len() - start,
            seq: self.started,
            lines: vec![text[start..].to_string()],
            prefix: text[..start].to_string(),
            line: self.line_no,
            traceback,
            nearby_traceback: None,
            last_step,
            time,
            engine,
            stated_card_bytes: stated.card_bytes,
            nearby: if says_nothing {
                stated.lines.join("\n")
            } else {
                stated_nearby(stated.lines, &text[..start])
            },
            follows: None,
        };
        self.ranks.entry(rank).or_default().pending = Some(pending);
    }

    /// Keeps the rank states bounded (a log may name any number of ranks). Idle states go first. If at
    /// least half are still mid-message or mid-traceback (a log naming
    /// thousands of ranks that never finish), the least recently seen half
    /// is closed: pending messages become findings, open tracebacks are
    /// dropped. A sweep frees at least half the slots, so its cost is spread
    /// over as many new ranks (it used to sweep for every new rank: quadratic).
    pub(super) fn evict_rank_states(&mut self) {
        self.ranks.retain(|_, state| state.is_active());
        if self.ranks.len() < MAX_RANK_STATES / 2 {
            return;
        }
        // Oldest first; the rank breaks ties so that the order never depends
        // on the map's iteration order.
        let mut by_age: Vec<(u64, Option<u32>)> = self
            .ranks
            .iter()
            .map(|(rank, state)| (state.last_line, *rank))
            .collect();
        by_age.sort_unstable();
        let evict = by_age.len() / 2;
        for (_, rank) in by_age.into_iter().take(evict) {
            if let Some(pending) = self.ranks.remove(&rank).and_then(|s| s.pending) {
                self.finish_pending(pending, rank);
            }
        }
    }
}

/// What [`detect_start`] found on a line.
pub(super) struct Detection {
    /// The family whose message starts on the line (its place in
    /// [`FAMILIES`]) and where in the line it starts.
    pub(super) start: Option<(usize, usize)>,
    /// The families whose patterns were tried, as bits by their place in
    /// [`FAMILIES`]; none when the line's trigger phrases were all in a
    /// comment (decided without a pattern).
    pub(super) tried: u64,
}

/// The first family whose message starts on this line, unless the line
/// only quotes it.
pub(super) fn detect_start(text: &str) -> Detection {
    // No family starts on a line without one of its trigger phrases; trying
    // only the families whose phrases occur keeps lines that only look like
    // a message, and lines read while some rank's message is open (the slow
    // path), cheap.
    let mut candidates = 0u64;
    let mut all_in_comment = true;
    triggers_in(text.as_bytes(), |at, families| {
        candidates |= families;
        all_in_comment = all_in_comment && detect::in_comment(text, at);
    });
    // Source code quoting messages in comments: a mention wherever a family
    // would start, decided before any family's pattern runs.
    if candidates == 0 || all_in_comment {
        return Detection {
            start: None,
            tried: 0,
        };
    }
    let mut tried = 0;
    let candidates = FAMILIES
        .iter()
        .enumerate()
        .filter(|(index, _)| candidates & (1 << index) != 0);
    for (index, family) in candidates {
        tried |= 1 << index;
        if let Some(start) = start_of(*family, text) {
            return Detection {
                start: Some((index, start)),
                tried,
            };
        }
    }
    Detection { start: None, tried }
}

/// Where `family`'s message starts on `text`, unless it is only quoted there.
fn start_of(family: &dyn Family, text: &str) -> Option<usize> {
    // A quoted mention can be followed on the same line by the printed
    // message (`raise ValueError("...") ValueError: ...`): look again after
    // each mention, a few times at most.
    let mut from = 0;
    for _ in 0..4 {
        let rest = text.get(from..)?;
        let start = from + family.start(rest)?;
        // A family's offset must be a character boundary; skip it
        // otherwise rather than panic on a hostile line.
        if !text.is_char_boundary(start) {
            return None;
        }
        if !detect::is_mention(text, start) {
            return Some(start);
        }
        from = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// The ISO 8601 date and time that starts a raw line (`2025-03-01T12:00:00.123Z`,
/// `[2025-03-01 12:00:00,123]`), as `2025-03-01 12:00:00.123000000`: the
/// fraction padded to nanoseconds so that two times compare as text. The
/// time zone is ignored: the files of one job share their logger's.
#[cfg(test)]
pub(super) fn leading_time(raw: &[u8]) -> Option<String> {
    leading_time_bytes(raw).map(|time| time.iter().map(|&b| char::from(b)).collect())
}

/// [`leading_time`], as its 29 ASCII bytes: kept so until a finding needs
/// it as text.
pub(super) fn leading_time_bytes(raw: &[u8]) -> Option<LineTime> {
    let raw = raw.strip_prefix(b"[").unwrap_or(raw);
    let digits = |range: std::ops::Range<usize>| {
        raw.get(range)
            .is_some_and(|b| b.iter().all(u8::is_ascii_digit))
    };
    let shape = digits(0..4)
        && raw.get(4) == Some(&b'-')
        && digits(5..7)
        && raw.get(7) == Some(&b'-')
        && digits(8..10)
        && matches!(raw.get(10), Some(b'T' | b' '))
        && digits(11..13)
        && raw.get(13) == Some(&b':')
        && digits(14..16)
        && raw.get(16) == Some(&b':')
        && digits(17..19);
    if !shape {
        return None;
    }
    // The fraction padded with zeros to nanoseconds.
    let mut time = [b'0'; 29];
    time[..10].copy_from_slice(&raw[..10]);
    time[10] = b' ';
    time[11..19].copy_from_slice(&raw[11..19]);
    time[19] = b'.';
    if matches!(raw.get(19), Some(b'.' | b',')) {
        let fraction = raw[20..].iter().take(9).take_while(|b| b.is_ascii_digit());
        for (at, &digit) in fraction.enumerate() {
            time[20 + at] = digit;
        }
    }
    Some(time)
}

/// A line's leading time as [`leading_time`] writes it (ASCII).
pub(super) type LineTime = [u8; 29];
