//! The last fork of the front door: an opened input's text (decompressed
//! already) is a PyTorch memory snapshot, analysed by [`crate::snapshot`], or
//! a log, searched by [`crate::scanner`]. Its first two bytes tell.

use crate::error::{Error, Result};
use crate::record::Finding;
use crate::scanner::{self, ScanOutcome};
use crate::snapshot;
use std::io::{self, Read};

/// The input again, its first bytes already read.
type Rejoined<R> = io::Chain<io::Cursor<Vec<u8>>, R>;

/// Reads the first bytes of an input and decides what it is: true for a
/// snapshot. The returned reader still yields the whole input.
fn route<R: Read>(mut reader: R, input: &str) -> Result<(bool, Rejoined<R>)> {
    let mut prefix = Vec::with_capacity(2);
    (&mut reader)
        .take(2)
        .read_to_end(&mut prefix)
        .map_err(|source| Error::Read {
            input: input.to_string(),
            source,
        })?;
    Ok((
        snapshot::sniff(&prefix),
        io::Cursor::new(prefix).chain(reader),
    ))
}

/// A snapshot's findings as the outcome of scanning its input.
fn snapshot_outcome<R: Read>(reader: R, input: &str) -> Result<ScanOutcome> {
    let (findings, bytes) = snapshot::read(reader, input).map_err(|source| Error::Snapshot {
        input: input.to_string(),
        source,
    })?;
    Ok(ScanOutcome {
        findings,
        bytes,
        ..ScanOutcome::default()
    })
}

fn keep(result: Result<ScanOutcome>) -> (ScanOutcome, Option<Error>) {
    match result {
        Ok(outcome) => (outcome, None),
        Err(err) => (ScanOutcome::default(), Some(err)),
    }
}

/// Scans an opened input's text to its end with the threaded scanner (a
/// snapshot is analysed instead), keeping what was found before a read error.
pub fn scan_opened<R: Read + Send>(reader: R, input: &str) -> (ScanOutcome, Option<Error>) {
    match route(reader, input) {
        Ok((true, reader)) => keep(snapshot_outcome(reader, input)),
        Ok((false, reader)) => scanner::scan_keeping(reader, input),
        Err(err) => (ScanOutcome::default(), Some(err)),
    }
}

/// [`scan_opened`] on this thread alone: for many inputs read side by side,
/// and where there are no threads (the WebAssembly build).
pub fn scan_opened_serial<R: Read>(reader: R, input: &str) -> (ScanOutcome, Option<Error>) {
    match route(reader, input) {
        Ok((true, reader)) => keep(snapshot_outcome(reader, input)),
        Ok((false, reader)) => scanner::scan_serial(reader, input),
        Err(err) => (ScanOutcome::default(), Some(err)),
    }
}

/// Scans an opened input's text, handing out each finding as soon as it is
/// complete ([`crate::scan_log_streaming`] says when); a snapshot's findings
/// are handed out once it is analysed, numbered from 1.
pub fn scan_opened_streaming<R: Read + Send>(
    reader: R,
    input: &str,
    on_finding: &mut dyn FnMut(Finding),
) -> Result<ScanOutcome> {
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
        (false, reader) => scanner::scan_streaming(reader, input, on_finding),
    }
}
