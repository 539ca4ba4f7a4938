//! Processes that died of a fatal signal other than SIGKILL: PyTorch's
//! DataLoader reports its workers' deaths, and `oomwhy run` reports the
//! wrapped command's (see `crate::exit`).
//!
//! PyTorch's `torch/csrc/DataLoader.cpp` installs handlers in every worker
//! that print one line before the worker dies, and the main process then
//! raises when it finds the dead worker (see docs/formats.md):
//!
//! ```text
//! ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
//! ERROR: Unexpected segmentation fault encountered in worker.
//! ERROR: Unexpected floating-point exception encountered in worker.
//! RuntimeError: DataLoader worker (pid 56811) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.
//! RuntimeError: DataLoader worker (pid 6303) is killed by signal: Aborted.
//! ```
//!
//! The signal name after `killed by signal:` is the C library's
//! `strsignal()`. `Killed` (SIGKILL) belongs to the host-memory family. A bus
//! error in a worker almost always means the shared memory (`/dev/shm`) that
//! workers hand batches through is full, so those findings are `likely_oom`;
//! the others are crashes.
//!
//! Each worker prints its own line and the main process raises once: all of
//! them carry the same `location` fact so the scanner keeps one finding,
//! with the exception.

use super::{Family, Message};
use crate::constant_regex;
use crate::record::{fact, Category, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    anchor: Regex,
    handler: Regex,
    killed: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        anchor: constant_regex(concat!(
            // Retyped as well as printed: the label may be lost and the case
            // changed (`Unexpected bus ERROR encountered in worker`).
            r"(?:ERROR: )?Unexpected (?i:bus error|segmentation fault|floating-point exception) encountered in worker",
            r"|DataLoader worker \(pid\(?s?\)?\s*[\d, ]+\) is killed by signal: (?:Bus error|Segmentation fault|Aborted|Floating point exception|Illegal instruction)",
        )),
        handler: constant_regex(
            r"(?:ERROR: )?Unexpected ((?i:bus error|segmentation fault|floating-point exception)) encountered in worker",
        ),
        killed: constant_regex(
            r"DataLoader worker \(pid\(?s?\)?\s*([\d, ]+)\) is killed by signal: (Bus error|Segmentation fault|Aborted|Floating point exception|Illegal instruction)",
        ),
    })
}

/// The signal a `strsignal()` name or handler wording stands for: the
/// signal table's row whose message (glibc's `strsignal()` text) it is.
fn signal_of(name: &str) -> Option<(&'static str, i64)> {
    let wanted = name.replace('-', " ");
    crate::codes::table("signal")?
        .entries
        .iter()
        .find(|e| e.message.eq_ignore_ascii_case(&wanted))
        .map(|e| (e.name, e.number))
}

/// A DataLoader worker that died of SIGBUS, SIGSEGV, SIGABRT, SIGFPE or
/// SIGILL.
pub struct WorkerSignal;

impl Family for WorkerSignal {
    fn triggers(&self) -> &'static [&'static str] {
        &["encountered in worker", "is killed by signal: "]
    }

    fn start(&self, line: &str) -> Option<usize> {
        patterns().anchor.find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        // The SIGBUS message was wrapped onto more lines by some terminals.
        lines.len() < 3
            && (next.trim_start().starts_with("Bus error. It is possible")
                || next.trim_start().starts_with("Please try to raise"))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let text = message.joined();
        let (signal, number, pids) = if let Some(c) = p.killed.captures(&text) {
            let (name, number) = signal_of(&c[2])?;
            (name, number, c[1].trim().to_string())
        } else if let Some(c) = p.handler.captures(&text) {
            let (name, number) = signal_of(&c[1])?;
            (name, number, String::new())
        } else {
            return None;
        };
        let mut finding = message.finding(Kind::FatalSignal, text.trim_end().to_string());
        finding.era = Some(Era::Dataloader);
        finding.backend = Some("cpu".into());
        if number == 7 {
            // Workers pass batches through /dev/shm; a bus error there is a
            // shortage of that memory, not a bug.
            finding.category = Category::LikelyOom;
            finding
                .facts
                .insert(fact::MEMORY.into(), "shared memory (/dev/shm)".into());
        }
        finding
            .facts
            .insert(fact::SIGNAL.into(), format!("{signal} ({number})"));
        if !pids.is_empty() {
            if let Ok(pid) = pids
                .split(',')
                .next()
                .unwrap_or_default()
                .trim()
                .parse::<u64>()
            {
                finding.facts.insert("worker_pid".into(), pid.to_string());
            }
        }
        finding
            .facts
            .insert(fact::LOCATION.into(), format!("DataLoader worker {signal}"));
        Some(finding)
    }
}

/// torchelastic's agent line for a worker that died of a signal
/// (`torch/distributed/elastic/multiprocessing/api.py`: `failed (exitcode:
/// -11) local_rank: 0 (pid: 3304209) of binary: /usr/bin/python3`). A
/// negative exit code is the signal's number, read in the signal table:
/// SIGKILL (-9) is the host-memory family's, every other signal is a crash
/// (a SIGBUS, /dev/shm running out, only likely an out of memory). The
/// table torchelastic prints after it, when the paste has it, supersedes
/// this line (one finding).
pub struct ElasticAgentSignal;

fn elastic_agent() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(r"\bfailed \(exitcode: -(\d{1,2})\) local_rank: (\d+) \(pid: (\d+)\)")
    })
}

/// The signal a torchelastic agent line names, when it is one of the
/// table's and not SIGKILL.
fn agent_signal(line: &str) -> Option<(usize, &'static str, i64)> {
    let c = elastic_agent().captures(line)?;
    let number: i64 = c[1].parse().ok()?;
    let entry = crate::codes::table("signal")?.by_number(number)?;
    (number != 9).then_some((c.get(0)?.start(), entry.name, number))
}

impl Family for ElasticAgentSignal {
    fn triggers(&self) -> &'static [&'static str] {
        &["failed (exitcode: -"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        agent_signal(line).map(|(at, _, _)| at)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let text = message.joined();
        let (_, signal, number) = agent_signal(&text)?;
        let c = elastic_agent().captures(&text)?;
        let mut finding = message.finding(Kind::FatalSignal, text.trim_end().to_string());
        finding.era = Some(Era::Torchelastic);
        finding.facts.insert("report".into(), "agent".into());
        finding
            .facts
            .insert(fact::SIGNAL.into(), format!("{signal} ({number})"));
        finding
            .facts
            .insert("exit_code".into(), format!("-{number}"));
        finding.facts.insert("local_rank".into(), c[2].to_string());
        finding.facts.insert(fact::PID.into(), c[3].to_string());
        mark_bus_error(&mut finding, number);
        Some(finding)
    }
}

/// gdb's report of a fatal signal in the program it runs (`Thread 1
/// "python" received signal SIGSEGV, Segmentation fault.`, `Program
/// received signal SIGBUS, Bus error.`), with the frames and the `(gdb)`
/// commands that follow: a crash in native code, the signal read in the
/// signal table, and the library of the innermost frame (`from
/// /usr/local/cuda/lib64/libcudart.so.10.1`) where it shows one. SIGKILL
/// and SIGINT are never reported this way (gdb stops on SIGINT for Ctrl-C).
pub struct GdbSignal;

fn gdb_signal() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r#"^\s*(?:Thread \d+ (?:"[^"]*" )?|Program )received signal (SIG(?:SEGV|BUS|FPE|ILL|ABRT)), [A-Z][\w -]+\.?\s*$"#,
        )
    })
}

fn gdb_library() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"\bfrom (?:\S*/)?([\w.+-]+\.so[\w.]*)"))
}

impl Family for GdbSignal {
    fn triggers(&self) -> &'static [&'static str] {
        // SIGFPE's and SIGILL's names have no piece the prefilter searches
        // for: read on a line another literal brings.
        &["Segmentation fault", "Bus error"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        gdb_signal().find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        let t = next.trim_start();
        lines.len() < 16 && (t.starts_with("0x") || t.starts_with('#') || t.starts_with("(gdb)"))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        let c = gdb_signal().captures(first)?;
        let entry = crate::codes::table("signal")?
            .entries
            .iter()
            .find(|e| e.name == &c[1])?;
        let text = message.lines.join("\n");
        let mut finding = message.finding(Kind::FatalSignal, text.trim_end().to_string());
        finding.facts.insert(
            fact::SIGNAL.into(),
            format!("{} ({})", entry.name, entry.number),
        );
        finding.facts.insert(fact::REPORTED_BY.into(), "gdb".into());
        if let Some(lib) = message.lines[1..]
            .iter()
            .find_map(|l| gdb_library().captures(l))
        {
            finding
                .facts
                .insert(fact::LOCATION.into(), lib[1].to_string());
        }
        if entry.number == 7 {
            finding.category = Category::LikelyOom;
            finding
                .facts
                .insert(fact::MEMORY.into(), "shared memory (/dev/shm)".into());
        }
        Some(finding)
    }
}

/// cuda-gdb's stop on an exception in a CUDA kernel: gdb's stop line with
/// the exception's code and name in a signal's place (`Thread 137
/// "pt_autograd_0" received signal CUDA_EXCEPTION_14, Warp Illegal
/// Address.`), usually after `CUDA Exception: Warp Illegal Address` and
/// before the kernel it switched focus to (`[Switching focus to CUDA kernel
/// 0, grid 2749, block (0,8156,0), thread (96,0,0), device 0, ...]`) and the
/// frames. The codes and names are cuda-gdb's (the CUDA-GDB manual's table
/// of CUDA exception codes): an illegal or out-of-range address is the
/// kernel's illegal memory access (what the runtime then returns as
/// `cudaErrorIllegalAddress`), a misaligned address its misaligned access,
/// `Warp Assert` a device-side assert; every other exception (an illegal
/// instruction, a stack overflow, an invalid PC) a crash in the kernel.
/// Never an out of memory.
pub struct CudaGdbException;

fn cuda_gdb_exception() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r#"^\s*(?:Thread \d+ (?:"[^"]*" )?|Program )received signal (CUDA_EXCEPTION_\d{1,2}), ([A-Z][\w -]+?)\.?\s*$"#,
        )
    })
}

fn cuda_gdb_focus() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(r"^\s*\[Switching focus to CUDA kernel \d+,.*\bdevice (\d+)\b")
    })
}

/// The kind a cuda-gdb exception's name says.
fn cuda_exception_kind(name: &str) -> Kind {
    if name.ends_with("Illegal Address") || name.ends_with("Out-of-range Address") {
        Kind::IllegalMemoryAccess
    } else if name.ends_with("Misaligned Address") {
        Kind::MisalignedAddress
    } else if name == "Warp Assert" {
        Kind::DeviceSideAssert
    } else {
        Kind::GpuRuntimeError
    }
}

impl Family for CudaGdbException {
    fn triggers(&self) -> &'static [&'static str] {
        // One rare piece, `_EXC`.
        &["signal CUDA_EXCEPTION_"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        cuda_gdb_exception().find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        let t = next.trim_start();
        lines.len() < 16
            && (t.starts_with("0x")
                || t.starts_with('#')
                || t.starts_with("<<<")
                || t.starts_with("(cuda-gdb)")
                || t.starts_with("[Switching focus to CUDA kernel"))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        let c = cuda_gdb_exception().captures(first)?;
        let name = c[2].trim_end();
        let text = message.lines.join("\n");
        let mut finding = message.finding(cuda_exception_kind(name), text.trim_end().to_string());
        finding.category = Category::Crash;
        finding.backend = Some("cuda".into());
        finding
            .facts
            .insert(fact::ERROR_NAME.into(), format!("{} ({name})", &c[1]));
        finding
            .facts
            .insert(fact::REPORTED_BY.into(), "cuda-gdb".into());
        if let Some(d) = message.lines[1..]
            .iter()
            .find_map(|l| cuda_gdb_focus().captures(l))
        {
            finding.device = d[1].parse().ok();
        }
        Some(finding)
    }
}

/// A launcher's line for a child that a signal ended, as
/// text-generation-inference's launcher logs it (`launcher/src/main.rs`:
/// `Shard process was signaled to shutdown with signal {signal}`, also
/// `Download process` and `Python Backend process`): the number read in the
/// signal table. SIGKILL (9) is the host-memory family's; every other signal
/// is a crash in the child (a SIGBUS, `/dev/shm` running out, only likely an
/// out of memory).
pub struct LauncherSignal;

fn launcher_signal() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r"\b((?:[A-Z]\w* )*?\w+) process was signaled to shutdown with signal (\d{1,2})\b",
        )
    })
}

/// Where a launcher's signal line starts, the process it names, and the
/// signal, when it is one of the table's and not SIGKILL.
fn launcher_line(line: &str) -> Option<(usize, String, &'static str, i64)> {
    let c = launcher_signal().captures(line)?;
    let number: i64 = c[2].parse().ok()?;
    let entry = crate::codes::table("signal")?.by_number(number)?;
    (number != 9).then(|| {
        (
            c.get(0).map_or(0, |m| m.start()),
            c[1].to_string(),
            entry.name,
            number,
        )
    })
}

impl Family for LauncherSignal {
    fn triggers(&self) -> &'static [&'static str] {
        &["signaled to shutdown with signal"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        launcher_line(line).map(|(at, ..)| at)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let text = message.joined();
        let (_, process, signal, number) = launcher_line(&text)?;
        let mut finding = message.finding(Kind::FatalSignal, text.trim_end().to_string());
        finding
            .facts
            .insert(fact::SIGNAL.into(), format!("{signal} ({number})"));
        finding
            .facts
            .insert(fact::PROCESS.into(), format!("{process} process"));
        mark_bus_error(&mut finding, number);
        Some(finding)
    }
}

/// A process or container whose exit status is 128 + a fatal signal
/// (`comfyui-1 exited with code 139`, `Exit Code: 134`, `exit status 135`):
/// the shell's and Docker's way of saying it died of SIGSEGV, SIGABRT,
/// SIGBUS, SIGILL or SIGFPE. 137 (SIGKILL) is the host-memory family's;
/// 130, 143 and the other catchable signals are an interrupt or a stop
/// someone asked for, not a crash.
pub struct ExitStatusSignal;

fn exit_status() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r#"(?i)\b(?:exit(?:ed)?\s+with\s+(?:exit\s+)?(?:code|status)|exit\s+(?:code|status)|exitCode"?|returned\s+non-zero\s+exit\s+status)\s*[:=]?\s*\(?(13[2-6]|139)\b"#,
        )
    })
}

/// Where the exit status starts and the signal it stands for.
fn exit_signal(line: &str) -> Option<(usize, &'static str, i64)> {
    let c = exit_status().captures(line)?;
    let number = c[1].parse::<i64>().ok()? - 128;
    if !matches!(number, 4 | 6 | 7 | 8 | 11) {
        return None;
    }
    let entry = crate::codes::table("signal")?.by_number(number)?;
    Some((c.get(0)?.start(), entry.name, number))
}

impl Family for ExitStatusSignal {
    fn triggers(&self) -> &'static [&'static str] {
        &["exited with", "exit ", "Exit ", "EXIT ", "exitCode"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        exit_signal(line).map(|(at, ..)| at)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        let (_, signal, number) = exit_signal(first)?;
        // The whole line: `comfyui-1 exited with code 139` names what exited.
        let text = format!("{}{}", message.prefix, first).trim().to_string();
        let mut finding = message.finding(Kind::FatalSignal, text);
        finding
            .facts
            .insert(fact::SIGNAL.into(), format!("{signal} ({number})"));
        finding
            .facts
            .insert("exit_code".into(), (128 + number).to_string());
        mark_bus_error(&mut finding, number);
        Some(finding)
    }
}

/// A SIGBUS (7) in a process that passes data through /dev/shm is that
/// memory running out, most often, not a bug: likely out of memory, and
/// which memory.
fn mark_bus_error(finding: &mut Finding, number: i64) {
    if number == 7 {
        finding.category = Category::LikelyOom;
        finding
            .facts
            .insert(fact::MEMORY.into(), "shared memory (/dev/shm)".into());
    }
}

#[cfg(test)]
mod tests {
    use crate::record::{Category, Finding, Kind};

    fn decode(line: &str) -> Vec<Finding> {
        crate::scan(line.as_bytes(), "t").unwrap().findings
    }

    #[test]
    fn cuda_gdb_stops_on_a_cuda_exception() {
        // cuda-gdb's stop as FasterTransformer's and flash-attention's
        // issues paste it; the name on the stop line decides the kind.
        let text = "CUDA Exception: Warp Illegal Address\nThe exception was triggered at PC 0x56204c84ebf0 (cuda_fp16.hpp:255)\n\nThread 1 \"decoding_exampl\" received signal CUDA_EXCEPTION_14, Warp Illegal Address.\n[Switching focus to CUDA kernel 2, grid 406, block (0,0,0), thread (384,0,0), device 0, sm 0, warp 14, lane 0]\n0x000056204c84ec00 in operator* (lh=0x7f45aad14300, rh=0x7f45d4fffdb8)\n";
        let found = decode(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::IllegalMemoryAccess);
        assert_eq!(found[0].category, Category::Crash);
        assert_eq!(found[0].device, Some(0));
        assert_eq!(
            found[0].facts["error_name"],
            "CUDA_EXCEPTION_14 (Warp Illegal Address)"
        );
        let misaligned = decode(
            "Thread 1 \"main\" received signal CUDA_EXCEPTION_6, Warp Misaligned Address.\n",
        );
        assert_eq!(misaligned[0].kind, Kind::MisalignedAddress);
        // Prose about the exception is not cuda-gdb's stop.
        assert!(decode(
            "When it received signal CUDA_EXCEPTION_14, Warp Illegal Address, I ran bt.\n"
        )
        .is_empty());
    }

    #[test]
    fn dataloader_worker_deaths() {
        let cases = [
            ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).", "SIGBUS (7)", Category::LikelyOom),
            ("RuntimeError: DataLoader worker (pid 56811) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.", "SIGBUS (7)", Category::LikelyOom),
            ("RuntimeError: DataLoader worker (pid 6303) is killed by signal: Aborted. ", "SIGABRT (6)", Category::Crash),
            ("RuntimeError: DataLoader worker (pid 9) is killed by signal: Segmentation fault. ", "SIGSEGV (11)", Category::Crash),
            ("ERROR: Unexpected segmentation fault encountered in worker.", "SIGSEGV (11)", Category::Crash),
        ];
        for (line, signal, category) in cases {
            let found = decode(line);
            assert_eq!(found.len(), 1, "{line}");
            let f = &found[0];
            assert_eq!(f.kind, Kind::FatalSignal, "{line}");
            assert_eq!(f.facts["signal"], signal, "{line}");
            assert_eq!(f.category, category, "{line}");
        }
    }

    #[test]
    fn an_exit_status_of_128_plus_a_fatal_signal() {
        // docker compose's line (ComfyUI's container, a real report), and
        // the other spellings the same status is printed in.
        for (line, signal, category) in [
            ("comfyui-1 exited with code 139", "SIGSEGV (11)", Category::Crash),
            ("Exit Code:    134", "SIGABRT (6)", Category::Crash),
            ("subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 135.", "SIGBUS (7)", Category::LikelyOom),
        ] {
            let found = decode(line);
            assert_eq!(found.len(), 1, "{line}");
            assert_eq!(found[0].kind, Kind::FatalSignal, "{line}");
            assert_eq!(found[0].facts["signal"], signal, "{line}");
            assert_eq!(found[0].category, category, "{line}");
        }
        // SIGKILL is host memory's; an interrupt, a stop on request or an
        // ordinary status is no crash; a number that only starts alike is
        // another status.
        assert!(decode("trainer-1 exited with code 137")
            .iter()
            .all(|f| f.kind == Kind::HostOomKilled));
        for line in [
            "trainer-1 exited with code 130",
            "job exited with code 143",
            "exited with code 1",
            "exited with code 1390",
            "step 139 loss 0.42",
        ] {
            assert!(decode(line).is_empty(), "{line}");
        }
    }

    #[test]
    fn torchelastic_agent_lines_read_the_signal_table() {
        // Megatron-LM under torchrun (a wild paste), and the -6 of an NCCL
        // watchdog's abort.
        for (line, signal) in [
            ("E1223 05:18:02.971000 3304089 site-packages/torch/distributed/elastic/multiprocessing/api.py:882] failed (exitcode: -11) local_rank: 0 (pid: 3304209) of binary: /usr/bin/python3", "SIGSEGV (11)"),
            ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 1 (pid: 886322) of binary: /usr/bin/python", "SIGABRT (6)"),
        ] {
            let found = decode(line);
            assert_eq!(found.len(), 1, "{line}");
            assert_eq!(found[0].kind, Kind::FatalSignal);
            assert_eq!(found[0].category, Category::Crash);
            assert_eq!(found[0].facts["signal"], signal);
        }
        // SIGKILL is the host-memory family's; an exit code is no signal.
        let killed = decode("torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) local_rank: 0 (pid: 1798) of binary: /usr/bin/python3");
        assert!(killed.iter().all(|f| f.kind == Kind::HostOomKilled));
        assert!(decode("torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 0 (pid: 1798) of binary: /usr/bin/python3").is_empty());
    }

    #[test]
    fn gdb_reports_a_fatal_signal_with_the_innermost_library() {
        // A wild paste: SIGSEGV inside libcudart at exit.
        let text = "Thread 1 \"python\" received signal SIGSEGV, Segmentation fault.\n0x00007fffc36857d8 in ?? () from /usr/local/cuda/lib64/libcudart.so.10.1\n(gdb) where\n#0  0x00007fffc36857d8 in ?? () from /usr/local/cuda/lib64/libcudart.so.10.1\n";
        let found = decode(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::FatalSignal);
        assert_eq!(found[0].facts["signal"], "SIGSEGV (11)");
        assert_eq!(found[0].facts["location"], "libcudart.so.10.1");
        // Prose about gdb is not its report.
        assert!(
            decode("When the program received signal SIGSEGV, Segmentation fault, I ran bt.")
                .is_empty()
        );
    }

    #[test]
    fn a_launcher_names_the_signal_that_ended_its_child() {
        // text-generation-inference's launcher log line, and the wild
        // paste that quotes it in the poster's sentence.
        for text in [
            "2024-07-24T08:09:11.123456Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 11",
            "When loading the shards the model crashes unexpectedly with an error message\"Shard process was signaled to shutdown with signal 11\". Here's the full log:",
        ] {
            let found = decode(text);
            assert_eq!(found.len(), 1, "{text}");
            assert_eq!(found[0].kind, Kind::FatalSignal);
            assert_eq!(found[0].category, Category::Crash);
            assert_eq!(found[0].facts["signal"], "SIGSEGV (11)");
            assert_eq!(found[0].facts["process"], "Shard process");
        }
        // SIGKILL is the host-memory family's likely out of memory.
        let killed = decode("2023-07-05T19:55:21.347050Z ERROR text_generation_launcher: Shard process was signaled to shutdown with signal 9");
        assert_eq!(killed.len(), 1);
        assert_eq!(killed[0].kind, Kind::HostOomKilled);
        assert_eq!(killed[0].category, Category::LikelyOom);
        // The launcher's normal shutdown names no signal.
        assert!(decode(
            "2023-07-05T19:55:21.347050Z  INFO text_generation_launcher: Shutting down shards"
        )
        .is_empty());
        // Code that formats the line is not the line.
        assert!(decode(
            "    tracing::error!(\"Shard process was signaled to shutdown with signal {signal}\");"
        )
        .is_empty());
    }

    #[test]
    fn sigkill_and_mentions_are_not_this_family() {
        let killed =
            decode("RuntimeError: DataLoader worker (pid 9833) is killed by signal: Killed. ");
        assert!(killed.iter().all(|f| f.kind != Kind::FatalSignal));
        assert!(decode("OSError: [Errno 28] No space left on device").is_empty());
    }
}
