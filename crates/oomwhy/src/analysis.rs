//! Explaining what the front door read: [`Analysis`] for whole inputs (the
//! command's default mode), [`LiveAnalysis`] for findings handed out one at
//! a time, and [`scan_paths`], the command's report for the paths a user
//! names: the one way from inputs to a report, which the command
//! ([`scan_entries_with`]), the Python module and the browser build
//! ([`ScanReport::from_members`]) share.

use crate::error::Error;
use crate::explain;
use crate::input::{self, Entry, Input, Scanned};
use crate::record::{Finding, Summary};
use crate::scanner::ScanOutcome;
use crate::snapshot;
use std::collections::HashMap;
use std::path::Path;

/// Collects the findings of several inputs into one explained report.
#[derive(Debug, Default)]
pub struct Analysis {
    findings: Vec<Finding>,
    summary: Summary,
}

impl Analysis {
    /// An empty analysis.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the outcome of scanning one input.
    pub fn add(&mut self, outcome: ScanOutcome) {
        let offset = self.findings.len();
        self.summary.inputs += 1;
        self.summary.lines += outcome.lines;
        self.summary.bytes += outcome.bytes;
        for (local, mut finding) in outcome.findings.into_iter().enumerate() {
            finding.id = offset + local + 1;
            // Consequences point at a local index until they get global ids.
            finding.consequence_of = finding.consequence_of.map(|i| offset + i + 1);
            self.findings.push(finding);
        }
    }

    /// Adds the outcome of an input whose reading failed part-way (a
    /// truncated archive): what was found before the error counts, and so
    /// does the error.
    pub fn add_failed(&mut self, outcome: ScanOutcome) {
        self.add(outcome);
        self.summary.input_errors += 1;
    }

    /// Records an input that could not be read.
    pub fn add_error(&mut self) {
        self.summary.inputs += 1;
        self.summary.input_errors += 1;
    }

    /// Explains every finding and returns them with the summary.
    pub fn finish(mut self) -> (Vec<Finding>, Summary) {
        input::link_across_ranks(&mut self.findings);
        snapshot::join(&mut self.findings);
        explain::explain_all(&mut self.findings);
        let s = &mut self.summary;
        s.findings = self.findings.len();
        for f in &self.findings {
            s.count(f.category);
        }
        (self.findings, self.summary)
    }
}

/// Explains findings one at a time, as a streaming scan hands them out
/// ([`crate::scan_streaming`], [`crate::Stream`]), for output that cannot wait for the end
/// of the input (NDJSON, `--follow`, `oomwhy run`).
///
/// Findings get run-wide ids in the order they are explained, and verdicts
/// that compare with earlier findings (memory growth) see the earlier
/// findings of the whole run. The inputs of one run need distinct names.
#[derive(Debug, Default)]
pub struct LiveAnalysis {
    summary: Summary,
    /// Recent findings, a few per kind, device and rank, for [`explain::explain_after`].
    history: Vec<Finding>,
    /// (input, id within the input) → run-wide id, for `consequence_of`.
    ids: HashMap<(String, usize), usize>,
}

/// Earlier findings kept per kind, device and rank for [`LiveAnalysis`].
const HISTORY_PER_KEY: usize = 8;
/// Id mappings kept for [`LiveAnalysis`]; consequences follow their cause closely.
const MAX_ID_MAPPINGS: usize = 100_000;

impl LiveAnalysis {
    /// An empty analysis.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that an input is about to be read.
    pub fn begin_input(&mut self) {
        self.summary.inputs += 1;
    }

    /// Records an input that could not be read (to the end, or at all).
    pub fn add_error(&mut self) {
        self.summary.input_errors += 1;
    }

    /// Adds the line and byte counts of an input read to its end.
    pub fn end_input(&mut self, outcome: &ScanOutcome) {
        self.summary.lines += outcome.lines;
        self.summary.bytes += outcome.bytes;
    }

    /// Explains a finding handed out by a streaming scan, gives it its
    /// run-wide id and counts it. A finding made by hand (id 0) is welcome too.
    pub fn explain(&mut self, mut finding: Finding) -> Finding {
        let id = self.summary.findings + 1;
        if self.ids.len() >= MAX_ID_MAPPINGS {
            self.ids.clear();
        }
        if finding.id > 0 {
            self.ids
                .insert((finding.source.input.clone(), finding.id), id);
        }
        finding.consequence_of = finding
            .consequence_of
            .and_then(|local| self.ids.get(&(finding.source.input.clone(), local + 1)))
            .copied();
        finding.id = id;
        explain::explain_after(&self.history, &mut finding);

        let key = |f: &Finding| (f.kind, f.device, f.first_rank);
        let same = self.history.iter().filter(|h| key(h) == key(&finding));
        if same.count() >= HISTORY_PER_KEY {
            if let Some(oldest) = self.history.iter().position(|h| key(h) == key(&finding)) {
                self.history.remove(oldest);
            }
        }
        self.history.push(finding.clone());

        let s = &mut self.summary;
        s.findings += 1;
        s.count(finding.category);
        finding
    }

    /// The counts so far.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }
}

/// Finds and explains every message in `text` (e.g. a pasted error).
pub fn decode_str(text: &str) -> Vec<Finding> {
    let mut analysis = Analysis::new();
    // Reading from a byte slice cannot fail, and a pasted text is a log.
    if let Ok(outcome) = crate::scanner::scan(text.as_bytes(), input::STDIN) {
        analysis.add(outcome);
    }
    analysis.finish().0
}

/// Something the command says about an input besides its findings.
#[derive(Debug)]
pub enum Notice {
    /// An input that could not be read, to its end or at all (what was
    /// found before the error is in the report).
    Error(Error),
    /// A binary file found in a directory or an archive, passed over.
    Binary(String),
    /// A symlink that leads back to a directory being walked: not followed.
    Loop {
        /// The symlink.
        path: String,
        /// The directory it leads back to.
        ancestor: String,
    },
}

/// What the command reports for some inputs: the findings, explained, the
/// counts, and what it said about the inputs on the way, in input order.
#[derive(Debug, Default)]
pub struct ScanReport {
    /// Every finding, explained, with run-wide ids.
    pub findings: Vec<Finding>,
    /// The counts.
    pub summary: Summary,
    /// Errors and inputs passed over, in input order.
    pub notices: Vec<Notice>,
}

/// Reads every input the paths name, as the command does, and explains what
/// they held: files (compressed or not), memory snapshots, the files of tar
/// and zip archives, every file under a directory, and standard input for
/// `-`. The copies of one crash in the per-rank files of one job fold into
/// one finding. Findings and their ids are those of
/// `oomwhy --format json PATH...`.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("oomwhy-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("train.log"), "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB")?;
/// let report = oomwhy::scan_paths(&[&dir]);
/// assert_eq!(report.summary.oom, 1);
/// assert!(report.notices.is_empty());
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn scan_paths<P: AsRef<Path>>(paths: &[P]) -> ScanReport {
    scan_entries(input::expand(paths))
}

/// [`scan_paths`] for inputs already listed by [`input::expand`] (renamed,
/// for instance, to name them in findings as the caller wishes).
pub fn scan_entries(entries: Vec<Entry>) -> ScanReport {
    scan_entries_with(entries, scan_listed, |_| {})
}

/// Scans inputs as [`scan_paths`] does: one named on its own with the
/// scanner's helper thread too, several side by side, one per core.
fn scan_listed(inputs: &[Input]) -> Vec<Scanned> {
    match inputs {
        [input] if !input.from_directory => vec![input::scan_input_threaded(input)],
        _ => input::scan_inputs(inputs, input::default_threads()),
    }
}

/// [`scan_entries`] with the caller's way of scanning and of telling what
/// it notices: the command's, which scans one input with a progress bar
/// and warns as it goes. `scan` reads every input in order (one [`Scanned`]
/// each); `on_notice` hears each notice as it arises, in input order: an
/// unreadable entry or a symlink loop before anything is scanned, the rest
/// before anything is explained. The report keeps the notices too.
pub fn scan_entries_with(
    entries: Vec<Entry>,
    scan: impl FnOnce(&[Input]) -> Vec<Scanned>,
    mut on_notice: impl FnMut(&Notice),
) -> ScanReport {
    let mut analysis = Analysis::new();
    let mut notices = Vec::new();
    let mut inputs: Vec<Input> = Vec::new();
    for entry in entries {
        let notice = match entry {
            Entry::Input(input) => {
                inputs.push(input);
                continue;
            }
            Entry::Loop { path, ancestor } => Notice::Loop { path, ancestor },
            Entry::Error(err) => {
                analysis.add_error();
                Notice::Error(err)
            }
        };
        on_notice(&notice);
        notices.push(notice);
    }
    let scanned = scan(&inputs);
    // A tar or zip archive's files are inputs of their own (per-rank files
    // in one archive fold like those in a directory).
    let members = inputs
        .iter()
        .zip(scanned)
        .flat_map(|(input, scanned)| scanned.into_members(&input.name));
    let mut report = gather(analysis, members, on_notice);
    notices.append(&mut report.notices);
    report.notices = notices;
    report
}

impl ScanReport {
    /// Explains what the front door read from one input ([`input::scan_reader`],
    /// [`input::scan_file`], [`input::scan_bytes`]) as [`scan_paths`] does.
    pub fn from_scanned(scanned: Scanned, name: &str) -> Self {
        Self::from_members(scanned.into_members(name))
    }

    /// Explains inputs already scanned, each with its name (an archive's
    /// files as [`Scanned::into_members`] lists them), as [`scan_paths`]
    /// does: for a caller that reads its inputs itself (the browser build
    /// reads dropped files one at a time).
    pub fn from_members(members: impl IntoIterator<Item = (String, Scanned)>) -> Self {
        gather(Analysis::new(), members, |_| {})
    }
}

/// Adds scanned inputs to `analysis` and explains them as the command does:
/// what was found before a read error counts, binary files are passed over,
/// and the per-rank files of one job fold. `on_notice` hears each notice
/// before anything is explained.
fn gather(
    mut analysis: Analysis,
    members: impl IntoIterator<Item = (String, Scanned)>,
    mut on_notice: impl FnMut(&Notice),
) -> ScanReport {
    let mut notices = Vec::new();
    let mut outcomes = Vec::new();
    let mut failed = Vec::new();
    for (name, scanned) in members {
        let notice = match scanned {
            Scanned::Done(outcome) => {
                outcomes.push(outcome);
                failed.push(false);
                continue;
            }
            Scanned::Failed(outcome, err) => {
                // What was found before the error still counts.
                outcomes.push(outcome);
                failed.push(true);
                Notice::Error(err)
            }
            Scanned::Binary => Notice::Binary(name),
            // The members of an archive are never archives themselves.
            Scanned::Archive(_) => continue,
        };
        on_notice(&notice);
        notices.push(notice);
    }
    input::fold_rank_files(&mut outcomes);
    for (outcome, failed) in outcomes.into_iter().zip(failed) {
        if failed {
            analysis.add_failed(outcome);
        } else {
            analysis.add(outcome);
        }
    }
    let (findings, summary) = analysis.finish();
    ScanReport {
        findings,
        summary,
        notices,
    }
}
