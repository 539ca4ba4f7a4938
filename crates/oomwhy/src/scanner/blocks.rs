//! Reading blocks: the main thread and a helper each read and index their
//! own blocks; and the line carried from one block to the next.

use super::block::Block;
use super::lines::{Lines, Scanner};
use super::{MAX_LINE, READ_SIZE};
use std::io::{ErrorKind, Read};
use std::sync::mpsc;

/// The input, read by two threads in turn: whoever holds the lock reads the
/// next block, so blocks are numbered in input order whoever read them.
pub(super) struct Shared<R> {
    reader: R,
    /// Number of the next block to read.
    pub(super) next: u64,
    /// Absolute offset of the next block.
    offset: u64,
    /// No block comes after `next` (end of input, or an error).
    pub(super) done: bool,
    /// The read error met at block `next`, if any.
    pub(super) error: Option<std::io::Error>,
}

impl<R: Read> Shared<R> {
    pub(super) fn new(reader: R, offset: u64) -> Self {
        Shared {
            reader,
            next: 0,
            offset,
            done: false,
            error: None,
        }
    }
}

/// Reads the next block into `data` (a buffer of READ_SIZE bytes) under
/// the lock, then, outside it, indexes it while it is still in the cache. Returns the block and its number, or `None` (with `data` handed
/// back) when the input is done.
pub(super) fn read_block<R: Read>(
    shared: &std::sync::Mutex<Shared<R>>,
    mut data: Vec<u8>,
) -> Result<(u64, Block), Vec<u8>> {
    data.resize(READ_SIZE, 0);
    let mut s = shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if s.done {
        return Err(data);
    }
    // Fill the block (short reads from pipes are joined), so that block
    // boundaries, and with them everything downstream, do not depend on
    // how the input arrived.
    let mut filled = 0;
    while filled < READ_SIZE {
        match s.reader.read(&mut data[filled..]) {
            Ok(0) => {
                s.done = true;
                break;
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                // The bytes before the error are scanned first (what came
                // before a corrupt part of an archive still counts).
                s.error = Some(e);
                s.done = true;
                break;
            }
        }
    }
    if filled == 0 {
        return Err(data);
    }
    let number = s.next;
    let offset = s.offset;
    s.next += 1;
    s.offset += filled as u64;
    drop(s);
    Ok((number, Block::indexed(data, filled, offset)))
}

/// The helper thread: reads and searches blocks and sends them, numbered,
/// to the main thread, until the input is done or the main thread stops.
pub(super) fn help<R: Read>(
    shared: &std::sync::Mutex<Shared<R>>,
    free: &std::sync::Mutex<Vec<Vec<u8>>>,
    to_main: &mpsc::SyncSender<(u64, Block)>,
) {
    loop {
        let data = free
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
            .unwrap_or_default();
        match read_block(shared, data) {
            Ok(numbered) => {
                if to_main.send(numbered).is_err() {
                    return;
                }
            }
            Err(_) => return,
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
pub(super) struct Carry {
    pub(super) bytes: Vec<u8>,
    /// Absolute offset of `bytes[0]`.
    pub(super) offset: u64,
}

impl Carry {
    pub(super) fn consume(&mut self, scanner: &mut Scanner, block: &Block) {
        let bytes = block.bytes();
        // Complete (or extend) the line carried over from earlier blocks.
        let mut pos = if self.bytes.is_empty() && scanner.at_line_start() {
            0
        } else {
            self.append_partial(scanner, bytes, block.offset, 0)
        };
        // The carried line took the block's bytes up to its first newline.
        let index_at_from = u64::from(pos > 0 && bytes[pos - 1] == b'\n');
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
        let lines = match block.hits.as_deref() {
            Some(hits) => Lines::Listed {
                hits,
                index_at_from,
                index_at_to: block.newlines,
            },
            None => Lines::Unlisted {
                newlines: Some(block.newlines - index_at_from),
            },
        };
        scanner.process_region(bytes, block.offset, pos, end, lines);
        pos = end;
        if pos < bytes.len() {
            self.append_partial(scanner, bytes, block.offset, pos);
        }
    }

    /// Appends `bytes[from..]` up to and including the first newline to the
    /// carried line, processing it when it ends or reaches MAX_LINE.
    /// Returns the position after what was taken.
    pub(super) fn append_partial(
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

    pub(super) fn flush(&mut self, scanner: &mut Scanner, ended: bool) {
        let bytes = std::mem::take(&mut self.bytes);
        let newlines = u64::from(ended);
        scanner.process_region(
            &bytes,
            self.offset,
            0,
            bytes.len(),
            Lines::Unlisted {
                newlines: Some(newlines),
            },
        );
        if ended {
            scanner.mid_line = false;
        }
        self.bytes = bytes;
        self.bytes.clear();
    }

    pub(super) fn finish(&mut self, scanner: &mut Scanner) {
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
