//! Distributed-training failures (docs/formats.md §8): NCCL's own
//! allocation failures, NCCL/c10d errors, watchdog timeouts, aborted
//! communicators, and torchelastic's `ChildFailedError` report.
//!
//! All but the allocation failures are usually collateral: once one rank dies
//! (often of an OOM), the others fail at their next collective. Their kinds are
//! consequences ([`crate::record::Kind::is_consequence`]), so the scanner links
//! them to the OOM before them.

use super::text::collapse_repeats;
use super::text::message_text;
use super::{re, Family, Message};
use crate::record::{fact, Category, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

/// Whether `next` continues a c10d error block: its boilerplate, or the blank
/// line C++ prints after a stack before `terminate called ...`.
fn continues_c10d(lines: &[String], next: &str) -> bool {
    lines.len() < 300
        && (is_c10d_boilerplate(next)
            || (next.trim().is_empty()
                && lines
                    .last()
                    .is_some_and(|l| l.trim_start().starts_with("frame #"))))
}

/// Lines c10d's ProcessGroupNCCL prints around an error, and C++ stacks.
fn is_c10d_boilerplate(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        re(concat!(
            r"Some NCCL operations have failed or timed out",
            r"|To avoid data inconsistency, we are taking the entire process down",
            r"|Timeout at NCCL work: ",
            r"|detected by watchdog at work",
            r"|Received a dump signal due to a collective timeout",
            r"|Stack trace of the failed collective",
            r"|terminate called after throwing an instance of ",
            r"|^\s*Exception raised from \S+ at ",
            r"|^\s*frame #\d+: ",
            r"|Watchdog caught collective operation timeout",
            r"|watchdog thread terminated with exception",
            r"|NCCL communicator was aborted on rank",
        ))
    })
    .is_match(line)
}

fn watchdog_anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        re(r"(?:\[Rank (\d+)\] )?Watchdog caught collective operation timeout(?:: WorkNCCL\((.*?)\) ran for (\d+) milliseconds before timing out)?")
    })
}

/// The watchdog's timed-out work without its lead words, as an issue's
/// title or a cut line keeps it: `WorkNCCL(SeqNum=5125, OpType=ALLREDUCE,
/// Timeout(ms)=1800000) ran for 1807734 millisecond`. Only c10d prints a
/// `WorkNCCL(...)` that ran for a time.
fn bare_work() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| re(r"\bWorkNCCL\((SeqNum=.*?)\) ran for (\d+) millisecond"))
}

/// `[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=..., OpType=ALLREDUCE, ...) ran for 600030 milliseconds before timing out.`,
/// or its `WorkNCCL(...) ran for N milliseconds` alone.
pub struct Watchdog;

impl Family for Watchdog {
    fn triggers(&self) -> &'static [&'static str] {
        &["Watchdog caught collective operation timeout", "WorkNCCL("]
    }

    fn start(&self, line: &str) -> Option<usize> {
        watchdog_anchor()
            .find(line)
            .or_else(|| bare_work().find(line))
            .map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        continues_c10d(lines, next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        let (rank, work, ran) = match watchdog_anchor().captures(first) {
            Some(c) => (c.get(1), c.get(2), c.get(3)),
            None => {
                let c = bare_work().captures(first)?;
                (None, c.get(1), c.get(2))
            }
        };
        let (text, _) = collapse_repeats(message.lines, |l| {
            l.contains("Watchdog caught collective operation timeout")
                || l.trim_start().starts_with("Exception raised from")
        });
        let mut finding = message.finding(Kind::NcclTimeout, text);
        finding.backend = Some("nccl".into());
        if let Some(rank) = rank {
            finding
                .facts
                .insert(fact::RANK.into(), rank.as_str().into());
        }
        if let Some(work) = work {
            insert_work_fields(&mut finding, work.as_str());
        }
        if let Some(ran) = ran {
            finding
                .facts
                .insert(fact::RAN_FOR_MS.into(), ran.as_str().into());
        }
        Some(finding)
    }
}

/// The fields of c10d's `WorkNCCL(SeqNum=2, OpType=ALLREDUCE, ...)` as facts.
fn insert_work_fields(finding: &mut Finding, work: &str) {
    for field in work.split(',') {
        let Some((key, value)) = field.trim().split_once('=') else {
            continue;
        };
        let name = match key {
            "SeqNum" => fact::SEQ_NUM,
            "OpType" => fact::OP_TYPE,
            "NumelIn" => "numel_in",
            "NumelOut" => "numel_out",
            "Timeout(ms)" => fact::TIMEOUT_MS,
            _ => continue,
        };
        finding.facts.insert(name.into(), value.to_string());
    }
}

fn aborted_anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        re(concat!(
            r"NCCL communicator was aborted on rank (\d+)\.?(?:\s*Original reason for failure was: (.*))?",
            r"|(?:\[Rank (\d+)\] )?(?:Process group|NCCL) watchdog thread terminated with exception: (.*)"
        ))
    })
}

/// `NCCL communicator was aborted on rank N. Original reason for failure was: ...`
/// and `Process group watchdog thread terminated with exception: ...` (when the
/// exception is not itself a message another family decodes).
pub struct ProcessGroupAborted;

impl Family for ProcessGroupAborted {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "NCCL communicator was aborted on rank",
            "watchdog thread terminated with exception",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        aborted_anchor().find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        continues_c10d(lines, next) || next.trim_start().starts_with("Original reason for")
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        let caps = aborted_anchor().captures(first)?;
        let mut finding = message.finding(Kind::ProcessGroupAborted, message_text(message.lines));
        finding.backend = Some("nccl".into());
        if let Some(rank) = caps.get(1).or_else(|| caps.get(3)) {
            finding
                .facts
                .insert(fact::RANK.into(), rank.as_str().into());
        }
        let reason = caps
            .get(2)
            .or_else(|| caps.get(4))
            .map(|m| m.as_str().trim().to_string())
            .filter(|r| !r.is_empty())
            .or_else(|| {
                message.lines.get(1).and_then(|l| {
                    l.trim()
                        .strip_prefix("Original reason for ")
                        .and_then(|r| r.split_once(": "))
                        .map(|(_, r)| r.trim().to_string())
                })
            });
        if let Some(reason) = reason {
            finding.facts.insert(fact::REASON.into(), reason);
        }
        finding.era = Some(if caps.get(1).is_some() {
            Era::CommunicatorAborted
        } else {
            Era::WatchdogException
        });
        Some(finding)
    }
}

struct ErrorPatterns {
    anchor: Regex,
    location: Regex,
    test_failure: Regex,
    version: Regex,
    name: Regex,
    name_line: Regex,
    oom: Regex,
    calloc: Regex,
}

fn error_patterns() -> &'static ErrorPatterns {
    static P: OnceLock<ErrorPatterns> = OnceLock::new();
    P.get_or_init(|| ErrorPatterns {
        anchor: re(concat!(
            r"\bNCCL error in: \S+",
            r"|\bNCCL Error \d+: ",
            r"|\bNCCL error: (?:[^,]*, NCCL version|unhandled (?:cuda|system) error|internal error|invalid (?:argument|usage)|remote process exited)",
            r"|\bnccl(?:UnhandledCuda|System|Internal|InvalidArgument|InvalidUsage|Remote)Error: ",
            r"|(?:^|\btorch\.distributed\.)DistBackendError: \S",
            // nccl-tests' NCCLCHECK (src/common.h): `host: Test NCCL failure
            // common.cu:777 'unhandled system error'`, the status's
            // ncclGetErrorString() text in quotes.
            r"|\bTest NCCL failure \S+:\d+ '[^']+'",
            // An NCCL call named with its failure and the status's
            // ncclGetErrorString() text, as Horovod raises it (and
            // TensorFlow passes it on as `UnknownError: `):
            // `ncclCommInitRank failed: unhandled system error`.
            r"|\bnccl[A-Z]\w* failed: (?:unhandled (?:cuda|system) error|internal error|invalid (?:argument|usage)|remote process exited)",
        )),
        location: re(r"NCCL error in: (\S+?:\d+), (.*?)(?:, NCCL version ([\w.+-]+))?\s*$"),
        test_failure: re(r"\bTest NCCL failure (\S+:\d+) '([^']+)'"),
        version: re(r"NCCL version ([\w.+-]+)"),
        name: re(
            r"\b(nccl(?:UnhandledCuda|System|Internal|InvalidArgument|InvalidUsage|Remote)Error)\b",
        ),
        name_line: re(
            r"(?:^|\s)nccl(?:UnhandledCuda|System|Internal|InvalidArgument|InvalidUsage|Remote)Error: ",
        ),
        oom: re(r"Cuda failure (?:\d+ )?'out of memory'|Failed to CUDA calloc"),
        calloc: re(r"Failed to CUDA calloc (?:async )?(\d+) bytes"),
    })
}

/// Where the message proper starts: after `DistBackendError: ` so that the
/// exception name stays in the prefix.
fn error_start(line: &str) -> Option<usize> {
    let m = error_patterns().anchor.find(line)?;
    Some(if m.as_str().contains("DistBackendError: ") {
        m.end() - 1
    } else {
        m.start()
    })
}

/// `NCCL error in: .../ProcessGroupNCCL.cpp:1331, unhandled cuda error (run with
/// NCCL_DEBUG=INFO for details), NCCL version 2.18.1` with its `ncclXxxError: ...`,
/// `Last error:` lines; `NCCL Error 1: ...`; any other `DistBackendError`.
/// Decodes as [`Kind::NcclOom`] when NCCL's last error was an out-of-memory.
pub struct NcclError;

impl Family for NcclError {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "NCCL error",
            "NCCL Error ",
            "UnhandledCudaError: ",
            "ncclSystemError: ",
            "ncclInternalError: ",
            "ncclInvalidArgument: ",
            "ncclInvalidUsage: ",
            "ncclRemoteError: ",
            "DistBackendError: ",
            // nccl-tests' `Test NCCL failure common.cu:777 'unhandled
            // system error'`: every error string but the misuse ones ends
            // in `error`, under the `rror` literal (no literal of its own).
            "error'",
            // An NCCL call's failure (`ncclCommInitRank failed: unhandled
            // system error`): under the prefilter's `nccl` key.
            "nccl",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        error_start(line)
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        if lines.len() >= 300 {
            return false;
        }
        // Launchers may prefix every line (`host: `), so match anywhere.
        if lines
            .last()
            .is_some_and(|l| l.trim_end().ends_with("Last error:"))
        {
            return true;
        }
        next.trim_end().ends_with("Last error:")
            || error_patterns().name_line.is_match(next)
            || continues_c10d(lines, next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = error_patterns();
        let joined = message.joined();
        let oom = p.oom.is_match(&joined);
        let kind = if oom { Kind::NcclOom } else { Kind::NcclError };
        let mut finding = message.finding(kind, message_text(message.lines));
        finding.backend = Some("nccl".into());
        // c10d's async form names the collective before the error:
        // `Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, ...) raised the
        // following async exception: NCCL error: ...`.
        if let Some((_, work)) = message.prefix.split_once("WorkNCCL(") {
            // `Timeout(ms)=...` holds a parenthesis of its own.
            if let Some((work, _)) = work.split_once(") raised").or_else(|| work.split_once(')')) {
                insert_work_fields(&mut finding, work);
            }
        }
        let first = message.lines.first()?;
        if let Some(c) = p.location.captures(first) {
            finding
                .facts
                .insert(fact::LOCATION.into(), c[1].to_string());
            finding
                .facts
                .insert(fact::REASON.into(), c[2].trim().to_string());
        }
        if let Some(c) = p.test_failure.captures(first) {
            finding
                .facts
                .insert(fact::LOCATION.into(), c[1].to_string());
            finding.facts.insert(fact::REASON.into(), c[2].to_string());
        }
        if let Some(c) = p.version.captures(&joined) {
            finding
                .facts
                .insert("nccl_version".into(), c[1].to_string());
        }
        if let Some(c) = p.name.captures(&joined) {
            finding
                .facts
                .insert(fact::NCCL_ERROR.into(), c[1].to_string());
        }
        let marker = message
            .lines
            .iter()
            .position(|l| l.trim_end().ends_with("Last error:"));
        if let Some(i) = marker {
            if let Some(last) = message.lines.get(i + 1) {
                // Drop the launcher's line prefix the marker line also carries.
                let prefix = message.lines[i].trim_end().trim_end_matches("Last error:");
                let last = last.strip_prefix(prefix).unwrap_or(last);
                finding
                    .facts
                    .insert(fact::LAST_ERROR.into(), last.trim().to_string());
            }
        }
        if let Some(c) = p.calloc.captures(&joined) {
            finding.sizes.requested_bytes = c[1].parse().ok();
        }
        Some(finding)
    }
}

fn warn_anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        re(r"(?:NCCL WARN |WARN )?(?:Cuda failure (?:\d+ )?'out of memory'|Failed to CUDA calloc (?:async )?(\d+) bytes)")
    })
}

/// NCCL's log line before the message: `host:pid:tid [dev] file.cc:line `.
fn nccl_log_prefix() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| re(r"\[(\d+)\] (\S+:\d+) (?:NCCL )?WARN "))
}

/// NCCL's own allocation failures, as its logger prints them (NCCL_DEBUG=WARN
/// or INFO): `... [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'`
/// and `... NCCL WARN Failed to CUDA calloc 6291456 bytes`, with the `-> 1`
/// trail of INFO lines that follows.
pub struct NcclWarnOom;

impl Family for NcclWarnOom {
    fn triggers(&self) -> &'static [&'static str] {
        &["'out of memory'", "Failed to CUDA calloc"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        warn_anchor().find(line).map(|m| m.start())
    }

    /// None: the start pattern matches digits as a class.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        lines.len() < 200
            && (next.trim().is_empty()
                || (next.contains(" NCCL INFO ") && next.contains(" -> "))
                || next.contains(" NCCL WARN ")
                || warn_anchor().is_match(next))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let mut texts: Vec<String> = Vec::new();
        let mut failures = 0u64;
        let mut requested = None;
        for line in message.lines {
            if let Some(m) = warn_anchor().find(line) {
                failures += 1;
                let text = line[m.start()..].trim_end().to_string();
                if !texts.contains(&text) {
                    texts.push(text);
                }
                if let Some(bytes) = warn_anchor().captures(line).and_then(|c| c.get(1)) {
                    requested = requested.or_else(|| bytes.as_str().parse::<u64>().ok());
                }
            }
        }
        let mut finding = message.finding(Kind::NcclOom, texts.join("\n"));
        finding.backend = Some("nccl".into());
        finding.sizes.requested_bytes = requested;
        // CUDA's own error string says it: `Cuda failure 'out of memory'`.
        if texts.iter().any(|t| t.contains("'out of memory'")) {
            finding.category = Category::Oom;
        }
        let full = format!("{}{}", message.prefix, message.lines.first()?);
        if let Some(c) = nccl_log_prefix().captures(&full) {
            finding.device = c[1].parse().ok();
            finding
                .facts
                .insert(fact::LOCATION.into(), c[2].to_string());
        }
        if failures > 1 {
            finding
                .facts
                .insert("failed_allocations".into(), failures.to_string());
        }
        Some(finding)
    }
}

fn shm_anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        re(r"NCCL WARN (?:Call to posix_fallocate failed|Error while (?:creating|attaching to) shared memory segment|Error: failed to extend /dev/shm/)")
    })
}

/// NCCL failing to create or attach a shared-memory segment for its
/// intra-node transport (`include/shm.h`, `misc/shmutils.cc`):
/// `NCCL WARN Call to posix_fallocate failed : No space left on device`,
/// `NCCL WARN Error while creating shared memory segment /dev/shm/nccl-X
/// (size N)`. A full `/dev/shm` (no space, a failed extend) is host shared
/// memory running out (`nccl_oom`); other causes are an `nccl_error`.
pub struct NcclShm;

impl Family for NcclShm {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "NCCL WARN Call to posix_fallocate",
            "NCCL WARN Error while",
            "NCCL WARN Error: failed to extend",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        shm_anchor().find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        lines.len() < 200
            && ((next.contains(" NCCL INFO ") && next.contains(" -> "))
                || (next.contains(" NCCL WARN ")
                    && (next.contains("shm") || next.contains("shared memory"))))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let (text, repeats) = collapse_repeats(message.lines, |l| {
            l.contains(" NCCL INFO ") && l.contains(" -> ")
        });
        let joined = message.joined();
        let full = !joined.contains("attaching")
            && (joined.contains("No space left on device")
                || joined.contains("failed to extend")
                || joined.contains("posix_fallocate"));
        let kind = if full { Kind::NcclOom } else { Kind::NcclError };
        let mut finding = message.finding(kind, text);
        finding.backend = Some("nccl".into());
        finding.era = Some(Era::Shm);
        let first = format!("{}{}", message.prefix, message.lines.first()?);
        if let Some(c) = nccl_log_prefix().captures(&first) {
            finding.device = c[1].parse().ok();
            finding.facts.insert("location".into(), c[2].to_string());
        }
        if let Some(size) = joined
            .split("(size ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
        {
            finding
                .facts
                .insert("segment_size".into(), size.to_string());
        }
        finding.facts.insert("resource".into(), "/dev/shm".into());
        if repeats > 0 {
            finding
                .facts
                .insert("trail_lines".into(), repeats.to_string());
        }
        Some(finding)
    }
}

struct ChildPatterns {
    border: Regex,
    entry: Regex,
    field: Regex,
    rank: Regex,
    exitcode: Regex,
    signal: Regex,
    failed: Regex,
}

fn child_patterns() -> &'static ChildPatterns {
    static P: OnceLock<ChildPatterns> = OnceLock::new();
    P.get_or_init(|| ChildPatterns {
        border: re(r"^\s*(?:={10,}|-{10,}|\*{10,})\s*$"),
        entry: re(r"^\s*\[\d+\]:\s*$"),
        field: re(r"^\s+[a-z_]+\s*:"),
        rank: re(r"^\s*rank\s*:\s*(\d+)(?:\s*\(local_rank:\s*(\d+)\))?"),
        exitcode: re(r"^\s*exitcode\s*:\s*(-?\d+)(?:\s*\(pid:\s*(\d+)\))?"),
        signal: re(r"Signal (\d+) \((SIG\w+)\) received by PID (\d+)"),
        failed: re(r"^\s*(\S.*?) FAILED\s*$"),
    })
}

fn child_anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| re(r"\bChildFailedError:\s*$"))
}

/// torchelastic's report after a worker exits:
///
/// ```text
/// torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
/// ============================================================
/// train.py FAILED
/// ------------------------------------------------------------
/// Failures:
///   <NO_OTHER_FAILURES>
/// ------------------------------------------------------------
/// Root Cause (first observed failure):
/// [0]:
///   time      : 2024-06-01_12:00:00
///   host      : node1
///   rank      : 0 (local_rank: 0)
///   exitcode  : 1 (pid: 12345)
///   error_file: <N/A>
///   traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
/// ============================================================
/// ```
pub struct ChildFailed;

impl Family for ChildFailed {
    fn triggers(&self) -> &'static [&'static str] {
        &["ChildFailedError:"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        child_anchor().find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        let p = child_patterns();
        if lines.len() >= 1000 {
            return false;
        }
        // The block ends with the border after the root-cause entry.
        let root_seen = lines
            .iter()
            .any(|l| l.trim_start().starts_with("Root Cause"));
        if root_seen && lines.last().is_some_and(|l| p.border.is_match(l)) && lines.len() > 2 {
            return false;
        }
        let trimmed = next.trim();
        !trimmed.is_empty()
            && (p.border.is_match(next)
                || p.entry.is_match(next)
                || p.failed.is_match(next)
                || trimmed.starts_with("Failures:")
                || trimmed.starts_with("Root Cause")
                || trimmed == "<NO_OTHER_FAILURES>"
                || next.starts_with(' ')
                || next.starts_with('\t')
                || p.field.is_match(next))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = child_patterns();
        let text: Vec<&str> = message
            .lines
            .iter()
            .map(|l| l.trim_end())
            .filter(|l| !l.is_empty())
            .collect();
        let mut finding = message.finding(Kind::ChildFailed, text.join("\n"));
        finding.exception = Some(if message.prefix.ends_with("errors.") {
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError".into()
        } else {
            "ChildFailedError".into()
        });
        let mut in_root = false;
        let mut ranks: Vec<String> = Vec::new();
        for line in message.lines {
            let trimmed = line.trim();
            if trimmed.starts_with("Root Cause") {
                in_root = true;
                continue;
            }
            if let Some(c) = p.failed.captures(line) {
                if !line.starts_with(' ') {
                    finding
                        .facts
                        .entry(fact::SCRIPT.into())
                        .or_insert_with(|| c[1].to_string());
                }
            }
            if let Some(c) = p.rank.captures(line) {
                ranks.push(c[1].to_string());
                if in_root {
                    finding
                        .facts
                        .insert(fact::ROOT_CAUSE_RANK.into(), c[1].to_string());
                    if let Some(local) = c.get(2) {
                        finding
                            .facts
                            .insert("root_cause_local_rank".into(), local.as_str().into());
                    }
                }
            }
            if !in_root {
                continue;
            }
            if let Some(c) = p.exitcode.captures(line) {
                finding
                    .facts
                    .insert(fact::ROOT_CAUSE_EXITCODE.into(), c[1].to_string());
                if let Some(pid) = c.get(2) {
                    finding
                        .facts
                        .insert("root_cause_pid".into(), pid.as_str().into());
                }
            }
            if let Some(c) = p.signal.captures(line) {
                finding
                    .facts
                    .insert(fact::ROOT_CAUSE_SIGNAL.into(), c[2].to_string());
            }
            for (label, key) in [
                ("host", "root_cause_host"),
                ("time", "root_cause_time"),
                ("error_file", fact::ROOT_CAUSE_ERROR_FILE),
            ] {
                if let Some(value) = trimmed
                    .strip_prefix(label)
                    .and_then(|rest| rest.trim_start().strip_prefix(':'))
                {
                    finding
                        .facts
                        .entry(key.into())
                        .or_insert_with(|| value.trim().to_string());
                }
            }
        }
        if !ranks.is_empty() {
            let mut sorted: Vec<u32> = ranks.iter().filter_map(|r| r.parse().ok()).collect();
            sorted.sort_unstable();
            sorted.dedup();
            let list: Vec<String> = sorted.iter().map(u32::to_string).collect();
            finding.facts.insert("failed_ranks".into(), list.join(","));
        }
        // A root cause killed by SIGKILL is what the agent's `exitcode: -9`
        // line says alone: most often the host's out-of-memory killer.
        let says = |key: &str, value: &str| finding.facts.get(key).is_some_and(|v| v == value);
        if says(fact::ROOT_CAUSE_SIGNAL, "SIGKILL") || says(fact::ROOT_CAUSE_EXITCODE, "-9") {
            finding.category = Category::LikelyOom;
        }
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::decode_lines as collect;

    #[test]
    fn watchdog_timeout() {
        let f = collect(&Watchdog, &[
            "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=668, OpType=ALLREDUCE, NumelIn=52, NumelOut=52, Timeout(ms)=600000) ran for 600097 milliseconds before timing out.",
            "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
            "[E ProcessGroupNCCL.cpp:495] To avoid data inconsistency, we are taking the entire process down.",
            "[E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=668, OpType=ALLREDUCE, NumelIn=52, NumelOut=52, Timeout(ms)=600000) ran for 600097 milliseconds before timing out.",
            "terminate called after throwing an instance of 'std::runtime_error'",
            "  what():  [Rank 1] NCCL watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=668, OpType=ALLREDUCE, NumelIn=52, NumelOut=52, Timeout(ms)=600000) ran for 600097 milliseconds before timing out.",
            "Fatal Python error: Aborted",
        ]).unwrap();
        assert_eq!(f.kind, Kind::NcclTimeout);
        assert_eq!(f.facts["rank"], "1");
        assert_eq!(f.facts["seq_num"], "668");
        assert_eq!(f.facts["op_type"], "ALLREDUCE");
        assert_eq!(f.facts["timeout_ms"], "600000");
        assert_eq!(f.facts["ran_for_ms"], "600097");
        assert!(!f.text.contains("Fatal Python"));
        assert_eq!(f.text.matches("Watchdog caught").count(), 1);
    }

    #[test]
    fn watchdog_work_without_its_lead_words() {
        // An issue's title (wild paste): the timed-out work alone.
        let f = collect(
            &Watchdog,
            &["WorkNCCL(SeqNum=5125, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1807734 millisecond"],
        )
        .unwrap();
        assert_eq!(f.kind, Kind::NcclTimeout);
        assert_eq!(f.facts["seq_num"], "5125");
        assert_eq!(f.facts["op_type"], "ALLREDUCE");
        assert_eq!(f.facts["timeout_ms"], "1800000");
        assert_eq!(f.facts["ran_for_ms"], "1807734");
        assert!(!f.facts.contains_key("rank"));
        // A work object that ran for no time is not the watchdog's.
        assert!(Watchdog
            .start("created WorkNCCL(SeqNum=3, OpType=BROADCAST)")
            .is_none());
    }

    #[test]
    fn aborted_communicator() {
        let f = collect(&ProcessGroupAborted, &[
            "torch.distributed.DistBackendError: NCCL communicator was aborted on rank 2. Original reason for failure was: NCCL error: unhandled system error",
        ]).unwrap();
        assert_eq!(f.kind, Kind::ProcessGroupAborted);
        assert_eq!(
            f.exception.as_deref(),
            Some("torch.distributed.DistBackendError")
        );
        assert_eq!(f.facts["rank"], "2");
        assert_eq!(f.facts["reason"], "NCCL error: unhandled system error");
        let g = collect(&ProcessGroupAborted, &[
            "[rank5]:[E623 21:21:18.895381245 ProcessGroupNCCL.cpp:2197] [PG ID 0 PG GUID 0(default_pg) Rank 5] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5",
        ]).unwrap();
        assert_eq!(
            g.facts["reason"],
            "NCCL error: remote process exited or there was a network error, NCCL version 2.21.5"
        );
    }

    #[test]
    fn nccl_error_block() {
        let f = collect(&NcclError, &[
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
            "ncclUnhandledCudaError: Call to CUDA function failed.",
            "Last error:",
            "Cuda failure 'invalid argument'",
            "Traceback (most recent call last):",
        ]).unwrap();
        assert_eq!(f.kind, Kind::NcclError);
        assert_eq!(
            f.exception.as_deref(),
            Some("torch.distributed.DistBackendError")
        );
        assert_eq!(f.facts["nccl_error"], "ncclUnhandledCudaError");
        assert_eq!(f.facts["last_error"], "Cuda failure 'invalid argument'");
        assert_eq!(f.facts["nccl_version"], "2.18.1");
        assert_eq!(
            f.facts["location"],
            "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331"
        );
        assert!(f.facts["reason"].starts_with("unhandled cuda error"));
    }

    #[test]
    fn nccl_error_with_oom_last_error_is_an_oom() {
        let f = collect(&NcclError, &[
            "RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1197, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.3",
            "ncclUnhandledCudaError: Call to CUDA function failed.",
            "Last error:",
            "Cuda failure 'out of memory'",
        ]).unwrap();
        assert_eq!(f.kind, Kind::NcclOom);
    }

    #[test]
    fn nccl_error_spellings() {
        for line in [
            "RuntimeError: NCCL Error 1: unhandled cuda error",
            "  what():  NCCL error: unhandled system error, NCCL version 2.10.3",
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
            "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
            "torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer",
        ] {
            assert!(NcclError.start(line).is_some(), "{line}");
        }
        for line in [
            "export NCCL_DEBUG=INFO",
            "NCCL version 2.18.1+cuda12.1",
            "NCCL INFO Bootstrap : Using eth0",
            "Common NCCL error: timeouts when one rank is slow",
            "The launcher raises DistBackendError: see the docs",
        ] {
            assert!(NcclError.start(line).is_none(), "{line}");
        }
    }

    #[test]
    fn nccl_warn_oom() {
        let f = collect(&NcclWarnOom, &[
            "ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
            "",
            "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes",
            "ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:204 -> 1",
            "ng30903:3063028:3066152 [3] NCCL INFO proxy.cc:1303 -> 1",
            "Epoch 3",
        ]).unwrap();
        assert_eq!(f.kind, Kind::NcclOom);
        assert_eq!(f.device, Some(3));
        assert_eq!(f.sizes.requested_bytes, Some(6291456));
        assert_eq!(f.facts["location"], "include/alloc.h:178");
        assert_eq!(
            f.text,
            "NCCL WARN Cuda failure 'out of memory'\nNCCL WARN Failed to CUDA calloc 6291456 bytes"
        );
        // Old NCCL without the NCCL tag.
        assert!(NcclWarnOom
            .start("c460c041:101211:106353 [0] init.cu:218 WARN Cuda failure 'out of memory'")
            .is_some());
        assert!(NcclWarnOom
            .start("Cuda failure 'invalid argument'")
            .is_none());
    }

    #[test]
    fn child_failed_report() {
        let f = collect(&ChildFailed, &[
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "============================================================",
            "train.py FAILED",
            "------------------------------------------------------------",
            "Failures:",
            "[1]:",
            "  time      : 2023-09-04_10:10:23",
            "  host      : ubuntu",
            "  rank      : 1 (local_rank: 1)",
            "  exitcode  : -6 (pid: 3669031)",
            "  error_file: <N/A>",
            "  traceback : Signal 6 (SIGABRT) received by PID 3669031",
            "------------------------------------------------------------",
            "Root Cause (first observed failure):",
            "[0]:",
            "  time      : 2023-09-04_10:10:21",
            "  host      : ubuntu",
            "  rank      : 0 (local_rank: 0)",
            "  exitcode  : 1 (pid: 3669030)",
            "  error_file: <N/A>",
            "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
            "============================================================",
            "$ next command",
        ]).unwrap();
        assert_eq!(f.kind, Kind::ChildFailed);
        assert_eq!(
            f.exception.as_deref(),
            Some("torch.distributed.elastic.multiprocessing.errors.ChildFailedError")
        );
        assert_eq!(f.facts["script"], "train.py");
        assert_eq!(f.facts["root_cause_rank"], "0");
        assert_eq!(f.facts["root_cause_exitcode"], "1");
        assert_eq!(f.facts["root_cause_pid"], "3669030");
        assert_eq!(f.facts["root_cause_host"], "ubuntu");
        assert_eq!(f.facts["failed_ranks"], "0,1");
        assert!(!f.text.contains("next command"));
        assert!(!f.facts.contains_key("root_cause_signal"));
    }

    #[test]
    fn child_failed_signal_root_cause() {
        let f = collect(
            &ChildFailed,
            &[
                "ChildFailedError:",
                "=====================================================",
                "test.py FAILED",
                "-----------------------------------------------------",
                "Failures:",
                "  <NO_OTHER_FAILURES>",
                "-----------------------------------------------------",
                "Root Cause (first observed failure):",
                "[0]:",
                "  time      : 2025-03-25_20:57:27",
                "  host      : gpu-node",
                "  rank      : 5 (local_rank: 5)",
                "  exitcode  : -9 (pid: 2630)",
                "  error_file: <N/A>",
                "  traceback : Signal 9 (SIGKILL) received by PID 2630",
                "=====================================================",
            ],
        )
        .unwrap();
        assert_eq!(f.exception.as_deref(), Some("ChildFailedError"));
        assert_eq!(f.facts["root_cause_exitcode"], "-9");
        assert_eq!(f.facts["root_cause_signal"], "SIGKILL");
        assert_eq!(f.facts["failed_ranks"], "5");
    }
}
