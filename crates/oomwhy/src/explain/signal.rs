//! Deaths by a fatal signal other than SIGKILL: DataLoader workers (a bus
//! error is `/dev/shm` running out) and the wrapped command of `oomwhy run`.

use super::catalogue::{Cost, FixSpec, Shown};
use super::common::{
    fact, fix, verdict, FREE_HOST_MEMORY, MATCH_NATIVE_PIECES, NATIVE_STACK_TRACE,
};
use super::docs::Code;
use super::setting::Framework;
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};
use crate::say;

/// Explains `Kind::FatalSignal` findings.
pub(super) struct FatalSignal;

/// Whether the finding is shared memory running out rather than a crash.
fn shm_exhausted(f: &Finding) -> bool {
    fact(f, fact::MEMORY).is_some()
}

fn from_worker(f: &Finding) -> bool {
    f.era == Some(Era::Dataloader)
}

fn signal(f: &Finding) -> &str {
    fact(f, fact::SIGNAL).unwrap_or("a fatal signal")
}

/// The signal as the message names it (`SIGBUS (7)`), in both languages.
fn signal_said(f: &Finding) -> Said {
    match fact(f, fact::SIGNAL) {
        Some(signal) => say!(en: "{signal}", zh: "{signal}", signal = signal),
        None => say!(en: "a fatal signal", zh: "一个致命信号"),
    }
}

/// The signal's name without its number: `SIGABRT` of `SIGABRT (6)`.
fn signal_name(f: &Finding) -> &str {
    signal(f).split(" (").next().unwrap_or_default()
}

impl Explain for FatalSignal {
    fn headline(&self, f: &Finding) -> Said {
        match (from_worker(f), shm_exhausted(f)) {
            (true, true) => say!(
                en: "A DataLoader worker ran out of shared memory (/dev/shm) and died of a bus error",
                zh: "一个 DataLoader worker 用完了共享内存（/dev/shm），因总线错误而退出"
            ),
            (true, false) => say!(
                en: "A DataLoader worker crashed in native code ({signal})",
                zh: "一个 DataLoader worker 在原生代码里崩溃了（{signal}）",
                signal = signal_name(f)
            ),
            (false, _) => match (fact(f, fact::NTSTATUS), fact(f, fact::SIGNAL)) {
                (Some(status), _) => say!(
                    en: "The command ended with the Windows crash status {status}",
                    zh: "命令以 Windows 崩溃状态 {status} 结束",
                    status = status
                ),
                (None, Some(signal)) => say!(
                    en: "The command was killed by {signal}",
                    zh: "命令被 {signal} 终止",
                    signal = signal
                ),
                (None, None) => say!(
                    en: "The command was killed by a fatal signal",
                    zh: "命令被一个致命信号终止"
                ),
            },
        }
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        if fact(f, fact::NTSTATUS) == Some("STATUS_NO_MEMORY") {
            out.push(verdict(
                Code::HostRamExhausted,
                say!(
                    en: "The machine's memory ran out (host memory, not GPU memory)",
                    zh: "机器的内存用完了（是主机内存，不是显存）"
                ),
                say!(
                    en: "0xC0000017 (STATUS_NO_MEMORY) means Windows could not give the process more virtual memory: RAM and the paging file were used up. The GPU's memory is not involved.",
                    zh: "0xC0000017（STATUS_NO_MEMORY）表示 Windows 没法再给这个进程更多的虚拟内存：内存和页面文件都用完了。这与 GPU 的显存无关。"
                ),
            ));
        } else if from_worker(f) && shm_exhausted(f) {
            out.push(verdict(
                Code::DevShmFull,
                say!(
                    en: "/dev/shm is too small for the DataLoader's workers",
                    zh: "/dev/shm 太小，容不下 DataLoader 的 worker"
                ),
                say!(
                    en: "DataLoader workers hand every batch to the main process through shared memory, files in /dev/shm (a RAM-backed tmpfs). When it is full, a worker's write into it faults with SIGBUS. Docker gives a container only 64 MB of /dev/shm unless told otherwise, which a few image batches exceed. This is host memory, not GPU memory; when the container's own memory limit is hit at the same time, the worker may be killed (SIGKILL) instead.",
                    zh: "DataLoader 的 worker 通过共享内存把每个 batch 交给主进程，也就是 /dev/shm 里的文件（以内存为后端的 tmpfs）。它写满之后，worker 再往里写就会触发 SIGBUS。除非另行指定，Docker 只给容器 64 MB 的 /dev/shm，几个图像 batch 就能超过。这是主机内存，不是显存；如果同时碰到容器自己的内存上限，worker 也可能被直接杀掉（SIGKILL）。"
                ),
            ));
        } else {
            let sig = signal_said(f);
            // The signal's name and the process differ by language, so the
            // sentence is put together here rather than by `say!`.
            let stopped = if from_worker(f) {
                Said {
                    en: format!("{} stopped a DataLoader worker process: native code (a C/C++ extension, an image or video decoder, a CUDA library, or memory corrupted earlier) faulted or aborted, so Python printed no traceback for the cause.", sig.en),
                    zh: format!("{} 终止了一个 DataLoader worker 进程：原生代码（C/C++ 扩展、图像或视频解码器、CUDA 库，或早先已被破坏的内存）出错或主动中止，所以 Python 没有打印出原因的调用栈。", sig.zh),
                }
            } else {
                Said {
                    en: format!("{} stopped the command: native code (a C/C++ extension, an image or video decoder, a CUDA library, or memory corrupted earlier) faulted or aborted, so Python printed no traceback for the cause.", sig.en),
                    zh: format!("{} 终止了命令：原生代码（C/C++ 扩展、图像或视频解码器、CUDA 库，或早先已被破坏的内存）出错或主动中止，所以 Python 没有打印出原因的调用栈。", sig.zh),
                }
            };
            let bus = if signal(f).starts_with("SIGBUS") {
                say!(
                    en: "A bus error in a job that uses DataLoader workers is usually /dev/shm running out.",
                    zh: "用了 DataLoader worker 的任务出现总线错误，通常是 /dev/shm 用完了。"
                )
            } else {
                Said::default()
            };
            out.push(verdict(
                Code::NativeCrash,
                say!(en: "Native code crashed", zh: "原生代码崩溃了"),
                stopped.then(bus).then(say!(
                    en: "It is not an out-of-memory error by itself.",
                    zh: "它本身并不是显存或内存不足的错误。"
                )),
            ));
        }
    }

    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        if fact(f, fact::NTSTATUS) == Some("STATUS_NO_MEMORY") {
            out.push(fix(
                &FREE_HOST_MEMORY,
                say!(
                    en: "Use fewer DataLoader workers, load the dataset lazily instead of into RAM, close other programs, or raise the Windows paging file.",
                    zh: "减少 DataLoader worker，按需加载数据集而不是整个读进内存，关掉其他程序，或者调大 Windows 页面文件。"
                ),
            ));
            return;
        }
        if from_worker(f) && shm_exhausted(f) {
            if in_container(f) {
                out.push(fix(
                    &CONTAINER_SHARED_MEMORY,
                    say!(
                        en: "Docker: `docker run --shm-size=16g ...` (or `--ipc=host`); docker compose: `shm_size: 16gb`; Kubernetes: mount an `emptyDir` with `medium: Memory` at /dev/shm. Check the size with `df -h /dev/shm`.",
                        zh: "Docker：`docker run --shm-size=16g ...`（或 `--ipc=host`）；docker compose：`shm_size: 16gb`；Kubernetes：在 /dev/shm 挂载一个 `medium: Memory` 的 `emptyDir`。用 `df -h /dev/shm` 查看大小。"
                    ),
                ));
            } else {
                out.push(fix(
                    &MORE_SHARED_MEMORY,
                    say!(
                        en: "Check the size with `df -h /dev/shm`. On the host, enlarge it (`sudo mount -o remount,size=16G /dev/shm`). In a container: `docker run --shm-size=16g` (or `--ipc=host`); Kubernetes: an `emptyDir` with `medium: Memory` at /dev/shm. PyTorch's `file_system` sharing strategy does not help here: it still keeps each tensor in a shared-memory segment under /dev/shm (it only saves file descriptors).",
                        zh: "用 `df -h /dev/shm` 查看大小。在主机上把它调大（`sudo mount -o remount,size=16G /dev/shm`）。在容器里：`docker run --shm-size=16g`（或 `--ipc=host`）；Kubernetes：在 /dev/shm 挂载一个 `medium: Memory` 的 `emptyDir`。PyTorch 的 `file_system` 共享策略在这里没用：它仍然把每个张量放在 /dev/shm 下的共享内存段里（它省的只是文件描述符）。"
                    ),
                ));
            }
            out.push(fix(
                &LESS_IN_FLIGHT,
                say!(
                    en: "Lower num_workers, the batch size or prefetch_factor; num_workers=0 confirms the diagnosis (no shared memory is used then). Have the workers return compact tensors (uint8 images, converted to float on the GPU, rather than float32).",
                    zh: "调低 num_workers、batch size 或 prefetch_factor；num_workers=0 可以确认诊断（这时不用共享内存）。让 worker 返回紧凑的张量（uint8 图像，到 GPU 上再转成浮点，而不是 float32）。"
                ),
            ));
            return;
        }
        if from_worker(f) {
            out.push(fix(
                &REAL_ERROR_WITHOUT_WORKERS,
                say!(
                    en: "Run the loader in the main process (num_workers=0): the crash then happens there, where `python -X faulthandler` prints the Python stack of the faulting call.",
                    zh: "让数据加载在主进程里进行（num_workers=0）：崩溃就会发生在主进程里，`python -X faulthandler` 能在那里打印出出错调用的 Python 调用栈。"
                ),
            ));
            out.push(fix(
                &THREADS_IN_FORKED_WORKERS,
                say!(
                    en: "Libraries that start threads (OpenCV, some image and audio decoders) can crash in forked workers: call cv2.setNumThreads(0) in the dataset, or use multiprocessing_context=\"spawn\".",
                    zh: "会自己起线程的库（OpenCV、一些图像和音频解码器）在 fork 出来的 worker 里可能崩溃：在 dataset 里调用 cv2.setNumThreads(0)，或者用 multiprocessing_context=\"spawn\"。"
                ),
            ));
        } else {
            out.push(fix(
                &NATIVE_STACK_TRACE,
                say!(
                    en: "Run with `python -X faulthandler` (prints the Python stack on SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL), or under gdb: `gdb -ex run --args python train.py`, then `bt`.",
                    zh: "用 `python -X faulthandler` 运行（遇到 SIGSEGV、SIGBUS、SIGFPE、SIGABRT、SIGILL 时会打印 Python 调用栈），或在 gdb 下运行：`gdb -ex run --args python train.py`，崩溃后输入 `bt`。"
                ),
            ));
        }
        out.push(fix(
            &MATCH_NATIVE_PIECES,
            say!(
                en: "Reinstall PyTorch and every compiled extension for the same PyTorch and CUDA versions; update the GPU driver.",
                zh: "按同一个 PyTorch 和 CUDA 版本重装 PyTorch 和所有编译过的扩展；升级 GPU 驱动。"
            ),
        ));
    }
}

/// Words a paste shows a container with (Docker, compose, Kubernetes,
/// Singularity/Apptainer): only then is the container's shared memory the
/// first route.
const CONTAINER_MARKS: &[&str] = &[
    "docker",
    "container",
    "kubernetes",
    "kubectl",
    "k8s",
    "--shm-size",
    "shm_size",
    "singularity",
    "apptainer",
    "podman",
];

/// Whether the finding's message shows it ran in a container.
fn in_container(f: &Finding) -> bool {
    let text = f.text.to_ascii_lowercase();
    CONTAINER_MARKS.iter().any(|mark| text.contains(mark))
}

/// The host's /dev/shm, and a container's shared memory last. PyTorch's
/// `file_system` sharing strategy is no way out: its segments are still
/// `shm_open`'s, in /dev/shm.
const MORE_SHARED_MEMORY: FixSpec = FixSpec::new(
    "more-shared-memory",
    "Give the workers more shared memory",
    "给 worker 更多共享内存",
)
.frameworks(&[Framework::PyTorch])
.sources(&[
    "PyTorch documentation: torch.multiprocessing (sharing strategies)",
    "Docker documentation: docker run --shm-size",
])
.not_first_when(&[Shown::SharedMemoryFixed]);

/// `--shm-size`, `shm_size`, an `emptyDir` in memory.
const CONTAINER_SHARED_MEMORY: FixSpec = FixSpec::new(
    "container-shared-memory",
    "Give the container more shared memory",
    "给容器更多共享内存",
)
.sources(&["Docker documentation: docker run --shm-size"])
.not_first_when(&[Shown::SharedMemoryFixed]);

/// `num_workers`, `prefetch_factor`: PyTorch's DataLoader.
const LESS_IN_FLIGHT: FixSpec = FixSpec::new(
    "less-in-flight-between-workers",
    "Keep less in flight between workers and the main process",
    "减少 worker 和主进程之间在途的数据",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Speed);

const REAL_ERROR_WITHOUT_WORKERS: FixSpec = FixSpec::new(
    "num-workers-zero-for-real-error",
    "Get the real error with num_workers=0",
    "用 num_workers=0 拿到真正的报错",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Look)
.applied_when(&["num_workers=0"]);

/// `multiprocessing_context`: PyTorch's DataLoader.
const THREADS_IN_FORKED_WORKERS: FixSpec = FixSpec::new(
    "threads-in-forked-workers",
    "Suspect threads inside forked workers",
    "怀疑 fork 出来的 worker 里的线程",
)
.frameworks(&[Framework::PyTorch]);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    CONTAINER_SHARED_MEMORY,
    MORE_SHARED_MEMORY,
    LESS_IN_FLIGHT,
    REAL_ERROR_WITHOUT_WORKERS,
    THREADS_IN_FORKED_WORKERS,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A DataLoader worker's bus error with no container in the paste
    /// (fixtures/wild/2243.txt) gets the host's route first (/dev/shm's
    /// size); the same finding whose text names Docker
    /// gets the container's shared memory.
    #[test]
    fn shared_memory_advice_assumes_no_container_unless_one_shows() {
        let paste = include_str!("../../../../fixtures/wild/2243.txt");
        let mut finding = crate::decode_str(paste)
            .into_iter()
            .find(|f| f.kind.slug() == "fatal_signal")
            .expect("the fixture has a bus error");
        assert!(!in_container(&finding));
        assert_eq!(
            finding.diagnosis.fixes.first().map(|x| x.id.as_str()),
            Some(MORE_SHARED_MEMORY.id)
        );
        finding.text.push_str("\ndocker run --gpus all train");
        assert!(in_container(&finding));
    }
}
