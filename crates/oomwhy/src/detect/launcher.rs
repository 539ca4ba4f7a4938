//! DeepSpeed's launcher (`deepspeed/launcher/launch.py`) ending a run.
//!
//! The launcher polls its ranks; when one exits with a non-zero code it
//! calls its `sigkill_handler`, which logs `Killing subprocess PID` for
//! every rank it started (the dead one included) and terminates their
//! process trees, then logs `{cmd} exits with return code = {code}` (the
//! failed rank's code; `cmd` is the last command it built, not necessarily
//! that rank's) and exits with it:
//!
//! ```text
//! [2023-09-10 11:45:59,207] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 6293
//! [2023-09-10 11:45:59,501] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 6294
//! [2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py'] exits with return code = -9
//! ```
//!
//! The same handler runs when the launcher itself gets SIGINT or SIGTERM,
//! and then logs `Main process received SIGINT, exiting` instead of a
//! return code: an interrupt passed on, not a failure, and not reported.
//!
//! The return code is Python's `Popen.returncode`: a negative one is the
//! signal that ended the rank. -9 (SIGKILL) is the host-memory family's
//! kind, most often the kernel's OOM killer; any other signal in the
//! signal table is a crash (SIGBUS only likely an out of memory, as
//! elsewhere); a positive code is the rank's own exit (1: a Python
//! exception, whose traceback is in that rank's output). The return-code
//! line is DeepSpeed's, also quoted in prose (`exits with return code =
//! -11`): only a negative code is read there without the handler's
//! prefix.
//!
//! The kill lines without a return code (a paste cut after them) say that
//! a rank failed, not why: a crash of unknown cause. When they come right
//! after a progress bar of checkpoint loading with no traceback between
//! (`Loading checkpoint shards:   0%| ... [00:00<?, ?it/s][...]
//! [launch.py:428:sigkill_handler] Killing subprocess 6293`), a rank died
//! silently while loading weights into host memory, which is when the
//! kernel's OOM killer most often ends one: likely an out of memory.

use super::host::supposed_exit;
use super::{re, Family, Message};
use crate::record::{fact, Category, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    kill: Regex,
    code: Regex,
    interrupt: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        kill: re(r"(?:\[launch\.py:\d+:)?\bsigkill_handler\]\s*Killing subprocess (\d+)"),
        code: re(r"\bexits with return code = (-?\d{1,3})\b"),
        interrupt: re(r"\bMain process received (SIG[A-Z]+), exiting"),
    })
}

/// Where a launcher line starts: a kill line, the handler's return-code
/// line, or DeepSpeed's return-code sentence with a negative code.
fn launcher_start(line: &str) -> Option<usize> {
    let p = patterns();
    if let Some(m) = p.kill.find(line) {
        return Some(m.start());
    }
    let c = p.code.captures(line)?;
    let at = c.get(0)?.start();
    if let Some(h) = line[..at]
        .find("[launch.py:")
        .or_else(|| line[..at].find("sigkill_handler]"))
    {
        return Some(h);
    }
    (c[1].starts_with('-') && !supposed_exit(line, at)).then_some(at)
}

/// A tqdm bar of checkpoint loading right before the launcher's line.
fn loading_bar(prefix: &str) -> Option<String> {
    let bar = prefix.trim().trim_start_matches('`');
    let label = bar.split(['|', ':']).next().unwrap_or("").trim();
    let loading = label.to_ascii_lowercase();
    let is_bar = bar.contains("it/s]") || bar.contains("s/it]") || bar.contains("<?");
    (is_bar && loading.contains("loading") && loading.contains("checkpoint"))
        .then(|| label.chars().take(80).collect())
}

/// Host memory in use, as a share of the machine's, from which DeepSpeed's
/// own reading just before the kills (`see_memory_usage`'s `CPU Virtual
/// Memory:  used = 26.4 GB, percent = 84.6%`, psutil's figure: total less
/// available) makes a memory kill likely: four fifths of RAM in use, and
/// a rank died without a traceback right after.
const HOST_MEMORY_HIGH_PERCENT: f64 = 80.0;

fn host_memory_reading() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        re(r"\bCPU Virtual Memory:\s+used = (\d+(?:\.\d+)?) GB, percent = (\d+(?:\.\d+)?)%")
    })
}

/// Weighs the lines written just before the launcher's kills (the
/// scanner's nearby lines, once the finding is decoded): DeepSpeed's last
/// reading of host memory, when it shows most of it in use, makes the
/// kills of unknown cause a likely out of host memory. A return code, when
/// the launcher printed one, already decided.
pub(crate) fn weigh_nearby(finding: &mut Finding) {
    if finding.kind != Kind::ChildFailed
        || finding.era != Some(Era::Deepspeed)
        || finding.category != Category::Crash
        || finding.facts.contains_key(fact::ROOT_CAUSE_EXITCODE)
    {
        return;
    }
    let Some(c) = host_memory_reading().captures_iter(&finding.nearby).last() else {
        return;
    };
    let percent: f64 = c[2].parse().unwrap_or(0.0);
    if percent < HOST_MEMORY_HIGH_PERCENT {
        return;
    }
    finding.category = Category::LikelyOom;
    // DeepSpeed divides by 1024³ and writes `GB`.
    let used = crate::units::parse_size(&format!("{} GiB", &c[1])).ok();
    finding.sizes.extra.insert("used_bytes".into(), used);
    finding
        .facts
        .insert("host_memory_used".into(), format!("{} GB", &c[1]));
    finding
        .facts
        .insert("host_memory_percent".into(), format!("{}%", &c[2]));
}

/// DeepSpeed's launcher killing its ranks, and the return code it reports.
pub struct DeepSpeedLauncher;

impl Family for DeepSpeedLauncher {
    fn triggers(&self) -> &'static [&'static str] {
        // `sigkill_handler]` on the piece `gkil` (beside `GKIL`, the same
        // bucket); the return-code sentence under the host family's
        // `xits with`.
        &["sigkill_handler]", "xits with"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        launcher_start(line)
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        let p = patterns();
        lines.len() < 256
            && !lines.iter().any(|l| p.code.is_match(l))
            && (p.kill.is_match(next) || p.code.is_match(next) || p.interrupt.is_match(next))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let text = message.lines.join("\n");
        let killed: Vec<&str> = p
            .kill
            .captures_iter(&text)
            .filter_map(|c| c.get(1).map(|m| m.as_str()))
            .collect();
        let code: Option<i64> = p.code.captures(&text).and_then(|c| c[1].parse().ok());
        if code.is_none() && p.interrupt.is_match(&text) {
            // The launcher passed on an interrupt; no rank failed.
            return None;
        }
        let signal = code
            .filter(|c| *c < 0)
            .and_then(|c| crate::codes::table("signal")?.by_number(-c));
        let mut finding = match (code, signal) {
            (Some(c), _) if c < 0 && signal.is_none() => return None,
            (Some(-9), _) => {
                let mut f = message.finding(Kind::HostOomKilled, text.trim_end().to_string());
                f.backend = Some("cpu".into());
                f.era = Some(Era::Sigkill);
                f.facts.insert(fact::SIGNAL.into(), "SIGKILL (9)".into());
                f.facts.insert("exit_code".into(), "-9".into());
                f
            }
            (Some(c), Some(entry)) => {
                let mut f = message.finding(Kind::FatalSignal, text.trim_end().to_string());
                f.facts.insert(
                    fact::SIGNAL.into(),
                    format!("{} ({})", entry.name, entry.number),
                );
                f.facts.insert("exit_code".into(), c.to_string());
                if entry.number == 7 {
                    f.category = Category::LikelyOom;
                    f.facts
                        .insert(fact::MEMORY.into(), "shared memory (/dev/shm)".into());
                }
                f
            }
            (Some(c), None) => {
                if c == 0 {
                    return None;
                }
                let mut f = message.finding(Kind::ChildFailed, text.trim_end().to_string());
                f.era = Some(Era::Deepspeed);
                f.facts
                    .insert(fact::ROOT_CAUSE_EXITCODE.into(), c.to_string());
                f
            }
            (None, _) => {
                let mut f = message.finding(Kind::ChildFailed, text.trim_end().to_string());
                f.era = Some(Era::Deepspeed);
                if let Some(label) = loading_bar(message.prefix) {
                    f.category = Category::LikelyOom;
                    f.facts.insert("progress_bar".into(), label);
                }
                f
            }
        };
        finding
            .facts
            .insert(fact::REPORTED_BY.into(), "DeepSpeed launcher".into());
        if !killed.is_empty() {
            finding
                .facts
                .insert(fact::KILLED_PROCESSES.into(), killed.len().to_string());
            finding.facts.insert(fact::PIDS.into(), killed.join(", "));
        }
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::decode_lines;

    const KILL: &str =
        "[2023-09-10 11:45:59,207] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 6293";
    const KILL2: &str =
        "[2023-09-10 11:45:59,501] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 6294";

    fn code_line(code: &str) -> String {
        format!("[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py'] exits with return code = {code}")
    }

    #[test]
    fn the_return_code_decides_the_kind() {
        let f = decode_lines(&DeepSpeedLauncher, &[KILL, KILL2, &code_line("-9")]).unwrap();
        assert_eq!(
            (f.kind, f.category),
            (Kind::HostOomKilled, Category::LikelyOom)
        );
        assert_eq!(f.facts[fact::PIDS], "6293, 6294");
        let f = decode_lines(&DeepSpeedLauncher, &[KILL, &code_line("-11")]).unwrap();
        assert_eq!((f.kind, f.category), (Kind::FatalSignal, Category::Crash));
        assert_eq!(f.facts[fact::SIGNAL], "SIGSEGV (11)");
        let f = decode_lines(&DeepSpeedLauncher, &[KILL, &code_line("-7")]).unwrap();
        assert_eq!(f.category, Category::LikelyOom);
        let f = decode_lines(&DeepSpeedLauncher, &[KILL, &code_line("1")]).unwrap();
        assert_eq!((f.kind, f.era), (Kind::ChildFailed, Some(Era::Deepspeed)));
        assert_eq!(f.facts[fact::ROOT_CAUSE_EXITCODE], "1");
    }

    #[test]
    fn kills_alone_are_a_crash_of_unknown_cause() {
        let f = decode_lines(&DeepSpeedLauncher, &[KILL, KILL2]).unwrap();
        assert_eq!((f.kind, f.category), (Kind::ChildFailed, Category::Crash));
        assert_eq!(f.facts[fact::KILLED_PROCESSES], "2");
        // An interrupt passed on to the ranks is not a failure.
        assert!(decode_lines(
            &DeepSpeedLauncher,
            &[KILL, "[2023-09-10 11:45:59,600] [INFO] [launch.py:440:sigkill_handler] Main process received SIGINT, exiting"]
        )
        .is_none());
    }

    #[test]
    fn a_checkpoint_loading_bar_before_the_kills_is_likely_an_oom() {
        let bar = "Loading checkpoint shards:   0%|          | 0/7 [00:00<?, ?it/s]";
        let line = format!("{bar}{KILL}");
        let found = crate::scan(format!("{line}\n{KILL2}\n").as_bytes(), "t")
            .unwrap()
            .findings;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].category, Category::LikelyOom);
        assert_eq!(found[0].facts["progress_bar"], "Loading checkpoint shards");
        // Another bar (training steps) says nothing about memory.
        let line = format!("Epoch 1:  10%|#         | 5/50 [00:10<01:30,  2.0s/it]{KILL}");
        let found = crate::scan(line.as_bytes(), "t").unwrap().findings;
        assert_eq!(found[0].category, Category::Crash);
    }

    #[test]
    fn host_memory_read_just_before_the_kills() {
        let reading = |percent: &str| {
            format!("[2024-01-22 16:50:44,316] [INFO] [utils.py:799:see_memory_usage] CPU Virtual Memory: used = 26.4 GB, percent = {percent}%\n{KILL}\n")
        };
        let found = crate::scan(reading("84.6").as_bytes(), "t")
            .unwrap()
            .findings;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].category, Category::LikelyOom);
        assert_eq!(found[0].facts["host_memory_percent"], "84.6%");
        let found = crate::scan(reading("11.0").as_bytes(), "t")
            .unwrap()
            .findings;
        assert_eq!(found[0].category, Category::Crash);
    }

    #[test]
    fn the_sentence_in_prose_takes_only_a_signal() {
        let f = decode_lines(
            &DeepSpeedLauncher,
            &["In the end, exits with return code = -11 is prompted."],
        )
        .unwrap();
        assert_eq!(f.kind, Kind::FatalSignal);
        assert!(launcher_start("the script exits with return code = 1").is_none());
        assert!(launcher_start("If it exits with return code = -9, check dmesg").is_none());
    }
}
