//! Turning finished messages into findings: progress look-back, decoding,
//! diagnostics, and handing findings out.

use super::collect::link_consequences;
use super::collect::{Hold, Landed};
use super::lines::{Pending, Scanner};
use super::memo::Decoded;
use super::{
    ScanOutcome, FOLD_WINDOW_LINES, LOOKBACK, MAX_HOLDS, MAX_RECENT_DIAGNOSTICS, MAX_TEXT,
    MAX_TRACEBACK_AFTER_LINES, TRACEBACK_AFTER_LINES,
};
use crate::context::{self, stated_in, Stated, STATED_LOOKBACK};
use crate::detect::genre::{self, MessageSpan};
use crate::detect::Message;
use crate::diagnostics;
use crate::record::{fact, Category, Finding, Framework, Traceback};
use std::borrow::Cow;

/// Decoded messages remembered at most (then all are forgotten at once).
const MAX_DECODED: usize = 64;
/// Messages longer than this (with their prefix) are decoded each time.
const MAX_DECODED_KEY: usize = 4096;

/// Writes into `key` what decoding `pending` depends on: its family, rank,
/// prefix and lines. For a family whose decoder reads nothing from a
/// timestamp that starts the prefix (see
/// [`crate::detect::Family::message_figure_blind`]) its digits are masked.
/// False when the message is too long to remember.
fn decode_key(pending: &Pending, rank: Option<u32>, key: &mut Vec<u8>) -> bool {
    key.clear();
    // Fewer than 64 families (they are bits of a u64 elsewhere).
    key.push(pending.family_index as u8);
    match rank {
        None => key.push(0),
        Some(rank) => {
            key.push(1);
            key.extend_from_slice(&rank.to_le_bytes());
        }
    }
    let prefix = pending.prefix.as_bytes();
    let time = if pending.family.message_figure_blind() {
        leading_time_len(prefix)
    } else {
        0
    };
    key.extend(
        prefix[..time]
            .iter()
            .map(|&b| if b.is_ascii_digit() { b'0' } else { b }),
    );
    key.extend_from_slice(&prefix[time..]);
    // Bytes that UTF-8 never holds separate the parts.
    key.push(0xFF);
    for line in &pending.lines {
        key.extend_from_slice(line.as_bytes());
        key.push(0xFE);
    }
    key.len() <= MAX_DECODED_KEY
}

/// Length of the date and time that start `text` (`2023-10-02
/// 16:36:14.402881`, `[2023-10-02T16:36:14`), when what follows it is not
/// a letter, digit or `_` (so no name read from the text reaches into it);
/// else 0.
fn leading_time_len(text: &[u8]) -> usize {
    let start = usize::from(text.first() == Some(&b'['));
    let shape = b"dddd-dd-dd?dd:dd:dd";
    let Some(head) = text.get(start..start + shape.len()) else {
        return 0;
    };
    let fits = head.iter().zip(shape).all(|(&b, &s)| match s {
        b'd' => b.is_ascii_digit(),
        b'?' => b == b'T' || b == b' ',
        _ => b == s,
    });
    if !fits {
        return 0;
    }
    let mut end = start + shape.len();
    if matches!(text.get(end), Some(b'.' | b','))
        && text.get(end + 1).is_some_and(u8::is_ascii_digit)
    {
        end += 1;
        while text.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
    }
    match text.get(end) {
        Some(&b) if b.is_ascii_alphanumeric() || b == b'_' => 0,
        _ => end,
    }
}

impl Scanner {
    /// The input's bytes from absolute `from` to the start of the current
    /// line: `before` (starting at absolute `offset`), preceded where `from`
    /// lies further back by the retired blocks, each byte once, in order.
    /// Borrowed when the current data holds them all.
    fn bytes_before<'a>(&self, from: u64, before: &'a [u8], offset: u64) -> Cow<'a, [u8]> {
        let line_start = offset + before.len() as u64;
        if from >= offset {
            return Cow::Borrowed(&before[(from - offset) as usize..]);
        }
        let mut bytes = Vec::new();
        let mut next = from;
        let pieces = self
            .recent
            .iter()
            .map(|b| (b.offset, b.bytes()))
            .chain(std::iter::once((offset, before)));
        for (start, data) in pieces {
            let end = (start + data.len() as u64).min(line_start);
            if next >= start && next < end {
                bytes.extend_from_slice(&data[(next - start) as usize..(end - start) as usize]);
                next = end;
            }
        }
        Cow::Owned(bytes)
    }

    /// The last progress counter in the LOOKBACK bytes before the current
    /// line (`before`, starting at absolute `offset`, preceded by the retired
    /// blocks). Each byte is searched at most once over the whole input,
    /// where it lies (the bytes are copied only when the window spans
    /// blocks).
    pub(super) fn progress_before(&mut self, before: &[u8], offset: u64) -> Option<u64> {
        let line_start = offset + before.len() as u64;
        let window_start = line_start.saturating_sub(LOOKBACK as u64);
        let from = window_start.max(self.progress_until);
        if from > self.progress_until {
            // A gap since the last search: the old counter may be stale.
            self.last_step = None;
        }
        // A run of remembered lines known to hold no counter: nothing to
        // search.
        if from < line_start && !self.counter_free.covers(from, line_start) {
            let step = context::last_step_in_bytes(&self.bytes_before(from, before, offset));
            if let Some(step) = step {
                self.last_step = Some(step);
            }
        }
        self.progress_until = self.progress_until.max(line_start);
        self.last_step
    }

    /// What the lines before the current one state about the job (see
    /// [`crate::context::stated_in`]): the last [`STATED_LOOKBACK`] bytes
    /// before the current line (`before`, starting at absolute `offset`,
    /// and the retired blocks where the window reaches back). Each
    /// byte is read once over the whole input: a log whose every other line
    /// starts a message would otherwise read each line several times.
    pub(super) fn stated_before(&mut self, before: &[u8], offset: u64) -> Stated {
        let line_start = offset + before.len() as u64;
        // The window reaches into the retired blocks: a message on a line
        // carried over a block's end (the last line of a paste without a
        // final newline is one) reads the lines before it too.
        let window_start = line_start.saturating_sub(STATED_LOOKBACK as u64);
        let from = window_start.max(self.stated_until);
        // A run of remembered lines that state nothing: nothing to read.
        if from < line_start && !self.says_nothing.covers(from, line_start) {
            let window = self.bytes_before(from, before, offset);
            let found = stated_in(&window);
            if let Some((at, engine)) = found.engine {
                self.stated_engine = Some((from + at as u64, engine));
            }
            if let Some((at, bytes)) = found.card_bytes {
                self.stated_card = Some((from + at as u64, bytes));
            }
            for (at, line) in context::nearby_lines_in(&window) {
                if self.stated_lines.len() >= STATED_LINES_KEPT {
                    self.stated_lines.pop_front();
                }
                self.stated_lines.push_back((from + at as u64, line));
            }
        }
        self.stated_until = self.stated_until.max(line_start);
        let recent = |at: u64| at >= window_start && at < line_start;
        Stated {
            engine: self
                .stated_engine
                .filter(|&(at, _)| recent(at))
                .map(|(_, engine)| engine),
            card_bytes: self
                .stated_card
                .filter(|&(at, _)| recent(at))
                .map(|(_, bytes)| bytes),
            lines: self
                .stated_lines
                .iter()
                .filter(|&&(at, _)| recent(at))
                .map(|(_, line)| line.clone())
                .collect(),
        }
    }

    /// Where the traceback of `rank` opened, if it is open or just ended
    /// (`line`: the line being read, or the rank's last line at the end of
    /// the input) and opened on one of the [`TRACEBACK_AFTER_LINES`] lines
    /// from the one that ended `hold`'s message, at most
    /// [`MAX_TRACEBACK_AFTER_LINES`] before `line`.
    fn opened_after(&self, hold: &Hold, line: u64) -> bool {
        let Some(state) = self.ranks.get(&hold.rank) else {
            return false;
        };
        let header = line.saturating_sub(state.traceback.lines_since_opening());
        header >= hold.from
            && header < hold.from + TRACEBACK_AFTER_LINES
            && line - header <= MAX_TRACEBACK_AFTER_LINES
    }

    /// The hold of `rank` whose message the traceback that ended on this
    /// line followed, taken from the holds.
    pub(super) fn claim_hold(&mut self, rank: Option<u32>) -> Option<Hold> {
        let at = self.holds.iter().position(|h| h.rank == rank)?;
        let hold = self.holds.remove(at);
        self.opened_after(&hold, self.line_no).then_some(hold)
    }

    /// A traceback of `rank` ended on this line with an exception line
    /// that starts no message: it is the traceback of the message it
    /// followed, if one waits for it.
    pub(super) fn traceback_ended(&mut self, rank: Option<u32>) {
        let Some(hold) = self.claim_hold(rank) else {
            return;
        };
        let traceback = self
            .ranks
            .get_mut(&rank)
            .and_then(|state| state.traceback.take_completed());
        if let Some(traceback) = traceback {
            self.attach(hold.target, traceback);
        }
    }

    /// Gives `traceback` to the finding `target`, if it has none yet: its
    /// frames then tell the phase and the program.
    fn attach(&mut self, target: Landed, traceback: Traceback) {
        if let Some(finding) = self.collector.get_mut(target) {
            if finding.traceback.is_none() {
                finding.phase = context::phase_after(&traceback, &finding.phase);
                finding.traceback = Some(traceback);
            }
        }
    }

    /// Lets go of the holds of ranks that printed nothing since line `mark`
    /// (all of them at the end of the input: `None`), giving each finding
    /// the traceback still open after its message (a paste that ends
    /// inside it), and of holds whose traceback can no longer come in time.
    pub(super) fn close_holds(&mut self, mark: Option<u64>) {
        if self.holds.is_empty() {
            return;
        }
        let holds = std::mem::take(&mut self.holds);
        for hold in holds {
            let (last_line, open) = match self.ranks.get(&hold.rank) {
                Some(state) => (state.last_line, state.traceback.in_frames()),
                None => (0, false),
            };
            let quiet = mark.is_none_or(|mark| last_line < mark);
            let in_time = if open {
                self.opened_after(&hold, last_line)
            } else {
                self.line_no < hold.from + TRACEBACK_AFTER_LINES
            };
            if !quiet && in_time {
                self.holds.push(hold);
                continue;
            }
            if open && in_time {
                let traceback = self
                    .ranks
                    .get(&hold.rank)
                    .and_then(|state| state.traceback.open_traceback());
                if let Some(traceback) = traceback {
                    self.attach(hold.target, traceback);
                }
            }
        }
    }

    /// The line of the earliest finding still held for its traceback.
    pub(super) fn first_held(&self) -> Option<u64> {
        self.holds.iter().map(|h| h.target.0).min()
    }

    /// Decodes a finished message and collects the finding.
    ///
    /// A message decoded before (same family, rank, prefix and lines; for a
    /// figure-blind family, the prefix's leading timestamp aside) is not
    /// decoded again: the earlier finding is copied, or, when it folds into
    /// a finding already collected, only counted there. A log that repeats a
    /// warning on every other line decodes it once.
    pub(super) fn finish_pending(&mut self, pending: Pending, rank: Option<u32>) {
        // The window after the previous finding closes at the next message,
        // whether that one is collected, folded or dropped.
        self.after = None;
        self.collector.landed = None;
        if !self.holds.is_empty() {
            // Another message of the rank: what it held waits no longer.
            self.holds.retain(|h| h.rank != rank);
        }
        let Some(finding) = self.decode_once(&pending, rank) else {
            // Counted on a copy collected before: that copy waits instead.
            self.hold_for_traceback(rank);
            return;
        };
        // A family that consumed the traceback itself may have rebuilt it.
        let mut finding = finding;
        let traceback = pending.traceback.or(finding.traceback.take());
        finding.phase = context::phase_of(
            traceback.as_ref(),
            pending.nearby_traceback.as_ref(),
            &pending.nearby,
        );
        // The traceback followed an earlier message: that message's too,
        // when this one is the same failure raised (same kind).
        let followed = pending
            .follows
            .filter(|hold| hold.target.1 == finding.kind)
            .zip(traceback.clone());
        finding.traceback = traceback;
        finding.last_step = pending.last_step;
        finding.time = pending
            .time
            .map(|time| time.iter().map(|&b| char::from(b)).collect());
        if let Some(card) = pending.stated_card_bytes {
            finding
                .facts
                .entry(fact::STATED_CARD_BYTES.to_string())
                .or_insert_with(|| card.to_string());
        }
        if let Some(engine) = pending.engine {
            finding
                .facts
                .entry(fact::ENGINE.to_string())
                .or_insert_with(|| engine.to_string());
        }
        finding.nearby = pending.nearby;
        crate::detect::launcher::weigh_nearby(&mut finding);
        let collected = self.collector.findings.len();
        self.collector.push(finding, rank);
        if let Some((hold, traceback)) = followed {
            self.attach(hold.target, traceback);
        }
        self.hold_for_traceback(rank);
        // A new finding: the next few lines are read for it.
        self.after = (self.collector.findings.len() > collected).then(|| {
            (
                self.collector.findings.len() - 1,
                context::NEARBY_AFTER_LINES,
            )
        });
        self.offer_recent_diagnostics();
    }

    /// Holds the finding the message just collected landed in when it has
    /// no traceback: one may follow (see [`Hold`]).
    fn hold_for_traceback(&mut self, rank: Option<u32>) {
        let Some(target) = self.collector.landed.take() else {
            return;
        };
        let without = self
            .collector
            .get_mut(target)
            .is_some_and(|f| f.traceback.is_none());
        if !without {
            return;
        }
        self.holds.retain(|h| h.rank != rank);
        if self.holds.len() >= MAX_HOLDS {
            self.holds.remove(0);
        }
        self.holds.push(Hold {
            rank,
            target,
            from: self.line_no,
        });
    }

    /// Reads one line after a finding for the writer's words about the run
    /// (`context::nearby_lines_in`), while the window after it lasts.
    pub(super) fn read_after(&mut self, line: &[u8]) {
        let Some((index, left)) = self.after else {
            return;
        };
        self.after = (left > 1).then_some((index, left - 1));
        let Some(finding) = self.collector.findings.get_mut(index) else {
            self.after = None;
            return;
        };
        // The writer's statement of the failing device's memory (`GPU 0:
        // 357 MiB free, 45.7 GB used`), where the message printed none.
        if let Some(state) = context::device_state_line(line) {
            let memory = matches!(finding.category, Category::Oom | Category::LikelyOom);
            if memory
                && finding.device == Some(state.device)
                && finding.sizes.free_bytes.is_none()
                && !finding.sizes.extra.contains_key("used_bytes")
            {
                finding.sizes.free_bytes = state.free_bytes;
                if let Some(used) = state.used_bytes {
                    finding.sizes.extra.insert("used_bytes".into(), Some(used));
                }
            }
        }
        for (_, words) in context::nearby_lines_in(line) {
            if finding.nearby.len() + words.len() < context::NEARBY_MAX {
                finding.nearby.push('\n');
                finding.nearby.push_str(&words);
            }
        }
    }

    /// Offers the diagnostics no finding has claimed yet to the findings.
    fn offer_recent_diagnostics(&mut self) {
        for (parsed, claimed) in &mut self.recent_diagnostics {
            if !*claimed {
                *claimed = self.collector.offer(parsed);
            }
        }
    }

    /// The finding `pending` decodes to, decoding it only if it was not
    /// decoded before; `None` also when it was only counted on an earlier
    /// copy (see [`Scanner::finish_pending`]).
    fn decode_once(&mut self, pending: &Pending, rank: Option<u32>) -> Option<Finding> {
        let message = Message {
            input: &self.input,
            line: pending.line,
            prefix: &pending.prefix,
            lines: &pending.lines,
        };
        // A traceback of the message's own makes each copy differ.
        if pending.traceback.is_some() || !self.remember {
            return pending.family.decode(&message);
        }
        let mut key = std::mem::take(&mut self.decode_key);
        if !decode_key(pending, rank, &mut key) {
            self.decode_key = key;
            return pending.family.decode(&message);
        }
        let hash = super::shape::hash(&key);
        let decoded = match self.decoded.get_mut(&hash).filter(|d| *d.key == *key) {
            Some(decoded) => decoded,
            None => {
                let finding = pending.family.decode(&message);
                // Folds as `Collector::push` files it: only a finding with
                // no traceback or diagnostics of its own folds without a copy.
                let fold = finding
                    .as_ref()
                    .filter(|f| {
                        f.traceback.is_none() && f.diagnostics.is_none() && f.text.len() <= MAX_TEXT
                    })
                    .map(|f| (f.kind, rank, f.text.clone()));
                if self.decoded.len() >= MAX_DECODED {
                    self.decoded.clear();
                }
                self.decoded.insert(
                    hash,
                    Decoded {
                        key: key.as_slice().into(),
                        finding: finding.clone(),
                        fold,
                        folded_at: None,
                    },
                );
                self.decode_key = key;
                return finding;
            }
        };
        self.decode_key = key;
        let template = decoded.finding.as_ref()?;
        if let Some(fold) = &decoded.fold {
            let at = &mut decoded.folded_at;
            if self
                .collector
                .fold_repeat(fold, at, template.exception.as_ref())
            {
                self.offer_recent_diagnostics();
                return None;
            }
        }
        let mut finding = template.clone();
        finding.source.line = pending.line;
        Some(finding)
    }

    /// Parses a finished diagnostic block and gives it to the nearest OOM
    /// finding collected so far; unclaimed, it waits for a later finding.
    pub(super) fn finish_diagnostic(&mut self, block: &diagnostics::Block) {
        let Some(parsed) = block.parse() else {
            return;
        };
        let claimed = self.collector.offer(&parsed);
        let line_no = self.line_no;
        self.recent_diagnostics
            .retain(|(p, _)| line_no.saturating_sub(p.line()) <= FOLD_WINDOW_LINES);
        if self.recent_diagnostics.len() >= MAX_RECENT_DIAGNOSTICS {
            self.recent_diagnostics.pop_front();
        }
        self.recent_diagnostics.push_back((parsed, claimed));
    }

    /// Finishes every message still collecting lines, in line order, and
    /// lets go of every finding held for a traceback.
    pub(super) fn finish_pendings(&mut self) {
        if let Some(block) = self.diagnostic.take() {
            self.finish_diagnostic(&block);
        }
        let mut pendings: Vec<_> = self
            .ranks
            .iter_mut()
            .filter_map(|(rank, state)| state.pending.take().map(|p| (*rank, p)))
            .collect();
        // In the order the messages started: two can start on one line (a
        // `\r` redraw for another rank), and the map's order is random.
        pendings.sort_by_key(|(_, pending)| pending.seq);
        self.finish_in_order(pendings);
        self.close_holds(None);
    }

    /// [`Stream::settle`]: finishes, in start order, the messages of ranks
    /// whose last line came before line `mark`.
    pub(super) fn finish_pendings_quiet_since(&mut self, mark: u64) {
        let mut pendings: Vec<_> = self
            .ranks
            .iter_mut()
            .filter(|(_, state)| state.last_line < mark)
            .filter_map(|(rank, state)| state.pending.take().map(|p| (*rank, p)))
            .collect();
        pendings.sort_by_key(|(_, pending)| pending.seq);
        self.finish_in_order(pendings);
        self.close_holds(Some(mark));
    }

    /// Finishes `pendings` (sorted in start order). A rank's traceback cut
    /// off by the end of the input (its rank crashed with the others; the
    /// paste ends inside it) tells the phase of the other ranks' messages
    /// that have no traceback.
    fn finish_in_order(&mut self, pendings: Vec<(Option<u32>, Pending)>) {
        let open: Vec<(Option<u32>, crate::record::Traceback)> = self
            .ranks
            .iter()
            .filter_map(|(rank, state)| state.traceback.open_traceback().map(|tb| (*rank, tb)))
            .collect();
        for (rank, mut pending) in pendings {
            if pending.traceback.is_none() {
                if let [(other, tb)] = open.as_slice() {
                    if *other != rank && other.is_some() && rank.is_some() {
                        pending.nearby_traceback = Some(tb.clone());
                    }
                }
            }
            self.finish_pending(pending, rank);
        }
    }

    /// Streaming: hands out the findings that no later line can change.
    pub(super) fn emit_ready(&mut self, on_finding: &mut dyn FnMut(Finding)) {
        if !self.collector.streaming {
            return;
        }
        // No finding still to come can start before this line.
        let earliest_next = self
            .ranks
            .values()
            .filter_map(|state| state.pending.as_ref().map(|p| p.line))
            .fold(self.line_no, u64::min);
        let ready = self
            .collector
            .findings
            .iter()
            .take_while(|f| earliest_next.saturating_sub(f.source.line) > FOLD_WINDOW_LINES)
            .count();
        self.collector.hand_out(ready, on_finding);
    }

    /// Streaming: hands out every finding collected, in line order.
    /// Drops every finding of a small input that reads as a document
    /// showing messages rather than a report of them ([`genre`]). The
    /// look-back blocks still hold a small input whole, so a big log pays
    /// one comparison.
    pub(super) fn drop_if_document(&mut self) {
        let whole = self.recent.front().is_some_and(|b| b.offset == 0);
        if self.outcome.bytes > genre::MAX_BYTES
            || !whole
            || self.collector.findings.is_empty()
            || self.collector.handed_out > 0
        {
            return;
        }
        let mut bytes = Vec::with_capacity(self.outcome.bytes as usize);
        for block in &self.recent {
            bytes.extend_from_slice(block.bytes());
        }
        if bytes.len() as u64 != self.outcome.bytes {
            return;
        }
        let text = String::from_utf8_lossy(&bytes);
        let spans: Vec<MessageSpan<'_>> = self
            .collector
            .findings
            .iter()
            .map(|f| MessageSpan {
                line: f.source.line,
                lines: f.text.lines().count() as u64,
                first: f.text.lines().next().unwrap_or(""),
            })
            .collect();
        if genre::is_document(&text, &spans) {
            self.collector.findings.clear();
            self.collector.by_text.clear();
        }
    }

    /// Streaming, [`super::Stream::settle`]: hands out the findings
    /// collected, in line order, up to the first one still held for its
    /// traceback.
    pub(super) fn emit_settled(&mut self, on_finding: &mut dyn FnMut(Finding)) {
        let Some(held) = self.first_held() else {
            self.emit_all(on_finding);
            return;
        };
        self.collector.findings.sort_by_key(|f| f.source.line);
        // Sorting moved findings: their positions are found again.
        self.collector.reindex();
        let ready = self
            .collector
            .findings
            .iter()
            .take_while(|f| f.source.line < held)
            .count();
        self.collector.hand_out(ready, on_finding);
    }

    pub(super) fn emit_all(&mut self, on_finding: &mut dyn FnMut(Finding)) {
        self.collector.findings.sort_by_key(|f| f.source.line);
        let all = self.collector.findings.len();
        self.collector.hand_out(all, on_finding);
    }

    pub(super) fn finish(mut self) -> ScanOutcome {
        self.finish_pendings();
        self.drop_if_document();
        let mut outcome = self.outcome;
        outcome.dropped_findings = self.collector.dropped;
        let mut findings = self.collector.findings;
        fold_prose_into_messages(&mut findings);
        // Pendings finished at the end can be out of line order. Warnings
        // (allocator retries that are not failures) follow the errors, so
        // that finding [1] is what failed; a library's bare status follows
        // its framework's own out-of-memory message (`told_better`).
        let frameworks_told = frameworks_with_own_oom(&findings);
        lend_device_to_own_oom(&mut findings, &frameworks_told);
        findings.sort_by_key(|f| {
            (
                f.category == crate::record::Category::Warning,
                told_better(f, &frameworks_told),
                f.source.line,
            )
        });
        link_consequences(&mut findings);
        findings
            .iter_mut()
            .for_each(crate::detect::memory_kind::settle);
        outcome.findings = findings;
        outcome
    }
}

/// The poster's own words about a failure (`I keep getting "CUDA out of
/// memory" during training`, a finding stated in prose) where the paste
/// also holds a program's message of the same category: the words name
/// that message, which tells the failure with its figures, so they are
/// not a failure of their own, wherever they stand.
fn fold_prose_into_messages(findings: &mut Vec<Finding>) {
    let in_prose = |f: &Finding| f.facts.get("stated_in_prose").is_some_and(|v| v == "true");
    let told: Vec<crate::record::Category> = findings
        .iter()
        .filter(|f| !in_prose(f))
        .map(|f| f.category)
        .collect();
    findings.retain(|f| !(in_prose(f) && told.contains(&f.category)));
}

/// The frameworks (as far as the paste shows them) whose own
/// out-of-memory message is among the findings.
fn frameworks_with_own_oom(findings: &[Finding]) -> Vec<Framework> {
    findings
        .iter()
        .filter(|f| f.category == crate::record::Category::Oom)
        .map(framework_shown)
        .filter(|framework| *framework != Framework::Unknown)
        .collect()
}

/// One failure told twice: the library's status names the GPU (ONNX
/// Runtime's `GPU=0`) where its framework's own message does not, and the
/// framework's message, which leads, carries it.
fn lend_device_to_own_oom(findings: &mut [Finding], frameworks_told: &[Framework]) {
    let lent: Vec<(Framework, u32)> = findings
        .iter()
        .filter(|f| told_better(f, frameworks_told))
        .filter_map(|f| f.device.map(|device| (framework_shown(f), device)))
        .collect();
    for f in findings
        .iter_mut()
        .filter(|f| f.category == crate::record::Category::Oom && f.device.is_none())
    {
        let framework = framework_shown(f);
        let mut devices = lent.iter().filter(|(lender, _)| *lender == framework);
        // Only an unambiguous GPU is lent.
        if let (Some((_, device)), None) = (devices.next(), devices.next()) {
            f.device = Some(*device);
        }
    }
}

/// The finding's framework; ONNX Runtime's arena message names no
/// package, but its message form is ONNX Runtime's own.
fn framework_shown(f: &Finding) -> Framework {
    if f.era == Some(crate::record::Era::Onnxruntime) {
        Framework::OnnxRuntime
    } else {
        Framework::of(f)
    }
}

/// A CUDA library's bare status (cuBLAS's ALLOC_FAILED inside ONNX
/// Runtime) where the same framework also printed its own out-of-memory
/// message: one failure told twice, and the framework's message (its
/// allocator, its sizes, its settings) is the one to read first.
fn told_better(f: &Finding, frameworks_told: &[Framework]) -> bool {
    f.kind == crate::record::Kind::LibraryAllocFailed
        && f.category == crate::record::Category::LikelyOom
        && frameworks_told.contains(&framework_shown(f))
}

/// Lines before messages whose words are kept for the next message.
const STATED_LINES_KEPT: usize = 8;

#[cfg(test)]
mod tests {
    use super::leading_time_len;
    use crate::record::Kind;

    /// A real ONNX Runtime user's paste (wild case 2260): cuBLAS's bare
    /// status on the first line, the arena's own out-of-memory message on
    /// the last. The arena's message leads; a status from another
    /// framework's process keeps its place in line order.
    #[test]
    fn a_frameworks_own_oom_leads_its_librarys_bare_status() {
        let status = r"onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Gemm node. Name:'fc1' Status Message: D:\a\_work\1\s\onnxruntime\core\providers\cuda\cuda_call.cc:114 onnxruntime::CudaCall CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=TOBI ; file=D:\a\_work\1\s\onnxruntime\core\providers\cuda\cuda_execution_provider.cc ; line=168 ; expr=cublasCreate(&cublas_handle_);";
        let arena = r"onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node. Name:'Conv_111' Status Message: D:\a\_work\1\s\onnxruntime\core\framework\bfc_arena.cc:376 onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 13111296";
        let kinds =
            |text: &str| -> Vec<Kind> { crate::decode_str(text).iter().map(|f| f.kind).collect() };
        let both = kinds(&format!("{status}\n\n{arena}\n"));
        assert_eq!(both.len(), 2, "{both:?}");
        assert_ne!(both[0], Kind::LibraryAllocFailed, "{both:?}");
        assert_eq!(both[1], Kind::LibraryAllocFailed, "{both:?}");
        // The status's `GPU=0` is the arena's GPU too.
        let lead = &crate::decode_str(&format!("{status}\n\n{arena}\n"))[0];
        assert_eq!(lead.device, Some(0));
        assert_eq!(crate::decode_str(arena)[0].device, None);
        // PyTorch's wording: another framework's failure, line order stays.
        let torch = "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`";
        let mixed = kinds(&format!("{torch}\n\n{arena}\n"));
        assert_eq!(mixed.first(), Some(&Kind::LibraryAllocFailed), "{mixed:?}");
    }

    #[test]
    fn finds_the_leading_time_of_a_prefix() {
        assert_eq!(leading_time_len(b"2023-10-02 16:36:14.402881: W x"), 26);
        assert_eq!(leading_time_len(b"[2023-10-02T16:36:14] x"), 20);
        assert_eq!(leading_time_len(b"2023-10-02 16:36:14"), 19);
        // A word goes on after it: a name could reach into it.
        assert_eq!(leading_time_len(b"2023-10-02 16:36:14.40Error: "), 0);
        assert_eq!(leading_time_len(b"W tensorflow/bfc_allocator.cc:296] "), 0);
        assert_eq!(leading_time_len(b"2023-10-02"), 0);
    }
}
