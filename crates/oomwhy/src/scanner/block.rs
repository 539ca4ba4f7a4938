//! A block of input and its index: what both the readers (`blocks`) and the
//! line handling (`lines`) need, so that neither imports the other's types.
//!
//! A block is indexed in one pass, right after it is read and while it is
//! still in the processor's cache: its newlines are counted and the lines
//! with a prefilter hit are listed with their line numbers. Nothing scans the
//! block a second time; the line handling jumps from one listed line to the
//! next.

use super::prefilter::{count_newlines, prefilter};

/// A line of a block with at least one prefilter hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct HitLine {
    /// Offset of the line's first byte in the block.
    pub(super) start: usize,
    /// Newlines in the block before `start`: the line's number within the block.
    pub(super) index: u64,
}

/// A block of input as read, with its index.
pub(super) struct Block {
    pub(super) data: Vec<u8>,
    pub(super) len: usize,
    /// Newlines in `data[..len]`.
    pub(super) newlines: u64,
    /// The lines with prefilter hits, in order; `None` when there were more
    /// than [`MAX_HIT_LINES`] (the line handling then searches the block
    /// itself).
    pub(super) hits: Option<Vec<HitLine>>,
    /// Absolute offset of `data[0]` in the input.
    pub(super) offset: u64,
}

/// More hit lines than this in one block are not listed: a list that long
/// saves nothing over searching while processing, and memory stays bounded.
pub(super) const MAX_HIT_LINES: usize = 4096;

impl Block {
    /// Indexes `data[..len]`, read at absolute `offset`.
    pub(super) fn indexed(data: Vec<u8>, len: usize, offset: u64) -> Block {
        let (newlines, hits) = index(&data[..len]);
        Block {
            data,
            len,
            newlines,
            hits,
            offset,
        }
    }

    pub(super) fn bytes(&self) -> &[u8] {
        &self.data[..self.len]
    }
}

/// Counts the newlines of `bytes` and lists its lines with a prefilter hit.
///
/// The prefilter runs up to a hit, the rest of that line is skipped (one hit
/// is enough to look at a line), and the newlines are counted piece by piece
/// between hit lines: every byte is looked at once by each search.
fn index(bytes: &[u8]) -> (u64, Option<Vec<HitLine>>) {
    let searcher = prefilter();
    let mut hits = Vec::new();
    let mut newlines = 0;
    // Start of the bytes whose newlines are not counted yet.
    let mut counted_to = 0;
    let mut pos = 0;
    while let Some(hit) = searcher.find_at(bytes, pos) {
        let start = memchr::memrchr(b'\n', &bytes[counted_to..hit])
            .map_or(counted_to, |i| counted_to + i + 1);
        newlines += count_newlines(&bytes[counted_to..start]);
        if hits.len() == MAX_HIT_LINES {
            return (newlines + count_newlines(&bytes[start..]), None);
        }
        hits.push(HitLine {
            start,
            index: newlines,
        });
        let Some(end) = memchr::memchr(b'\n', &bytes[hit..]) else {
            return (newlines, Some(hits));
        };
        // The line's own newline.
        newlines += 1;
        pos = hit + end + 1;
        counted_to = pos;
    }
    newlines += count_newlines(&bytes[counted_to..]);
    (newlines, Some(hits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_each_hit_line_once_with_its_number() {
        let text = b"plain\nKilled\nfoo Killed Killed\nplain\nplain\nout of memory\nend";
        let (newlines, hits) = index(text);
        assert_eq!(newlines, 6);
        let hits = hits.unwrap();
        let lines: Vec<u64> = hits.iter().map(|h| h.index).collect();
        assert_eq!(lines, [1, 2, 5]);
        assert_eq!(&text[hits[1].start..hits[1].start + 3], b"foo");
        // A hit on the last line, without a newline after it.
        let (newlines, hits) = index(b"a\nb\nKilled");
        assert_eq!(newlines, 2);
        assert_eq!(hits.unwrap(), [HitLine { start: 4, index: 2 }]);
        assert_eq!(index(b"").0, 0);
    }
}
