//! The front door: every input the command reads, routed by what its first
//! bytes say it is, not by its name.
//!
//! * plain text is searched by the log scanner ([`crate::scan_log`]);
//! * gzip, zstd, xz and bzip2 are decompressed as a stream first;
//! * a tar archive (compressed or not) and a zip archive are opened, and
//!   each file in them is an input of its own, named `ARCHIVE:PATH`;
//! * a PyTorch memory snapshot (a pickle) is analysed by the snapshot reader;
//! * a directory stands for every file under it (walked recursively in
//!   path order, following symlinks but never around a loop), and a file
//!   found there whose first bytes hold a NUL is binary and skipped, as
//!   ripgrep does.
//!
//! The calls, from one stream to many paths:
//!
//! * [`scan`] reads one stream as the command reads standard input, and
//!   [`scan_streaming`] hands out its findings as they complete;
//! * [`scan_reader`], [`scan_file`] and [`scan_bytes`] say what one stream,
//!   file or buffer held, archive files apart ([`Scanned`]);
//! * [`expand`] turns the paths a user names into [`Input`]s, and
//!   [`scan_inputs`] reads many of them in parallel with bounded memory,
//!   returning the results in input order; [`fold_rank_files`] then folds
//!   the copies of one crash from the per-rank files of one job.
//!
//! [`crate::scan_paths`] puts these together as the command does.

mod archive;
mod decode;
mod jobs;
mod route;
mod sniff;
mod stdin;

pub use archive::{scan_archive, scan_zip, scan_zip_from};
pub use decode::{open_reader, Archive, Opened};
pub(crate) use jobs::link_across_ranks;
pub use jobs::{fold_rank_files, rank_of_path};
pub use route::{scan_opened, scan_opened_serial, scan_opened_streaming};
pub use sniff::{sniff, Content, HEAD};
pub use stdin::stdin_ended_mid_line;

use crate::error::{Error, Result};
use crate::record::Finding;
use crate::scanner::ScanOutcome;
use std::io::{self, Read, Seek};
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
    pub fn open(&self) -> Result<Opened<'static>> {
        let raw: Box<dyn Read + Send> = match &self.path {
            None => {
                let stdin = io::stdin();
                enlarge_pipe(&stdin);
                Box::new(stdin::Stdin::new(stdin))
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
    pub fn open_raw(&self, raw: Box<dyn Read + Send>) -> Result<Opened<'static>> {
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

/// Scans one input on this thread alone (a compressed one with the
/// scanner's helper thread too: see [`scan_input_threaded`]).
pub fn scan_input(input: &Input) -> Scanned {
    scan_input_with(input, false)
}

/// Scans one input with the scanner's helper thread: for an input read on
/// its own, which then takes two cores.
pub fn scan_input_threaded(input: &Input) -> Scanned {
    scan_input_with(input, true)
}

fn scan_input_with(input: &Input, threaded: bool) -> Scanned {
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
    scan_text(opened, &input.name, threaded)
}

/// Scans an opened input's text. Decompressing costs more than searching:
/// a compressed input always gets the scanner's helper thread, so that one
/// block is decompressed while the one before it is searched.
fn scan_text(opened: Opened<'_>, name: &str, threaded: bool) -> Scanned {
    if threaded || opened.content.compression().is_some() {
        Scanned::from(route::scan_opened(opened.reader, name))
    } else {
        Scanned::from(route::scan_opened_serial(opened.reader, name))
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

/// A zip archive met in a stream: its directory is at its end, which a
/// stream cannot seek to.
fn zip_in_a_stream(name: &str) -> Scanned {
    Scanned::Failed(
        ScanOutcome::default(),
        Error::Read {
            input: name.to_string(),
            source: io::Error::other(
                "a zip archive is read from a file or from memory, not from a stream",
            ),
        },
    )
}

fn read_stream<R: Read + Send>(reader: R, name: &str, threaded: bool) -> Scanned {
    let opened = match open_reader(Box::new(reader), false) {
        Ok(opened) => opened,
        Err(source) => {
            let input = name.to_string();
            return Scanned::Failed(ScanOutcome::default(), Error::Read { input, source });
        }
    };
    match opened.archive {
        Some(Archive::Tar) => Scanned::Archive(scan_archive(opened.reader, name)),
        Some(Archive::Zip) => zip_in_a_stream(name),
        None => scan_text(opened, name, threaded),
    }
}

/// What one stream held, read as the command reads standard input: text,
/// compressed or not, a memory snapshot, or a tar archive (compressed or
/// not) whose files are inputs of their own. A zip archive is an error
/// here ([`scan_file`] and [`scan_bytes`] read one). `name` names it in
/// findings and errors.
pub fn scan_reader<R: Read + Send>(reader: R, name: &str) -> Scanned {
    read_stream(reader, name, false)
}

/// What a file held ([`scan_reader`]), a zip archive included.
pub fn scan_file(mut file: std::fs::File, name: &str) -> Scanned {
    let failed = |source| {
        let input = name.to_string();
        Scanned::Failed(ScanOutcome::default(), Error::Read { input, source })
    };
    let mut magic = [0u8; 4];
    let is_zip = file.read_exact(&mut magic).is_ok() && sniff(&magic) == Content::Zip;
    if let Err(source) = file.rewind() {
        return failed(source);
    }
    if is_zip {
        return scan_zip_from(io::BufReader::new(file), name);
    }
    scan_reader(file, name)
}

/// What bytes held in memory held ([`scan_reader`]), a zip archive included.
pub fn scan_bytes(data: &[u8], name: &str) -> Scanned {
    if sniff(data) == Content::Zip {
        return scan_zip_from(io::Cursor::new(data), name);
    }
    scan_reader(data, name)
}

/// Reads one stream to its end as the command reads standard input, and
/// returns what it held: text, compressed or not (gzip, zstd, xz, bzip2,
/// told by their first bytes), a PyTorch memory snapshot, or a tar archive.
/// `name` names it in findings and errors.
///
/// The findings of a tar archive's files come in one outcome, each naming
/// its file (`NAME:PATH`), the copies of one crash in per-rank files
/// folded as the command folds them. A zip archive is read by
/// [`scan_file`], [`scan_bytes`] or [`crate::scan_paths`], which also reads
/// directories. A read error (a truncated archive) is returned as the
/// error; [`scan_reader`] keeps what came before it.
///
/// ```
/// let log = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB";
/// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
/// std::io::Write::write_all(&mut gz, log.as_bytes())?;
/// let outcome = oomwhy::scan(&gz.finish()?[..], "train.log.gz")?;
/// assert_eq!(outcome.findings[0].sizes.requested_bytes, Some(20 << 20));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn scan<R: Read + Send>(reader: R, name: &str) -> Result<ScanOutcome> {
    match read_stream(reader, name, true) {
        Scanned::Done(outcome) => Ok(outcome),
        Scanned::Failed(_, err) => Err(err),
        Scanned::Binary => Ok(ScanOutcome::default()),
        Scanned::Archive(members) => {
            let mut outcomes = Vec::with_capacity(members.len());
            for (_, scanned) in members {
                match scanned {
                    Scanned::Done(outcome) => outcomes.push(outcome),
                    Scanned::Failed(_, err) => return Err(err),
                    // Binary files of the archive are passed over.
                    Scanned::Binary | Scanned::Archive(_) => {}
                }
            }
            fold_rank_files(&mut outcomes);
            Ok(concat(outcomes))
        }
    }
}

/// Reads one stream like [`scan`], but hands out each finding as soon as it
/// is complete, as [`crate::scan_log_streaming`] does for a log (its
/// documentation says when, and how findings are numbered). The files of a
/// tar archive are read one after the other, each finding numbered within
/// its file; per-rank copies are not folded.
pub fn scan_streaming<R: Read + Send>(
    reader: R,
    name: &str,
    on_finding: &mut dyn FnMut(Finding),
) -> Result<ScanOutcome> {
    let opened = open_reader(Box::new(reader), false).map_err(|source| Error::Read {
        input: name.to_string(),
        source,
    })?;
    let members = match opened.archive {
        None => return scan_opened_streaming(opened.reader, name, on_finding),
        Some(Archive::Tar) => scan_archive(opened.reader, name),
        Some(Archive::Zip) => vec![(name.to_string(), zip_in_a_stream(name))],
    };
    let mut total = ScanOutcome::default();
    for (_, scanned) in members {
        let (outcome, error) = match scanned {
            Scanned::Done(outcome) => (outcome, None),
            Scanned::Failed(outcome, err) => (outcome, Some(err)),
            Scanned::Binary | Scanned::Archive(_) => continue,
        };
        for (i, mut finding) in outcome.findings.into_iter().enumerate() {
            finding.id = i + 1;
            on_finding(finding);
        }
        if let Some(err) = error {
            return Err(err);
        }
        total.lines += outcome.lines;
        total.bytes += outcome.bytes;
        total.dropped_findings += outcome.dropped_findings;
        total.long_lines += outcome.long_lines;
    }
    Ok(total)
}

/// Several inputs' outcomes as one, in order: counts added, and each
/// finding's `consequence_of` (an index within its own input) moved past
/// the findings of the inputs before it.
pub(crate) fn concat(outcomes: impl IntoIterator<Item = ScanOutcome>) -> ScanOutcome {
    let mut all = ScanOutcome::default();
    for outcome in outcomes {
        let offset = all.findings.len();
        all.lines += outcome.lines;
        all.bytes += outcome.bytes;
        all.dropped_findings += outcome.dropped_findings;
        all.long_lines += outcome.long_lines;
        all.findings
            .extend(outcome.findings.into_iter().map(|mut finding| {
                finding.consequence_of = finding.consequence_of.map(|i| i + offset);
                finding
            }));
    }
    all
}
