//! Host (CPU) memory: PyTorch's CPU allocator failing, and processes killed
//! for memory by the kernel, the batch system or the container runtime.
//!
//! `host_oom` — PyTorch's `c10/core/impl/alloc_cpu.cpp` (docs/formats.md §3.4):
//!
//! ```text
//! [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes. Error code 12 (Cannot allocate memory)
//! [enforce fail at ..\c10\core\impl\alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate N bytes.
//! [enforce fail at ..\c10\core\CPUAllocator.cpp:73] data. DefaultCPUAllocator: not enough memory: you tried to allocate N bytes. Buy new RAM!
//! ```
//!
//! `host_oom_killed` — one finding per kill, category by spelling:
//!
//! | spelling | era | category |
//! |---|---|---|
//! | `Out of memory: Killed process N (name) ...`, `oom-kill:constraint=...`, `oom_reaper: reaped process N` | `kernel` | `oom` |
//! | `Memory cgroup out of memory: Killed process N`, `CONSTRAINT_MEMCG` | `cgroup` | `oom` |
//! | Slurm `Detected N oom-kill event(s) in StepId=...` / `oom_kill event(s)`, `task N: Out Of Memory`, `exceeded memory limit (A > B), being killed` | `slurm` | `oom` |
//! | Kubernetes `OOMKilled` | `kubernetes` | `oom` |
//! | kubelet eviction `The node was low on resource: memory.` | `kubernetes` | `oom` |
//! | torchelastic `exitcode  : -9` / `Signal 9 (SIGKILL) received by PID N` | `torchelastic` | `likely_oom` |
//! | `DataLoader worker (pid N) is killed by signal: Killed.` | `dataloader` | `likely_oom` |
//! | `died with <Signals.SIGKILL: 9>` (Python subprocess) | `sigkill` | `likely_oom` |
//! | `exited with code 137`, `exit status 137`, `Exit Code: 137`, ... | `exit_137` | `likely_oom` |
//! | bash `line N: PID Killed  cmd`, zsh `zsh: killed  cmd` / `[1]  PID killed  cmd`, fish `terminated by signal SIGKILL` | `shell` | `likely_oom` |
//! | bash's `Killed` (macOS: `Killed: 9`) ending the output | `bare_killed` | `likely_oom` |
//! | Open MPI `mpirun noticed that process rank N ... exited on signal 9` | `mpi` | `likely_oom` |
//! | Ray `Worker unexpectedly exits with a connection error code N` | `ray_worker` | `likely_oom` |
//!
//! SIGKILL (signal 9; exit status 137 = 128 + 9) is what the OOM killer sends,
//! but schedulers, watchdogs and users send it too: those spellings only
//! suggest an OOM. A bare 137 or -9 without such words is never taken.

use super::text::int;
use super::{find_size, re};
use super::{Family, Message, SizeReader};
use crate::record::{fact, Category, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct CpuPatterns {
    anchor: Regex,
    /// PyTorch ≤ ≈1.3's CPU allocator checked posix_memalign's result
    /// itself (`[enforce fail at CPUAllocator.cpp:56] posix_memalign(&data,
    /// gAlignment, nbytes) == 0. 12 vs 0`): the call's result is the errno,
    /// and 12, ENOMEM, is POSIX's own statement that not enough memory was
    /// available, so the finding is a stated out of memory, as a status
    /// code that names memory exhaustion is elsewhere.
    memalign: Regex,
    enforce: Regex,
    request: Regex,
    errno: Regex,
}

fn cpu_patterns() -> &'static CpuPatterns {
    static P: OnceLock<CpuPatterns> = OnceLock::new();
    P.get_or_init(|| CpuPatterns {
        anchor: re(
            r"(?:\[enforce fail at [^\]]+\]\s*[^.\]]*\.\s*)?(\w*CPUAllocator): (can't allocate memory|not enough memory)",
        ),
        memalign: re(
            r"\[enforce fail at [^\]]*CPUAllocator\.cpp:\d+\] (posix_memalign)\([^)]*\) == 0\. (12) vs 0\b",
        ),
        enforce: re(r"\[enforce fail at ([^\]]+)\]\s*([^\s.][^.]*?)\.\s*\w*CPUAllocator"),
        request: re(r"you tried to allocate (\d+) (bytes)"),
        errno: re(r"Error code (\d+) \(([^)]*)\)"),
    })
}

/// `DefaultCPUAllocator: can't allocate memory / not enough memory`.
pub struct CpuAllocator;

impl Family for CpuAllocator {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "CPUAllocator: can't allocate memory",
            "CPUAllocator: not enough memory",
            // PyTorch ≤ ≈1.3's `[enforce fail at CPUAllocator.cpp:56]
            // posix_memalign(...)`: the name alone also stands for the two
            // literals above, so the prefilter keeps one literal for three.
            "CPUAllocator",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        let p = cpu_patterns();
        p.anchor
            .find(line)
            .or_else(|| p.memalign.find(line))
            .map(|m| m.start())
    }

    /// A terminal wrapped the sentence before its figure (`... you tried` /
    /// `to allocate 16777216000 bytes. Buy new RAM!`): the next line that
    /// completes `you tried to allocate N bytes` belongs to it.
    fn continues(&self, lines: &[String], next: &str) -> bool {
        let request = &cpu_patterns().request;
        let so_far = super::text::join_lines(lines);
        lines.len() < 3
            && !request.is_match(&so_far)
            && request.is_match(&format!("{so_far} {}", next.trim()))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = cpu_patterns();
        let text = message.joined();
        if let Some(c) = p.memalign.captures(&text) {
            let mut finding = message.finding(Kind::HostOom, text.clone());
            finding.backend = Some("cpu".into());
            finding.era = Some(Era::Posix);
            finding
                .facts
                .insert(fact::ALLOCATOR.into(), "CPUAllocator".into());
            finding
                .facts
                .insert("failed_check".into(), c[1].to_string());
            finding.facts.insert(fact::ERRNO.into(), c[2].to_string());
            finding
                .facts
                .insert(fact::STRERROR.into(), "Cannot allocate memory".into());
            return Some(finding);
        }
        let caps = p.anchor.captures(&text)?;
        let mut finding = message.finding(Kind::HostOom, text.clone());
        finding.backend = Some("cpu".into());
        finding
            .facts
            .insert(fact::ALLOCATOR.into(), caps[1].to_string());
        if let Some(enforce) = p.enforce.captures(&text) {
            finding
                .facts
                .insert("raised_at".into(), enforce[1].trim().to_string());
            finding
                .facts
                .insert("failed_check".into(), enforce[2].trim().to_string());
        }
        let mut notes = Vec::new();
        let mut sizes = SizeReader::new(&mut notes);
        finding.sizes.requested_bytes =
            find_size(&p.request, &text, 1, "you tried to allocate", &mut sizes);
        if let Some(errno) = p.errno.captures(&text) {
            finding
                .facts
                .insert(fact::ERRNO.into(), errno[1].to_string());
            finding
                .facts
                .insert(fact::STRERROR.into(), errno[2].to_string());
        }
        finding.era = Some(if &caps[2] == "can't allocate memory" {
            Era::Posix
        } else if text.contains("Buy new RAM!") {
            Era::BuyNewRam
        } else {
            Era::NotEnoughMemory
        });
        finding.version_hint = match finding.era {
            Some(Era::BuyNewRam) => Some("PyTorch ≤ ≈1.x (c10/core/CPUAllocator.cpp)".into()),
            _ => None,
        };
        if sizes.overflowed {
            finding.facts.insert(fact::OVERFLOW.into(), "true".into());
        }
        finding.truncated = finding.sizes.requested_bytes.is_none() && !sizes.overflowed;
        finding.notes = notes;
        Some(finding)
    }
}

struct KillPatterns {
    anchor: Regex,
    kernel_kill: Regex,
    kill_line: Regex,
    kernel_rss: Regex,
    constraint: Regex,
    constraint_pid: Regex,
    reaper: Regex,
    slurm_events: Regex,
    slurm_task: Regex,
    slurm_limit: Regex,
    kubernetes: Regex,
    elastic_exit: Regex,
    elastic_agent: Regex,
    systemd: Regex,
    oomd: Regex,
    go_signal: Regex,
    launcher_signal: Regex,
    slurm_handler: Regex,
    elastic_exit_any: Regex,
    elastic_signal: Regex,
    elastic_block: Regex,
    dataloader: Regex,
    sigkill: Regex,
    exit_137: Regex,
    exit_minus_9: Regex,
    shell: Regex,
    job_shell: Regex,
    mpi_signal: Regex,
    ray_worker: Regex,
    ray_worker_pid: Regex,
    invoked: Regex,
    died_signal: Regex,
    evicted: Regex,
    evicted_threshold: Regex,
    evicted_container: Regex,
    continuation: Regex,
    score: Regex,
    score_adj: Regex,
    oomd_duration: Regex,
    compose_prefix: Regex,
    exit_service: Regex,
}

fn kill_patterns() -> &'static KillPatterns {
    static P: OnceLock<KillPatterns> = OnceLock::new();
    P.get_or_init(|| {
        let kernel_kill = r"(?:Memory cgroup out of memory|Out of memory(?: \(oom_kill_allocating_task\))?): Kill(?:ed)? process (\d+) \(([^)]*)\)";
        // The kill line alone is the kernel's too: only the OOM killer
        // prints total-vm and anon-rss with it.
        let kill_line = r"\bKilled process (\d+) \(([^)]*)\),? total-vm:";
        let constraint = r"\boom-kill:constraint=(\w+)";
        let reaper = r"\boom_reaper: reaped process (\d+) \(([^)]*)\)";
        let slurm_events = r"\bDetected (\d+) oom[-_]kill events?(?:\(s\))? in (?:StepId=|step )([\w.+]+?)(?:\.?\s|\.?$|\. )";
        let slurm_task = r"\btasks? [\d,\-]+: Out Of Memory\b";
        let slurm_limit = r"\bexceeded memory limit \((\d+) > (\d+)\), being killed";
        let kubernetes = r"\bOOMKilled\b";
        // The kubelet's eviction message (pkg/kubelet/eviction/helpers.go,
        // `nodeLowMessageFmt`) for memory; disk and inode pressure say
        // another resource there.
        let evicted = r"\bThe node was low on resource: memory\b";
        // systemd: a unit whose process the OOM killer (the kernel's or
        // systemd-oomd) ended.
        let systemd = r"\b([\w@.\-]+\.(?:service|scope)): Failed with result 'oom-kill'";
        // systemd-oomd's own kill (src/oom/oomd-util.c): a cgroup ended
        // because memory pressure in its slice stayed over the limit, before
        // memory ran out (`Killed /user.slice/.../x.scope due to memory
        // pressure for /user.slice/... being 57.97% > 50.00% for > 20s with
        // reclaim activity`).
        let oomd = r"\bKilled (/\S+) due to memory pressure for (/\S+) being (\d+(?:\.\d+)?%) > (\d+(?:\.\d+)?%)";
        // Go's os/exec: a child ended by SIGKILL (ollama's `llama runner
        // process has terminated: signal: killed`).
        let go_signal = r"\bsignal: killed\b";
        // text-generation-inference's launcher for a child that SIGKILL
        // ended (`Shard process was signaled to shutdown with signal 9`,
        // also `Download process`, `Python Backend process`); other
        // signals are `signal::LauncherSignal`'s crashes.
        let launcher_signal = r"\bprocess was signaled to shutdown with signal 9\b";
        // Slurm's sentence after its oom-kill count (task/cgroup's memory
        // plugin), quoted alone or from the step id on: `in
        // StepId=5770797.batch. Some of your processes may have been
        // killed by the cgroup out-of-memory handler.`
        let slurm_handler = r"(?:\bin (?:StepId=|step )[\w.+]+(?: cgroup)?\.\s+)?\bSome of your processes may have been killed by the cgroup out-of-memory handler\b";
        // Only torchelastic's failure table (`  exitcode  : -9 (pid: N)`), not the
        // agent's `failed (exitcode: -9) local_rank: ...` line before it: one finding.
        let elastic_exit = r"^\s*exitcode\s*:\s*-9\b";
        let elastic_signal = r"\b[Ss]ignal 9 \(SIGKILL\) received by PID (\d+)";
        // The agent's line alone (a paste without the table); the scanner
        // drops it when the table follows.
        let elastic_agent = r"\bfailed \(exitcode: -9\) local_rank: (\d+) \(pid: (\d+)\)";
        let dataloader = r"\bDataLoader worker (?:\(pids?\(?s?\)?\s*([\d, ]+)\) )?is killed by signal: Killed\b";
        let sigkill = r"died with <Signals\.SIGKILL: 9>";
        // kubectl exec's report of the command's status, as the kubelet's
        // Docker shim words it (`command terminated with non-zero exit code:
        // Error executing in Docker Container: 137`), after `exit code` on
        // its line. A sign before 137 (`exit code -137`, as a poster wrote
        // it) is a slip: no signal is numbered 137, so it is read as the
        // status; so is one in a code span or quotes inside a sentence
        // (``exit code `-137`. This seems ...``), whose marks stay there.
        // Also Kubernetes' container status (`exitCode: 137`, YAML or JSON).
        // Docker's build step: `The command '/bin/sh -c ...' returned a
        // non-zero code: 137`.
        let exit_137 = r"(?i)\b(?:exit(?:s|ed|ing)?\s+with\s+(?:an?\s+)?(?:exit\s+|error\s+)?(?:code|status)|exit(?:s|ed|ing)\s+due\s+to|(?:exit|status|return)\s+(?:code|status)|exitCode\x22?|returned\s+non-zero\s+exit\s+status|returned\s+a\s+non-zero\s+code|error\s+exit\s+status|(?:exit\s+code:\s*)?Error\s+executing\s+in\s+Docker\s+Container:)\s*[:=]?\s*\(?[`'\x22]?-?137\b";
        // A negative status is a signal's number (Python's subprocess
        // returncode, DeepSpeed's launcher): -9 is SIGKILL, only after a
        // verb of exiting (`exits with return code = -9`, `exited with
        // code -9`); a bare `return code -9` is not taken.
        let exit_minus_9 = r"(?i)\bexit(?:s|ed|ing)?\s+with\s+(?:return\s+|exit\s+)?(?:code|status)\s*[:=]?\s*-9\b";
        let shell = r"\bline \d+:\s+(\d+) Killed\b";
        // The other shells' own report of a job SIGKILL ended, with the
        // command: zsh's `zsh: killed     python export.py` (its signal
        // name for SIGKILL is `killed`; with a job number, `[1]  + 4242
        // killed     python train.py`) and fish's `fish: Job 1, 'python
        // train.py' terminated by signal SIGKILL (Forced quit)`.
        let job_shell = r"(?:\bzsh: killed\s+(?P<zsh>\S.*)|^\s*\[\d+\]\s+(?:[+-]\s+)?(?:(?P<jobpid>\d+)\s+)?killed\s+(?P<job>\S.*)|\bfish: Job \d+, '(?P<fish>[^']*)' terminated by signal SIGKILL\b)";
        // Open MPI's launcher (`mpirun`, `mpiexec`, `orterun`, `prterun`)
        // on a rank a signal ended (help-errmgr-base.txt): `mpirun noticed
        // that process rank 7 with PID 1234 on node n01 exited on signal 9
        // (Killed).` SIGKILL only; other signals are crashes.
        let mpi_signal = r"\b(?P<launcher>mpirun|mpiexec|orterun|prterun|prte) noticed that process rank (?P<rank>\d+) with PID (?P<rankpid>\d+) on node (?P<node>\S+) exited on signal 9\b";
        // Ray's raylet when a worker's connection closed without the worker
        // saying why (NodeManager::HandleClientConnectionError): `Worker
        // unexpectedly exits with a connection error code 2. End of file.
        // There are some potential root causes. (1) The process is killed by
        // SIGKILL by OOM killer due to high memory usage. ...`. Ray's
        // documentation gives it as what a task sees when the Linux OOM
        // killer ended its worker; Ray's own memory monitor says so itself.
        let ray_worker = r"\bWorker unexpectedly exits with a connection error code (?P<code>\d+)\b";
        // The kernel's first line of an OOM kill, before its call trace.
        let invoked = r"\binvoked oom-killer: gfp_mask=";
        // nvcc's report of a compiler stage killed (`'cicc' died due to signal 9 (Kill signal)`).
        let died_signal = r"(?:'([\w.+-]+)' )?\bdied due to signal 9 \(Kill signal\)";
        let anchor = [
            kernel_kill,
            kill_line,
            constraint,
            reaper,
            slurm_events,
            slurm_task,
            slurm_limit,
            kubernetes,
            evicted,
            systemd,
            oomd,
            go_signal,
            launcher_signal,
            slurm_handler,
            elastic_exit,
            elastic_signal,
            elastic_agent,
            dataloader,
            sigkill,
            exit_137,
            exit_minus_9,
            shell,
            job_shell,
            mpi_signal,
            ray_worker,
            invoked,
            died_signal,
        ]
        .iter()
        .map(|p| format!("(?:{p})"))
        .collect::<Vec<_>>()
        .join("|");
        KillPatterns {
            anchor: re(&anchor),
            kernel_kill: re(kernel_kill),
            kill_line: re(kill_line),
            // Some kernels print the counts with thousands separators. Each
            // count after total-vm is read where it is printed: a line quoted
            // only up to one of them (`... total-vm:1048576kB,
            // anon-rss:614400kB`) still gives the ones it shows.
            kernel_rss: re(r"total-vm:(\d[\d,]*)(kB)(?:, anon-rss:(\d[\d,]*)(kB)(?:, file-rss:(\d[\d,]*)(kB)(?:, shmem-rss:(\d[\d,]*)(kB))?)?)?"),
            constraint: re(constraint),
            constraint_pid: re(r"\btask=([^,\s]+),pid=(\d+)"),
            reaper: re(reaper),
            slurm_events: re(slurm_events),
            slurm_task: re(slurm_task),
            slurm_limit: re(slurm_limit),
            kubernetes: re(kubernetes),
            evicted: re(evicted),
            // `thresholdMetMessageFmt` and both spellings of
            // `containerMessageFmt` (before and after Kubernetes 1.26).
            // Quantities as Kubernetes prints them (`100Mi`, `6817404Ki`, `1.5G`, `0`).
            evicted_threshold: re(
                r"\bThreshold quantity: (\d+(?:\.\d+)?[A-Za-z]*), available: (-?\d+(?:\.\d+)?[A-Za-z]*)",
            ),
            evicted_container: re(
                r"\bContainer ([\w.\-]+) was using (\d+(?:\.\d+)?[A-Za-z]*), (?:which exceeds its request of|request is) (\d+(?:\.\d+)?[A-Za-z]*)",
            ),
            systemd: re(systemd),
            oomd: re(oomd),
            go_signal: re(go_signal),
            launcher_signal: re(launcher_signal),
            slurm_handler: re(slurm_handler),
            elastic_exit: re(elastic_exit),
            elastic_exit_any: re(r"\bexitcode\s*:\s*-9\b"),
            elastic_signal: re(elastic_signal),
            elastic_agent: re(elastic_agent),
            elastic_block: re(
                r"^\s*(?:\[\d+\]:|time\s*:|host\s*:|rank\s*:|exitcode\s*:|error_file\s*:|traceback\s*:|Signal \d+|-{8,}|={8,}|Root Cause|Failures:|<NO_OTHER_FAILURES>)",
            ),
            dataloader: re(dataloader),
            sigkill: re(sigkill),
            exit_137: re(exit_137),
            exit_minus_9: re(exit_minus_9),
            shell: re(shell),
            job_shell: re(job_shell),
            mpi_signal: re(mpi_signal),
            ray_worker: re(ray_worker),
            ray_worker_pid: re(r"\bWorker PID: (\d+)"),
            invoked: re(invoked),
            died_signal: re(died_signal),
            // The badness the kernel printed before 5.x (`Kill process N
            // (name) score S or sacrifice child`): the victim's share of
            // RAM plus swap in thousandths, its oom_score_adj included.
            score: re(r"\bKill process \d+ \([^)]*\) score (\d+) or sacrifice child"),
            score_adj: re(r"\boom_score_adj:(-?\d+)"),
            oomd_duration: re(r"\bfor > (\d+(?:\.\d+)?(?:ms|s|min))\b"),
            // docker compose's service column without a replica number
            // (`scalellm          | `), which the normaliser leaves.
            compose_prefix: re(r"^([\w.-]+)\s+\|\s"),
            // docker compose's own line about a service's end
            // (`scalellm exited with code 137`): the service is the prefix.
            exit_service: re(r"^([\w.-]+)\s+$"),
            continuation: re(
                r"(?:Out of memory: Kill|Memory cgroup out of memory: Kill|Killed process \d+|oom_reaper: reaped|Some of (?:your processes|the step tasks) (?:may )?ha(?:ve|s) been|\btask(?:s)? [\d,\-]+: Out Of Memory|(?i:exit code:\s*137\b))",
            ),
        }
    })
}

/// `Killed` alone on a line, or right after a progress bar (`1.28it/s]Killed`),
/// as a shell prints when its child died of SIGKILL: the offset of the word.
/// A line of the kernel's report between `invoked oom-killer` and its
/// memory tables: the task's cpuset, CPU and hardware, the call trace.
fn is_oom_report_line(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("CPU: ")
        || ["cpuset=", "Hardware name:", "Call Trace:", "+0x", "RIP: "]
            .iter()
            .any(|w| line.contains(w))
}

fn bare_killed(line: &str) -> Option<usize> {
    // A paste may set the word alone in bold or code (`**Killed**`); the
    // message is then the whole line.
    if ["**Killed**", "__Killed__", "`Killed`"].contains(&line.trim()) {
        return Some(0);
    }
    // bash prints `已杀死` under a Chinese locale.
    let line = line.trim_end();
    // bash on macOS prints the C library's description, `Killed: 9`.
    let before = line
        .strip_suffix("Killed")
        .or_else(|| line.strip_suffix("Killed: 9"))
        .or_else(|| line.strip_suffix("已杀死"))?;
    let b = before.trim_end();
    (b.is_empty() || b.ends_with(']')).then_some(before.len())
}

/// An empty shell prompt (`(.env) user@host:~/dir$`, `[user@host dir]$`,
/// `root@host:/#`): the shell came back after the command it ran, so the
/// output before it ended there.
fn empty_prompt(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        re(r"^\s*(?:\([^()]*\)\s*)?(?:[\w.-]+@[\w.-]+(?::\S*)?|\[[\w.-]+@[\w.-]+[^\]]*\])\s?[$#%]\s*$")
    })
    .is_match(line)
}

/// The program of the command bash printed after `Killed` (`python
/// train.py`, `LD_LIBRARY_PATH=/app/lib /app/bin/scalellm $ARGS`): the first
/// word that is not a variable assignment or a wrapper, without its
/// directory.
fn killed_program(command: &str) -> Option<String> {
    const WRAPPERS: &[&str] = &["sudo", "env", "nohup", "exec", "time", "nice", "stdbuf"];
    let word = command.split_whitespace().find(|w| {
        let assignment = w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        !assignment && !WRAPPERS.contains(w) && !w.starts_with('-')
    })?;
    let program = word.rsplit('/').next().unwrap_or(word);
    (!program.is_empty() && !program.starts_with('$')).then(|| program.to_string())
}

/// Whether the exit status at `at` is a sentence's supposition rather than
/// a report: a poster's verb of exiting (`exits with code 137`, `exiting
/// due to 137`, the forms a program's own line never takes) in a
/// condition's clause (`If the container exits with code 137, ...`, `when`,
/// `unless`) or in a question (`Why does it exit with code 137?`). A
/// program's line (`exited with code 137`) is read as before.
pub(super) fn supposed_exit(line: &str, at: usize) -> bool {
    static RE: OnceLock<(Regex, Regex)> = OnceLock::new();
    let (verb, condition) = RE.get_or_init(|| {
        (
            re(r"(?i)^exit(?:s|ing)?\s+(?:with|due)\b"),
            re(r"(?i)\b(?:if|when|whenever|unless|whether|once|avoid|prevent|why|how|what|does|do)\b"),
        )
    });
    let Some(rest) = line.get(at..) else {
        return false;
    };
    if !verb.is_match(rest) {
        return false;
    }
    let before = &line[..at];
    let clause = before
        .rfind(['.', ',', ';', ':', '!', '?'])
        .map_or(before, |end| &before[end + 1..]);
    let question = rest
        .split(['.', '!'])
        .next()
        .is_some_and(|sentence| sentence.contains('?'));
    condition.is_match(clause) || question
}

/// Kernel OOM killer, Slurm and Kubernetes memory kills, and SIGKILL exits.
pub struct Killed;

impl Family for Killed {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "out of memory: Kill",
            "Out of memory: Kill",
            "Out of memory (oom_kill_allocating_task)",
            "oom-kill:constraint",
            "oom_reaper: reaped",
            "oom-kill event",
            "oom_kill event",
            ": Out Of Memory",
            "exceeded memory limit",
            "OOMKilled",
            "low on resource: memory",
            "exitcode",
            "(SIGKILL) received by PID",
            "is killed by signal: Killed",
            "signal: killed",
            // text-generation-inference's launcher (SIGKILL here; the other
            // signals are `signal::LauncherSignal`'s): on the piece `led `.
            "signaled to shutdown with signal",
            // Slurm's sentence quoted alone (under the `kille` literal).
            "killed by the cgroup out-of-memory handler",
            "Failed with result 'oom-kill'",
            "<Signals.SIGKILL: 9>",
            "died due to signal 9",
            // An exit status (137) is only taken next to the words that make
            // it one: a bare "137" is in every log's numbers. `start` then
            // requires the 137.
            "xit code",
            "xit Code",
            "XIT CODE",
            "xit status",
            "xit Status",
            "XIT STATUS",
            "xited with",
            "xit with",
            // The same status after any form of the verb, in a poster's
            // sentence (`exits with code 137`, `exiting due to 137`): one
            // rare piece each (`xits`, `xiti`).
            "xits with",
            "xiting ",
            "xitCode",
            // Docker's build step (under the `returned ` literal).
            "returned a non-zero code",
            // A status stated in a report's prose with what it means
            // (`Status code 137 indicates OOM error in the docker
            // container.`): the words a status of 137 is named with vary
            // (`status code`, `return code`), the out-of-memory words on
            // its line are the literal (under `rror`, which the prefilter
            // already searches for).
            "OOM error",
            "OOM Error",
            // zsh's and fish's reports of a job SIGKILL ended (`zsh: killed
            // python x.py`, `[1]    8550 killed     python3 si.py`, `fish:
            // Job 1, '...' terminated by signal SIGKILL`), and Ray's raylet
            // on a worker gone without a word: no new literal (under the
            // grammar's `kille`, `SIGKILL` and `xits with`).
            "zsh: killed",
            " killed ",
            "terminated by signal SIGKILL",
            "Worker unexpectedly exits with",
            // Also the kernel's `Killed process N` line once its timestamp is cut.
            "Killed",
            "已杀死",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        kill_patterns()
            .anchor
            .find(line)
            .filter(|m| !supposed_exit(line, m.start()))
            .map(|m| m.start())
            .or_else(|| bare_killed(line))
    }

    /// The exit statuses and signal numbers it starts on (`exitcode: -9`,
    /// `exit code 137`, `signal 9`, `SIGKILL: 9`), in any case; elsewhere
    /// the patterns match digits as a class.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&["exit", "ignal", "SIGKILL", "non-zero code"])
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        let p = kill_patterns();
        let first = lines.first().map_or("", String::as_str);
        if bare_killed(first).is_some() {
            // Take the next line to see whether the output ended there; a
            // line that may start another message is left to it.
            let errorish = ["rror", "memory", "Traceback", "Killed", "OOM", "xception"]
                .iter()
                .any(|w| next.contains(w));
            // An empty prompt is the shell's own line after the command
            // ended; nothing after it is the command's.
            let prompted = lines[1..].iter().any(|l| empty_prompt(l));
            return lines.len() < 4
                && !prompted
                && lines[1..].iter().all(|l| l.trim().is_empty())
                && (!errorish || empty_prompt(next));
        }
        if p.elastic_exit.is_match(first) || p.elastic_signal.is_match(first) {
            // The rest of torchelastic's failure table.
            return lines.len() < 200 && p.elastic_block.is_match(next);
        }
        // The kernel's report after `invoked oom-killer`: its cpuset, CPU
        // and hardware lines and the call trace, which shows a memory
        // cgroup's limit (mem_cgroup_out_of_memory) rather than the machine's.
        if p.invoked.is_match(first) && lines.len() < 64 && is_oom_report_line(next) {
            return true;
        }
        if lines.len() >= 4 {
            return false;
        }
        // The kernel's and Slurm's follow-up lines about the same kill.
        p.continuation.is_match(next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = kill_patterns();
        let text = message.lines.join("\n");
        let joined = message.joined();
        let mut finding = message.finding(Kind::HostOomKilled, text.trim_end().to_string());
        finding.backend = Some("cpu".into());
        let mut notes = Vec::new();
        let mut sizes = SizeReader::new(&mut notes);
        let explicit = |f: &mut Finding, era: Era| {
            f.era = Some(era);
            f.category = Category::Oom;
        };

        if let Some(c) = p.constraint.captures(&joined) {
            let memcg = &c[1] == "CONSTRAINT_MEMCG";
            explicit(&mut finding, if memcg { Era::Cgroup } else { Era::Kernel });
            finding.facts.insert("constraint".into(), c[1].to_string());
            if let Some(t) = p.constraint_pid.captures(&joined) {
                finding.facts.insert(fact::PROCESS.into(), t[1].to_string());
                finding.facts.insert(fact::PID.into(), t[2].to_string());
            }
        }
        if let Some(c) = p.kernel_kill.captures(&joined) {
            let memcg = c[0].starts_with("Memory cgroup");
            if finding.era.is_none() || memcg {
                explicit(&mut finding, if memcg { Era::Cgroup } else { Era::Kernel });
            }
            finding.facts.insert(fact::PID.into(), c[1].to_string());
            finding.facts.insert(fact::PROCESS.into(), c[2].to_string());
        } else if let Some(c) = p.kill_line.captures(&joined) {
            if finding.era.is_none() {
                explicit(&mut finding, Era::Kernel);
            }
            finding.facts.insert(fact::PID.into(), c[1].to_string());
            finding.facts.insert(fact::PROCESS.into(), c[2].to_string());
        } else if p.invoked.is_match(&joined) {
            if finding.era.is_none() {
                explicit(&mut finding, Era::Kernel);
            }
            // The kill line with the process and its sizes follows.
            finding.facts.insert("report".into(), "invoked".into());
        } else if let Some(c) = p.reaper.captures(&joined) {
            if finding.era.is_none() {
                explicit(&mut finding, Era::Kernel);
            }
            finding.facts.insert(fact::PID.into(), c[1].to_string());
            finding.facts.insert(fact::PROCESS.into(), c[2].to_string());
        }
        if let Some(score) = int::<u64>(&p.score, &joined, 1) {
            finding.facts.insert("oom_score".into(), score.to_string());
        }
        if let Some(adj) = p.score_adj.captures(&joined) {
            finding
                .facts
                .insert("oom_score_adj".into(), adj[1].to_string());
        }
        // `Kill process N ... or sacrifice child` then `Killed process M`:
        // the kernel killed a child of the process it chose, and the sizes
        // printed are the child's.
        if let (Some(chosen), Some(killed)) = (
            p.kernel_kill.captures(&joined),
            p.kill_line.captures(&joined),
        ) {
            if chosen[1] != killed[1] {
                finding
                    .facts
                    .insert("killed_child".into(), killed[1].to_string());
            }
        }
        if finding.era == Some(Era::Kernel) && joined.contains("mem_cgroup_out_of_memory") {
            explicit(&mut finding, Era::Cgroup);
        }
        if let Some(c) = p.kernel_rss.captures(&joined) {
            let mut put = |key: &str, at: usize, what: &str| {
                let v = sizes.read(&c, at, what);
                finding.sizes.extra.insert(key.into(), v);
            };
            put("total_vm_bytes", 1, "total-vm");
            for (key, at, what) in [
                ("anon_rss_bytes", 3, "anon-rss"),
                ("file_rss_bytes", 5, "file-rss"),
                ("shmem_rss_bytes", 7, "shmem-rss"),
            ] {
                if c.get(at).is_some() {
                    put(key, at, what);
                }
            }
        }

        if finding.era.is_none() {
            if let Some(c) = p.slurm_events.captures(&joined) {
                explicit(&mut finding, Era::Slurm);
                finding
                    .facts
                    .insert(fact::OOM_KILL_EVENTS.into(), c[1].to_string());
                finding.facts.insert(fact::STEP.into(), c[2].to_string());
            } else if let Some(c) = p.slurm_limit.captures(&joined) {
                explicit(&mut finding, Era::Slurm);
                finding.facts.insert(fact::USAGE.into(), c[1].to_string());
                finding.facts.insert(fact::LIMIT.into(), c[2].to_string());
            } else if p.slurm_task.is_match(&joined) || p.slurm_handler.is_match(&joined) {
                explicit(&mut finding, Era::Slurm);
            } else if let Some(c) = p.oomd.captures(&joined) {
                // Pressure, not exhaustion: systemd-oomd acts before the
                // kernel's killer would, on a threshold the machine sets.
                finding.era = Some(Era::Systemd);
                let unit = c[1].rsplit('/').next().unwrap_or(&c[1]).to_string();
                finding.facts.insert("unit".into(), unit);
                finding.facts.insert("killer".into(), "systemd-oomd".into());
                finding.facts.insert("cgroup".into(), c[2].to_string());
                finding.facts.insert("pressure".into(), c[3].to_string());
                finding
                    .facts
                    .insert("pressure_limit".into(), c[4].to_string());
                if let Some(d) = p.oomd_duration.captures(&joined) {
                    finding
                        .facts
                        .insert("pressure_duration".into(), d[1].to_string());
                }
            } else if let Some(c) = p.systemd.captures(&joined) {
                explicit(&mut finding, Era::Systemd);
                finding.facts.insert("unit".into(), c[1].to_string());
            } else if p.kubernetes.is_match(&joined) {
                explicit(&mut finding, Era::Kubernetes);
                finding
                    .facts
                    .insert(fact::REASON.into(), "OOMKilled".into());
            } else if p.evicted.is_match(&joined) {
                explicit(&mut finding, Era::Kubernetes);
                finding
                    .facts
                    .insert(fact::REASON.into(), fact::EVICTED.into());
                if let Some(c) = p.evicted_threshold.captures(&joined) {
                    finding.facts.insert("threshold".into(), c[1].to_string());
                    finding.facts.insert("available".into(), c[2].to_string());
                }
                if let Some(c) = p.evicted_container.captures(&joined) {
                    finding.facts.insert("container".into(), c[1].to_string());
                    finding.facts.insert("used".into(), c[2].to_string());
                    finding.facts.insert("request".into(), c[3].to_string());
                }
            } else if p.elastic_exit.is_match(&joined) || p.elastic_signal.is_match(&joined) {
                finding.era = Some(Era::Torchelastic);
                let pids: Vec<String> = p
                    .elastic_signal
                    .captures_iter(&joined)
                    .map(|c| c[1].to_string())
                    .collect();
                let killed = p
                    .elastic_exit_any
                    .find_iter(&joined)
                    .count()
                    .max(pids.len());
                finding
                    .facts
                    .insert(fact::SIGNAL.into(), "SIGKILL (9)".into());
                finding.facts.insert("exit_code".into(), "-9".into());
                finding
                    .facts
                    .insert(fact::KILLED_PROCESSES.into(), killed.to_string());
                if !pids.is_empty() {
                    finding.facts.insert(fact::PIDS.into(), pids.join(", "));
                }
            } else if let Some(c) = p.elastic_agent.captures(&joined) {
                finding.era = Some(Era::Torchelastic);
                finding.facts.insert("report".into(), "agent".into());
                finding.facts.insert("signal".into(), "SIGKILL (9)".into());
                finding.facts.insert("exit_code".into(), "-9".into());
                finding.facts.insert("local_rank".into(), c[1].to_string());
                finding.facts.insert("pid".into(), c[2].to_string());
            } else if let Some(c) = p.dataloader.captures(&joined) {
                finding.era = Some(Era::Dataloader);
                finding
                    .facts
                    .insert(fact::SIGNAL.into(), "SIGKILL (9)".into());
                if let Some(pid) = c.get(1) {
                    finding
                        .facts
                        .insert(fact::PID.into(), pid.as_str().trim().to_string());
                }
            } else if let Some(c) = p.ray_worker.captures(&joined) {
                finding.era = Some(Era::RayWorker);
                finding.facts.insert("manager".into(), "Ray".into());
                finding
                    .facts
                    .insert("connection_error".into(), c["code"].to_string());
                // The raylet's line names the worker before its exit detail
                // (`Worker PID: 89513 Worker exit type: SYSTEM_ERROR Worker
                // exit detail: ...`).
                let with_prefix = format!("{}{joined}", message.prefix);
                if let Some(pid) = int::<u64>(&p.ray_worker_pid, &with_prefix, 1) {
                    finding.facts.insert(fact::PID.into(), pid.to_string());
                }
            } else if let Some(c) = p.mpi_signal.captures(&joined) {
                finding.era = Some(Era::Mpi);
                finding
                    .facts
                    .insert(fact::SIGNAL.into(), "SIGKILL (9)".into());
                finding
                    .facts
                    .insert("launcher".into(), c["launcher"].to_string());
                finding
                    .facts
                    .insert(fact::RANK.into(), c["rank"].to_string());
                finding.facts.insert("node".into(), c["node"].to_string());
                // Open MPI prints PID 0 where it did not learn the rank's
                // process id: no PID then.
                if &c["rankpid"] != "0" {
                    finding
                        .facts
                        .insert(fact::PID.into(), c["rankpid"].to_string());
                }
            } else if let Some(c) = p.job_shell.captures(&joined) {
                finding.era = Some(Era::Shell);
                finding
                    .facts
                    .insert(fact::SIGNAL.into(), "SIGKILL (9)".into());
                let shell = if c.name("fish").is_some() {
                    "fish"
                } else {
                    "zsh"
                };
                finding.facts.insert("shell".into(), shell.into());
                if let Some(pid) = c.name("jobpid") {
                    finding
                        .facts
                        .insert(fact::PID.into(), pid.as_str().to_string());
                }
                let command = c
                    .name("zsh")
                    .or(c.name("job"))
                    .or(c.name("fish"))
                    .map_or("", |m| m.as_str());
                if let Some(program) = killed_program(command) {
                    finding.facts.insert(fact::PROCESS.into(), program);
                }
            } else if p.sigkill.is_match(&joined)
                || p.died_signal.is_match(&joined)
                || p.go_signal.is_match(&joined)
                || p.launcher_signal.is_match(&joined)
                || p.exit_minus_9.is_match(&joined)
            {
                finding.era = Some(Era::Sigkill);
                finding.facts.insert("signal".into(), "SIGKILL (9)".into());
                if p.exit_minus_9.is_match(&joined) {
                    finding.facts.insert("exit_code".into(), "-9".into());
                }
                // nvcc names the compiler stage it lost (`'cicc' died due
                // to signal 9`), in the message or just before it.
                let with_prefix = format!("{}{joined}", message.prefix);
                let stage = p
                    .died_signal
                    .captures(&with_prefix)
                    .and_then(|c| c.get(1).map(|m| m.as_str().to_string()));
                if let Some(name) = stage {
                    finding.facts.insert(fact::PROCESS.into(), name);
                }
            } else if p.exit_137.is_match(&joined) {
                finding.era = Some(Era::Exit137);
                finding.facts.insert("exit_code".into(), "137".into());
                if let Some(c) = p.exit_service.captures(message.prefix) {
                    if joined.starts_with("exited with code") {
                        finding.facts.insert("service".into(), c[1].to_string());
                    }
                }
                finding
                    .facts
                    .insert(fact::SIGNAL.into(), "SIGKILL (9) = 137 − 128".into());
            } else if bare_killed(message.lines.first().map_or("", String::as_str)).is_some() {
                // Only when nothing but blank lines follows: a bare `Killed`
                // that ends the output. One in the middle of a log is too
                // weak to report.
                // Prose typed after a paste (no numbers, no `field:`) is
                // not more output.
                if message.lines[1..].iter().any(|l| {
                    !l.trim().is_empty()
                        && !empty_prompt(l)
                        && (l.contains(':') || l.chars().any(|c| c.is_ascii_digit()))
                }) {
                    return None;
                }
                finding.era = Some(Era::BareKilled);
                finding.text = message
                    .lines
                    .iter()
                    .filter(|l| !empty_prompt(l))
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join("\n")
                    .trim_end()
                    .to_string();
                finding
                    .facts
                    .insert(fact::SIGNAL.into(), "SIGKILL (9)".into());
                // A tqdm progress bar the `Killed` ends (`Loading checkpoint
                // shards:  38%|... | 3/8 [00:02<00:03,  1.28it/s]Killed`):
                // Python was running, and what it was doing.
                let bar = message.prefix.trim();
                if bar.ends_with(']')
                    && (bar.contains("it/s") || bar.contains("s/it") || bar.contains("<?"))
                {
                    let label = bar.split(['|', ':']).next().unwrap_or("").trim();
                    finding
                        .facts
                        .insert("progress_bar".into(), label.chars().take(80).collect());
                }
                finding.notes.push(
                    crate::say!(
                        en: "the output ends with the shell's `Killed`: the process got SIGKILL, most often from the kernel's OOM killer",
                        zh: "输出以 shell 打印的 `Killed` 结尾：进程收到了 SIGKILL，最常见的是内核的 OOM killer 发出的",
                    )
                    .into(),
                );
            } else if let Some(c) = p.shell.captures(&joined) {
                finding.era = Some(Era::Shell);
                finding
                    .facts
                    .insert(fact::SIGNAL.into(), "SIGKILL (9)".into());
                finding.facts.insert(fact::PID.into(), c[1].to_string());
                if let Some(program) = c.get(0).and_then(|m| killed_program(&joined[m.end()..])) {
                    finding.facts.insert(fact::PROCESS.into(), program);
                }
            }
        }
        if let Some(c) = p.compose_prefix.captures(message.prefix) {
            finding
                .facts
                .entry("service".into())
                .or_insert_with(|| c[1].to_string());
        }
        if p.kubernetes.is_match(&joined) && finding.era != Some(Era::Kubernetes) {
            finding
                .facts
                .insert(fact::REASON.into(), "OOMKilled".into());
        }
        if let Some(n) = int::<u64>(&p.slurm_events, &joined, 1) {
            finding
                .facts
                .insert(fact::OOM_KILL_EVENTS.into(), n.to_string());
        }
        finding.era.as_ref()?;
        finding.notes = notes;
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_with(family: &dyn Family, lines: &[&str]) -> Option<Finding> {
        crate::detect::decode_lines(family, lines)
    }

    /// Hard-wrapped before its figure (fixtures/wild/1447.txt); a line that
    /// does not complete the sentence is not taken.
    #[test]
    fn cpu_allocator_wrapped_before_its_figure() {
        let first = r"RuntimeError: [enforce fail at ..\c10\core\CPUAllocator.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried";
        let f = decode_with(
            &CpuAllocator,
            &[first, "to allocate 16777216000 bytes. Buy new RAM!"],
        )
        .unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(16_777_216_000));
        let f = decode_with(
            &CpuAllocator,
            &[first, "Traceback (most recent call last):"],
        )
        .unwrap();
        assert_eq!(f.sizes.requested_bytes, None);
        assert!(!f.text.contains("Traceback"));
    }

    #[test]
    fn cpu_allocator_spellings() {
        // (line, requested, era, errno)
        let cases: &[(&str, u64, &str, Option<&str>)] = &[
            ("RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 8000000000000 bytes. Error code 12 (Cannot allocate memory)", 8_000_000_000_000, "posix", Some("12")),
            (r"RuntimeError: [enforce fail at ..\c10\core\impl\alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate 1207959552 bytes.", 1_207_959_552, "not_enough_memory", None),
            (r"RuntimeError: [enforce fail at ..\c10\core\CPUAllocator.cpp:73] data. DefaultCPUAllocator: not enough memory: you tried to allocate 9437184 bytes. Buy new RAM!", 9_437_184, "buy_new_ram", None),
            ("DefaultCPUAllocator: can't allocate memory: you tried to allocate 4096 bytes. Error code 12 (Cannot allocate memory)", 4096, "posix", Some("12")),
        ];
        for &(line, bytes, era, errno) in cases {
            let f = decode_with(&CpuAllocator, &[line]).expect(line);
            assert_eq!(f.kind, Kind::HostOom);
            assert_eq!(f.sizes.requested_bytes, Some(bytes), "{line}");
            assert_eq!(f.era.map(Era::slug), Some(era), "{line}");
            assert_eq!(f.facts.get("errno").map(String::as_str), errno);
            assert_eq!(f.backend.as_deref(), Some("cpu"));
        }
        let f = decode_with(&CpuAllocator, &[cases[0].0]).unwrap();
        assert_eq!(f.exception.as_deref(), Some("RuntimeError"));
        assert_eq!(f.facts["raised_at"], "alloc_cpu.cpp:117");
        assert_eq!(f.facts["failed_check"], "err == 0");
        assert_eq!(f.facts["strerror"], "Cannot allocate memory");
        let f = decode_with(&CpuAllocator, &[cases[1].0]).unwrap();
        assert_eq!(f.facts["raised_at"], r"..\c10\core\impl\alloc_cpu.cpp:72");
        assert_eq!(f.facts["failed_check"], "data");
    }

    #[test]
    fn kill_spellings_and_categories() {
        // (lines, era, category)
        let cases: &[(&[&str], &str, Category)] = &[
            (&["Out of memory: Killed process 48213 (python) total-vm:98765432kB, anon-rss:61234567kB, file-rss:1024kB, shmem-rss:0kB, UID:1000 pgtables:123456kB oom_score_adj:0"], "kernel", Category::Oom),
            (&["Out of memory: Kill process 48213 (python) score 912 or sacrifice child", "Killed process 48213 (python) total-vm:98765432kB, anon-rss:61234567kB, file-rss:0kB"], "kernel", Category::Oom),
            (&["oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice,task=python,pid=48213,uid=1000", "Out of memory: Killed process 48213 (python) total-vm:98765432kB, anon-rss:61234567kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:123456kB oom_score_adj:0", "oom_reaper: reaped process 48213 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB"], "kernel", Category::Oom),
            (&["Memory cgroup out of memory: Killed process 7781 (python3) total-vm:40000000kB, anon-rss:31000000kB, file-rss:0kB, shmem-rss:0kB"], "cgroup", Category::Oom),
            (&["oom_reaper: reaped process 48213 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB"], "kernel", Category::Oom),
            (&["slurmstepd: error: Detected 1 oom-kill event(s) in StepId=2003702.batch. Some of your processes may have been killed by the cgroup out-of-memory handler."], "slurm", Category::Oom),
            (&["slurmstepd: error: Detected 1 oom-kill event(s) in step 12345.batch cgroup."], "slurm", Category::Oom),
            (&["Jul 02 10:11:12 nixos systemd[1]: ollama.service: Failed with result 'oom-kill'."], "systemd", Category::Oom),
            // systemd-oomd's kill for memory pressure (1921).
            (&["12月 17 10:04:41 user systemd-oomd[588]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/vte-spawn-f6518140-41fe-4a13-b828-55c5b8738fb8.scope due to memory pressure for /user.slice/user-1000.slice/user@1000.service being 57.97% > 50.00% for > 20s with reclaim activity"], "systemd", Category::LikelyOom),
            (&["time=2025-03-12T12:14:22.015Z level=ERROR source=sched.go:456 msg=\"error loading llama server\" error=\"llama runner process has terminated: signal: killed\""], "sigkill", Category::LikelyOom),
            (&["error: Detected 2 oom_kill events in StepId=22035606.1. Some of the step tasks have been OOM Killed."], "slurm", Category::Oom),
            (&["srun: error: node17: task 0: Out Of Memory"], "slurm", Category::Oom),
            (&["slurmstepd: error: StepId=7.batch exceeded memory limit (734003200 > 52428800), being killed"], "slurm", Category::Oom),
            (&["    Reason:       OOMKilled"], "kubernetes", Category::Oom),
            (&["  exitcode  : -9 (pid: 56213)", "  error_file: <N/A>", "  traceback : Signal 9 (SIGKILL) received by PID 56213"], "torchelastic", Category::LikelyOom),
            (&["RuntimeError: DataLoader worker (pid 191071) is killed by signal: Killed. "], "dataloader", Category::LikelyOom),
            (&["subprocess.CalledProcessError: Command '['/usr/bin/python', 'train.py']' died with <Signals.SIGKILL: 9>."], "sigkill", Category::LikelyOom),
            (&["trainer-1 exited with code 137"], "exit_137", Category::LikelyOom),
            (&["Process `STAR_ALIGN` terminated with an error exit status (137)"], "exit_137", Category::LikelyOom),
            (&["subprocess.CalledProcessError: Command 'python train.py' returned non-zero exit status 137."], "exit_137", Category::LikelyOom),
            (&["Exit Code:    137"], "exit_137", Category::LikelyOom),
            (&["command terminated with non-zero exit code: Error executing in Docker Container: 137"], "exit_137", Category::LikelyOom),
            (&["containers exiting/restarting with exit code `-137`. This seems to happen predominantly around deployments."], "exit_137", Category::LikelyOom),
            // A report's prose that states the status (wild paste).
            (&["Status code 137 indicates OOM error in the docker container."], "exit_137", Category::LikelyOom),
            (&["/var/spool/slurmd/job123/slurm_script: line 12: 48213 Killed                  python train.py"], "shell", Category::LikelyOom),
        ];
        for &(lines, era, category) in cases {
            let f = decode_with(&Killed, lines).unwrap_or_else(|| panic!("{lines:?}"));
            assert_eq!(f.kind, Kind::HostOomKilled);
            assert_eq!(f.era.map(Era::slug), Some(era), "{lines:?}");
            assert_eq!(f.category, category, "{lines:?}");
            assert_eq!(f.text.lines().count(), lines.len(), "{lines:?}");
        }
    }

    #[test]
    fn systemd_oomd_kill_is_read_with_its_pressure() {
        let line = "Killed /user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/vte-spawn-f6518140-41fe-4a13-b828-55c5b8738fb8.scope due to memory pressure for /user.slice/user-1000.slice/user@1000.service being 57.97% > 50.00% for > 20s with reclaim activity";
        let f = decode_with(&Killed, &[line]).unwrap();
        assert_eq!(f.facts["killer"], "systemd-oomd");
        assert_eq!(
            f.facts["unit"],
            "vte-spawn-f6518140-41fe-4a13-b828-55c5b8738fb8.scope"
        );
        assert_eq!(
            (
                f.facts["pressure"].as_str(),
                f.facts["pressure_limit"].as_str()
            ),
            ("57.97%", "50.00%")
        );
        // Words about it, without the cgroups and figures, are not its line.
        for prose in [
            "systemd-oomd Killed my terminal due to memory pressure for the user slice",
            "Killed /user.slice/x.scope due to memory pressure for /user.slice being high",
        ] {
            assert!(Killed.start(prose).is_none(), "{prose}");
        }
    }

    /// The kubelet's eviction message as `kubectl describe pod` shows it, put
    /// together from pkg/kubelet/eviction/helpers.go: `nodeLowMessageFmt`,
    /// `thresholdMetMessageFmt` and `containerMessageFmt` before 1.26 and after.
    #[test]
    fn kubelet_eviction_for_memory_is_read_with_its_figures() {
        let old = "Message:        The node was low on resource: memory. Threshold quantity: 100Mi, available: 4328Ki. Container trainer was using 6817404Ki, which exceeds its request of 0. ";
        let new = "Message:        The node was low on resource: memory. Threshold quantity: 100Mi, available: 4328Ki. Container trainer was using 6817404Ki, request is 2Gi, has larger consumption of memory. ";
        for (line, request) in [(old, "0"), (new, "2Gi")] {
            let f = decode_with(&Killed, &[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(f.era, Some(Era::Kubernetes));
            assert_eq!(f.category, Category::Oom);
            assert_eq!(f.facts[fact::REASON], fact::EVICTED);
            assert_eq!(f.facts["container"], "trainer");
            assert_eq!(f.facts["used"], "6817404Ki");
            assert_eq!(f.facts["request"], request);
            assert_eq!(f.facts["threshold"], "100Mi");
            assert_eq!(f.facts["available"], "4328Ki");
        }
        // Disk pressure evicts too, but that is not memory.
        let disk = "Message:        The node was low on resource: ephemeral-storage. Container trainer was using 52Gi, which exceeds its request of 0. ";
        assert!(decode_with(&Killed, &[disk]).is_none());
    }

    #[test]
    fn a_kill_line_quoted_short_keeps_the_counts_it_shows() {
        // A blog's dmesg quote, cut after anon-rss.
        let f = decode_with(&Killed, &["Out of memory: Killed process 14821 (postgres) total-vm:1048576kB, anon-rss:614400kB"]).unwrap();
        assert_eq!(f.facts["pid"], "14821");
        let e = |k: &str| f.sizes.extra.get(k).copied().flatten();
        assert_eq!(e("total_vm_bytes"), Some(1_048_576 * 1024));
        assert_eq!(e("anon_rss_bytes"), Some(614_400 * 1024));
        assert!(!f.sizes.extra.contains_key("file_rss_bytes"));
        assert!(!f.sizes.extra.contains_key("shmem_rss_bytes"));
    }

    #[test]
    fn kernel_numbers_are_bytes() {
        let f = decode_with(&Killed, &["Out of memory: Killed process 48213 (python) total-vm:98765432kB, anon-rss:61234567kB, file-rss:1024kB, shmem-rss:0kB, UID:1000 pgtables:123456kB oom_score_adj:0"]).unwrap();
        assert_eq!(f.facts["pid"], "48213");
        assert_eq!(f.facts["process"], "python");
        let e = |k: &str| f.sizes.extra.get(k).copied().flatten();
        assert_eq!(e("total_vm_bytes"), Some(98_765_432 * 1024));
        assert_eq!(e("anon_rss_bytes"), Some(61_234_567 * 1024));
        assert_eq!(e("file_rss_bytes"), Some(1024 * 1024));
        assert_eq!(e("shmem_rss_bytes"), Some(0));
    }

    #[test]
    fn torchelastic_table_is_one_finding() {
        let lines = [
            "  exitcode  : -9 (pid: 1798)",
            "  error_file: <N/A>",
            "  traceback : Signal 9 (SIGKILL) received by PID 1798",
            "[2]:",
            "  time      : 2024-06-28_09:59:18",
            "  host      : gpu-node-3",
            "  rank      : 1 (local_rank: 1)",
            "  exitcode  : -9 (pid: 1799)",
            "  error_file: <N/A>",
            "  traceback : Signal 9 (SIGKILL) received by PID 1799",
            "============================================================",
            "Epoch 3",
        ];
        let f = decode_with(&Killed, &lines).unwrap();
        assert_eq!(f.text.lines().count(), 11);
        assert_eq!(f.facts["killed_processes"], "2");
        assert_eq!(f.facts["pids"], "1798, 1799");
    }

    #[test]
    fn exit_statuses_in_a_posters_sentence() {
        for line in [
            "my docker container seems to be exiting due to 137. I tried setting the memory to be at 1GB",
            "It hangs on `making attention` for a while and then exits with code 137.",
            "my container keeps exiting with code 137 after a minute.",
            "\"exits with return code = -9.\"",
            "all containers exits with error code 137. Only Redis and Postgres container is working.",
        ] {
            assert!(Killed.start(line).is_some(), "{line}");
        }
        // A supposition or a question is no report.
        for line in [
            "If the container exits with code 137, it was killed.",
            "What does it mean when a pod is exiting due to 137?",
            "Why does my job exit with code 137?",
        ] {
            assert!(Killed.start(line).is_none(), "{line}");
        }
    }

    #[test]
    fn bare_numbers_are_not_findings() {
        for line in [
            "step 137 loss 0.42",
            "exitcode: 0",
            "  exitcode  : 1 (pid: 42)",
            "return code -9",
            "killed 137 processes",
            "timeout after 137 s",
            "Signal 15 (SIGTERM) received by PID 1798",
            "DataLoader worker (pid 123) is killed by signal: Bus error.",
            "PodOOMKilledAlert fired",
            "exit code 1370",
            "Status code 1370 indicates OOM error",
            "HTTP status code 413 means the OOM error report was too large",
            "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 0 (pid: 1798) of binary: /usr/bin/python3",
        ] {
            assert!(Killed.start(line).is_none(), "{line}");
        }
    }

    /// The shell's `Killed`, then its prompt again (fixtures/wild/2525.txt):
    /// the command's output ended there. Other lines after it still stop
    /// the bare word.
    #[test]
    fn killed_then_the_prompt_again() {
        let cmd =
            "(.env) ubuntu@ip-172-31-22-210:~/tetre$ ./bin/tetre extract --tetre_word improves";
        let prompt = "(.env) ubuntu@ip-172-31-22-210:~/tetre$";
        let found = crate::scan(format!("{cmd}\nKilled\n{prompt}\n").as_bytes(), "t")
            .unwrap()
            .findings;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].era, Some(Era::BareKilled));
        assert_eq!(found[0].text, "Killed");
        for prompt in ["[user@node01 work]$", "root@4f2a9c:/#"] {
            assert!(empty_prompt(prompt), "{prompt}");
        }
        assert!(!empty_prompt("step 12: loss 0.31"));
        assert!(!empty_prompt("user@host:~$ python train.py"));
        let found = crate::scan(&b"Killed\nretrying in 5: step 10\n"[..], "t")
            .unwrap()
            .findings;
        assert!(found.is_empty());
    }

    #[test]
    fn the_agent_line_alone_is_a_sigkill() {
        let line = "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) local_rank: 0 (pid: 1798) of binary: /usr/bin/python3";
        let f = decode_with(&Killed, &[line]).expect("agent line");
        assert_eq!(f.era.map(crate::record::Era::slug), Some("torchelastic"));
        assert_eq!(f.facts["report"], "agent");
        assert_eq!(f.facts["pid"], "1798");
        assert_eq!(f.category, Category::LikelyOom);
    }

    #[test]
    fn prose_after_a_bare_killed_is_not_more_output() {
        let f = decode_with(
            &Killed,
            &[
                "Loading checkpoint shards:   0%| 0/2 [00:00<?, ?it/s]Killed",
                "killed",
            ],
        );
        assert!(f.is_some());
        assert!(decode_with(&Killed, &["已杀死"]).is_some());
    }

    #[test]
    fn bare_killed_only_at_the_end() {
        for lines in [
            &["Killed"][..],
            &["**Killed**"][..],
            &[
                "Loading checkpoint shards:  38%| 3/8 [00:02<00:03,  1.28it/s]Killed",
                "",
            ],
        ] {
            let f = decode_with(&Killed, lines).expect("bare Killed at the end");
            assert_eq!(f.era, Some(Era::BareKilled));
            assert_eq!(f.category, Category::LikelyOom);
        }
        // A log that goes on after it: too weak to report.
        assert!(decode_with(&Killed, &["Killed", "  exitcode  : 1 (pid: 4242)"]).is_none());
        // Not a bare word.
        assert!(Killed.start("the job was Killed").is_none());
    }

    /// Every shell's own report of a job SIGKILL ended, as real pastes show
    /// them: zsh's (fixtures/wild/3313.txt, and with a job number), fish's,
    /// and macOS bash's `Killed: 9` ending the output.
    #[test]
    fn shells_report_a_sigkill_their_own_way() {
        let cases: &[(&str, Option<&str>, Option<&str>, &str)] = &[
            ("zsh: killed     python export.py", Some("python"), None, "zsh"),
            (
                "Loading checkpoint shards:  33%|█▋ | 5/15 [02:32<05:36, 33.69s/it]zsh: killed     python3 commandR.py",
                Some("python3"),
                None,
                "zsh",
            ),
            ("[1]    220471 killed     python trillion.py", Some("python"), Some("220471"), "zsh"),
            (
                "fish: Job 1, 'go test ./...' terminated by signal SIGKILL (Forced quit)",
                Some("go"),
                None,
                "fish",
            ),
        ];
        for &(line, process, pid, shell) in cases {
            let found = crate::scan(format!("{line}\n").as_bytes(), "t")
                .unwrap()
                .findings;
            assert_eq!(found.len(), 1, "{line}");
            let f = &found[0];
            assert_eq!(f.era, Some(Era::Shell), "{line}");
            assert_eq!(f.category, Category::LikelyOom);
            assert_eq!(
                f.facts.get("process").map(String::as_str),
                process,
                "{line}"
            );
            assert_eq!(f.facts.get("pid").map(String::as_str), pid, "{line}");
            assert_eq!(f.facts["shell"], shell);
        }
        let f = decode_with(&Killed, &["Killed: 9"]).expect("macOS bash");
        assert_eq!(f.era, Some(Era::BareKilled));
        // Prose about killing is none of these.
        for line in [
            "I killed the process with kill -9",
            "fish: Job 1, 'sleep 100' terminated by signal SIGTERM (Polite quit request)",
        ] {
            assert!(Killed.start(line).is_none(), "{line}");
        }
    }

    /// Open MPI's launcher on a rank SIGKILL ended (fixtures/wild/3324.txt;
    /// `PID 0` where it did not learn the pid); another signal is a crash,
    /// not this family's.
    #[test]
    fn open_mpi_rank_killed_by_signal_9() {
        let f = decode_with(
            &Killed,
            &["mpirun noticed that process rank 7 with PID 0 on node HOSTNAME exited on signal 9 (Killed)."],
        )
        .expect("rank killed");
        assert_eq!(f.era, Some(Era::Mpi));
        assert_eq!(f.category, Category::LikelyOom);
        assert_eq!(f.facts["rank"], "7");
        assert_eq!(f.facts["node"], "HOSTNAME");
        assert!(!f.facts.contains_key("pid"));
        let f = decode_with(
            &Killed,
            &["mpiexec noticed that process rank 0 with PID 77967 on node n342 exited on signal 9 (Killed)."],
        )
        .expect("pid printed");
        assert_eq!(f.facts["pid"], "77967");
        assert_eq!(f.facts["launcher"], "mpiexec");
        assert!(Killed
            .start("mpiexec noticed that process rank 0 with PID 10313 on node proton exited on signal 6 (Aborted).")
            .is_none());
    }

    /// Ray's raylet on a worker whose connection closed without a word
    /// (fixtures/wild/3154.txt, 811.txt): the worker's pid from the line
    /// before the exit detail.
    #[test]
    fn ray_worker_gone_without_a_word() {
        let line = "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. Worker PID: 89513 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.";
        let found = crate::scan(format!("{line}\n").as_bytes(), "t")
            .unwrap()
            .findings;
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.era, Some(Era::RayWorker));
        assert_eq!(f.category, Category::LikelyOom);
        assert_eq!(f.facts["pid"], "89513");
        assert_eq!(f.facts["connection_error"], "2");
    }

    /// Slurm's sentence after its oom-kill count, quoted from the step id on
    /// in a poster's sentence (a wild paste), and the same words as a
    /// continuation of the count's line; a sentence that only names the
    /// handler is not a kill.
    #[test]
    fn slurm_cgroup_handler_sentence() {
        let scan = |text: &str| {
            crate::scan(text.as_bytes(), "t")
                .map(|r| r.findings)
                .unwrap_or_default()
        };
        let found = scan("the job seems to have been killed due to oom `in StepId=5770797.batch. Some of your processes may have been killed by the cgroup out-of-memory handler`\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::HostOomKilled);
        assert_eq!(found[0].era, Some(Era::Slurm));
        assert_eq!(found[0].category, Category::Oom);
        let found = scan("slurmstepd: error: Detected 1 oom-kill event(s) in step 997857.batch cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].facts[fact::OOM_KILL_EVENTS], "1");
        assert!(
            scan("Slurm's cgroup out-of-memory handler can be disabled in cgroup.conf.\n")
                .is_empty()
        );
    }
}
