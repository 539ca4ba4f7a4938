//! Host RAM: PyTorch's CPU allocator failing, and processes killed for
//! memory by the kernel, a cgroup, Slurm, Kubernetes or a launcher.

use super::common::{
    capitalise, extra, fact, fix_en, framework_fixes, row_en, verdict_en, FieldRow, TIB,
};
use super::docs::Code;
use super::thresholds::SMALL_VICTIM_MAX;
use super::Explain;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Kind, Verdict};
use crate::units::format_size as fmt;

/// Explains `Kind::HostOom` findings.
pub(super) struct HostOom;

impl Explain for HostOom {
    fn headline_en(&self, f: &Finding) -> String {
        let a = f.sizes.requested_bytes.map(fmt);
        match a {
            Some(a) => {
                format!("PyTorch could not allocate {a} of host RAM (CPU memory, not GPU memory)")
            }
            None => "PyTorch could not allocate host RAM (CPU memory, not GPU memory)".into(),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        let s = &f.sizes;
        if let Some(n) = s.requested_bytes {
            rows.push(row_en(
                "You tried to allocate",
                format!("{} ({n} bytes)", fmt(n)),
                "one tensor PyTorch tried to create in host RAM (exact size)",
                false,
            ));
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        host_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        framework_fixes(d, out, |has, out| host_fixes(f, has, out))
    }
}

/// Explains `Kind::HostOomKilled` findings.
pub(super) struct HostOomKilled;

impl Explain for HostOomKilled {
    fn headline_en(&self, f: &Finding) -> String {
        killed_headline(f)
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        if let (Some(pid), Some(name)) = (fact(f, fact::PID), fact(f, fact::PROCESS)) {
            rows.push(row_en(
                "Killed process",
                format!("{pid} ({name})"),
                "the process the kernel chose to kill",
                false,
            ));
        }
        for (key, label, meaning) in [
                ("anon_rss_bytes", "anon-rss", "RAM the process held in its own pages when killed: the best measure of its memory use"),
                ("file_rss_bytes", "file-rss", "file-backed pages in RAM (mapped files, libraries); reclaimable"),
                ("shmem_rss_bytes", "shmem-rss", "shared-memory pages (e.g. /dev/shm, used by DataLoader workers)"),
                ("total_vm_bytes", "total-vm", "virtual address space reserved, not RAM used (CUDA reserves a lot of it)"),
            ] {
                if let Some(v) = extra(f, key) {
                    rows.push(row_en(label, fmt(v), meaning, false));
                }
            }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        killed_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        framework_fixes(d, out, |has, out| host_fixes(f, has, out))
    }
}

fn killed_headline(f: &Finding) -> String {
    let who = match (fact(f, fact::PID), fact(f, fact::PROCESS)) {
        (Some(pid), Some(name)) => format!("process {pid} ({name})"),
        (Some(pid), None) => format!("process {pid}"),
        _ => "a process".into(),
    };
    match f.era {
        Some(Era::Kernel) => {
            format!("The Linux out-of-memory killer killed {who}: the machine ran out of RAM")
        }
        Some(Era::Cgroup) => format!("A memory cgroup limit (container or job) killed {who}"),
        Some(Era::Slurm) => {
            "Slurm's memory limit killed part of the job (cgroup out-of-memory)".into()
        }
        Some(Era::Kubernetes) => {
            "Kubernetes killed the container for exceeding its memory limit (OOMKilled)".into()
        }
        Some(Era::Systemd) => format!(
            "systemd reports that the out-of-memory killer ended {}",
            fact(f, "unit").unwrap_or("a service")
        ),
        Some(Era::Torchelastic) => {
            let n: usize = fact(f, fact::KILLED_PROCESSES)
                .and_then(|n| n.parse().ok())
                .unwrap_or(1);
            format!(
                "{n} training process{} killed with SIGKILL — probably out of host RAM",
                if n == 1 { " was" } else { "es were" }
            )
        }
        Some(Era::Dataloader) => {
            "A DataLoader worker was killed with SIGKILL — probably out of host RAM".into()
        }
        Some(Era::Exit137) => format!(
            "{} was killed with SIGKILL (exit status 137) — often the out-of-memory killer",
            capitalise_first(&who)
        ),
        _ => format!(
            "{} was killed with SIGKILL — often the out-of-memory killer",
            capitalise_first(&who)
        ),
    }
}

fn capitalise_first(text: &str) -> String {
    capitalise(text)
}

fn host_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let Some(n) = f.sizes.requested_bytes else {
        out.push(verdict_en(
            Code::HostRamExhausted,
            "The machine's RAM ran out (host memory, not GPU memory)",
            "PyTorch's CPU allocator could not get memory from the operating system. This is host RAM, not GPU memory.".into(),
        ));
        return;
    };
    if n >= 4 * TIB {
        out.push(verdict_en(
            Code::RequestExceedsCapacity,
            "One CPU tensor asked for more RAM than any machine has",
            format!(
                "PyTorch tried to create one tensor of {n} bytes ({}) in host RAM. No amount of memory tuning helps: a shape is wrong (an overflowed or uninitialised dimension, an outer product or distance matrix over a whole dataset, a dense matrix that should be sparse).",
                fmt(n)
            ),
        ));
        return;
    }
    let detail = match f.era {
        Some(Era::Posix) => format!(
            "The operating system refused PyTorch's CPU allocator {} ({n} bytes) for one tensor{}. This is host RAM, not GPU memory. On Linux with the default overcommit setting the kernel refuses an allocation up front only when it is larger than all RAM plus swap (or when a ulimit -v or vm.overcommit_memory=2 limit applies); smaller requests succeed and the out-of-memory killer ends the process later instead.",
            fmt(n),
            fact(f, fact::ERRNO)
                .map(|e| format!(" (error {e}, {})", fact(f, fact::STRERROR).unwrap_or("ENOMEM")))
                .unwrap_or_default()
        ),
        _ => format!(
            "PyTorch's CPU allocator got no memory for one tensor of {} ({n} bytes). This is host RAM, not GPU memory. This form is printed by Windows builds: Windows refuses allocations beyond its commit limit — RAM plus the page file — so a small or fixed-size page file makes this error come early.",
            fmt(n)
        ),
    };
    out.push(verdict_en(
        Code::HostRamExhausted,
        "The machine's RAM ran out (host memory, not GPU memory)",
        detail,
    ));
}

/// What the kernel's out-of-memory killer's victim held (its own and shared
/// pages), when that is too little to be what filled the machine. The
/// killer picks the largest killable process, so a small victim means the
/// memory sat where it could not or would not kill: files in /dev/shm or
/// another tmpfs, processes protected by oom_score_adj, the kernel itself.
pub(crate) fn small_victim_bytes(f: &Finding) -> Option<u64> {
    if f.kind != Kind::HostOomKilled || !matches!(f.era, Some(Era::Kernel) | Some(Era::Cgroup)) {
        return None;
    }
    let held = extra(f, "anon_rss_bytes")?.saturating_add(extra(f, "shmem_rss_bytes").unwrap_or(0));
    (held < SMALL_VICTIM_MAX).then_some(held)
}

fn killed_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let who = match (fact(f, fact::PID), fact(f, fact::PROCESS)) {
        (Some(pid), Some(name)) => format!("process {pid} ({name})"),
        (Some(pid), None) => format!("process {pid}"),
        _ => "a process".into(),
    };
    let rss = extra(f, "anon_rss_bytes")
        .map(|r| format!(", which held {} of RAM in its own pages (anon-rss)", fmt(r)))
        .unwrap_or_default();
    match f.era {
        Some(Era::Kernel) => out.push(verdict_en(
            Code::HostRamExhausted,
            "The machine's RAM ran out (host memory, not GPU memory)",
            format!(
                "The Linux kernel ran out of RAM and swap for the whole machine and its out-of-memory killer ended {who}{rss}. This is host memory, not GPU memory: a GPU out-of-memory error is reported by the framework, not by the kernel. {}",
                small_victim_note(f)
            ),
        )),
        Some(Era::Cgroup) => out.push(verdict_en(
            Code::HostMemoryLimit,
            "A memory limit on the container or job killed it, not the machine",
            format!(
                "The kernel killed {who}{rss} because its memory cgroup reached its limit: a container's or job's memory limit, not the machine's RAM. Host memory, not GPU memory.{}",
                if small_victim_bytes(f).is_some() { format!(" {}", small_victim_note(f)) } else { String::new() }
            ),
        )),
        Some(Era::Slurm) => {
            let events = fact(f, fact::OOM_KILL_EVENTS)
                .map(|n| format!(" counted {n} out-of-memory kill event{} in", if n == "1" { "" } else { "s" }))
                .unwrap_or_else(|| " reports an out-of-memory kill in".into());
            let step = fact(f, fact::STEP).map(|s| format!(" step {s}")).unwrap_or_else(|| " this job".into());
            let usage = match (fact(f, fact::USAGE), fact(f, fact::LIMIT)) {
                (Some(u), Some(l)) => format!(" It measured {u} against a limit of {l} (Slurm's units, usually KiB or bytes depending on version)."),
                _ => String::new(),
            };
            out.push(verdict_en(
                Code::HostMemoryLimit,
                "The job exceeded the memory it requested from Slurm",
                format!(
                    "Slurm{events}{step}: processes in the job's memory cgroup used more host RAM than the job requested (--mem, --mem-per-cpu or --mem-per-gpu, or the partition's default), and the kernel killed them.{usage} This is host RAM, not GPU memory."
                ),
            ));
        }
        Some(Era::Systemd) => out.push(verdict_en(
            Code::HostRamExhausted,
            "Host memory ran out (not GPU memory)",
            format!(
                "systemd reports that {} ended with result 'oom-kill': an out-of-memory killer ended its process — the kernel's, because the machine or the unit's own limit (MemoryMax=) ran out of memory, or systemd-oomd, which acts on memory pressure. Host RAM, not GPU memory. `journalctl -k` and `journalctl -u UNIT` around that time show which.",
                fact(f, "unit").unwrap_or("the service")
            ),
        )),
        Some(Era::Kubernetes) => out.push(verdict_en(
            Code::HostMemoryLimit,
            "The container exceeded its Kubernetes memory limit",
            "Kubernetes reports OOMKilled: the container used more host RAM than its resources.limits.memory, and the kernel killed it (exit code 137). This is host RAM, not GPU memory.".into(),
        )),
        era => {
            let what = match era {
                Some(Era::Torchelastic) => format!(
                    "torchelastic reports {} worker process{} ended by signal 9 (SIGKILL, exit code -9){}.",
                    fact(f, fact::KILLED_PROCESSES).unwrap_or("1"),
                    if fact(f, fact::KILLED_PROCESSES).unwrap_or("1") == "1" { "" } else { "es" },
                    fact(f, fact::PIDS).map(|p| format!(", PID {p}")).unwrap_or_default()
                ),
                Some(Era::Dataloader) => "A DataLoader worker process was ended by signal 9 (SIGKILL). Each worker is a separate process with its own copy of whatever the Dataset holds, so workers are often what the OOM killer picks.".into(),
                Some(Era::Exit137) => "A process exited with status 137 = 128 + 9: it was ended by signal 9 (SIGKILL).".into(),
                _ => "A process was ended by signal 9 (SIGKILL).".into(),
            };
            out.push(verdict_en(
                Code::KilledBySigkill,
                "Killed by SIGKILL: probably out of host memory, but the log does not prove it",
                format!(
                    "{what} SIGKILL cannot be caught, so Python prints no error of its own. The usual sender is the kernel's out-of-memory killer (host RAM, not GPU memory), but a scheduler enforcing a time or memory limit, a watchdog, or someone running kill -9 sends the same signal: this evidence is circumstantial. `dmesg -T | grep -i -E 'killed process|oom'` (or journalctl -k) on the node shows whether the OOM killer acted; on Slurm, sacct -j JOBID -o JobID,State,MaxRSS,ReqMem; on Kubernetes, kubectl describe pod (Reason: OOMKilled)."
                ),
            ));
        }
    }
}

/// Whom the killer's choice points at: the victim, or, when it held little,
/// whatever it could not kill.
fn small_victim_note(f: &Finding) -> String {
    match small_victim_bytes(f) {
        Some(held) => format!("The victim held only {}, and the killer picks the largest process it may kill: most of the memory was held where it could not or would not kill — files in /dev/shm or another tmpfs, a process protected by oom_score_adj, or the kernel itself. The task table the kernel prints just before \"Killed process\" (dmesg -T) shows who held it.", fmt(held)),
        None => "The killer picks the process using the most memory, which is usually — but not always — the training process.".into(),
    }
}

fn host_fixes(f: &Finding, has: &dyn Fn(Code) -> bool, out: &mut Vec<Fix>) {
    if has(Code::HostMemoryLimit) {
        let how = match f.era {
            Some(Era::Slurm) => "Request more memory for the job (#SBATCH --mem=128G, or --mem-per-cpu / --mem-per-gpu); `sacct -j JOBID -o JobID,MaxRSS,ReqMem,State` shows what it used against what it asked for.",
            Some(Era::Kubernetes) => "Raise the container's resources.limits.memory (and requests.memory) in the pod spec, or lower what the process holds (below).",
            _ => "Raise the container's or job's memory limit (docker run --memory, the cgroup's memory.max, your scheduler's memory request), or lower what the process holds (below).",
        };
        out.push(fix_en("Ask for more memory", how));
    }
    if has(Code::KilledBySigkill) {
        out.push(fix_en(
            "Confirm it was the out-of-memory killer",
            "On the node: dmesg -T | grep -i -E 'killed process|out of memory' (or journalctl -k). On Slurm: sacct -j JOBID -o JobID,State,MaxRSS,ReqMem. On Kubernetes: kubectl describe pod (Last State: Reason: OOMKilled). If none shows an OOM kill, look for a time limit or a watchdog instead.",
        ));
    }
    let dataloader = fix_en(
        "Use fewer or lighter DataLoader workers",
        "Each DataLoader worker is a separate process; a Dataset that holds Python lists or dicts of samples gets copied into every worker as reference counts touch its pages. Lower num_workers (and prefetch_factor), keep samples in NumPy arrays or memory-mapped files instead of Python objects, and read them lazily in __getitem__.",
    );
    let checkpoint = fix_en(
        "Load checkpoints without a full copy in RAM",
        "torch.load(path, map_location=\"cpu\", mmap=True, weights_only=True) (PyTorch ≥ 2.1) maps the file instead of reading it; model.load_state_dict(state, assign=True) avoids a second copy; Hugging Face: from_pretrained(..., low_cpu_mem_usage=True, torch_dtype=torch.bfloat16) or device_map=\"auto\". With several ranks per node, every rank loads its own copy: load on one rank, or shard.",
    );
    let pinned = fix_en(
        "Turn off pinned memory if RAM is tight",
        "DataLoader(pin_memory=True) and pinned buffers are page-locked RAM the system cannot swap out; set pin_memory=False or reduce prefetching.",
    );
    if f.kind == Kind::HostOom {
        out.push(fix_en(
            "Allocate less at once",
            "Build large arrays in chunks, or keep them on disk and map them (numpy.memmap, torch.from_file, safetensors) instead of creating them whole in RAM.",
        ));
    }
    if small_victim_bytes(f).is_some() {
        // The victim is not what filled the machine: its own fixes would
        // shrink the wrong process.
        out.push(fix_en(
            "Find what holds the RAM",
            "dmesg -T shows the kernel's task table just before \"Killed process\": its largest rss rows hold the memory. Check tmpfs files (df -h /dev/shm /tmp /run; stale DataLoader or NCCL segments in /dev/shm), processes started with a negative oom_score_adj (cat /proc/PID/oom_score_adj), and the kernel's own use (grep -E 'Slab|Shmem|Unevict' /proc/meminfo).",
        ));
        return;
    }
    let loading = matches!(f.phase.name.as_str(), "model_load" | "checkpoint");
    let data = f.era == Some(Era::Dataloader) || f.phase.name == "data_loading";
    if loading {
        out.extend([checkpoint, dataloader, pinned]);
    } else if data {
        out.extend([dataloader, pinned]);
    } else {
        out.extend([dataloader, checkpoint, pinned]);
    }
    if f.kind == Kind::HostOom && f.era != Some(Era::Posix) {
        out.push(fix_en(
            "Enlarge the Windows page file",
            "Windows fails allocations at its commit limit (RAM + page file): set the page file to system-managed or larger (System Properties → Advanced → Performance → Virtual memory).",
        ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
