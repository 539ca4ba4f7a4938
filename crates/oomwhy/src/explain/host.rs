//! Host RAM: PyTorch's CPU allocator failing, and processes killed for
//! memory by the kernel, a cgroup, Slurm, Kubernetes or a launcher.

use super::catalogue::{Cost, FixSpec};
use super::common::{extra, fact, fix, framework_fixes, row, verdict, FieldRow};
use super::docs::Code;
use super::platform::Platform;
use super::setting::Framework;
use super::thresholds::{COMMIT_LIMIT_SMALL_REQUEST_MAX, SMALL_VICTIM_MAX, SMALL_VICTIM_SCORE_MAX};
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Kind, Verdict};
use crate::say;
use crate::say_parts;
use crate::units::format_size as fmt;

/// Explains `Kind::HostOom` findings.
pub(super) struct HostOom;

impl Explain for HostOom {
    fn headline(&self, f: &Finding) -> Said {
        if super::jvm::owns(f) {
            return super::jvm::headline(f);
        }
        match f.sizes.requested_bytes.map(fmt) {
            Some(size) => say!(
                en: "PyTorch could not allocate {size} of host RAM (CPU memory, not GPU memory)",
                zh: "PyTorch 无法分配 {size} 的主机内存（CPU 内存，不是显存）",
                size = size
            ),
            None => say!(
                en: "PyTorch could not allocate host RAM (CPU memory, not GPU memory)",
                zh: "PyTorch 无法分配主机内存（CPU 内存，不是显存）"
            ),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        if super::jvm::owns(f) {
            return super::jvm::field_rows(f);
        }
        let mut rows = Vec::new();
        if let Some(n) = f.sizes.requested_bytes {
            rows.push(row(
                say!(en: "You tried to allocate", zh: "尝试分配"),
                format!("{} ({n} bytes)", fmt(n)),
                say!(
                    en: "one tensor PyTorch tried to create in host RAM (exact size)",
                    zh: "PyTorch 想在主机内存里创建的一个张量（精确大小）"
                ),
                false,
            ));
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        if super::jvm::owns(f) {
            return super::jvm::verdicts(f, out);
        }
        host_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        if super::jvm::owns(f) {
            return super::jvm::fixes(f, out);
        }
        framework_fixes(d, out, |has, out| host_fixes(f, has, out))
    }
}

/// Explains `Kind::HostOomKilled` findings.
pub(super) struct HostOomKilled;

impl Explain for HostOomKilled {
    fn headline(&self, f: &Finding) -> Said {
        if super::cluster::owns(f) {
            return super::cluster::headline(f);
        }
        killed_headline(f)
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        if super::cluster::owns(f) {
            return super::cluster::field_rows(f);
        }
        let mut rows = Vec::new();
        if let (Some(pid), Some(name)) = (fact(f, fact::PID), fact(f, fact::PROCESS)) {
            let meaning = if matches!(f.era, Some(Era::Kernel) | Some(Era::Cgroup)) {
                say!(
                    en: "the process the kernel chose to kill",
                    zh: "内核选中杀掉的进程"
                )
            } else {
                say!(
                    en: "the process that was killed, as the message names it",
                    zh: "报错里点名被杀的进程"
                )
            };
            rows.push(row(
                say!(en: "Killed process", zh: "被杀的进程"),
                format!("{pid} ({name})"),
                meaning,
                false,
            ));
        }
        let sizes = [
            (
                "anon_rss_bytes",
                say!(en: "anon-rss", zh: "anon-rss"),
                say!(
                    en: "RAM the process held in its own pages when killed: the best measure of its memory use",
                    zh: "进程被杀时它自己的页面占用的内存：衡量它内存用量的最好指标"
                ),
            ),
            (
                "file_rss_bytes",
                say!(en: "file-rss", zh: "file-rss"),
                say!(
                    en: "file-backed pages in RAM (mapped files, libraries); reclaimable",
                    zh: "内存里以文件为后端的页面（映射的文件、库）；可以回收"
                ),
            ),
            (
                "shmem_rss_bytes",
                say!(en: "shmem-rss", zh: "shmem-rss"),
                say!(
                    en: "shared-memory pages (e.g. /dev/shm, used by DataLoader workers)",
                    zh: "共享内存页面（如 DataLoader worker 用的 /dev/shm）"
                ),
            ),
            (
                "total_vm_bytes",
                say!(en: "total-vm", zh: "total-vm"),
                say!(
                    en: "virtual address space reserved, not RAM used (CUDA reserves a lot of it)",
                    zh: "预留的虚拟地址空间，不是实际用掉的内存（CUDA 会预留很多）"
                ),
            ),
        ];
        for (key, label, meaning) in sizes {
            if let Some(v) = extra(f, key) {
                rows.push(row(label, fmt(v), meaning, false));
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

/// The killed process as the message names it.
fn who(f: &Finding) -> Said {
    match (fact(f, fact::PID), fact(f, fact::PROCESS)) {
        (Some(pid), Some(name)) => say!(
            en: "process {pid} ({name})",
            zh: "进程 {pid}（{name}）",
            pid = pid,
            name = name
        ),
        (Some(pid), None) => say!(en: "process {pid}", zh: "进程 {pid}", pid = pid),
        (None, Some(name)) => say!(en: "process {name}", zh: "进程 {name}", name = name),
        _ => say!(en: "a process", zh: "一个进程"),
    }
}

fn killed_headline(f: &Finding) -> Said {
    let who = who(f);
    // `who` differs by language, so these sentences are put together here
    // rather than by `say!`.
    match f.era {
        Some(Era::Kernel) => Said {
            en: format!(
                "The Linux out-of-memory killer killed {}: the machine ran out of RAM",
                who.en
            ),
            zh: format!("Linux 的 OOM killer 杀掉了{}：整台机器的内存用完了", who.zh),
        },
        Some(Era::Cgroup) => Said {
            en: format!("A memory cgroup limit (container or job) killed {}", who.en),
            zh: format!("内存 cgroup 的上限（容器或作业）杀掉了{}", who.zh),
        },
        Some(Era::Slurm) => say!(
            en: "Slurm's memory limit killed part of the job (cgroup out-of-memory)",
            zh: "Slurm 的内存上限杀掉了作业的一部分（cgroup 内存不足）"
        ),
        Some(Era::Kubernetes) if evicted(f) => say!(
            en: "Kubernetes evicted the pod: its node ran low on memory",
            zh: "Kubernetes 驱逐了这个 pod：所在节点的内存不够了"
        ),
        Some(Era::Kubernetes) => say!(
            en: "Kubernetes killed the container for exceeding its memory limit (OOMKilled)",
            zh: "容器超出了内存上限，被 Kubernetes 杀掉（OOMKilled）"
        ),
        Some(Era::Systemd) if by_oomd(f) => match fact(f, "unit") {
            Some(unit) => say!(
                en: "systemd-oomd killed {unit} for memory pressure (host memory, not GPU memory)",
                zh: "systemd-oomd 因内存压力杀掉了 {unit}（主机内存，不是显存）",
                unit = unit
            ),
            None => say!(
                en: "systemd-oomd killed a unit for memory pressure (host memory, not GPU memory)",
                zh: "systemd-oomd 因内存压力杀掉了一个 unit（主机内存，不是显存）"
            ),
        },
        Some(Era::Systemd) => match fact(f, "unit") {
            Some(unit) => say!(
                en: "systemd reports that the out-of-memory killer ended {unit}",
                zh: "systemd 报告 OOM killer 结束了 {unit}",
                unit = unit
            ),
            None => say!(
                en: "systemd reports that the out-of-memory killer ended a service",
                zh: "systemd 报告 OOM killer 结束了一个服务"
            ),
        },
        Some(Era::Torchelastic) => {
            let n: usize = fact(f, fact::KILLED_PROCESSES)
                .and_then(|n| n.parse().ok())
                .unwrap_or(1);
            if n == 1 {
                say!(
                    en: "{n} training process was killed with SIGKILL — probably out of host RAM",
                    zh: "{n} 个训练进程被 SIGKILL 杀掉——很可能是主机内存用完了",
                    n = n
                )
            } else {
                say!(
                    en: "{n} training processes were killed with SIGKILL — probably out of host RAM",
                    zh: "{n} 个训练进程被 SIGKILL 杀掉——很可能是主机内存用完了",
                    n = n
                )
            }
        }
        Some(Era::Dataloader) => say!(
            en: "A DataLoader worker was killed with SIGKILL — probably out of host RAM",
            zh: "一个 DataLoader worker 被 SIGKILL 杀掉——很可能是主机内存用完了"
        ),
        Some(Era::RayWorker) => match fact(f, fact::PID) {
            Some(pid) => say!(
                en: "A Ray worker (process {pid}) died without a word — most often the out-of-memory killer",
                zh: "一个 Ray worker（进程 {pid}）一声不响地死了——最常见的是 OOM killer 干的",
                pid = pid
            ),
            None => say!(
                en: "A Ray worker died without a word — most often the out-of-memory killer",
                zh: "一个 Ray worker 一声不响地死了——最常见的是 OOM killer 干的"
            ),
        },
        Some(Era::Mpi) => {
            let rank = fact(f, fact::RANK).unwrap_or("?");
            match fact(f, "node") {
                Some(node) => say!(
                    en: "MPI rank {rank} on node {node} was killed with SIGKILL — often the out-of-memory killer",
                    zh: "节点 {node} 上的 MPI rank {rank} 被 SIGKILL 杀掉——常常是 OOM killer 干的",
                    rank = rank,
                    node = node
                ),
                None => say!(
                    en: "MPI rank {rank} was killed with SIGKILL — often the out-of-memory killer",
                    zh: "MPI rank {rank} 被 SIGKILL 杀掉——常常是 OOM killer 干的",
                    rank = rank
                ),
            }
        }
        Some(Era::Exit137) => Said {
            en: format!(
                "{} was killed with SIGKILL (exit status 137) — often the out-of-memory killer",
                capitalise_first(&who.en)
            ),
            zh: format!(
                "{}被 SIGKILL 杀掉（退出状态 137）——常常是 OOM killer 干的",
                who.zh
            ),
        },
        _ => Said {
            en: format!(
                "{} was killed with SIGKILL — often the out-of-memory killer",
                capitalise_first(&who.en)
            ),
            zh: format!("{}被 SIGKILL 杀掉——常常是 OOM killer 干的", who.zh),
        },
    }
}

fn capitalise_first(text: &str) -> String {
    super::common::capitalise(text)
}

fn ram_exhausted_title() -> Said {
    say!(
        en: "The machine's RAM ran out (host memory, not GPU memory)",
        zh: "机器的内存（RAM）用完了（是主机内存，不是显存）"
    )
}

fn host_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    // A program the general grammar found states what it needed and what
    // was free; PyTorch's CPU allocator is not involved.
    if let (Some(reporter), Some(n)) = (fact(f, fact::REPORTED_BY), f.sizes.requested_bytes) {
        let detail = match f.sizes.free_bytes {
            Some(free) => say_parts!(
                en: "{reporter} needed {size} of host RAM and only {free} was available, so it stopped. This is host RAM, not GPU memory: what runs on the machine (or in its container) leaves too little for this job.",
                zh: "{reporter} 需要 {size} 主机内存，而可用的只有 {free}，所以停下了。这是主机内存，不是显存：机器（或它的容器）上正在运行的东西给这个任务留下的太少了。",
                reporter = crate::i18n::reporter::said(reporter),
                size = Said::same(fmt(n)),
                free = Said::same(fmt(free))
            ),
            None => say_parts!(
                en: "{reporter} could not get {size} of host RAM. This is host RAM, not GPU memory.",
                zh: "{reporter} 没能拿到 {size} 主机内存。这是主机内存，不是显存。",
                reporter = crate::i18n::reporter::said(reporter),
                size = Said::same(fmt(n))
            ),
        };
        out.push(verdict(
            Code::HostRamExhausted,
            ram_exhausted_title(),
            detail,
        ));
        return;
    }
    let Some(n) = f.sizes.requested_bytes else {
        if is_ray_monitor(f) {
            out.push(verdict(
                Code::HostRamExhausted,
                say!(
                    en: "Ray's memory monitor killed workers before the node's RAM ran out (host memory, not GPU memory)",
                    zh: "Ray 的内存监控在节点内存耗尽之前杀掉了 worker（是主机内存，不是显存）"
                ),
                say!(
                    en: "Nothing failed to allocate: the raylet's memory monitor checks the node's memory use and, when it crosses RAY_memory_usage_threshold (0.95 of the node's memory by default), kills workers itself (retriable tasks first) before the kernel's out-of-memory killer would. The tasks and actors on the node together used nearly all of its RAM.",
                    zh: "并没有哪次分配失败：raylet 的内存监控会检查节点的内存使用，一旦超过 RAY_memory_usage_threshold（默认是节点内存的 0.95），它就抢在内核的 OOM killer 之前自己杀掉 worker（先杀可重试的任务）。节点上的任务和 actor 加起来用掉了几乎全部内存。"
                ),
            ));
            return;
        }
        // A statement found by the general grammar names its reporter (Ray's
        // memory monitor, a runtime); PyTorch's CPU allocator is the family's
        // own reporter.
        let detail = match fact(f, fact::REPORTED_BY) {
            // The writer's own words, not a program's report.
            _ if fact(f, "stated_in_prose") == Some("true") => say!(
                en: "The text says, in the writer's own words, that the machine's RAM ran out; the program's message is not in it, so how much was asked for and what held the RAM are not known. This is host RAM, not GPU memory.",
                zh: "文中只是作者用自己的话说机器的内存用完了；程序的报错不在其中，所以申请了多少、是什么占着内存都无从得知。这是主机内存，不是显存。"
            ),
            Some(reporter) => say_parts!(
                en: "{reporter} reported that the machine's RAM ran out. This is host RAM, not GPU memory: the processes on the machine (or in its container or cgroup) together need more than it has.",
                zh: "{reporter} 报告机器的内存用完了。这是主机内存，不是显存：这台机器（或它的容器、cgroup）上的进程加起来需要的比它有的多。",
                reporter = crate::i18n::reporter::said(reporter)
            ),
            None => say!(
                en: "PyTorch's CPU allocator could not get memory from the operating system. This is host RAM, not GPU memory.",
                zh: "PyTorch 的 CPU 分配器没能从操作系统拿到内存。这是主机内存，不是显存。"
            ),
        };
        out.push(verdict(
            Code::HostRamExhausted,
            ram_exhausted_title(),
            detail,
        ));
        return;
    };
    if let Some(v) = super::common::implausible_host_request(n) {
        out.push(v);
        return;
    }
    let detail = match f.era {
        Some(Era::Posix) => match fact(f, fact::ERRNO) {
            Some(errno) => say!(
                en: "The operating system refused PyTorch's CPU allocator {size} ({n} bytes) for one tensor (error {errno}, {strerror}). This is host RAM, not GPU memory. On Linux with the default overcommit setting the kernel refuses an allocation up front only when it is larger than all RAM plus swap (or when a ulimit -v or vm.overcommit_memory=2 limit applies); smaller requests succeed and the out-of-memory killer ends the process later instead.",
                zh: "操作系统拒绝给 PyTorch 的 CPU 分配器一个张量所需的 {size}（{n} 字节）（错误 {errno}，{strerror}）。这是主机内存，不是显存。在 Linux 上，用默认的 overcommit 设置时，内核只在申请量大于全部内存加 swap 时（或者有 ulimit -v 或 vm.overcommit_memory=2 的限制时）才当场拒绝；更小的申请会成功，之后改由 OOM killer 结束进程。",
                size = fmt(n),
                n = n,
                errno = errno,
                strerror = fact(f, fact::STRERROR).unwrap_or("ENOMEM")
            ),
            None => say!(
                en: "The operating system refused PyTorch's CPU allocator {size} ({n} bytes) for one tensor. This is host RAM, not GPU memory. On Linux with the default overcommit setting the kernel refuses an allocation up front only when it is larger than all RAM plus swap (or when a ulimit -v or vm.overcommit_memory=2 limit applies); smaller requests succeed and the out-of-memory killer ends the process later instead.",
                zh: "操作系统拒绝给 PyTorch 的 CPU 分配器一个张量所需的 {size}（{n} 字节）。这是主机内存，不是显存。在 Linux 上，用默认的 overcommit 设置时，内核只在申请量大于全部内存加 swap 时（或者有 ulimit -v 或 vm.overcommit_memory=2 的限制时）才当场拒绝；更小的申请会成功，之后改由 OOM killer 结束进程。",
                size = fmt(n),
                n = n
            ),
        },
        _ => say!(
            en: "PyTorch's CPU allocator got no memory for one tensor of {size} ({n} bytes). This is host RAM, not GPU memory. This form is printed by Windows builds: Windows refuses allocations beyond its commit limit — RAM plus the page file — so a small or fixed-size page file makes this error come early.",
            zh: "PyTorch 的 CPU 分配器没能为一个 {size}（{n} 字节）的张量拿到内存。这是主机内存，不是显存。这种形式由 Windows 版打印：Windows 会拒绝超过提交上限（内存加页面文件）的分配，所以页面文件太小或大小固定时，这个错误会来得更早。",
            size = fmt(n),
            n = n
        ),
    };
    out.push(verdict(
        Code::HostRamExhausted,
        ram_exhausted_title(),
        detail,
    ));
}

/// What the kernel's out-of-memory killer's victim held (its own and shared
/// pages), when that is too little to be what filled the machine. The
/// killer picks the largest killable process, so a small victim means the
/// memory sat where it could not or would not kill: files in /dev/shm or
/// another tmpfs, processes protected by oom_score_adj, the kernel itself.
fn small_victim(f: &Finding) -> Option<SmallVictim> {
    if f.kind != Kind::HostOomKilled || !matches!(f.era, Some(Era::Kernel) | Some(Era::Cgroup)) {
        return None;
    }
    let held = extra(f, "anon_rss_bytes")
        .map(|rss| rss.saturating_add(extra(f, "shmem_rss_bytes").unwrap_or(0)));
    // The score is the victim's share whatever its sizes; where the kernel
    // killed a child of the process it chose, the sizes are the child's and
    // say nothing about the chosen one.
    match victim_score(f) {
        Some(score) => (score < SMALL_VICTIM_SCORE_MAX).then_some(SmallVictim {
            held: held.filter(|_| fact(f, "killed_child").is_none()),
            score: Some(score),
        }),
        None if fact(f, "killed_child").is_some() => None,
        None => held
            .filter(|&held| held < SMALL_VICTIM_MAX)
            .map(|held| SmallVictim {
                held: Some(held),
                score: None,
            }),
    }
}

/// The badness score the kernel printed for its victim (thousandths of RAM
/// plus swap).
fn victim_score(f: &Finding) -> Option<u64> {
    fact(f, "oom_score").and_then(|s| s.parse().ok())
}

/// What shows that the killer's victim was small: its own and shared pages,
/// and its score.
struct SmallVictim {
    held: Option<u64>,
    score: Option<u64>,
}

/// Whether systemd-oomd (memory pressure), not the kernel, ended the unit.
fn by_oomd(f: &Finding) -> bool {
    fact(f, "killer") == Some("systemd-oomd")
}

fn killed_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    if super::cluster::owns(f) {
        return super::cluster::verdicts(f, out);
    }
    let who = who(f);
    let rss = match extra(f, "anon_rss_bytes") {
        Some(r) => say!(
            en: ", which held {rss} of RAM in its own pages (anon-rss)",
            zh: "，它自己的页面占了 {rss} 内存（anon-rss）",
            rss = fmt(r)
        ),
        None => Said::default(),
    };
    // `who` and `rss` differ by language, so the sentences that name them
    // are put together here rather than by `say!`.
    match f.era {
        Some(Era::Kernel) => out.push(verdict(
            Code::HostRamExhausted,
            ram_exhausted_title(),
            Said {
                en: format!(
                    "The Linux kernel ran out of RAM and swap for the whole machine and its out-of-memory killer ended {}{}. This is host memory, not GPU memory: a GPU out-of-memory error is reported by the framework, not by the kernel.",
                    who.en, rss.en
                ),
                zh: format!(
                    "Linux 内核用完了整台机器的内存和 swap，它的 OOM killer 结束了{}{}。这是主机内存，不是显存：显存不足由框架报告，而不是由内核报告。",
                    who.zh, rss.zh
                ),
            }
            .then(small_victim_note(f)),
        )),
        Some(Era::Cgroup) => out.push(verdict(
            Code::HostMemoryLimit,
            say!(
                en: "A memory limit on the container or job killed it, not the machine",
                zh: "是容器或作业的内存上限杀掉了它，不是整台机器的内存用完了"
            ),
            Said {
                en: format!(
                    "The kernel killed {}{} because its memory cgroup reached its limit: a container's or job's memory limit, not the machine's RAM. Host memory, not GPU memory.",
                    who.en, rss.en
                ),
                zh: format!(
                    "内核杀掉了{}{}，因为它所在的内存 cgroup 到了上限：这是容器或作业的内存上限，不是机器的内存用完了。是主机内存，不是显存。",
                    who.zh, rss.zh
                ),
            }
            .then(if small_victim(f).is_some() {
                small_victim_note(f)
            } else {
                Said::default()
            }),
        )),
        Some(Era::Slurm) => out.push(verdict(
            Code::HostMemoryLimit,
            say!(
                en: "The job exceeded the memory it requested from Slurm",
                zh: "作业用的内存超过了它向 Slurm 申请的量"
            ),
            slurm_detail(f),
        )),
        Some(Era::Systemd) if by_oomd(f) => out.push(verdict(
            Code::HostRamExhausted,
            say!(
                en: "systemd-oomd acted on memory pressure, before memory ran out (host memory, not GPU memory)",
                zh: "systemd-oomd 按内存压力动手，内存还没真正用完（主机内存，不是显存）"
            ),
            oomd_detail(f),
        )),
        Some(Era::Systemd) => out.push(verdict(
            Code::HostRamExhausted,
            say!(
                en: "Host memory ran out (not GPU memory)",
                zh: "主机内存用完了（不是显存）"
            ),
            match fact(f, "unit") {
                Some(unit) => say!(
                    en: "systemd reports that {unit} ended with result 'oom-kill': an out-of-memory killer ended its process — the kernel's, because the machine or the unit's own limit (MemoryMax=) ran out of memory, or systemd-oomd, which acts on memory pressure. Host RAM, not GPU memory. `journalctl -k` and `journalctl -u UNIT` around that time show which.",
                    zh: "systemd 报告 {unit} 以结果 'oom-kill' 结束：一个 OOM killer 结束了它的进程——要么是内核的（整台机器或这个 unit 自己的上限 MemoryMax= 的内存用完了），要么是按内存压力动手的 systemd-oomd。是主机内存，不是显存。查看当时的 `journalctl -k` 和 `journalctl -u UNIT` 就知道是哪一个。",
                    unit = unit
                ),
                None => say!(
                    en: "systemd reports that the service ended with result 'oom-kill': an out-of-memory killer ended its process — the kernel's, because the machine or the unit's own limit (MemoryMax=) ran out of memory, or systemd-oomd, which acts on memory pressure. Host RAM, not GPU memory. `journalctl -k` and `journalctl -u UNIT` around that time show which.",
                    zh: "systemd 报告该服务以结果 'oom-kill' 结束：一个 OOM killer 结束了它的进程——要么是内核的（整台机器或这个 unit 自己的上限 MemoryMax= 的内存用完了），要么是按内存压力动手的 systemd-oomd。是主机内存，不是显存。查看当时的 `journalctl -k` 和 `journalctl -u UNIT` 就知道是哪一个。"
                ),
            },
        )),
        Some(Era::Kubernetes) if evicted(f) => out.push(verdict(
            Code::HostRamExhausted,
            say!(
                en: "The node's host memory ran low (not GPU memory)",
                zh: "节点的主机内存不够了（不是显存）"
            ),
            eviction_detail(f),
        )),
        Some(Era::Kubernetes) => out.push(verdict(
            Code::HostMemoryLimit,
            say!(
                en: "The container exceeded its Kubernetes memory limit",
                zh: "容器超出了它在 Kubernetes 里的内存上限"
            ),
            say!(
                en: "Kubernetes reports OOMKilled: the container used more host RAM than its resources.limits.memory, and the kernel killed it (exit code 137). This is host RAM, not GPU memory.",
                zh: "Kubernetes 报告 OOMKilled：容器用掉的主机内存超过了它的 resources.limits.memory，内核把它杀掉了（退出码 137）。这是主机内存，不是显存。"
            ),
        )),
        era => {
            let what = match era {
                Some(Era::Torchelastic) => torchelastic_what(f),
                Some(Era::Dataloader) => say!(
                    en: "A DataLoader worker process was ended by signal 9 (SIGKILL). Each worker is a separate process with its own copy of whatever the Dataset holds, so workers are often what the OOM killer picks.",
                    zh: "一个 DataLoader worker 进程被信号 9（SIGKILL）结束。每个 worker 都是单独的进程，各有一份 Dataset 持有的全部数据，所以 OOM killer 常常挑中 worker。"
                ),
                Some(Era::Exit137) => say!(
                    en: "A process exited with status 137 = 128 + 9: it was ended by signal 9 (SIGKILL).",
                    zh: "一个进程以状态 137 = 128 + 9 退出：它被信号 9（SIGKILL）结束了。"
                ),
                Some(Era::Mpi) => say!(
                    en: "Open MPI's launcher ({launcher}) reports that rank {rank} on node {node} was ended by signal 9 (SIGKILL), and it then aborted the job's other ranks. Each rank is a process on its own node, so what killed it shows on {node}, not necessarily on the machine the job was launched from.",
                    zh: "Open MPI 的启动器（{launcher}）报告节点 {node} 上的 rank {rank} 被信号 9（SIGKILL）结束，随后它中止了作业的其余 rank。每个 rank 都是它所在节点上的一个进程，所以是什么杀了它，要在 {node} 上看，不一定是在启动作业的那台机器上。",
                    launcher = fact(f, "launcher").unwrap_or("mpirun"),
                    rank = fact(f, fact::RANK).unwrap_or("?"),
                    node = fact(f, "node").unwrap_or("?")
                ),
                Some(Era::RayWorker) => say!(
                    en: "Ray's raylet lost its connection to the worker process without a word from the worker (connection error code {code}): the process ended abruptly. Ray names three causes: the Linux out-of-memory killer's SIGKILL, `ray stop --force`, or a crash (SIGSEGV or another fatal error). Ray's own memory monitor says so when it kills a worker (\"Task was killed due to the node running low on memory\"), so this was not its kill.",
                    zh: "Ray 的 raylet 与 worker 进程的连接断了，worker 自己什么也没说（连接错误码 {code}）：进程是突然结束的。Ray 列出三种原因：Linux OOM killer 发出的 SIGKILL、`ray stop --force`，或者崩溃（SIGSEGV 或其他致命错误）。Ray 自己的内存监控杀 worker 时会明说（\"Task was killed due to the node running low on memory\"），所以这次不是它杀的。",
                    code = fact(f, "connection_error").unwrap_or("?")
                ),
                Some(Era::Shell) if fact(f, "shell").is_some() => say!(
                    en: "{shell} reports that the command it ran was ended by signal 9 (SIGKILL).",
                    zh: "{shell} 报告它运行的命令被信号 9（SIGKILL）结束了。",
                    shell = fact(f, "shell").unwrap_or("The shell")
                ),
                _ if fact(f, fact::REPORTED_BY) == Some("DeepSpeed launcher") => say!(
                    en: "DeepSpeed's launcher reports a rank that exited with return code -9: Python's way of saying signal 9 (SIGKILL) ended it. The launcher then killed the other ranks (its `Killing subprocess` lines); the rank that died first is the one whose output stops in the lines before.",
                    zh: "DeepSpeed 启动器报告有一个 rank 以返回码 -9 退出：这是 Python 表示它被信号 9（SIGKILL）结束的方式。启动器随后杀掉了其余的 rank（它的 `Killing subprocess` 那几行）；最先死掉的 rank，是前面几行里输出中断的那个。"
                ),
                _ => say!(
                    en: "A process was ended by signal 9 (SIGKILL).",
                    zh: "一个进程被信号 9（SIGKILL）结束了。"
                ),
            };
            if era == Some(Era::RayWorker) {
                out.push(verdict(
                    Code::KilledBySigkill,
                    say!(
                        en: "A Ray worker died without a word: probably out of host memory, but the log does not prove it",
                        zh: "Ray worker 一声不响地死了：很可能是主机内存不足，但日志证明不了"
                    ),
                    what.then(say!(
                        en: "Ray's documentation gives this message as what a task sees when the Linux out-of-memory killer ended its worker (host RAM, not GPU memory). `dmesg -T | grep -i -E 'killed process|oom'` (or journalctl -k) on the worker's node shows whether it did; a crash leaves its stack in the worker's own log (python-core-worker-*.log and worker-*.err under /tmp/ray/session_latest/logs on that node).",
                        zh: "Ray 的文档说，Linux OOM killer 结束了 worker 时，任务看到的就是这条消息（主机内存，不是显存）。在 worker 所在节点上运行 `dmesg -T | grep -i -E 'killed process|oom'`（或 journalctl -k）能看出是不是它干的；如果是崩溃，worker 自己的日志（该节点 /tmp/ray/session_latest/logs 下的 python-core-worker-*.log 和 worker-*.err）里会有崩溃的调用栈。"
                    )),
                ));
                return;
            }
            let sender = if Platform::of(f) == Platform::MacOs {
                macos_sender()
            } else {
                let linux = say!(
                    en: "The usual sender is the kernel's out-of-memory killer (host RAM, not GPU memory), but a scheduler enforcing a time or memory limit, a watchdog, or someone running kill -9 sends the same signal: this evidence is circumstantial. `dmesg -T | grep -i -E 'killed process|oom'` (or journalctl -k) on the node shows whether the OOM killer acted; on Slurm, sacct -j JOBID -o JobID,State,MaxRSS,ReqMem; on Kubernetes, kubectl describe pod (Reason: OOMKilled).",
                    zh: "通常发出它的是内核的 OOM killer（主机内存，不是显存），但执行时间或内存上限的调度器、看门狗，或者有人运行 kill -9，发出的也是同一个信号：这个证据只是间接的。在节点上运行 `dmesg -T | grep -i -E 'killed process|oom'`（或 journalctl -k）能看出 OOM killer 有没有动手；Slurm 上用 sacct -j JOBID -o JobID,State,MaxRSS,ReqMem；Kubernetes 上用 kubectl describe pod（Reason: OOMKilled）。"
                );
                // zsh is macOS's default shell: where nothing says which
                // system ran it, macOS's own way is said too.
                if fact(f, "shell") == Some("zsh") && Platform::of(f) == Platform::Unknown {
                    linux.then(say!(
                        en: "If this ran on macOS (zsh is its default shell), there is no dmesg record: see below.",
                        zh: "如果这是在 macOS 上运行的（zsh 是它的默认 shell），就没有 dmesg 记录：见下文。"
                    ))
                } else {
                    linux
                }
            };
            out.push(verdict(
                Code::KilledBySigkill,
                say!(
                    en: "Killed by SIGKILL: probably out of host memory, but the log does not prove it",
                    zh: "被 SIGKILL 杀掉：很可能是主机内存不足，但日志证明不了"
                ),
                what.then(if Victim::of(f) == Victim::Python {
                    say!(
                        en: "SIGKILL cannot be caught, so Python prints no error of its own.",
                        zh: "SIGKILL 无法被捕获，所以 Python 不会打印自己的报错。"
                    )
                } else {
                    say!(
                        en: "SIGKILL cannot be caught, so the program prints no error of its own.",
                        zh: "SIGKILL 无法被捕获，所以程序不会打印自己的报错。"
                    )
                })
                .then(sender),
            ));
        }
    }
}

/// Whether the kill may have been on macOS: the text says so, or zsh
/// (macOS's default shell) reported it and nothing names the system.
fn may_be_macos(f: &Finding) -> bool {
    match Platform::of(f) {
        Platform::MacOs => true,
        Platform::Unknown => fact(f, "shell") == Some("zsh"),
        _ => false,
    }
}

/// Who sends SIGKILL on macOS: no Linux OOM killer and no dmesg record
/// of one, but the kernel's memory-status mechanism (jetsam), and
/// code-signing enforcement at a program's start.
fn macos_sender() -> Said {
    say!(
        en: "macOS has no Linux out-of-memory killer and no dmesg record of one: when RAM, the memory compressor and swap run short, its kernel's memory-status mechanism (jetsam) kills processes with SIGKILL. On Apple silicon the GPU (Metal, MPS, MLX) shares that memory, so a model on the GPU counts against it too. macOS also sends SIGKILL to a program whose code signature it refuses, but at its start, not after it has run for a while.",
        zh: "macOS 没有 Linux 那样的 OOM killer，也没有它的 dmesg 记录：当内存、内存压缩器和 swap 都不够时，它的内核的内存状态机制（jetsam）用 SIGKILL 杀掉进程。在 Apple 芯片上，GPU（Metal、MPS、MLX）和它共用这块内存，所以放在 GPU 上的模型也算在里面。macOS 也会对代码签名不被认可的程序发 SIGKILL，但那是在程序刚启动时，而不是运行了一阵之后。"
    )
}

/// What Slurm counted, in which step, and what it measured.
fn slurm_detail(f: &Finding) -> Said {
    let step = match fact(f, fact::STEP) {
        Some(s) => say!(en: " step {s}", zh: "作业步 {s} ", s = s),
        None => say!(en: " this job", zh: "这个作业"),
    };
    let events = match fact(f, fact::OOM_KILL_EVENTS) {
        Some("1") => Said {
            en: format!("Slurm counted 1 out-of-memory kill event in{}", step.en),
            zh: format!("Slurm 在{}中记录到 1 次 OOM kill 事件", step.zh),
        },
        Some(n) => Said {
            en: format!("Slurm counted {n} out-of-memory kill events in{}", step.en),
            zh: format!("Slurm 在{}中记录到 {n} 次 OOM kill 事件", step.zh),
        },
        None => Said {
            en: format!("Slurm reports an out-of-memory kill in{}", step.en),
            zh: format!("Slurm 报告{}中发生了 OOM kill", step.zh),
        },
    };
    let usage = match (fact(f, fact::USAGE), fact(f, fact::LIMIT)) {
        (Some(usage), Some(limit)) => say!(
            en: " It measured {usage} against a limit of {limit} (Slurm's units, usually KiB or bytes depending on version).",
            zh: "它测得的用量是 {usage}，上限是 {limit}（Slurm 的单位，随版本不同通常是 KiB 或字节）。",
            usage = usage,
            limit = limit
        ),
        _ => Said::default(),
    };
    Said {
        en: format!(
            "{}: processes in the job's memory cgroup used more host RAM than the job requested (--mem, --mem-per-cpu or --mem-per-gpu, or the partition's default), and the kernel killed them.{} This is host RAM, not GPU memory.",
            events.en, usage.en
        ),
        zh: format!(
            "{}：作业内存 cgroup 里的进程用掉的主机内存超过了作业申请的量（--mem、--mem-per-cpu 或 --mem-per-gpu，或者分区的默认值），内核杀掉了它们。{}这是主机内存，不是显存。",
            events.zh, usage.zh
        ),
    }
}

/// What systemd-oomd measured: the pressure of the slice it watches, its
/// limit and how long it lasted (src/oom/oomd-util.c's kill message).
fn oomd_detail(f: &Finding) -> Said {
    let unit = fact(f, "unit").unwrap_or("a unit");
    let measured = match (
        fact(f, "cgroup"),
        fact(f, "pressure"),
        fact(f, "pressure_limit"),
    ) {
        (Some(cgroup), Some(pressure), Some(limit)) => {
            let lasted = match fact(f, "pressure_duration") {
                Some(duration) => say!(
                    en: " for more than {duration}",
                    zh: "，持续超过 {duration}",
                    duration = duration
                ),
                None => Said::default(),
            };
            let head = say!(
                en: "systemd-oomd killed {unit} because the memory pressure of {cgroup} was {pressure}, above its limit of {limit}",
                zh: "systemd-oomd 杀掉 {unit}，是因为 {cgroup} 的内存压力达到 {pressure}，高于它的上限 {limit}",
                unit = unit,
                cgroup = cgroup,
                pressure = pressure,
                limit = limit
            );
            Said {
                en: format!("{}{}.", head.en, lasted.en),
                zh: format!("{}{}。", head.zh, lasted.zh),
            }
        }
        _ => say!(
            en: "systemd-oomd killed {unit} because memory pressure stayed above its limit.",
            zh: "systemd-oomd 杀掉 {unit}，是因为内存压力一直高于它的上限。",
            unit = unit
        ),
    };
    let terminal = if f.text.contains("vte-spawn-") || f.text.contains(".Terminal.") {
        say!(
            en: "That scope is a terminal window's: what it killed is whatever ran in that terminal.",
            zh: "这个 scope 属于一个终端窗口：被杀的是在那个终端里运行的程序。"
        )
    } else {
        Said::default()
    };
    measured
        .then(say!(
            en: "Memory pressure (PSI) is the share of time tasks stalled waiting for memory; systemd-oomd acts on it, not on a usage figure, and it is not the kernel's out-of-memory killer. RAM was short enough that the system spent its time reclaiming (swapping, dropping caches), though not necessarily used up, and systemd-oomd killed the cgroup under that slice with the most reclaim activity, usually the one allocating. Host RAM, not GPU memory.",
            zh: "内存压力（PSI）是任务因等待内存而停顿的时间占比；systemd-oomd 按它动手，而不是按内存用量，它也不是内核的 OOM killer。内存紧张到系统把时间都花在回收上（换出、丢弃缓存），但不一定真的用完了；systemd-oomd 杀掉的是这个 slice 下回收活动最多的 cgroup，通常就是正在分配内存的那个。是主机内存，不是显存。"
        ))
        .then(terminal)
}

/// How many workers torchelastic saw killed, and their PIDs.
fn torchelastic_what(f: &Finding) -> Said {
    let n = fact(f, fact::KILLED_PROCESSES).unwrap_or("1");
    let pids = match fact(f, fact::PIDS) {
        Some(p) => say!(en: ", PID {p}", zh: "，PID {p}", p = p),
        None => Said::default(),
    };
    let plural = if n == "1" { "" } else { "es" };
    Said {
        en: format!(
            "torchelastic reports {n} worker process{plural} ended by signal 9 (SIGKILL, exit code -9){}.",
            pids.en
        ),
        zh: format!(
            "torchelastic 报告 {n} 个 worker 进程被信号 9（SIGKILL，退出码 -9）结束{}。",
            pids.zh
        ),
    }
}

/// Whom the killer's choice points at: the victim, or, when it held little,
/// whatever it could not kill.
fn small_victim_note(f: &Finding) -> Said {
    match small_victim(f) {
        Some(SmallVictim {
            score: Some(score),
            held,
        }) => {
            let held = match held {
                Some(held) => say!(
                    en: " ({held} in its own and shared pages)",
                    zh: "（它自己的页面和共享页面共 {held}）",
                    held = fmt(held)
                ),
                None => Said::default(),
            };
            let share = say!(
                en: "The victim's score was {score}, its share of RAM plus swap in thousandths: it held about {percent} % of the memory",
                zh: "被杀进程的分数是 {score}，即它占内存加 swap 的千分比：它只占了大约 {percent}% 的内存",
                score = score,
                percent = format!("{}.{}", score / 10, score % 10)
            );
            Said {
                en: format!("{}{}.", share.en, held.en),
                zh: format!("{}{}。", share.zh, held.zh),
            }
            .then(say!(
                en: "The killer picks the largest process it may kill, so most of the memory was held elsewhere: by many smaller processes (workers, copies of a job), files in /dev/shm or another tmpfs, processes protected by oom_score_adj, or the kernel itself. The task table the kernel prints just before the kill (dmesg -T) shows who held it.",
                zh: "OOM killer 挑的是它能杀的最大进程，所以大部分内存在别处：许多更小的进程（worker、一个作业的多个副本）、/dev/shm 或其他 tmpfs 里的文件、用 oom_score_adj 保护起来的进程，或者内核自己。dmesg -T 里内核在杀进程之前打印的进程表能看出是谁占的。"
            ))
        }
        Some(SmallVictim {
            held: Some(held), ..
        }) => say!(
            en: "The victim held only {held}, and the killer picks the largest process it may kill: most of the memory was held where it could not or would not kill — files in /dev/shm or another tmpfs, a process protected by oom_score_adj, or the kernel itself. The task table the kernel prints just before \"Killed process\" (dmesg -T) shows who held it.",
            zh: "被杀的进程只占了 {held}，而 OOM killer 挑的是它能杀的最大进程：大部分内存被它杀不了或不愿杀的东西占着——/dev/shm 或其他 tmpfs 里的文件、用 oom_score_adj 保护起来的进程，或者内核自己。dmesg -T 里内核在 “Killed process” 之前打印的进程表能看出是谁占的。",
            held = fmt(held)
        ),
        _ => say!(
            en: "The killer picks the process using the most memory, which is usually — but not always — the one that grew.",
            zh: "OOM killer 挑的是占内存最多的进程，通常——但不一定——就是内存涨上去的那个。"
        ),
    }
}

/// A scheduler's or container's memory request: where the text names
/// Slurm's or Kubernetes' option, it is offered only for those.
const ASK_FOR_MORE_MEMORY: FixSpec =
    FixSpec::new("ask-for-more-memory", "Ask for more memory", "申请更多内存");

const CONFIRM_OOM_KILLER: FixSpec = FixSpec::new(
    "confirm-oom-killer",
    "Confirm it was the out-of-memory killer",
    "确认是不是 OOM killer",
)
.cost(Cost::Look);

/// `num_workers`, `prefetch_factor`, `__getitem__`: PyTorch's DataLoader.
const LIGHTER_WORKERS: FixSpec = FixSpec::new(
    "lighter-dataloader-workers",
    "Use fewer or lighter DataLoader workers",
    "减少 DataLoader worker，或让它们更轻",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Speed);

/// `torch.load(mmap=True)` (2.1; the text says so), `assign=True`,
/// `low_cpu_mem_usage`.
/// Writing a checkpoint: the copy it gathers in host RAM.
const SAVE_CHECKPOINTS_WITH_LESS_RAM: FixSpec = FixSpec::new(
    "save-checkpoints-with-less-ram",
    "Save checkpoints with less host RAM",
    "保存 checkpoint 时少占主机内存",
)
.sources(&[
    "PyTorch documentation: FSDP state_dict_type (SHARDED_STATE_DICT), torch.distributed.checkpoint",
    "Hugging Face Transformers documentation: save_pretrained (max_shard_size), TrainingArguments (save_only_model)",
    "PyTorch Lightning documentation: ModelCheckpoint (save_weights_only)",
]);

const CHECKPOINTS_WITHOUT_COPY: FixSpec = FixSpec::new(
    "load-checkpoints-without-ram-copy",
    "Load checkpoints without a full copy in RAM",
    "加载 checkpoint 时不要在内存里整份复制",
)
.frameworks(&[Framework::PyTorch])
.sources(&["PyTorch documentation: torch.load (mmap)"]);

const PINNED_MEMORY_OFF: FixSpec = FixSpec::new(
    "pinned-memory-off",
    "Turn off pinned memory if RAM is tight",
    "内存紧张时关掉锁页内存",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Speed)
.applied_when(&["pin_memory=false"]);

const ALLOCATE_LESS_AT_ONCE: FixSpec = FixSpec::new(
    "allocate-less-at-once",
    "Allocate less at once",
    "一次少分配一些",
);

const FIND_RAM_HOLDER: FixSpec = FixSpec::new(
    "find-ram-holder",
    "Find what holds the RAM",
    "找出是谁占着内存",
)
.cost(Cost::Look);

/// For a victim that is not a Python process: nothing framework-specific.
const SHRINK_OTHER_PROCESS: FixSpec = FixSpec::new(
    "shrink-the-killed-process",
    "Make the killed program use less memory",
    "让被杀的程序少用内存",
)
.cost(Cost::Quality);

/// Python shows in the finding: a traceback, an exception class, a
/// DataLoader or a launcher's report, a Python process, or PyTorch named.
fn shows_python(f: &Finding) -> bool {
    f.traceback.is_some()
        || f.exception.is_some()
        || matches!(f.era, Some(Era::Dataloader) | Some(Era::Torchelastic))
        || fact(f, "progress_bar").is_some()
        || fact(f, fact::PROCESS).is_some_and(runs_python)
        || ["torch", "python", "DataLoader", "Traceback"]
            .iter()
            .any(|w| f.text.contains(w))
}

/// A DataLoader shows: its name, its workers' process name
/// (`pt_data_worker`), its `num_workers` argument or its worker loop, or
/// the kernel sacrificed a child of the Python process it chose (the
/// children of a Python trainer are its workers).
fn shows_dataloader(f: &Finding) -> bool {
    if fact(f, "killed_child").is_some() && fact(f, fact::PROCESS).is_some_and(runs_python) {
        return true;
    }
    let text = f.text.to_ascii_lowercase();
    let in_text = [
        "dataloader",
        "pt_data_worker",
        "num_workers",
        "_worker_loop",
    ]
    .iter()
    .any(|w| text.contains(w));
    let in_traceback = f.traceback.as_ref().is_some_and(|tb| {
        tb.frames
            .iter()
            .chain(tb.chained.iter().flat_map(|c| c.frames.iter()))
            .any(|fr| fr.file.replace('\\', "/").contains("torch/utils/data/"))
    });
    in_text
        || in_traceback
        || fact(f, fact::PROCESS).is_some_and(|p| p.starts_with("pt_data_worker"))
}

/// Where a killed Python process's RAM went, when nothing shows a
/// DataLoader: the victim's own size when the kernel printed it, and the
/// kernel's task table for the rest.
fn python_holder(f: &Finding) -> Said {
    let table = say!(
        en: "The kernel's task table (dmesg -T: the rows under \"[ pid ] uid tgid total_vm rss ...\" just before \"Killed process\"; rss in 4 KiB pages) shows who held the RAM: the largest rss rows hold it, and several python rows of about the same size are DataLoader workers or ranks, each with its own copy. While it runs: ps aux --sort=-rss | head.",
        zh: "内核的进程表（dmesg -T 里 “Killed process” 之前、“[ pid ] uid tgid total_vm rss ...” 下面的那些行；rss 的单位是 4 KiB 的页）能看出是谁占着内存：rss 最大的几行就是占内存的；如果有好几行大小差不多的 python，那是 DataLoader worker 或多个 rank，各有一份自己的副本。运行时也可以用 ps aux --sort=-rss | head 查看。"
    );
    match extra(f, "anon_rss_bytes").filter(|&held| held > 0) {
        Some(held) => say!(
            en: "The killed process itself held {held} of RAM (anon-rss): find what in it grows — log its RSS every step (psutil.Process().memory_info().rss) or run it under memray or tracemalloc. The usual holders are a dataset or features read whole into RAM, outputs or losses kept in a list, a checkpoint read whole, or a second copy of the model.",
            zh: "被杀的进程自己就占了 {held} 内存（anon-rss）：找出它里面是什么在涨——每一步记录它的 RSS（psutil.Process().memory_info().rss），或者用 memray、tracemalloc 跑一遍。常见的是整个读进内存的数据集或特征、存在列表里的输出或 loss、整个读进来的 checkpoint，或者模型的第二份副本。",
            held = fmt(held)
        )
        .then(table),
        None => table,
    }
}

const LOWER_JOB_MEMORY: FixSpec = FixSpec::new(
    "lower-job-memory",
    "Find what holds the RAM and make it use less",
    "找出谁占着内存，让它少用",
)
.cost(Cost::Quality);

/// Process names of Python programs as the kernel prints them (the first
/// 15 bytes of the executable's or thread's name): the interpreter,
/// PyTorch's main thread, Ray's workers and the launchers.
fn runs_python(name: &str) -> bool {
    const PYTHON: &[&str] = &[
        "python",
        "pt_",
        "ray::",
        "torchrun",
        "accelerate",
        "deepspeed",
        "ipykernel",
        "jupyter",
        "uvicorn",
        "gunicorn",
        "vllm",
        "celery",
        // Console scripts of Python trainers: the kernel names the
        // script, not the interpreter (OpenNMT-py's onmt_train, fairseq's
        // fairseq-train, Ultralytics' yolo, ...).
        "onmt_",
        "fairseq-",
        "allennlp",
        "ludwig",
        "yolo",
        "llamafactory",
        "axolotl",
        "t2t-",
        "sockeye-",
    ];
    let name = name.to_ascii_lowercase();
    PYTHON.iter().any(|p| name.starts_with(p))
}

const ENLARGE_PAGE_FILE: FixSpec = FixSpec::new(
    "enlarge-windows-page-file",
    "Enlarge the Windows page file",
    "扩大 Windows 页面文件",
);

/// Whether the kubelet evicted the pod for memory pressure on its node
/// (rather than the kernel killing a container at its limit).
fn evicted(f: &Finding) -> bool {
    fact(f, fact::REASON) == Some(fact::EVICTED)
}

/// What the kubelet's eviction message says, with the figures it gives.
fn eviction_detail(f: &Finding) -> Said {
    let general = say!(
        en: "The kubelet evicts pods when the node's available memory falls below its eviction threshold. It picks first the pods whose memory use is above their request (resources.requests.memory), so a pod that asks for little and uses much goes first. This is host RAM, not GPU memory.",
        zh: "节点的可用内存低于 kubelet 的驱逐阈值时，kubelet 会驱逐 pod。它先挑内存用量超过自己申请量（resources.requests.memory）的 pod，所以申请得少、用得多的 pod 最先被驱逐。这是主机内存，不是显存。"
    );
    let usage = match (fact(f, "container"), fact(f, "used"), fact(f, "request")) {
        (Some(container), Some(usage), Some(request)) => say!(
            en: " Container {container} was using {usage} against a request of {request}.",
            zh: " 容器 {container} 用了 {usage}，而它只申请了 {request}。",
            container = container,
            usage = usage,
            request = request
        ),
        _ => say!(en: "", zh: ""),
    };
    let threshold = match (fact(f, "threshold"), fact(f, "available")) {
        (Some(threshold), Some(available)) => say!(
            en: " The node had {available} available, below the threshold of {threshold}.",
            zh: " 当时节点只剩 {available} 可用，低于阈值 {threshold}。",
            threshold = threshold,
            available = available
        ),
        _ => say!(en: "", zh: ""),
    };
    Said {
        en: format!("{}{}{}", general.en, usage.en, threshold.en),
        zh: format!("{}{}{}", general.zh, usage.zh, threshold.zh),
    }
}

/// Set the pod's memory request to what it uses: the scheduler then places
/// it where that fits, and the kubelet evicts it last.
const REQUEST_WHAT_IT_USES: FixSpec = FixSpec::new(
    "request-what-it-uses",
    "Request the memory the pod really uses",
    "按 pod 实际用量申请内存",
);

fn host_fixes(f: &Finding, has: &dyn Fn(Code) -> bool, out: &mut Vec<Fix>) {
    if super::cluster::owns(f) {
        return super::cluster::fixes(f, out);
    }
    if f.era == Some(Era::Kubernetes) && evicted(f) {
        out.push(fix(
            &REQUEST_WHAT_IT_USES,
            say!(
                en: "Set resources.requests.memory to the pod's real peak (and resources.limits.memory to the same value for the Guaranteed QoS class): the scheduler then puts it on a node with that much room, and the kubelet evicts it last. `kubectl describe node` shows the node's memory pressure and what else runs there.",
                zh: "把 resources.requests.memory 设成 pod 实际的峰值用量（resources.limits.memory 也设成同一个值，就是 Guaranteed QoS 类）：调度器会把它放到有这么多空闲内存的节点上，kubelet 也会最后才驱逐它。`kubectl describe node` 能看到节点的内存压力和上面还跑着什么。"
            ),
        ));
    }
    if has(Code::HostMemoryLimit) {
        let how = match f.era {
            // What the user may already have done (a bigger node, the whole
            // node) does not raise the limit: only the memory request does.
            Some(Era::Slurm) => say!(
                en: "First compare what the job used with what it asked for: `sacct -j JOBID -o JobID,MaxRSS,ReqMem,State`. The limit is the job's memory request (--mem, --mem-per-cpu or --mem-per-gpu, or the partition's default per CPU), not the node's size: a larger node or --exclusive alone does not raise it; --mem=0 requests all the memory of the node. Request more than MaxRSS with that option; if MaxRSS already reached the node's memory, no request helps and the program must use less (below).",
                zh: "先比较作业用了多少和申请了多少：`sacct -j JOBID -o JobID,MaxRSS,ReqMem,State`。上限是作业申请的内存（--mem、--mem-per-cpu 或 --mem-per-gpu，或者分区按 CPU 给的默认值），不是节点的大小：换更大的节点或只加 --exclusive 都不会提高它；--mem=0 才是申请节点的全部内存。用这些选项申请比 MaxRSS 更多的内存；如果 MaxRSS 已经到了节点的内存总量，申请多少都没用，只能让程序少用内存（见下）。"
            ),
            Some(Era::Kubernetes) => say!(
                en: "Raise the container's resources.limits.memory (and requests.memory) in the pod spec, or lower what the process holds (below).",
                zh: "在 pod spec 里调大容器的 resources.limits.memory（以及 requests.memory），或者减少进程占用的内存（见下）。"
            ),
            _ => say!(
                en: "Raise the container's or job's memory limit (docker run --memory, the cgroup's memory.max, your scheduler's memory request), or lower what the process holds (below).",
                zh: "调大容器或作业的内存上限（docker run --memory、cgroup 的 memory.max、调度器里的内存申请），或者减少进程占用的内存（见下）。"
            ),
        };
        out.push(fix(&ASK_FOR_MORE_MEMORY, how));
    }
    // Killed while a checkpoint was being written: that phase's RAM spike,
    // not the data pipeline or a batch.
    let saving = f.kind == Kind::HostOomKilled && super::setting::saving_checkpoint(f);
    if saving {
        out.push(fix(
            &SAVE_CHECKPOINTS_WITH_LESS_RAM,
            say!(
                en: "It was killed while a checkpoint was being written: saving gathers the weights (and usually the optimizer's state) into host RAM and serialises them there, on top of what the job already holds. Save on one rank only (if accelerator.is_main_process / trainer.is_global_zero); with FSDP or DeepSpeed ZeRO-3 save sharded state (FSDP's SHARDED_STATE_DICT, torch.distributed.checkpoint, DeepSpeed's per-rank files) instead of gathering the whole model on one rank; write safetensors in shards (save_pretrained(..., max_shard_size=\"2GB\")); leave the optimizer's state out where you will not resume (Lightning: ModelCheckpoint(save_weights_only=True); Hugging Face Trainer: save_only_model=True). Parameters or optimizer state offloaded to the CPU (ZeRO-Offload, FSDP's CPU offload) already fill RAM before the save adds its copy: offload less, or add RAM or swap.",
                zh: "进程是在写 checkpoint 时被杀的：保存会把权重（通常还有优化器状态）收集到主机内存里再序列化，这份内存叠加在作业已经占用的内存之上。只在一个 rank 上保存（if accelerator.is_main_process / trainer.is_global_zero）；用 FSDP 或 DeepSpeed ZeRO-3 时保存分片的状态（FSDP 的 SHARDED_STATE_DICT、torch.distributed.checkpoint、DeepSpeed 每个 rank 各自的文件），不要把整个模型收集到一个 rank 上；用 safetensors 分片保存（save_pretrained(..., max_shard_size=\"2GB\")）；不打算续训时不保存优化器状态（Lightning：ModelCheckpoint(save_weights_only=True)；Hugging Face Trainer：save_only_model=True）。参数或优化器状态卸载到 CPU 时（ZeRO-Offload、FSDP 的 CPU offload），保存之前它们已经占满了内存，保存又再加一份：少卸载一些，或者加内存或 swap。"
            ),
        ));
    }
    if has(Code::KilledBySigkill) {
        let how = if may_be_macos(f) {
            let mac = say!(
                en: "On macOS: watch Activity Monitor's Memory tab (Memory Pressure, Swap Used) while it runs; afterwards, log show --last 1h --predicate 'process == \"kernel\"' | grep -i -E 'jetsam|low swap|memorystatus' shows the kernel's kills for memory.",
                zh: "在 macOS 上：运行时看活动监视器的“内存”标签（内存压力、已使用的交换）；事后用 log show --last 1h --predicate 'process == \"kernel\"' | grep -i -E 'jetsam|low swap|memorystatus' 查看内核因内存而杀进程的记录。"
            );
            if Platform::of(f) == Platform::MacOs {
                mac
            } else {
                mac.then(say!(
                    en: "On Linux: dmesg -T | grep -i -E 'killed process|out of memory' (or journalctl -k).",
                    zh: "在 Linux 上：dmesg -T | grep -i -E 'killed process|out of memory'（或 journalctl -k）。"
                ))
            }
        } else if f.era == Some(Era::Mpi) {
            say!(
                en: "On node {node}, where rank {rank} ran: dmesg -T | grep -i -E 'killed process|out of memory' (or journalctl -k). Under Slurm: sacct -j JOBID -o JobID,State,MaxRSS,ReqMem. If none shows an OOM kill, look for a time limit or a watchdog instead.",
                zh: "在 rank {rank} 运行的节点 {node} 上：dmesg -T | grep -i -E 'killed process|out of memory'（或 journalctl -k）。在 Slurm 下：sacct -j JOBID -o JobID,State,MaxRSS,ReqMem。如果都没有显示 OOM kill，就去找时间上限或看门狗。",
                node = fact(f, "node").unwrap_or("?"),
                rank = fact(f, fact::RANK).unwrap_or("?")
            )
        } else if f.era == Some(Era::RayWorker) {
            say!(
                en: "On the worker's node: dmesg -T | grep -i -E 'killed process|out of memory' (or journalctl -k) shows whether the kernel killed it. If not, the worker's own log (python-core-worker-*.log, worker-*.err under /tmp/ray/session_latest/logs on that node) shows the crash that ended it.",
                zh: "在 worker 所在的节点上：dmesg -T | grep -i -E 'killed process|out of memory'（或 journalctl -k）能看出是不是内核杀了它。如果不是，worker 自己的日志（该节点 /tmp/ray/session_latest/logs 下的 python-core-worker-*.log、worker-*.err）会显示让它结束的崩溃。"
            )
        } else if in_docker(f) {
            say!(
                en: "`docker inspect -f '{{{{.State.OOMKilled}}}} {{{{.HostConfig.Memory}}}}' CONTAINER` says whether the kernel killed it at the container's memory limit and what that limit is (0: none, so the host's RAM ran out: dmesg -T on the host shows the kill). `docker stats` shows each container's use against its limit. If neither shows an OOM kill, look for a health check or a restart policy that stopped it.",
                zh: "`docker inspect -f '{{{{.State.OOMKilled}}}} {{{{.HostConfig.Memory}}}}' CONTAINER` 能看出内核是不是因为容器的内存上限杀掉了它，以及上限是多少（0 表示没有上限，那就是宿主机的内存用完了：在宿主机上 dmesg -T 能看到这次杀进程）。`docker stats` 显示每个容器的用量和上限。如果都没有显示 OOM kill，就去找停掉它的健康检查或重启策略。"
            )
        } else {
            say!(
                en: "On the node: dmesg -T | grep -i -E 'killed process|out of memory' (or journalctl -k). On Slurm: sacct -j JOBID -o JobID,State,MaxRSS,ReqMem. On Kubernetes: kubectl describe pod (Last State: Reason: OOMKilled). If none shows an OOM kill, look for a time limit or a watchdog instead.",
                zh: "在节点上：dmesg -T | grep -i -E 'killed process|out of memory'（或 journalctl -k）。Slurm 上：sacct -j JOBID -o JobID,State,MaxRSS,ReqMem。Kubernetes 上：kubectl describe pod（Last State: Reason: OOMKilled）。如果都没有显示 OOM kill，就去找时间上限或看门狗。"
            )
        };
        out.push(fix(&CONFIRM_OOM_KILLER, how));
    }
    if saving {
        return;
    }
    let dataloader = fix(
        &LIGHTER_WORKERS,
        say!(
            en: "Each DataLoader worker is a separate process; a Dataset that holds Python lists or dicts of samples gets copied into every worker as reference counts touch its pages. Lower num_workers (and prefetch_factor), keep samples in NumPy arrays or memory-mapped files instead of Python objects, and read them lazily in __getitem__.",
            zh: "每个 DataLoader worker 都是单独的进程；Dataset 里用 Python 列表或字典存的样本，会因为引用计数触碰到它们的页面而被复制到每个 worker 里。调低 num_workers（以及 prefetch_factor），把样本放在 NumPy 数组或内存映射文件里而不是 Python 对象里，并在 __getitem__ 里按需读取。"
        ),
    );
    let checkpoint = fix(
        &CHECKPOINTS_WITHOUT_COPY,
        say!(
            en: "torch.load(path, map_location=\"cpu\", mmap=True, weights_only=True) (PyTorch ≥ 2.1) maps the file instead of reading it; model.load_state_dict(state, assign=True) avoids a second copy; Hugging Face: from_pretrained(..., low_cpu_mem_usage=True, torch_dtype=torch.bfloat16) or device_map=\"auto\". With several ranks per node, every rank loads its own copy: load on one rank, or shard.",
            zh: "torch.load(path, map_location=\"cpu\", mmap=True, weights_only=True)（PyTorch ≥ 2.1）把文件映射进来，而不是整个读进内存；model.load_state_dict(state, assign=True) 避免再复制一份；Hugging Face：from_pretrained(..., low_cpu_mem_usage=True, torch_dtype=torch.bfloat16) 或 device_map=\"auto\"。一个节点上有多个 rank 时，每个 rank 都会加载自己的一份：只在一个 rank 上加载，或者分片。"
        ),
    );
    let pinned = fix(
        &PINNED_MEMORY_OFF,
        say!(
            en: "DataLoader(pin_memory=True) and pinned buffers are page-locked RAM the system cannot swap out; set pin_memory=False or reduce prefetching.",
            zh: "DataLoader(pin_memory=True) 和锁页缓冲区用的是系统不能换出的锁页内存；设 pin_memory=False，或者减少预取。"
        ),
    );
    // llama.cpp's family (Ollama's check before it loads a model): its own
    // levers, in RAM's direction.
    if let Some(lever) = super::levers::llama_host_lever(f, &super::common::shown(f)) {
        out.push(lever);
        return;
    }
    if by_oomd(f) {
        oomd_fixes(out);
        return;
    }
    let victim = Victim::of(f);
    if victim == Victim::Notebook {
        out.push(fix(
            &NOTEBOOK_PEAK,
            say!(
                en: "The runtime's RAM gauge samples every few seconds and misses a short peak: one call that builds a large object at once (a dense one-hot matrix of labels, a pairwise or distance matrix, a whole dataset read into one array or DataFrame, a model loaded twice) can take all the RAM between two samples. Run the cells one by one to find the one that crashes, then build that object in chunks, in a smaller dtype or sparse (integer labels with a sparse loss instead of a one-hot matrix). Objects of earlier cells stay in memory until you del them or restart the runtime. Or use a runtime with more RAM.",
                zh: "运行时的内存仪表每隔几秒才采样一次，会错过短暂的峰值：一次性构建大对象的调用（稠密的 one-hot 标签矩阵、两两距离矩阵、整个数据集读进一个数组或 DataFrame、模型加载了两次）可以在两次采样之间吃光内存。逐个运行单元格，找出崩溃的那个，然后分块构建那个对象，用更小的 dtype 或稀疏表示（用整数标签配稀疏损失函数，而不是 one-hot 矩阵）。之前单元格的对象会一直占着内存，直到 del 它们或重启运行时。或者换内存更大的运行时。"
            ),
        ));
        return;
    }
    if f.kind == Kind::HostOom && windows_commit_limit_reached(f) {
        // So small a request fails only at the commit limit: the page file
        // and what holds the memory come first, not the request's size.
        out.push(fix(
            &ENLARGE_PAGE_FILE,
            say!(
                en: "A request this small fails only when Windows' commit limit (RAM + page file) is already used up: Task Manager → Performance → Memory shows \"Committed\" against the limit. Set the page file to system-managed or larger (System Properties → Advanced → Performance → Virtual memory).",
                zh: "这么小的申请失败，只说明 Windows 的提交上限（内存 + 页面文件）已经用完了：任务管理器 → 性能 → 内存里的“已提交”显示用量和上限。把页面文件设为系统管理的大小或调大（系统属性 → 高级 → 性能 → 虚拟内存）。"
            ),
        ));
        out.push(fix(
            &FIND_RAM_HOLDER,
            say!(
                en: "Task Manager → Details, with the \"Commit size\" column added and sorted, shows which processes hold the commit charge: close what you do not need (browsers, other Python processes, earlier runs still alive), and with a DataLoader use fewer workers: on Windows each worker is a new process with its own copy of the Dataset.",
                zh: "任务管理器 → 详细信息，加上“提交大小”列并排序，就能看到哪些进程占着提交量：关掉用不着的（浏览器、别的 Python 进程、还活着的上一次运行），如果用了 DataLoader，就减少 worker：在 Windows 上每个 worker 都是一个新进程，各有一份 Dataset。"
            ),
        ));
        return;
    }
    if f.kind == Kind::HostOom
        && (super::setting::python_without_torch(f)
            || super::setting::Program::of(f).is_native()
            || another_framework_shows(f))
    {
        // Another library's arrays, a native program or another framework
        // (TensorFlow's log path), and no PyTorch: no DataLoader,
        // checkpoint or pinned-memory advice.
        out.push(fix(&ALLOCATE_LESS_AT_ONCE, arrays_without_torch(f)));
        return;
    }
    if f.kind == Kind::HostOom && (fact(f, fact::REPORTED_BY).is_none() || shows_python(f)) {
        out.push(fix(
            &ALLOCATE_LESS_AT_ONCE,
            say!(
                en: "Build large arrays in chunks, or keep them on disk and map them (numpy.memmap, torch.from_file, safetensors) instead of creating them whole in RAM.",
                zh: "分块构建大数组，或者把它们留在磁盘上再映射进来（numpy.memmap、torch.from_file、safetensors），而不是在内存里整个创建出来。"
            ),
        ));
    }
    if small_victim(f).is_some() {
        // The victim is not what filled the machine: its own fixes would
        // shrink the wrong process.
        out.push(fix(
            &FIND_RAM_HOLDER,
            say!(
                en: "dmesg -T shows the kernel's task table just before \"Killed process\": its largest rss rows hold the memory. Check tmpfs files (df -h /dev/shm /tmp /run; stale DataLoader or NCCL segments in /dev/shm), processes started with a negative oom_score_adj (cat /proc/PID/oom_score_adj), and the kernel's own use (grep -E 'Slab|Shmem|Unevict' /proc/meminfo).",
                zh: "dmesg -T 里 “Killed process” 前面有内核打印的进程表：rss 最大的几行就是占内存的。检查 tmpfs 里的文件（df -h /dev/shm /tmp /run；/dev/shm 里残留的 DataLoader 或 NCCL 段）、用负的 oom_score_adj 启动的进程（cat /proc/PID/oom_score_adj），以及内核自己的占用（grep -E 'Slab|Shmem|Unevict' /proc/meminfo）。"
            ),
        ));
        return;
    }
    match victim {
        Victim::Daemon(name) => {
            out.push(fix(
                &DAEMON_GREW,
                say!(
                    en: "{name} is a daemon of the batch system or the machine, not a job: a daemon the killer picks held the most memory, which for a daemon means a leak or a backlog (jobs, records or connections it keeps). Watch its size over time (ps -o pid,rss,etime -C {name}), look in its log and release notes for a leak, and restart or upgrade it. Then keep the killer off it so that a job is killed instead: OOMScoreAdjust=-1000 in its systemd unit, or echo -1000 > /proc/PID/oom_score_adj at its start.",
                    zh: "{name} 是批处理系统或机器自己的守护进程，不是作业：被 OOM killer 挑中说明它占的内存最多，对守护进程来说这意味着内存泄漏或积压（它保存的作业、记录或连接）。观察它的大小随时间的变化（ps -o pid,rss,etime -C {name}），到它的日志和版本说明里找泄漏，然后重启或升级它。之后让 OOM killer 别碰它，改杀作业：在它的 systemd unit 里设 OOMScoreAdjust=-1000，或者在它启动时 echo -1000 > /proc/PID/oom_score_adj。",
                    name = name
                ),
            ));
            return;
        }
        Victim::Program(name) => {
            // The killer or the shell named a program that is not Python (a
            // compiler, a shell tool, a server): DataLoader and checkpoint
            // advice would be for a program that was not running.
            out.push(fix(
                &SHRINK_OTHER_PROCESS,
                say!(
                    en: "The killed process is {name}, not a Python training process: make it use less memory (its own options for threads, buffers or input size), run fewer copies of it at once, or give the machine or container more memory.",
                    zh: "被杀的进程是 {name}，不是 Python 训练进程：让它少用内存（它自己的线程数、缓冲区或输入大小选项），同时少跑几个它的副本，或者给机器或容器更多内存。",
                    name = name
                ),
            ));
            return;
        }
        Victim::Notebook | Victim::Python | Victim::Unknown => {}
    }
    if is_ray_monitor(f) {
        out.push(fix(
            &super::cluster::RAY_FEWER_AT_ONCE,
            say!(
                en: "Run fewer tasks or actors side by side on a node: give them a memory request (@ray.remote(memory=...) in bytes, or more num_cpus each) so Ray schedules fewer at once; see what each holds with `ray memory`, the dashboard, or the raylet log the message names; or use nodes with more RAM. Raising RAY_memory_usage_threshold or turning the monitor off (RAY_memory_monitor_refresh_ms=0) only leaves the kill to the kernel.",
                zh: "让一个节点上同时运行的任务或 actor 少一些：给它们设内存需求（@ray.remote(memory=...)，单位是字节，或给每个多分几个 num_cpus），Ray 就会少并排调度几个；用 `ray memory`、dashboard 或报错里提到的 raylet 日志看每个占了多少；或者换内存更大的节点。调高 RAY_memory_usage_threshold 或关掉监控（RAY_memory_monitor_refresh_ms=0）只会把杀进程的事交给内核。"
            ),
        ));
        return;
    }
    if f.era == Some(Era::RayWorker) {
        out.push(fix(
            &super::cluster::RAY_FEWER_AT_ONCE,
            say!(
                en: "If the kernel killed it: run fewer tasks or actors side by side on a node: give them a memory request (@ray.remote(memory=...) in bytes, or more num_cpus each) so Ray schedules fewer at once; see what each holds with `ray memory`, `ray status` or the dashboard; or use nodes with more RAM. Ray's memory monitor (RAY_memory_usage_threshold, 0.95 by default) kills before the kernel would only where it is on and sees the memory (RAY_memory_monitor_refresh_ms=0 turns it off).",
                zh: "如果是内核杀的：让一个节点上同时运行的任务或 actor 少一些：给它们设内存需求（@ray.remote(memory=...)，单位是字节，或给每个多分几个 num_cpus），Ray 就会少并排调度几个；用 `ray memory`、`ray status` 或 dashboard 看每个占了多少；或者换内存更大的节点。Ray 的内存监控（RAY_memory_usage_threshold，默认 0.95）只有在开着并且看得到这些内存时，才会抢在内核之前动手（RAY_memory_monitor_refresh_ms=0 会关掉它）。"
            ),
        ));
        return;
    }
    if victim != Victim::Python {
        // Nothing shows Python (a shell's `Killed`, an exit status, a
        // scheduler's limit, a program that named itself): DataLoader and
        // checkpoint advice would be for a program that may not be running.
        out.push(fix(&LOWER_JOB_MEMORY, find_holder(f)));
        return;
    }
    let loading = matches!(f.phase.name.as_str(), "model_load" | "checkpoint")
        || fact(f, "progress_bar").is_some_and(|bar| bar.contains("Loading checkpoint"));
    let data =
        f.era == Some(Era::Dataloader) || f.phase.name == "data_loading" || shows_dataloader(f);
    if may_be_macos(f) {
        // No kernel task table to read, and no pinned host memory to
        // give back (pin_memory is CUDA's).
        if !loading && !data && f.kind == Kind::HostOomKilled {
            out.push(fix(
                &FIND_RAM_HOLDER,
                say!(
                    en: "While it runs, Activity Monitor's Memory column or top -o mem (macOS), or ps aux --sort=-rss | head (Linux), shows what holds the memory; in the program, log its footprint each step (psutil.Process().memory_info().rss) or run it under memray. On Apple silicon a model on the GPU (MPS, MLX, Core ML) uses the same memory: a smaller or quantized model, or float16 instead of float32, takes less of it.",
                    zh: "运行时用活动监视器的“内存”列或 top -o mem（macOS），或者 ps aux --sort=-rss | head（Linux），查看谁占着内存；在程序里每一步记录它的占用（psutil.Process().memory_info().rss），或者用 memray 跑一遍。在 Apple 芯片上，放在 GPU 上的模型（MPS、MLX、Core ML）用的是同一块内存：更小的或量化的模型，或者用 float16 代替 float32，占得更少。"
                ),
            ));
        }
        if loading {
            out.extend([checkpoint, dataloader]);
        } else {
            out.push(dataloader);
        }
        return;
    }
    if loading {
        out.extend([checkpoint, dataloader, pinned]);
    } else if data {
        out.extend([dataloader, pinned]);
    } else if f.kind == Kind::HostOomKilled {
        // A killed process named python is no evidence of a DataLoader:
        // who held the RAM comes first, then the data pipeline.
        out.push(fix(&FIND_RAM_HOLDER, python_holder(f)));
        out.extend([dataloader, checkpoint, pinned]);
    } else {
        out.extend([dataloader, checkpoint, pinned]);
    }
    if f.kind == Kind::HostOom && f.era != Some(Era::Posix) && (f.era.is_some() || on_windows(f)) {
        out.push(fix(
            &ENLARGE_PAGE_FILE,
            say!(
                en: "Windows fails allocations at its commit limit (RAM + page file): set the page file to system-managed or larger (System Properties → Advanced → Performance → Virtual memory).",
                zh: "Windows 在到达提交上限（内存 + 页面文件）时让分配失败：把页面文件设为系统管理的大小或调大（系统属性 → 高级 → 性能 → 虚拟内存）。"
            ),
        ));
    }
}

/// Only where Windows shows: a grammar finding on a Linux node has no era.
fn on_windows(f: &Finding) -> bool {
    f.text.contains("WinError")
        || f.text.contains("paging file")
        || f.text.contains(":\\")
        || f.traceback.as_ref().is_some_and(|tb| {
            tb.frames
                .iter()
                .any(|fr| fr.file.len() > 2 && fr.file.as_bytes()[1] == b':')
        })
}

/// Windows' CPU allocator (its `not enough memory` forms) refused a request
/// below [`COMMIT_LIMIT_SMALL_REQUEST_MAX`].
fn windows_commit_limit_reached(f: &Finding) -> bool {
    matches!(f.era, Some(Era::NotEnoughMemory) | Some(Era::BuyNewRam))
        && fact(f, fact::REPORTED_BY).is_none()
        && f.sizes
            .requested_bytes
            .is_some_and(|n| n < COMMIT_LIMIT_SMALL_REQUEST_MAX)
}

/// systemd-oomd's own remedies: what raised the pressure, room to swap, and
/// its limit for the slice.
fn oomd_fixes(out: &mut Vec<Fix>) {
    out.push(fix(
        &FIND_PRESSURE_SOURCE,
        say!(
            en: "`journalctl -u systemd-oomd` lists each kill with its cgroup; `oomctl` shows the cgroups it watches, their pressure and limits; while the work runs, `systemd-cgtop -m` or `ps aux --sort=-rss | head` shows what holds the RAM. Make that program use less memory, or run fewer programs at once.",
            zh: "`journalctl -u systemd-oomd` 列出每次杀进程和对应的 cgroup；`oomctl` 显示它监控的 cgroup、压力和上限；工作运行时，`systemd-cgtop -m` 或 `ps aux --sort=-rss | head` 能看到谁占着内存。让那个程序少用内存，或者同时少跑几个程序。"
        ),
    ));
    out.push(fix(
        &ADD_SWAP,
        say!(
            en: "Add swap or zram (a swap file, or zram-generator): with room to move idle pages out, reclaim stalls less and the pressure stays under the limit. A machine with no or little swap reaches it soonest.",
            zh: "加 swap 或 zram（一个 swap 文件，或者 zram-generator）：有地方换出闲置页面，回收就不容易停顿，压力也能保持在上限以下。没有 swap 或 swap 很小的机器最先碰到上限。"
        ),
    ));
    out.push(fix(
        &OOMD_LIMIT,
        say!(
            en: "Raise the limit of the slice it watches: `systemctl edit user@.service` (or the slice the message names) and set ManagedOOMMemoryPressureLimit= higher (e.g. 80%); DefaultMemoryPressureDurationSec= in oomd.conf sets how long pressure must last. Or run the heavy job in its own scope with a cap: `systemd-run --user --scope -p MemoryMax=16G COMMAND`. Turning systemd-oomd off (`systemctl disable --now systemd-oomd`) leaves the kernel's killer, which acts later, after the desktop may have frozen.",
            zh: "调高它监控的 slice 的上限：`systemctl edit user@.service`（或报错里提到的 slice），把 ManagedOOMMemoryPressureLimit= 设高一些（如 80%）；oomd.conf 里的 DefaultMemoryPressureDurationSec= 决定压力要持续多久。或者把重任务放进自己的 scope 并设上限：`systemd-run --user --scope -p MemoryMax=16G COMMAND`。关掉 systemd-oomd（`systemctl disable --now systemd-oomd`）就只剩内核的 OOM killer，它动手更晚，桌面可能先卡死。"
        ),
    ));
}

/// Finding what holds the RAM, with the tools of where it ran.
fn find_holder(f: &Finding) -> Said {
    let tools = if f.era == Some(Era::Slurm) {
        say!(
            en: "sacct -j JOBID -o JobID,MaxRSS,ReqMem shows what each step used; on the node, ps or top sorted by RSS",
            zh: "sacct -j JOBID -o JobID,MaxRSS,ReqMem 显示每个作业步用了多少；在节点上用 ps 或 top 按 RSS 排序"
        )
    } else if f.era == Some(Era::Kubernetes) {
        say!(
            en: "kubectl top pod, and kubectl describe node for the node's other pods",
            zh: "kubectl top pod，以及用 kubectl describe node 看节点上的其他 pod"
        )
    } else if Platform::of(f) == Platform::MacOs {
        say!(
            en: "Activity Monitor's Memory column, or top -o mem, while it runs",
            zh: "运行时看活动监视器的“内存”列，或者用 top -o mem"
        )
    } else if in_docker(f) {
        say!(
            en: "docker stats shows each container's use and limit; inside it, ps or top sorted by RSS",
            zh: "docker stats 显示每个容器的用量和上限；在容器里用 ps 或 top 按 RSS 排序"
        )
    } else {
        say!(
            en: "ps aux --sort=-rss | head, or top sorted by memory, while it runs",
            zh: "运行时用 ps aux --sort=-rss | head，或者 top 按内存排序"
        )
    };
    let head = say!(en: "Find what holds the RAM (", zh: "先找出谁占着内存（");
    let tail = say!(
        en: "), then make it use less: a smaller model or input, fewer threads, workers or copies running at once. Or give the machine or container more memory.",
        zh: "），再让它少用：更小的模型或输入，更少的线程、worker 或同时运行的副本。或者给机器或容器更多内存。"
    );
    Said {
        en: format!("{}{}{}", head.en, tools.en, tail.en),
        zh: format!("{}{}{}", head.zh, tools.zh, tail.zh),
    }
}

/// Docker shows: docker compose's service column or its line about a
/// service's end, or the words of a container runtime.
fn in_docker(f: &Finding) -> bool {
    fact(f, "service").is_some() || f.text.contains("docker") || f.text.contains("Docker")
}

/// What was killed (or failed), as the paste shows it: the advice follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Victim<'a> {
    /// Python shows: a traceback, an exception, a Python process, a
    /// launcher's or DataLoader's report, PyTorch's CPU allocator.
    Python,
    /// A notebook runtime (Google Colab, Kaggle, a Jupyter kernel).
    Notebook,
    /// A batch scheduler's or the machine's own daemon.
    Daemon(&'a str),
    /// Another program the message names.
    Program(&'a str),
    /// Nothing names it.
    Unknown,
}

/// Daemons of batch systems and of the machine: they run no job, and the
/// killer picking one means it grew.
const DAEMONS: &[&str] = &[
    "sge_qmaster",
    "sge_execd",
    "slurmctld",
    "slurmd",
    "slurmdbd",
    "pbs_server",
    "pbs_mom",
    "pbs_sched",
    "condor_schedd",
    "condor_startd",
    "condor_collector",
    "mbatchd",
    "sbatchd",
    "kubelet",
    "dockerd",
    "containerd",
    "systemd-journal",
    "munged",
];

impl<'a> Victim<'a> {
    fn of(f: &'a Finding) -> Victim<'a> {
        let reporter = fact(f, fact::REPORTED_BY).unwrap_or("");
        let process = fact(f, fact::PROCESS);
        if ["Google Colab", "Kaggle"]
            .iter()
            .any(|r| reporter.starts_with(r))
            || process.is_some_and(|p| p.starts_with("ipykernel"))
        {
            return Victim::Notebook;
        }
        if let Some(name) = process {
            if let Some(daemon) = DAEMONS.iter().find(|d| name == **d) {
                return Victim::Daemon(daemon);
            }
            if !runs_python(name) {
                return Victim::Program(name);
            }
        }
        if shows_python(f) || (f.kind == Kind::HostOom && reporter.is_empty()) {
            return Victim::Python;
        }
        Victim::Unknown
    }
}

/// A notebook's RAM gauge misses a short peak: the cell that builds one
/// large object.
const NOTEBOOK_PEAK: FixSpec = FixSpec::new(
    "find-the-notebook-cell-that-peaks",
    "Find the cell that builds one large object",
    "找出一次性构建大对象的那个单元格",
);

/// A daemon (a scheduler's, the machine's) that grew: leak or backlog, and
/// its protection from the killer.
const DAEMON_GREW: FixSpec = FixSpec::new(
    "daemon-leak-and-oom-protection",
    "Find why the daemon grew, and keep the killer off it",
    "查清守护进程为什么变大，并让 OOM killer 别碰它",
)
.cost(Cost::Look);

/// systemd-oomd: what raised the pressure.
const FIND_PRESSURE_SOURCE: FixSpec = FixSpec::new(
    "find-memory-pressure-source",
    "Find what raised the memory pressure",
    "找出是什么让内存压力升高",
)
.cost(Cost::Look);

const ADD_SWAP: FixSpec = FixSpec::new("add-swap-or-zram", "Add swap or zram", "加 swap 或 zram");

/// systemd-oomd's limit for a slice (systemd.resource-control:
/// ManagedOOMMemoryPressure=, ManagedOOMMemoryPressureLimit=; oomd.conf).
const OOMD_LIMIT: FixSpec = FixSpec::new(
    "raise-oomd-pressure-limit",
    "Raise systemd-oomd's pressure limit, or cap the job",
    "调高 systemd-oomd 的压力上限，或者给任务设上限",
)
.sources(&[
    "systemd documentation: systemd.resource-control (ManagedOOMMemoryPressureLimit=), oomd.conf",
]);

/// Building arrays in less memory, in NumPy's and scikit-learn's terms.
/// A framework other than PyTorch shows in the finding (TensorFlow's log
/// path before its host allocation failure): PyTorch's advice is not its.
fn another_framework_shows(f: &Finding) -> bool {
    use super::setting::Framework;
    matches!(
        Framework::of(f),
        Framework::TensorFlow | Framework::Jax | Framework::CuPy | Framework::OnnxRuntime
    )
}

fn arrays_without_torch(f: &Finding) -> Said {
    let sklearn = f.traceback.as_ref().is_some_and(|tb| {
        tb.frames
            .iter()
            .any(|fr| fr.file.replace('\\', "/").contains("/sklearn/"))
    });
    if sklearn {
        say!(
            en: "scikit-learn builds the whole result in RAM (an n×n distance or kernel matrix grows with the square of the samples): compute it in chunks (sklearn.metrics.pairwise_distances_chunked instead of pairwise_distances), use float32 instead of float64, fit on a sample of the rows, or use an estimator that does not need the full matrix.",
            zh: "scikit-learn 在内存里构建整个结果（n×n 的距离矩阵或核矩阵随样本数的平方增长）：分块计算（用 sklearn.metrics.pairwise_distances_chunked 代替 pairwise_distances），用 float32 代替 float64，只用一部分样本来拟合，或者换一个不需要完整矩阵的估计器。"
        )
    } else {
        say!(
            en: "Build large arrays in chunks, use float32 instead of float64, work on a sample of the data, or keep arrays on disk and map them (numpy.memmap) instead of creating them whole in RAM.",
            zh: "分块构建大数组，用 float32 代替 float64，只处理一部分数据，或者把数组留在磁盘上再映射进来（numpy.memmap），而不是在内存里整个创建出来。"
        )
    }
}

/// Ray's raylet reports the workers its memory monitor killed.
fn is_ray_monitor(f: &Finding) -> bool {
    fact(f, fact::REPORTED_BY).is_some_and(|r| r.starts_with("Ray's raylet"))
}

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
/// A GPU status whose failing call pins host RAM (`hipHostRegister`,
/// `cudaHostAlloc`, `pin_memory()`; detect/memory_kind.rs): page-locked
/// host memory, not GPU memory.
pub(super) struct PinnedHostCall;

impl Explain for PinnedHostCall {
    fn headline(&self, f: &Finding) -> Said {
        say!(
            en: "{call} could not pin host memory (page-locked RAM, not GPU memory)",
            zh: "{call} 无法锁定主机内存（锁页内存，不是显存）",
            call = pinning_call(f)
        )
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict(
            Code::HostRamExhausted,
            say!(
                en: "The failing call pins host memory: the out-of-memory status is about page-locked RAM, not GPU memory",
                zh: "出错的调用是锁定主机内存的：这个内存不足状态说的是锁页内存，不是显存"
            ),
            say!(
                en: "{call} allocates or registers page-locked (pinned) host memory, and returns the out-of-memory status when the range cannot be pinned: the buffer passed is not an allocated range of the given size, the locked-memory limit (`ulimit -l`) or a container's memory limit refuses it, or the machine's free RAM is too small. The GPU's own memory is not involved.",
                zh: "{call} 分配或注册锁页（pinned）主机内存；这段内存锁不住时就返回内存不足状态：传进去的缓冲区不是按给定大小分配好的内存，或者锁定内存上限（`ulimit -l`）、容器的内存上限拒绝了它，或者机器的空闲内存不够。与 GPU 自己的显存无关。",
                call = pinning_call(f)
            ),
        ));
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix(
            &CHECK_PINNED_RANGE,
            say!(
                en: "Check the pointer and size passed to the call: to register memory it must be a buffer you allocated, of at least that size (page-aligned where the API asks for it), not the address of a pointer variable. Then check the locked-memory limit with `ulimit -l` (Docker: --ulimit memlock=-1) and the free RAM with `free -h`.",
                zh: "检查传给这个调用的指针和大小：注册内存时它必须是你已经分配好、至少这么大的缓冲区（接口要求时还要按页对齐），而不是某个指针变量的地址。然后用 `ulimit -l` 检查锁定内存上限（Docker：--ulimit memlock=-1），用 `free -h` 看空闲内存。"
            ),
        ));
        out.push(fix(
            &PINNED_MEMORY_OFF,
            say!(
                en: "Pin less: DataLoader(pin_memory=False), or smaller pinned staging buffers; pinned pages cannot be swapped out, so the system runs out of them before it runs out of RAM.",
                zh: "少锁一些内存：DataLoader(pin_memory=False)，或者用更小的锁页中转缓冲区；锁页内存不能被换出，所以系统会先耗尽它，再耗尽内存。"
            ),
        ));
    }
}

/// The pinning call a finding names.
fn pinning_call(f: &Finding) -> String {
    fact(f, crate::record::fact::CALL)
        .unwrap_or("The call")
        .to_string()
}

/// The range a pinning call was given, and the locked-memory limit.
const CHECK_PINNED_RANGE: FixSpec = FixSpec::new(
    "check-pinned-host-range",
    "Check the buffer being pinned and the locked-memory limit",
    "检查要锁定的缓冲区和锁定内存上限",
)
.cost(Cost::Look)
.sources(&[
    "CUDA Runtime API: cudaHostRegister, cudaHostAlloc",
    "HIP Runtime API: hipHostRegister, hipHostMalloc",
]);

pub(super) const FIXES: &[FixSpec] = &[
    CHECK_PINNED_RANGE,
    NOTEBOOK_PEAK,
    DAEMON_GREW,
    FIND_PRESSURE_SOURCE,
    ADD_SWAP,
    OOMD_LIMIT,
    SHRINK_OTHER_PROCESS,
    LOWER_JOB_MEMORY,
    ASK_FOR_MORE_MEMORY,
    CONFIRM_OOM_KILLER,
    LIGHTER_WORKERS,
    CHECKPOINTS_WITHOUT_COPY,
    SAVE_CHECKPOINTS_WITH_LESS_RAM,
    PINNED_MEMORY_OFF,
    ALLOCATE_LESS_AT_ONCE,
    FIND_RAM_HOLDER,
    ENLARGE_PAGE_FILE,
];

/// Host kills read in the terms of what killed them, from real pastes of
/// `fixtures/wild`, in both languages.
#[cfg(test)]
mod killers {
    use crate::record::Finding;

    fn first(number: &str) -> Finding {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/wild")
            .join(format!("{number}.txt"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        crate::decode_str(&text).remove(0)
    }

    fn ids(f: &Finding) -> Vec<&str> {
        f.diagnosis.fixes.iter().map(|x| x.id.as_str()).collect()
    }

    fn zh(f: &Finding) -> (&str, &str) {
        let v = f.diagnosis.verdicts[0]
            .zh
            .as_ref()
            .map_or("", |z| z.title.as_str());
        (f.diagnosis.headline_zh.as_deref().unwrap_or(""), v)
    }

    /// Ray's memory monitor (1406, and the raylet's lines in 1249 and 1250) kills
    /// workers above its threshold: nothing failed to allocate.
    #[test]
    fn ray_s_monitor_killed_workers_and_ray_s_levers_come_first() {
        for number in ["1406", "1249", "1250"] {
            let f = first(number);
            let headline = &f.diagnosis.headline;
            assert!(
                headline.contains("memory monitor killed workers"),
                "{headline}"
            );
            assert!(!headline.contains("could not allocate"), "{headline}");
            let (headline_zh, title_zh) = zh(&f);
            assert!(
                headline_zh.contains("内存监控杀掉了 worker"),
                "{headline_zh}"
            );
            assert!(title_zh.contains("主机内存"), "{title_zh}");
            let detail = &f.diagnosis.verdicts[0].detail;
            assert!(detail.contains("RAY_memory_usage_threshold"), "{detail}");
            assert_eq!(ids(&f), ["ray-fewer-tasks-per-node"]);
        }
    }

    /// A kernel report whose call trace shows mem_cgroup_out_of_memory
    /// (1449) is a container's limit; without that frame it is the
    /// machine's RAM.
    #[test]
    fn a_memcg_call_trace_is_a_container_limit() {
        let f = first("1449");
        assert_eq!(f.era, Some(crate::record::Era::Cgroup));
        assert_eq!(ids(&f)[0], "ask-for-more-memory");
        let (headline_zh, _) = zh(&f);
        assert!(headline_zh.contains("cgroup"), "{headline_zh}");
        let machine = crate::decode_str(
            "[ 1234.000001] python invoked oom-killer: gfp_mask=0x14000c0(GFP_KERNEL), nodemask=(null), order=0, oom_score_adj=0\n[ 1234.000002] Call Trace:\n[ 1234.000003]  dump_stack+0x63/0x88\n[ 1234.000004]  out_of_memory+0x114/0x4a0\n[ 1234.000005]  __alloc_pages_slowpath+0x9d4/0xd20\n",
        )
        .remove(0);
        assert_eq!(machine.era, Some(crate::record::Era::Kernel));
    }

    /// A Slurm limit on a job that shows no Python (an MPI job 1246, a
    /// Snakemake shell rule 1253) gets no PyTorch data-loading advice.
    #[test]
    fn a_job_without_python_gets_no_dataloader_advice() {
        for number in ["1246", "1253"] {
            let f = first(number);
            assert_eq!(
                ids(&f),
                ["ask-for-more-memory", "lower-job-memory"],
                "{number}"
            );
        }
        // A container's limit that killed a Python process keeps them (the
        // kernel's memcg line, as in the detector's own test).
        let python = crate::decode_str("Memory cgroup out of memory: Killed process 7781 (python3) total-vm:40000000kB, anon-rss:31000000kB, file-rss:0kB, shmem-rss:0kB\n").remove(0);
        assert_eq!(ids(&python)[0], "ask-for-more-memory");
        assert!(ids(&python).contains(&"lighter-dataloader-workers"));
    }

    fn only(text: &str) -> Finding {
        crate::decode_str(text).remove(0)
    }

    fn first_fix_text(f: &Finding) -> &str {
        f.diagnosis.fixes[0].how.as_str()
    }

    /// The kernel's line of 1841 (an R process, score 31): the victim held
    /// about 3 % of RAM and swap, so the memory was elsewhere. The margin is
    /// a score of 100, checked on both sides with the same line.
    #[test]
    fn a_low_score_victim_did_not_fill_the_machine() {
        let f = first("1841");
        assert_eq!(ids(&f), ["find-ram-holder"]);
        let detail = &f.diagnosis.verdicts[0].detail;
        assert!(detail.contains("score was 31"), "{detail}");
        assert!(detail.contains("about 3.1 %"), "{detail}");
        let zh = f.diagnosis.verdicts[0]
            .zh
            .as_ref()
            .map_or("", |z| z.text.as_str());
        assert!(zh.contains("内存"), "{zh}");
        let line = |score: u64| {
            only(&format!("May 07 21:43:54 doom kernel: Out of memory: Kill process 27438 (R) score {score} or sacrifice child\nMay 07 21:43:54 doom kernel: Killed process 27438 (R) total-vm:38349780kB, anon-rss:1041924kB, file-rss:4kB, shmem-rss:0kB\n"))
        };
        assert_eq!(ids(&line(99)), ["find-ram-holder"]);
        assert_eq!(ids(&line(100)), ["shrink-the-killed-process"]);
    }

    /// 093: the kernel chose 89746 (score 1031) and killed its child 89879,
    /// whose sizes (anon-rss 0) say nothing about the chosen process.
    #[test]
    fn a_sacrificed_child_s_sizes_do_not_make_a_small_victim() {
        let f = first("093");
        assert_eq!(f.facts["killed_child"], "89879");
        assert!(!ids(&f).contains(&"find-ram-holder"), "{:?}", ids(&f));
    }

    /// A scheduler's daemon the killer picked (1903, sge_qmaster, score 948)
    /// grew: a leak, and its protection, not "its own options".
    #[test]
    fn a_daemon_the_killer_picked_is_a_leak_to_find() {
        let f = first("1903");
        assert_eq!(ids(&f), ["daemon-leak-and-oom-protection"]);
        assert!(first_fix_text(&f).contains("OOMScoreAdjust=-1000"));
    }

    /// systemd-oomd's kill (1921) is memory pressure: its figures, its own
    /// remedies, no quote the paste does not hold, no PyTorch advice.
    #[test]
    fn systemd_oomd_is_pressure_with_its_own_remedies() {
        let f = first("1921");
        let headline = &f.diagnosis.headline;
        assert!(
            headline.starts_with("systemd-oomd killed vte-spawn-"),
            "{headline}"
        );
        let detail = &f.diagnosis.verdicts[0].detail;
        assert!(!detail.contains("'oom-kill'"), "{detail}");
        assert!(detail.contains("57.97%") && detail.contains("50.00%") && detail.contains("20s"));
        assert!(detail.contains("terminal window"), "{detail}");
        assert_eq!(
            ids(&f),
            [
                "find-memory-pressure-source",
                "add-swap-or-zram",
                "raise-oomd-pressure-limit"
            ]
        );
        let (headline_zh, title_zh) = zh(&f);
        assert!(headline_zh.contains("内存压力"), "{headline_zh}");
        assert!(title_zh.contains("内存压力"), "{title_zh}");
        // A unit that failed with result 'oom-kill' (730) says so, as its
        // line does.
        let unit = first("730");
        assert!(unit.diagnosis.verdicts[0].detail.contains("'oom-kill'"));
    }

    /// 1933: the user moved to a larger node and asked for all of it; the
    /// limit is the memory request, and no smaller --mem is suggested.
    #[test]
    fn slurm_s_limit_is_the_request_not_the_node() {
        let f = first("1933");
        assert_eq!(ids(&f)[0], "ask-for-more-memory");
        let how = first_fix_text(&f);
        assert!(
            how.contains("--mem=0") && how.contains("--exclusive"),
            "{how}"
        );
        assert!(!how.contains("--mem=128G"), "{how}");
    }

    /// Windows' CPU allocator refusing 28.12 MiB (1937): the commit limit
    /// was used up. The margin is 512 MiB, on both sides of the same line.
    #[test]
    fn a_small_windows_request_means_the_commit_limit() {
        let f = first("1937");
        assert_eq!(ids(&f), ["enlarge-windows-page-file", "find-ram-holder"]);
        let line = |bytes: u64| {
            only(&format!(
                r"RuntimeError: [enforce fail at ..\c10\core\impl\alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate {bytes} bytes."
            ))
        };
        let margin = 512 * crate::units::MIB;
        assert_eq!(ids(&line(margin - 1))[0], "enlarge-windows-page-file");
        assert_eq!(ids(&line(margin))[0], "allocate-less-at-once");
    }

    /// Google Colab's dialog (1942, 1943): the notebook's own advice, no
    /// scheduler's or cluster's tools.
    #[test]
    fn a_notebook_gets_notebook_advice() {
        for number in ["1942", "1943"] {
            let f = first(number);
            assert_eq!(ids(&f), ["find-the-notebook-cell-that-peaks"], "{number}");
            assert!(!first_fix_text(&f).contains("sacct"));
        }
    }

    /// A C++ server in docker compose killed (1953): one finding for the
    /// shell's `Killed` and compose's exit 137, named after the program,
    /// docker's check first and no PyTorch advice.
    #[test]
    fn a_native_server_in_docker_gets_docker_s_check() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/wild/1953.txt");
        let findings = crate::decode_str(&std::fs::read_to_string(path).unwrap_or_default());
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.facts["process"], "scalellm");
        assert_eq!(f.facts["exit_code"], "137");
        assert_eq!(ids(f), ["confirm-oom-killer", "shrink-the-killed-process"]);
        assert!(first_fix_text(f).contains("{{.State.OOMKilled}}"));
        assert!(!f.diagnosis.verdicts[0].detail.contains("Python"));
    }

    /// A bare `Killed` with nothing around it (146) gets neutral advice; one
    /// that ends a tqdm bar loading checkpoint shards (141) is Python
    /// loading a model.
    #[test]
    fn pytorch_advice_only_where_python_shows() {
        assert_eq!(
            ids(&first("146")),
            ["confirm-oom-killer", "lower-job-memory"]
        );
        let loading = first("141");
        assert_eq!(loading.facts["progress_bar"], "Loading checkpoint shards");
        assert_eq!(ids(&loading)[1], "load-checkpoints-without-ram-copy");
        // nvcc's compiler stage (374) is named.
        let nvcc = first("374");
        assert_eq!(nvcc.facts["process"], "cicc");
        assert_eq!(ids(&nvcc)[1], "shrink-the-killed-process");
    }
}

/// A killed process named python is not evidence of a DataLoader.
#[cfg(test)]
mod python_victims {
    fn fix_ids(text: &str) -> Vec<String> {
        let f = crate::decode_str(text).remove(0);
        f.diagnosis.fixes.iter().map(|x| x.id.clone()).collect()
    }

    /// A bare kernel log (fixtures/wild/2151.txt: `oom_reaper: reaped
    /// process 29918 (python)`, another process invoked the killer first):
    /// who held the RAM first, the data pipeline after it.
    #[test]
    fn a_bare_python_kill_looks_for_the_holder_first() {
        let bare = include_str!("../../../../fixtures/wild/2151.txt");
        let ids = fix_ids(bare);
        assert_eq!(ids[0], "find-ram-holder", "{ids:?}");
        assert_eq!(ids[1], "lighter-dataloader-workers", "{ids:?}");
        // The same kill of a DataLoader worker (PyTorch names its workers'
        // processes pt_data_worker, the name the kernel prints): workers first.
        let worker = bare.replace("(python)", "(pt_data_worker)");
        assert_eq!(fix_ids(&worker)[0], "lighter-dataloader-workers");
    }

    /// With the victim's own size printed (fixtures/host_oom_killed_kernel.log,
    /// 58 GiB anon-rss), the holder fix says the victim held it.
    #[test]
    fn a_sized_python_victim_is_the_holder_to_look_into() {
        let sized = include_str!("../../../../fixtures/host_oom_killed_kernel.log");
        let f = crate::decode_str(sized).remove(0);
        let first = &f.diagnosis.fixes[0];
        assert_eq!(first.id, "find-ram-holder");
        assert!(first.how.contains("itself held"), "{}", first.how);
    }
}
