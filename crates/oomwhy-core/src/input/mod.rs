//! Where logs live: turns the paths a user names into inputs and reads them.
//!
//! * [`expand`] turns paths into a list of [`Input`]s: a file, standard
//!   input (`-`), or every file under a directory (walked recursively in
//!   path order, following symlinks but never around a loop).
//! * [`Input::open`] sniffs the first bytes ([`sniff`]) and decompresses
//!   gzip, zstd, xz and bzip2 as a stream; a file found in a directory whose
//!   first bytes hold a NUL is binary and skipped, as ripgrep does.
//! * [`scan_inputs`] scans many inputs in parallel with bounded memory and
//!   returns the results in input order; [`fold_rank_files`] then folds the
//!   copies of one crash from the per-rank files of one job.

mod decode;
mod jobs;
mod sniff;

pub use decode::{open_reader, Archive, Opened};
pub use jobs::{fold_rank_files, rank_of_path};
pub use sniff::{sniff, Content, HEAD};

use crate::error::{Error, Result};
use crate::scanner::ScanOutcome;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One input to scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// The name findings and errors give it: the path as the user wrote it
    /// (for a file found in a directory, that directory's path joined with
    /// the file's path inside it), or `<stdin>`.
    pub name: String,
    /// The file; `None` for standard input.
    pub path: Option<PathBuf>,
    /// Found by walking a directory rather than named: a binary file is
    /// skipped instead of scanned.
    pub from_directory: bool,
}

/// The name standard input gets in findings.
pub const STDIN: &str = "<stdin>";

impl Input {
    /// A file named on the command line.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        Input {
            name: path.display().to_string(),
            path: Some(path),
            from_directory: false,
        }
    }

    /// Standard input.
    pub fn stdin() -> Self {
        Input {
            name: STDIN.to_string(),
            path: None,
            from_directory: false,
        }
    }

    /// Opens the input, decompressing it if its first bytes say so.
    pub fn open(&self) -> Result<Opened> {
        let raw: Box<dyn Read + Send> = match &self.path {
            None => {
                let stdin = io::stdin();
                enlarge_pipe(&stdin);
                Box::new(stdin)
            }
            Some(path) => Box::new(self.open_file(path)?.0),
        };
        self.open_raw(raw)
    }

    /// Opens the file for reading, with its size; an error for a directory.
    pub fn open_file(&self, path: &Path) -> Result<(std::fs::File, std::fs::Metadata)> {
        let file = std::fs::File::open(path).map_err(|e| self.error(e))?;
        let meta = file.metadata().map_err(|e| self.error(e))?;
        if meta.is_dir() {
            return Err(self.error(io::Error::other("is a directory")));
        }
        Ok((file, meta))
    }

    /// Sniffs and decompresses `raw`, the input's bytes as read (wrapped,
    /// for instance, to count them for a progress bar).
    pub fn open_raw(&self, raw: Box<dyn Read + Send>) -> Result<Opened> {
        open_reader(raw, self.from_directory).map_err(|e| self.error(e))
    }

    /// A read error for this input.
    pub fn error(&self, source: io::Error) -> Error {
        Error::Read {
            input: self.name.clone(),
            source,
        }
    }
}

/// Asks the kernel for a 1 MiB buffer when standard input is a pipe (the
/// default is 64 KiB). With the default, the writer and oomwhy woke each
/// other every 64 KiB, and those hand-offs made `cat LOG | oomwhy` about a
/// fifth slower than `cat LOG | wc -l`. A refusal (a lower system limit, not
/// a pipe) changes nothing, so it is ignored.
fn enlarge_pipe(stdin: &io::Stdin) {
    // `nix` comes with the `native` feature (off in the browser build).
    #[cfg(all(target_os = "linux", feature = "native"))]
    let _ = nix::fcntl::fcntl(stdin, nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
    #[cfg(not(all(target_os = "linux", feature = "native")))]
    let _ = stdin;
}

/// One entry of [`expand`]'s list.
#[derive(Debug)]
pub enum Entry {
    /// An input to scan.
    Input(Input),
    /// A symlink that leads back to a directory being walked: not followed,
    /// and not an error (a loop is a normal sight in a shared log tree).
    Loop {
        /// The symlink.
        path: String,
        /// The directory it leads back to.
        ancestor: String,
    },
    /// A path that cannot be listed (missing, unreadable directory).
    Error(Error),
}

/// Turns the paths a user names into inputs, in order: `-` is standard
/// input, a directory stands for every file under it (walked recursively,
/// sorted by path, following symlinks but never around a loop), anything
/// else is a file. What cannot be listed is an error in its place; the
/// other paths are still expanded. A missing file is listed as an input:
/// opening it says what is wrong.
///
/// ```
/// use oomwhy::input::{expand, Entry};
/// let entries = expand(&["-"]);
/// assert!(matches!(&entries[0], Entry::Input(input) if input.name == "<stdin>"));
/// ```
pub fn expand<P: AsRef<Path>>(paths: &[P]) -> Vec<Entry> {
    let mut out = Vec::new();
    for path in paths {
        let path = path.as_ref();
        if path == Path::new("-") {
            out.push(Entry::Input(Input::stdin()));
            continue;
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk(path, &mut out),
            // A missing file, a FIFO, a device: opening it says what is wrong.
            _ => out.push(Entry::Input(Input::file(path))),
        }
    }
    out
}

/// Without the `native` feature (the browser build, which has no file
/// system) there is no directory to walk: naming one is an error.
#[cfg(not(feature = "native"))]
fn walk(root: &Path, out: &mut Vec<Entry>) {
    out.push(Entry::Error(Error::Read {
        input: root.display().to_string(),
        source: io::Error::new(
            io::ErrorKind::Unsupported,
            "directories are not read in this build",
        ),
    }));
}

/// Every file under `root`, in path order.
#[cfg(feature = "native")]
fn walk(root: &Path, out: &mut Vec<Entry>) {
    let walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name();
    for entry in walker {
        match entry {
            // Directories are walked into; FIFOs, sockets and devices met
            // on the way are not logs (and a FIFO would block the scan).
            Ok(entry) if !entry.file_type().is_file() => {}
            Ok(entry) => {
                let path = entry.into_path();
                out.push(Entry::Input(Input {
                    name: path.display().to_string(),
                    path: Some(path),
                    from_directory: true,
                }));
            }
            Err(err) => {
                let name = err.path().unwrap_or(root).display().to_string();
                if let Some(ancestor) = err.loop_ancestor() {
                    out.push(Entry::Loop {
                        path: name,
                        ancestor: ancestor.display().to_string(),
                    });
                    continue;
                }
                let source = err
                    .into_io_error()
                    .unwrap_or_else(|| io::Error::other("cannot be listed"));
                out.push(Entry::Error(Error::Read {
                    input: name,
                    source,
                }));
            }
        }
    }
}

/// What scanning one input gave.
#[derive(Debug)]
pub enum Scanned {
    /// Read to its end.
    Done(ScanOutcome),
    /// Reading failed part-way (a corrupt or truncated archive, an I/O
    /// error) or at once: what was found before the damage, and the error.
    Failed(ScanOutcome, Error),
    /// A binary file found in a directory: not scanned.
    Binary,
    /// A tar archive: what each file in it gave, named `ARCHIVE:PATH`, in
    /// archive order (a read error ends the list, after what came before it).
    Archive(Vec<(String, Scanned)>),
}

impl From<(ScanOutcome, Option<Error>)> for Scanned {
    fn from((outcome, error): (ScanOutcome, Option<Error>)) -> Self {
        match error {
            None => Scanned::Done(outcome),
            Some(err) => Scanned::Failed(outcome, err),
        }
    }
}

impl Scanned {
    /// The outcome, if anything was read (for an archive, see
    /// [`Scanned::into_members`]).
    pub fn outcome(&self) -> Option<&ScanOutcome> {
        match self {
            Scanned::Done(outcome) | Scanned::Failed(outcome, _) => Some(outcome),
            Scanned::Binary | Scanned::Archive(_) => None,
        }
    }

    /// The inputs this stands for, each with its name: an archive's files,
    /// or this input itself, named `name`.
    pub fn into_members(self, name: &str) -> Vec<(String, Scanned)> {
        match self {
            Scanned::Archive(members) => members,
            scanned => vec![(name.to_string(), scanned)],
        }
    }
}

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
    let peeked = decode::Peeked::new(entry, HEAD, HEAD);
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
    let text = decode::Peeked::new(reader, 512, HEAD);
    if sniff::is_tar(text.head()) {
        return Scanned::Binary;
    }
    Scanned::from(crate::snapshot::scan_serial(text, member))
}

/// Scans one opened input on this thread alone.
pub fn scan_input(input: &Input) -> Scanned {
    let opened = match input.open() {
        Ok(opened) => opened,
        Err(err) => return Scanned::Failed(ScanOutcome::default(), err),
    };
    if opened.content == Content::Binary && input.from_directory {
        return Scanned::Binary;
    }
    match opened.archive {
        Some(Archive::Tar) => return Scanned::Archive(scan_archive(opened.reader, &input.name)),
        Some(Archive::Zip) => return scan_zip(input),
        None => {}
    }
    // Decompressing costs more than searching: a compressed input gets the
    // scanner's helper thread, so that one block is decompressed while the
    // one before it is searched.
    let scanned = if opened.content.compression().is_some() {
        crate::snapshot::scan_keeping(opened.reader, &input.name)
    } else {
        crate::snapshot::scan_serial(opened.reader, &input.name)
    };
    match scanned {
        (outcome, None) => Scanned::Done(outcome),
        (outcome, Some(err)) => Scanned::Failed(outcome, err),
    }
}

/// Scans `inputs` on up to `threads` threads (each scans whole inputs, one
/// at a time, so memory is bounded by `threads` scans) and returns what each
/// gave, in input order. Standard input, if listed, is read like the rest.
pub fn scan_inputs(inputs: &[Input], threads: usize) -> Vec<Scanned> {
    let threads = threads.clamp(1, inputs.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Scanned>>> =
        Mutex::new((0..inputs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(input) = inputs.get(i) else {
                    return;
                };
                let scanned = scan_input(input);
                let mut results = results
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                results[i] = Some(scanned);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .into_iter()
        .map(|r| {
            // Every slot is filled unless a thread panicked, and then the
            // scope has already re-raised the panic.
            r.unwrap_or_else(|| {
                Scanned::Failed(
                    ScanOutcome::default(),
                    Error::Read {
                        input: String::new(),
                        source: io::Error::other("not scanned"),
                    },
                )
            })
        })
        .collect()
}

/// Most inputs scanned at once: each scan holds a few blocks and its
/// decompressor's window (up to 8 MiB for xz and zstd at their usual
/// levels), so memory grows with the threads.
pub const MAX_THREADS: usize = 8;

/// Threads to scan many inputs on: one per core, at most [`MAX_THREADS`].
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS))
}
