//! Streams an input and finds the messages in it.
//!
//! The input is read in blocks and never held whole. A literal prefilter (one
//! `regex` of every family's trigger phrases, which the regex crate turns into
//! a SIMD multi-literal search) skips the noise; only lines around a hit are
//! decoded, normalised and handed to the families. Memory stays bounded: a
//! line longer than [`MAX_LINE`] is cut into pieces of that size.

use crate::context::{self, TracebackBuilder, TracebackEvent};
use crate::detect::{self, Family, Message, FAMILIES};
use crate::diagnostics::{self, Parsed};
use crate::error::{Error, Result};
use crate::normalize::{normalize, Normalized};
use crate::record::{Finding, Traceback};
use regex::bytes::Regex as BytesRegex;
use std::collections::{HashMap, VecDeque};
use std::io::{ErrorKind, Read};
use std::sync::{mpsc, OnceLock};

/// Longest piece of a line processed at once; longer lines are cut.
pub const MAX_LINE: usize = 1 << 20;
/// Bytes read per `read` call (at most MAX_LINE: a line inside one block is
/// never too long).
const READ_SIZE: usize = 256 * 1024;
/// Bytes before a crash searched for progress counters.
const LOOKBACK: usize = 128 * 1024;
/// Findings kept per input; more are counted, not stored.
pub const MAX_FINDINGS: usize = 10_000;
/// Copies of one crash from other ranks are folded when this close (in lines).
const FOLD_WINDOW_LINES: u64 = 20_000;
/// Distinct rank states kept; a log naming more ranks than this is unusual.
const MAX_RANK_STATES: usize = 4096;
/// A pasted diagnostic (nvidia-smi, memory summary) belongs to the nearest
/// OOM finding at most this many lines before or after it.
const DIAGNOSTIC_WINDOW_LINES: u64 = 500;
/// Parsed diagnostics kept while waiting for a finding to claim them.
const MAX_RECENT_DIAGNOSTICS: usize = 8;
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

/// Short phrases that stand for every trigger containing them. The
/// prefilter searches for these instead, so that it stays a small set of
/// literals (the regex crate's SIMD multi-literal search handles a few dozen;
/// with a hundred it falls back to a much slower automaton). Each is rare in
/// ordinary log lines (`ordinary_log_lines_miss_the_prefilter`), and the
/// families' own `start` checks keep the precision.
const KEYS: &[&str] = &[
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
fn prefilter() -> &'static BytesRegex {
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

/// A block of input as read, with its newlines already counted.
struct Block {
    data: Vec<u8>,
    len: usize,
    newlines: u64,
    /// Start offsets of every prefilter match in the block, when a worker
    /// thread already searched it (`None`: search while processing).
    hits: Option<Vec<usize>>,
    /// Absolute offset of `data[0]` in the input.
    offset: u64,
}

impl Block {
    fn bytes(&self) -> &[u8] {
        &self.data[..self.len]
    }
}

/// Scans `reader` to its end. `input` names it in findings and errors.
///
/// A reader thread fills blocks; two worker threads count their newlines
/// and search them with the prefilter; this thread decodes only the lines
/// around hits. Memory stays bounded: a few blocks of 256 KiB, one partial
/// line of at most [`MAX_LINE`] bytes, and the findings.
pub fn scan<R: Read + Send>(reader: R, input: &str) -> Result<ScanOutcome> {
    let mut stream = Stream::with_collector(input, Collector::default());
    stream.read_from(reader, &mut |_| {})?;
    Ok(stream.finish_batch())
}

/// Scans `reader` to its end like [`scan`], but hands each finding to
/// `on_finding` as soon as it is complete and can no longer change, instead of
/// keeping them all: memory stays bounded however many findings there are.
///
/// A finding is complete when the scanner has read more than the fold window
/// (20,000 lines) past it without a copy to fold into it, or at the end of
/// the input. The returned outcome has the counts; its `findings` is empty.
/// Findings arrive unexplained, with `id` set to their 1-based position in
/// this input and `consequence_of` to the 0-based position of the finding
/// they follow from; [`crate::LiveAnalysis`] explains them and gives run-wide
/// ids. Unlike [`scan`], identical repeats more than the fold window apart
/// are separate findings, because the first was already handed out.
pub fn scan_streaming<R: Read + Send>(
    reader: R,
    input: &str,
    on_finding: &mut dyn FnMut(Finding),
) -> Result<ScanOutcome> {
    let mut stream = Stream::new(input);
    stream.read_from(reader, on_finding)?;
    Ok(stream.finish(on_finding))
}

/// A push-based scanner for input that arrives over time (a pipe, a growing
/// file): [`Stream::feed`] it bytes as they come, then [`Stream::finish`].
/// Findings are handed out as described for [`scan_streaming`].
pub struct Stream {
    scanner: Scanner,
    carry: Carry,
    /// Fed bytes not yet made into a block (less than READ_SIZE).
    partial: Vec<u8>,
    /// Absolute offset of the next block.
    offset: u64,
    /// Buffers to reuse for blocks.
    spare: Vec<Vec<u8>>,
}

impl Stream {
    /// A stream that names its input `input` in findings.
    pub fn new(input: &str) -> Self {
        Stream::with_collector(
            input,
            Collector {
                streaming: true,
                ..Collector::default()
            },
        )
    }

    fn with_collector(input: &str, collector: Collector) -> Self {
        let mut scanner = Scanner::new(input);
        scanner.collector = collector;
        Stream {
            scanner,
            carry: Carry::default(),
            partial: Vec::new(),
            offset: 0,
            spare: Vec::new(),
        }
    }

    /// Bytes fed so far.
    pub fn bytes(&self) -> u64 {
        self.scanner.outcome.bytes + self.partial.len() as u64
    }

    /// Scans `bytes`, the next part of the input, and hands out the findings
    /// that became complete. Bytes are gathered into blocks of READ_SIZE, as
    /// [`scan`] reads them, so that findings do not depend on how the input
    /// arrived.
    pub fn feed(&mut self, mut bytes: &[u8], on_finding: &mut dyn FnMut(Finding)) {
        while !bytes.is_empty() {
            let take = (READ_SIZE - self.partial.len()).min(bytes.len());
            self.partial.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.partial.len() == READ_SIZE {
                self.consume_partial();
            }
        }
        self.scanner.emit_ready(on_finding);
    }

    /// Hands out every finding now, complete or not, as if the input ended
    /// here but without ending it: for input that has gone quiet (a followed
    /// log whose writer stopped). A later copy of a flushed crash becomes a
    /// new finding. An unfinished last line stays unprocessed.
    pub fn flush(&mut self, on_finding: &mut dyn FnMut(Finding)) {
        self.consume_partial();
        self.scanner.finish_pendings();
        self.scanner.emit_all(on_finding);
    }

    /// Ends the input: processes what is left and hands out every finding.
    pub fn finish(mut self, on_finding: &mut dyn FnMut(Finding)) -> ScanOutcome {
        self.consume_partial();
        self.carry.finish(&mut self.scanner);
        self.scanner.finish_pendings();
        self.scanner.emit_all(on_finding);
        let mut outcome = self.scanner.outcome;
        outcome.dropped_findings = self.scanner.collector.dropped;
        outcome
    }

    /// Ends the input and returns the findings collected (batch mode).
    fn finish_batch(mut self) -> ScanOutcome {
        self.consume_partial();
        self.carry.finish(&mut self.scanner);
        self.scanner.finish()
    }

    /// Makes the gathered bytes a block and scans it.
    fn consume_partial(&mut self) {
        if self.partial.is_empty() {
            return;
        }
        let data = std::mem::replace(&mut self.partial, self.spare.pop().unwrap_or_default());
        self.partial.clear();
        let len = data.len();
        let block = Block {
            newlines: count_newlines(&data),
            data,
            len,
            hits: None,
            offset: self.offset,
        };
        self.consume(block);
    }

    fn consume(&mut self, block: Block) {
        for old in self.scan_block(block) {
            if self.spare.len() < 4 {
                self.spare.push(old);
            }
        }
    }

    /// Scans one block; returns the buffers it no longer needs.
    fn scan_block(&mut self, block: Block) -> Vec<Vec<u8>> {
        self.offset = block.offset + block.len as u64;
        self.scanner.outcome.bytes += block.len as u64;
        self.carry.consume(&mut self.scanner, &block);
        self.scanner.retire(block)
    }

    /// Reads `reader` to its end, handing out findings as they complete.
    ///
    /// A reader thread fills blocks; two worker threads take turns counting
    /// each block's newlines and searching it with the prefilter; this thread
    /// receives the blocks in order and only decodes the lines around hits.
    fn read_from<R: Read + Send>(
        &mut self,
        reader: R,
        on_finding: &mut dyn FnMut(Finding),
    ) -> Result<()> {
        let start = self.offset + self.partial.len() as u64;
        self.consume_partial();
        std::thread::scope(|scope| {
            let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
            let mut to_workers = Vec::new();
            let mut from_workers = Vec::new();
            for _ in 0..WORKERS {
                let (work_tx, work_rx) = mpsc::sync_channel::<std::io::Result<Block>>(1);
                let (done_tx, done_rx) = mpsc::sync_channel::<std::io::Result<Block>>(1);
                scope.spawn(move || search_blocks(&work_rx, &done_tx));
                to_workers.push(work_tx);
                from_workers.push(done_rx);
            }
            scope.spawn(move || read_blocks(reader, start, &to_workers, &free_rx));
            // Blocks were dealt to the workers in turn: collect them in turn.
            for turn in 0.. {
                let block = match from_workers[turn % WORKERS].recv() {
                    Ok(Ok(block)) => block,
                    Ok(Err(source)) => {
                        return Err(Error::Read {
                            input: self.scanner.input.clone(),
                            source,
                        })
                    }
                    // The reader ends only after sending EOF or an error.
                    Err(_) => return Ok(()),
                };
                if block.len == 0 {
                    return Ok(());
                }
                for old in self.scan_block(block) {
                    // The reader may have stopped; then the buffer is dropped.
                    let _ = free_tx.send(old);
                }
                self.scanner.emit_ready(on_finding);
            }
            Ok(())
        })
    }
}

/// Worker threads that search blocks; the main thread takes their results in turn.
const WORKERS: usize = 2;
/// More prefilter hits than this in one block are not listed: the main
/// thread then searches that block itself.
const MAX_LISTED_HITS: usize = 4096;

/// A worker: counts each block's newlines and lists its prefilter matches.
fn search_blocks(
    work: &mpsc::Receiver<std::io::Result<Block>>,
    done: &mpsc::SyncSender<std::io::Result<Block>>,
) {
    for message in work.iter() {
        let message = message.map(|mut block| {
            let bytes = &block.data[..block.len];
            block.newlines = count_newlines(bytes);
            let hits: Vec<usize> = prefilter()
                .find_iter(bytes)
                .take(MAX_LISTED_HITS + 1)
                .map(|m| m.start())
                .collect();
            block.hits = (hits.len() <= MAX_LISTED_HITS).then_some(hits);
            block
        });
        if done.send(message).is_err() {
            return;
        }
    }
}

/// The reader thread: fills recycled buffers and deals them to the workers
/// in turn.
fn read_blocks<R: Read>(
    mut reader: R,
    mut offset: u64,
    workers: &[mpsc::SyncSender<std::io::Result<Block>>],
    free: &mpsc::Receiver<Vec<u8>>,
) {
    for turn in 0.. {
        let worker = &workers[turn % workers.len()];
        let mut data = free.try_recv().unwrap_or_else(|_| vec![0u8; READ_SIZE]);
        data.resize(READ_SIZE, 0);
        // Fill the block (short reads from pipes are joined), so that block
        // boundaries, and with them everything downstream, do not depend on
        // how the input arrived, and every kept block is worth its memory.
        let mut filled = 0;
        let read = loop {
            match reader.read(&mut data[filled..READ_SIZE]) {
                Ok(0) => break Ok(filled),
                Ok(n) => {
                    filled += n;
                    if filled == READ_SIZE {
                        break Ok(filled);
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => break Err(e),
            }
        };
        let (message, last) = match read {
            Ok(len) => {
                let block = Block {
                    data,
                    len,
                    newlines: 0,
                    hits: None,
                    offset,
                };
                offset += len as u64;
                // A short block means EOF; an empty one follows to say so.
                (Ok(block), len < READ_SIZE && len > 0)
            }
            Err(e) => (Err(e), false),
        };
        let end = !matches!(&message, Ok(block) if block.len > 0);
        if worker.send(message).is_err() || end {
            return;
        }
        if last {
            let eof = Block {
                data: Vec::new(),
                len: 0,
                newlines: 0,
                hits: None,
                offset,
            };
            let _ = workers[(turn + 1) % workers.len()].send(Ok(eof));
            return;
        }
    }
}

/// The unfinished line at the end of the last block.
///
/// Lines are processed in place inside their block, except the one that
/// spans two blocks, which is copied here. A line longer than [`MAX_LINE`]
/// is cut into pieces of exactly that size, counted from the line's start,
/// so the pieces do not depend on how the input arrived.
#[derive(Default)]
struct Carry {
    bytes: Vec<u8>,
    /// Absolute offset of `bytes[0]`.
    offset: u64,
}

impl Carry {
    fn consume(&mut self, scanner: &mut Scanner, block: &Block) {
        let bytes = block.bytes();
        // Complete (or extend) the line carried over from earlier blocks.
        let mut pos = if self.bytes.is_empty() && scanner.at_line_start() {
            0
        } else {
            self.append_partial(scanner, bytes, block.offset, 0)
        };
        let mut newlines_left = block.newlines;
        if pos > 0 && bytes[pos - 1] == b'\n' {
            newlines_left -= 1;
        }
        if pos >= bytes.len() {
            return;
        }
        // Whole lines inside this block, in place. READ_SIZE ≤ MAX_LINE, so
        // none of them is too long.
        let Some(last_nl) = memchr::memrchr(b'\n', &bytes[pos..]) else {
            self.append_partial(scanner, bytes, block.offset, pos);
            return;
        };
        let end = pos + last_nl + 1;
        scanner.process_region(
            bytes,
            block.offset,
            pos,
            end,
            Some(newlines_left),
            block.hits.as_deref(),
        );
        pos = end;
        if pos < bytes.len() {
            self.append_partial(scanner, bytes, block.offset, pos);
        }
    }

    /// Appends `bytes[from..]` up to and including the first newline to the
    /// carried line, processing it when it ends or reaches MAX_LINE.
    /// Returns the position after what was taken.
    fn append_partial(
        &mut self,
        scanner: &mut Scanner,
        bytes: &[u8],
        offset: u64,
        from: usize,
    ) -> usize {
        let mut pos = from;
        loop {
            if self.bytes.is_empty() {
                self.offset = offset + pos as u64;
            }
            let room = MAX_LINE - self.bytes.len();
            let window = &bytes[pos..bytes.len().min(pos + room)];
            if let Some(i) = memchr::memchr(b'\n', window) {
                self.bytes.extend_from_slice(&window[..=i]);
                pos += i + 1;
                self.flush(scanner, true);
                return pos;
            }
            self.bytes.extend_from_slice(window);
            pos += window.len();
            if self.bytes.len() < MAX_LINE {
                scanner.mid_line = true;
                return pos;
            }
            // A piece of MAX_LINE bytes without a newline: process it now.
            if !scanner.in_cut_line {
                scanner.outcome.long_lines += 1;
            }
            self.flush(scanner, false);
            scanner.in_cut_line = true;
            scanner.mid_line = true;
            if pos >= bytes.len() {
                return pos;
            }
        }
    }

    fn flush(&mut self, scanner: &mut Scanner, ended: bool) {
        let bytes = std::mem::take(&mut self.bytes);
        let newlines = u64::from(ended);
        scanner.process_region(&bytes, self.offset, 0, bytes.len(), Some(newlines), None);
        if ended {
            scanner.mid_line = false;
        }
        self.bytes = bytes;
        self.bytes.clear();
    }

    fn finish(&mut self, scanner: &mut Scanner) {
        if !self.bytes.is_empty() {
            self.flush(scanner, false);
        }
        // A last line without a final newline is a line too.
        if scanner.mid_line {
            scanner.outcome.lines += 1;
            scanner.mid_line = false;
        }
    }
}

/// Counts newlines with memchr's SIMD search.
fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
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

struct Scanner {
    input: String,
    /// Number of the line that starts at the current position (1-based).
    line_no: u64,
    /// True when the previous piece ended without a newline (a cut line).
    in_cut_line: bool,
    /// True when the last processed byte was not a newline.
    mid_line: bool,
    ranks: HashMap<Option<u32>, RankState>,
    collector: Collector,
    /// Blocks already processed, kept for the progress look-back.
    recent: VecDeque<Block>,
    /// Absolute offset up to which progress counters were searched.
    progress_until: u64,
    last_step: Option<u64>,
    outcome: ScanOutcome,
    /// The diagnostic table being collected, if any (any rank).
    diagnostic: Option<diagnostics::Block>,
    /// Recently parsed diagnostics, and whether a finding claimed each.
    recent_diagnostics: VecDeque<(Parsed, bool)>,
    /// Pending messages started so far (for [`Pending::seq`]).
    started: u64,
}

impl Scanner {
    fn new(input: &str) -> Self {
        Scanner {
            input: input.to_string(),
            line_no: 1,
            in_cut_line: false,
            mid_line: false,
            ranks: HashMap::new(),
            collector: Collector::default(),
            recent: VecDeque::new(),
            progress_until: 0,
            last_step: None,
            outcome: ScanOutcome::default(),
            diagnostic: None,
            recent_diagnostics: VecDeque::new(),
            started: 0,
        }
    }

    fn at_line_start(&self) -> bool {
        !self.mid_line
    }

    /// Keeps a processed block for look-back; returns buffers no longer needed.
    fn retire(&mut self, block: Block) -> Vec<Vec<u8>> {
        self.recent.push_back(block);
        let mut freed = Vec::new();
        let kept = |recent: &VecDeque<Block>| recent.iter().skip(1).map(|b| b.len).sum::<usize>();
        while self.recent.len() > 1 && kept(&self.recent) >= LOOKBACK {
            if let Some(old) = self.recent.pop_front() {
                freed.push(old.data);
            }
        }
        freed
    }

    fn is_idle(&self) -> bool {
        self.diagnostic.is_none() && !self.ranks.values().any(RankState::is_active)
    }

    /// Processes data[from..to], which ends at a newline, at EOF or at a cut.
    /// `offset` is the absolute offset of `data[0]`; `newlines`, when known,
    /// is the number of newlines in data[from..to] (counted by the reader).
    fn process_region(
        &mut self,
        data: &[u8],
        offset: u64,
        from: usize,
        to: usize,
        newlines: Option<u64>,
        hits: Option<&[usize]>,
    ) {
        let mut pos = from;
        let mut remaining = newlines;
        while pos < to {
            if self.is_idle() {
                // Fast path: jump to the line of the next prefilter hit,
                // listed by a worker or searched for here.
                let hit = match hits {
                    Some(hits) => hits
                        .get(hits.partition_point(|&h| h < pos))
                        .copied()
                        .filter(|&h| h < to),
                    None => prefilter().find_at(&data[..to], pos).map(|m| m.start()),
                };
                let Some(hit) = hit else {
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
            let (line_end, next) = match memchr::memchr(b'\n', &data[pos..to]) {
                Some(i) => (pos + i, pos + i + 1),
                None => (to, to),
            };
            self.process_line(data, offset, pos, line_end);
            if next > line_end {
                self.add_lines(1);
                remaining = remaining.map(|r| r.saturating_sub(1));
            }
            pos = next;
        }
    }

    fn add_lines(&mut self, n: u64) {
        if n > 0 {
            self.in_cut_line = false;
        }
        self.line_no += n;
        self.outcome.lines += n;
    }

    fn process_line(&mut self, data: &[u8], offset: u64, from: usize, to: usize) {
        let raw = &data[from..to];
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        // A carriage return inside a line is a progress-bar redraw: each part is a line.
        for piece in raw.split(|&b| b == b'\r') {
            let text = String::from_utf8_lossy(piece);
            for normalized in normalize(&text) {
                self.handle(normalized, &data[..from], offset);
            }
        }
    }

    /// Handles one normalised line; `before` holds the bytes of the current
    /// block (or carried line) before it, starting at absolute `offset`.
    fn handle(&mut self, line: Normalized, before: &[u8], offset: u64) {
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
                if let Some(last) = pending.lines.last_mut() {
                    last.push_str(&line.text);
                }
                return;
            }
            // Bounded: up to 200 boilerplate lines of up to MAX_LINE each
            // could otherwise pile up in one message (issue 6).
            if fits && pending.family.continues(&pending.lines, &line.text) {
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
        let last_step = self.progress_before(before, offset);
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

    /// The last progress counter in the LOOKBACK bytes before the current
    /// line (`before`, starting at absolute `offset`, preceded by the retired
    /// blocks). Each byte is searched at most once over the whole input.
    fn progress_before(&mut self, before: &[u8], offset: u64) -> Option<u64> {
        let line_start = offset + before.len() as u64;
        let window_start = line_start.saturating_sub(LOOKBACK as u64);
        let from = window_start.max(self.progress_until);
        if from > self.progress_until {
            // A gap since the last search: the old counter may be stale.
            self.last_step = None;
        }
        if from < line_start {
            // Assemble [from, line_start) from the retired blocks and the
            // current data, each byte once, in order.
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
            if let Some(step) = context::last_step(&String::from_utf8_lossy(&bytes)) {
                self.last_step = Some(step);
            }
            self.progress_until = line_start;
        }
        self.last_step
    }

    fn finish_pending(&mut self, pending: Pending, rank: Option<u32>) {
        let message = Message {
            input: &self.input,
            line: pending.line,
            prefix: &pending.prefix,
            lines: &pending.lines,
        };
        let Some(mut finding) = pending.family.decode(&message) else {
            return;
        };
        // A family that consumed the traceback itself may have rebuilt it.
        let traceback = pending.traceback.or(finding.traceback.take());
        finding.phase = context::infer_phase(traceback.as_ref());
        finding.traceback = traceback;
        finding.last_step = pending.last_step;
        self.collector.push(finding, rank);
        for (parsed, claimed) in &mut self.recent_diagnostics {
            if !*claimed {
                *claimed = self.collector.offer(parsed);
            }
        }
    }

    /// Parses a finished diagnostic block and gives it to the nearest OOM
    /// finding collected so far; unclaimed, it waits for a later finding.
    fn finish_diagnostic(&mut self, block: &diagnostics::Block) {
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

    /// Finishes every message still collecting lines, in line order.
    fn finish_pendings(&mut self) {
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
        for (rank, pending) in pendings {
            self.finish_pending(pending, rank);
        }
    }

    /// Streaming: hands out the findings that no later line can change.
    fn emit_ready(&mut self, on_finding: &mut dyn FnMut(Finding)) {
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
    fn emit_all(&mut self, on_finding: &mut dyn FnMut(Finding)) {
        self.collector.findings.sort_by_key(|f| f.source.line);
        let all = self.collector.findings.len();
        self.collector.hand_out(all, on_finding);
    }

    fn finish(mut self) -> ScanOutcome {
        self.finish_pendings();
        let mut outcome = self.outcome;
        outcome.dropped_findings = self.collector.dropped;
        let mut findings = self.collector.findings;
        // Pendings finished at the end can be out of line order.
        findings.sort_by_key(|f| f.source.line);
        link_consequences(&mut findings);
        outcome.findings = findings;
        outcome
    }
}

/// The first family whose message starts on this line, unless the line only quotes it.
fn detect_start(text: &str) -> Option<(&'static dyn Family, usize)> {
    // No family starts on a line without one of their trigger phrases; this
    // keeps lines read while some rank's message is open (the slow path) cheap.
    if !prefilter().is_match(text.as_bytes()) {
        return None;
    }
    FAMILIES.iter().find_map(|family| {
        let start = family.start(text)?;
        // A family's offset must be a character boundary; skip it otherwise
        // rather than panic on a hostile line.
        if !text.is_char_boundary(start) {
            return None;
        }
        if detect::is_quoted(&text[..start]) {
            return None;
        }
        Some((*family, start))
    })
}

/// Points every consequence kind (NCCL aborts, launcher reports) at the latest
/// earlier OOM-category finding. Done on the findings in line order: a rank's
/// message is collected only when that rank prints again, so collection order
/// is not line order.
fn link_consequences(findings: &mut [Finding]) {
    let mut last_oom = None;
    for (i, f) in findings.iter_mut().enumerate() {
        if f.kind.is_consequence() {
            f.consequence_of = last_oom;
        }
        if f.category != crate::record::Category::Crash {
            last_oom = Some(i);
        }
    }
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
    /// Findings not handed out yet; `findings[0]` is the `handed_out`-th
    /// (0-based) finding of the input.
    findings: Vec<Finding>,
    /// Same kind, rank and text: a repeat of the same message (value: the
    /// finding's 0-based position in the input).
    by_text: HashMap<(crate::record::Kind, Option<u32>, String), usize>,
    dropped: u64,
    /// Streaming: findings are numbered and handed out when complete.
    streaming: bool,
    /// Findings already handed out (streaming only).
    handed_out: usize,
    /// Position of the last handed-out finding that is not a crash.
    last_handed_out_cause: Option<usize>,
}

impl Collector {
    /// Hands out the first `n` findings; copies of them can no longer fold.
    fn hand_out(&mut self, n: usize, on_finding: &mut dyn FnMut(Finding)) {
        if n == 0 {
            return;
        }
        self.handed_out += n;
        let handed_out = self.handed_out;
        self.by_text.retain(|_, position| *position >= handed_out);
        // Consequences point at the latest earlier cause handed out, by
        // position (`id - 1`, numbered as pushed).
        for mut finding in self.findings.drain(..n) {
            if finding.kind.is_consequence() {
                finding.consequence_of = self.last_handed_out_cause;
            }
            if finding.category != crate::record::Category::Crash {
                self.last_handed_out_cause = Some(finding.id.saturating_sub(1));
            }
            on_finding(finding);
        }
    }

    fn push(&mut self, mut finding: Finding, rank: Option<u32>) {
        cap_text(&mut finding);
        let key = (finding.kind, rank, finding.text.clone());
        if let Some(&i) = self.by_text.get(&key) {
            let first = &mut self.findings[i - self.handed_out];
            first.occurrences = first.occurrences.saturating_add(1);
            // A framework often prints the message, then raises it with a
            // traceback (ComfyUI, Lightning): keep what the later copy adds.
            if first.exception.is_none() {
                first.exception = finding.exception;
            }
            if first.diagnostics.is_none() {
                first.diagnostics = finding.diagnostics;
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
        let position = self.handed_out + self.findings.len();
        if position >= MAX_FINDINGS {
            self.dropped += 1;
            return;
        }
        finding.ranks = rank.into_iter().collect();
        finding.first_rank = rank;
        finding.devices = finding.device.into_iter().collect();
        if self.streaming {
            finding.id = position + 1;
        }
        self.by_text.insert(key, position);
        self.findings.push(finding);
    }

    /// Gives a parsed diagnostic to the nearest finding not handed out yet
    /// that is an OOM or likely one and within [`DIAGNOSTIC_WINDOW_LINES`].
    /// Returns whether one took it.
    fn offer(&mut self, parsed: &Parsed) -> bool {
        let line = parsed.line();
        let nearest = self
            .findings
            .iter_mut()
            .rev()
            .take(64)
            .filter(|f| f.category != crate::record::Category::Crash)
            .map(|f| (f.source.line.abs_diff(line), f))
            .filter(|(distance, _)| *distance <= DIAGNOSTIC_WINDOW_LINES)
            .min_by_key(|(distance, _)| *distance);
        let Some((distance, finding)) = nearest else {
            return false;
        };
        let diagnostics = finding.diagnostics.get_or_insert_with(Default::default);
        match parsed {
            Parsed::NvidiaSmi(smi) => {
                let closer = diagnostics
                    .nvidia_smi
                    .as_ref()
                    .is_none_or(|old| old.line.abs_diff(finding.source.line) > distance);
                if closer {
                    diagnostics.nvidia_smi = Some(smi.clone());
                }
            }
            Parsed::MemorySummary(summary) => {
                // Prefer the summary of the failing device, then the nearest.
                let device = finding.device;
                let rank = |s: &crate::record::MemorySummary| {
                    let mismatch = device.is_some() && s.device.is_some() && s.device != device;
                    (mismatch, s.line.abs_diff(finding.source.line))
                };
                let better = diagnostics
                    .memory_summary
                    .as_ref()
                    .is_none_or(|old| rank(summary) < rank(old));
                if better {
                    diagnostics.memory_summary = Some(summary.clone());
                }
            }
        }
        true
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
    fn counts_a_last_line_without_newline() {
        assert_eq!(scan_str(SEED).lines, 1);
        assert_eq!(scan_str(&format!("a\n{SEED}")).lines, 2);
        assert_eq!(scan_str("a\n").lines, 1);
        assert_eq!(scan_str("").lines, 0);
        let long = "x".repeat(2 * MAX_LINE + 5);
        assert_eq!(scan_str(&long).lines, 1);
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

    const SMI: &str = "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n|   0  Tesla T4            Off  | 00000000:00:04.0 Off |                    0 |\n| N/A   48C    P0    28W /  70W |  15098MiB / 15109MiB |      0%      Default |\n\n| Processes:                                                                  |\n|    0   N/A  N/A      4321      C   /usr/bin/python3                 9000MiB |\n|    0   N/A  N/A       777      C   python                           5800MiB |\n+-----------------------------------------------------------------------------+\n";
    const OLD: &str = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 14.76 GiB total capacity; 5.20 GiB already allocated; 11.75 MiB free; 5.31 GiB reserved in total by PyTorch)";

    #[test]
    fn attaches_pasted_diagnostics_nearby_only() {
        // nvidia-smi before the error, within the window.
        let out = scan_str(&format!("{SMI}noise\n{OLD}\n"));
        let f = &out.findings[0];
        let smi = f.diagnostics.as_ref().unwrap().nvidia_smi.as_ref().unwrap();
        assert_eq!(smi.line, 1);
        assert_eq!(smi.processes[0].pid, Some(4321));
        // After the error too, and the nearer of two.
        let out = scan_str(&format!("{SMI}{}{OLD}\n{SMI}", "x\n".repeat(100)));
        let smi = out.findings[0]
            .diagnostics
            .as_ref()
            .unwrap()
            .nvidia_smi
            .as_ref()
            .unwrap();
        assert_eq!(smi.line, 110);
        // Too far away: not attached.
        let out = scan_str(&format!("{SMI}{}{OLD}\n", "x\n".repeat(600)));
        assert_eq!(out.findings[0].diagnostics, None);
        // Not to a crash that is no OOM.
        let out = scan_str(&format!(
            "{SMI}RuntimeError: CUDA error: an illegal memory access was encountered\n"
        ));
        assert_eq!(out.findings[0].diagnostics, None);
    }

    #[test]
    fn old_messages_use_nvidia_smi_for_other_processes() {
        let mut out = scan_str(&format!("{OLD}\n{SMI}"));
        crate::explain::explain_all(&mut out.findings);
        let v = &out.findings[0].diagnosis.verdicts[0];
        assert_eq!(v.code, "other_processes");
        assert!(
            v.detail.contains("PID 4321 (/usr/bin/python3, 8.79 GiB)"),
            "{}",
            v.detail
        );
        assert!(v.detail.contains("another moment"));
        assert!(v.detail.contains("PID 777 holds at least"), "{}", v.detail);
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

    /// Every prefilter hit sends a line down the slow path: ordinary log
    /// lines must not hit, or whole-log scanning slows down tenfold.
    #[test]
    fn ordinary_log_lines_miss_the_prefilter() {
        let noise = [
            "2025-03-01T00:00:00.362845Z [rank6]:Epoch 3:  13%|█▎        | 137/1000 [02:13<02:43,  3.37it/s, loss=0.5000]",
            "node1:4002:4102 [2] NCCL INFO Channel 05/32 : 2 -> 3 via P2P/CUMEM/read",
            "[rank0]: {'loss': 0.4137, 'grad_norm': 1.137, 'learning_rate': 2.4e-05, 'epoch': 0.37}",
            "INFO step=1370 throughput=1843.2 tokens/s mem_allocated=61.34GiB mem_reserved=70.02GiB",
            "iter 500 | loss 1.5 | tokens/s 1843 | allocated memory stays below the limit",
            "/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.",
            "[2025-03-01 12:00:00,123] [INFO] [logging.py:96:log_dist] [Rank 0] step=137, skipped=0, lr=[2.4e-05], mom=[(0.9, 0.95)]",
            "Saving checkpoint to /ckpt/step_137 after 137 steps; 1073740791 bytes written",
        ];
        for line in noise {
            assert!(
                !prefilter().is_match(line.as_bytes()),
                "prefilter hits: {line}"
            );
        }
    }

    #[test]
    fn prefilter_stays_small() {
        let literals = prefilter_literals();
        assert!(
            literals.len() <= 72,
            "{} literals: {literals:?}",
            literals.len()
        );
    }

    #[test]
    fn counts_newlines_exactly() {
        let mut text = Vec::new();
        for i in 0..100_000u32 {
            text.extend(std::iter::repeat_n(b'x', (i % 97) as usize));
            text.push(b'\n');
        }
        assert_eq!(count_newlines(&text), 100_000);
        assert_eq!(count_newlines(b""), 0);
        assert_eq!(count_newlines(&[b'\n'; 255 * 32 * 2 + 5]), 255 * 32 * 2 + 5);
    }

    /// A reader that returns pseudo-random chunk sizes up to `max`.
    struct Chunked<'a> {
        data: &'a [u8],
        state: u64,
        max: usize,
    }

    impl Read for Chunked<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            let n = (1 + self.state as usize % self.max)
                .min(self.data.len())
                .min(out.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn long_lines_and_random_chunks_give_the_same_findings() {
        let mut log = Vec::new();
        log.extend_from_slice(b" 10%|# | 100/1000 [00:01<00:09]\n");
        // A message inside a line longer than MAX_LINE, then one that spans a cut.
        log.extend(std::iter::repeat_n(b'x', MAX_LINE / 2));
        log.extend_from_slice(SEED.as_bytes());
        log.extend(std::iter::repeat_n(
            b'y',
            MAX_LINE - 40 - SEED.len() - MAX_LINE / 2,
        ));
        log.extend_from_slice(SEED.as_bytes());
        log.extend(std::iter::repeat_n(b'z', MAX_LINE + 17));
        log.extend_from_slice(
            b"\r\n[rank2]: RuntimeError: CUDA error: out of memory\n\xff\xfe\x00junk\r\n",
        );
        log.extend_from_slice(format!("step 7\nTraceback (most recent call last):\n  File \"a.py\", line 1, in f\n    loss.backward()\n{SEED}").as_bytes());
        let whole = scan(log.as_slice(), "t").unwrap();
        // The first and last copies of SEED fold into one finding; the copy cut
        // in two at MAX_LINE is not recognised (a documented limit).
        assert_eq!(whole.findings.len(), 2);
        assert_eq!(whole.findings[0].occurrences, 2);
        assert_eq!(whole.findings[1].first_rank, Some(2));
        assert_eq!(whole.long_lines, 1);
        for (seed, max) in [(1u64, 7usize), (2, 4096), (3, 65_536), (4, 300_000), (5, 3)] {
            let split = scan(
                Chunked {
                    data: &log,
                    state: seed * 0x9E37_79B9,
                    max,
                },
                "t",
            )
            .unwrap();
            assert_eq!(split.findings, whole.findings, "chunks up to {max}");
            assert_eq!(
                (split.lines, split.bytes, split.long_lines),
                (whole.lines, whole.bytes, whole.long_lines)
            );
        }
    }

    fn stream_all(log: &str, piece: usize) -> (Vec<Finding>, ScanOutcome) {
        let mut found = Vec::new();
        let mut stream = Stream::new("t");
        for chunk in log.as_bytes().chunks(piece) {
            stream.feed(chunk, &mut |f| found.push(f));
        }
        let outcome = stream.finish(&mut |f| found.push(f));
        (found, outcome)
    }

    #[test]
    fn streaming_finds_what_scan_finds() {
        let log = format!(
            "a\r\n[rank0]: {SEED}\r\n[rank1]: {SEED}\nRuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported\nx\n{SEED}"
        );
        let batch = scan(log.as_bytes(), "t").unwrap();
        for piece in [1, 5, 64, log.len()] {
            let (streamed, outcome) = stream_all(&log, piece);
            // Numbered as collected; handed out in line order.
            let mut numbered: Vec<usize> = streamed.iter().map(|f| f.id).collect();
            numbered.sort_unstable();
            assert_eq!(numbered, [1, 2, 3], "piece {piece}");
            let unnumbered: Vec<Finding> = streamed
                .into_iter()
                .map(|f| Finding { id: 0, ..f })
                .collect();
            assert_eq!(unnumbered, batch.findings, "piece {piece}");
            assert_eq!(outcome.lines, batch.lines);
            assert_eq!(outcome.bytes, batch.bytes);
            assert!(outcome.findings.is_empty());
        }
    }

    #[test]
    fn streaming_hands_out_findings_once_past_the_fold_window() {
        let mut stream = Stream::new("t");
        let mut found = Vec::new();
        stream.feed(format!("{SEED}\n").as_bytes(), &mut |f| found.push(f));
        assert!(found.is_empty(), "a copy from another rank may still come");
        // Fed bytes are scanned a block (READ_SIZE) at a time.
        let noise_lines = FOLD_WINDOW_LINES as usize + READ_SIZE / 5 + 1;
        let noise = "step\n".repeat(noise_lines);
        stream.feed(noise.as_bytes(), &mut |f| found.push(f));
        assert_eq!(found.len(), 1);
        // A repeat after it was handed out is a new finding.
        stream.feed(format!("{SEED}\n").as_bytes(), &mut |f| found.push(f));
        let outcome = stream.finish(&mut |f| found.push(f));
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].id, 2);
        assert_eq!(outcome.lines, noise_lines as u64 + 2);
        // Whereas scan folds every identical repeat.
        let whole = format!("{SEED}\n{noise}{SEED}\n");
        assert_eq!(scan(whole.as_bytes(), "t").unwrap().findings.len(), 1);
    }

    #[test]
    fn flush_hands_out_everything_now() {
        let mut stream = Stream::new("t");
        let mut found = Vec::new();
        let log = "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n";
        stream.feed(log.as_bytes(), &mut |f| found.push(f));
        assert!(found.is_empty(), "the message may go on");
        stream.flush(&mut |f| found.push(f));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text.lines().count(), 2);
        let outcome = stream.finish(&mut |f| found.push(f));
        assert_eq!(found.len(), 1);
        assert_eq!(outcome.lines, 2);
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

#[cfg(test)]
mod r6_boundary {
    use crate::detect::FAMILIES;

    /// See: fuzz smoke run in CI (decode_str); a family returned a start
    /// offset inside a multi-byte character.
    #[test]
    fn r6_family_start_is_a_char_boundary() {
        let line = "torch.OutOfMemoryError: \u{fffd}Allocation on device 0 would exceed allowed mRequested               : emory. (out of memory)";
        for (i, family) in FAMILIES.iter().enumerate() {
            if let Some(start) = family.start(line) {
                assert!(line.is_char_boundary(start), "family #{i} returned {start}");
            }
        }
    }
}
