//! The fleet summary: one report over many inputs (`oomwhy --summary`), for
//! a platform team that reads thousands of crashed jobs' logs at once.
//!
//! It is computed in two steps so that it can run on one machine or on many:
//!
//! 1. each input is scanned and explained **on its own** into a small
//!    [`InputDigest`] (a map step: any worker can do it, in any order);
//! 2. [`FleetSummary::from_digests`] folds the digests into counts by kind,
//!    by verdict and by first fix, the inputs behind each, and the largest
//!    shortfalls (a reduce step).
//!
//! The fold sorts the digests by input name first, so the result does not
//! depend on the order in which workers finish. The CLI and the Python
//! package (`oomwhy.ray`) call these same functions, which is why they give
//! the same summary of the same files.
//!
//! ```
//! use oomwhy::summary::{FleetSummary, InputDigest};
//! let log = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB \
//!     (GPU 0; 15.77 GiB total capacity; 13.11 GiB already allocated; \
//!     1.44 GiB free; 13.51 GiB reserved in total by PyTorch)";
//! let digests = vec![
//!     InputDigest::from_bytes(log.as_bytes(), "job-1.log"),
//!     InputDigest::from_bytes(b"epoch 1 done\n", "job-2.log"),
//! ];
//! let summary = FleetSummary::from_digests(digests);
//! assert_eq!((summary.inputs, summary.inputs_with_findings), (2, 1));
//! assert_eq!(summary.by_kind[0].key, "torch_allocator_oom");
//! assert_eq!(summary.by_kind[0].inputs, ["job-1.log"]);
//! // 2.00 GiB asked for, 1.44 GiB free: 0.56 GiB short.
//! assert!(summary.largest_shortfalls[0].shortfall_bytes > 0);
//! ```

use crate::escape::sanitize;
use crate::i18n::{count, zh, Lang, Msg};
use crate::input::Scanned;
use crate::record::{Category, Finding, SCHEMA_VERSION};
use crate::units::{format_signed, format_size};
use crate::{Analysis, Error, ScanOutcome};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read, Write};

/// How many shortfalls the summary lists.
pub const LARGEST_SHORTFALLS: usize = 10;

/// Inputs named per group in the text rendering; JSON names them all.
const INPUTS_SHOWN: usize = 3;

/// What one input contributes to a fleet summary. Small and serialisable,
/// so that it can travel from the worker that read the input to the one
/// that folds the summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputDigest {
    /// The input's name (a path as given, or an object-storage URI).
    pub input: String,
    /// Lines read.
    pub lines: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Why the input could not be read (to its end), if it could not.
    pub error: Option<String>,
    /// One entry per finding, in the order they occurred.
    pub findings: Vec<FindingDigest>,
}

/// The few facts of a finding that the fleet summary counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingDigest {
    /// 1-based line of the message in its input.
    pub line: u64,
    /// The finding's kind slug (`torch_allocator_oom`, ...).
    pub kind: String,
    /// `oom`, `likely_oom` or `crash`.
    pub category: String,
    /// Code of the first (most important) verdict, if any.
    pub verdict: Option<String>,
    /// Title of the first (most effective) fix, if any.
    pub first_fix: Option<String>,
    /// GPU index the message names.
    pub device: Option<u32>,
    /// Bytes the failed allocation asked for.
    pub requested_bytes: Option<u64>,
    /// Bytes the device reported free.
    pub free_bytes: Option<u64>,
    /// requested − free, when both are stated.
    pub shortfall_bytes: Option<i64>,
}

impl FindingDigest {
    /// The counted facts of an explained finding.
    pub fn new(finding: &Finding) -> Self {
        FindingDigest {
            line: finding.source.line,
            kind: finding.kind.slug().to_string(),
            category: category_slug(finding.category).to_string(),
            verdict: finding.diagnosis.verdicts.first().map(|v| v.code.clone()),
            first_fix: finding.diagnosis.fixes.first().map(|f| f.title.clone()),
            device: finding.device,
            requested_bytes: finding.sizes.requested_bytes,
            free_bytes: finding.sizes.free_bytes,
            shortfall_bytes: finding.diagnosis.shortfall_bytes,
        }
    }
}

/// The category as JSON spells it.
fn category_slug(category: Category) -> &'static str {
    match category {
        Category::Oom => "oom",
        Category::LikelyOom => "likely_oom",
        Category::Crash => "crash",
        Category::MemoryState => "memory_state",
        Category::Warning => "warning",
    }
}

impl InputDigest {
    /// Explains the findings of one scanned input on their own (verdicts
    /// that compare findings see only this input's) and keeps what the
    /// summary counts.
    pub fn from_outcome(outcome: ScanOutcome, input: &str) -> Self {
        let mut analysis = Analysis::new();
        analysis.add(outcome);
        let (findings, summary) = analysis.finish();
        InputDigest {
            input: input.to_string(),
            lines: summary.lines,
            bytes: summary.bytes,
            error: None,
            findings: findings.iter().map(FindingDigest::new).collect(),
        }
    }

    /// An input that could not be read.
    pub fn from_error(error: &Error, input: &str) -> Self {
        let message = match error {
            // The name is already in the digest; keep only the reason.
            Error::Read { source, .. } => {
                let full = error.to_string();
                let prefix = format!("{}: ", sanitize(input));
                match full.strip_prefix(&prefix) {
                    Some(reason) => reason.to_string(),
                    None => source.to_string(),
                }
            }
            other => other.to_string(),
        };
        InputDigest {
            input: input.to_string(),
            lines: 0,
            bytes: 0,
            error: Some(message),
            findings: Vec::new(),
        }
    }

    /// Reads an input to its end as the command does (decompressed when its
    /// first bytes say so; a memory snapshot analysed; a tar archive's files
    /// read and digested together) and digests it; a read error makes an
    /// error digest.
    pub fn from_reader<R: Read + Send>(reader: R, input: &str) -> Self {
        Self::from_scanned(crate::input::scan_reader(reader, input), input)
    }

    /// Reads a file as [`InputDigest::from_reader`] does, and a zip archive
    /// too: its directory is at its end, which a file can seek to.
    pub fn from_file(file: std::fs::File, input: &str) -> Self {
        Self::from_scanned(crate::input::scan_file(file, input), input)
    }

    /// Scans an input held in memory and digests it.
    pub fn from_bytes(data: &[u8], input: &str) -> Self {
        Self::from_scanned(crate::input::scan_bytes(data, input), input)
    }

    /// Digests what the front door read ([`crate::input::Scanned`]): a failed
    /// input is an error digest (what was found before the damage is left
    /// out, so a digest is either complete or an error), a binary file
    /// skipped in a directory an empty one.
    pub fn from_scanned(scanned: Scanned, input: &str) -> Self {
        match scanned {
            Scanned::Done(outcome) => Self::from_outcome(outcome, input),
            Scanned::Failed(_, err) => Self::from_error(&err, input),
            Scanned::Binary => Self::from_outcome(ScanOutcome::default(), input),
            // One digest for the whole archive (list its files with
            // `Scanned::into_members` for one digest each).
            Scanned::Archive(members) => {
                let mut outcomes = Vec::with_capacity(members.len());
                for (_, scanned) in members {
                    match scanned {
                        Scanned::Failed(_, err) => return Self::from_error(&err, input),
                        Scanned::Done(outcome) => outcomes.push(outcome),
                        Scanned::Binary | Scanned::Archive(_) => {}
                    }
                }
                Self::from_outcome(crate::input::concat(outcomes), input)
            }
        }
    }
}

/// A count and the inputs behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// The kind slug, verdict code or fix title.
    pub key: String,
    /// Findings with this key.
    pub findings: usize,
    /// Distinct inputs with at least one such finding, sorted.
    pub inputs: Vec<String>,
}

/// One of the largest shortfalls: where a failed allocation missed by most.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shortfall {
    /// requested − free, in bytes (always positive here).
    pub shortfall_bytes: i64,
    /// Bytes the failed allocation asked for.
    pub requested_bytes: Option<u64>,
    /// Bytes the device reported free.
    pub free_bytes: Option<u64>,
    /// The finding's kind slug.
    pub kind: String,
    /// GPU index the message names.
    pub device: Option<u32>,
    /// The input it was found in.
    pub input: String,
    /// 1-based line in that input.
    pub line: u64,
}

/// An input that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputError {
    /// The input's name.
    pub input: String,
    /// Why it could not be read.
    pub error: String,
}

/// The fleet summary (`oomwhy --summary --format json`; its schema is
/// [`crate::schema::SUMMARY`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetSummary {
    /// Same versioning as the findings document ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// Inputs read or tried.
    pub inputs: usize,
    /// Inputs with at least one finding.
    pub inputs_with_findings: usize,
    /// Findings over all inputs.
    pub findings: usize,
    /// Lines read over all inputs.
    pub lines: u64,
    /// Bytes read over all inputs.
    pub bytes: u64,
    /// Findings by category (`oom`, `likely_oom`, `crash`), largest first.
    pub by_category: Vec<Group>,
    /// Findings by kind, largest first.
    pub by_kind: Vec<Group>,
    /// Findings by the code of their first verdict, largest first.
    pub by_verdict: Vec<Group>,
    /// Findings by the title of their first fix, largest first.
    pub by_first_fix: Vec<Group>,
    /// The [`LARGEST_SHORTFALLS`] findings whose allocation missed by most.
    pub largest_shortfalls: Vec<Shortfall>,
    /// Inputs that could not be read, sorted by name.
    pub input_errors: Vec<InputError>,
}

/// Counts per key, with the distinct inputs behind each.
#[derive(Default)]
struct Tally(BTreeMap<String, (usize, BTreeSet<String>)>);

impl Tally {
    fn add(&mut self, key: &str, input: &str) {
        let entry = self.0.entry(key.to_string()).or_default();
        entry.0 += 1;
        if !entry.1.contains(input) {
            entry.1.insert(input.to_string());
        }
    }

    /// Largest count first; equal counts by key, so the order is stable.
    fn groups(self) -> Vec<Group> {
        let mut groups: Vec<Group> = self
            .0
            .into_iter()
            .map(|(key, (findings, inputs))| Group {
                key,
                findings,
                inputs: inputs.into_iter().collect(),
            })
            .collect();
        groups.sort_by(|a, b| b.findings.cmp(&a.findings).then_with(|| a.key.cmp(&b.key)));
        groups
    }
}

impl FleetSummary {
    /// Folds digests into the summary. The result is the same for the same
    /// digests in any order.
    pub fn from_digests(digests: impl IntoIterator<Item = InputDigest>) -> Self {
        let mut digests: Vec<InputDigest> = digests.into_iter().collect();
        // Equal names (a file given twice) are ordered by their content, so
        // that even then the order of arrival does not matter.
        digests.sort_by(|a, b| {
            (&a.input, a.bytes, a.lines, &a.error, a.findings.len()).cmp(&(
                &b.input,
                b.bytes,
                b.lines,
                &b.error,
                b.findings.len(),
            ))
        });
        let mut by_category = Tally::default();
        let mut by_kind = Tally::default();
        let mut by_verdict = Tally::default();
        let mut by_first_fix = Tally::default();
        let mut shortfalls = Vec::new();
        let mut input_errors = Vec::new();
        let (mut findings, mut lines, mut bytes, mut with_findings) = (0, 0u64, 0u64, 0);
        for digest in &digests {
            lines = lines.saturating_add(digest.lines);
            bytes = bytes.saturating_add(digest.bytes);
            if let Some(error) = &digest.error {
                input_errors.push(InputError {
                    input: digest.input.clone(),
                    error: error.clone(),
                });
            }
            if !digest.findings.is_empty() {
                with_findings += 1;
            }
            findings += digest.findings.len();
            for f in &digest.findings {
                by_category.add(&f.category, &digest.input);
                by_kind.add(&f.kind, &digest.input);
                if let Some(verdict) = &f.verdict {
                    by_verdict.add(verdict, &digest.input);
                }
                if let Some(fix) = &f.first_fix {
                    by_first_fix.add(fix, &digest.input);
                }
                if let Some(shortfall_bytes) = f.shortfall_bytes.filter(|&s| s > 0) {
                    shortfalls.push(Shortfall {
                        shortfall_bytes,
                        requested_bytes: f.requested_bytes,
                        free_bytes: f.free_bytes,
                        kind: f.kind.clone(),
                        device: f.device,
                        input: digest.input.clone(),
                        line: f.line,
                    });
                }
            }
        }
        // Largest first; ties by place, so the order is stable.
        shortfalls.sort_by(|a, b| {
            b.shortfall_bytes
                .cmp(&a.shortfall_bytes)
                .then_with(|| a.input.cmp(&b.input))
                .then_with(|| a.line.cmp(&b.line))
        });
        shortfalls.truncate(LARGEST_SHORTFALLS);
        FleetSummary {
            schema_version: SCHEMA_VERSION,
            inputs: digests.len(),
            inputs_with_findings: with_findings,
            findings,
            lines,
            bytes,
            by_category: by_category.groups(),
            by_kind: by_kind.groups(),
            by_verdict: by_verdict.groups(),
            by_first_fix: by_first_fix.groups(),
            largest_shortfalls: shortfalls,
            input_errors,
        }
    }

    /// Writes the summary as one JSON document (pretty-printed, with a
    /// final newline, like `--format json`).
    pub fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, self)?;
        writeln!(out)
    }

    /// Writes the summary as text for a person (or a weekly report).
    pub fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        self.write_text_in(out, Lang::En)
    }

    /// Writes the summary for a person to read, in `lang` (codes, input
    /// names and sizes stay as they are).
    pub fn write_text_in(&self, out: &mut dyn Write, lang: Lang) -> io::Result<()> {
        let errors = match self.input_errors.len() {
            0 => String::new(),
            n => format!(
                "{}{}",
                Msg::ListSep.text(lang),
                Msg::Unreadable.fill(lang, &[&n])
            ),
        };
        let lines = usize::try_from(self.lines).unwrap_or(usize::MAX);
        writeln!(
            out,
            "{}",
            Msg::FleetHead.fill(
                lang,
                &[
                    &count(lang, self.inputs, Msg::FleetInputOne, Msg::FleetInputMany),
                    &self.inputs_with_findings,
                    &errors,
                    &count(lang, self.findings, Msg::FindingOne, Msg::FindingMany),
                    &count(lang, lines, Msg::LinesOne, Msg::LinesMany),
                    &format_size(self.bytes),
                ]
            )
        )?;
        for (title, groups, what) in [
            (Msg::ByCategory, &self.by_category, GroupedBy::Category),
            (Msg::ByKind, &self.by_kind, GroupedBy::Kind),
            (Msg::ByVerdict, &self.by_verdict, GroupedBy::Verdict),
            (Msg::ByFirstFix, &self.by_first_fix, GroupedBy::Fix),
        ] {
            if groups.is_empty() {
                continue;
            }
            writeln!(out, "\n{}", title.text(lang))?;
            for group in groups {
                writeln!(
                    out,
                    "  {:>6}  {}\n          {}",
                    group.findings,
                    sanitize(&group_label(&group.key, what, lang)),
                    inputs_line(&group.inputs, lang)
                )?;
            }
        }
        if !self.largest_shortfalls.is_empty() {
            writeln!(out, "\n{}", Msg::LargestShortfalls.text(lang))?;
            for s in &self.largest_shortfalls {
                let device = s.device.map(|d| format!("GPU {d}; ")).unwrap_or_default();
                let asked = match (s.requested_bytes, s.free_bytes) {
                    (Some(r), Some(f)) => {
                        Msg::AskedFor.fill(lang, &[&device, &format_size(r), &format_size(f)])
                    }
                    _ => device.trim_end_matches("; ").to_string(),
                };
                writeln!(
                    out,
                    "  {:>10}  {}:{}  {} ({asked})",
                    format_signed(i128::from(s.shortfall_bytes)),
                    sanitize(&s.input),
                    s.line,
                    s.kind,
                )?;
            }
        }
        if !self.input_errors.is_empty() {
            writeln!(out, "\n{}", Msg::UnreadableInputs.text(lang))?;
            for e in &self.input_errors {
                writeln!(out, "  {}: {}", sanitize(&e.input), sanitize(&e.error))?;
            }
        }
        Ok(())
    }
}

/// What a group of the text summary counts by.
#[derive(Clone, Copy)]
enum GroupedBy {
    Category,
    Kind,
    Verdict,
    Fix,
}

/// A group's key as shown: the code (or English fix title) itself in
/// English; in Chinese the code with its Chinese title, or the fix's
/// Chinese title.
fn group_label(key: &str, what: GroupedBy, lang: Lang) -> String {
    if lang == Lang::En {
        return key.to_string();
    }
    let title = match what {
        GroupedBy::Category => match key {
            "oom" => Some("显存不足"),
            "likely_oom" => Some("很可能是显存不足"),
            "crash" => Some("崩溃"),
            "memory_state" => Some("显存状态"),
            "warning" => Some("警告"),
            _ => None,
        },
        GroupedBy::Kind => crate::explain::docs::chinese_title(key),
        GroupedBy::Verdict => zh::verdict_title(key),
        GroupedBy::Fix => {
            return crate::explain::fix_title_zh(key)
                .map_or_else(|| key.to_string(), str::to_string)
        }
    };
    match title {
        Some(title) => format!("{key}（{title}）"),
        None => key.to_string(),
    }
}

/// "3 inputs: a.log, b.log, c.log" or "120 inputs: a.log, b.log, c.log and 117 more".
fn inputs_line(inputs: &[String], lang: Lang) -> String {
    let shown: Vec<String> = inputs
        .iter()
        .take(INPUTS_SHOWN)
        .map(|i| sanitize(i).into_owned())
        .collect();
    let more = match inputs.len().saturating_sub(INPUTS_SHOWN) {
        0 => String::new(),
        n => Msg::AndMore.fill(lang, &[&n]),
    };
    Msg::InputsList.fill(
        lang,
        &[
            &count(lang, inputs.len(), Msg::FleetInputOne, Msg::FleetInputMany),
            &shown.join(", "),
            &more,
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const OOM: &str =
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB \
        (GPU 0; 15.77 GiB total capacity; 13.11 GiB already allocated; \
        1.44 GiB free; 13.51 GiB reserved in total by PyTorch)\n";
    const BIG: &str =
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB \
        (GPU 1; 15.77 GiB total capacity; 13.11 GiB already allocated; \
        1.44 GiB free; 13.51 GiB reserved in total by PyTorch)\n";

    #[test]
    fn a_tar_archive_is_digested_file_by_file_into_one_digest() {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, text) in [("a.log", OOM), ("b.log", "step 1\n"), ("c.log", BIG)] {
            let mut header = tar::Header::new_gnu();
            header.set_size(text.len() as u64);
            header.set_cksum();
            builder
                .append_data(&mut header, path, text.as_bytes())
                .expect("an archive in memory");
        }
        let archive = builder.into_inner().expect("an archive in memory");
        let digest = InputDigest::from_bytes(&archive, "logs.tar");
        assert_eq!(digest.error, None);
        assert_eq!(digest.findings.len(), 2);
        // The lines of the files, not of the tar stream with its headers.
        assert_eq!(digest.lines, 3);
    }

    #[test]
    fn a_zip_archive_in_memory_is_digested_file_by_file() {
        use std::io::Write;
        let mut writer = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        for (path, text) in [("a.log", OOM), ("b.log", "step 1\n"), ("c.log", BIG)] {
            writer
                .start_file(path, zip::write::SimpleFileOptions::default())
                .expect("an archive in memory");
            writer
                .write_all(text.as_bytes())
                .expect("an archive in memory");
        }
        let archive = writer.finish().expect("an archive in memory").into_inner();
        let digest = InputDigest::from_bytes(&archive, "logs.zip");
        assert_eq!(digest.error, None);
        assert_eq!((digest.findings.len(), digest.lines), (2, 3));
        // A stream cannot be read as a zip archive: an error, not a guess.
        let digest = InputDigest::from_reader(io::Cursor::new(archive), "logs.zip");
        assert!(digest.error.is_some_and(|e| e.contains("read from a file")));
    }

    fn digests() -> Vec<InputDigest> {
        vec![
            InputDigest::from_bytes(OOM.as_bytes(), "b.log"),
            InputDigest::from_bytes(b"step 1\nstep 2\n", "a.log"),
            InputDigest::from_bytes(format!("{OOM}{BIG}").as_bytes(), "c.log"),
            InputDigest::from_error(
                &Error::Read {
                    input: "gone.log".into(),
                    source: io::Error::from(io::ErrorKind::NotFound),
                },
                "gone.log",
            ),
        ]
    }

    #[test]
    fn counts_inputs_kinds_and_the_inputs_behind_them() {
        let s = FleetSummary::from_digests(digests());
        assert_eq!(s.inputs, 4);
        assert_eq!(s.inputs_with_findings, 2);
        assert_eq!(s.findings, 3);
        assert_eq!(s.by_kind.len(), 1);
        assert_eq!(s.by_kind[0].key, "torch_allocator_oom");
        assert_eq!(s.by_kind[0].findings, 3);
        assert_eq!(s.by_kind[0].inputs, ["b.log", "c.log"]);
        assert_eq!(s.by_category[0].key, "oom");
        let verdicts: usize = s.by_verdict.iter().map(|g| g.findings).sum();
        assert_eq!(verdicts, 3, "one first verdict per finding");
        assert_eq!(
            s.input_errors,
            [InputError {
                input: "gone.log".into(),
                error: "no such file".into()
            }]
        );
    }

    #[test]
    fn shortfalls_are_largest_first_and_positive() {
        let s = FleetSummary::from_digests(digests());
        let got: Vec<(i64, &str)> = s
            .largest_shortfalls
            .iter()
            .map(|s| (s.shortfall_bytes, s.input.as_str()))
            .collect();
        let gib = 1i64 << 30;
        // 8.00 − 1.44 GiB, then 2.00 − 1.44 GiB twice (ties by input name).
        let small = 2 * gib - (1.44 * gib as f64) as i64;
        let big = 8 * gib - (1.44 * gib as f64) as i64;
        assert_eq!(got.len(), 3);
        assert!((got[0].0 - big).abs() < (1 << 20), "{got:?}");
        assert_eq!(got[0].1, "c.log");
        assert!((got[1].0 - small).abs() < (1 << 20), "{got:?}");
        assert_eq!((got[1].1, got[2].1), ("b.log", "c.log"));
        assert_eq!(s.largest_shortfalls[0].device, Some(1));
    }

    #[test]
    fn keeps_only_the_ten_largest_shortfalls() {
        let many: Vec<InputDigest> = (0..25)
            .map(|i| InputDigest::from_bytes(OOM.as_bytes(), &format!("{i:02}.log")))
            .collect();
        let s = FleetSummary::from_digests(many);
        assert_eq!(s.largest_shortfalls.len(), LARGEST_SHORTFALLS);
        assert_eq!(s.largest_shortfalls[0].input, "00.log");
        assert_eq!(s.largest_shortfalls[9].input, "09.log");
    }

    #[test]
    fn order_of_arrival_does_not_matter() {
        let forward = FleetSummary::from_digests(digests());
        let mut reversed = digests();
        reversed.reverse();
        assert_eq!(forward, FleetSummary::from_digests(reversed));
    }

    #[test]
    fn digests_and_summaries_survive_json() {
        for digest in digests() {
            let json = serde_json::to_string(&digest).unwrap();
            assert_eq!(serde_json::from_str::<InputDigest>(&json).unwrap(), digest);
        }
        let s = FleetSummary::from_digests(digests());
        let mut out = Vec::new();
        s.write_json(&mut out).unwrap();
        assert_eq!(serde_json::from_slice::<FleetSummary>(&out).unwrap(), s);
    }

    #[test]
    fn text_names_counts_inputs_and_errors() {
        let mut out = Vec::new();
        FleetSummary::from_digests(digests())
            .write_text(&mut out)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("oomwhy summary: 4 inputs, 2 with findings, 1 unreadable; 3 findings"),
            "{text}"
        );
        assert!(text.contains("     3  torch_allocator_oom\n          2 inputs: b.log, c.log\n"));
        assert!(text
            .contains("c.log:2  torch_allocator_oom (GPU 1; asked for 8.00 GiB, 1.44 GiB free)"));
        assert!(text.contains("gone.log: no such file"));
    }

    #[test]
    fn text_names_the_first_inputs_and_counts_the_rest() {
        let inputs: Vec<String> = (1..=5).map(|i| format!("{i}.log")).collect();
        assert_eq!(
            inputs_line(&inputs, Lang::En),
            "5 inputs: 1.log, 2.log, 3.log and 2 more"
        );
        assert_eq!(inputs_line(&inputs[..1], Lang::En), "1 input: 1.log");
        assert_eq!(
            inputs_line(&inputs, Lang::Zh),
            "5 个输入：1.log, 2.log, 3.log 等，另有 2 个"
        );
    }

    #[test]
    fn empty_fleet() {
        let s = FleetSummary::from_digests(Vec::new());
        assert_eq!((s.inputs, s.findings), (0, 0));
        let mut out = Vec::new();
        s.write_text(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "oomwhy summary: 0 inputs, 0 with findings; 0 findings (0 lines, 0 bytes read)\n"
        );
    }
}
