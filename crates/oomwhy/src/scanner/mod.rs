//! Streams an input and finds the messages in it.
//!
//! The input is read in blocks and never held whole. A literal prefilter (one
//! `regex` of every family's trigger phrases, which the regex crate turns into
//! a SIMD multi-literal search) skips the noise; only lines around a hit are
//! decoded, normalised and handed to the families. Memory stays bounded: a
//! line longer than [`MAX_LINE`] is cut into pieces of that size.

mod assemble;
mod block;
mod blocks;
mod collect;
mod known;
mod lines;
mod memo;
mod prefilter;
mod shape;

use self::block::Block;
use self::blocks::{help, read_block, Carry, Shared};
use self::collect::Collector;
use self::lines::Scanner;
#[cfg(test)]
use self::prefilter::prefilter_literals;
use crate::error::{Error, Result};
use crate::record::Finding;
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{mpsc, Mutex, PoisonError};

/// Longest piece of a line processed at once; longer lines are cut.
pub const MAX_LINE: usize = 1 << 20;
/// Bytes read per `read` call, and the size of a block (at most MAX_LINE: a
/// line inside one block is never too long). A block is indexed right after
/// it is read: small enough that it is still in the core's cache then.
/// With 256 KiB the search ran at half the speed, from memory.
const READ_SIZE: usize = 64 * 1024;
/// Blocks the main thread reads ahead of the one the helper is searching.
const MAX_BLOCKS_AHEAD: usize = 2;
/// Bytes before a crash searched for progress counters.
const LOOKBACK: usize = 128 * 1024;
/// Findings kept per input; more are counted, not stored.
pub const MAX_FINDINGS: usize = 10_000;
/// Copies of one crash from other ranks are folded when this close (in lines).
const FOLD_WINDOW_LINES: u64 = 20_000;
/// A traceback whose header comes within this many lines after a message
/// without one of its own (a logger's `exception()`: the message, then the
/// traceback) is that message's. The line that ends the message counts.
const TRACEBACK_AFTER_LINES: u64 = 6;
/// ...if it ends (its exception line, or the end of the input) at most
/// this many lines after its header; until then the finding is held. Far
/// below the fold window, so a finding still held is never handed out.
const MAX_TRACEBACK_AFTER_LINES: u64 = 2_000;
const _: () = assert!(TRACEBACK_AFTER_LINES + MAX_TRACEBACK_AFTER_LINES < FOLD_WINDOW_LINES);
/// Findings held for a traceback at most (the oldest is let go first).
const MAX_HOLDS: usize = 64;
/// Distinct rank states kept; a log naming more ranks than this is unusual.
const MAX_RANK_STATES: usize = 4096;
/// A pasted diagnostic (nvidia-smi, memory summary) belongs to the nearest
/// OOM finding at most this many lines before or after it.
const DIAGNOSTIC_WINDOW_LINES: u64 = 500;
/// Parsed diagnostics kept while waiting for a finding to claim them.
const MAX_RECENT_DIAGNOSTICS: usize = 8;
/// Bytes of message text kept per finding (without a cap, a long
/// line full of distinct messages kept a megabyte per finding, twice). The
/// longest real message is about 2 KB; the decoders still see all of it.
pub const MAX_TEXT: usize = 8 * 1024;

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
///
/// This thread and a helper take turns reading blocks, counting their
/// newlines and searching them with the prefilter; this thread decodes
/// only the lines around hits. Memory stays bounded: a few blocks of
/// 64 KiB, one partial line of at most [`MAX_LINE`] bytes, and the findings.
pub fn scan<R: Read + Send>(reader: R, input: &str) -> Result<ScanOutcome> {
    match scan_keeping(reader, input) {
        (outcome, None) => Ok(outcome),
        (_, Some(err)) => Err(err),
    }
}

/// Scans `reader` like [`scan`], but a read error (a corrupt or truncated
/// archive, a failing disk) ends the input instead of discarding it: the
/// outcome holds what was found before the error.
pub fn scan_keeping<R: Read + Send>(reader: R, input: &str) -> (ScanOutcome, Option<Error>) {
    let mut stream = Stream::with_collector(input, Collector::default());
    let error = stream.read_from(reader, &mut |_| {}).err();
    (stream.finish_batch(), error)
}

/// Scans `reader` like [`scan_keeping`], on this thread alone: for many
/// inputs scanned side by side, one per core, where threads per input
/// would only compete for the same cores.
pub fn scan_serial<R: Read>(reader: R, input: &str) -> (ScanOutcome, Option<Error>) {
    let mut stream = Stream::with_collector(input, Collector::default());
    let error = stream.read_serially(reader, &mut |_| {}).err();
    (stream.finish_batch(), error)
}

/// Whether this process may run on one core only (`taskset -c 0`, a
/// container limited to one CPU): a helper thread would then only take
/// turns with this one, and the hand-offs cost more than it reads.
fn one_core() -> bool {
    static ONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ONE.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() == 1))
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
/// are separate findings, because the first was already handed out. After a
/// read error, the findings made before it are handed out, then the error
/// is returned.
pub fn scan_streaming<R: Read + Send>(
    reader: R,
    input: &str,
    on_finding: &mut dyn FnMut(Finding),
) -> Result<ScanOutcome> {
    let mut stream = Stream::new(input);
    let read = stream.read_from(reader, on_finding);
    // After a read error too, what was found before it is handed out.
    let outcome = stream.finish(on_finding);
    read.map(|()| outcome)
}

/// A push-based scanner for input that arrives over time (a pipe, a growing
/// file): [`Stream::feed`] it bytes as they come, then [`Stream::finish`].
/// Findings are handed out as described for [`scan_streaming`].
pub struct Stream {
    scanner: Scanner,
    carry: Carry,
    /// Fed bytes not yet made into a block: `partial[..filled]` (less than
    /// READ_SIZE). The buffer keeps its length between blocks, so that
    /// reading into it never clears it first.
    partial: Vec<u8>,
    filled: usize,
    /// Absolute offset of the next block.
    offset: u64,
    /// Buffers to reuse for blocks.
    spare: Vec<Vec<u8>>,
    /// [`Stream::settle`]: the line number at its previous call.
    settle_mark: u64,
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
            filled: 0,
            offset: 0,
            spare: Vec::new(),
            settle_mark: 1,
        }
    }

    /// Bytes fed so far.
    pub fn bytes(&self) -> u64 {
        self.scanner.outcome.bytes + self.filled as u64
    }

    /// Scans `bytes`, the next part of the input, and hands out the findings
    /// that became complete. Bytes are gathered into blocks of READ_SIZE, as
    /// [`scan`] reads them, so that findings do not depend on how the input
    /// arrived.
    pub fn feed(&mut self, mut bytes: &[u8], on_finding: &mut dyn FnMut(Finding)) {
        while !bytes.is_empty() {
            self.make_room();
            let take = (READ_SIZE - self.filled).min(bytes.len());
            self.partial[self.filled..self.filled + take].copy_from_slice(&bytes[..take]);
            self.filled += take;
            bytes = &bytes[take..];
            if self.filled == READ_SIZE {
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

    /// For live output (`--follow`, a pipe that stays open): call it every
    /// half second or so, and a finding is handed out about that long after
    /// its message is complete, even while other lines keep arriving.
    ///
    /// Processes the bytes fed so far (an unfinished last line stays
    /// unprocessed), finishes the messages of ranks that got no line since
    /// the previous call (a rank that crashed and went quiet while others
    /// keep logging), and hands out every finding collected, without waiting
    /// for the fold window: a later copy of a handed-out crash (another rank
    /// printing it more than a call later) becomes a new finding. A finding
    /// whose traceback comes after its message, while its rank still
    /// prints it, waits with those after it. When no line at all arrived
    /// since the previous call it is [`Stream::flush`].
    pub fn settle(&mut self, on_finding: &mut dyn FnMut(Finding)) {
        self.consume_partial();
        let mark = std::mem::replace(&mut self.settle_mark, self.scanner.line_no);
        if self.scanner.line_no == mark {
            self.scanner.finish_pendings();
        } else {
            self.scanner.finish_pendings_quiet_since(mark);
        }
        // A finding whose traceback its rank is still printing waits.
        self.scanner.emit_settled(on_finding);
    }

    /// Ends the input: processes what is left and hands out every finding.
    pub fn finish(mut self, on_finding: &mut dyn FnMut(Finding)) -> ScanOutcome {
        self.consume_partial();
        self.carry.finish(&mut self.scanner);
        self.scanner.finish_pendings();
        self.scanner.drop_if_document();
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
        if self.filled == 0 {
            return;
        }
        let data = std::mem::replace(&mut self.partial, self.spare.pop().unwrap_or_default());
        let len = std::mem::take(&mut self.filled);
        self.consume(Block::indexed(data, len, self.offset));
    }

    /// Gives the gathering buffer its full length (only a new or shortened
    /// buffer is written to here).
    fn make_room(&mut self) {
        if self.partial.len() < READ_SIZE {
            self.partial.resize(READ_SIZE, 0);
        }
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

    /// Reads `reader` to its end on this thread alone, straight into the
    /// block being gathered (no copy), handing out findings as they complete.
    fn read_serially<R: Read>(
        &mut self,
        mut reader: R,
        on_finding: &mut dyn FnMut(Finding),
    ) -> Result<()> {
        loop {
            self.make_room();
            match reader.read(&mut self.partial[self.filled..READ_SIZE]) {
                Ok(n) => {
                    self.filled += n;
                    if n == 0 {
                        return Ok(());
                    }
                    if self.filled == READ_SIZE {
                        self.consume_partial();
                        self.scanner.emit_ready(on_finding);
                    }
                }
                Err(e) => {
                    if e.kind() == std::io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(Error::Read {
                        input: self.scanner.input.clone(),
                        source: e,
                    });
                }
            }
        }
    }

    /// Reads `reader` to its end, handing out findings as they complete.
    ///
    /// This thread and one helper take turns reading the next block, each
    /// counting its newlines and searching it with the prefilter; this
    /// thread then decodes the lines around hits, block by block in input
    /// order. Two threads, not a reader and two workers: on two cores the
    /// hand-offs cost more than a third thread gains.
    fn read_from<R: Read + Send>(
        &mut self,
        reader: R,
        on_finding: &mut dyn FnMut(Finding),
    ) -> Result<()> {
        if one_core() {
            return self.read_serially(reader, on_finding);
        }
        let start = self.offset + self.filled as u64;
        self.consume_partial();
        let shared = Mutex::new(Shared::new(reader, start));
        let free: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            let (to_main, from_helper) = mpsc::sync_channel::<(u64, Block)>(1);
            let (shared, free) = (&shared, &free);
            scope.spawn(move || help(shared, free, &to_main));
            // Blocks read but not processed yet, by number.
            let mut waiting: BTreeMap<u64, Block> = BTreeMap::new();
            let mut expected = 0;
            loop {
                if let Some(block) = waiting.remove(&expected) {
                    expected += 1;
                    let freed = self.scan_block(block);
                    free.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .extend(freed);
                    self.scanner.emit_ready(on_finding);
                    continue;
                }
                // Take a block the helper finished, without waiting for one.
                if let Ok((number, block)) = from_helper.try_recv() {
                    waiting.insert(number, block);
                    continue;
                }
                let (next, done) = {
                    let s = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    (s.next, s.done)
                };
                if expected == next && done {
                    break;
                }
                // While the helper still searches the next block, this thread
                // reads and searches one after it rather than wait: waiting
                // here left one core idle and made two threads no faster
                // than one. A few blocks ahead at most, so memory stays
                // bounded.
                if !done && waiting.len() < MAX_BLOCKS_AHEAD {
                    let data = free
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .pop()
                        .unwrap_or_default();
                    if let Ok((number, block)) = read_block(shared, data) {
                        waiting.insert(number, block);
                    }
                    continue;
                }
                // The helper holds the next block: wait for it.
                match from_helper.recv() {
                    Ok((number, block)) => {
                        waiting.insert(number, block);
                    }
                    // The helper stops only once the input is done.
                    Err(_) => break,
                }
            }
            drop(from_helper);
            let error = shared
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .error
                .take();
            match error {
                Some(source) => Err(Error::Read {
                    input: self.scanner.input.clone(),
                    source,
                }),
                None => Ok(()),
            }
        })
    }
}

#[cfg(test)]
mod tests;

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
