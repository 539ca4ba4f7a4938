//! Streams an input and finds the messages in it.
//!
//! The input is read in blocks and never held whole. A literal prefilter (one
//! `regex` of every family's trigger phrases, which the regex crate turns into
//! a SIMD multi-literal search) skips the noise; only lines around a hit are
//! decoded, normalised and handed to the families. Memory stays bounded: a
//! line longer than [`MAX_LINE`] is cut into pieces of that size.

use crate::context::{self, TracebackBuilder, TracebackEvent};
use crate::detect::{self, Family, Message, FAMILIES};
use crate::error::{Error, Result};
use crate::normalize::{normalize, Normalized};
use crate::record::{Finding, Traceback};
use regex::bytes::Regex as BytesRegex;
use std::collections::HashMap;
use std::io::{ErrorKind, Read};
use std::sync::OnceLock;

/// Longest piece of a line processed at once; longer lines are cut.
pub const MAX_LINE: usize = 1 << 20;
/// Bytes read per `read` call.
const READ_SIZE: usize = 256 * 1024;
/// Bytes before a crash searched for progress counters.
const LOOKBACK: usize = 128 * 1024;
/// Findings kept per input; more are counted, not stored.
pub const MAX_FINDINGS: usize = 10_000;
/// Copies of one crash from other ranks are folded when this close (in lines).
const FOLD_WINDOW_LINES: u64 = 20_000;
/// Distinct rank states kept; a log naming more ranks than this is unusual.
const MAX_RANK_STATES: usize = 4096;
/// Bytes of message text kept per finding (issue 6: without a cap, a long
/// line full of distinct messages kept a megabyte per finding, twice). The
/// longest real message is about 2 KB; the decoders still see all of it.
pub const MAX_TEXT: usize = 8 * 1024;

/// Phrases that start a traceback or a chain; always worth a look.
const TRACEBACK_TRIGGERS: &[&str] = &[
    "Traceback (most recent call last)",
    "During handling of the above exception",
    "The above exception was the direct cause",
];

#[allow(clippy::expect_used)] // constant pattern, compiled on every test run
fn prefilter() -> &'static BytesRegex {
    static RE: OnceLock<BytesRegex> = OnceLock::new();
    RE.get_or_init(|| {
        let mut literals: Vec<&str> = TRACEBACK_TRIGGERS.to_vec();
        for family in FAMILIES {
            literals.extend_from_slice(family.triggers());
        }
        let pattern = literals
            .iter()
            .map(|l| regex::escape(l))
            .collect::<Vec<_>>()
            .join("|");
        BytesRegex::new(&pattern).expect("escaped literals always compile")
    })
}

/// What scanning one input produced.
#[derive(Debug, Default)]
pub struct ScanOutcome {
    /// Findings in the order they occurred, copies folded.
    pub findings: Vec<Finding>,
    /// Lines read.
    pub lines: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Findings beyond [`MAX_FINDINGS`] that were counted but not kept.
    pub dropped_findings: u64,
    /// Lines longer than [`MAX_LINE`] that were processed in pieces.
    pub long_lines: u64,
}

/// Scans `reader` to its end. `input` names it in findings and errors.
pub fn scan<R: Read>(mut reader: R, input: &str) -> Result<ScanOutcome> {
    let mut scanner = Scanner::new(input);
    let mut buf: Vec<u8> = Vec::with_capacity(READ_SIZE * 2);
    // buf[history..start] is already processed (kept for look-back);
    // buf[start..] is not yet processed.
    let mut history = 0usize;
    let mut start = 0usize;
    let mut eof = false;
    while !eof {
        // Keep at most LOOKBACK processed bytes, then make room to read.
        let keep_from = start.saturating_sub(LOOKBACK).max(history);
        if keep_from > 0 {
            buf.drain(..keep_from);
            scanner.base_offset += keep_from as u64;
            start -= keep_from;
        }
        history = 0;
        let filled = buf.len();
        buf.resize(filled + READ_SIZE, 0);
        let n = loop {
            match reader.read(&mut buf[filled..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(Error::Read {
                        input: input.to_string(),
                        source,
                    })
                }
            }
        };
        buf.truncate(filled + n);
        scanner.outcome.bytes += n as u64;
        eof = n == 0;

        // Process whole lines; at EOF, the rest; a too-long line, in pieces
        // of exactly MAX_LINE bytes so that the pieces do not depend on how
        // the input arrived. Only the first line of `avail` can be long: all
        // lines after its newline came in the last read.
        loop {
            let avail = &buf[start..];
            if avail.is_empty() {
                break;
            }
            let head = &avail[..avail.len().min(MAX_LINE)];
            if memchr::memchr(b'\n', head).is_some() {
                let last_nl = memchr::memrchr(b'\n', avail).unwrap_or(0);
                let end = start + last_nl + 1;
                scanner.process_region(&buf, start, end);
                start = end;
            } else if avail.len() >= MAX_LINE {
                if !scanner.in_cut_line {
                    scanner.outcome.long_lines += 1;
                }
                scanner.process_region(&buf, start, start + MAX_LINE);
                scanner.in_cut_line = true;
                start += MAX_LINE;
            } else if eof {
                let end = buf.len();
                scanner.process_region(&buf, start, end);
                start = end;
            } else {
                break;
            }
        }
    }
    Ok(scanner.finish())
}

struct Pending {
    family: &'static dyn Family,
    lines: Vec<String>,
    /// Bytes in `lines`; a message takes no more lines past MAX_LINE.
    bytes: usize,
    /// Order in which pending messages started, to finish them in order.
    seq: u64,
    prefix: String,
    line: u64,
    traceback: Option<Traceback>,
    last_step: Option<u64>,
}

#[derive(Default)]
struct RankState {
    pending: Option<Pending>,
    traceback: TracebackBuilder,
    /// Line last fed to this state, to evict the least recently seen.
    last_line: u64,
}

impl RankState {
    fn is_active(&self) -> bool {
        self.pending.is_some() || self.traceback.in_frames()
    }
}

struct Scanner<'i> {
    input: &'i str,
    /// Absolute offset of `buf[0]`.
    base_offset: u64,
    /// Number of the line that starts at the current position (1-based).
    line_no: u64,
    /// True when the previous piece ended without a newline (a cut line).
    in_cut_line: bool,
    ranks: HashMap<Option<u32>, RankState>,
    collector: Collector,
    /// Absolute offset up to which progress counters were searched.
    progress_until: u64,
    last_step: Option<u64>,
    outcome: ScanOutcome,
    /// Pending messages started so far (for [`Pending::seq`]).
    started: u64,
}

impl<'i> Scanner<'i> {
    fn new(input: &'i str) -> Self {
        Scanner {
            input,
            base_offset: 0,
            line_no: 1,
            in_cut_line: false,
            ranks: HashMap::new(),
            collector: Collector::default(),
            progress_until: 0,
            last_step: None,
            outcome: ScanOutcome::default(),
            started: 0,
        }
    }

    fn is_idle(&self) -> bool {
        !self.ranks.values().any(RankState::is_active)
    }

    /// Processes buf[from..to], which ends at a newline, at EOF or at a cut.
    fn process_region(&mut self, buf: &[u8], from: usize, to: usize) {
        let mut pos = from;
        while pos < to {
            if self.is_idle() {
                // Fast path: jump to the line of the next prefilter hit.
                let hit = prefilter().find_at(&buf[..to], pos);
                let Some(hit) = hit else {
                    self.count_lines(&buf[pos..to]);
                    return;
                };
                let line_start =
                    memchr::memrchr(b'\n', &buf[pos..hit.start()]).map_or(pos, |i| pos + i + 1);
                self.count_lines(&buf[pos..line_start]);
                pos = line_start;
            }
            let (line_end, next) = match memchr::memchr(b'\n', &buf[pos..to]) {
                Some(i) => (pos + i, pos + i + 1),
                None => (to, to),
            };
            self.process_line(buf, pos, line_end);
            if next > line_end {
                self.line_no += 1;
                self.outcome.lines += 1;
                self.in_cut_line = false;
            }
            pos = next;
        }
    }

    fn count_lines(&mut self, bytes: &[u8]) {
        let n = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        if n > 0 {
            self.in_cut_line = false;
        }
        self.line_no += n;
        self.outcome.lines += n;
    }

    fn process_line(&mut self, buf: &[u8], from: usize, to: usize) {
        let raw = &buf[from..to];
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        // A carriage return inside a line is a progress-bar redraw: each part is a line.
        for piece in raw.split(|&b| b == b'\r') {
            let text = String::from_utf8_lossy(piece);
            for normalized in normalize(&text) {
                self.handle(normalized, buf, from);
            }
        }
    }

    fn handle(&mut self, line: Normalized, buf: &[u8], line_start: usize) {
        if self.ranks.len() >= MAX_RANK_STATES && !self.ranks.contains_key(&line.rank) {
            self.evict_rank_states();
        }
        let state = self.ranks.entry(line.rank).or_default();
        state.last_line = self.line_no;

        if let Some(pending) = state.pending.as_mut() {
            // Bounded: up to 200 boilerplate lines of up to MAX_LINE each
            // could otherwise pile up in one message (issue 6).
            if pending.bytes + line.text.len() <= MAX_LINE
                && pending.family.continues(&pending.lines, &line.text)
            {
                pending.bytes += line.text.len();
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
        let detected = detect_start(&line.text);
        let state = self.ranks.entry(line.rank).or_default();
        let Some((family, start)) = detected else {
            state.traceback.settle();
            return;
        };
        let traceback = if event == TracebackEvent::ExceptionLine {
            state.traceback.take_completed()
        } else {
            None
        };
        let last_step = self.progress_before(buf, line_start);
        self.started += 1;
        let pending = Pending {
            family,
            bytes: line.text.len() - start,
            seq: self.started,
            lines: vec![line.text[start..].to_string()],
            prefix: line.text[..start].to_string(),
            line: self.line_no,
            traceback,
            last_step,
        };
        self.ranks.entry(line.rank).or_default().pending = Some(pending);
    }

    /// Keeps the rank states bounded (issue 6). Idle states go first. If at
    /// least half are still mid-message or mid-traceback (a log naming
    /// thousands of ranks that never finish), the least recently seen half
    /// is closed: pending messages become findings, open tracebacks are
    /// dropped. A sweep frees at least half the slots, so its cost is spread
    /// over as many new ranks (it used to sweep for every new rank: quadratic).
    fn evict_rank_states(&mut self) {
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

    /// The last progress counter in the bytes before `line_start`; each byte
    /// is searched at most once over the whole input.
    fn progress_before(&mut self, buf: &[u8], line_start: usize) -> Option<u64> {
        let absolute = self.base_offset + line_start as u64;
        let window_start = absolute
            .saturating_sub(LOOKBACK as u64)
            .max(self.base_offset);
        let from = window_start.max(self.progress_until);
        if from > self.progress_until {
            // A gap since the last search: the old counter may be stale.
            self.last_step = None;
        }
        if from < absolute {
            let lo = (from - self.base_offset) as usize;
            let text = String::from_utf8_lossy(&buf[lo..line_start]);
            if let Some(step) = context::last_step(&text) {
                self.last_step = Some(step);
            }
            self.progress_until = absolute;
        }
        self.last_step
    }

    fn finish_pending(&mut self, pending: Pending, rank: Option<u32>) {
        let message = Message {
            input: self.input,
            line: pending.line,
            prefix: &pending.prefix,
            lines: &pending.lines,
        };
        let Some(mut finding) = pending.family.decode(&message) else {
            return;
        };
        finding.phase = context::infer_phase(pending.traceback.as_ref());
        finding.traceback = pending.traceback;
        finding.last_step = pending.last_step;
        self.collector.push(finding, rank);
    }

    fn finish(mut self) -> ScanOutcome {
        let mut ranks: Vec<_> = self.ranks.drain().collect();
        // In the order the messages started: two can start on one line (a
        // `\r` redraw for another rank), and the map's order is random.
        ranks.sort_by_key(|(_, state)| state.pending.as_ref().map(|p| p.seq));
        for (rank, state) in ranks {
            if let Some(pending) = state.pending {
                self.finish_pending(pending, rank);
            }
        }
        let mut outcome = self.outcome;
        outcome.dropped_findings = self.collector.dropped;
        let mut findings = self.collector.findings;
        // Pendings finished at the end can be out of line order.
        findings.sort_by_key(|f| f.source.line);
        outcome.findings = findings;
        outcome
    }
}

/// The first family whose message starts on this line, unless the line only quotes it.
fn detect_start(text: &str) -> Option<(&'static dyn Family, usize)> {
    FAMILIES.iter().find_map(|family| {
        let start = family.start(text)?;
        if detect::is_quoted(&text[..start]) {
            return None;
        }
        Some((*family, start))
    })
}

/// Cuts a finding's text to [`MAX_TEXT`] bytes (at a character boundary)
/// and says so in a note.
fn cap_text(finding: &mut Finding) {
    if finding.text.len() <= MAX_TEXT {
        return;
    }
    let len = finding.text.len();
    let mut end = MAX_TEXT;
    while !finding.text.is_char_boundary(end) {
        end -= 1;
    }
    // A fresh allocation, not truncate + shrink_to_fit: shrinking in place
    // leaves a hole after each kept text that the next megabyte-sized line
    // does not fit in, and the heap grows by that much per finding.
    finding.text = format!("{} […]", &finding.text[..end]);
    finding.notes.push(format!(
        "the message is {len} bytes long; only its first {} KiB are kept",
        MAX_TEXT / 1024
    ));
}

/// Folds copies of a crash and keeps memory bounded.
#[derive(Default)]
struct Collector {
    findings: Vec<Finding>,
    /// Same kind, rank and text: a repeat of the same message.
    by_text: HashMap<(crate::record::Kind, Option<u32>, String), usize>,
    dropped: u64,
}

impl Collector {
    fn push(&mut self, mut finding: Finding, rank: Option<u32>) {
        cap_text(&mut finding);
        let key = (finding.kind, rank, finding.text.clone());
        if let Some(&i) = self.by_text.get(&key) {
            let first = &mut self.findings[i];
            first.occurrences = first.occurrences.saturating_add(1);
            // A framework often prints the message, then raises it with a
            // traceback (ComfyUI, Lightning): keep what the later copy adds.
            if first.exception.is_none() {
                first.exception = finding.exception;
            }
            if first.traceback.is_none() && finding.traceback.is_some() {
                first.traceback = finding.traceback;
                first.phase = finding.phase;
            }
            return;
        }
        if self.merge_second_print(&finding) {
            return;
        }
        if self.fold_into_other_rank(&finding, rank) {
            return;
        }
        if self.findings.len() >= MAX_FINDINGS {
            self.dropped += 1;
            return;
        }
        finding.ranks = rank.into_iter().collect();
        finding.first_rank = rank;
        finding.devices = finding.device.into_iter().collect();
        if finding.kind.is_consequence() {
            finding.consequence_of = self
                .findings
                .iter()
                .rposition(|f| f.category != crate::record::Category::Crash);
        }
        self.by_text.insert(key, self.findings.len());
        self.findings.push(finding);
    }

    /// Old PyTorch printed one CUDA failure twice: `THCudaCheck FAIL file=F
    /// line=L ...` on stderr, then `RuntimeError: cuda runtime error (2) ...
    /// at F:L` after the traceback. Keep one finding with the exception.
    fn merge_second_print(&mut self, finding: &Finding) -> bool {
        let Some(location) = finding.facts.get("location") else {
            return false;
        };
        let earlier = self.findings.iter_mut().rev().take(8).find(|e| {
            e.kind == finding.kind
                && e.facts.get("location") == Some(location)
                && finding.source.line.saturating_sub(e.source.line) <= 500
        });
        let Some(earlier) = earlier else {
            return false;
        };
        if earlier.exception.is_none() && finding.exception.is_some() {
            earlier.exception.clone_from(&finding.exception);
            earlier.text = format!("{}\n{}", earlier.text, finding.text);
            earlier.traceback.clone_from(&finding.traceback);
            earlier.phase.clone_from(&finding.phase);
        }
        true
    }

    /// The same crash printed by another rank (or, without rank prefixes,
    /// for another device) shortly after: count it on the first copy.
    fn fold_into_other_rank(&mut self, finding: &Finding, rank: Option<u32>) -> bool {
        for earlier in self.findings.iter_mut().rev().take(64) {
            if finding.source.line.saturating_sub(earlier.source.line) > FOLD_WINDOW_LINES {
                return false;
            }
            if earlier.kind != finding.kind
                || earlier.era != finding.era
                || earlier.sizes.requested_bytes != finding.sizes.requested_bytes
            {
                continue;
            }
            let another_copy = match rank {
                Some(r) => !earlier.ranks.is_empty() && !earlier.ranks.contains(&r),
                None => {
                    earlier.ranks.is_empty()
                        && finding.device.is_some_and(|d| {
                            !earlier.devices.is_empty() && !earlier.devices.contains(&d)
                        })
                }
            };
            if another_copy {
                earlier.ranks.extend(rank);
                if let Some(device) = finding.device {
                    if !earlier.devices.contains(&device) {
                        earlier.devices.push(device);
                    }
                }
                earlier.occurrences = earlier.occurrences.saturating_add(1);
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;

    fn scan_str(text: &str) -> ScanOutcome {
        scan(text.as_bytes(), "<test>").unwrap()
    }

    const SEED: &str = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)";

    #[test]
    fn finds_a_pasted_message() {
        let out = scan_str(SEED);
        assert_eq!(out.findings.len(), 1);
        assert_eq!(out.findings[0].kind, Kind::TorchAllocatorOom);
        assert_eq!(out.findings[0].source.line, 1);
    }

    #[test]
    fn counts_lines_through_noise() {
        let log = format!("noise\n\x1b[32mmore noise\x1b[0m\r\n[rank1]: {SEED}\nafter\n");
        let out = scan_str(&log);
        assert_eq!(out.findings[0].source.line, 3);
        assert_eq!(out.findings[0].first_rank, Some(1));
        assert_eq!(out.lines, 4);
    }

    #[test]
    fn attaches_traceback_and_step() {
        let log = format!(
            " 45%|████▌     | 450/1000 [02:13<02:43,  3.37it/s]\nTraceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    loss.backward()\n{SEED}\n"
        );
        let out = scan_str(&log);
        let f = &out.findings[0];
        assert_eq!(f.source.line, 5);
        assert_eq!(f.traceback.as_ref().unwrap().frames.len(), 1);
        assert_eq!(f.phase.name, "backward");
        assert_eq!(f.last_step, Some(450));
    }

    #[test]
    fn folds_ranks_and_repeats() {
        let log = format!("[rank0]: {SEED}\n[rank1]: {SEED}\n[rank0]: {SEED}\n");
        let out = scan_str(&log);
        assert_eq!(out.findings.len(), 1);
        let f = &out.findings[0];
        assert_eq!(f.ranks, vec![0, 1]);
        assert_eq!(f.occurrences, 3);
    }

    #[test]
    fn ignores_quoted_messages() {
        let out = scan_str("    if \"CUDA error: out of memory\" in str(e):\n");
        assert!(out.findings.is_empty());
    }

    #[test]
    fn joins_continuation_lines() {
        let log = "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\nnext\n";
        let out = scan_str(log);
        assert_eq!(out.findings.len(), 1);
        assert_eq!(out.findings[0].text.lines().count(), 3);
    }

    #[test]
    fn cuts_very_long_lines() {
        let mut log = "x".repeat(3 * MAX_LINE + 17);
        log.push_str(SEED);
        log.push('\n');
        let out = scan_str(&log);
        assert_eq!(out.long_lines, 1);
        assert_eq!(out.lines, 1);
    }

    #[test]
    fn chunking_does_not_change_findings() {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let n = self.1.min(self.0.len()).min(out.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let log = format!(
            "a\r\nb\n[rank0]: {SEED}\r\n[rank1]: {SEED}\nRuntimeError: CUDA error: out of memory\n"
        );
        let whole = scan(log.as_bytes(), "t").unwrap();
        for size in [1, 2, 3, 7, 64] {
            let split = scan(Trickle(log.as_bytes(), size), "t").unwrap();
            assert_eq!(split.findings, whole.findings, "read size {size}");
            assert_eq!(split.lines, whole.lines);
        }
    }
}
