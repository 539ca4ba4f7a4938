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
