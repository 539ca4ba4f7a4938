//! PyTorch CUDA memory snapshots (`torch.cuda.memory._dump_snapshot()`,
//! `torch.cuda.memory_snapshot()`): recognised by content, decoded by a
//! data-only pickle reader that never executes anything, and analysed into
//! findings that say who held the memory and why the request did not fit.
//!
//! The format and its eras are described in `docs/memory-snapshots.md`.

pub mod analyze;
mod answer;
pub mod model;
pub mod pickle;

pub use answer::{join, text_sections};
pub use pickle::PickleError;

use crate::record::Finding;
use std::fmt;
use std::io::{self, Read};

/// A snapshot larger than this is refused (real ones are megabytes to a few
/// hundred; the reader's arena indices stay 32-bit).
pub const MAX_SNAPSHOT_BYTES: u64 = 1 << 30;

/// Why a file that starts like a pickle gave no snapshot.
#[derive(Debug)]
pub enum SnapshotError {
    /// The pickle could not be read (malformed, truncated, or asks to run code).
    Pickle(pickle::PickleError),
    /// A readable pickle that holds something else.
    NotASnapshot(String),
    /// Larger than the 1 GiB oomwhy reads as a snapshot.
    TooLarge(u64),
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::Pickle(e) => write!(f, "cannot read this pickle as data: {e}"),
            SnapshotError::NotASnapshot(what) => {
                write!(f, "a pickle, but not a PyTorch memory snapshot ({what})")
            }
            SnapshotError::TooLarge(n) => write!(
                f,
                "a pickle of {n} bytes, more than the {} bytes oomwhy reads as a snapshot",
                MAX_SNAPSHOT_BYTES
            ),
        }
    }
}

impl std::error::Error for SnapshotError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SnapshotError::Pickle(e) => Some(e),
            _ => None,
        }
    }
}

/// True when `prefix` (the first bytes of an input) is a pickle of protocol
/// 2–5, the only content oomwhy reads as a snapshot. Logs never start with
/// byte 0x80, which is not valid UTF-8 at the start of a text.
pub fn sniff(prefix: &[u8]) -> bool {
    pickle::has_header(prefix)
}

/// Decodes and analyses a snapshot read from `reader`, which is not held in
/// memory. Returns the findings and the number of bytes read. Telling a
/// snapshot from a log is the input layer's work (`crate::input`).
pub(crate) fn read<R: Read>(reader: R, input: &str) -> Result<(Vec<Finding>, u64), SnapshotError> {
    let mut counted = io::BufReader::with_capacity(
        256 * 1024,
        Counting {
            inner: reader.take(MAX_SNAPSHOT_BYTES + 1),
            count: 0,
        },
    );
    let p = pickle::read_from(&mut counted);
    let count = counted.get_ref().count;
    if count > MAX_SNAPSHOT_BYTES {
        return Err(SnapshotError::TooLarge(count));
    }
    let p = p.map_err(SnapshotError::Pickle)?;
    let snap = model::from_pickle(&p)?;
    drop(p);
    let findings = analyze::analyze(&snap)
        .into_iter()
        .map(|o| answer::finding(o, input))
        .collect();
    Ok((findings, count))
}

/// Counts the bytes read through it.
struct Counting<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}
