//! Archives whose files are inputs of their own: tar (read as a stream)
//! and zip (read from a file or from memory: its directory is at its end).

use super::decode::{self, Peeked};
use super::sniff::{self, sniff, Content, HEAD};
use super::{Input, Scanned};
use crate::error::Error;
use crate::scanner::ScanOutcome;
use std::io::{self, Read};

/// Reads a tar archive (already decompressed) and scans each regular file
/// in it as an input of its own, named `ARCHIVE:PATH`: as a file found in a
/// directory, a compressed one is decompressed, a snapshot analysed and a
/// binary one skipped (an archive inside the archive too). Files are read
/// in archive order, one at a time; a
/// read error (a truncated or corrupt archive) ends the list with a failed
/// entry named after the archive, after the files read before it.
pub fn scan_archive<R: Read>(reader: R, name: &str) -> Vec<(String, Scanned)> {
    let mut members = Vec::new();
    let mut archive = tar::Archive::new(reader);
    let failed = |source: io::Error| {
        let input = name.to_string();
        (
            input.clone(),
            Scanned::Failed(ScanOutcome::default(), Error::Read { input, source }),
        )
    };
    let entries = match archive.entries() {
        Ok(entries) => entries,
        Err(err) => return vec![failed(err)],
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                // A damaged archive already failed the file being read when
                // the damage was met: the same error is said once.
                let said = members.last().is_some_and(|(_, last)| {
                    matches!(last, Scanned::Failed(_, Error::Read { source, .. })
                        if source.to_string() == err.to_string())
                });
                if !said {
                    members.push(failed(err));
                }
                break;
            }
        };
        // Directories, links and devices hold no log lines.
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = match entry.path() {
            Ok(path) => path.display().to_string(),
            Err(_) => String::from_utf8_lossy(&entry.path_bytes()).into_owned(),
        };
        let member = format!("{name}:{path}");
        let scanned = scan_member(entry, &member);
        members.push((member, scanned));
    }
    members
}

/// Reads a zip archive from its file and scans each file in it as an input
/// of its own, named `ARCHIVE:PATH`, as [`scan_archive`] does for tar. A zip
/// archive's directory is at its end, so it is read from a file (standard
/// input, or a zip inside a compressed file, is an error for that input).
pub fn scan_zip(input: &Input) -> Scanned {
    let Some(path) = &input.path else {
        return Scanned::Failed(
            ScanOutcome::default(),
            input.error(io::Error::other(
                "a zip archive is read from a file, not from standard input",
            )),
        );
    };
    match std::fs::File::open(path) {
        Ok(file) => scan_zip_from(io::BufReader::new(file), &input.name),
        Err(err) => Scanned::Failed(ScanOutcome::default(), input.error(err)),
    }
}

/// [`scan_zip`] for a zip archive in any seekable source (a file, bytes in
/// memory), named `name`.
///
/// An archive whose directory cannot be read (a download cut short) is read
/// from its start, one local file header after another, as far as the files
/// go: the files before the damage are kept, then the error.
pub fn scan_zip_from<R: Read + io::Seek>(mut source: R, name: &str) -> Scanned {
    let failed = |source: io::Error| {
        Scanned::Failed(
            ScanOutcome::default(),
            Error::Read {
                input: name.to_string(),
                source,
            },
        )
    };
    let mut members = Vec::new();
    let directory_error = match zip::ZipArchive::new(&mut source) {
        Ok(mut archive) => {
            for i in 0..archive.len() {
                match archive.by_index(i) {
                    Ok(entry) if entry.is_file() => {
                        let member = zip_member_name(name, &entry, i + 1);
                        let scanned = scan_member(entry, &member);
                        members.push((member, scanned));
                    }
                    Ok(_) => {}
                    Err(err) => members.push((name.to_string(), failed(zip_error(err)))),
                }
            }
            return Scanned::Archive(members);
        }
        Err(err) => zip_error(err),
    };
    if let Err(err) = source.seek(io::SeekFrom::Start(0)) {
        return failed(err);
    }
    let mut error = Some(directory_error);
    loop {
        match zip::read::read_zipfile_from_stream(&mut source) {
            Ok(Some(entry)) if entry.is_file() => {
                let member = zip_member_name(name, &entry, members.len() + 1);
                let scanned = scan_member(entry, &member);
                members.push((member, scanned));
            }
            Ok(Some(_)) => {}
            // The local headers ended where the directory starts: every file
            // was read, only the directory is damaged.
            Ok(None) => break,
            Err(err) => {
                if members.is_empty() {
                    error = Some(zip_error(err));
                }
                break;
            }
        }
    }
    if let Some(err) = error {
        members.push((name.to_string(), failed(err)));
    }
    Scanned::Archive(members)
}

/// `ARCHIVE:PATH` for a file of a zip archive; a name that is not valid
/// text is shown by the file's place in the archive.
fn zip_member_name<R: Read>(
    archive: &str,
    entry: &zip::read::ZipFile<'_, R>,
    place: usize,
) -> String {
    let path = entry
        .name()
        .map_or_else(|_| format!("#{place}"), |name| name.into_owned());
    format!("{archive}:{path}")
}

/// A zip reader's error as an I/O error that says it is about a zip archive.
fn zip_error(err: zip::result::ZipError) -> io::Error {
    match err {
        zip::result::ZipError::Io(err) => err,
        err => io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the zip archive is damaged or cut short ({err})"),
        ),
    }
}

/// Scans one file of an archive (see [`scan_archive`]).
fn scan_member<R: Read>(entry: R, member: &str) -> Scanned {
    let peeked = Peeked::new(entry, HEAD, HEAD);
    let content = sniff(peeked.head());
    if matches!(content, Content::Binary | Content::Tar | Content::Zip) {
        return Scanned::Binary;
    }
    let reader = match decode::decompress(content, peeked) {
        Ok(reader) => reader,
        Err(source) => {
            return Scanned::Failed(
                ScanOutcome::default(),
                Error::Read {
                    input: member.to_string(),
                    source,
                },
            )
        }
    };
    // An archive inside the archive is not opened: it is passed over like a
    // binary file.
    let text = Peeked::new(reader, 512, HEAD);
    if sniff::is_tar(text.head()) {
        return Scanned::Binary;
    }
    Scanned::from(super::route::scan_opened_serial(text, member))
}
