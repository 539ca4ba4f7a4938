//! Windows endings of GPU jobs: the fail-fast exit (0xC0000409), access
//! violations (0xC0000005) and a paging file too small to map the CUDA
//! libraries.

use super::catalogue::{Cost, FixSpec};
use super::common::{
    fact, fix, verdict, FREE_HOST_MEMORY, MATCH_NATIVE_PIECES, NATIVE_STACK_TRACE,
};
use super::docs::Code;
use super::setting::{Framework, Vendor};
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Diagnosis, Finding, Fix, Verdict};
use crate::say;

/// Explains `Kind::WindowsFailFast` findings.
pub(super) struct WindowsFailFast;

impl Explain for WindowsFailFast {
    fn headline(&self, _f: &Finding) -> Said {
        say!(
            en: "The process was ended by Windows' fail-fast (0xC0000409): a native crash with no Python error",
            zh: "进程被 Windows 的 fail-fast（0xC0000409）结束：原生代码崩溃，没有 Python 报错"
        )
    }
    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict(
            Code::NativeFailFast,
            say!(
                en: "Native code stopped the process on purpose",
                zh: "原生代码主动终止了进程"
            ),
            say!(
                en: "0xC0000409 is Windows' fail-fast status: native code (the C runtime's abort(), std::terminate(), a failed check in a DLL) ended the process at once, bypassing Python, so there is no Python traceback and no error message. Despite its name (STATUS_STACK_BUFFER_OVERRUN) it rarely means a stack overrun.",
                zh: "0xC0000409 是 Windows 的 fail-fast 状态：原生代码（C 运行时的 abort()、std::terminate()、某个 DLL 里失败的检查）绕过 Python 立即结束了进程，所以既没有 Python 调用栈，也没有报错信息。虽然它的名字是 STATUS_STACK_BUFFER_OVERRUN，却很少真的是栈溢出。"
            ),
        ))
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        fail_fast_fixes(out)
    }
}

/// `torch.version.cuda` and `tf.sysconfig.get_build_info()` against the
/// installed CUDA libraries.
const MATCH_CUDA_TO_BUILD: FixSpec = FixSpec::new(
    "match-cuda-to-framework-build",
    "Match CUDA, cuDNN and the driver to your PyTorch/TensorFlow build",
    "让 CUDA、cuDNN 和驱动与你的 PyTorch/TensorFlow 构建匹配",
)
.frameworks(&[Framework::PyTorch, Framework::TensorFlow])
.vendors(&[Vendor::Nvidia]);

const RULE_OUT_NATIVE_EXHAUSTION: FixSpec = FixSpec::new(
    "rule-out-native-memory-exhaustion",
    "Rule out memory exhaustion inside native code",
    "排除原生代码里的显存或内存耗尽",
)
.cost(Cost::Look);

fn fail_fast_fixes(out: &mut Vec<Fix>) {
    out.push(fix(
        &NATIVE_STACK_TRACE,
        say!(
            en: "Run from a terminal instead of the IDE with `python -X faulthandler train.py`; open Event Viewer → Windows Logs → Application and read the 'Faulting module' of the crash (nvcuda64.dll, cudnn*.dll, ucrtbase.dll ...).",
            zh: "不要在 IDE 里，而是在终端里用 `python -X faulthandler train.py` 运行；打开事件查看器 → Windows 日志 → 应用程序，看这次崩溃的“错误模块”（Faulting module：nvcuda64.dll、cudnn*.dll、ucrtbase.dll ……）。"
        ),
    ));
    out.push(fix(
        &MATCH_CUDA_TO_BUILD,
        say!(
            en: "Compare torch.version.cuda (or tf.sysconfig.get_build_info()) with the installed toolkit/cuDNN and update the GPU driver; mixed pip/conda CUDA libraries are a common cause.",
            zh: "把 torch.version.cuda（或 tf.sysconfig.get_build_info()）和已安装的 CUDA 工具包/cuDNN 对比，并升级 GPU 驱动；pip 和 conda 的 CUDA 库混装是常见原因。"
        ),
    ));
    out.push(fix(
        &RULE_OUT_NATIVE_EXHAUSTION,
        say!(
            en: "Retry with a smaller batch or model: an allocation failure inside a native library can end in abort() instead of a Python OOM error.",
            zh: "用更小的 batch 或模型重试：原生库里的分配失败可能以 abort() 结束，而不是抛出 Python 的 OOM 错误。"
        ),
    ));
}

/// Whether Visual Studio's debugger reported the access violation (it
/// stopped the process there; nothing has ended it yet).
fn in_debugger(f: &Finding) -> bool {
    fact(f, fact::REPORTED_BY) == Some("Visual Studio debugger")
}

/// Explains `Kind::WindowsAccessViolation` findings.
pub(super) struct WindowsAccessViolation;

/// `num_workers`: PyTorch's DataLoader.
const RULE_OUT_WORKERS: FixSpec = FixSpec::new(
    "rule-out-dataloader-workers",
    "Rule out DataLoader workers",
    "排除 DataLoader worker 的影响",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Look);

impl Explain for WindowsAccessViolation {
    fn headline(&self, f: &Finding) -> Said {
        if in_debugger(f) {
            return say!(
                en: "The debugger stopped the process on an access violation (0xC0000005): native code read or wrote an address it has no access to",
                zh: "调试器因访问冲突（0xC0000005）停住了进程：原生代码读写了它无权访问的地址"
            );
        }
        say!(
            en: "The process was ended by an access violation (0xC0000005): a native crash with no Python error",
            zh: "进程因访问冲突（0xC0000005）被结束：原生代码崩溃，没有 Python 报错"
        )
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        // Visual Studio's debugger stops on the same status before Windows
        // ends the process: the same verdict, told as the debugger saw it.
        let detail = if in_debugger(f) {
            say!(
                en: "Visual Studio's `Exception thrown: read access violation` (or `write`) is its debugger stopping on 0xC0000005 (STATUS_ACCESS_VIOLATION): native code read or wrote an address it had no access to, most often through a null or freed pointer (the text after it names the pointer). Without the debugger the process would end with this status. Memory corrupted by another thread (a library used from several threads where it does not allow it) ends the same way. It is not an out-of-memory message.",
                zh: "Visual Studio 的 `Exception thrown: read access violation`（或 `write`）是它的调试器停在了 0xC0000005（STATUS_ACCESS_VIOLATION）上：原生代码读写了它无权访问的地址，最常见的是通过空指针或已释放的指针（它后面的文字写着是哪个指针）。没有调试器时，进程会以这个状态结束。被另一个线程破坏的内存（在不允许多线程的地方从多个线程调用了某个库）也会这样结束。它不是显存或内存不足的报错。"
            )
        } else {
            say!(
                en: "0xC0000005 (STATUS_ACCESS_VIOLATION) means native code read or wrote an address it had no access to and Windows ended the process, so Python printed no traceback. In GPU jobs the usual suspects are a CUDA extension or DLL built for another PyTorch/CUDA version, mixed CUDA/cuDNN DLLs found on PATH, DataLoader worker processes, or a driver crash. It is not an out-of-memory message, although a native allocation failure that goes unchecked can end this way.",
                zh: "0xC0000005（STATUS_ACCESS_VIOLATION）表示原生代码读写了它无权访问的地址，Windows 结束了进程，所以 Python 没有打印调用栈。在 GPU 任务里，常见的嫌疑是为别的 PyTorch/CUDA 版本编译的 CUDA 扩展或 DLL、PATH 上混杂的 CUDA/cuDNN DLL、DataLoader 的 worker 进程，或者驱动崩溃。它不是显存或内存不足的报错，不过原生代码里没被检查的分配失败也可能以这种方式结束。"
            )
        };
        out.push(verdict(
            Code::NativeAccessViolation,
            say!(
                en: "Native code accessed memory it does not own",
                zh: "原生代码访问了不属于它的内存"
            ),
            detail,
        ))
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        if in_debugger(f) {
            out.push(fix(
                &NATIVE_STACK_TRACE,
                say!(
                    en: "Read the debugger's Call Stack window where it stopped: the top frames name the module and function that made the access, and the pointer the message names tells what was null or freed. If the library is called from several threads at once, try one thread to rule out concurrent use.",
                    zh: "在调试器停下的地方看调用堆栈窗口：最上面的几帧写着做出这次访问的模块和函数，报错里点名的指针说明了是什么为空或已被释放。如果多个线程同时调用这个库，先改成单线程试试，排除并发使用的问题。"
                ),
            ));
            return;
        }
        out.push(fix(
            &NATIVE_STACK_TRACE,
            say!(
                en: "Run from a terminal with `python -X faulthandler train.py` (it prints the Python stack on the crash); Event Viewer → Windows Logs → Application names the faulting module (nvcuda64.dll, cudnn*.dll, an extension's .pyd).",
                zh: "在终端里用 `python -X faulthandler train.py` 运行（崩溃时它会打印 Python 调用栈）；事件查看器 → Windows 日志 → 应用程序里写着出错的模块（nvcuda64.dll、cudnn*.dll、某个扩展的 .pyd）。"
            ),
        ));
        out.push(fix(
            &RULE_OUT_WORKERS,
            say!(
                en: "Try num_workers=0: on Windows each worker is a separate process, and crashes in them end this way.",
                zh: "试试 num_workers=0：在 Windows 上每个 worker 都是单独的进程，它们里面的崩溃就是这样结束的。"
            ),
        ));
        out.push(fix(
            &MATCH_NATIVE_PIECES,
            say!(
                en: "Reinstall PyTorch and every CUDA extension from wheels built for the same CUDA version, remove other CUDA/cuDNN DLL folders from PATH, update the GPU driver.",
                zh: "用同一个 CUDA 版本编译的 wheel 重装 PyTorch 和所有 CUDA 扩展，把其他 CUDA/cuDNN 的 DLL 目录从 PATH 里去掉，升级 GPU 驱动。"
            ),
        ));
    }
}

/// Explains `Kind::WindowsPagingFile` findings.
pub(super) struct WindowsPagingFile;

/// The paging file: Windows' commit limit.
const RAISE_PAGING_FILE: FixSpec = FixSpec::new(
    "raise-windows-paging-file",
    "Raise the Windows paging file",
    "调大 Windows 页面文件",
)
.sources(&["Microsoft documentation: How to determine the appropriate page file size"]);

/// Fewer processes that each import torch.
const FEWER_WORKERS: FixSpec = FixSpec::new(
    "fewer-dataloader-workers",
    "Use fewer DataLoader workers",
    "减少 DataLoader worker",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Speed);

impl Explain for WindowsPagingFile {
    fn headline(&self, f: &Finding) -> Said {
        match fact(f, fact::DLL_NAME) {
            Some(dll) => say!(
                en: "Windows ran out of virtual memory (paging file too small) while loading {dll}: host memory, not GPU memory",
                zh: "Windows 在加载 {dll} 时用完了虚拟内存（页面文件太小）：是主机内存，不是显存",
                dll = dll
            ),
            None => say!(
                en: "Windows ran out of virtual memory (paging file too small): host memory, not GPU memory",
                zh: "Windows 的虚拟内存用完了（页面文件太小）：是主机内存，不是显存"
            ),
        }
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        let detail = match fact(f, fact::DLL_NAME) {
            Some(dll) => say!(
                en: "Windows refused to commit more virtual memory while loading {dll}. Every process that imports torch maps the CUDA and cuDNN DLLs, several GB of commit charge, and on Windows every DataLoader worker is a new process that imports torch again. When RAM plus the paging file cannot cover the total, loading fails with WinError 1455. The GPU's memory is not involved.",
                zh: "Windows 在加载 {dll} 时拒绝再提交虚拟内存。每个 import torch 的进程都会映射 CUDA 和 cuDNN 的 DLL，占去好几 GB 的提交量（commit charge）；而在 Windows 上，每个 DataLoader worker 都是重新 import torch 的新进程。内存加页面文件不够覆盖这些总量时，加载就以 WinError 1455 失败。这与 GPU 的显存无关。",
                dll = dll
            ),
            None => say!(
                en: "Windows refused to commit more virtual memory while loading a DLL. Every process that imports torch maps the CUDA and cuDNN DLLs, several GB of commit charge, and on Windows every DataLoader worker is a new process that imports torch again. When RAM plus the paging file cannot cover the total, loading fails with WinError 1455. The GPU's memory is not involved.",
                zh: "Windows 在加载一个 DLL 时拒绝再提交虚拟内存。每个 import torch 的进程都会映射 CUDA 和 cuDNN 的 DLL，占去好几 GB 的提交量（commit charge）；而在 Windows 上，每个 DataLoader worker 都是重新 import torch 的新进程。内存加页面文件不够覆盖这些总量时，加载就以 WinError 1455 失败。这与 GPU 的显存无关。"
            ),
        };
        out.push(verdict(
            Code::PagingFileTooSmall,
            say!(
                en: "Windows could not commit virtual memory: host memory, not GPU memory",
                zh: "Windows 无法提交虚拟内存：是主机内存，不是显存"
            ),
            detail,
        ))
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix(
            &RAISE_PAGING_FILE,
            say!(
                en: "System Properties → Advanced → Performance Settings → Advanced → Virtual memory → Change: set \"System managed size\" or a custom maximum of tens of GB on the drive with space, then restart.",
                zh: "系统属性 → 高级 → 性能设置 → 高级 → 虚拟内存 → 更改：选“系统管理的大小”，或在有空间的磁盘上设一个几十 GB 的自定义最大值，然后重启。"
            ),
        ));
        out.push(fix(
            &FEWER_WORKERS,
            say!(
                en: "Each worker imports torch and maps the CUDA DLLs again: num_workers=0 to 2, or persistent_workers=True so they start once.",
                zh: "每个 worker 都会重新 import torch，再映射一遍 CUDA DLL：把 num_workers 设为 0 到 2，或设 persistent_workers=True 让它们只启动一次。"
            ),
        ));
        out.push(fix(
            &FREE_HOST_MEMORY,
            say!(
                en: "Close other programs; add RAM if it keeps happening.",
                zh: "关掉其他程序；如果一直出现，就加内存。"
            ),
        ));
    }
}

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    MATCH_CUDA_TO_BUILD,
    RULE_OUT_NATIVE_EXHAUSTION,
    RULE_OUT_WORKERS,
    RAISE_PAGING_FILE,
    FEWER_WORKERS,
];
