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

pub use analyze::allocation_size;
pub(crate) use answer::headline;
pub use answer::{after_explain, join, text_sections};

use crate::record::Finding;
use crate::scanner::ScanOutcome;
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
    /// Larger than [`MAX_SNAPSHOT_BYTES`].
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

/// Decodes and analyses a snapshot held in memory: one finding per device
/// with an `oom` event, or one memory-state finding.
pub fn decode(data: &[u8], input: &str) -> Result<Vec<Finding>, SnapshotError> {
    decode_reader(data, input).map(|(findings, _)| findings)
}

/// Decodes and analyses a snapshot read from `reader`, which is not held in
/// memory. Returns the findings and the number of bytes read.
fn decode_reader<R: Read>(reader: R, input: &str) -> Result<(Vec<Finding>, u64), SnapshotError> {
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

/// The input again, its first bytes already read.
type Rejoined<R> = io::Chain<io::Cursor<Vec<u8>>, R>;

/// Reads the first bytes of an input and decides what it is: true for a
/// snapshot. The returned reader still yields the whole input.
fn route<R: Read>(mut reader: R, input: &str) -> crate::Result<(bool, Rejoined<R>)> {
    let mut prefix = Vec::with_capacity(2);
    (&mut reader)
        .take(2)
        .read_to_end(&mut prefix)
        .map_err(|source| crate::Error::Read {
            input: input.to_string(),
            source,
        })?;
    Ok((sniff(&prefix), io::Cursor::new(prefix).chain(reader)))
}

fn snapshot_outcome<R: Read>(reader: R, input: &str) -> crate::Result<ScanOutcome> {
    let (findings, bytes) =
        decode_reader(reader, input).map_err(|source| crate::Error::Snapshot {
            input: input.to_string(),
            source,
        })?;
    Ok(ScanOutcome {
        findings,
        lines: 0,
        bytes,
        dropped_findings: 0,
        long_lines: 0,
    })
}

/// [`crate::scan`] for any input: a memory snapshot is decoded and analysed,
/// anything else is scanned as a log.
pub fn scan<R: Read + Send>(reader: R, input: &str) -> crate::Result<ScanOutcome> {
    match route(reader, input)? {
        (true, reader) => snapshot_outcome(reader, input),
        (false, reader) => crate::scanner::scan(reader, input),
    }
}

/// [`crate::scanner::scan_keeping`] for any input: a snapshot is analysed,
/// anything else scanned as a log, keeping what was found before a read error.
pub fn scan_keeping<R: Read + Send>(reader: R, input: &str) -> (ScanOutcome, Option<crate::Error>) {
    match route(reader, input) {
        Ok((true, reader)) => keep(snapshot_outcome(reader, input)),
        Ok((false, reader)) => crate::scanner::scan_keeping(reader, input),
        Err(err) => (ScanOutcome::default(), Some(err)),
    }
}

/// [`crate::scanner::scan_serial`] for any input (see [`scan_keeping`]).
pub fn scan_serial<R: Read>(reader: R, input: &str) -> (ScanOutcome, Option<crate::Error>) {
    match route(reader, input) {
        Ok((true, reader)) => keep(snapshot_outcome(reader, input)),
        Ok((false, reader)) => crate::scanner::scan_serial(reader, input),
        Err(err) => (ScanOutcome::default(), Some(err)),
    }
}

fn keep(result: crate::Result<ScanOutcome>) -> (ScanOutcome, Option<crate::Error>) {
    match result {
        Ok(outcome) => (outcome, None),
        Err(err) => (ScanOutcome::default(), Some(err)),
    }
}

/// [`crate::scan_streaming`] for any input (see [`scan`]).
pub fn scan_streaming<R: Read + Send>(
    reader: R,
    input: &str,
    on_finding: &mut dyn FnMut(Finding),
) -> crate::Result<ScanOutcome> {
    match route(reader, input)? {
        (true, reader) => {
            let mut outcome = snapshot_outcome(reader, input)?;
            for (i, mut f) in std::mem::take(&mut outcome.findings)
                .into_iter()
                .enumerate()
            {
                f.id = i + 1;
                on_finding(f);
            }
            Ok(outcome)
        }
        (false, reader) => crate::scanner::scan_streaming(reader, input, on_finding),
    }
}
