//! Distributed failures: NCCL's own allocation failures, and the errors,
//! timeouts, aborts and launcher reports that follow a failure elsewhere
//! (each says so when the scanner linked it to an earlier finding).

use super::catalogue::{Cost, FixSpec};
use super::common::{confirm_fix, fact, fix, on_device, verdict, workload_fix};
use super::disguised::confirm;
use super::docs::Code;
use super::setting::{available, since, Availability, Framework, Setting, Vendor};
use super::thresholds::FIRST_COLLECTIVES_MAX_SEQ;
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Category, Chinese, Diagnosis, Era, Finding, Fix, Kind, Verdict};
use crate::say;
use crate::units::format_size as fmt;

/// NVIDIA's NCCL and AMD's RCCL, which PyTorch's `nccl` backend uses on
/// ROCm and which reads the same NCCL_* variables.
const NCCL_VENDORS: &[Vendor] = &[Vendor::Nvidia, Vendor::Amd];

/// Texts written as one sentence, with nothing between them: clauses that
/// are there only when the message gives their figures.
fn concat(parts: impl IntoIterator<Item = Said>) -> Said {
    parts.into_iter().fold(Said::default(), |mut all, part| {
        all.en.push_str(&part.en);
        all.zh.push_str(&part.zh);
        all
    })
}

/// Explains `Kind::NcclOom` findings.
pub(super) struct NcclOom;

impl Explain for NcclOom {
    fn headline(&self, f: &Finding) -> Said {
        let device = on_device(f);
        let device = device.strip_prefix(" on ");
        let tail = say!(
            en: ": an out-of-memory error under another name",
            zh: "：其实就是显存不足，只是换了个说法"
        );
        let failed = match (f.sizes.requested_bytes.map(fmt), device) {
            (Some(size), Some(device)) => say!(
                en: "NCCL could not allocate {size} of GPU memory on {device}",
                zh: "NCCL 在 {device} 上申请 {size} 显存失败",
                size = size,
                device = device
            ),
            (Some(size), None) => say!(
                en: "NCCL could not allocate {size} of GPU memory",
                zh: "NCCL 申请 {size} 显存失败",
                size = size
            ),
            (None, Some(device)) => say!(
                en: "NCCL could not allocate of GPU memory on {device}",
                zh: "NCCL 在 {device} 上申请显存失败",
                device = device
            ),
            (None, None) => say!(
                en: "NCCL could not allocate of GPU memory",
                zh: "NCCL 申请显存失败"
            ),
        };
        concat([failed, tail])
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        let could_not = match f.sizes.requested_bytes {
            Some(b) => say!(
                en: "NCCL could not get GPU memory ({size} requested).",
                zh: "NCCL 没能拿到显存（申请了 {size}）。",
                size = fmt(b)
            ),
            None => say!(en: "NCCL could not get GPU memory.", zh: "NCCL 没能拿到显存。"),
        };
        out.push(verdict(
            Code::MaskedOom,
            say!(
                en: "Not a PyTorch out-of-memory message, but an out-of-memory error",
                zh: "不是 PyTorch 的显存不足报错，但确实是显存不足"
            ),
            could_not
                .then(say!(
                    en: "NCCL allocates its communication buffers with cudaMalloc, outside PyTorch's cache, when a communicator is set up and when peers and channels connect, so it fails when PyTorch's cache has already filled the GPU. The `NCCL error ... unhandled cuda error` that PyTorch raises afterwards is the same failure.",
                    zh: "NCCL 在建立通信器、以及与对端和通道建立连接时，在 PyTorch 的缓存之外用 cudaMalloc 分配自己的通信缓冲区，所以当 PyTorch 的缓存已经占满 GPU 时它就会失败。PyTorch 随后抛出的 `NCCL error ... unhandled cuda error` 是同一个失败。"
                ))
                .then(confirm()),
        ))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        // dist.barrier(device_ids=...) and the memory fraction are 1.8's;
        // an older PyTorch gets the same order with the API it has.
        if matches!(
            available(f, since::MEMORY_FRACTION),
            Availability::Upgrade(_)
        ) {
            out.push(fix(
                &NCCL_ALLOCATE_FIRST_OLD,
                say!(
                    en: "Initialise the process group and run one small collective (e.g. dist.all_reduce(torch.zeros(1, device=\"cuda\"))) before building the model and optimizer, so NCCL's buffers exist before PyTorch's cache grows. NCCL_BUFFSIZE (default 4 MiB per channel) and NCCL_MAX_NCHANNELS shrink NCCL's own buffers.",
                    zh: "在构建模型和优化器之前，先初始化进程组并做一次很小的集合通信（如 dist.all_reduce(torch.zeros(1, device=\"cuda\"))），让 NCCL 的缓冲区在 PyTorch 的缓存变大之前就分配好。NCCL_BUFFSIZE（默认每个通道 4 MiB）和 NCCL_MAX_NCHANNELS 可以缩小 NCCL 自己的缓冲区。"
                ),
            ));
            out.push(confirm_fix(f));
            out.push(workload_fix());
            return;
        }
        out.push(fix(
            &NCCL_ALLOCATE_FIRST,
            say!(
                en: "Initialise the process group and run one collective (e.g. dist.barrier(device_ids=[local_rank])) before building the model and optimizer, so NCCL's buffers exist before PyTorch's cache grows; leave headroom with torch.cuda.set_per_process_memory_fraction(0.9). NCCL_BUFFSIZE (default 4 MiB per channel) and NCCL_MAX_NCHANNELS shrink NCCL's own buffers.",
                zh: "在构建模型和优化器之前，先初始化进程组并做一次集合通信（如 dist.barrier(device_ids=[local_rank])），让 NCCL 的缓冲区在 PyTorch 的缓存变大之前就分配好；用 torch.cuda.set_per_process_memory_fraction(0.9) 留出余量。NCCL_BUFFSIZE（默认每个通道 4 MiB）和 NCCL_MAX_NCHANNELS 可以缩小 NCCL 自己的缓冲区。"
            ),
        ));
        out.push(confirm_fix(f));
        out.push(workload_fix());
    }
}

/// Explains `Kind::NcclError` findings.
pub(super) struct NcclError;

impl Explain for NcclError {
    fn headline(&self, f: &Finding) -> Said {
        let reported = match fact(f, fact::NCCL_ERROR) {
            Some(e) => say!(
                en: "NCCL reported an error ({e})",
                zh: "NCCL 报错（{e}）",
                e = e
            ),
            None => say!(en: "NCCL reported an error", zh: "NCCL 报错"),
        };
        concat([reported, consequence_suffix(f)])
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(
            collateral(f, say!(en: "This NCCL error", zh: "这条 NCCL 报错"))
                .unwrap_or_else(|| nccl_error_verdict(f)),
        )
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        collateral_nccl_fixes(f, out)
    }
}

/// Explains `Kind::NcclTimeout` findings.
pub(super) struct NcclTimeout;

impl Explain for NcclTimeout {
    fn headline(&self, f: &Finding) -> Said {
        let op = match fact(f, fact::OP_TYPE) {
            Some(op) => say!(en: "An NCCL {op}", zh: "NCCL {op} ", op = op),
            None => say!(en: "An NCCL collective", zh: "NCCL 集合通信"),
        };
        let timed_out = match (fact(f, fact::RAN_FOR_MS), fact(f, fact::RANK)) {
            (Some(ms), Some(rank)) => say!(
                en: " timed out after {ms} ms on rank {rank}",
                zh: "在 rank {rank} 上运行 {ms} ms 后超时",
                ms = ms,
                rank = rank
            ),
            (Some(ms), None) => say!(
                en: " timed out after {ms} ms",
                zh: "运行 {ms} ms 后超时",
                ms = ms
            ),
            (None, Some(rank)) => say!(
                en: " timed out on rank {rank}",
                zh: "在 rank {rank} 上超时",
                rank = rank
            ),
            (None, None) => say!(en: " timed out", zh: "超时"),
        };
        concat([op, timed_out, consequence_suffix(f)])
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(timeout_verdict(f))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        consequence_fix(f, out);
        out.push(find_first_error_fix(f));
        out.push(fix(
            &FLIGHT_RECORDER,
            say!(
                en: "Set TORCH_NCCL_TRACE_BUFFER_SIZE=2000 and TORCH_NCCL_DUMP_ON_TIMEOUT=1 (PyTorch 2.3 or newer) to dump the flight recorder on timeout: it shows which rank missed which collective.",
                zh: "设 TORCH_NCCL_TRACE_BUFFER_SIZE=2000 和 TORCH_NCCL_DUMP_ON_TIMEOUT=1（PyTorch 2.3 或更新），超时时转储 flight recorder 的记录：它会显示哪个 rank 漏掉了哪次集合通信。"
            ),
        ));
        out.push(fix(
            &SAME_COLLECTIVES,
            say!(
                en: "Evaluation, logging or checkpointing under `if rank == 0:` that calls a collective (or takes longer than the timeout) leaves the others waiting; uneven data (DistributedSampler without drop_last=True) makes one rank run an extra step.",
                zh: "放在 `if rank == 0:` 里的评估、日志或保存 checkpoint，如果调用了集合通信（或耗时超过超时时间），其他 rank 就会一直等；数据不均（DistributedSampler 没设 drop_last=True）会让某个 rank 多跑一步。"
            ),
        ));
        out.push(raise_timeout_fix(f));
    }
}

/// The timeout this advice suggests first, in minutes: PyTorch's NCCL
/// default of the older releases, which a watchdog's shorter timeout is
/// raised to.
const SUGGESTED_TIMEOUT_MINUTES: u64 = 30;

/// Raising the timeout, to more than the one that expired: a timeout
/// already at [`SUGGESTED_TIMEOUT_MINUTES`] or longer is doubled, and the
/// advice says that a hang, not slowness, is then the likelier cause.
fn raise_timeout_fix(f: &Finding) -> Fix {
    let expired_minutes = fact(f, fact::TIMEOUT_MS)
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map(|ms| ms / 60_000);
    match expired_minutes {
        Some(minutes) if minutes >= SUGGESTED_TIMEOUT_MINUTES => fix(
            &RAISE_TIMEOUT,
            say!(
                en: "The timeout that expired is already {minutes} minutes: a step that slow is rare, so a rank that hangs or skipped this collective is the likelier cause. Only if a step is legitimately that slow (saving a very large checkpoint) raise it further: dist.init_process_group(backend=\"nccl\", timeout=datetime.timedelta(minutes={doubled})).",
                zh: "到期的超时时间已经是 {minutes} 分钟：一步慢到这种程度很少见，更可能是某个 rank 卡住了或跳过了这次集合通信。只有某一步确实这么慢（保存非常大的 checkpoint）时才再调大：dist.init_process_group(backend=\"nccl\", timeout=datetime.timedelta(minutes={doubled}))。",
                minutes = minutes,
                doubled = minutes * 2
            ),
        ),
        _ => fix(
            &RAISE_TIMEOUT,
            say!(
                en: "dist.init_process_group(backend=\"nccl\", timeout=datetime.timedelta(minutes={suggested})) helps when a step is legitimately slow (first-step compilation, saving a large checkpoint), not when a rank has crashed.",
                zh: "dist.init_process_group(backend=\"nccl\", timeout=datetime.timedelta(minutes={suggested})) 只在某一步本来就慢的时候有用（第一步的编译、保存很大的 checkpoint），某个 rank 已经崩溃时没用。",
                suggested = SUGGESTED_TIMEOUT_MINUTES
            ),
        ),
    }
}

/// Explains `Kind::ProcessGroupAborted` findings.
pub(super) struct ProcessGroupAborted;

impl Explain for ProcessGroupAborted {
    fn headline(&self, f: &Finding) -> Said {
        let aborted = match fact(f, fact::RANK) {
            Some(rank) => say!(
                en: "The NCCL process group was aborted on rank {rank}",
                zh: "rank {rank} 上的 NCCL 进程组被中止",
                rank = rank
            ),
            None => say!(
                en: "The NCCL process group was aborted",
                zh: "NCCL 进程组被中止"
            ),
        };
        concat([aborted, consequence_suffix(f)])
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(
            collateral(f, say!(en: "This abort", zh: "这次中止")).unwrap_or_else(|| {
                let reason = match fact(f, fact::REASON) {
                    Some(r) => say!(
                        en: " The reason it gives: {r}.",
                        zh: "它给出的原因：{r}。",
                        r = r
                    ),
                    None => Said::default(),
                };
                verdict(
                    Code::NcclFailure,
                    say!(
                        en: "The communicator was shut down after an earlier error",
                        zh: "通信器是在更早的一个错误之后被关闭的"
                    ),
                    concat([
                        say!(
                            en: "Aborting the communicator is how PyTorch's c10d stops a process group after an error or a timeout; it is a consequence, not a cause.",
                            zh: "中止通信器是 PyTorch 的 c10d 在出错或超时后停掉进程组的方式；它是后果，不是原因。"
                        ),
                        reason,
                        say!(
                            en: " Find the first error in any rank's log: that is the cause.",
                            zh: "在所有 rank 的日志里找到最早的那个错误：那才是原因。"
                        ),
                    ]),
                )
            }),
        )
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        collateral_nccl_fixes(f, out)
    }
}

/// Explains `Kind::ChildFailed` findings.
pub(super) struct ChildFailed;

impl Explain for ChildFailed {
    fn headline(&self, f: &Finding) -> Said {
        if f.era == Some(Era::Deepspeed) {
            return concat([deepspeed_headline(f), consequence_suffix(f)]);
        }
        let script = match fact(f, fact::SCRIPT) {
            Some(script) => say!(en: "{script}", zh: " {script} ", script = script),
            None => say!(en: "the training script", zh: "训练脚本"),
        };
        let root = match (
            fact(f, fact::ROOT_CAUSE_RANK),
            fact(f, fact::ROOT_CAUSE_EXITCODE),
        ) {
            (Some(r), Some(e)) => say!(
                en: ": root cause rank {r}, exit code {e}",
                zh: "：根因在 rank {r}，退出码 {e}",
                r = r,
                e = e
            ),
            _ => Said::default(),
        };
        concat([
            say!(en: "torchrun reports that ", zh: "torchrun 报告"),
            script,
            say!(en: " failed", zh: "失败"),
            root,
            consequence_suffix(f),
        ])
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(
            collateral(f, say!(en: "This launcher report", zh: "启动器的这份报告")).unwrap_or_else(
                || {
                    if f.era == Some(Era::Deepspeed) {
                        deepspeed_verdict(f)
                    } else {
                        launcher_verdict(f)
                    }
                },
            ),
        )
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        consequence_fix(f, out);
        if f.era == Some(Era::Deepspeed) {
            deepspeed_fixes(f, out);
            return;
        }
        // A rank killed with SIGKILL wrote no error of its own: the
        // kernel's log is where its cause is, so it is read first.
        let killed = fact(f, fact::ROOT_CAUSE_EXITCODE) == Some("-9")
            || fact(f, fact::ROOT_CAUSE_SIGNAL) == Some("SIGKILL");
        if killed {
            out.push(fix(
                &HOST_OOM_KILLER,
                say!(
                    en: "`dmesg -T | grep -i -E 'killed process|out of memory'` (or the scheduler's accounting, e.g. sacct) tells whether host RAM ran out; fewer DataLoader workers, smaller prefetch, or loading checkpoints with mmap=True lower host memory.",
                    zh: "`dmesg -T | grep -i -E 'killed process|out of memory'`（或调度器的记账，如 sacct）能看出是不是主机内存用完了；减少 DataLoader worker、调小预取，或用 mmap=True 加载 checkpoint，都能降低主机内存占用。"
                ),
            ));
        }
        if !matches!(available(f, since::TORCHRUN), Availability::Upgrade(_)) {
            out.push(fix(
                &READ_ROOT_CAUSE_RANK,
                say!(
                    en: "The real error is in rank {rank}'s log. torchrun --log_dir logs --redirects 3 --tee 3 keeps one file per rank.",
                    zh: "真正的错误在 rank {rank} 的日志里。torchrun --log_dir logs --redirects 3 --tee 3 会给每个 rank 保留一个文件。",
                    rank = fact(f, fact::ROOT_CAUSE_RANK).unwrap_or("N")
                ),
            ));
        }
        if matches!(available(f, since::ELASTIC), Availability::Upgrade(_)) {
            return;
        }
        out.push(fix(
            &PUT_TRACEBACK_IN_REPORT,
            say!(
                en: "Decorate the entry point with @torch.distributed.elastic.multiprocessing.errors.record (`from torch.distributed.elastic.multiprocessing.errors import record`).",
                zh: "用 @torch.distributed.elastic.multiprocessing.errors.record 装饰入口函数（`from torch.distributed.elastic.multiprocessing.errors import record`）。"
            ),
        ));
    }
}

/// DeepSpeed's launcher (`deepspeed/launcher/launch.py`): it logs `Killing
/// subprocess PID` for every rank once one exited with a non-zero code, then
/// that code; the kills alone do not say which rank failed or why.
fn deepspeed_headline(f: &Finding) -> Said {
    match (fact(f, fact::ROOT_CAUSE_EXITCODE), f.category) {
        (Some(code), _) => say!(
            en: "DeepSpeed's launcher reports a rank that exited with code {code} and killed the others",
            zh: "DeepSpeed 启动器报告有一个 rank 以退出码 {code} 退出，并杀掉了其余的 rank",
            code = code
        ),
        (None, Category::LikelyOom) if fact(f, "host_memory_percent").is_some() => say!(
            en: "DeepSpeed's launcher killed its ranks with host memory at {percent}: a rank probably ran out of host memory",
            zh: "DeepSpeed 启动器在主机内存用到 {percent} 时杀掉了各个 rank：很可能是某个 rank 把主机内存用完了",
            percent = fact(f, "host_memory_percent").unwrap_or("?")
        ),
        (None, Category::LikelyOom) => say!(
            en: "DeepSpeed's launcher killed its ranks while checkpoints were loading: a rank probably ran out of host memory",
            zh: "DeepSpeed 启动器在加载 checkpoint 时杀掉了各个 rank：很可能是某个 rank 把主机内存用完了"
        ),
        (None, _) => say!(
            en: "DeepSpeed's launcher killed its ranks after one of them failed",
            zh: "DeepSpeed 启动器在某个 rank 失败后杀掉了所有 rank"
        ),
    }
}

fn deepspeed_verdict(f: &Finding) -> Verdict {
    let how = say!(
        en: "DeepSpeed's launcher polls its ranks; when one exits with a non-zero code, its sigkill_handler logs `Killing subprocess PID` for every rank it started, the dead one included, terminates them, and then logs `exits with return code = N` with the failed rank's code (it runs the same kills when it is itself interrupted, and then logs `Main process received SIGINT, exiting`). ",
        zh: "DeepSpeed 启动器会轮询它的各个 rank；一旦有一个以非零退出码退出，它的 sigkill_handler 就对它启动的每个 rank（包括已经死掉的那个）打印 `Killing subprocess PID` 并结束它们，然后打印 `exits with return code = N`，即失败那个 rank 的退出码（启动器自己被中断时也会这样杀掉各个 rank，那时它打印的是 `Main process received SIGINT, exiting`）。"
    );
    let what = match fact(f, fact::ROOT_CAUSE_EXITCODE) {
        Some("1") => say!(
            en: "Code 1 is a Python exception: its traceback is in that rank's own output, above the launcher's lines.",
            zh: "退出码 1 是一个 Python 异常：它的调用栈在那个 rank 自己的输出里，在启动器这几行之上。"
        ),
        Some(code) => say!(
            en: "The launcher reports code {code}; what it means is in that rank's own output, above the launcher's lines.",
            zh: "启动器报告的是退出码 {code}；它的含义要看那个 rank 自己的输出，在启动器这几行之上。",
            code = code
        ),
        None if f.category == Category::LikelyOom && fact(f, "host_memory_percent").is_some() => {
            say!(
                en: "Here DeepSpeed's last reading before the kills shows {percent} of host RAM in use ({used}), and no traceback comes between: a rank died without a word with most of host memory in use, which is how the kernel's out-of-memory killer ends a process (SIGKILL; the launcher's next line would say `exits with return code = -9`). That is likely, not shown: `dmesg` tells.",
                zh: "这里 DeepSpeed 在 kill 之前最后一次读数显示主机内存已用 {percent}（{used}），中间也没有调用栈：某个 rank 在主机内存大部分已被占用时一声不响地死掉了，这正是内核 OOM killer 结束进程的样子（SIGKILL；启动器的下一行会是 `exits with return code = -9`）。这只是很可能，并没有证实：看 `dmesg` 就知道。",
                percent = fact(f, "host_memory_percent").unwrap_or("?"),
                used = fact(f, "host_memory_used").unwrap_or("?")
            )
        }
        None if f.category == Category::LikelyOom => say!(
            en: "Here the kills come right after a checkpoint-loading progress bar, with no traceback between: a rank died without a word while loading weights into host RAM, which is how the kernel's out-of-memory killer ends a process (SIGKILL; the launcher's next line would say `exits with return code = -9`). That is likely, not shown: `dmesg` tells.",
            zh: "这里的 kill 紧跟在加载 checkpoint 的进度条之后，中间没有调用栈：某个 rank 在把权重读进主机内存时一声不响地死掉了，这正是内核 OOM killer 结束进程的样子（SIGKILL；启动器的下一行会是 `exits with return code = -9`）。这只是很可能，并没有证实：看 `dmesg` 就知道。"
        ),
        None => say!(
            en: "The paste shows the kills but not the return code, so it does not say why the rank failed: the rank that died first is in the lines before, and the launcher's next line gives its code (-9 is SIGKILL, usually the kernel's out-of-memory killer; -11 a segmentation fault; 1 a Python exception).",
            zh: "粘贴的内容里有 kill，却没有退出码，所以看不出那个 rank 为什么失败：最先死掉的 rank 在前面的行里，启动器的下一行会给出它的退出码（-9 是 SIGKILL，通常是内核的 OOM killer；-11 是段错误；1 是 Python 异常）。"
        ),
    };
    verdict(
        Code::LauncherReport,
        say!(
            en: "The launcher only reports that a rank exited",
            zh: "启动器只报告了有 rank 退出"
        ),
        concat([how, what]),
    )
}

fn deepspeed_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if f.category == Category::LikelyOom && fact(f, "progress_bar").is_none() {
        out.push(fix(
            &HOST_OOM_KILLER,
            say!(
                en: "`dmesg -T | grep -i -E 'killed process|out of memory'` tells whether host RAM ran out; then lower the job's host memory (less offloaded to the CPU, fewer ranks per node) or add host RAM or swap.",
                zh: "`dmesg -T | grep -i -E 'killed process|out of memory'` 能看出是不是主机内存用完了；然后降低作业的主机内存占用（少往 CPU 卸载、每个节点少跑几个 rank），或者增加主机内存或 swap。"
            ),
        ));
    } else if f.category == Category::LikelyOom {
        out.push(fix(
            &HOST_OOM_KILLER,
            say!(
                en: "`dmesg -T | grep -i -E 'killed process|out of memory'` tells whether host RAM ran out; loading the weights with from_pretrained(..., low_cpu_mem_usage=True), in fewer ranks at once, or with more host RAM or swap lowers the peak.",
                zh: "`dmesg -T | grep -i -E 'killed process|out of memory'` 能看出是不是主机内存用完了；用 from_pretrained(..., low_cpu_mem_usage=True) 加载权重、减少同时加载的 rank 数，或者增加主机内存或 swap，都能降低峰值。"
            ),
        ));
    }
    out.push(fix(
        &DEEPSPEED_EACH_RANK_LOG,
        say!(
            en: "Run `deepspeed --enable_each_rank_log DIR ...` to give every rank its own log file, and read the one whose rank failed first.",
            zh: "用 `deepspeed --enable_each_rank_log DIR ...` 让每个 rank 写自己的日志文件，然后看最先失败的那个 rank 的日志。"
        ),
    ));
}

fn consequence_suffix(f: &Finding) -> Said {
    match f.consequence_of {
        Some(id) => say!(
            en: " (a consequence of finding [{id}])",
            zh: "：这是发现 [{id}] 的后果",
            id = id
        ),
        None => Said::default(),
    }
}

/// The verdict of a consequence kind that follows an earlier OOM.
fn collateral(f: &Finding, what: Said) -> Option<Verdict> {
    let id = f.consequence_of?;
    let root = match f.kind {
        Kind::ChildFailed => match (
            fact(f, fact::ROOT_CAUSE_RANK),
            fact(f, fact::ROOT_CAUSE_EXITCODE),
        ) {
            (Some(r), Some(e)) => say!(
                en: " Its \"root cause\" (rank {r}, exit code {e}) is only the first exit the launcher observed, not necessarily the rank that ran out of memory.",
                zh: "它的“根因”（rank {r}，退出码 {e}）只是启动器最先看到的退出，不一定就是显存不足的那个 rank。",
                r = r,
                e = e
            ),
            _ => Said::default(),
        },
        _ => Said::default(),
    };
    Some(verdict(
        Code::CollateralFailure,
        say!(
            en: "A consequence of finding [{id}], not a separate cause",
            zh: "是发现 [{id}] 的后果，不是另一个原因",
            id = id
        ),
        concat([
            what,
            say!(
                en: " follows finding [{id}], an earlier (probable) out-of-memory error. When one rank dies, its peers lose their connection to it or wait for it at the next collective, and fail in turn; the launcher then reports every exit.",
                zh: "出现在发现 [{id}] 之后，那是更早的一个（很可能的）显存不足错误。一个 rank 死掉后，其他 rank 会与它断开连接，或在下一次集合通信时等它，于是也接连失败；启动器随后会报告每一次退出。",
                id = id
            ),
            root,
            say!(
                en: " Fix finding [{id}] first: this error will go away with it.",
                zh: "先解决发现 [{id}]：这个错误会随之消失。",
                id = id
            ),
        ]),
    ))
}

fn timeout_verdict(f: &Finding) -> Verdict {
    // "{rank} waited{ran} in {op}{seq}", the same in both verdicts.
    let rank = match fact(f, fact::RANK) {
        Some(r) => say!(en: "Rank {r}", zh: "rank {r} ", r = r),
        None => say!(en: "A rank", zh: "有一个 rank "),
    };
    let waited = match fact(f, fact::RAN_FOR_MS) {
        Some(ms) => say!(
            en: " waited for {ms} ms in ",
            zh: "等了 {ms} ms，一直在 ",
            ms = ms
        ),
        None => say!(en: " waited in ", zh: "一直在 "),
    };
    let op = match fact(f, fact::OP_TYPE) {
        Some(op) => say!(en: "{op}", zh: "{op}", op = op),
        None => say!(en: "a collective", zh: "某次集合通信"),
    };
    let seq = match (fact(f, fact::SEQ_NUM), fact(f, fact::OP_TYPE)) {
        (Some(s), _) => say!(en: " (SeqNum {s})", zh: "（SeqNum {s}）", s = s),
        // A space between the collective's Latin name and the Chinese.
        (None, Some(_)) => say!(en: "", zh: " "),
        (None, None) => Said::default(),
    };
    let limit = match fact(f, fact::TIMEOUT_MS) {
        Some(ms) => say!(
            en: " the timeout of {ms} ms",
            zh: " {ms} ms 的超时时间",
            ms = ms
        ),
        None => say!(en: " its timeout", zh: "超时时间"),
    };
    let waiting = concat([rank, waited, op, seq]);
    if let Some(id) = f.consequence_of {
        return verdict(
            Code::CollateralTimeout,
            say!(
                en: "A consequence of finding [{id}], not a separate cause",
                zh: "是发现 [{id}] 的后果，不是另一个原因",
                id = id
            ),
            concat([
                waiting,
                say!(
                    en: " for ranks that never joined. Finding [{id}] is an earlier (probable) out-of-memory error: once a rank dies, the others block at the next collective until the NCCL watchdog gives up after",
                    zh: "里等待始终没有加入的 rank。发现 [{id}] 是更早的一个（很可能的）显存不足错误：一旦有 rank 死掉，其他 rank 就会卡在下一次集合通信上，直到 NCCL watchdog 等满",
                    id = id
                ),
                limit,
                say!(
                    en: ". Fix finding [{id}]; this timeout will go away with it.",
                    zh: "后放弃。先解决发现 [{id}]；这次超时会随之消失。",
                    id = id
                ),
            ]),
        );
    }
    verdict(
        Code::CollectiveTimeout,
        say!(
            en: "A collective waited for a rank that never arrived",
            zh: "一次集合通信一直在等一个始终没到的 rank"
        ),
        concat([
            waiting,
            say!(
                en: " and the NCCL watchdog gave up after",
                zh: "里等待，NCCL watchdog 等满"
            ),
            limit,
            say!(
                en: ". Some other rank did not reach this collective: it crashed (its log shows the first error), hangs, or is far slower (evaluation, logging or checkpointing on rank 0 only, a data loader stall, uneven numbers of batches). The rank that timed out is usually the victim, not the culprit.",
                zh: "后放弃了。有别的 rank 没有到达这次集合通信：它崩溃了（它的日志里有最早的那个错误）、卡住了，或者慢得多（只在 rank 0 上做评估、日志或保存 checkpoint，数据加载卡住，各 rank 的 batch 数不一样）。超时的那个 rank 通常是受害者，不是元凶。"
            ),
        ]),
    )
}

fn nccl_error_verdict(f: &Finding) -> Verdict {
    let meaning = match fact(f, fact::NCCL_ERROR) {
        Some("ncclUnhandledCudaError") => match fact(f, fact::LAST_ERROR) {
            Some(e) => say!(
                en: "a CUDA call inside NCCL failed; NCCL's last error was `{e}`",
                zh: "NCCL 内部的一次 CUDA 调用失败了；NCCL 记录的最后一个错误是 `{e}`",
                e = e
            ),
            None => say!(
                en: "a CUDA call inside NCCL failed",
                zh: "NCCL 内部的一次 CUDA 调用失败了"
            ),
        },
        Some("ncclSystemError") => say!(
            en: "a system call or external library failed in this process (socket, shared memory, malloc): in containers often a /dev/shm that is too small, otherwise the network interface NCCL picked",
            zh: "这个进程里的一次系统调用或外部库调用失败了（socket、共享内存、malloc）：在容器里常常是 /dev/shm 太小，否则是 NCCL 选中的网卡"
        ),
        Some("ncclRemoteError") => say!(
            en: "a peer closed the connection: a remote process exited (crashed) or the network failed",
            zh: "对端关闭了连接：远端进程退出（崩溃）了，或者网络出了故障"
        ),
        Some("ncclInternalError") => say!(
            en: "NCCL's own consistency check failed: ranks calling different collectives or tensors of different sizes, mismatched NCCL versions, or a bug",
            zh: "NCCL 自己的一致性检查失败了：各 rank 调用了不同的集合通信或大小不同的张量、NCCL 版本不一致，或者是 bug"
        ),
        _ => match fact(f, fact::REASON) {
            Some(r) => say!(en: "it reports: {r}", zh: "它报告：“{r}”", r = r),
            None => say!(
                en: "the process group's backend reported an error",
                zh: "进程组的后端报告了一个错误"
            ),
        },
    };
    // A CUDA error NCCL names is this process's own: its meaning, not a
    // search through the other ranks, explains it.
    if let Some((error, advice)) = local_cuda_error(f) {
        return verdict(
            Code::NcclFailure,
            say!(
                en: "This rank's own CUDA call failed inside NCCL",
                zh: "这个 rank 自己的 CUDA 调用在 NCCL 里失败了"
            ),
            concat([
                say!(
                    en: "NCCL's last error, `{error}`, is a CUDA error of this process, not a knock-on from another rank. ",
                    zh: "NCCL 的最后一个错误 `{error}` 是这个进程自己的 CUDA 错误，不是别的 rank 连带出来的。",
                    error = error
                ),
                super::status::said(advice.why),
            ]),
        );
    }
    if cuda_call_failed(f) {
        return local_cuda_call_verdict(f);
    }
    if call_misused(f) {
        return misuse_verdict(f);
    }
    if system_call_failed(f) && first_collective(f).is_none() {
        return verdict(
            Code::NcclFailure,
            say!(
                en: "A system or library call failed inside NCCL in this process",
                zh: "NCCL 在这个进程里的一次系统调用或库调用失败了"
            ),
            say!(
                en: "NCCL's `unhandled system error` (ncclSystemError) means a call NCCL made to the operating system or an external library failed here (shared memory, sockets, InfiniBand, malloc); newer NCCL releases report a peer that exited as a remote error instead. In a container it is most often a /dev/shm that is too small (Docker's default is 64 MB); otherwise the network interface NCCL picked or the InfiniBand setup. NCCL_DEBUG=INFO prints the call that failed.",
                zh: "NCCL 的 `unhandled system error`（ncclSystemError）表示 NCCL 在这里对操作系统或外部库的一次调用失败了（共享内存、socket、InfiniBand、malloc）；较新的 NCCL 会把对端进程退出报成 remote error，而不是这个。在容器里最常见的是 /dev/shm 太小（Docker 默认只有 64 MB）；否则是 NCCL 选中的网卡或 InfiniBand 的配置。设 NCCL_DEBUG=INFO 会打印出失败的那次调用。"
            ),
        );
    }
    let title = if first_collective(f).is_some() {
        say!(
            en: "Collective communication failed at its first collectives: a setup problem",
            zh: "集合通信在最初几次就失败了：是建立连接的问题"
        )
    } else {
        say!(en: "Collective communication failed", zh: "集合通信失败")
    };
    verdict(
        Code::NcclFailure,
        title,
        concat([
            say!(
                en: "NCCL or PyTorch's c10d failed: ",
                zh: "NCCL 或 PyTorch 的 c10d 失败了："
            ),
            meaning,
            match first_collective(f) {
                Some(seq) => say!(
                    en: ". It failed at collective number {seq} (SeqNum), among the first the process group ran: the ranks could not set up their connection (the network interface, shared memory or transport NCCL picked), rather than a rank crashing mid-training.",
                    zh: "。它在第 {seq} 次集合通信（SeqNum）时失败，是进程组最早的几次集合通信之一：说明各 rank 没能建立连接（NCCL 选中的网卡、共享内存或传输方式有问题），而不是某个 rank 在训练中途崩溃。",
                    seq = seq
                ),
                None => say!(
                    en: ". When one rank crashes first (an OOM, an assert), the others fail like this at their next collective, so look for the earliest error in every rank's log before debugging NCCL itself.",
                    zh: "。当某个 rank 先崩溃（显存不足、断言失败）时，其他 rank 会在下一次集合通信时这样失败，所以在调试 NCCL 本身之前，先在每个 rank 的日志里找最早的那个错误。"
                ),
            },
        ]),
    )
}

/// NCCL's result codes (ncclResult_t) that name a failure, as NCCL's
/// documentation of ncclResult_t defines them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum NcclResult {
    /// 1: a call to a CUDA function failed, in this process.
    UnhandledCuda,
    /// 2: a call to the system failed, in this process.
    System,
    /// 3: an internal check failed (a bug or memory corruption).
    Internal,
    /// 4: an argument of this process's call has an invalid value.
    InvalidArgument,
    /// 5: this process's call to NCCL is incorrect, "usually reflecting a
    /// programming error".
    InvalidUsage,
    /// 6: a network error or a remote process that exited.
    Remote,
}

/// The result names, ncclGetErrorString's texts and the numbers NCCL and
/// its callers print for each code (`NCCL error: invalid usage`,
/// `NCCL Error 1: unhandled cuda error`, `ncclInvalidUsage: ...`).
const NCCL_RESULTS: &[(NcclResult, &str, &str, u8)] = &[
    (
        NcclResult::UnhandledCuda,
        "ncclUnhandledCudaError",
        "unhandled cuda error",
        1,
    ),
    (
        NcclResult::System,
        "ncclSystemError",
        "unhandled system error",
        2,
    ),
    (
        NcclResult::Internal,
        "ncclInternalError",
        "internal error",
        3,
    ),
    (
        NcclResult::InvalidArgument,
        "ncclInvalidArgument",
        "invalid argument",
        4,
    ),
    (
        NcclResult::InvalidUsage,
        "ncclInvalidUsage",
        "invalid usage",
        5,
    ),
    (
        NcclResult::Remote,
        "ncclRemoteError",
        "remote process exited or there was a network error",
        6,
    ),
];

/// The result code an NCCL finding reports: its name fact, then the name,
/// the text or `NCCL Error <n>` in its message.
fn nccl_result(f: &Finding) -> Option<NcclResult> {
    if let Some(name) = fact(f, fact::NCCL_ERROR) {
        if let Some(&(code, ..)) = NCCL_RESULTS.iter().find(|(_, n, ..)| *n == name) {
            return Some(code);
        }
    }
    let reason = fact(f, fact::REASON)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let text = f.text.to_ascii_lowercase();
    let by_name_or_text = NCCL_RESULTS.iter().find(|(_, name, said, _)| {
        f.text.contains(name)
            || reason.contains(said)
            || text.contains(&format!("nccl error: {said}"))
            || text.contains(&format!(", {said}, nccl version"))
            // The longer texts name NCCL's code wherever they stand.
            || (said.starts_with("unhandled") || said.starts_with("remote")) && text.contains(said)
    });
    if let Some(&(code, ..)) = by_name_or_text {
        return Some(code);
    }
    // `NCCL Error 1:` (PyTorch's older c10d and other callers print the number).
    let after = text.split_once("nccl error ")?.1;
    let number: u8 = after
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    NCCL_RESULTS
        .iter()
        .find(|&&(.., n)| n == number)
        .map(|&(code, ..)| code)
}

/// Whether NCCL says one of its system or library calls failed
/// (`unhandled system error`, ncclSystemError: NCCL's documentation defines
/// it as a failed call to the system on this process): like a failed CUDA
/// call, a local failure; a peer that exits is ncclRemoteError.
fn system_call_failed(f: &Finding) -> bool {
    nccl_result(f) == Some(NcclResult::System)
}

/// Whether NCCL says one of its own CUDA calls failed (`unhandled cuda
/// error`, `ncclUnhandledCudaError: Call to CUDA function failed`, NCCL's
/// ncclGetErrorString and its result names): a failure in this process,
/// unlike a remote error, a timeout or a closed connection, which report a
/// peer.
fn cuda_call_failed(f: &Finding) -> bool {
    nccl_result(f) == Some(NcclResult::UnhandledCuda)
}

/// Whether NCCL rejected this process's own call (ncclInvalidUsage,
/// ncclInvalidArgument: NCCL's documentation calls them a programming
/// error and an invalid argument value): a misuse on this rank, not a peer
/// that crashed.
fn call_misused(f: &Finding) -> bool {
    matches!(
        nccl_result(f),
        Some(NcclResult::InvalidUsage | NcclResult::InvalidArgument)
    )
}

/// The NCCL a finding prints is at least `release` (NCCL_CUMEM_ENABLE and
/// NVLS exist from 2.18 and 2.17), or it prints none.
fn nccl_at_least(f: &Finding, release: (u32, u32)) -> bool {
    let Some(version) = fact(f, "nccl_version") else {
        return true;
    };
    let mut parts = version.split('.').map(|p| {
        p.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse::<u32>()
            .ok()
    });
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= release,
        _ => true,
    }
}

/// The first NCCL with cuMem-based buffers switched on by default (its
/// NCCL_CUMEM_ENABLE), which containers without the needed sharing reject.
const NCCL_CUMEM: (u32, u32) = (2, 18);

/// NCCL's own CUDA call failed in this process, with no CUDA error named.
fn local_cuda_call_verdict(f: &Finding) -> Verdict {
    let containers = if nccl_at_least(f, NCCL_CUMEM) {
        say!(
            en: ", or, in a container, NCCL's cuMem/NVLS buffer sharing that the container does not allow",
            zh: "；或者在容器里，NCCL 用 cuMem/NVLS 共享缓冲区，而容器不允许"
        )
    } else {
        Said::default()
    };
    verdict(
        Code::NcclFailure,
        say!(
            en: "A CUDA call failed inside NCCL on this rank",
            zh: "这个 rank 上 NCCL 内部的一次 CUDA 调用失败了"
        ),
        concat([
            say!(
                en: "`unhandled cuda error` means a CUDA call NCCL made in this process failed: it is this rank's own failure, not a rank waiting for a peer that crashed. The usual causes: two ranks on one GPU (torch.cuda.set_device(local_rank) not called before the process group starts, or a trainer and an inference engine placed on the same GPU), too little free GPU memory left for NCCL's buffers, an NCCL newer than the GPU driver supports",
                zh: "`unhandled cuda error` 表示 NCCL 在这个进程里发出的一次 CUDA 调用失败了：这是这个 rank 自己的失败，不是在等一个已经崩溃的对端。常见原因：两个 rank 用了同一块 GPU（进程组启动前没有调用 torch.cuda.set_device(local_rank)，或者训练进程和推理引擎被放在同一块 GPU 上）；留给 NCCL 缓冲区的空闲显存太少；NCCL 比 GPU 驱动支持的版本更新"
            ),
            containers,
            say!(
                en: ". NCCL_DEBUG=INFO prints the CUDA call that failed and its error.",
                zh: "。设 NCCL_DEBUG=INFO 会打印出失败的 CUDA 调用和它的错误。"
            ),
        ]),
    )
}

/// NCCL rejected this process's own call (ncclInvalidUsage or
/// ncclInvalidArgument).
fn misuse_verdict(f: &Finding) -> Verdict {
    let code = if nccl_result(f) == Some(NcclResult::InvalidArgument) {
        say!(
            en: "`invalid argument` (ncclInvalidArgument) means an argument of this process's NCCL call has an invalid value (a pointer that is not on the communicator's GPU, a device count, an address)",
            zh: "`invalid argument`（ncclInvalidArgument）表示这个进程调用 NCCL 时某个参数的值不合法（指针不在通信器的 GPU 上、设备数量、地址）"
        )
    } else {
        say!(
            en: "`invalid usage` (ncclInvalidUsage) means NCCL found this process's call itself wrong, usually a programming error",
            zh: "`invalid usage`（ncclInvalidUsage）表示 NCCL 认为这个进程的调用本身有错，通常是程序写法的问题"
        )
    };
    verdict(
        Code::NcclFailure,
        say!(
            en: "NCCL rejected this rank's own call",
            zh: "NCCL 拒绝了这个 rank 自己的调用"
        ),
        concat([
            code,
            say!(
                en: ": it is this rank's own failure, not a knock-on from a peer that crashed. The usual causes: two ranks on one GPU (NCCL's `Duplicate GPU detected`), torch.cuda.set_device(local_rank) not called so every rank uses GPU 0, or a tensor on a different GPU than the communicator's (NCCL's `invalid device pointer`). NCCL_DEBUG=WARN prints what NCCL rejected.",
                zh: "：这是这个 rank 自己的失败，不是某个对端崩溃后连带出来的。常见原因：两个 rank 用了同一块 GPU（NCCL 的 `Duplicate GPU detected`）；没有调用 torch.cuda.set_device(local_rank)，所以每个 rank 都用 GPU 0；或者张量所在的 GPU 不是通信器的 GPU（NCCL 的 `invalid device pointer`）。设 NCCL_DEBUG=WARN 会打印出 NCCL 拒绝的是什么。"
            ),
        ]),
    )
}

/// One GPU per rank, and every tensor on it: the fix for a call NCCL rejected.
fn misuse_fix() -> Fix {
    fix(
        &NCCL_ONE_GPU_PER_RANK,
        say!(
            en: "Give each rank its own GPU and keep its tensors there: call torch.cuda.set_device(local_rank) before init_process_group, move every tensor you pass to a collective to torch.device('cuda', local_rank), and check that the launcher starts no more ranks per node than there are visible GPUs (CUDA_VISIBLE_DEVICES, --nproc_per_node).",
            zh: "让每个 rank 用自己的 GPU，并把它的张量放在那块 GPU 上：在 init_process_group 之前调用 torch.cuda.set_device(local_rank)，把传给集合通信的每个张量都移到 torch.device('cuda', local_rank)，并确认启动器在每个节点上启动的 rank 数不多于可见的 GPU 数（CUDA_VISIBLE_DEVICES、--nproc_per_node）。"
        ),
    )
}

/// What to check when NCCL's CUDA call failed in this process.
fn local_cuda_call_fix(f: &Finding) -> Fix {
    let containers = if nccl_at_least(f, NCCL_CUMEM) {
        say!(
            en: " In a container, try NCCL_CUMEM_ENABLE=0 and NCCL_NVLS_ENABLE=0.",
            zh: "在容器里，可以试试 NCCL_CUMEM_ENABLE=0 和 NCCL_NVLS_ENABLE=0。"
        )
    } else {
        Said::default()
    };
    fix(
        &NCCL_CUDA_CALL_CAUSES,
        concat([
            say!(
                en: "Make each rank use its own GPU: call torch.cuda.set_device(local_rank) before init_process_group, and check with nvidia-smi that no other process (an inference engine, another job) shares the GPU. Leave NCCL some free GPU memory, and check that the driver supports the CUDA version NCCL was built for.",
                zh: "让每个 rank 用自己的 GPU：在 init_process_group 之前调用 torch.cuda.set_device(local_rank)，并用 nvidia-smi 确认没有别的进程（推理引擎、别的作业）共用这块 GPU。给 NCCL 留一些空闲显存，并确认驱动支持 NCCL 编译时用的 CUDA 版本。"
            ),
            containers,
        ]),
    )
}

fn launcher_verdict(f: &Finding) -> Verdict {
    let rank = match (
        fact(f, fact::ROOT_CAUSE_RANK),
        fact(f, "root_cause_local_rank"),
    ) {
        (Some(r), _) => say!(en: "rank {r}", zh: "rank {r}", r = r),
        (None, Some(r)) => say!(en: "local rank {r}", zh: "local rank {r}", r = r),
        (None, None) => say!(
            en: "a rank the report does not name",
            zh: "报告里没有写明的某个 rank"
        ),
    };
    let code = fact(f, fact::ROOT_CAUSE_EXITCODE).unwrap_or("?");
    let signal = fact(f, fact::ROOT_CAUSE_SIGNAL);
    let exit_meaning = match (code, signal) {
        (_, Some("SIGKILL")) | ("-9", _) => say!(
            en: "killed with SIGKILL: most often the Linux out-of-memory killer (host RAM, not GPU memory) or the job scheduler; check `dmesg -T | grep -i -E 'killed process|out of memory'`",
            zh: "进程被 SIGKILL 杀掉：最常见的是 Linux 的 OOM killer（主机内存不够，不是显存），或者作业调度器；用 `dmesg -T | grep -i -E 'killed process|out of memory'` 查看"
        ),
        (_, Some("SIGABRT")) | ("-6", _) => say!(
            en: "aborted by native code: typically c10d's watchdog taking the process down after an NCCL error or timeout, or an uncaught C++ exception",
            zh: "被原生代码 abort：通常是 c10d 的 watchdog 在 NCCL 出错或超时后结束了进程，或者是没有捕获的 C++ 异常"
        ),
        (_, Some("SIGSEGV")) | ("-11", _) => say!(
            en: "a segmentation fault in native code",
            zh: "原生代码里的段错误"
        ),
        (_, Some("SIGTERM")) | ("-15", _) => say!(
            en: "terminated from outside (the launcher or scheduler), often because another rank failed first",
            zh: "被外部（启动器或调度器）终止，常常是因为另一个 rank 先失败了"
        ),
        ("1", _) => say!(
            en: "a Python exception: its traceback is in that rank's own output",
            zh: "一个 Python 异常：它的调用栈在那个 rank 自己的输出里"
        ),
        _ => say!(en: "exit code {code}", zh: "退出码 {code}", code = code),
    };
    let record = if fact(f, fact::ROOT_CAUSE_ERROR_FILE).is_some_and(|e| e.contains("N/A")) {
        say!(
            en: " The report has no traceback because the entry point is not decorated with @record (torch.distributed.elastic.multiprocessing.errors.record).",
            zh: "报告里没有调用栈，因为入口函数没有用 @record（torch.distributed.elastic.multiprocessing.errors.record）装饰。"
        )
    } else {
        Said::default()
    };
    verdict(
        Code::LauncherReport,
        say!(
            en: "The launcher only reports that workers exited",
            zh: "启动器只报告了有 worker 退出"
        ),
        concat([
            say!(
                en: "torchrun (torchelastic) does not know why workers failed. Its \"root cause\" is the first failure it observed: ",
                zh: "torchrun（torchelastic）并不知道 worker 为什么失败。它的“根因”是它最先看到的失败："
            ),
            rank,
            say!(
                en: ", exit code {code}, i.e. ",
                zh: "，退出码 {code}，即",
                code = code
            ),
            exit_meaning,
            say!(
                en: ". The first observed failure can be a victim that timed out rather than the culprit.",
                zh: "。最先看到的失败也可能只是等超时的受害者，而不是元凶。"
            ),
            record,
            say!(
                en: " Read that rank's own output for the real error.",
                zh: "真正的错误要看那个 rank 自己的输出。"
            ),
        ]),
    )
}

fn consequence_fix(f: &Finding, out: &mut Vec<Fix>) {
    if let Some(id) = f.consequence_of {
        // The title names the finding, so it is written here rather than
        // taken from the catalogue, whose title stands for any finding.
        let title = say!(
            en: "Fix finding [{id}] first",
            zh: "先解决发现 [{id}]",
            id = id
        );
        let how = say!(
            en: "This error is collateral damage of finding [{id}]. Apply that finding's fixes; once no rank runs out of memory, this one disappears.",
            zh: "这个错误是发现 [{id}] 的连带后果。按那个发现的建议去改；只要没有 rank 再显存不足，这个错误就会消失。",
            id = id
        );
        out.push(Fix {
            id: FIX_EARLIER_FINDING.id.to_string(),
            title: title.en,
            how: how.en,
            zh: Some(Chinese {
                title: title.zh,
                text: how.zh,
            }),
        });
    }
}

/// The search for the first error, with the launcher's options where the
/// finding's PyTorch has them: torchrun from 1.10, torchelastic's @record
/// from 1.9; before, torch.distributed.launch writes every rank to one
/// terminal and has neither.
fn find_first_error_fix(f: &Finding) -> Fix {
    if matches!(available(f, since::TORCHRUN), Availability::Upgrade(_)) {
        return fix(
            &FIND_FIRST_ERROR_LAUNCH,
            say!(
                en: "Give every rank its own log (torch.distributed.launch writes all ranks to one terminal: redirect each rank's output to a file named after its rank, or prefix lines with the rank) and look for the earliest error.",
                zh: "给每个 rank 单独的日志（torch.distributed.launch 把所有 rank 的输出写到同一个终端：把每个 rank 的输出重定向到以它的 rank 命名的文件，或在每行前加上 rank），找出最早的那个错误。"
            ),
        );
    }
    fix(
        &FIND_FIRST_ERROR,
        say!(
            en: "Give every rank its own log (torchrun --log_dir logs --redirects 3 --tee 3, or prefix lines with the rank) and look for the earliest error; decorate the entry point with @torch.distributed.elastic.multiprocessing.errors.record so tracebacks reach the launcher's report.",
            zh: "给每个 rank 单独的日志（torchrun --log_dir logs --redirects 3 --tee 3，或在每行前加上 rank），找出最早的那个错误；用 @torch.distributed.elastic.multiprocessing.errors.record 装饰入口函数，让调用栈进入启动器的报告。"
        ),
    )
}

/// Fixes for an NCCL error or an aborted communicator: both report a failure
/// that happened elsewhere.
fn collateral_nccl_fixes(f: &Finding, out: &mut Vec<Fix>) {
    consequence_fix(f, out);
    // NCCL's `Last error:` line can name the cause itself: then its fix
    // comes before any search for one.
    let shm = fact(f, fact::LAST_ERROR).filter(|e| names_shared_memory(e));
    if let Some(last) = shm {
        out.push(fix(
            &SHM_FOR_NCCL,
            say!(
                en: "NCCL's last error says it could not create its shared-memory segment (`{last}`): /dev/shm is too small or full, the usual state in a container (Docker's default is 64 MB). Start the container with --ipc=host or --shm-size=16g (Kubernetes: mount an emptyDir with medium: Memory at /dev/shm), and check `df -h /dev/shm` on every node. NCCL_SHM_DISABLE=1 avoids it at some speed.",
                zh: "NCCL 的最后一条错误说它建不了共享内存段（`{last}`）：/dev/shm 太小或已满，容器里常常如此（Docker 默认只有 64 MB）。用 --ipc=host 或 --shm-size=16g 启动容器（Kubernetes：在 /dev/shm 挂一个 medium: Memory 的 emptyDir），并在每个节点上用 `df -h /dev/shm` 检查。NCCL_SHM_DISABLE=1 可以绕开它，但会慢一些。",
                last = last
            ),
        ));
    }
    // A CUDA error of this process that NCCL names: that error's own fix,
    // before any search across the ranks.
    let local = local_cuda_error(f).is_some();
    if let Some((fix, _)) = local_cuda_error(f).and_then(|(error, _)| local_cuda_fix(f, error)) {
        out.push(fix);
    }
    let debug_info = fix(
        &NCCL_DEBUG_INFO,
        say!(
            en: "Rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=INIT,NET for setup problems): the WARN lines name the failing call.",
            zh: "设 NCCL_DEBUG=INFO 重跑（建立连接的问题再加 NCCL_DEBUG_SUBSYS=INIT,NET）：WARN 行会指出失败的调用。"
        ),
    );
    // NCCL rejected this rank's own call: the misuse's usual fix, then
    // NCCL's own report of it; no search through the other ranks.
    if !local && f.kind == Kind::NcclError && f.consequence_of.is_none() && call_misused(f) {
        if NCCL_ONE_GPU_PER_RANK
            .contradiction(&Setting::of(f))
            .is_none()
        {
            out.push(misuse_fix());
        }
        out.push(debug_info);
        return;
    }
    // NCCL's own CUDA call failed here: what NCCL_DEBUG=INFO names comes
    // first, then this rank's usual causes; no search through the others.
    if !local && f.kind == Kind::NcclError && f.consequence_of.is_none() && cuda_call_failed(f) {
        out.push(debug_info);
        if NCCL_CUDA_CALL_CAUSES
            .contradiction(&Setting::of(f))
            .is_none()
        {
            out.push(local_cuda_call_fix(f));
        }
        return;
    }
    // A failed system call is this process's own: NCCL's report of the
    // call, then shared memory and the interface; no search across ranks.
    if !local && f.kind == Kind::NcclError && f.consequence_of.is_none() && system_call_failed(f) {
        out.push(debug_info);
        if shm.is_none() {
            out.push(shm_and_interface());
        }
        return;
    }
    // Among the first collectives: setting up the connection failed, so
    // NCCL's own report and the transport's settings come first.
    let setup = first_collective(f).is_some() && f.consequence_of.is_none();
    if !local && !setup {
        out.push(find_first_error_fix(f));
    }
    out.push(debug_info);
    if system_call_failed(f) && shm.is_none() {
        out.push(shm_and_interface());
    }
    if !local && setup {
        out.push(find_first_error_fix(f));
    }
}

/// Docker's shared memory, `df -h /dev/shm`, and NCCL's network variables.
fn shm_and_interface() -> Fix {
    fix(
        &SHM_AND_INTERFACE,
        say!(
            en: "In Docker give NCCL shared memory (--ipc=host or --shm-size=16g) and check `df -h /dev/shm`; choose the interface with NCCL_SOCKET_IFNAME=eth0 (your interface); to test, NCCL_P2P_DISABLE=1 or NCCL_IB_DISABLE=1.",
            zh: "在 Docker 里给 NCCL 共享内存（--ipc=host 或 --shm-size=16g），并用 `df -h /dev/shm` 检查；用 NCCL_SOCKET_IFNAME=eth0（换成你的网卡）指定网卡；排查时可以试 NCCL_P2P_DISABLE=1 或 NCCL_IB_DISABLE=1。"
        ),
    )
}

/// The collective's number (c10d's SeqNum) when it is among the process
/// group's first ([`FIRST_COLLECTIVES_MAX_SEQ`]).
fn first_collective(f: &Finding) -> Option<u64> {
    fact(f, fact::SEQ_NUM)?
        .parse::<u64>()
        .ok()
        .filter(|&seq| seq <= FIRST_COLLECTIVES_MAX_SEQ)
}

/// The CUDA runtime's own texts (`cudaGetErrorString`) for codes whose
/// table row carries no message, as NCCL's `Cuda failure '...'` quotes
/// them (CUDA runtime: cudaGetErrorString; NCCL: CUDACHECK in checks.h).
const CUDA_ERROR_TEXTS: &[(&str, &str)] = &[
    ("initialization error", "cudaErrorInitializationError"),
    (
        "all CUDA-capable devices are busy or unavailable",
        "cudaErrorDevicesUnavailable",
    ),
    ("invalid device ordinal", "cudaErrorInvalidDevice"),
    ("operation not supported", "cudaErrorNotSupported"),
    (
        "peer access is not supported between these two devices",
        "cudaErrorPeerAccessUnsupported",
    ),
    (
        "system has unsupported display driver / cuda driver combination",
        "cudaErrorSystemDriverMismatch",
    ),
];

/// The CUDA error NCCL's `Last error:` quotes (`Cuda failure 'initialization
/// error'`, newer NCCL `Cuda failure 3 'initialization error'`), with its
/// name in the CUDA runtime's table, when the advice table has a row for it.
fn local_cuda_error(f: &Finding) -> Option<(&str, &'static crate::codes::advice::Advice)> {
    let last = fact(f, fact::LAST_ERROR)?;
    let after = last.split_once("Cuda failure")?.1;
    let text = after.split('\'').nth(1)?.trim();
    let name = cuda_error_name(text)?;
    let advice = crate::codes::advice::lookup(name, |word| f.text.contains(word))?;
    Some((text, advice))
}

/// The CUDA runtime's name for one of its error texts: the table's own
/// message column first, then the texts it lacks.
fn cuda_error_name(text: &str) -> Option<&'static str> {
    let table = crate::codes::table("cuda_runtime")?;
    table
        .entries
        .iter()
        .find(|e| !e.message.is_empty() && e.message.eq_ignore_ascii_case(text))
        .map(|e| e.name)
        .or_else(|| {
            CUDA_ERROR_TEXTS
                .iter()
                .find(|(t, _)| t.eq_ignore_ascii_case(text))
                .map(|&(_, name)| name)
        })
}

/// The advice table's first fix for the CUDA error NCCL names.
fn local_cuda_fix(f: &Finding, text: &str) -> Option<(Fix, &'static crate::codes::advice::Advice)> {
    super::status::advice_fix(cuda_error_name(text)?, |word| f.text.contains(word))
}

/// Whether NCCL's last error is about its shared-memory segment
/// (`Error while creating shared memory segment /dev/shm/nccl-...`, NCCL's
/// shmutils).
fn names_shared_memory(last_error: &str) -> bool {
    last_error.contains("shared memory segment") || last_error.contains("/dev/shm")
}

/// /dev/shm for NCCL, when its last error names it.
const SHM_FOR_NCCL: FixSpec = FixSpec::new(
    "nccl-enlarge-dev-shm",
    "Give NCCL a larger /dev/shm",
    "给 NCCL 更大的 /dev/shm",
)
.sources(&["NCCL documentation: Troubleshooting, Docker (shared memory)"]);

/// dist.barrier and set_per_process_memory_fraction; NCCL_BUFFSIZE and
/// NCCL_MAX_NCHANNELS.
const NCCL_ALLOCATE_FIRST: FixSpec = FixSpec::new(
    "nccl-allocate-before-model",
    "Let NCCL allocate before the model fills the GPU",
    "在模型占满 GPU 之前让 NCCL 先分配",
)
.frameworks(&[Framework::PyTorch])
.vendors(NCCL_VENDORS)
.torch_since(since::MEMORY_FRACTION)
.sources(&["NCCL documentation: Environment Variables (NCCL_BUFFSIZE, NCCL_MAX_NCHANNELS)"]);

/// The same order for a PyTorch older than dist.barrier(device_ids=...)
/// and the memory fraction (1.8).
const NCCL_ALLOCATE_FIRST_OLD: FixSpec = FixSpec::new(
    "nccl-allocate-before-model-all-reduce",
    "Let NCCL allocate before the model fills the GPU",
    "在模型占满 GPU 之前让 NCCL 先分配",
)
.frameworks(&[Framework::PyTorch])
.vendors(NCCL_VENDORS)
.torch_until((1, 7))
.sources(&["NCCL documentation: Environment Variables (NCCL_BUFFSIZE, NCCL_MAX_NCHANNELS)"]);

/// Any consequence of an earlier finding; the title names its id.
const FIX_EARLIER_FINDING: FixSpec = FixSpec::new(
    "fix-earlier-finding-first",
    "Fix finding [N] first",
    "先解决发现 [N]",
);

/// torchrun's log options and torchelastic's @record.
const FIND_FIRST_ERROR: FixSpec = FixSpec::new(
    "find-first-error-across-ranks",
    "Find the first error across all ranks",
    "在所有 rank 里找到最早的错误",
)
.frameworks(&[Framework::PyTorch])
.torch_since(since::TORCHRUN)
.cost(Cost::Look)
.sources(&["PyTorch documentation: torchrun (--log_dir, --redirects, --tee), torch.distributed.elastic errors (record)"]);

/// DeepSpeed's launcher writes each rank to its own file on request
/// (`--enable_each_rank_log`, deepspeed/launcher/runner.py and launch.py).
const DEEPSPEED_EACH_RANK_LOG: FixSpec = FixSpec::new(
    "deepspeed-each-rank-log",
    "Read the failed rank's own log",
    "看失败的那个 rank 自己的日志",
)
.cost(Cost::Look)
.sources(&["DeepSpeed: deepspeed/launcher/launch.py (sigkill_handler, --enable_each_rank_log)"]);

/// The same search before torchrun (1.10) and torchelastic (1.9).
const FIND_FIRST_ERROR_LAUNCH: FixSpec = FixSpec::new(
    "find-first-error-across-ranks-launch",
    "Find the first error across all ranks",
    "在所有 rank 里找到最早的错误",
)
.frameworks(&[Framework::PyTorch])
.torch_until((1, 9))
.cost(Cost::Look)
.sources(&["PyTorch documentation: torch.distributed.launch"]);

/// ProcessGroupNCCL's flight recorder; TORCH_NCCL_DUMP_ON_TIMEOUT from
/// PyTorch 2.3.
const FLIGHT_RECORDER: FixSpec = FixSpec::new(
    "nccl-flight-recorder",
    "Record what each rank was doing",
    "记录每个 rank 在做什么",
)
.frameworks(&[Framework::PyTorch])
.vendors(NCCL_VENDORS)
.torch_since((2, 3))
.cost(Cost::Look)
.sources(&["PyTorch documentation: Flight Recorder (TORCH_NCCL_TRACE_BUFFER_SIZE, TORCH_NCCL_DUMP_ON_TIMEOUT)"]);

/// DistributedSampler's drop_last.
const SAME_COLLECTIVES: FixSpec = FixSpec::new(
    "same-collectives-on-every-rank",
    "Make every rank run the same collectives",
    "让每个 rank 执行同样的集合通信",
)
.frameworks(&[Framework::PyTorch]);

/// init_process_group's timeout (the NCCL backend's default is 10 minutes
/// from PyTorch 2.2).
const RAISE_TIMEOUT: FixSpec = FixSpec::new(
    "raise-collective-timeout",
    "Raise the timeout only for slow but healthy steps",
    "只有在某一步确实慢但正常时才调大超时",
)
.frameworks(&[Framework::PyTorch])
.sources(&["PyTorch documentation: torch.distributed.init_process_group (timeout)"]);

/// NCCL_DEBUG; RCCL reads the same variables.
const NCCL_DEBUG_INFO: FixSpec = FixSpec::new(
    "nccl-debug-info",
    "Let NCCL say what failed",
    "让 NCCL 说出哪里出了错",
)
.vendors(NCCL_VENDORS)
.cost(Cost::Look)
.sources(&[
    "NCCL documentation: Environment Variables (NCCL_DEBUG, NCCL_DEBUG_SUBSYS)",
    "RCCL documentation: environment variables",
]);

/// One GPU per rank, memory for NCCL, driver support; NCCL's cuMem and NVLS
/// variables in containers.
const NCCL_CUDA_CALL_CAUSES: FixSpec = FixSpec::new(
    "nccl-check-local-cuda-causes",
    "Check this rank's GPU: one rank per GPU, free memory, driver",
    "检查这个 rank 的 GPU：一个 rank 一块 GPU、空闲显存、驱动",
)
.frameworks(&[Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.sources(&[
    "NCCL documentation: Troubleshooting",
    "NCCL documentation: Environment Variables (NCCL_CUMEM_ENABLE, NCCL_NVLS_ENABLE)",
]);

/// One GPU per rank and every tensor on it, for a call NCCL rejected as
/// invalid usage or an invalid argument.
const NCCL_ONE_GPU_PER_RANK: FixSpec = FixSpec::new(
    "nccl-one-gpu-per-rank",
    "Give each rank its own GPU and keep its tensors on it",
    "让每个 rank 用自己的 GPU，张量也放在那块 GPU 上",
)
.frameworks(&[Framework::PyTorch])
.vendors(NCCL_VENDORS)
.sources(&[
    "NCCL documentation: Types (ncclResult_t: ncclInvalidUsage, ncclInvalidArgument)",
    "PyTorch documentation: Distributed communication package (torch.cuda.set_device)",
]);

/// Docker's shared memory and NCCL's network variables.
const SHM_AND_INTERFACE: FixSpec = FixSpec::new(
    "nccl-shm-and-interface",
    "Check shared memory and the network interface",
    "检查共享内存和网卡",
)
.vendors(NCCL_VENDORS)
.sources(&["NCCL documentation: Environment Variables (NCCL_SOCKET_IFNAME, NCCL_P2P_DISABLE, NCCL_IB_DISABLE)"]);

/// torchrun's per-rank logs.
const READ_ROOT_CAUSE_RANK: FixSpec = FixSpec::new(
    "read-root-cause-rank-output",
    "Read the root-cause rank's own output",
    "看根因 rank 自己的输出",
)
.frameworks(&[Framework::PyTorch])
.torch_since(since::TORCHRUN)
.cost(Cost::Look);

/// Linux's kernel log and DataLoader settings.
const HOST_OOM_KILLER: FixSpec = FixSpec::new(
    "check-host-oom-killer",
    "Check the host's out-of-memory killer",
    "检查主机的 OOM killer",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Look);

/// torchelastic's @record.
const PUT_TRACEBACK_IN_REPORT: FixSpec = FixSpec::new(
    "torchelastic-record-traceback",
    "Put the traceback into the report",
    "把调用栈也放进报告",
)
.frameworks(&[Framework::PyTorch])
.torch_since(since::ELASTIC)
.sources(&["PyTorch documentation: torch.distributed.elastic, Error Propagation (record)"]);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    NCCL_ALLOCATE_FIRST,
    NCCL_ALLOCATE_FIRST_OLD,
    FIX_EARLIER_FINDING,
    FIND_FIRST_ERROR,
    FIND_FIRST_ERROR_LAUNCH,
    DEEPSPEED_EACH_RANK_LOG,
    FLIGHT_RECORDER,
    SAME_COLLECTIVES,
    RAISE_TIMEOUT,
    NCCL_DEBUG_INFO,
    NCCL_CUDA_CALL_CAUSES,
    NCCL_ONE_GPU_PER_RANK,
    SHM_AND_INTERFACE,
    SHM_FOR_NCCL,
    READ_ROOT_CAUSE_RANK,
    HOST_OOM_KILLER,
    PUT_TRACEBACK_IN_REPORT,
];

#[cfg(test)]
mod tests {
    fn first_fix(text: &str, kind: &str) -> String {
        crate::decode_str(text)
            .into_iter()
            .find(|f| f.kind.slug() == kind)
            .and_then(|f| f.diagnosis.fixes.first().map(|x| x.id.clone()))
            .unwrap_or_default()
    }

    /// torchrun's report of a rank killed with SIGKILL (fixtures): the
    /// host's OOM killer first; with exit code 1 (a Python exception) the
    /// rank's own output first.
    #[test]
    fn a_killed_rank_sends_to_the_oom_killer_first() {
        let killed = include_str!("../../../../fixtures/host_oom_killed_torchelastic.log");
        assert_eq!(first_fix(killed, "child_failed"), "check-host-oom-killer");
        let raised = killed
            .replace("(exitcode: -9)", "(exitcode: 1)")
            .replace("exitcode  : -9", "exitcode  : 1")
            .replace("Signal 9 (SIGKILL) received by PID 1798", "");
        assert_eq!(
            first_fix(&raised, "child_failed"),
            "read-root-cause-rank-output"
        );
    }

    /// The timeout advice suggests more than the timeout that expired:
    /// fixtures/wild/2301.txt's watchdog waited 1800000 ms (30 minutes),
    /// so 60 minutes and a hang; one millisecond under 30 minutes keeps
    /// the 30-minute suggestion.
    #[test]
    fn raising_the_timeout_goes_past_the_one_that_expired() {
        let how = |text: &str| -> String {
            crate::decode_str(text)
                .into_iter()
                .find(|f| f.kind.slug() == "nccl_timeout")
                .and_then(|f| {
                    f.diagnosis
                        .fixes
                        .iter()
                        .find(|x| x.id == super::RAISE_TIMEOUT.id)
                        .map(|x| x.how.clone())
                })
                .unwrap_or_default()
        };
        let long = include_str!("../../../../fixtures/wild/2301.txt");
        assert!(long.contains("Timeout(ms)=1800000"));
        let got = how(long);
        assert!(got.contains("minutes=60"), "{got}");
        assert!(got.contains("already 30 minutes"), "{got}");
        let shorter = long.replace("Timeout(ms)=1800000", "Timeout(ms)=1799999");
        let got = how(&shorter);
        assert!(got.contains("minutes=30"), "{got}");
        assert!(!got.contains("already"), "{got}");
    }

    /// NCCL's local result codes (NCCL's ncclResult_t): `NCCL error: invalid
    /// usage` (fixtures/wild/2310.txt) is this rank's misuse, so one GPU per
    /// rank comes first; `NCCL Error 1: unhandled cuda error`
    /// (fixtures/wild/2425.txt, the number form) is a failed CUDA call here,
    /// so NCCL's own report comes first. Neither searches the other ranks;
    /// a remote error (code 6) still does.
    #[test]
    fn local_nccl_result_codes_skip_the_search_across_ranks() {
        let fixes = |text: &str| -> Vec<String> {
            crate::decode_str(text)
                .into_iter()
                .find(|f| f.kind.slug() == "nccl_error")
                .map(|f| f.diagnosis.fixes.iter().map(|x| x.id.clone()).collect())
                .unwrap_or_default()
        };
        let misuse = include_str!("../../../../fixtures/wild/2310.txt");
        let got = fixes(misuse);
        assert_eq!(
            got.first().map(String::as_str),
            Some("nccl-one-gpu-per-rank"),
            "{got:?}"
        );
        assert!(
            !got.iter().any(|id| id.starts_with("find-first-error")),
            "{got:?}"
        );
        let argument = misuse.replace("invalid usage", "invalid argument");
        assert_eq!(
            fixes(&argument).first().map(String::as_str),
            Some("nccl-one-gpu-per-rank")
        );
        let cuda = include_str!("../../../../fixtures/wild/2425.txt");
        let got = fixes(cuda);
        assert_eq!(
            got.first().map(String::as_str),
            Some("nccl-debug-info"),
            "{got:?}"
        );
        assert!(
            !got.iter().any(|id| id.starts_with("find-first-error")),
            "{got:?}"
        );
        // The same line with code 6, NCCL's remote error: a peer's failure,
        // so the search across the ranks stays first.
        let remote = cuda.replace(
            "NCCL Error 1: unhandled cuda error",
            "NCCL Error 6: remote process exited or there was a network error",
        );
        assert_eq!(
            fixes(&remote).first().map(String::as_str),
            Some("find-first-error-across-ranks")
        );
    }

    /// NCCL's `Last error: Cuda failure 'initialization error'`
    /// (fixtures/wild/1750.txt) is this rank's own CUDA start failing: the
    /// CUDA error's own fix comes first, and no search across the ranks.
    /// A last error that is no CUDA error with advice keeps that search.
    #[test]
    fn a_local_cuda_error_in_nccl_names_its_own_fix() {
        let paste = include_str!("../../../../fixtures/wild/1750.txt");
        let findings = crate::decode_str(paste);
        let f = findings
            .iter()
            .find(|f| f.kind.slug() == "nccl_error")
            .unwrap();
        let d = &f.diagnosis;
        assert_eq!(d.fixes[0].id, "check-gpu-driver-state");
        for word in ["spawn", "--gpus", "nvidia-smi", "CUDA_VISIBLE_DEVICES"] {
            assert!(d.fixes[0].how.contains(word), "{word}: {}", d.fixes[0].how);
        }
        assert!(d
            .fixes
            .iter()
            .all(|x| x.id != "find-first-error-across-ranks"));
        assert_eq!(
            d.verdicts[0].title,
            "This rank's own CUDA call failed inside NCCL"
        );
        assert!(d.verdicts[0]
            .detail
            .contains("not a knock-on from another rank"));
        let zh = d.verdicts[0].zh.clone().unwrap();
        assert!(
            zh.title.contains("rank") && zh.text.contains("fork"),
            "{}",
            zh.text
        );
        // The same failure quoting another CUDA text: its own row.
        let illegal = paste.replace(
            "'initialization error'",
            "'an illegal memory access was encountered'",
        );
        assert_eq!(
            first_fix(&illegal, "nccl_error"),
            "status-find-failing-kernel"
        );
        // A last error that is not a CUDA failure, or a CUDA text the
        // advice table has no row for: still NCCL's own CUDA call failing
        // here (`ncclUnhandledCudaError`), so NCCL's own report of the call
        // comes first, and no search across the ranks.
        let other = paste.replace(
            "Cuda failure 'initialization error'",
            "Call to ibv_reg_mr failed with error Cannot allocate memory",
        );
        assert_eq!(first_fix(&other, "nccl_error"), "nccl-debug-info");
        let unknown = paste.replace("'initialization error'", "'invalid argument'");
        assert_eq!(first_fix(&unknown, "nccl_error"), "nccl-debug-info");
        // The same paste naming a system error: a failed call of this
        // process too, so NCCL's report leads and no search across ranks.
        let system = other
            .replace("unhandled cuda error", "unhandled system error")
            .replace("ncclUnhandledCudaError: Call to CUDA function failed.", "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.");
        assert_eq!(first_fix(&system, "nccl_error"), "nccl-debug-info");
    }

    /// The launcher's options exist from their PyTorch release: torchrun
    /// from 1.10, torchelastic's @record from 1.9. Over every fixture and
    /// real paste, a fix that names one is never offered to a finding whose
    /// evidence (c10d's source path, the bundled NCCL, the message form)
    /// ends before it, whatever its catalogue entry says.
    #[test]
    fn no_fix_names_a_launcher_option_its_pytorch_lacks() {
        use crate::explain::setting::{since, Release, Setting};
        const NAMED: &[(&str, Release)] = &[
            ("torchrun", since::TORCHRUN),
            ("torch.distributed.run", since::ELASTIC),
            ("torch.distributed.elastic", since::ELASTIC),
            ("@record", since::ELASTIC),
            ("TORCH_NCCL_DUMP_ON_TIMEOUT", (2, 3)),
            ("set_per_process_memory_fraction", since::MEMORY_FRACTION),
            ("device_ids=[local_rank]", since::MEMORY_FRACTION),
        ];
        let pastes = crate::explain::test_support::fixture_pastes();
        assert!(pastes.len() > 500, "fixtures not found: {}", pastes.len());
        let mut wrong = Vec::new();
        let mut dated = 0;
        for (path, text) in &pastes {
            for f in crate::decode_str(text) {
                let Some(last) = Setting::of(&f).torch.1 else {
                    continue;
                };
                dated += 1;
                for fix in &crate::explain::offered_fixes(&f, &f.diagnosis) {
                    let said = format!("{} {}", fix.title, fix.how);
                    for (word, release) in NAMED {
                        // A fix may name an option as a reason to upgrade.
                        let upgrade =
                            said.contains(&format!("PyTorch ≥ {}.{}", release.0, release.1));
                        if said.contains(word) && last < *release && !upgrade {
                            wrong.push(format!(
                                "{path}: {} names {word} (≥ {release:?}), PyTorch ≤ {last:?}",
                                fix.id
                            ));
                        }
                    }
                }
            }
        }
        // The old c10d pastes and the pre-1.10 OOM forms are among them.
        assert!(dated >= 50, "only {dated} dated findings");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// c10d's old source path (`torch/lib/c10d`, to 1.9) and the NCCL
    /// PyTorch bundled up to 1.6 (2.4.x) date a message; the new path dates
    /// it from 1.10. (Real lines: fixtures/wild/1944.txt, 1462.txt, and
    /// 1750.txt for the new path.)
    #[test]
    fn c10d_paths_and_the_bundled_nccl_date_pytorch() {
        use crate::explain::setting::Setting;
        let torch = |line: &str| {
            let f = crate::decode_str(line).into_iter().next().unwrap();
            Setting::of(&f).torch
        };
        let old = "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:32, unhandled cuda error, NCCL version 2.4.8";
        assert_eq!(torch(old), ((1, 0), Some((1, 6))));
        let nccl_2_7 = "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:38, unhandled cuda error, NCCL version 2.7.8";
        assert_eq!(torch(nccl_2_7), ((1, 0), Some((1, 9))));
        // Both sides of the NCCL margin without a path: 2.6 dates, 2.7 not.
        let bare = |v: &str| {
            torch(&format!(
                "RuntimeError: NCCL error: unhandled system error, NCCL version {v}"
            ))
        };
        assert_eq!(bare("2.6.4").1, Some((1, 6)));
        assert_eq!(bare("2.7.3").1, None);
        let new = "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1197, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.3";
        assert_eq!(torch(new), ((1, 10), None));
        // Windows paths date the same.
        let windows = old.replace("/pytorch/torch/lib/c10d/", "C:\\w\\torch\\lib\\c10d\\");
        assert_eq!(torch(&windows).1, Some((1, 6)));
    }

    /// A pre-1.10 NCCL error (fixtures/wild/1946.txt: `torch/lib/c10d`,
    /// NCCL 2.4.8; its `unhandled system error` read as NCCL's
    /// `internal error`, which reports no local call) gets the search for
    /// the first error without torchrun or torchelastic; the same line from
    /// a 2.x PyTorch keeps them.
    #[test]
    fn an_old_pytorch_gets_the_search_without_torchrun() {
        let old = include_str!("../../../../fixtures/wild/1946.txt")
            .replace("unhandled system error", "internal error");
        let old = old.as_str();
        assert_eq!(
            first_fix(old, "nccl_error"),
            "find-first-error-across-ranks-launch"
        );
        let new = old
            .replace(
                "/pytorch/torch/lib/c10d/",
                "/pytorch/torch/csrc/distributed/c10d/",
            )
            .replace("NCCL version 2.4.8", "NCCL version 2.18.5");
        assert_eq!(
            first_fix(&new, "nccl_error"),
            "find-first-error-across-ranks"
        );
    }

    /// `unhandled cuda error` is NCCL's own CUDA call failing on this rank
    /// (fixtures/wild/1944.txt, PyTorch ≈1.2–1.6, and 1945.txt, NCCL 2.27):
    /// NCCL_DEBUG=INFO first, then this rank's causes, and no search across
    /// the ranks, and the same for `unhandled system error` (1946.txt,
    /// ncclSystemError: a failed system call here); a remote error keeps
    /// the search. cuMem/NVLS advice only for an NCCL that has them.
    #[test]
    fn an_unhandled_cuda_error_is_this_ranks_own() {
        let ids = |text: &str| -> Vec<String> {
            crate::decode_str(text)
                .into_iter()
                .find(|f| f.kind.slug() == "nccl_error")
                .map(|f| f.diagnosis.fixes.iter().map(|x| x.id.clone()).collect())
                .unwrap_or_default()
        };
        for paste in [
            include_str!("../../../../fixtures/wild/1944.txt"),
            include_str!("../../../../fixtures/wild/1945.txt"),
        ] {
            let got = ids(paste);
            assert_eq!(got[0], "nccl-debug-info", "{got:?}");
            assert_eq!(got[1], "nccl-check-local-cuda-causes", "{got:?}");
            assert!(
                !got.iter().any(|id| id.starts_with("find-first-error")),
                "{got:?}"
            );
        }
        let why = |text: &str| {
            let f = crate::decode_str(text).into_iter().next().unwrap();
            let v = &f.diagnosis.verdicts[0];
            (
                v.title.clone(),
                format!(
                    "{} {}",
                    v.detail,
                    f.diagnosis
                        .fixes
                        .iter()
                        .map(|x| x.how.clone())
                        .collect::<String>()
                ),
            )
        };
        let (title, said) = why(include_str!("../../../../fixtures/wild/1944.txt"));
        assert_eq!(title, "A CUDA call failed inside NCCL on this rank");
        assert!(
            !said.contains("NCCL_CUMEM_ENABLE") && !said.contains("cuMem"),
            "{said}"
        );
        let (_, said) = why(include_str!("../../../../fixtures/wild/1945.txt"));
        assert!(said.contains("NCCL_CUMEM_ENABLE=0"), "{said}");
        // Both sides of the cuMem margin (NCCL 2.18).
        let line = |v: &str| {
            format!("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version {v}")
        };
        assert!(why(&line("2.18.1")).1.contains("cuMem"));
        assert!(!why(&line("2.17.1")).1.contains("cuMem"));
        let system = ids(include_str!("../../../../fixtures/wild/1946.txt"));
        assert_eq!(system[0], "nccl-debug-info", "{system:?}");
        assert_eq!(system[1], "nccl-shm-and-interface", "{system:?}");
        assert!(
            !system.iter().any(|id| id.starts_with("find-first-error")),
            "{system:?}"
        );
        let remote = ids("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.21.5\nncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.");
        assert_eq!(remote[0], "find-first-error-across-ranks", "{remote:?}");
    }

    /// c10d's async form names the collective (fixtures/wild/1851.txt:
    /// `WorkNCCL(SeqNum=2, OpType=ALLREDUCE, ...)`, ncclSystemError): among
    /// the first two collectives it is a setup problem, NCCL's own report
    /// first; from SeqNum 3 a system error is still this process's failed
    /// call (NCCL's report first, no search across ranks), while another
    /// error there leads with the search for a crashed rank.
    #[test]
    fn an_error_at_the_first_collectives_is_a_setup_problem() {
        let paste = include_str!("../../../../fixtures/wild/1851.txt");
        let f = crate::decode_str(paste)
            .into_iter()
            .find(|f| f.kind.slug() == "nccl_error")
            .unwrap();
        assert_eq!(f.facts["seq_num"], "2");
        assert_eq!(f.facts["op_type"], "ALLREDUCE");
        assert_eq!(f.facts["timeout_ms"], "1000000");
        assert!(f.diagnosis.verdicts[0].title.contains("setup problem"));
        assert_eq!(f.diagnosis.fixes[0].id, "nccl-debug-info");
        assert_eq!(f.diagnosis.fixes[1].id, "nccl-shm-and-interface");
        let later = paste.replace("SeqNum=2,", "SeqNum=3,");
        assert_eq!(first_fix(&later, "nccl_error"), "nccl-debug-info");
        let f = crate::decode_str(&later)
            .into_iter()
            .find(|f| f.kind.slug() == "nccl_error")
            .unwrap();
        assert!(f.diagnosis.verdicts[0].title.contains("this process"));
        let internal = later
            .replace("unhandled system error", "internal error")
            .replace("ncclSystemError", "ncclInternalError");
        assert_eq!(
            first_fix(&internal, "nccl_error"),
            "find-first-error-across-ranks"
        );
    }

    /// `unhandled system error` from one nccl-tests process driving four
    /// GPUs (fixtures/wild/2142.txt) and PyTorch's old `NCCL Error 2`
    /// (2143.txt): ncclSystemError, a failed call of this process, so
    /// NCCL_DEBUG=INFO leads, then /dev/shm and the interface, and nothing
    /// sends the reader to other ranks' logs.
    #[test]
    fn a_system_error_is_this_process_own_call() {
        for paste in [
            include_str!("../../../../fixtures/wild/2142.txt"),
            include_str!("../../../../fixtures/wild/2143.txt"),
        ] {
            let f = crate::decode_str(paste)
                .into_iter()
                .find(|f| f.kind.slug() == "nccl_error")
                .unwrap();
            let ids: Vec<_> = f.diagnosis.fixes.iter().map(|x| x.id.as_str()).collect();
            assert_eq!(ids, ["nccl-debug-info", "nccl-shm-and-interface"]);
            assert!(f.diagnosis.fixes[1].how.contains("--shm-size"));
            assert!(f.diagnosis.fixes[1].how.contains("NCCL_SOCKET_IFNAME"));
            let v = &f.diagnosis.verdicts[0];
            assert!(!v.detail.contains("rank"), "{}", v.detail);
            assert!(v.detail.contains("/dev/shm"), "{}", v.detail);
        }
    }

    /// NCCL's `Last error:` naming its shared-memory segment (a multi-node
    /// paste, fixtures/nccl_error_system_error.log) puts /dev/shm first; another last
    /// error leaves the search for the first error first.
    #[test]
    fn a_shared_memory_last_error_puts_dev_shm_first() {
        let shm = include_str!("../../../../fixtures/nccl_error_system_error.log");
        assert_eq!(first_fix(shm, "nccl_error"), "nccl-enlarge-dev-shm");
        let other = shm.replace(
            "Error while creating shared memory segment /dev/shm/nccl-KWfVyt (size 5967872)",
            "Call to ibv_reg_mr failed with error Cannot allocate memory",
        );
        assert_ne!(first_fix(&other, "nccl_error"), "nccl-enlarge-dev-shm");
    }
}
