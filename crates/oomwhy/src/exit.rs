//! What a process's exit status says about how it ended (for `oomwhy run`).
//!
//! Platform-neutral: the caller passes the numbers its platform gives. A Unix
//! signal death is reported as the shell does (128 + N); a Windows NTSTATUS
//! crash code is named. Endings that are evidence in their own right become
//! findings of the kinds that read the same evidence from logs: SIGKILL a
//! `host_oom_killed` finding (`likely_oom`: the out-of-memory killer's
//! signal, but not only its), 0xC0000409 `windows_fail_fast`, 0xC0000005
//! `windows_access_violation`; the crash signals (SIGSEGV, SIGBUS, SIGABRT,
//! SIGFPE, SIGILL) and the other crash statuses a `fatal_signal` finding.

use crate::codes::{self, Class, Entry};
use crate::detect::{
    windows::{AccessViolation, FailFast},
    Family, Message,
};
use crate::i18n::Lang;
use crate::record::{fact, Era, Finding, Kind};

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited with this code (on Windows, possibly an NTSTATUS).
    Code(i64),
    /// It was killed by this Unix signal.
    Signal(i32),
}

/// What an ending means.
#[derive(Debug, Clone, PartialEq)]
pub struct ExitReport {
    /// The status a shell would report: the code, or 128 + signal.
    pub shell_code: i64,
    /// A sentence about the ending when it is worth one (a signal, a crash
    /// code), `None` for an ordinary exit code.
    pub note: Option<String>,
    /// A finding for endings that are evidence oomwhy explains (SIGKILL,
    /// 0xC0000409, 0xC0000005), read from the input `<exit status>`.
    pub finding: Option<Finding>,
}

/// The input name of findings made from an exit status.
pub const EXIT_STATUS_INPUT: &str = "<exit status>";

/// A row of a process table (`codes/signal.tsv`, `codes/ntstatus.tsv`).
fn process_code(table: &str, number: i64) -> Option<&'static Entry> {
    codes::table(table)?.by_number(number)
}

/// Name, usual meaning and its Chinese of the signals a training job dies
/// of (`codes/signal.tsv`).
fn signal(n: i32) -> Option<(&'static str, &'static str, &'static str)> {
    process_code("signal", i64::from(n)).map(|e| (e.name, e.meaning, e.zh))
}

/// Windows NTSTATUS codes that mean a crash rather than an exit code
/// (`codes/ntstatus.tsv`), with their class.
fn ntstatus(code: u32) -> Option<(&'static str, &'static str, &'static str, Class)> {
    process_code("ntstatus", i64::from(code)).map(|e| (e.name, e.meaning, e.zh, e.class))
}

/// Decodes how a process ended.
///
/// ```
/// use oomwhy::exit::{decode, Ending};
/// let killed = decode(Ending::Signal(9));
/// assert_eq!(killed.shell_code, 137);
/// assert!(killed.note.unwrap().contains("likely"));
/// let fail_fast = decode(Ending::Code(-1073740791));
/// assert_eq!(fail_fast.finding.unwrap().kind.slug(), "windows_fail_fast");
/// ```
pub fn decode(ending: Ending) -> ExitReport {
    match ending {
        Ending::Signal(n) => ExitReport {
            shell_code: 128 + i64::from(n),
            note: note(ending, Lang::En),
            finding: if n == SIGKILL {
                Some(sigkill_finding())
            } else {
                signal(n)
                    .filter(|_| FATAL_SIGNALS.contains(&n))
                    .map(|(name, _, _)| fatal_signal_finding(n, name))
            },
        },
        Ending::Code(code) => {
            // An NTSTATUS arrives signed (-1073740791) or unsigned (3221226505).
            let status = crash_status(code);
            if let Some((name, _, _, class)) = status.and_then(ntstatus) {
                let status = status.unwrap_or_default();
                let finding = match status {
                    0xC000_0409 => Some(fail_fast_finding(code)),
                    0xC000_0005 => access_violation_finding(code),
                    0xC000_001D | 0xC000_00FD => Some(ntstatus_finding(code, status, name, class)),
                    _ if class == Class::Memory => {
                        Some(ntstatus_finding(code, status, name, class))
                    }
                    _ => None,
                };
                return ExitReport {
                    shell_code: code,
                    note: note(ending, Lang::En),
                    finding,
                };
            }
            ExitReport {
                shell_code: code,
                note: note(ending, Lang::En),
                finding: None,
            }
        }
    }
}

/// The Windows crash status an exit code is, signed (-1073740791) or
/// unsigned (3221226505), if it is one.
fn crash_status(code: i64) -> Option<u32> {
    u32::try_from(code)
        .ok()
        .or_else(|| i32::try_from(code).ok().map(|c| c as u32))
        .filter(|s| s & 0xC000_0000 == 0xC000_0000)
}

/// A sentence about an ending, in `lang`, when it is worth one: a signal, a
/// Windows crash status, or an exit code that is how a shell reports a
/// signal. `None` for an ordinary exit code.
pub fn note(ending: Ending, lang: Lang) -> Option<String> {
    let zh = lang == Lang::Zh;
    match ending {
        Ending::Signal(n) => {
            let shell = 128 + i64::from(n);
            Some(match (signal(n), zh) {
                (Some((name, english, _)), false) => format!(
                    "the command was killed by signal {n} ({name}; the shell reports exit code {shell}): {english}"
                ),
                (Some((name, _, chinese)), true) => format!(
                    "命令被信号 {n}（{name}；shell 报告退出码 {shell}）杀掉：{chinese}"
                ),
                (None, false) => format!(
                    "the command was killed by signal {n} (the shell reports exit code {shell})"
                ),
                (None, true) => format!("命令被信号 {n} 杀掉（shell 报告退出码 {shell}）"),
            })
        }
        Ending::Code(code) => {
            if let Some(status) = crash_status(code) {
                if let Some((name, english, chinese, _)) = ntstatus(status) {
                    return Some(if zh {
                        format!("命令以状态 0x{status:08X}（{name}）结束：{chinese}")
                    } else {
                        format!("the command ended with status 0x{status:08X} ({name}): {english}")
                    });
                }
            }
            // A shell or container runtime inside reports its child's signal this way.
            let n = i32::try_from(code - 128)
                .ok()
                .filter(|_| (129..=159).contains(&code))?;
            let (name, english, chinese) = signal(n)?;
            Some(if zh {
                format!("退出码 {code} 是 shell 报告进程被信号 {n}（{name}）杀掉的方式：{chinese}")
            } else {
                format!(
                    "exit code {code} is how a shell reports a process killed by signal {n} ({name}): {english}"
                )
            })
        }
    }
}

/// Signal 9 on every Unix.
const SIGKILL: i32 = 9;

/// Signals a process dies of when native code crashes (SIGILL, SIGABRT,
/// SIGBUS, SIGFPE, SIGSEGV; the same numbers on Linux and macOS except
/// SIGBUS, 10 on macOS, which is then only named).
const FATAL_SIGNALS: [i32; 5] = [4, 6, 7, 8, 11];

/// A `fatal_signal` finding for a command killed by a crash signal.
fn fatal_signal_finding(n: i32, name: &str) -> Finding {
    let mut finding = Finding::new(
        Kind::FatalSignal,
        EXIT_STATUS_INPUT,
        1,
        format!(
            "killed by signal {n} ({name}); the shell reports exit status {}",
            128 + i64::from(n)
        ),
    );
    finding.era = Some(Era::ExitStatus);
    finding
        .facts
        .insert(fact::SIGNAL.into(), format!("{name} ({n})"));
    finding
        .facts
        .insert("exit_code".into(), (128 + i64::from(n)).to_string());
    finding
}

/// A `fatal_signal` finding for a Windows crash status other than the two
/// that have kinds of their own; a status of the memory class
/// (STATUS_NO_MEMORY, STATUS_COMMITMENT_LIMIT) states a host OOM.
fn ntstatus_finding(code: i64, status: u32, name: &str, class: Class) -> Finding {
    let mut finding = Finding::new(
        Kind::FatalSignal,
        EXIT_STATUS_INPUT,
        1,
        format!("exit status {code} (0x{status:08X}, {name})"),
    );
    finding.era = Some(Era::ExitStatus);
    finding.facts.insert(fact::NTSTATUS.into(), name.into());
    finding
        .facts
        .insert("exit_code".into(), format!("0x{status:08X}"));
    if class == Class::Memory {
        finding.category = crate::record::Category::Oom;
        finding.backend = Some("cpu".into());
    }
    finding
}

/// The `windows_fail_fast` finding for an exit status, decoded by the same
/// family that reads the status from logs.
fn fail_fast_finding(code: i64) -> Finding {
    let lines = [format!("exit status {code} (0xC0000409)")];
    FailFast.decode(&exit_message(&lines)).unwrap_or_else(|| {
        // The family decodes every line it starts on; keep the kind regardless.
        Finding::new(
            Kind::WindowsFailFast,
            EXIT_STATUS_INPUT,
            1,
            lines[0].clone(),
        )
    })
}

/// The `windows_access_violation` finding for an exit status, decoded by the
/// family that reads `exit code -1073741819 (0xC0000005)` from logs.
fn access_violation_finding(code: i64) -> Option<Finding> {
    let lines = [format!("exit status {code} (0xC0000005)")];
    AccessViolation.decode(&exit_message(&lines))
}

/// A death by SIGKILL: `host_oom_killed` in its `sigkill` era, `likely_oom`
/// like every SIGKILL seen in a log. No log line states it, so the record is
/// built here with the facts the log-read `sigkill` era carries.
fn sigkill_finding() -> Finding {
    let mut finding = Finding::new(
        Kind::HostOomKilled,
        EXIT_STATUS_INPUT,
        1,
        "killed by signal 9 (SIGKILL); the shell reports exit status 137".into(),
    );
    finding.era = Some(Era::Sigkill);
    finding.backend = Some("cpu".into());
    finding
        .facts
        .insert(fact::SIGNAL.into(), "SIGKILL (9)".into());
    finding.facts.insert("exit_code".into(), "137".into());
    finding
}

fn exit_message(lines: &[String]) -> Message<'_> {
    Message {
        input: EXIT_STATUS_INPUT,
        line: 1,
        prefix: "",
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_signal_and_status_has_a_chinese_note() {
        for n in 1..=31 {
            if let Some((name, _, chinese)) = signal(n) {
                let zh = note(Ending::Signal(n), Lang::Zh).unwrap_or_default();
                assert!(zh.contains(name) && !zh.contains("the command"), "{zh}");
                assert!(!chinese.is_empty() && zh.contains(chinese), "signal {n}");
            }
        }
        for status in [
            0xC000_0005u32,
            0xC000_0017,
            0xC000_001D,
            0xC000_00FD,
            0xC000_012D,
            0xC000_013A,
            0xC000_0374,
            0xC000_0409,
        ] {
            let (_, _, chinese, _) = ntstatus(status).unwrap();
            assert!(!chinese.is_empty(), "{status:X}");
            let zh = note(Ending::Code(i64::from(status)), Lang::Zh).unwrap_or_default();
            assert!(zh.starts_with("命令以状态 0x"), "{zh}");
        }
        assert_eq!(note(Ending::Code(1), Lang::Zh), None);
        assert_eq!(
            note(Ending::Code(137), Lang::En),
            decode(Ending::Code(137)).note
        );
    }
    use crate::record::Kind;

    #[test]
    fn signals_report_like_the_shell() {
        let r = decode(Ending::Signal(9));
        assert_eq!(r.shell_code, 137);
        let note = r.note.unwrap();
        assert!(
            note.contains("SIGKILL") && note.contains("most likely"),
            "{note}"
        );
        assert_eq!(decode(Ending::Signal(11)).shell_code, 139);
        assert!(decode(Ending::Signal(64)).note.is_some());
    }

    #[test]
    fn sigkill_becomes_a_likely_oom_finding() {
        let f = decode(Ending::Signal(9)).finding.expect("a finding");
        assert_eq!(f.kind, Kind::HostOomKilled);
        assert_eq!(f.category, crate::record::Category::LikelyOom);
        assert_eq!(f.era, Some(Era::Sigkill));
        assert_eq!(f.source.input, EXIT_STATUS_INPUT);
        assert_eq!(f.facts["signal"], "SIGKILL (9)");
        // Explained like a SIGKILL read from a log.
        let mut analysis = crate::Analysis::new();
        analysis.add(crate::ScanOutcome {
            findings: vec![f],
            ..Default::default()
        });
        let (findings, summary) = analysis.finish();
        assert_eq!(summary.likely_oom, 1);
        assert_eq!(findings[0].diagnosis.verdicts[0].code, "killed_by_sigkill");
        // Interruptions are named, not findings.
        for n in [2, 15] {
            assert!(decode(Ending::Signal(n)).finding.is_none(), "{n}");
        }
    }

    #[test]
    fn ordinary_codes_say_nothing() {
        for code in [0, 1, 2, 127] {
            let r = decode(Ending::Code(code));
            assert_eq!(r.shell_code, code);
            assert!(r.note.is_none() && r.finding.is_none());
        }
        assert!(decode(Ending::Code(137)).note.unwrap().contains("SIGKILL"));
    }

    #[test]
    fn fail_fast_becomes_a_finding() {
        for code in [-1073740791, 3221226505] {
            let r = decode(Ending::Code(code));
            let f = r.finding.expect("a finding");
            assert_eq!(f.kind, Kind::WindowsFailFast);
            assert_eq!(f.source.input, EXIT_STATUS_INPUT);
            assert_eq!(f.facts["exit_code"], "0xC0000409");
            assert!(r.note.unwrap().contains("0xC0000409"));
        }
        let access = decode(Ending::Code(-1073741819));
        let f = access.finding.expect("a finding");
        assert_eq!(f.kind, Kind::WindowsAccessViolation);
        assert_eq!(f.facts["exit_code"], "0xC0000005");
        assert!(access.note.unwrap().contains("STATUS_ACCESS_VIOLATION"));
        let no_memory = decode(Ending::Code(0xC000_0017));
        let f = no_memory.finding.expect("a finding");
        assert_eq!(f.kind, Kind::FatalSignal);
        assert_eq!(f.category, crate::record::Category::Oom);
        assert_eq!(f.facts["ntstatus"], "STATUS_NO_MEMORY");
        assert!(no_memory.note.unwrap().contains("STATUS_NO_MEMORY"));
    }

    #[test]
    fn crash_signals_become_findings() {
        for (n, name, code) in [
            (7, "SIGBUS", "native_crash"),
            (11, "SIGSEGV", "native_crash"),
            (6, "SIGABRT", "native_crash"),
        ] {
            let r = decode(Ending::Signal(n));
            let f = r.finding.expect("a finding");
            assert_eq!(f.kind, Kind::FatalSignal);
            assert_eq!(f.category, crate::record::Category::Crash);
            assert!(f.facts["signal"].starts_with(name), "{n}");
            let mut analysis = crate::Analysis::new();
            analysis.add(crate::ScanOutcome {
                findings: vec![f],
                ..Default::default()
            });
            let (findings, _) = analysis.finish();
            assert_eq!(findings[0].diagnosis.verdicts[0].code, code);
        }
    }
}
