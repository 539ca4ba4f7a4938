//! What the scanner remembers between lines, as plain data: how a line
//! was handled ([`Known`], see `known.rs`) and what a message decoded to
//! ([`Decoded`], see `assemble.rs`). Kept apart from the code that fills
//! them so that the scanner's state in `lines.rs` can hold them without
//! the modules depending on each other.

use super::collect::FoldKey;
use crate::record::Finding;

/// What handling a line amounts to when its rank has no traceback open and
/// no diagnostic table is being read.
#[derive(Clone, Copy, Debug)]
pub(super) struct Known {
    /// Where the normalised text starts in the line (after its log prefixes).
    pub(super) text_at: usize,
    /// The rank its prefixes name.
    pub(super) rank: RankAt,
    pub(super) engine: Option<&'static str>,
    /// The message that starts on the line: the family's place in
    /// [`crate::detect::FAMILIES`] and where in the normalised text it
    /// starts. `None`: no message starts, and the line only touches its
    /// rank's state.
    pub(super) start: Option<(usize, usize)>,
    /// No progress counter can start on the line (see
    /// [`context::may_start_progress`]).
    pub(super) counter_free: bool,
    /// No word that tells how the job ran is on the line (see
    /// [`context::may_state`]).
    pub(super) says_nothing: bool,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum RankAt {
    None,
    /// The digits at this span of the line: the lines of a shape differ there.
    Digits(usize, usize),
    /// This rank, for a line remembered by its exact text.
    Value(u32),
}

impl Known {
    pub(super) fn rank(&self, line: &[u8]) -> Option<u32> {
        match self.rank {
            RankAt::None => None,
            RankAt::Digits(start, end) => std::str::from_utf8(line.get(start..end)?)
                .ok()?
                .parse()
                .ok(),
            RankAt::Value(rank) => Some(rank),
        }
    }
}

/// A run of remembered lines, one after another, from absolute offset
/// `from` to `to`, none of which holds what a search before a message looks
/// for (a progress counter, a word about the job): searching bytes within
/// it finds nothing.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct QuietRun {
    from: u64,
    to: u64,
}

impl QuietRun {
    /// Adds the line `[line_at, next_at)`: it extends the run when it starts
    /// where the run ends, and starts a new run otherwise.
    pub(super) fn extend(&mut self, line_at: u64, next_at: u64) {
        if self.to != line_at {
            self.from = line_at;
        }
        self.to = next_at;
    }

    /// Whether the bytes `[from, to)` lie within the run.
    pub(super) fn covers(&self, from: u64, to: u64) -> bool {
        self.from <= from && to <= self.to
    }
}

/// A message decoded before: what decoding it gave, and the key under
/// which that finding folds into an earlier copy of it.
pub(super) struct Decoded {
    /// The family, rank, prefix and lines, to rule out a hash collision.
    pub(super) key: Box<[u8]>,
    pub(super) finding: Option<Finding>,
    pub(super) fold: Option<FoldKey>,
    /// Where the finding it folds into was last time.
    pub(super) folded_at: Option<usize>,
}
