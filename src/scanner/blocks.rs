//! Reading blocks: the reader and worker threads, and the line carried
//! from one block to the next.

use super::lines::Scanner;
use super::prefilter::{count_newlines, prefilter};
use super::{MAX_LINE, READ_SIZE};
use std::io::{ErrorKind, Read};
use std::sync::mpsc;

/// A block of input as read, with its newlines already counted.
pub(super) struct Block {
    pub(super) data: Vec<u8>,
    pub(super) len: usize,
    pub(super) newlines: u64,
    /// Start offsets of every prefilter match in the block, when a worker
    /// thread already searched it (`None`: search while processing).
    pub(super) hits: Option<Vec<usize>>,
    /// Absolute offset of `data[0]` in the input.
    pub(super) offset: u64,
}

impl Block {
    pub(super) fn bytes(&self) -> &[u8] {
        &self.data[..self.len]
    }
}

/// Worker threads that search blocks; the main thread takes their results in turn.
pub(super) const WORKERS: usize = 2;
/// Buffers the reader fills at most: each worker's inbox, the one it
/// searches and its outbox, the main thread's block and its look-back
/// (LOOKBACK / READ_SIZE + 1), with room to spare.
pub(super) const MAX_BLOCKS: usize = 16;
/// More prefilter hits than this in one block are not listed: the main
/// thread then searches that block itself.
pub(super) const MAX_LISTED_HITS: usize = 4096;

/// A worker: counts each block's newlines and lists its prefilter matches.
pub(super) fn search_blocks(
    work: &mpsc::Receiver<std::io::Result<Block>>,
    done: &mpsc::SyncSender<std::io::Result<Block>>,
) {
    for message in work.iter() {
        let message = message.map(|mut block| {
            let bytes = &block.data[..block.len];
            block.newlines = count_newlines(bytes);
            let hits: Vec<usize> = prefilter()
                .starts(bytes)
                .take(MAX_LISTED_HITS + 1)
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
pub(super) fn read_blocks<R: Read>(
    mut reader: R,
    mut offset: u64,
    workers: &[mpsc::SyncSender<std::io::Result<Block>>],
    free: &mpsc::Receiver<Vec<u8>>,
) {
    let mut allocated = 0;
    for turn in 0.. {
        let worker = &workers[turn % workers.len()];
        // A fixed number of buffers: memory is bounded by construction, not
        // by how the threads happen to be scheduled.
        let recycled = match free.try_recv() {
            Ok(data) => Some(data),
            Err(_) if allocated >= MAX_BLOCKS => free.recv().ok(),
            Err(_) => None,
        };
        let mut data = recycled.unwrap_or_else(|| {
            allocated += 1;
            vec![0u8; READ_SIZE]
        });
        data.resize(READ_SIZE, 0);
        // Fill the block (short reads from pipes are joined), so that block
        // boundaries, and with them everything downstream, do not depend on
        // how the input arrived, and every kept block is worth its memory.
        let mut filled = 0;
        // An error after some bytes: those are scanned first (what came
        // before a corrupt part of an archive still counts), then it is sent.
        let mut failed = None;
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
                Err(e) if filled > 0 => {
                    failed = Some(e);
                    break Ok(filled);
                }
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
                (Ok(block), len < READ_SIZE && len > 0 && failed.is_none())
            }
            Err(e) => (Err(e), false),
        };
        let end = !matches!(&message, Ok(block) if block.len > 0);
        if worker.send(message).is_err() || end {
            return;
        }
        if let Some(e) = failed {
            let _ = workers[(turn + 1) % workers.len()].send(Err(e));
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
        scanner.process_region(&bytes, self.offset, 0, bytes.len(), Some(newlines), None);
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
    }
}
