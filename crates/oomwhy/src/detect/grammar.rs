//! The general grammar: a failure that no family knows, from any stack.
//! Last in [`super::FAMILIES`], after the allow-list in [`super::generic`].
//!
//! A finding needs three parts, all read from the message itself:
//! 1. A **statement** of the failure: memory ran out (`out of memory`,
//!    `insufficient memory`, `is more than total mem size`, `greater than
//!    the maximum allowed buffer size`, `RESOURCE_EXHAUSTED`, `显存不足`, ...),
//!    an allocation failed (`failed to allocate`, `bm_alloc_gmem failed`,
//!    `Call rtMalloc fail`, `enforce allocating <= available failed`), or a
//!    fatal GPU failure (a stuck collective watchdog, a lost device handle,
//!    a segmentation fault reported by the shell).
//! 2. **Evidence** that a program reported it: an exception class
//!    (`RuntimeError:`, `EnforceNotMet:`, `Memory_Allocation_Failure(EL0004):`),
//!    a log level (`[ERROR]`, `[error]`, `E `, `FATAL`, `CRITICAL`), `Error:`,
//!    `what():`, a source location (`[mindspore/ccsrc/.../arena.cc:250]`,
//!    `[file.cc:12]`), or a statement whose subject is the system (`System
//!    is out of GPU and shared host memory`). Words alone are not evidence:
//!    documentation, source code and tests say "out of memory" all the time.
//! 3. The **resource**, from the words around it: host (`host memory`,
//!    `pinned`, `cudaHostAlloc`, `MemoryError`, `RAM`) or device (anything
//!    else: GPU, NPU, HBM, VRAM, a device allocator).
//!
//! A statement that only mentions (quoted in code or prose, a comment, a
//! diff line, a template with placeholders such as `%s`, `{}` or `XXX`,
//! prose in the first person) is never a finding. The finding names its
//! reporter (exception class, logger tag, library path) and every size and
//! device the message states.

use super::text::{collapse_repeats, exception_name};
use super::{is_mention, Family, Message};
use crate::constant_regex;
use crate::record::{fact, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

/// What a statement says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Statement {
    /// Memory ran out (or a request exceeded what exists).
    Exhausted,
    /// An allocation failed; why is not stated.
    AllocFailed,
    /// PyTorch's allocator sentence (`Tried to allocate N. GPU 0 has a total
    /// capacity of ...`) whose headline is unreadable (a garbled paste).
    AllocatorSentence,
    /// A collective's watchdog got stuck (a hang on a GPU API call).
    WatchdogStuck,
    /// The driver cannot reach a device it had.
    DeviceLost,
    /// The shell reports the process died of SIGSEGV.
    Segfault,
    /// A launcher reports a child exited with -9 (SIGKILL).
    Sigkill,
    /// A notebook's traceback header names an out-of-memory class
    /// (`OutOfMemoryError    Traceback (most recent call last)`); the
    /// message itself may be cut from the paste.
    NotebookHeader,
    /// The poster says in their own words, in the first person singular,
    /// that a named device ran out of memory (`I got a "cuda out of
    /// memory" after 8784 iterations`, `I'm experiencing an XPU out of
    /// memory error`): no message pasted, so the weakest statement.
    ProseReport,
    /// The same first-person report of the process being killed (`I get
    /// the error "killed"`, `I get a "Killed" message`, `I get a error :
    /// killed by OOM killer`): the shell's word for SIGKILL, what the
    /// out-of-memory killer sends.
    ProseKilled,
    /// A GPU runtime or driver reports a fault that is not memory
    /// exhaustion: ROCr's `HSA_STATUS_ERROR_*` abort, Jetson's nvgpu
    /// `[MMU FAULT]`, Windows' TDR (`Display driver stopped responding and
    /// has recovered`).
    RuntimeFault,
}

struct Patterns {
    statements: Vec<(Statement, Regex)>,
    evidence: Regex,
    self_evident: Regex,
    conditional: Regex,
    glued_comment: Regex,
    system_subject: Regex,
    template: Regex,
    prose: Regex,
    comment: Regex,
    host: Regex,
    device_words: Regex,
    device_allocator: Regex,
    ffmpeg_context: Regex,
    system_memory: Regex,
    reporter_path: Regex,
    reporter_tag: Regex,
    logger_name: Regex,
    bytes_pairs: Vec<(&'static str, Regex)>,
    hex_size: Regex,
    dec_size: Regex,
    sized: Regex,
    sentence_total: Regex,
    sentence_free: Regex,
    xla_sized: Regex,
    xla_free: Regex,
    device_id: Regex,
    request_line: Regex,
    enforce: Regex,
    watchdog_seconds: Regex,
    bad_alloc: Regex,
    ggml_buffer: Regex,
    numpy_size: Regex,
    xla_reserved: Regex,
    xla_reservable: Regex,
    xla_space: Regex,
    hsa_node: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = constant_regex;
        Patterns {
            statements: vec![
                (
                    Statement::Exhausted,
                    re(concat!(
                        r"(?i:\bout of (?:(?:gpu|device|video|vram|hbm|npu|shared|host|system)\b[\w ]{0,30}?)?memory\b)",
                        r"|(?i:\b(?:insufficient|not enough) (?:\w+ ){0,2}memory\b|\bmemory is insufficient\b)",
                        // The same said of the card's memory by its name
                        // (exllamav2's loader: `RuntimeError: Insufficient
                        // VRAM for model and cache`).
                        r"|(?i:\b(?:insufficient|not enough) VRAM\b)",
                        // A status, not a class name: `ResourceExhaustedError:`
                        // heads a message whose statement comes after it.
                        r"|\bRESOURCE_EXHAUSTED\b",
                        // Python's `MemoryError` and the classes derived
                        // from it (NumPy's `_ArrayMemoryError: Unable to
                        // allocate 3.2 GiB for an array ...`).
                        r"|\bMemoryError\b|\b_ArrayMemoryError\b",
                        // TensorFlow's status text before the codes were
                        // written in capitals (`Resource exhausted: `).
                        r"|\bResource exhausted: ",
                        // An exception whose class says memory ran out
                        // (spark-rapids' `SplitAndRetryOOM: `, `GpuRetryOOM`,
                        // `CpuRetryOOM`; `...OutOfMemoryError: `, .NET's
                        // `System.OutOfMemoryException: `).
                        r"|\b[A-Z]\w*OOM(?::\s|\s*$)|\b\w*OutOf\w*Memory\w*: \S",
                        // OpenCL's status names that state memory ran out
                        // (oneDNN's `errcode -6,CL_OUT_OF_HOST_MEMORY,`).
                        r"|\bCL_OUT_OF_HOST_MEMORY\b",
                        r"|\bis more than total mem size\b",
                        // RMM's exception (`std::bad_alloc: out_of_memory: RMM
                        // failure at: ...`), NVENC's status text (`unable to
                        // allocate enough memory`), Ollama's refusal to load
                        // (`model requires more system memory (X) than is
                        // available (Y)`), Ray's memory monitor (`N Workers
                        // (tasks / actors) killed due to memory pressure (OOM)`).
                        r"|\bout_of_memory\b|(?i:\b(?:unable|failed) to allocate enough memory\b)",
                        r"|\brequires more system memory\b|\bkilled due to memory pressure \(OOM\)",
                        // Ray's worker exit detail (`Task was killed due to
                        // the node running low on memory.`).
                        r"|\bkilled due to the node running low on memory\b",
                        // Google Colab's dialog when its runtime ran out of
                        // host RAM (`Your session crashed after using all
                        // available RAM.`).
                        r"|\bYour session crashed after using all available RAM\b",
                        // An API's out-of-memory constant that no status table
                        // holds (`UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY`).
                        r"|\b[A-Z][A-Z0-9_]*_ERR(?:OR)?_OUT_OF_(?:DEVICE_|HOST_|GPU_)?MEMORY\b",
                        r"|\bgreater than the maximum allowed buffer size\b",
                        // A GPU library's refusal in its own words: MIOpen's
                        // `Memory not available to allocate buffer: N`, an
                        // allocator's limit (MLX's `[metal::malloc] Resource
                        // limit (N) exceeded`), Vulkan-Hpp's exception classes
                        // for VK_ERROR_OUT_OF_DEVICE_MEMORY and _HOST_MEMORY
                        // (`vk::OutOfDeviceMemoryError`), Dask's nanny
                        // (`Worker exceeded 95% memory budget. Restarting`),
                        // CANN's memory allocation failure code (`EL0004:
                        // ... Failed to allocate memory.`).
                        r"|\bMemory not available to allocate\b|\[\w+::malloc\] Resource limit \(\d+\) exceeded",
                        r"|\bvk::OutOf(?:Device|Host)MemoryError\b|\bWorker exceeded \d+% memory budget\b",
                        // Its name for the code, as CANN's Python layers
                        // raise it (`Memory_Allocation_Failure(EL0004):`).
                        r"|\bEL0004: |\bMemory_Allocation_Failure\(EL0004\)",
                        // Paddle's allocator exception: every allocator throws
                        // it as ResourceExhausted (`Out of memory error on GPU
                        // N`), so the class alone states it when libstdc++
                        // quotes it with an empty what().
                        r"|\bpaddle::memory::allocation::BadAlloc\b",
                        r"|显存不足|内存不足|显存溢出|内存溢出|显存已满",
                    )),
                ),
                (
                    Statement::AllocatorSentence,
                    re(r"\bTried to allocate \d+(?:\.\d+)? ?[KMGT]iB\.? ?GPU \d+ has a total capac"),
                ),
                (
                    Statement::AllocFailed,
                    re(concat!(
                        r"(?i:\b(?:failed|unable|cannot|can't|could not) to allocate\b|\bcannot allocate\b)",
                        r"|\b\w*(?i:alloc)\w* (?i:fail(?:ed|ure)?)\b",
                        r"|\bAllocation failed\b|\ballocation failed\b|\bMemory_Allocation_Failure\b",
                        r"|\bAlloc Device Memory Failed\b",
                        // A GPU library's text for its allocation status
                        // (managedCuda's `NPPException`: `Device allocation
                        // error` when nppiMalloc returns no pointer; `GPU
                        // memory allocation error`).
                        r"|\b(?i:device|gpu|device memory|gpu memory) allocation error\b",
                        // A C++ `operator new` that threw: the allocation
                        // failed, whether for want of memory (host or a
                        // device allocator's) or for an impossible size.
                        r"|\bstd::bad_alloc\b",
                        // ggml's backend buffer for a model's weights or
                        // context (`unable to allocate CUDA0 buffer`,
                        // `Vulkan0`, `ROCm0`, `Metal`, `SYCL0`).
                        r"|\bunable to allocate [A-Za-z]+\d* buffer\b",
                        r"|\b\w+ <= available\w* failed\b",
                        // WSL2's GPU paravirtualisation driver: an ioctl that
                        // failed with -ENOMEM (`dxgk: dxgkio_make_resident:
                        // Ioctl failed: -12`); OpenVINO's GPU plugin giving up
                        // on OpenCL's CL_OUT_OF_RESOURCES.
                        r"|\bdxgk: \w+: Ioctl failed: -12\b",
                        r"|\bGPU plugin can't finish correctly\b.{0,300}\bCL_OUT_OF_RESOURCES\b",
                    )),
                ),
                (
                    Statement::RuntimeFault,
                    re(concat!(
                        r"\bHSA_STATUS_ERROR_[A-Z_]+\b",
                        // nvgpu's channel error notifier 31 is its MMU fault.
                        r"|\[MMU FAULT\]|\bgenerated a mmu fault\b|\berror notifier set to 31\b",
                        // Windows' TDR (Event 4101, source Display), in the
                        // event's words or as people title it (`... and was
                        // recovered`).
                        r"|\bDisplay driver (?:\w+ )?stopped responding and (?:has (?:successfully )?|was )recovered\b",
                        // ROCr's fault handler: the AMD counterpart of
                        // CUDA's illegal address (a bad GPU pointer).
                        r"|\bMemory access fault by GPU node-\d+\b",
                        // The NVIDIA kernel driver could not bring up the
                        // GPU (dmesg's `NVRM: ... RmInitAdapter failed!`).
                        r"|\bRmInitAdapter failed\b|\brm_init_adapter failed\b|\bCannot attach gpu\b",
                        // Intel's Xe kernel driver: the GuC reported a
                        // catastrophic memory error for an engine's context
                        // (`Engine memory CAT error [18]: class=bcs, ...`;
                        // later kernels write `cat error: engine_class=`).
                        r"|\bEngine memory (?i:cat) error\b",
                        // Vulkan-Hpp's exception for VK_ERROR_DEVICE_LOST
                        // (ggml's Vulkan backend lets it end the process);
                        // MindSpore could not bring up the Ascend device's
                        // runtime (its `Ascend Error Message` says why).
                        r"|\bvk::DeviceLostError\b|\bAscend kernel runtime initialization failed\b",
                        // Intel's compute runtime (NEO, under Level Zero and
                        // OpenCL) stopping at a check it cannot recover from
                        // (`UNRECOVERABLE_IF`: `Abort was called at N line in
                        // file:` then the source path); the CUDA driver
                        // writing a GPU core dump, which it does only for a
                        // GPU exception (CUDA_ENABLE_COREDUMP_ON_EXCEPTION).
                        r"|\bAbort was called at \d+ line in file\b|\bStarting GPU coredump generation\b",
                    )),
                ),
                (
                    Statement::NotebookHeader,
                    re(r"^\s*((?:[A-Za-z_]\w*\.)*(?:\w*OutOfMemoryError|MemoryError|ResourceExhaustedError))\s{2,}Traceback \(most recent call last\)"),
                ),
                (
                    Statement::WatchdogStuck,
                    re(r"\bwatchdog got stuck for \d+ seconds"),
                ),
                (
                    Statement::DeviceLost,
                    re(r"\bUnable to determine the device handle for GPU\s?[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d: Unknown Error"),
                ),
                (
                    Statement::Segfault,
                    // Also Go's `os/exec` naming the child's signal (ollama's
                    // `llama runner process has terminated: signal:
                    // segmentation fault (core dumped)`).
                    re(r"(?:^|\d+ |: )Segmentation fault(?:\s*\(core dumped\).*|\s{2,}.*)?$|\bsignal: segmentation fault\b"),
                ),
                (
                    Statement::Sigkill,
                    re(r"\bexits? with return code\s*=?\s*-9\b"),
                ),
            ],
            evidence: re(concat!(
                // An exception class, an error code in a class's place, `Error:`.
                // Bold, a backtick, a quote or a comment mark glued to the
                // class may open the pasted line.
                r#"(?:^|[\s\[("`*#])(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Failure|NotMet|Exhausted|Fault|OOM)(?:\(\w+\))?:\s"#,
                // The last line of a Python traceback whose exception has no
                // message: the class alone (`MemoryError`).
                r"|^\s*(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)\s*$",
                // TensorFlow's status text, ROCr's fault handler, the
                // NVIDIA kernel driver's log prefix.
                r"|\bResource exhausted: |^\s*Memory access fault by GPU node-|\bNVRM: ",
                // The Linux DRM drivers' kernel log prefix for Intel GPUs
                // (`xe 0000:04:00.0: [drm] `, `i915 0000:00:02.0: [drm] `).
                r"|\b(?:xe|i915) [0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]: \[drm\] ",
                // oneDNN's verbose log (`onednn_verbose,...,error,ocl,errcode -6,`).
                r"|,error,(?:\w+,)?errcode -?\d+,",
                r"|(?:^|\s)(?i:error|fatal|fatal error):\s",
                r"|\bwhat\(\):",
                // A log level.
                r"|\[(?:ERROR|Error|error|E|FATAL|Fatal|fatal|F|CRITICAL|critical)\]",
                // TensorFlow's C++ log prefix after its timestamp: a level
                // then the source location (`2022-04-04 00:27:49.642414: E
                // tensorflow/compiler/xla/xla_client/xla_util.cc:88] `).
                r"|(?:^|\s)[EWF] \S+\.(?:cc|cpp|cxx|cu|h):\d+\] ",
                r"|(?:^|\s)(?:ERROR|FATAL|CRITICAL)\b",
                r"|^E\d{4} |^[EF] ",
                // A source location a program prints.
                r"|\[[\w./-]+\.(?:cc|cpp|cxx|c|h|hpp|cu|py|rs|go|mm|m):\d+\]",
                r"|\(at [^)]+:\d+\)|\[FUNC:\w+\]",
                // TensorRT's internal error (`[defaultAllocator.cpp::nvinfer1::
                // internal::DefaultAllocator::allocate::63] Error Code 1:`).
                r"|\b\w+\.(?:cpp|cu|h)::(?:\w+::)+\d+\] Error [Cc]ode \d+:",
                r"|\((?:[A-Za-z]:\\|/)[^()]*\.(?:cc|cpp|cxx|c|h|hpp|cu|py|rs|go|mm|m):\d+\)\s*$",
                // The launcher's own signal handler; the shell's job report.
                r"|sigkill_handler\]|Program Terminated",
                r"|\[(?:metal|mlx|cuda|hip|vulkan)::\w+\]|\[METAL\]",
                // libc++abi's abort; FFmpeg's log context (`[h264_nvenc @
                // 0x55f4...]`); a source location before the message, as glog
                // and Ray print it (`node_manager.cc:3277: `); a failed
                // call's status code (`Error on nvEncOpenEncodeSessionEx: 10 (`).
                r"|terminating due to uncaught exception of type",
                // libstdc++'s abort on an uncaught exception; ggml's assert
                // (`GGML_ASSERT: <file>:<line>: <condition>`); a CANN error
                // code in its own place (`EL0004: [PID: N] ...`).
                r"|terminate called after throwing an instance of '|\bGGML_ASSERT: \S.*:\d+: |(?:^|\s)E[A-Z]\d{4}: ",
                r"|^\[\w+ @ (?:0x)?[0-9a-fA-F]+\] ",
                r"|\b[\w-]+\.(?:cc|cpp|cxx|cu):\d+: ",
                r"|\bError on \w+(?:\([^)]*\))?: -?\d+ \(",
                // An error label spaced from its text (`Runtime API error :
                // out of memory`, `CUDA error - cannot allocate`, `aborting
                // with error : HSA_STATUS_...`); a lower-case `exception: `
                // (`Caught a critical exception: ...`); a function and line
                // (`CUDA error in func X at line 123`); the kernel's `[ERR]`.
                r"|(?:^|\s)(?i:error) [:-] |(?:^|\s)(?i:exception):\s",
                r"|\bin func(?:tion)? [\w:]+ at line \d+|\[ERR\]",
                // An allocation's failure shouted in capitals, as a driver
                // logs it (nvgpu's `DMA alloc FAILED: [sysmem] size=N`);
                // prose does not write FAILED.
                r"|\b\w*(?i:alloc)\w* FAILED\b",
                // The .NET debugger's view of a caught exception (`X was
                // caught`, then `HResult=`, `Message=`, `Source=`), as
                // Visual Studio copies it.
                r"|^\s*Message=\S",
            )),
            // Statements whose wording only the program that prints them
            // uses: their own evidence, even quoted in a sentence.
            self_evident: re(concat!(
                r"^(?:killed due to the node running low on memory",
                r"|Your session crashed after using all available RAM",
                r"|requires more system memory \(\d+(?:\.\d+)? ?[KMGT]i?B\) than is available \(",
                r"|GPU plugin can't finish correctly",
                r"|dxgk: \w+: Ioctl failed",
                r"|Display driver (?:\w+ )?stopped responding",
                r"|Memory access fault by GPU node-\d+ \(Agent handle",
                r"|unable to allocate [A-Za-z]+\d* buffer\b",
                r"|Abort was called at \d+ line in file\b",
                r"|Starting GPU coredump generation, set the CUDA_COREDUMP_SHOW_PROGRESS\b",
                r"|Worker exceeded \d+% memory budget\b)",
            )),
            // Words in the clause before a quotation that make the quoted
            // message a sentence about one (a condition, an instruction).
            conditional: re(
                r"(?i)(?:^|[^\w])(?:if|when|whenever|how|why|avoid|prevent|handle|catch|means|fix|you|your|should)(?:[^\w]|$)",
            ),
            // A comment mark glued to an exception's class
            // (`#XlaRuntimeError: RESOURCE_EXHAUSTED: ...`): the output
            // pasted as a comment under the call that raised it.
            glued_comment: re(r"^#(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception): \S"),
            // `System is out of GPU ... memory`: the program's voice.
            system_subject: re(r#"(?:^|["`*])\s*(?:System|Device|GPU|The device|The GPU|Host) is out of\b"#),
            template: re(r"%[sdzuf]|%l[du]|\{\}|\{[a-z_]+\}|\bXXX|\bYYY|<size>|<N>"),
            prose: re(
                r"(?i)(?:^|[^\w])(?:i|i'm|i've|my|we|you|your|if|when|how|why|avoid|prevent|handle|catch|means|fix)(?:[^\w]|$)",
            ),
            // A comment after code: `x = f()  # RuntimeError: ... here`.
            comment: re(r"(?:^|\s)(?:#|//|--)\s"),
            host: re(concat!(
                r"(?i:\bhost memory\b|\bpinned\b|\bsystem memory\b|\bRAM\b|\bswap\b|\bmemory pressure\b)",
                r"|cudaHostAlloc|hipHostMalloc|\bMemoryError\b|\b_ArrayMemoryError\b|内存",
                r"|\bCL_OUT_OF_HOST_MEMORY\b|\bCpu\w*OOM\b|\bJava heap space\b",
                r"|\bnode running low on memory\b|\bWorker exceeded \d+% memory budget\b",
            )),
            device_words: re(concat!(
                r"(?i:\bgpu\b|\bdevice\b|\bvram\b|\bhbm\b|\bnpu\b|\bcuda\b|\bhip\b|\bmetal\b|\bgmem\b|\brtMalloc\b|\bvideo memory\b)",
                r"|显存",
            )),
            ffmpeg_context: re(r"^\[(\w+) @ (?:0x)?[0-9a-fA-F]+\] "),
            device_allocator: re(r"\bRMM (?:failure|error)\b|\brmm::"),
            // Ollama: `model requires more system memory (X) than is available (Y)`.
            system_memory: sized_re(
                r"requires more system memory \({NUMBER} ?([KMGT]i?B)\) than is available \({NUMBER} ?([KMGT]i?B)\)",
            ),
            // A library's source path: `mindspore/ccsrc/.../arena.cc`, `bmlib/src/x.cpp`.
            // Longer extensions first and a word boundary after: `.hpp` is not `.h`.
            reporter_path: re(r"\b((?:[\w.-]+/)+[\w.-]+\.(?:cpp|cxx|cc|cuh|cu|c|hpp|hh|h|py|rs|go|mm))\b(?::\d+)?"),
            // `[bmlib_memory][error]`, `[metal::malloc]`, `MD(...)`.
            reporter_tag: re(r"\[([A-Za-z_][\w:]*)\]\s*(?:\[(?:error|ERROR|E)\])?"),
            // `[TensorRT-LLM][ERROR]`: a name with a capital, then the level.
            logger_name: re(r"\[([A-Z][\w.-]*[A-Za-z])\]\[(?:ERROR|Error|FATAL|Fatal)\] "),
            bytes_pairs: vec![
                // torch-directml: `Could not allocate tensor with N bytes`.
                ("requested", re(r"(?i)(?:alloc(?:ate)? size|allocate tensor with|allocating|attempting to allocate|request(?:ed)? size(?: was)?|size)\s*[:=]?\s*(\d{3,})\b(?:\s*bytes)?")),
                // Deeplearning4j: `Failed to allocate N bytes from DEVICE [0] memory`.
                ("requested", re(r"(?i)\bto allocate (\d+) bytes\b")),
                // MIOpen: `Memory not available to allocate buffer: N`.
                ("requested", re(r"\bnot available to allocate buffer: (\d+)\b")),
                ("total", re(r"(?i)total mem(?:ory)? size\s*:?\s*(\d{3,})\b")),
                ("used", re(r"(?i)TotalUsedMemStatistics\s*:\s*(\d{3,})\b")),
                ("limit", re(r"(?i)maximum allowed buffer size of (\d{3,})\b")),
            ],
            hex_size: re(r"\bsize\s*[:=]\s*(0x[0-9a-fA-F]+)\b"),
            dec_size: re(r"\bsize\s*[:=]\s*(\d+)\b"),
            sized: sized_re(r"Tried to allocate {NUMBER} ?([KMGT]iB)"),
            sentence_total: sized_re(r"total capac\w* of ?{NUMBER} ?([KMGT]iB)"),
            sentence_free: sized_re(r"of which {NUMBER} ?([KMGT]iB) is free"),
            // XLA's TPU runtime: `Attempting to allocate 4.39G. That was not
            // possible. There are 2.30G free.`
            xla_sized: sized_re(r"\bAttempting to (?:allocate|reserve) {NUMBER} ?([KMGT])(?:i?B)?\b"),
            xla_free: sized_re(r"\bThere are {NUMBER} ?([KMGT])(?:i?B)? free\b"),
            // `device_id:0`, `GPU 0`, `DEVICE [0]` (Deeplearning4j).
            device_id: re(r"(?i)\b(?:device_id|dev_id|device id|GPU|device|NPU)\s*[:=]?\s*\[?(\d+)\b"),
            // The request a program states on a line of its own after its
            // failure: TensorRT's `Requested amount of GPU memory (N bytes)
            // could not be allocated` and `Error Code 2: OutOfMemory
            // (Requested size was N bytes.)`.
            request_line: re(r"(?i)\brequested (?:amount of (?:\w+ )?memory \((\d+) bytes\)|size was (\d+) bytes)"),
            enforce: re(r"\b(\w+) <= (available\w*) failed, (\d+) > (\d+)"),
            watchdog_seconds: re(r"watchdog got stuck for (\d+) seconds"),
            bad_alloc: re(r"\bstd::bad_alloc\b"),
            // ggml names a backend's buffer type by the backend and device
            // index (`CUDA0`, `Vulkan0`, `ROCm1`, `SYCL0`; Metal's has none).
            ggml_buffer: re(r"\bunable to allocate ([A-Za-z]+?)(\d*) buffer\b"),
            // NumPy: `Unable to allocate 3.2 GiB for an array with shape ...`,
            // in every unit its `_size_to_string` prints (`800 bytes` up to
            // `EiB`).
            numpy_size: sized_re(r"\bUnable to allocate {NUMBER} ?([KMGTPE]iB|bytes) for an array\b"),
            xla_reserved: sized_re(r"\bfree, {NUMBER} ?([KMGT]i?B|[KMGT]|B) reserved\b"),
            xla_reservable: sized_re(r"\band {NUMBER} ?([KMGT])(?:i?B)? reservable\b"),
            // XLA's TPU compiler for a memory space its family does not
            // explain (`Ran out of memory in memory space vmem. Used 32.42M
            // of 16.00M vmem. Exceeded vmem capacity by 16.42M`).
            xla_space: re(
                r"\bRan out of memory in memory space (\w+)\. Used (\d+(?:\.\d+)?)([KMGT]?)B? of (\d+(?:\.\d+)?)([KMGT]?)B? \w+\.(?:\s+Exceeded \w+ capacity by (\d+(?:\.\d+)?)([KMGT]?)B?\b)?",
            ),
            hsa_node: re(r"\bby GPU (node-\d+)\b"),
        }
    })
}

/// A size's number as programs print it: `3`, `3.2`, and `184.` (NumPy
/// prints sizes with `{:#.3g}`, whose `#` keeps the point of a whole number:
/// `184. MiB`, `1.50 GiB`, `12.3 KiB`). Only where a unit follows, so a
/// sentence's full stop is never read as part of a number.
const NUMBER: &str = r"(\d+(?:\.\d*)?)";

/// Compiles a constant pattern whose sizes' numbers are written `{NUMBER}`.
fn sized_re(pattern: &str) -> Regex {
    constant_regex(&pattern.replace("{NUMBER}", NUMBER))
}

/// The first statement on the line that a program reports: (statement, start).
fn find(line: &str) -> Option<(Statement, usize)> {
    find_reported(line).or_else(|| prose_report(line).map(|(statement, _)| (statement, 0)))
}

/// A first-person report of a named device's out of memory, and where its
/// figures may follow: the subject `I`, a verb of meeting the error, and
/// `CUDA`/`GPU`/`XPU`/... `out of memory` right after. Not a question
/// (`Why do I get ...`), a condition (`if I get ...`, `to avoid ...`) or a
/// negation (`I no longer get ...`): the clause before the subject and the
/// words between it and the verb say so.
fn prose_report(line: &str) -> Option<(Statement, usize)> {
    static RE: OnceLock<(Regex, Regex, Regex)> = OnceLock::new();
    let (report, not_said, asked) = RE.get_or_init(|| {
        (
            constant_regex(concat!(
                r#"(?i)(?:^|[^\w'])(?:I|I'm|I am|I've|I have)\s+((?:[a-z']+\s+){0,2}?)"#,
                r"(?:",
                // The verb itself says memory ran out (`I ran out of GPU
                // memory`, `I keep running out of memory`, `I OOM at 16k`).
                r"(?P<ran>(?:ran|run|running|runs)\s+out\s+of\s+(?:(?:gpu|device|video|cuda|vram|system|host|cpu)\s+)?(?:memory|vram|ram)\b|oom(?:s|ed|'d|-ed)?\b)",
                r"|(?:got|get|gets|getting|keep getting|experience|experienced|experiencing|encounter|encountered|encountering|hit|hitting|ran into|run into|running into|received|receiving|faced|facing|met|see|saw|seeing)\s+",
                // An adjective of the error's fame before it (`I ran into
                // the infamous CUDA out of memory`).
                r#"(?:an?\s+|the\s+|this\s+)?(?:(?:infamous|dreaded|notorious|famous|usual|same|common|classic|typical|familiar|annoying)\s+)?(?:"#,
                r#"["'`]?(?:cuda|gpu|xpu|hip|rocm|mps|npu|vram)\s+out\s+of\s+memory\b"#,
                // The short forms people write for what they got: `OOM`,
                // `OOMs`, `an OOM error`, `out of memory errors`.
                r#"|(?P<short>["'`]?(?:ooms?|out[- ]of[- ]memory)["'`]?(?:\s+(?:errors?|exceptions?|issues?|crash(?:es)?)\b|\b))"#,
                // An out-of-memory exception's class named as what they got
                // (`I got the OutOfMemoryError in forward.`, CuPy's, with
                // the traceback cut before its last line).
                r#"|["'`]?(?:[A-Za-z_]\w*\.)*\w*(?:OutOfMemory(?:Error|Exception)|ResourceExhaustedError)\b"#,
                // The shell's word for a process SIGKILL ended, as the
                // poster names what they saw: quoted, or after `error`,
                // `message`, or the killer named.
                r#"|(?P<killed>(?:(?:error|message|output)\s*:?\s*)?["'`]killed["'`]|(?:error|message|output)\s*:?\s*killed\b|killed\s+by\s+(?:the\s+)?(?P<oom>oom|out[- ]of[- ]memory)[- ]?killer\b)"#,
                r"))",
            )),
            constant_regex(
                r"(?i)\b(?:not|never|no|longer|n't|don't|didn't|won't|wouldn't|can't|cannot|would|will|could|should|might|may|to|avoid|stopped|used|think|guess|assume|suppose|believe|suspect|doubt|wonder|hope|want|worry|worried|expect|expected|afraid|can|usually|typically|generally|normally)\b|n't\b",
            ),
            constant_regex(
                r"(?i)(?:\b(?:if|unless|whether|avoid|avoiding|prevent|without|until)\b.*|\b(?:do|does|did|would|will|can|could|should|might|may|shall|why|how)\s*)$",
            ),
        )
    });
    let Some(c) = report.captures(line) else {
        return prose_report_korean(line)
            .or_else(|| prose_oom_killer(line))
            .or_else(|| prose_run_report(line))
            .or_else(|| prose_killed_chinese(line))
            .or_else(|| bug_title(line));
    };
    let whole = c.get(0)?;
    let between = c.get(1).map_or("", |m| m.as_str());
    let before = &line[..whole.start()];
    let clause = before
        .rfind(['.', ',', ';', ':', '!', '?'])
        .map_or(before, |end| &before[end + 1..]);
    let question = line[whole.end()..]
        .split(['.', '!'])
        .next()
        .is_some_and(|rest| rest.contains('?'));
    let statement = if c.name("killed").is_some() {
        Statement::ProseKilled
    } else {
        Statement::ProseReport
    };
    // The new forms read more text as a report: the verb itself (`I ran
    // out of memory`, `I OOM`) only after adverbs (`I keep running out of
    // memory`, not `I'm worried about running out of memory`), and neither
    // form in a clause of a habit or a precaution (`when I run out of
    // memory, ...`, `so that I don't get OOM`).
    let short = c.name("ran").is_some() || c.name("short").is_some();
    // A warning that names an out of memory is not one (`I get OOM
    // warnings`), and the bare present (`I run out of memory`) states a
    // habit or a case unless an adverb tells it was seen again and again
    // (`I keep running`, `I always run out of memory`).
    let warning = c.name("short").is_some()
        && line[whole.end()..]
            .trim_start()
            .to_ascii_lowercase()
            .starts_with("warning");
    let bare_present = c.name("ran").is_some_and(|m| {
        m.as_str().to_ascii_lowercase().starts_with("run ") && between.trim().is_empty()
    });
    let adverbs_only = between
        .split_whitespace()
        .all(|w| ADVERBS_OF_A_REPORT.contains(&w.to_ascii_lowercase().as_str()));
    let habit = short
        && clause
            .trim_end()
            .rsplit(|ch: char| !ch.is_alphanumeric())
            .next()
            .is_some_and(|w| {
                ["when", "whenever", "once", "before", "case", "that"]
                    .contains(&w.to_ascii_lowercase().as_str())
            });
    (!not_said.is_match(between)
        && !asked.is_match(clause)
        && !question
        && !habit
        && !warning
        && !bare_present
        && (c.name("ran").is_none() || adverbs_only))
        .then_some((statement, whole.start()))
}

/// Words that may stand between `I` and a verb that says memory ran out
/// (`I keep running out of memory`, `I'm still running out of memory`).
const ADVERBS_OF_A_REPORT: &[&str] = &[
    "always",
    "still",
    "keep",
    "kept",
    "constantly",
    "quickly",
    "immediately",
    "instantly",
    "just",
    "also",
    "then",
    "eventually",
    "sometimes",
    "often",
    "again",
    "soon",
    "finally",
    "am",
    "was",
    "have",
    "had",
    "been",
];

/// The same report in Korean: a named device's `out of memory` as the
/// subject (`가`/`이`, after `오류`/`에러` or not) of a verb of appearing
/// (`뜨다`, `나다`, `발생하다`), in a sentence the poster ends in the
/// polite past (`cuda out of memory가 뜨는 것을 확인했습니다`, I saw cuda
/// out of memory appear). Not a case or a possibility (`에러가 나는 경우`,
/// `뜰 수도 있습니다`), nor a question: those explain.
fn prose_report_korean(line: &str) -> Option<(Statement, usize)> {
    static RE: OnceLock<(Regex, Regex)> = OnceLock::new();
    let (named, past) = RE.get_or_init(|| {
        (
            constant_regex(concat!(
                r#"(?i)["'`]?\b(?:cuda|gpu|xpu|hip|rocm|mps|npu|vram)\s+out\s+of\s+memory["'`]?"#,
                r"\s*(?:(?:오류|에러|error)\s*)?(?:가|이)\s*(?:뜨|떴|떠|나|났|발생)",
            )),
            constant_regex(r"(?:었|았|했|였|떴|났)습니다\s*[.!]?\s*$"),
        )
    });
    let m = named.find(line)?;
    let sentence = line[m.end()..].split(['.', '?', '!']).next().unwrap_or("");
    let rest = &line[m.end()..];
    let sentence_end = rest.find(['.', '?', '!']).map_or(rest.len(), |at| at + 1);
    let said = &rest[..sentence_end];
    (!sentence.contains("경우")
        && !sentence.contains("수도")
        && !said.ends_with('?')
        && past.is_match(said))
    .then_some((Statement::ProseReport, m.start()))
}

/// The poster's account of the out-of-memory killer ending processes on
/// their machine (`my 64GB of system RAM would climb to 100% and the OOM
/// killer would start taking out desktop processes`): the killer as the
/// subject of a verb of killing, on a line in the first person. Not a
/// condition or a question (`if the OOM killer kills it`, `when the OOM
/// killer kicks in, what happens?`), nor the killer without a kill (`the OOM
/// killer is configurable`).
fn prose_oom_killer(line: &str) -> Option<(Statement, usize)> {
    static RE: OnceLock<(Regex, Regex, Regex)> = OnceLock::new();
    let (killer, first_person, condition) = RE.get_or_init(|| {
        (
            constant_regex(concat!(
                r"(?i)\bthe\s+(?:linux\s+|kernel(?:'s)?\s+)?(?:oom|out[- ]of[- ]memory)[- ]?killer\s+",
                r"(?:(?:would|then|also|just|eventually|kept|keeps|started|starts|start|began)\s+)*",
                r"(?:kill(?:s|ed|ing)?|took\s+out|tak(?:es|ing)\s+out|kick(?:s|ed|ing)\s+in|reaped|terminat(?:es|ed|ing))\b",
            )),
            constant_regex(r"\b(?:I|I'm|I've|my|My|we|our|Our)\b"),
            constant_regex(
                r"(?i)\b(?:if|when|whenever|unless|whether|avoid|avoiding|prevent|without|until|before|not|never|no|don't|doesn't|didn't|won't)\b|n't\b",
            ),
        )
    });
    let m = killer.find(line)?;
    let before = &line[..m.start()];
    let clause = before
        .rfind(['.', ',', ';', ':', '!', '?'])
        .map_or(before, |end| &before[end + 1..]);
    let question = line[m.end()..]
        .split(['.', '!'])
        .next()
        .is_some_and(|rest| rest.contains('?'));
    (first_person.is_match(before) && !condition.is_match(clause) && !question)
        .then_some((Statement::ProseKilled, m.start()))
}

/// The poster's run as the subject of the failure (`When I try to use X,
/// the CV crashes with memory overflow when ...`, `But today it always show
/// "CUDA out of memory" when training step`, `the job had been killed`):
/// `it`, `my`/`our`/`the` and a noun, then a verb of showing or of failing
/// with the statement, or `was killed`. The sentence must be the poster's:
/// first person before the subject (`I`, `my`, `we`), a subject they own
/// (`my training`), or an adverb of a repeated observation (`always`,
/// `still`, `suddenly`, `again`). Not a condition (`if`, `unless`,
/// `whenever`, `to avoid`), a modal or a negation between subject and verb,
/// nor a guess or an inference (`I guess`, `likely`, `I get that`), nor a
/// question. A kill with `it` or in the present (`when i run the
/// Inference the process is killed`) needs the first person in its
/// sentence; `my job was killed` is the poster's by its subject; `the
/// process is killed when ...` explains.
fn prose_run_report(line: &str) -> Option<(Statement, usize)> {
    static RE: OnceLock<[Regex; 5]> = OnceLock::new();
    let [report, own, repeated, not_said, condition] = RE.get_or_init(|| {
        [
            constant_regex(concat!(
                r"(?i)(?:^|[^\w'])(?P<subject>it|(?:my|our|the)\s+(?:[\w-]+\s+){0,2}?[\w-]+)\s+",
                r"(?P<between>(?:[a-z']+\s+){0,2}?)(?:",
                // The verb itself says memory ran out (`it keeps running
                // out of memory`, `my training OOMs`).
                r"(?:runs?|ran|running)\s+out\s+of\s+(?:(?:gpu|device|video|cuda|vram|system|host|cpu)\s+)?(?:memory|vram|ram)\b|ooms\b|oom(?:ed|'d)\b",
                r"|(?:(?:shows?|showed|throws?|threw|gives?|gave|raises?|raised|reports?|reported)\s+",
                r"|(?:crash|fail|die|stop|abort)(?:s|es|ed|d)?\s+with\s+",
                r")(?:an?\s+|the\s+)?(?:error\s+)?(?:",
                r#"["'`]?(?:cuda|gpu|xpu|hip|rocm|mps|npu|vram)\s+out\s+of\s+memory\b"#,
                // The short forms (`it throws OOM`, `the run fails with an
                // out of memory error`).
                r#"|["'`]?(?:oom|out[- ]of[- ]memory)["'`]?(?:\s+(?:errors?|exceptions?))?\b"#,
                r#"|["'`]?(?:[A-Za-z_]\w*\.)*\w*(?:OutOfMemory(?:Error|Exception)|ResourceExhaustedError)\b"#,
                r"|(?:(?:gpu|device|cuda)\s+)?memory\s+overflow\b",
                r"))",
                r#"|(?:^|[^\w'])(?P<killed>(?P<ksubject>it|(?:my|our|the)\s+(?:[\w-]+\s+){0,2}?(?:job|jobs|process|processes|training|program|script|run|task|container|notebook|kernel|session))\s+"#,
                r#"(?:(?:(?P<past>had\s+been|has\s+been|have\s+been|was|were|got)|is|are|gets|keeps\s+getting|keeps\s+being)\s+(?:(?:just|already|then|eventually|finally|suddenly|simply|always|still|again|constantly|repeatedly)\s+)?(?:being\s+|getting\s+)?"#,
                // A learner's present of a repeated kill (`the program always
                // be killed`).
                r#"|(?:always|still)\s+be\s+)killed\b)"#,
            )),
            constant_regex(r"(?:^|[^\w'])(?:I|i|I'm|I've|my|My|we|We|our|Our)(?:[^\w']|$)"),
            constant_regex(r"(?i)\b(?:always|still|suddenly|again|keeps|kept)\b"),
            constant_regex(
                r"(?i)\b(?:not|never|no|longer|don't|didn't|won't|wouldn't|can't|cannot|would|will|could|should|might|may|to|avoid|stopped|used|if|when|often|usually|typically|generally|normally|frequently|tends|tend|can)\b|n't\b",
            ),
            // A condition, or a guess or an inference about a kill not
            // seen (`I get that the process was killed`, `You likely
            // exceeded ... and the process got killed`).
            constant_regex(concat!(
                r"(?i)\b(?:if|unless|whenever|whether|avoid|avoiding|prevent|without|until|in case|so that|make sure|ensure)\b",
                r"|(?i)\b(?:get that|guess|think|assume|suppose|believe|suspect|understand|know|probably|likely|maybe|perhaps|possibly|seems?|means?)\b",
            )),
        ]
    });
    let c = report.captures(line)?;
    let whole = c.get(0)?;
    let killed = c.name("killed").is_some();
    let subject = c.name("subject").or(c.name("ksubject"))?;
    let between = c.name("between").map_or("", |m| m.as_str());
    let before = &line[..subject.start()];
    // The sentence so far: a full stop ends one only before a space (a
    // dotted call, `xgb.DMatrix(...)`, does not).
    let sentence = [". ", "! ", "? "]
        .iter()
        .filter_map(|end| before.rfind(end))
        .max()
        .map_or(before, |end| &before[end + 2..]);
    let question = line[whole.end()..]
        .split(". ")
        .next()
        .is_some_and(|rest| rest.contains('?'));
    let first_person = own.is_match(sentence);
    let owned = if killed {
        // A kill in the present or with `it` is the poster's only in a
        // sentence they tell (`when i run the Inference the process is
        // killed`); `the process is killed when ...` explains. An adverb
        // of a repeated observation tells one too (`the training process
        // is still being killed after the preprocess is finished`, `the
        // program always be killed`), unless a condition follows in the
        // sentence (`the process is always killed when RAM runs out`).
        let verb = &line[subject.end()..whole.end()];
        let rest = line[whole.end()..].split(". ").next().unwrap_or("");
        first_person
            || (c.name("past").is_some() && subject.as_str().starts_with(['m', 'M', 'o', 'O']))
            || (repeated.is_match(verb) && !condition.is_match(rest) && !not_said.is_match(rest))
    } else {
        first_person
            || subject.as_str().starts_with(['m', 'M', 'o', 'O'])
            || repeated.is_match(between)
    };
    (owned && !not_said.is_match(between) && !condition.is_match(sentence) && !question).then(
        || {
            let statement = if killed {
                Statement::ProseKilled
            } else {
                Statement::ProseReport
            };
            (statement, subject.start())
        },
    )
}

/// An issue's title that files a bug (`[Bug]`, `[BUG]`, `Bug:`, a heading
/// or not) and names a device's out of memory or an out-of-memory class as
/// what happens (`# [Bug] ...: XPU OutOfMemoryError on first tensor
/// allocation when 2x Arc B580 are visible`): the poster's own failure,
/// as their first-person report is. Not a title that says the error is
/// missing, expected or wrong (`not raised`, `instead of`, `should`,
/// `misleading`): that bug is about the message, not a failure.
fn bug_title(line: &str) -> Option<(Statement, usize)> {
    static RE: OnceLock<(Regex, Regex)> = OnceLock::new();
    let (title, about_message) = RE.get_or_init(|| {
        (
            constant_regex(concat!(
                r"^\s*(?:#{1,3}\s*)?(?:\[(?:bug|Bug|BUG)\]|(?:bug|Bug|BUG):)\s*.*?",
                r#"(?:\b(?i:cuda|gpu|xpu|hip|rocm|mps|npu|vram)\s+(?i:out\s+of\s+memory)\b"#,
                r"|(?:\b|_)OutOfMemory(?:Error|Exception)\b)",
            )),
            constant_regex(
                r"(?i)\b(?:not|never|no|instead|should|expected|rather|misleading|wrong|incorrect|message|handle|handling|catch|support|feature|add|request|docs?|documentation)\b|n't\b|\?",
            ),
        )
    });
    let m = title.find(line)?;
    (!about_message.is_match(line)).then_some((Statement::ProseReport, m.start()))
}

/// The poster's account in Chinese of their process killed as memory ran
/// out (`内存崩掉了,然后被系统强杀`, `mem 中native 狂飙,直接被杀死`): a
/// memory word before a passive kill (`被`, the system or not, `杀死`,
/// `强杀`, `杀掉`, `kill`) in one sentence told as past (`了`, `直接`,
/// `然后`, `结果`). Not a condition or a possibility (`如果`, `若`, `一旦`,
/// `当`...`时`, `会`, `可能`, `容易`), nor a question: those explain.
fn prose_killed_chinese(line: &str) -> Option<(Statement, usize)> {
    static RE: OnceLock<[Regex; 3]> = OnceLock::new();
    let [memory, kill, told] = RE.get_or_init(|| {
        [
            constant_regex(r"(?i)内存|显存|\bmem(?:ory)?\b|\bRAM\b"),
            constant_regex(r"(?i)被\s*(?:系统|内核|操作系统|oom[- ]?killer)?\s*(?:强杀|杀死|杀掉|kill(?:ed)?\b)"),
            constant_regex(r"了|直接|然后|结果"),
        ]
    });
    let ends = |c: char| matches!(c, '。' | '！' | '？' | '!' | '?');
    let m = kill.find(line)?;
    let start = line[..m.start()]
        .char_indices()
        .rfind(|&(_, c)| ends(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = line[m.start()..]
        .find(ends)
        .map_or(line.len(), |i| m.start() + i);
    let sentence = line.get(start..end)?;
    let said = sentence.replace("当时", "");
    let hedged = [
        "如果",
        "若",
        "一旦",
        "当",
        "会",
        "可能",
        "容易",
        "可以",
        "是否",
        "吗",
        "怎么",
        "为什么",
    ]
    .iter()
    .any(|w| said.contains(w));
    let before_kill = line.get(start..m.start())?;
    (memory.is_match(before_kill) && told.is_match(sentence) && !hedged)
        .then_some((Statement::ProseKilled, start))
}

/// Whether a report in prose says the host's memory ran out (`I ran out of
/// system memory`, `it keeps running out of RAM`): only the statement's own
/// words, since a poster often states their RAM beside a GPU's failure.
fn prose_names_host(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"(?i)\bout\s+of\s+(?:(?:system|host|cpu)\s+memory|ram)\b"))
        .is_match(text)
}

/// Whether a first-person report of a kill names the out-of-memory killer
/// (`killed by OOM killer`): memory is then stated, not implied.
fn names_oom_killer(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(concat!(
            r"(?i)\bkilled\s+by\s+(?:the\s+)?(?:oom|out[- ]of[- ]memory)[- ]?killer\b",
            // The killer as the subject (`the OOM killer would start taking out`).
            r"|\b(?:oom|out[- ]of[- ]memory)[- ]?killer\s+(?:\w+\s+){0,2}?(?:kill(?:s|ed|ing)?|took\s+out|tak(?:es|ing)\s+out|kick(?:s|ed|ing)\s+in|reaped|terminat(?:es|ed|ing))\b",
        ))
    })
    .is_match(text)
}

/// The figures a poster states in prose after their report: the device's
/// total (`the GPU has 28.56 GiB total capacity`) and the request (`fails
/// to allocate 7.09 GiB`), as (total, requested).
fn prose_figures(text: &str) -> [Option<u64>; 2] {
    static RE: OnceLock<[Regex; 2]> = OnceLock::new();
    let [total, requested] = RE.get_or_init(|| {
        [
            sized_re(
                r"(?i)\b{NUMBER} ?([KMGT]iB|[KMGT]B) (?:of )?total capacity\b|\btotal capacity of {NUMBER} ?([KMGT]iB|[KMGT]B)\b",
            ),
            sized_re(
                r"(?i)\b(?:fails?|failed|failing|unable|tried|trying|tries) to allocate {NUMBER} ?([KMGT]iB|[KMGT]B)\b",
            ),
        ]
    });
    let size = |re: &Regex| {
        let c = re.captures(text)?;
        let (number, unit) = match (c.get(1), c.get(2)) {
            (Some(n), Some(u)) => (n, u),
            _ => (c.get(3)?, c.get(4)?),
        };
        crate::units::to_bytes(number.as_str(), unit.as_str()).ok()
    };
    [size(total), size(requested)]
}

/// The first statement on the line that a program reports: (statement, start).
fn find_reported(line: &str) -> Option<(Statement, usize)> {
    let p = patterns();
    let trimmed = line.trim_start();
    // Comments, diff lines and headings are about a message, not of one.
    if (trimmed.starts_with('#') && !p.glued_comment.is_match(trimmed))
        || trimmed.starts_with("//")
        || trimmed.starts_with("/*")
        || trimmed.starts_with("* ")
        || (line.starts_with('+') && !line.starts_with("++"))
        || p.template.is_match(line)
    {
        return None;
    }
    p.statements
        .iter()
        .filter_map(|(statement, re)| {
            let m = re.find_iter(line).find(|m| {
                !is_mention(line, m.start())
                        || self_evident(line, m.start())
                        // ggml's assert prints its condition's source, whose
                        // message is a string literal (`GGML_ASSERT:
                        // ggml-backend.c:460: data != NULL && "failed to
                        // allocate buffer"`).
                        || line[..m.start()].contains("GGML_ASSERT: ")
                        // libstdc++'s abort quotes the uncaught exception's
                        // class (`terminate called after throwing an
                        // instance of 'vk::DeviceLostError'`).
                        || line[..m.start()]
                            .ends_with("terminate called after throwing an instance of '")
            })?;
            Some((*statement, m.start()))
        })
        .min_by_key(|&(_, start)| start)
        .filter(|&(statement, start)| reported(line, statement, start))
}

/// Whether the statement at `start` comes with evidence that a program
/// reported it, and no prose that makes it a sentence about one.
fn reported(line: &str, statement: Statement, start: usize) -> bool {
    let p = patterns();
    let before = &line[..start];
    // A program's message nested in another's status chain is read without
    // the wrapper's own words between them (`unexpected error when creating
    // modelInstanceState`): they are the wrapping program's, not a poster's.
    let said = match wrapped_message(before) {
        Some((chain, nested)) => format!("{} {}", &before[..chain], &before[nested..]),
        None => before.to_string(),
    };
    let said = said.as_str();
    // A message quoted whole after the poster's own words (`I am seeing
    // **RuntimeError: ...**`, `I'm getting the error message "System is out
    // of GPU memory"`) is their report; only a condition or an instruction
    // in the clause before the quotation makes it a sentence about one.
    let prose = match quote_opening(said).or_else(|| reported_class(said)) {
        Some(at) => {
            let lead = said[..at].trim_end();
            let clause = lead
                .rfind(['.', ',', ';', ':', '!', '?'])
                .map_or(lead, |end| &lead[end + 1..]);
            p.conditional.is_match(clause) || lead.ends_with(['(', '=', ',', '[', '{', '+', '%'])
        }
        None => p.prose.is_match(said),
    };
    if prose || p.comment.is_match(before) {
        return false;
    }
    if self_evident(line, start) {
        return true;
    }
    match statement {
        // The shell's job report is its own evidence: at the line's start
        // or after `line N: PID ` (bash) with the command after it.
        Statement::Segfault => {
            before.trim().is_empty()
                || before.ends_with(": ")
                || before
                    .trim_end()
                    .rsplit(' ')
                    .next()
                    .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
        }
        // IPython prints the header only for an exception raised; PyTorch's
        // heartbeat monitor states its figure (a template would not).
        // nvidia-smi names the device by its bus address.
        Statement::NotebookHeader | Statement::WatchdogStuck | Statement::DeviceLost => true,
        // PyTorch's own words; the garbled headline is what is missing.
        Statement::AllocatorSentence => exception_like(before),
        _ => p.evidence.is_match(line) || p.system_subject.is_match(line),
    }
}

/// A message nested in another program's status chain: where the chain's
/// first status opens and where the nested message's own header starts,
/// when `before` holds both. The chain is a failure the wrapping program
/// states with a status code as gRPC, absl and Triton print them, or `failed
/// with error: ` (Triton: `Model 'x' loading failed with error: version 1 is
/// at UNAVAILABLE state: Internal: unexpected error when creating
/// modelInstanceState: `; its model-status table: `UNAVAILABLE: Internal:
/// ...`); the nested message starts after a `: ` with its own log level
/// (`[TensorRT-LLM][ERROR] `, `[ERROR] `).
fn wrapped_message(before: &str) -> Option<(usize, usize)> {
    static RE: OnceLock<(Regex, Regex)> = OnceLock::new();
    let (status, header) = RE.get_or_init(|| {
        (
            constant_regex(concat!(
                r"\bfailed with error: ",
                r"|\b(?:Internal|INTERNAL|Unknown|UNKNOWN|Unavailable|UNAVAILABLE|FAILED_PRECONDITION|Failed precondition)(?: state)?: ",
            )),
            constant_regex(r": (?:\[[\w .-]+\])?\[(?:ERROR|Error|error|E|FATAL|Fatal|F)\] "),
        )
    });
    let chain = status.find(before)?;
    let nested = header.find_iter(&before[chain.end()..]).last()?;
    Some((chain.start(), chain.end() + nested.start() + 2))
}

/// Whether the statement at `start` is one that only its program prints.
fn self_evident(line: &str, start: usize) -> bool {
    line.get(start..)
        .is_some_and(|rest| patterns().self_evident.is_match(rest))
}

/// Where the quotation that holds the text after `before` opens: the last
/// double quote, backtick or `**` that `before` leaves unclosed.
fn quote_opening(before: &str) -> Option<usize> {
    let odd = |mark: &str| before.matches(mark).count() % 2 == 1;
    ["\"", "`", "**"]
        .iter()
        .filter(|mark| odd(mark))
        .filter_map(|mark| before.rfind(*mark))
        .max()
}

/// Where an exception's class opens the message right after a verb that
/// reports it (`I am seeing RuntimeError: ...`, bold already taken off by
/// the normaliser): the poster's words end there.
fn reported_class(before: &str) -> Option<usize> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        constant_regex(
            r"(?i:\b(?:seeing|getting|get|got|see|receiving|received|encountered|encountering|hit|threw|throws)\s+)((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception): )",
        )
    });
    re.captures(before)
        .and_then(|c| c.get(1))
        .map(|m| m.start())
}

/// A dotted name and a colon before the statement (`torch.cuda.X: `): an
/// exception line even when the class name itself is garbled.
fn exception_like(before: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"^\s*(?:[A-Za-z_]\w*\.)+\w+: \S"))
        .is_match(before)
}

/// Any failure a family of its own does not know.
pub struct Grammar;

impl Family for Grammar {
    // The prefilter's literals are few by design (each one slows its SIMD
    // search): these reuse or shorten literals other families already
    // need (`ut of ` stands for `ut of memory` and `out of resource: `,
    // `to allocate` for `Tried to allocate` and `while trying to
    // allocate`, `atchdog ` for both watchdog phrases), and add only the
    // statements no other literal finds. Statements without a literal of
    // their own (`bad_alloc`, `MemoryError`, `is more than total mem size`,
    // `显存不足`, ...) are still read on a line that has one, and on every
    // line of an open traceback.
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "ut of ",
            "Out Of Memory",
            "nough memory",
            // torch-directml's `Could not allocate tensor with N bytes. There
            // is not enough GPU video memory available!`.
            // (`memory available!`: on the piece `memory pressure (OOM)` uses).
            "memory available!",
            // MLX's `[METAL] Command buffer execution failed: Insufficient
            // Memory` (the Metal family's literal, which this one stands
            // for) and exllamav2's `Insufficient VRAM for model and cache`,
            // on the piece `Insu`; RMM's `MemoryError: std::bad_alloc:
            // out_of_memory` (under the `rror` literal another family has),
            // Ollama's and Ray's own sentences.
            "Insufficient ",
            "Error: std::bad_alloc",
            "requires more system memory",
            "memory pressure (OOM)",
            // Ray's worker exit detail, ROCr's and nvgpu's faults, Windows'
            // TDR, WSL2's dxgkrnl, OpenVINO's CL_OUT_OF_RESOURCES: each
            // holds a piece the prefilter already searches for (` to `,
            // `_ERROR_`, `ered`, `iled`, `UT_O`), so none adds to its
            // search. Kubernetes' eviction, MindSpore's size check and
            // `cannot allocate` would each need a piece of their own.
            "killed due to the node running low on memory",
            // Colab's dialog: on the piece `able` of `available` (the
            // literal the two TDR spellings gave up).
            "crashed after using all available RAM",
            "HSA_STATUS_ERROR_",
            "error notifier set to 31",
            // Every spelling of Windows' TDR on one literal (the event's
            // `and has (successfully) recovered`, and `and was recovered` as
            // people title Event 4101), which left room for Colab's dialog
            // above.
            "responding and ",
            "Ioctl failed: -12",
            "CL_OUT_OF_RESOURCES",
            // Under the `_ERROR_` literal the status tables need (`_ERR_OUT_OF_MEMORY`
            // is under `OUT_OF_MEMORY`).
            "_ERROR_OUT_OF_",
            "Failed to allocate",
            "to allocate",
            // CANN's error name for a failed allocation, when a paste keeps
            // it without CANN's sentence (`Error: Memory_Allocation_Failure(
            // EL0004): Failed` and the rest cut off), on a piece of its own
            // (`_Fai`).
            "Memory_Allocation_Failure",
            "lloc fail",
            "atchdog ",
            "Unable to determine the device handle",
            "Segmentation fault",
            // A report in prose in the short form people write (`I get OOM
            // which surprises me`, `I hit OOM when ...`): on the piece `OM w`
            // of TensorFlow's `OOM when allocating tensor`, for which it
            // then stands, so the prefilter gains no literal. `an OOM
            // error` is found by `rror`; a bare `OOM.` is not looked at.
            "OOM w",
            // Go's name of the signal (ollama's runner), on the piece `al: `.
            "signal: segmentation fault",
            // MLX's allocator limit and Dask's nanny (`Resource limit (N)
            // exceeded`, `Worker exceeded 95% memory budget`), on the piece
            // `exce`: one literal for both, which also stands for the host
            // family's `exceeded memory limit`.
            "exceeded",
            // A first-person report of a kill in prose (`I get the error
            // "killed"`): on the piece `ille` that `Killed` needs.
            // Also the out-of-memory killer named in prose (`the OOM killer
            // would start taking out ...`): one literal, `kille`, for both.
            "kille",
            // The same kill told in Chinese (`直接被杀死`): `杀死`, the piece
            // bash's `已杀死` needs, stands for both, so the prefilter
            // gains no literal.
            "杀死",
            "Killed",
            "return code = -9",
            "Traceback (most recent call last)",
            // Each of these holds a piece the prefilter already searches
            // for (`rror`, `what`, ` to `, `ailu`, `UT_O`, `NVRM`):
            // a traceback's last line (`MemoryError`, NumPy's
            // `_ArrayMemoryError`), a C++ exception's `what():` (a bare
            // `std::bad_alloc`, boost.compute's OpenCL status text), the TPU
            // runtime's reservation, Spark's task failure line (an
            // exception whose class says OOM), oneDNN's OpenCL status, the
            // NVIDIA kernel driver's failed bring-up.
            "MemoryError",
            // An exception whose class says OOM, with no other trigger on
            // its line: spark-rapids' retry framework's `GpuRetryOOM: GPU
            // OutOfMemory`, `GpuSplitAndRetryOOM: GPU OutOfMemory: could not
            // split inputs and retry` (`CpuRetryOOM`: `CPU OutOfMemory`), on
            // the key `OutOf` other families search for already.
            "OutOfMemory",
            // A GPU library's allocation status text (`Device allocation
            // error`), under the `rror` literal.
            "allocation error",
            "what():",
            "Attempting to reserve",
            "failure: Lost task",
            "CL_OUT_OF_HOST_MEMORY",
            "NVRM: ",
            // ROCr's fault handler: on the piece ` fau` it shares with
            // `Segmentation fault`.
            "Memory access fault by GPU node-",
            // Intel's Xe driver's engine fault, both spellings: on the
            // piece `rror` the status tables need.
            "Engine memory CAT error",
            "Engine memory cat error",
            // Vulkan-Hpp's lost device and MindSpore's Ascend bring-up,
            // under the `rror` literal (MindSpore raises a RuntimeError).
            "DeviceLostError",
            "Error: Ascend kernel runtime initialization failed",
            // libstdc++'s `terminate called after throwing an instance of`
            // (the class it quotes may state the failure: Paddle's
            // BadAlloc) and Intel's compute runtime's `Abort was called at
            // N line`: one literal for both, on the piece `led `.
            "called a",
            // The CUDA driver's core dump on a GPU exception, on the piece
            // `able` of `variable`.
            "CUDA_COREDUMP_SHOW_PROGRESS environment variable",
        ]
    }

    /// The launcher's `return code = -9`; elsewhere its patterns match
    /// digits and hex digits as a class.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&["return code"])
    }

    fn start(&self, line: &str) -> Option<usize> {
        let (statement, start) = find(line)?;
        // The message is the whole line: evidence often comes first.
        Some(match statement {
            Statement::Segfault | Statement::Sigkill | Statement::AllocatorSentence => start,
            _ => 0,
        })
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        let first = lines.first().and_then(|l| find(l)).map(|(s, _)| s);
        if first == Some(Statement::ProseKilled) {
            return false;
        }
        if first == Some(Statement::ProseReport) {
            // The poster's next sentences, across one blank line, while
            // they state the figures of the failure; never the message
            // itself, pasted after the words (a family reads it).
            return if next.trim().is_empty() {
                lines.len() == 1
            } else {
                lines.len() <= 3
                    && prose_figures(next).iter().any(Option::is_some)
                    && !starts_another_family(next)
            };
        }
        if lines.len() >= 12 || next.trim().is_empty() || starts_another_family(next) {
            return false;
        }
        let Some(first) = first else {
            return false;
        };
        match first {
            Statement::Segfault
            | Statement::Sigkill
            | Statement::DeviceLost
            | Statement::NotebookHeader => false,
            // A terminal wrapped the warning at a fixed width.
            Statement::WatchdogStuck => !next.starts_with('['),
            _ => {
                let trimmed = next.trim_start();
                find(next).is_some()
                    || next.starts_with([' ', '\t'])
                    || patterns().request_line.is_match(next)
                    || [
                        "Possible Cause",
                        "Solution",
                        "TraceBack",
                        "Line of code",
                        "File ",
                        "at [",
                        "at /",
                        "[BM_CHECK]",
                        "[STREAM_CHECK",
                    ]
                    .iter()
                    .any(|s| trimmed.starts_with(s))
            }
        }
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        let whole_first = format!("{}{first}", message.prefix);
        let (statement, _) = find(&whole_first).or_else(|| find(first))?;
        let (text, repeats) = collapse_repeats(message.lines, |l| l == first.as_str());
        let joined = message.joined();
        let p = patterns();
        // A later line may say why an allocation failed.
        let exhausted = statement == Statement::Exhausted
            || p.statements
                .first()
                .is_some_and(|(_, re)| re.is_match(&joined))
            // TensorFlow raises `ResourceExhaustedError` when memory ran
            // out: with a failed allocation, the class states it.
            || (statement == Statement::AllocFailed
                && leading_exception(&whole_first)
                    .is_some_and(|class| class.ends_with("ResourceExhaustedError")));
        // RMM's exception is a `std::bad_alloc` about device memory.
        let host = if statement == Statement::ProseReport {
            prose_names_host(&joined)
        } else {
            p.host.is_match(&joined)
                && !starts_with_device(&joined)
                && !p.device_allocator.is_match(&joined)
        };
        let kind = match statement {
            Statement::WatchdogStuck => Kind::NcclTimeout,
            Statement::DeviceLost => Kind::GpuFallenOffBus,
            Statement::Segfault => Kind::FatalSignal,
            Statement::Sigkill => Kind::HostOomKilled,
            Statement::AllocatorSentence => Kind::GenericOom,
            Statement::NotebookHeader if host => Kind::HostOom,
            Statement::NotebookHeader => Kind::GenericOom,
            Statement::ProseReport if host => Kind::HostOom,
            Statement::ProseReport => Kind::GenericOom,
            Statement::ProseKilled => Kind::HostOomKilled,
            Statement::RuntimeFault => Kind::GpuRuntimeError,
            _ if exhausted && host => Kind::HostOom,
            _ if exhausted => Kind::GenericOom,
            _ => Kind::LibraryAllocFailed,
        };
        let mut finding = message.finding(kind, text.trim_end().to_string());
        finding.occurrences += repeats as u64;
        if finding.exception.is_none() {
            finding.exception = leading_exception(first);
        }
        let mut reporter = reporter(&whole_first, finding.exception.as_deref(), statement);
        // Unnamed by its first line: the message's later lines may name the
        // program (a frame of its namespace, its source tree in a path).
        // Paddle's allocators are the only throwers of its BadAlloc.
        if whole_first.contains("paddle::memory::allocation::BadAlloc") {
            reporter = crate::i18n::reporter::PADDLE_ALLOCATOR.en.into();
        }
        if reporter == crate::i18n::reporter::UNRECOGNISED.en {
            if let Some(name) = program_named_later(&finding.text) {
                reporter = name.into();
            }
        }
        // TensorFlow's runtime errors end with the op node that failed
        // (`[[{{node bert/encoder/.../mul}}]]`): the error is TensorFlow's.
        if let Some(node) = super::tensorflow::annotated_node(&finding.text) {
            if reporter == crate::i18n::reporter::UNRECOGNISED.en {
                reporter = "TensorFlow".into();
            }
            finding.facts.insert(fact::NODE.into(), node);
        }
        finding.facts.insert(fact::REPORTED_BY.into(), reporter);
        // A C++ `std::bad_alloc` alone names no memory: `operator new`
        // failed, on the host or in a device allocator that throws it.
        let unknown = (!exhausted || statement == Statement::ProseReport)
            && !host
            && (p.bad_alloc.is_match(&joined) || statement == Statement::ProseReport)
            && !p.device_words.is_match(&joined);
        finding.facts.insert(
            fact::MEMORY.into(),
            if unknown {
                "unknown"
            } else if host {
                "host"
            } else {
                "device"
            }
            .into(),
        );

        match statement {
            Statement::Segfault => {
                finding.facts.insert(fact::SIGNAL.into(), "SIGSEGV".into());
            }
            Statement::Sigkill => {
                finding.facts.insert(fact::SIGNAL.into(), "SIGKILL".into());
                finding.facts.insert("exit_code".into(), "-9".into());
            }
            Statement::RuntimeFault => runtime_fault(&mut finding, &joined),
            Statement::ProseKilled => {
                finding.backend = Some("cpu".into());
                finding
                    .facts
                    .insert("stated_in_prose".into(), "true".into());
                finding
                    .facts
                    .insert(fact::SIGNAL.into(), "SIGKILL (9)".into());
                if names_oom_killer(&joined) {
                    finding.era = Some(crate::record::Era::Kernel);
                    finding.category = crate::record::Category::Oom;
                } else {
                    finding.era = Some(crate::record::Era::Shell);
                    finding.category = crate::record::Category::LikelyOom;
                }
            }
            Statement::ProseReport => {
                let [total, requested] = prose_figures(&joined);
                finding.sizes.total_bytes = total;
                finding.sizes.requested_bytes = requested;
                finding
                    .facts
                    .insert("stated_in_prose".into(), "true".into());
                let device = joined.to_ascii_lowercase();
                finding.backend = ["cuda", "xpu", "hip", "rocm", "mps", "npu"]
                    .into_iter()
                    .find(|b| {
                        device.contains(&format!("{b} out of memory"))
                            || device.contains(&format!("{b} outofmemory"))
                    })
                    .map(|b| if b == "rocm" { "hip" } else { b }.to_string());
            }
            Statement::WatchdogStuck => {
                if let Some(c) = p.watchdog_seconds.captures(&joined) {
                    if let Ok(seconds) = c[1].parse::<u64>() {
                        // The heartbeat monitor's limit, not a collective's
                        // timeout: kept apart so that no explanation calls it one.
                        finding
                            .facts
                            .insert("heartbeat_timeout_ms".into(), (seconds * 1000).to_string());
                    }
                }
            }
            _ => read_sizes(&mut finding, &joined),
        }
        if let Some(c) = p.ggml_buffer.captures(&joined) {
            ggml_buffer(&mut finding, &c[1], c.get(2).map(|m| m.as_str()));
        }
        if let Some(entry) = opencl_status(&joined) {
            super::status::record_code(&mut finding, "opencl", entry);
        }
        Some(finding)
    }
}

/// Whether a family that knows its stack starts on `next`: the grammar
/// never takes a line from one (a wrapped PyTorch message goes on with
/// `Tried to allocate`, which PyTorch's family reads).
fn starts_another_family(next: &str) -> bool {
    super::FAMILIES
        .iter()
        // Families are zero-sized: tell this one by its own trigger list.
        .filter(|family| !std::ptr::eq(family.triggers(), Grammar.triggers()))
        .any(|family| family.start(next).is_some_and(|at| !is_mention(next, at)))
}

/// Whether the message names the device before any host word (`out of GPU
/// and shared host memory` is the GPU's).
fn starts_with_device(text: &str) -> bool {
    let p = patterns();
    match (p.device_words.find(text), p.host.find(text)) {
        (Some(d), Some(h)) => d.start() < h.start() && !text.contains("cudaHostAlloc"),
        _ => false,
    }
}

/// The first `SomeError: ` or `Some_Failure(EL0004): ` in the message, after
/// whatever log prefix the normaliser left (`[PID: 210907] <time> `).
fn leading_exception(line: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(r"(?:^|[\s\]])((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Failure|NotMet|OOM)(?:\(\w+\))?)(?::\s|\s*$)")
    })
    .captures(line)
    .map(|c| c[1].to_string())
    .or_else(|| exception_name(line))
}

/// Who reported it: a library's source path, a logger's tag, the class.
fn reporter(line: &str, exception: Option<&str>, statement: Statement) -> String {
    use crate::i18n::reporter as R;
    let p = patterns();
    match statement {
        Statement::WatchdogStuck => return R::NCCL_WATCHDOG.en.into(),
        Statement::Segfault => return R::SHELL_SEGFAULT.en.into(),
        Statement::AllocatorSentence => return R::TORCH_CACHING_ALLOCATOR.en.into(),
        Statement::DeviceLost => return R::NVML.en.into(),
        // The stack the poster names (`cuda out of memory`); a device word
        // alone (`GPU`, `VRAM`) names none.
        Statement::ProseReport => {
            let lower = line.to_ascii_lowercase();
            if let Some(name) = [
                ("cuda", "CUDA"),
                ("xpu", "XPU"),
                ("hip", "HIP"),
                ("rocm", "ROCm"),
                ("mps", "MPS"),
                ("npu", "NPU"),
            ]
            .iter()
            .find(|(word, _)| lower.contains(&format!("{word} out of memory")))
            .map(|(_, name)| *name)
            {
                return name.into();
            }
        }
        Statement::RuntimeFault => return fault_reporter(line).into(),
        Statement::NotebookHeader => {
            if let Some(c) = p
                .statements
                .iter()
                .find(|(s, _)| *s == Statement::NotebookHeader)
                .and_then(|(_, re)| re.captures(line))
            {
                return c[1].to_string();
            }
        }
        _ => {}
    }
    // Programs whose own prefix names them (FFmpeg's log context, Ray's
    // raylet, MLX's Metal backend).
    if let Some(c) = p.ffmpeg_context.captures(line) {
        return format!("FFmpeg ({})", &c[1]);
    }
    // A GPU kernel driver's own log line (`nvgpu: 17000000.gpu ...`,
    // `NVRM: ...`), once the kernel log's prefix is gone.
    if line.trim_start().starts_with("nvgpu:") {
        return R::JETSON_NVGPU.en.into();
    }
    if line.trim_start().starts_with("NVRM:") {
        return R::NVRM.en.into();
    }
    // An NVENC encoder's own log (`nvenc : Error on nvEncOpenEncodeSessionEx: 10 ...`).
    if line.trim_start().starts_with("nvenc : ") {
        return R::NVENC.en.into();
    }
    if super::status::shows_tensorrt(line) {
        return "TensorRT".into();
    }
    // Ollama's check before it loads a model (its llm server's wording).
    if line.contains("requires more system memory") {
        return R::OLLAMA_CHECK.en.into();
    }
    if line.contains("Your session crashed after using all available RAM") {
        return "Google Colab".into();
    }
    if line.contains("(raylet)") || line.contains("running low on memory") {
        return R::RAY_MONITOR.en.into();
    }
    if line.contains("[METAL]") {
        return R::MLX_METAL.en.into();
    }
    if line.contains("Ioctl failed") && line.contains("dxgk") {
        return R::WSL_DRIVER.en.into();
    }
    if line.contains("GPU plugin") && line.contains("CL_OUT_OF_RESOURCES") {
        return R::OPENVINO_GPU.en.into();
    }
    if line.contains("onednn_verbose") {
        return "oneDNN (OpenCL)".into();
    }
    // The text OpenCL wrappers (boost.compute, ...) print for its status.
    if let Some(entry) = opencl_status(line) {
        return R::opencl_call(entry.name);
    }
    if let Some(name) = program_named_in(line) {
        return name.into();
    }
    // A logger's own name before its level (`[TensorRT-LLM][ERROR] `), even
    // where another program's status chain wraps the line.
    if let Some(c) = p.logger_name.captures(line) {
        return c[1].to_string();
    }
    if let Some(tag) = p
        .reporter_tag
        .captures_iter(line)
        .map(|c| c[1].to_string())
        .find(|t| {
            t.contains("::")
                || t.contains('_') && !t.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        })
    {
        return tag;
    }
    if let Some(c) = p.reporter_path.captures(line) {
        let absolute = line[..c.get(1).map_or(0, |m| m.start())].ends_with(['/', '\\', ':']);
        return program_of_path(&c[1], absolute);
    }
    if let Some(class) = exception {
        return class.to_string();
    }
    if patterns().bad_alloc.is_match(line) {
        return R::CPP_BAD_ALLOC.en.into();
    }
    R::UNRECOGNISED.en.into()
}

/// The names `program_named_in` gives, for the explainer to sort by kind.
pub mod program_names {
    pub const BLENDER: &str = "Blender Cycles";
    pub const LUXCORE: &str = "LuxCore";
    pub const LUISA: &str = "LuisaRender";
    pub const MITSUBA: &str = "Mitsuba";
    pub const FFMPEG: &str = "FFmpeg";
    pub const OPENCV: &str = "OpenCV";
    pub const INFINITAM: &str = "InfiniTAM";
    pub const ELASTICFUSION: &str = "ElasticFusion";
    pub const BUNDLEFUSION: &str = "BundleFusion";
    pub const NCNN_VULKAN: &str = crate::i18n::reporter::NCNN_VULKAN_TOOL.en;
    pub const MXNET: &str = "MXNet";
    pub const DIRECTML: &str = "torch-directml";
    pub const SPARK_RAPIDS: &str = "Spark RAPIDS";
    pub const RMM: &str = "RMM";
    pub const CUDF: &str = "cuDF";
    pub const DASK_CUDA: &str = "Dask-CUDA";
    pub const OLLAMA: &str = "Ollama";
    pub const MANAGED_CUDA_NPP: &str = "ManagedCuda (NPP)";
    pub const CUPY: &str = "CuPy";
}

/// Marks (lowercase) of a program in a message's later lines, read only
/// where its first line names none: a source tree in a path (Ollama builds
/// ggml under `ollama/ml/backend/ggml`), a .NET stack frame's namespace
/// (`at ManagedCuda.NPP.NPPImage_8uC3..ctor`), a Cython frame of CuPy's
/// allocator (`cupy/cuda/memory.pyx`). The first line's own marks
/// (`PROGRAM_MARKS`) win: a ggml buffer named there stays ggml's.
const LATER_PROGRAM_MARKS: &[(&str, &str)] = {
    use program_names as n;
    &[
        ("/ollama/", n::OLLAMA),
        ("ollama[", n::OLLAMA),
        ("managedcuda.npp", n::MANAGED_CUDA_NPP),
        ("cupy/cuda/memory.pyx", n::CUPY),
        ("cupy.cuda.memory.", n::CUPY),
    ]
};

/// The program a message's text names in its later lines.
fn program_named_later(text: &str) -> Option<&'static str> {
    let text = text.to_ascii_lowercase();
    LATER_PROGRAM_MARKS
        .iter()
        .find(|(mark, _)| text.contains(mark))
        .map(|&(_, name)| name)
}

/// Marks (lowercase) that name a program: project names in source paths,
/// and messages only one program prints (Cycles' "System is out of GPU
/// memory", its `cuMemAlloc(&device_pointer, size)` and its error names
/// before the call, Enoki's
/// `cuda_malloc()`, OpenCV's `-217` Gpu API call error, ncnn's
/// `vkAllocateMemory failed -2`, DirectML's "not enough GPU video memory").
const PROGRAM_MARKS: &[(&str, &str)] = {
    use program_names as n;
    &[
        ("blender", n::BLENDER),
        ("system is out of gpu memory", n::BLENDER),
        ("cumemalloc(&device_pointer", n::BLENDER),
        // Cycles' own form of a driver error: the name without CUDA_ERROR_,
        // then the call (`CUDA error: ILLEGAL_ADDRESS in cuCtxSynchronize()`).
        ("illegal_address in cu", n::BLENDER),
        ("launch_failed in cu", n::BLENDER),
        ("luxcore", n::LUXCORE),
        ("luxrays", n::LUXCORE),
        ("luisarender", n::LUISA),
        ("mitsuba", n::MITSUBA),
        ("drjit", n::MITSUBA),
        ("cuda_malloc(): out of memory", n::MITSUBA),
        ("ffmpeg", n::FFMPEG),
        ("_nvenc", n::FFMPEG),
        ("opencv", n::OPENCV),
        ("cv::cuda", n::OPENCV),
        ("(-217:gpu api call)", n::OPENCV),
        ("infinitam", n::INFINITAM),
        ("itmlib", n::INFINITAM),
        ("elasticfusion", n::ELASTICFUSION),
        ("bundlefusion", n::BUNDLEFUSION),
        ("-ncnn-vulkan", n::NCNN_VULKAN),
        ("vkallocatememory failed -", n::NCNN_VULKAN),
        ("mxnet", n::MXNET),
        ("not enough gpu video memory available", n::DIRECTML),
        ("directml", n::DIRECTML),
        // RAPIDS' data libraries: Spark's GPU plugin (its Java packages and
        // its retry framework's exceptions), RMM's allocator (its failure
        // prefix, its headers' directory, its pool's own message), cuDF,
        // Dask's CUDA workers. Spark RAPIDS and cuDF allocate through RMM,
        // so their marks come first.
        ("com.nvidia.spark.rapids", n::SPARK_RAPIDS),
        ("spark.rapids.", n::SPARK_RAPIDS),
        ("splitandretryoom", n::SPARK_RAPIDS),
        ("gpuretryoom", n::SPARK_RAPIDS),
        ("dask_cuda", n::DASK_CUDA),
        ("dask-cuda", n::DASK_CUDA),
        ("dask_cudf", n::DASK_CUDA),
        ("cudf::", n::CUDF),
        ("/cudf/", n::CUDF),
        ("rmm failure", n::RMM),
        ("rmm/mr/", n::RMM),
        ("rmm::", n::RMM),
        ("maximum pool size exceeded", n::RMM),
    ]
};

/// The program a text names, by its marks.
pub fn program_named_in(text: &str) -> Option<&'static str> {
    let text = text.to_ascii_lowercase();
    PROGRAM_MARKS
        .iter()
        .find(|(mark, _)| text.contains(mark))
        .map(|&(_, name)| name)
}

/// Projects whose source directory names them, for a reporter read from
/// a source path (`mindspore/ccsrc/...`, `c10/cuda/...`).
const PROJECT_DIRECTORIES: &[(&str, &str)] = &[
    ("mindspore", "MindSpore"),
    ("tensorflow", "TensorFlow"),
    ("paddle", "PaddlePaddle"),
    ("caffe", "Caffe"),
    ("caffe2", "Caffe2"),
    ("c10", "PyTorch"),
    ("aten", "PyTorch"),
    ("torch", "PyTorch"),
    ("onnxruntime", "ONNX Runtime"),
    ("ncnn", "ncnn"),
    ("xgboost", "XGBoost"),
    ("faiss", "Faiss"),
    ("darknet", "darknet"),
];

/// Directories that name no program: where sources, builds and homes live.
const PLAIN_DIRECTORIES: &[&str] = &[
    "src",
    "source",
    "include",
    "lib",
    "libs",
    "modules",
    "core",
    "home",
    "usr",
    "opt",
    "media",
    "mnt",
    "build",
    "third_party",
    "thirdparty",
    "external",
    "deps",
    "vendor",
    "tmp",
    "var",
    "root",
    "users",
    "workspace",
    "code",
    "projects",
    "project",
    ".",
    "..",
];

/// Who a source path says reported the message: the project a directory
/// names, the first directory of a relative path when it is a project's
/// (`InfiniTAM/ITMLib/...`), otherwise the file, said as native code.
fn program_of_path(path: &str, absolute: bool) -> String {
    let path = path.trim_start_matches('/');
    let parts: Vec<&str> = path.split('/').collect();
    let (file, directories) = parts.split_last().unwrap_or((&path, &[]));
    if let Some(name) = directories.iter().find_map(|d| {
        PROJECT_DIRECTORIES
            .iter()
            .find(|(dir, _)| d.eq_ignore_ascii_case(dir))
            .map(|&(_, name)| name)
    }) {
        return name.into();
    }
    match directories.first() {
        Some(first)
            if !absolute
                && first.chars().any(|c| c.is_ascii_alphabetic())
                && !PLAIN_DIRECTORIES.contains(&first.to_ascii_lowercase().as_str()) =>
        {
            (*first).to_string()
        }
        _ => crate::i18n::reporter::native_code(file),
    }
}

/// Who reports a fault that is not memory exhaustion.
fn fault_reporter(text: &str) -> &'static str {
    if text.contains("HSA_STATUS_ERROR_") || text.contains("Memory access fault by GPU") {
        crate::i18n::reporter::ROCM_HSA.en
    } else if text.contains("NVRM")
        || text.contains("RmInitAdapter")
        || text.contains("rm_init_adapter")
    {
        crate::i18n::reporter::NVRM.en
    } else if text.contains("vk::DeviceLostError") {
        crate::i18n::reporter::VULKAN_HPP.en
    } else if text.contains("Ascend kernel runtime initialization failed") {
        crate::i18n::reporter::MINDSPORE_ASCEND.en
    } else if text.contains("Abort was called at") {
        crate::i18n::reporter::INTEL_COMPUTE_RUNTIME.en
    } else if text.contains("GPU coredump generation") {
        crate::i18n::reporter::CUDA_DRIVER_COREDUMP.en
    } else if text.contains("Display driver") {
        crate::i18n::reporter::WINDOWS_TDR.en
    } else if xe_cat_error(text) {
        crate::i18n::reporter::INTEL_XE.en
    } else {
        crate::i18n::reporter::JETSON_NVGPU.en
    }
}

/// The status a GPU runtime fault names, for the runtime-error explainer:
/// ROCr's `HSA_STATUS_ERROR_X: meaning code: 0x1008`, nvgpu's MMU fault,
/// Windows' TDR.
fn runtime_fault(finding: &mut Finding, text: &str) {
    static HSA: OnceLock<Regex> = OnceLock::new();
    let hsa = HSA.get_or_init(|| {
        constant_regex(
            r"\b(HSA_STATUS_ERROR_[A-Z_]+):?\s*([^\n]*?)\s*(?:code: (0x[0-9a-fA-F]+))?\s*$",
        )
    });
    let (title, name, meaning) = if let Some(c) = hsa.captures(text) {
        if let Some(code) = c.get(3) {
            finding
                .facts
                .insert("error_code".into(), code.as_str().to_string());
        }
        (
            crate::i18n::reporter::ROCM_RUNTIME_HSA.en,
            c[1].to_string(),
            c[2].trim_end_matches('.').to_string() + ".",
        )
    } else if text.contains("Memory access fault by GPU") {
        if let Some(c) = patterns().hsa_node.captures(text) {
            // ROCr's agent number, not a device index: node 0 is the CPU.
            finding.facts.insert("hsa_node".into(), c[1].to_string());
        }
        (
            crate::i18n::reporter::ROCM_RUNTIME_HSA.en,
            "Memory access fault".to_string(),
            "A kernel on the AMD GPU touched an unmapped address. It read or wrote an address no page maps (`Page not present or supervisor privilege`): ROCm's counterpart of CUDA's illegal memory access, a bad GPU pointer or an index out of range, not memory exhaustion.".to_string(),
        )
    } else if text.contains("RmInitAdapter")
        || text.contains("rm_init_adapter")
        || text.contains("Cannot attach gpu")
    {
        (
            crate::i18n::reporter::NVIDIA_KERNEL_DRIVER_NVRM.en,
            "RmInitAdapter failed".to_string(),
            "The NVIDIA kernel driver could not initialise the GPU. RmInitAdapter failed: the card did not come up, through a driver that does not match it, a GPU that fell off the PCIe bus or failed, or power or firmware trouble; not memory exhaustion.".to_string(),
        )
    } else if xe_cat_error(text) {
        (
            crate::i18n::reporter::INTEL_XE_KERNEL_DRIVER.en,
            XE_CAT_ERROR.to_string(),
            "The GPU's firmware (GuC) reported a catastrophic memory error for an engine's work: it touched a GPU address no page maps, and the Xe driver reset the engine and cancelled the job. A bad GPU pointer, a buffer used after it was freed, or a driver or firmware fault; not memory exhaustion.".to_string(),
        )
    } else if text.contains("vk::DeviceLostError") {
        (
            crate::i18n::reporter::VULKAN_HPP.en,
            "VK_ERROR_DEVICE_LOST".to_string(),
            "Vulkan-Hpp threw vk::DeviceLostError, its exception for VK_ERROR_DEVICE_LOST: the logical or physical device was lost (a GPU hang or fault that made the driver reset it, a driver timeout, or the device removed), and nothing uncaught it; not memory exhaustion.".to_string(),
        )
    } else if text.contains("Ascend kernel runtime initialization failed") {
        (
            crate::i18n::reporter::MINDSPORE_ASCEND.en,
            "Ascend kernel runtime initialization failed".to_string(),
            "MindSpore could not initialise the Ascend NPU's runtime: the device could not be opened or set up (occupied by another process, a driver, firmware and CANN that do not match, a device ID that does not exist, or not enough device memory for the runtime's own pool); the `Ascend Error Message` section printed with it names the CANN error.".to_string(),
        )
    } else if text.contains("Abort was called at") {
        (
            crate::i18n::reporter::INTEL_COMPUTE_RUNTIME.en,
            INTEL_UNRECOVERABLE.to_string(),
            "Intel's GPU compute runtime (NEO, behind Level Zero and OpenCL) stopped the process at an internal check it cannot recover from (its UNRECOVERABLE_IF); the line after it names the runtime's source file. A state the runtime does not handle or a bug in it, often after an earlier error; not memory exhaustion.".to_string(),
        )
    } else if text.contains("GPU coredump generation") {
        (
            crate::i18n::reporter::CUDA_DRIVER_COREDUMP.en,
            CUDA_GPU_COREDUMP.to_string(),
            "The CUDA driver started writing a GPU core dump, which it does (with CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1) when a kernel raised a GPU exception: an illegal or misaligned address, an illegal instruction, a trap or a device-side assert. The process then aborts or its next CUDA call fails; not memory exhaustion.".to_string(),
        )
    } else if text.contains("Display driver") {
        (
            crate::i18n::reporter::WINDOWS_DISPLAY_DRIVER.en,
            "TDR (timeout detection and recovery)".to_string(),
            "Windows reset the GPU's driver because the GPU did not answer within its timeout (two seconds by default): a kernel that ran too long or a GPU that hung, not memory exhaustion.".to_string(),
        )
    } else {
        (
            crate::i18n::reporter::JETSON_GPU_DRIVER.en,
            "MMU fault".to_string(),
            "The GPU's memory management unit faulted on an address no page maps (a bad GPU pointer, as CUDA's illegal memory access), and the driver marked the channel with an error; not memory exhaustion.".to_string(),
        )
    };
    finding.facts.insert("table_title".into(), title.into());
    finding.facts.insert(fact::ERROR_NAME.into(), name);
    finding.facts.insert("meaning".into(), meaning);
    finding
        .facts
        .insert("code_class".into(), "not_memory".into());
}

/// The name the fault family writes for the Xe driver's engine fault; the
/// advice table keys its row on it.
const XE_CAT_ERROR: &str = "Engine memory CAT error";

/// The names written for Intel's compute runtime's unrecoverable check and
/// the CUDA driver's core dump on a GPU exception (advice rows key on them).
const INTEL_UNRECOVERABLE: &str = "UNRECOVERABLE_IF";
const CUDA_GPU_COREDUMP: &str = "GPU exception";

/// Whether the text holds Intel's Xe driver's engine fault, in either
/// spelling its releases print.
fn xe_cat_error(text: &str) -> bool {
    text.contains("Engine memory CAT error") || text.contains("Engine memory cat error")
}

/// The OpenCL status a message prints: oneDNN's verbose `errcode -6,NAME,`,
/// OpenVINO's and others' bare name, or the text wrappers print for it
/// (boost.compute's `Memory Object Allocation Failure`, most others'
/// `Memory object allocation failure`, `Out of host memory`).
fn opencl_status(text: &str) -> Option<&'static crate::codes::Entry> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        constant_regex(
            r"\b(CL_[A-Z_]+)\b|(?i:\b(memory object allocation failure|out of host memory)\b)",
        )
    });
    let table = crate::codes::table("opencl")?;
    re.captures_iter(text).find_map(|c| {
        if let Some(name) = c.get(1) {
            return table.entries.iter().find(|e| e.name == name.as_str());
        }
        let text = c.get(2)?.as_str().to_ascii_lowercase();
        let name = if text.starts_with("memory") {
            "CL_MEM_OBJECT_ALLOCATION_FAILURE"
        } else {
            "CL_OUT_OF_HOST_MEMORY"
        };
        table.entries.iter().find(|e| e.name == name)
    })
}

/// ggml's backend buffer that could not be allocated: the backend and its
/// device index, as ggml names the buffer type.
fn ggml_buffer(finding: &mut Finding, backend: &str, index: Option<&str>) {
    finding.backend = Some(backend.to_ascii_lowercase());
    finding.facts.insert(
        fact::REPORTED_BY.into(),
        crate::i18n::reporter::ggml_buffer(&format!("{backend}{}", index.unwrap_or(""))),
    );
    if backend != "CPU" {
        finding.device = index.and_then(|i| i.parse().ok());
    }
}

/// Every size and device the message states.
fn read_sizes(finding: &mut Finding, text: &str) {
    let p = patterns();
    let number = |re: &Regex| -> Option<u64> { re.captures(text)?.get(1)?.as_str().parse().ok() };
    for (what, re) in &p.bytes_pairs {
        let Some(value) = number(re) else { continue };
        match *what {
            "requested" => {
                finding.sizes.requested_bytes = finding.sizes.requested_bytes.or(Some(value))
            }
            "total" => finding.sizes.total_bytes = Some(value),
            "used" => {
                finding.sizes.extra.insert("used_bytes".into(), Some(value));
            }
            _ => {
                finding
                    .sizes
                    .extra
                    .insert("limit_bytes".into(), Some(value));
            }
        }
    }
    if let Some(c) = p.hex_size.captures(text) {
        if let Ok(value) = u64::from_str_radix(c[1].trim_start_matches("0x"), 16) {
            finding.sizes.requested_bytes = finding.sizes.requested_bytes.or(Some(value));
        }
    }
    if finding.sizes.requested_bytes.is_none() {
        finding.sizes.requested_bytes = number(&p.dec_size);
    }
    if let Some(c) = p.system_memory.captures(text) {
        finding.sizes.requested_bytes = crate::units::to_bytes(&c[1], &c[2]).ok();
        finding.sizes.free_bytes = crate::units::to_bytes(&c[3], &c[4]).ok();
    }
    if let Some(c) = p.enforce.captures(text) {
        finding.sizes.requested_bytes = c[3].parse().ok();
        finding.sizes.free_bytes = c[4].parse().ok();
    }
    // PyTorch's sentence form: read what is legible.
    let sized = |re: &Regex| {
        re.captures(text)
            .and_then(|c| crate::units::to_bytes(&c[1], &c[2]).ok())
    };
    if let Some(requested) = sized(&p.xla_sized) {
        finding.sizes.requested_bytes = Some(requested);
        finding.sizes.free_bytes = sized(&p.xla_free).or(finding.sizes.free_bytes);
        // The TPU runtime's reservation at the bottom of memory: `There are
        // 14.74G free, 0B reserved, and 4.62G reservable.`
        if let Some(reserved) = sized(&p.xla_reserved) {
            finding.sizes.reserved_bytes = Some(reserved);
        }
        if let Some(reservable) = sized(&p.xla_reservable) {
            finding
                .sizes
                .extra
                .insert("reservable_bytes".into(), Some(reservable));
        }
    }
    if let Some(c) = p.xla_space.captures(text) {
        let size = |at: usize| {
            let unit = c.get(at + 1).map_or("", |m| m.as_str());
            let unit = if unit.is_empty() { "B" } else { unit };
            crate::units::to_bytes(c.get(at)?.as_str(), unit).ok()
        };
        finding
            .facts
            .insert("memory_space".into(), c[1].to_string());
        finding.sizes.total_bytes = size(4);
        finding.sizes.extra.insert("used_bytes".into(), size(2));
        if c.get(6).is_some() {
            finding.sizes.extra.insert("exceeded_bytes".into(), size(6));
        }
    }
    if let Some(requested) = sized(&p.numpy_size) {
        finding.sizes.requested_bytes = Some(requested);
    }
    if let Some(requested) = sized(&p.sized) {
        finding.sizes.requested_bytes = Some(requested);
        finding.sizes.total_bytes = sized(&p.sentence_total).or(finding.sizes.total_bytes);
        finding.sizes.free_bytes = sized(&p.sentence_free).or(finding.sizes.free_bytes);
    }
    // A request stated in its own words is the failed one (TensorRT's
    // autotuner may name a larger tactic buffer it skipped before it).
    if let Some(c) = p.request_line.captures(text) {
        let stated = c
            .get(1)
            .or_else(|| c.get(2))
            .and_then(|m| m.as_str().parse().ok());
        finding.sizes.requested_bytes = stated.or(finding.sizes.requested_bytes);
    }
    // `CUDA device 01:00.0` is a PCI address, not an index.
    finding.device = p
        .device_id
        .captures_iter(text)
        .filter_map(|c| c.get(1))
        .find(|m| !text[m.end()..].starts_with(':'))
        .and_then(|m| m.as_str().parse().ok());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Category;

    fn collect(lines: &[&str]) -> Option<Finding> {
        crate::detect::decode_lines(&Grammar, lines)
    }

    /// A message nested in another program's status chain (real pastes:
    /// Triton's model load failure and its model-status table, around
    /// TensorRT-LLM's own line): the wrapper's words are not a poster's,
    /// and the nested logger names the program. A poster's condition
    /// before a message with no chain stays prose.
    #[test]
    fn a_message_nested_in_a_status_chain_is_the_programs() {
        for text in [
            "Model 'tensorrt_llm' loading failed with error: version 1 is at UNAVAILABLE state: Internal: unexpected error when creating modelInstanceState: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)",
            "| tensorrt_llm | 1       | UNAVAILABLE: Internal: unexpected error when creating modelInstanceState: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/a |\n|              |         | pp/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)                                                                                                                            |",
        ] {
            let found = scan(text);
            assert_eq!(found.len(), 1, "{text}");
            assert_eq!(found[0].category, Category::Oom);
            assert_eq!(found[0].facts[fact::REPORTED_BY], "TensorRT-LLM");
        }
        assert!(
            scan("When loading failed with error: out of memory, lower the batch size.").is_empty()
        );
        let before =
            "Internal: unexpected error when creating modelInstanceState: [TensorRT-LLM][ERROR] ";
        assert_eq!(
            wrapped_message(before),
            Some((0, before.find("[TensorRT").unwrap_or(0)))
        );
    }

    /// exllamav2's loader when no device is left for the next module (a
    /// real Colab traceback): the card's memory named by `VRAM`; its
    /// source line quoting the string stays a mention.
    #[test]
    fn insufficient_vram_in_a_traceback() {
        let text = "Traceback (most recent call last):\n  File \"/usr/local/lib/python3.10/dist-packages/exllamav2/model.py\", line 444, in load_autosplit_gen\n    raise RuntimeError(\"Insufficient VRAM for model and cache\")\nRuntimeError: Insufficient VRAM for model and cache\n";
        let found = scan(text);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].kind, found[0].category),
            (Kind::GenericOom, Category::Oom)
        );
        assert_eq!(found[0].facts[fact::MEMORY], "device");
        assert!(
            scan("    raise RuntimeError(\"Insufficient VRAM for model and cache\")\n").is_empty()
        );
    }

    /// A program named only in a message's later lines (real pastes:
    /// fixtures/wild/2437.txt, Ollama's ROCm build; fixtures/wild/2214.txt,
    /// ManagedCuda's NPP exception); the same message with no such line
    /// stays unrecognised.
    #[test]
    fn a_program_named_in_later_lines_reports() {
        let ollama = [
            "ROCm error: out of memory",
            "  current device: 0, in function alloc build/arch/ollama-rocm-git.git/src/ollama/ml/backend/ggml/ggml/src/ggml-cuda/ggml-cuda.cu:420",
        ];
        let f = collect(&ollama).unwrap();
        assert_eq!(f.facts[fact::REPORTED_BY], program_names::OLLAMA);
        let f = collect(&ollama[..1]).unwrap();
        assert_eq!(
            f.facts[fact::REPORTED_BY],
            crate::i18n::reporter::UNRECOGNISED.en
        );
        let npp = [
            "  Message=Device allocation error",
            "  Source=NPP",
            "  StackTrace:",
            "       at ManagedCuda.NPP.NPPImage_8uC3..ctor(Int32 nWidthPixels, Int32 nHeightPixels) in d:\\Develop\\Github\\managedCuda\\NPP\\NPPImage_8uC3.cs:line 59",
        ];
        let f = collect(&npp).unwrap();
        assert_eq!(f.facts[fact::REPORTED_BY], program_names::MANAGED_CUDA_NPP);
    }

    #[test]
    fn statement_evidence_resource() {
        for (lines, kind, requested, device) in [
            // Exception class, device.
            (&["RuntimeError: [metal::malloc] Attempting to allocate 48736917632 bytes which is greater than the maximum allowed buffer size of 30150672384 bytes."][..], Kind::GenericOom, Some(48_736_917_632u64), None),
            // Exception class, allocation failed with the figures of the check.
            (&["paddle.fluid.core.EnforceNotMet: enforce allocating <= available failed, 10513462067 > 1369702144"][..], Kind::LibraryAllocFailed, Some(10_513_462_067), None),
            // Source location and log level, pinned host memory.
            (&["[ERROR] MD(14433,7fea2effd700,python):2021-12-12-14:13:43.932.181 [mindspore/ccsrc/minddata/dataset/util/arena.cc:250] Init] cudaHostAlloc failed, ret[2], out of memory"][..], Kind::HostOom, None, None),
            // A size comparison.
            (&["[ERROR] PRE_ACT(54175,fffdbcff91e0,python):2024-10-22-11:24:55.301.443 [mindspore/ccsrc/backend/common/mem_reuse/mem_dynamic_allocator.cc:392] AddMemBlockAndMemBufByEagerFree] TotalUsedMemStatistics : 29356337664 plus TotalUsedByEventMemStatistics : 0 and plus alloc size : 301990400 is more than total mem size : 29464985600."][..], Kind::GenericOom, Some(301_990_400), None),
            // An error code in a class's place; the cause on a later line.
            (&[
                "Memory_Allocation_Failure(EL0004): Failed to allocate memory requested by GE module.",
                "        Possible Cause: Available memory is insufficient.",
                "        Call rtMalloc fail, purpose: page caching, type = 2, size:3221291008, device_id:0[FUNC:Alloc][FILE:device_allocator.cc][LINE:72]",
            ][..], Kind::GenericOom, Some(3_221_291_008), Some(0)),
            // A logger's tag and a hexadecimal size.
            (&[
                "[bmlib_memory][error] bm_alloc_gmem failed, dev_id = 0, size = 0x639c00",
                "[BM_CHECK][error] BM_CHECK_RET fail /workspace/libsophon/bmlib/src/bmlib_memory.cpp: bm_malloc_device_byte_heap: 994",
            ][..], Kind::LibraryAllocFailed, Some(0x639c00), Some(0)),
            // The system as the subject.
            (&["System is out of GPU and shared host memory"][..], Kind::GenericOom, None, None),
            // A bare `std::bad_alloc` names no memory: an allocation failed.
            (&["  what():  std::bad_alloc"][..], Kind::LibraryAllocFailed, None, None),
            // A source location in parentheses after the statement.
            (&["Out of memory in cuStreamCreate(&cuda_stream_, CU_STREAM_NON_BLOCKING) (C:\\Users\\b\\intern\\cycles\\device\\cuda\\queue.cpp:21)"][..], Kind::GenericOom, None, None),
            (&["E0101 12:00:00.000000 1 allocator.cc:12] RESOURCE_EXHAUSTED: failed to allocate memory"][..], Kind::GenericOom, None, None),
            (&["[ERROR] 显存不足，请减小 batch size"][..], Kind::GenericOom, None, None),
            (&["MemoryError: Unable to allocate 3.2 GiB for an array"][..], Kind::HostOom, Some(3_435_973_837), None),
            // An API's out-of-memory constant no status table holds.
            (&["level_zero backend failed with error: 39 [UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY]"][..], Kind::GenericOom, None, None),
            // RMM's exception: a bad_alloc about device memory.
            (&["MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/opt/include/rmm/mr/device/pool_memory_resource.hpp:196: Maximum pool size exceeded"][..], Kind::GenericOom, None, None),
            // Ollama's refusal to load, both figures read.
            (&["Error: model requires more system memory (3.7 GiB) than is available (3.6 GiB)"][..], Kind::HostOom, Some(3_972_844_749), None),
            // Ray's memory monitor, after a source location.
            (&["[2023-04-19 16:22:19,798 E 329 329] (raylet) node_manager.cc:3069: 13 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons"][..], Kind::HostOom, None, None),
            // libc++abi's abort and MLX's tag.
            (&["libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory"][..], Kind::GenericOom, None, None),
            // FFmpeg's log context; NVENC's status text.
            (&["[hevc_nvenc @ 0x55f45f5f5cc0] OpenEncodeSessionEx failed: out of memory (10): (no details)"][..], Kind::GenericOom, None, None),
            (&["nvenc : Error on nvEncOpenEncodeSessionEx: 10 (NVENC indicates that the API call failed because it was unable to allocate enough memory to perform the requested operation.)"][..], Kind::GenericOom, None, None),
            // TensorRT's requested size.
            (&["[E] [virtualMemoryBuffer.cpp::resizePhysical::140] Error code 2: out of Memory (Requested size was 22942842880 bytes.)"][..], Kind::GenericOom, Some(22_942_842_880), None),
        ] {
            let f = collect(lines).unwrap_or_else(|| panic!("{lines:?}"));
            assert_eq!(f.kind, kind, "{lines:?}");
            assert_eq!(f.sizes.requested_bytes, requested, "{lines:?}");
            assert_eq!(f.device, device, "{lines:?}");
            assert!(f.facts.contains_key(fact::REPORTED_BY));
        }
    }

    /// Real messages of the fifth holdout (`fixtures/wild/NNN.txt`), one
    /// per rule: the statement, its evidence, the kind and what is read.
    #[test]
    fn fifth_holdout_classes() {
        for (line, kind, category) in [
            // Ray's worker exit detail (1406): host memory.
            ("The actor is dead because its worker process has died. Worker exit type: USER_ERROR Worker exit detail: Task was killed due to the node running low on memory.", Kind::HostOom, Category::Oom),
            // ROCr's abort after `error : ` (1437).
            (":0:rocdevice.cpp            :2652: 4238358292712 us: 48946: [tid:0x7fffd023f700] Device::callbackQueue aborting with error : HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. This error may also occur when the core runtime library needs to spawn threads or create internal OS-specific events. code: 0x1008", Kind::GpuRuntimeError, Category::Crash),
            // nvgpu's MMU fault with the kernel's `[ERR]` (1439).
            ("nvgpu: 17000000.gpu      gv11b_fb_mmu_fault_info_dump:307  [ERR]  [MMU FAULT] protected mode: 0, client type: hub, client id:  ce1, gpc id if client type is gpc: 0,", Kind::GpuRuntimeError, Category::Crash),
            // Windows' TDR, quoted in the poster's sentence (1463).
            ("Screen goes blank for 5 seconds and my Windows 7 reappears with \"Display driver stopped responding and has recovered\".", Kind::GpuRuntimeError, Category::Crash),
            // A comment mark glued to the class (1423).
            ("#XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 4.39G. That was not possible. There are 2.30G free.; (0x0x0_HBM0)", Kind::GenericOom, Category::Oom),
            // A message in bold after the poster's verb (1455, bold taken off).
            ("I am trying to offload YOLOv8 training to an Intel ARC GPU. When I try to run the  code attached, I am seeing RuntimeError: Allocation is out of device memory on current platform.", Kind::GenericOom, Category::Oom),
            // Quoted after `the error message` with a system subject (1562).
            ("I recently got a new computer, and I'm getting the error message \"System is out of GPU memory\" when going into Rendered View mode.", Kind::GenericOom, Category::Oom),
            // Ollama's sentence in quotes with both figures (1565).
            ("\"model requires more system memory (5.3 GiB) than is available (3.3 GiB)\"", Kind::HostOom, Category::Oom),
            // A lower-case `exception: ` in backticks and bold (1505).
            ("`**Caught a critical exception: cuda_malloc(): out of memory!**`", Kind::GenericOom, Category::Oom),
            // `error : ` (1549), `error - ` (1556), `in func X at line N` (1555).
            ("InfiniTAM/ITMLib/Engine/../Utils/../Objects/../../ORUtils/MemoryBlock.h(217) : cudaSafeCall() Runtime API error : out of memory.", Kind::GenericOom, Category::Oom),
            ("CUDA error - cannot allocate big buffer for DAG. ", Kind::LibraryAllocFailed, Category::LikelyOom),
            ("cu 16:40:30 cuda-0   Unexpected error CUDA error in func dev::eth::CUDAMiner::initEpoch_internal at line 123 out of memory on CUDA device 01:00.0", Kind::GenericOom, Category::Oom),
            // WSL2's dxgkrnl ENOMEM (1528), OpenVINO's CL_OUT_OF_RESOURCES (1513).
            ("misc dxg: dxgk: dxgkio_make_resident: Ioctl failed: -12   # ENOMEM", Kind::LibraryAllocFailed, Category::LikelyOom),
            ("\"Due to the driver bug any subsequent OpenCL API call will cause application hang, so GPU plugin can't finish correctly. Please try to update the driver or reduce memory consumption (use smaller batch size, less streams, lower precision, etc)to avoid CL_OUT_OF_RESOURCES exception\"", Kind::LibraryAllocFailed, Category::LikelyOom),
        ] {
            let f = collect(&[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!((f.kind, f.category), (kind, category), "{line}");
            assert!(f.facts.contains_key(fact::REPORTED_BY));
        }
        let f = collect(&["#XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 4.39G. That was not possible. There are 2.30G free.; (0x0x0_HBM0)"]).unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(4_713_726_607));
        assert_eq!(f.sizes.free_bytes, Some(2_469_606_195));
        let f = collect(&["cu 16:40:30 cuda-0   Unexpected error CUDA error in func dev::eth::CUDAMiner::initEpoch_internal at line 123 out of memory on CUDA device 01:00.0"]).unwrap();
        assert_eq!(f.device, None, "a PCI address is not a device index");
        let f = collect(&[":0:rocdevice.cpp            :2652: 4238358292712 us: 48946: [tid:0x7fffd023f700] Device::callbackQueue aborting with error : HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. code: 0x1008"]).unwrap();
        assert_eq!(
            f.facts[fact::ERROR_NAME],
            "HSA_STATUS_ERROR_OUT_OF_RESOURCES"
        );
        assert_eq!(f.facts["error_code"], "0x1008");
    }

    /// Real messages of the sixth holdout (`fixtures/wild/NNN.txt`), one per
    /// class: the kind, the category and what is read.
    #[test]
    fn sixth_holdout_classes() {
        for (line, kind, category) in [
            // A traceback's bare last line (1753); NumPy's subclass.
            ("MemoryError", Kind::HostOom, Category::Oom),
            ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.2 GiB for an array with shape (100000, 4300) and data type float64", Kind::HostOom, Category::Oom),
            // An uncaught std::bad_alloc (1641), boost.compute's OpenCL text (1718).
            ("  what():  std::bad_alloc", Kind::LibraryAllocFailed, Category::LikelyOom),
            ("  what():  Memory Object Allocation Failure", Kind::LibraryAllocFailed, Category::LikelyOom),
            // oneDNN's OpenCL status (1736).
            ("onednn_verbose,v1,primitive,error,ocl,errcode -6,CL_OUT_OF_HOST_MEMORY,src/gpu/intel/ocl/ocl_gpu_engine.cpp:261", Kind::HostOom, Category::Oom),
            // TensorFlow's capitalised status text (1709) and class (1602).
            ("2021-11-10 17:01:24.065497: W tensorflow/core/framework/op_kernel.cc:1692] OP_REQUIRES failed at tpu_execute_op.cc:266 : Resource exhausted: Attempting to reserve 5.88G at the bottom of memory. That was not possible. There are 14.74G free, 0B reserved, and 4.62G reservable.", Kind::GenericOom, Category::Oom),
            ("ResourceExhaustedError: failed to allocate memory [Op:AddV2]", Kind::GenericOom, Category::Oom),
            // The status in capitals after TensorFlow's log prefix (1803).
            ("2022-04-04 00:27:49.642414: E tensorflow/compiler/xla/xla_client/xla_util.cc:88]   OP_REQUIRES failed at tpu_execute_op.cc:266 : RESOURCE_EXHAUSTED: Attempting to reserve 6.48G at the bottom of memory. That was not possible. There are 6.78G free, 0B reserved, and 3.33G reservable.", Kind::GenericOom, Category::Oom),
            // An exception class named for out of memory (1719).
            ("Job aborted due to stage failure: Task 33 in stage 1303.0 failed 4 times, most recent failure: Lost task 33.3 in stage 1303.0 (TID 37289) (10.59.128.149 executor 2): com.nvidia.spark.rapids.jni.SplitAndRetryOOM: Attempted to handle a split, but was not initialized with a splitPolicy.", Kind::GenericOom, Category::Oom),
            ("com.nvidia.spark.rapids.jni.CpuRetryOOM: CPU OutOfMemory", Kind::HostOom, Category::Oom),
            // The retry framework's exception with nothing else on its line (3315).
            ("1) Caused by: com.nvidia.spark.rapids.jni.GpuSplitAndRetryOOM: GPU OutOfMemory: could not split inputs and retry", Kind::GenericOom, Category::Oom),
            // Google Colab's dialog, in bold or quoted (1942, 1943).
            ("**Your session crashed after using all available RAM.** ", Kind::HostOom, Category::Oom),
            ("> Your session crashed after using all available RAM. If you are interested in access to high-RAM runtimes, you may want to check out [Colab Pro](https://colab.research.google.com/signup/pricing?utm_source=dialog&utm_medium=link&utm_campaign=oom).", Kind::HostOom, Category::Oom),
            // ggml's backend buffer (1738).
            ("Failed to send message Failed to load model error loading model: unable to allocate Vulkan0 buffer", Kind::LibraryAllocFailed, Category::LikelyOom),
            // ROCr's fault (1726, 1640) and the NVIDIA driver's bring-up (1645).
            ("[Issue]: Memory access fault by GPU node-1 (Agent handle: 0x1f829860) on address 0x7a8a4be00000. Reason: Page not present or supervisor privilege. Aborted (core dumped)", Kind::GpuRuntimeError, Category::Crash),
            ("My program submit an error which just like \"Memory access fault by GPU node-4 (Agent handle: 0x152e220) on address (nil). Reason: Page not present or supervisor privilege.\". ", Kind::GpuRuntimeError, Category::Crash),
            ("[   21.091872] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)", Kind::GpuRuntimeError, Category::Crash),
            ("[   21.238204] NVRM: osInitNvMapping: *** Cannot attach gpu", Kind::GpuRuntimeError, Category::Crash),
        ] {
            let f = collect(&[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!((f.kind, f.category), (kind, category), "{line}");
        }
        // Through the prefilter too: spark-rapids' retry exceptions hold no
        // other family's trigger (3315).
        for line in [
            "Caused by: com.nvidia.spark.rapids.jni.GpuSplitAndRetryOOM: GPU OutOfMemory: could not split inputs and retry\n",
            "com.nvidia.spark.rapids.jni.GpuRetryOOM: GPU OutOfMemory\n",
        ] {
            let found = crate::decode_str(line);
            assert!(found.iter().any(|f| f.category == Category::Oom), "{line}: {found:?}");
        }
        let f = collect(&["  what():  std::bad_alloc"]).unwrap();
        assert_eq!(f.facts[fact::MEMORY], "unknown");
        let f = collect(&["Your session crashed after using all available RAM."]).unwrap();
        assert_eq!(f.facts[fact::MEMORY], "host");
        assert_eq!(f.facts[fact::REPORTED_BY], "Google Colab");
        let f = collect(&["numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.2 GiB for an array with shape (100000, 4300) and data type float64"]).unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(3_435_973_837));
        // The TPU compiler's sentence for a memory space other than HBM (1802).
        let f = collect(&["`RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space vmem. Used 32.42M of 16.00M vmem. Exceeded vmem capacity by 16.42M`"]).unwrap();
        assert_eq!(f.facts["memory_space"], "vmem");
        assert_eq!(f.sizes.total_bytes, Some(16 << 20));
        assert_eq!(f.sizes.extra["used_bytes"], Some(33_994_834)); // 32.42 × 2^20
        assert_eq!(f.sizes.extra["exceeded_bytes"], Some(17_217_618));
        let f = collect(&["RuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem. Used 32.42M of 16.00M vmem."]).unwrap();
        assert_eq!(f.sizes.extra.get("exceeded_bytes"), None);
        let f = collect(&["Resource exhausted: Attempting to reserve 5.88G at the bottom of memory. That was not possible. There are 14.74G free, 0B reserved, and 4.62G reservable."]).unwrap();
        assert_eq!(f.sizes.reserved_bytes, Some(0));
        assert_eq!(f.sizes.free_bytes, Some(15_826_954_486));
        let f =
            collect(&["llama_model_load: error loading model: unable to allocate CUDA0 buffer"])
                .unwrap();
        assert_eq!((f.backend.as_deref(), f.device), (Some("cuda"), Some(0)));
        let f = collect(&["Memory access fault by GPU node-4 (Agent handle: 0x152e220) on address (nil). Reason: Page not present or supervisor privilege."]).unwrap();
        assert_eq!((f.facts["hsa_node"].as_str(), f.device), ("node-4", None));
        // The other side: mentions, templates and conditions stay silent.
        for line in [
            "If you see MemoryError, use a smaller array.",
            "    except MemoryError:",
            "LLAMA_LOG_ERROR(\"%s: unable to allocate %s buffer\", __func__, name);",
            "When you get \"Memory access fault by GPU node-1\", check the kernel.",
            "SplitAndRetryOOM is thrown when a split is needed",
            "a std::bad_alloc is thrown when operator new fails",
            "If you see \"Your session crashed after using all available RAM\", upgrade to Colab Pro.",
            // The status without TensorFlow's log prefix, or at its info
            // level, is not a report.
            "RESOURCE_EXHAUSTED: Attempting to reserve 6.48G at the bottom of memory. That was not possible.",
            "2022-04-04 00:27:49.642414: I tensorflow/compiler/xla/xla_client/xla_util.cc:88] RESOURCE_EXHAUSTED: Attempting to reserve 6.48G at the bottom of memory.",
        ] {
            assert!(collect(&[line]).is_none(), "{line}");
        }
    }

    /// OpenCL's statuses in the forms programs print them: the number oneDNN
    /// prints with the name is the table's, and the text wrappers print is
    /// read as its status (`fixtures/wild/1736.txt`, `1718.txt`).
    #[test]
    fn opencl_printed_forms() {
        let table = crate::codes::table("opencl").unwrap();
        let number = regex::Regex::new(r"errcode (-?\d+),").unwrap();
        for entry in &table.entries {
            let onednn = format!("onednn_verbose,v1,primitive,error,ocl,errcode {},{},src/gpu/intel/ocl/ocl_gpu_engine.cpp:261", entry.written, entry.name);
            assert_eq!(opencl_status(&onednn).map(|e| e.name), Some(entry.name));
            let printed = &number.captures(&onednn).unwrap()[1];
            assert_eq!(crate::codes::parse_number(printed), Some(entry.number));
        }
        for (text, name) in [
            (
                "  what():  Memory Object Allocation Failure",
                "CL_MEM_OBJECT_ALLOCATION_FAILURE",
            ),
            (
                "clCreateBuffer: Memory object allocation failure",
                "CL_MEM_OBJECT_ALLOCATION_FAILURE",
            ),
            ("  what():  Out of Host Memory", "CL_OUT_OF_HOST_MEMORY"),
        ] {
            assert_eq!(opencl_status(text).map(|e| e.name), Some(name), "{text}");
        }
        let f = collect(&["onednn_verbose,v1,primitive,error,ocl,errcode -6,CL_OUT_OF_HOST_MEMORY,src/gpu/intel/ocl/ocl_gpu_engine.cpp:261"]).unwrap();
        assert_eq!(
            (
                f.facts[fact::ERROR_NAME].as_str(),
                f.facts["error_code"].as_str()
            ),
            ("CL_OUT_OF_HOST_MEMORY", "-6")
        );
        let f = collect(&["  what():  Memory Object Allocation Failure"]).unwrap();
        assert_eq!(
            f.facts[fact::ERROR_NAME],
            "CL_MEM_OBJECT_ALLOCATION_FAILURE"
        );
        // A CL_ word no table holds is not a status.
        assert!(opencl_status("CL_DEVICE_TYPE_GPU").is_none());
    }

    /// The other side of each new rule: the same words as a condition, an
    /// instruction, a comment or code are not reports.
    #[test]
    fn fifth_holdout_rules_keep_mentions_out() {
        for line in [
            "If you see \"Display driver stopped responding and has recovered\", raise TdrDelay.",
            "When you get \"System is out of GPU memory\", lower the tile size.",
            "msg = \"The node was low on resource: memory\"",
            "# XlaRuntimeError: RESOURCE_EXHAUSTED: out of memory",
            "If you are seeing RuntimeError: Allocation is out of device memory on current platform, reduce the batch.",
            "CUDA error cannot allocate big buffer for DAG.",
            "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
        ] {
            assert!(collect(&[line]).is_none(), "{line}");
        }
    }

    #[test]
    fn reporters() {
        let f = collect(&["[ERROR] X [mindspore/ccsrc/minddata/dataset/util/arena.cc:250] Init] cudaHostAlloc failed, ret[2], out of memory"]).unwrap();
        assert_eq!(f.facts[fact::REPORTED_BY], "MindSpore");
        let f =
            collect(&["[bmlib_memory][error] bm_alloc_gmem failed, dev_id = 0, size = 0x639c00"])
                .unwrap();
        assert_eq!(f.facts[fact::REPORTED_BY], "bmlib_memory");
        let f = collect(&["RuntimeError: [metal::malloc] Attempting to allocate 4873691763 bytes which is greater than the maximum allowed buffer size of 30150672384 bytes."]).unwrap();
        assert_eq!(f.facts[fact::REPORTED_BY], "metal::malloc");
        assert_eq!(f.sizes.extra["limit_bytes"], Some(30_150_672_384));
    }

    #[test]
    fn fatal_failures() {
        let f = collect(&[
            "[PG ID 0 PG GUID 0(default_pg) Rank 6] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indi",
            "cates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog",
        ])
        .unwrap();
        assert_eq!(f.kind, Kind::NcclTimeout);
        assert_eq!(f.facts["heartbeat_timeout_ms"], "480000");
        let f = collect(&["Segmentation fault (core dumped)"]).unwrap();
        assert_eq!((f.kind, f.category), (Kind::FatalSignal, Category::Crash));
        let f = collect(&[
            "run.sh: line 3: 4121 Segmentation fault      (core dumped) python infer.py",
        ])
        .unwrap();
        assert_eq!(f.facts[fact::SIGNAL], "SIGSEGV");
        let f = collect(&["[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py'] exits with return code = -9"]).unwrap();
        assert_eq!(f.kind, Kind::HostOomKilled);
        let f =
            collect(&["Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error"])
                .unwrap();
        assert_eq!(f.kind, Kind::GpuFallenOffBus);
        assert!(collect(&["Unable to determine the device handle for GPU%s: %s"]).is_none());
    }

    #[test]
    fn a_lost_vulkan_device_and_ascend_bring_up_are_runtime_faults() {
        let f = collect(&["terminate called after throwing an instance of 'vk::DeviceLostError'"])
            .unwrap();
        assert_eq!(f.kind, Kind::GpuRuntimeError);
        assert_eq!(f.facts[fact::ERROR_NAME], "VK_ERROR_DEVICE_LOST");
        assert!(collect(&["    } catch (vk::DeviceLostError const& e) {"]).is_none());
        let f = collect(&["RuntimeError: Ascend kernel runtime initialization failed. The details refer to 'Ascend Error Message'."]).unwrap();
        assert_eq!(f.kind, Kind::GpuRuntimeError);
    }

    #[test]
    fn paddles_bad_alloc_intels_abort_and_a_gpu_core_dump() {
        // Paddle throws BadAlloc only as ResourceExhausted.
        let f = collect(&[
            "terminate called after throwing an instance of 'paddle::memory::allocation::BadAlloc'",
        ])
        .unwrap();
        assert_eq!(f.kind, Kind::GenericOom);
        // Intel's compute runtime's unrecoverable check, then its source file.
        let f = collect(&["Abort was called at 713 line in file:"]).unwrap();
        assert_eq!(f.kind, Kind::GpuRuntimeError);
        assert_eq!(f.facts[fact::ERROR_NAME], INTEL_UNRECOVERABLE);
        let f = collect(&["Starting GPU coredump generation, set the CUDA_COREDUMP_SHOW_PROGRESS environment variable to 1 to enable more detailed output"]).unwrap();
        assert_eq!(f.kind, Kind::GpuRuntimeError);
        assert_eq!(f.facts[fact::ERROR_NAME], CUDA_GPU_COREDUMP);
        // The class in code, and the phrase in prose, are no report.
        assert!(
            collect(&["    } catch (const paddle::memory::allocation::BadAlloc& e) {"]).is_none()
        );
        assert!(collect(&["The function was called at startup and aborted."]).is_none());
    }

    #[test]
    fn a_notebook_header_names_the_class() {
        let f = collect(&[
            "OutOfMemoryError                          Traceback (most recent call last)",
        ])
        .unwrap();
        assert_eq!(f.kind, Kind::GenericOom);
        assert_eq!(f.facts[fact::REPORTED_BY], "OutOfMemoryError");
        assert!(collect(&[
            "ValueError                          Traceback (most recent call last)"
        ])
        .is_none());
        assert!(collect(&["Traceback (most recent call last):"]).is_none());
    }

    #[test]
    fn a_garbled_allocator_message_is_read_where_it_can_be() {
        let f = collect(&["torch.cuda.0utofemoryEror: CuDh out of menory. Tried to allocate 4.00 GiB. GPU 0 has a total capacty of16.0 GiB of which 3.72 GiB is free."]).unwrap();
        assert_eq!(f.kind, Kind::GenericOom);
        assert_eq!(f.sizes.requested_bytes, Some(4 << 30));
        assert_eq!(f.sizes.total_bytes, Some(16 << 30));
        assert_eq!(f.device, Some(0));
    }

    #[test]
    fn mentions_and_templates_are_not_findings() {
        for line in [
            "out of memory",
            "How to fix CUDA out of memory errors",
            "If you get out of memory, reduce the batch size.",
            "When the GPU is out of memory the job fails",
            "    # RuntimeError: out of memory on the second device",
            "// allocation failed: return nullptr",
            "    raise MemoryError(\"out of memory\")",
            "    if \"out of memory\" in str(e):",
            "  \"Out of memory. Tried to allocate %s (GPU %d; %s total capacity)\"",
            "ERROR: failed to allocate {} bytes",
            "+RuntimeError: the device is out of memory",
            "memory_allocation_failed_total 0",
            "I got an error: out of memory",
            "gpu_mem_used=14.2GiB gpu_mem_free=1.1GiB",
            "Segmentation fault is a common crash",
            "A Segmentation fault (core dumped) means the process crashed",
            "We saw Segmentation fault (core dumped) after the upgrade",
            "    assert \"out of memory\" in caplog.text",
            "    outputs = model(inputs)  # RuntimeError: CUDA out of memory here",
        ] {
            assert!(collect(&[line]).is_none(), "{line}");
        }
    }

    /// Posters' own words (1916, 1919, 1924): `I` met a named device's out
    /// of memory.
    #[test]
    fn a_first_person_report_in_prose_is_the_weakest_statement() {
        for (line, backend) in [
            ("but I got a \"cuda out of memory\" after 8784 iterators", Some("cuda")),
            ("Blender uses all of that. At the end I get the CUDA out of memory message.", Some("cuda")),
            ("I'm experiencing an XPU out of memory error when fine-tuning a LLM using Axolotl with PyTorch 2.7.0+xpu on a ThinkPad T14p Gen2 running Manjaro Linux.", Some("xpu")),
            ("When I train with batch size 64 I keep getting GPU out of memory", None),
        ] {
            let f = collect(&[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!((f.kind, f.category), (Kind::GenericOom, Category::Oom), "{line}");
            assert_eq!(f.facts["stated_in_prose"], "true");
            assert_eq!(f.backend.as_deref(), backend, "{line}");
            let named = backend.map_or("an unrecognised program".to_string(), |b| b.to_ascii_uppercase());
            assert_eq!(f.facts[fact::REPORTED_BY], named, "{line}");
        }
        // The figures the poster states next, across one blank line.
        let f = collect(&[
            "I'm experiencing an XPU out of memory error when fine-tuning a LLM.",
            "",
            "PyTorch reports that the GPU has 28.56 GiB total capacity, but fails to allocate 7.09 GiB, even though system memory is plentiful.",
        ])
        .unwrap();
        assert_eq!(f.sizes.total_bytes, Some(30_666_066_493)); // 28.56 × 2^30
        assert_eq!(f.sizes.requested_bytes, Some(7_612_829_532));
        // Not a report: a question, a condition, a negation, another
        // person, no device named.
        for line in [
            "Why do I get a CUDA out of memory error with batch size 1?",
            "I get a CUDA out of memory error?",
            "If I get a CUDA out of memory error, I lower the batch size.",
            "To avoid that I get CUDA out of memory, set the fraction.",
            "I no longer get the CUDA out of memory error.",
            "I didn't get CUDA out of memory with the old version.",
            "I will get a CUDA out of memory error with this model.",
            "You get a CUDA out of memory error when the batch is too large.",
            "We get a CUDA out of memory error when the batch is too large.",
            "I got an error: out of memory",
        ] {
            assert!(collect(&[line]).is_none(), "{line}");
        }
    }

    #[test]
    fn a_first_person_report_of_a_kill_in_prose() {
        // Real pastes: the shell's `Killed`, as the poster names it.
        for (line, category) in [
            ("I run it on an image and I get the error \"killed\".", Category::LikelyOom),
            ("Some work, but when I add others, I get a \"Killed\" message and nothing is outputted.", Category::LikelyOom),
            ("When I try to run the train code , I get a error : killed by OOM killer", Category::Oom),
        ] {
            let f = collect(&[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!((f.kind, f.category), (Kind::HostOomKilled, category), "{line}");
            assert_eq!(f.facts["stated_in_prose"], "true");
        }
        // Not a report: a question, a condition, a negation, another
        // person, the word not named as what was printed.
        for line in [
            "Why do I get \"Killed\" with batch size 1?",
            "I get the error \"killed\"?",
            "If I get \"Killed\", I lower the batch size.",
            "I no longer get the error \"killed\".",
            "I didn't get \"Killed\" with the old version.",
            "You get \"Killed\" when the batch is too large.",
            "We get a \"Killed\" message when the batch is too large.",
            "I get that the process was killed.",
            "I got killed in the game.",
        ] {
            assert!(collect(&[line]).is_none(), "{line}");
        }
    }

    /// The short forms people write for their own run's failure (the
    /// eleventh holdout's 3226, 3235, 3246): `I get OOM`, an adjective
    /// before the named error, `it keeps running out of memory`. Which
    /// memory comes from the words of the statement only.
    #[test]
    fn short_forms_of_a_report_in_prose() {
        for (line, kind, memory) in [
            ("Problem is that even with short context of 16k I get OOM which surprises me quite a lot. Up to this point the model occupied roughly 24GB (so still plenty of VRAM)", Kind::GenericOom, "device"),
            ("As you probably figured, I ran into the infamous CUDA out of memory.", Kind::GenericOom, "device"),
            ("I've been working on a data set (1000,3253) using a CNN. I'm running gradient calculations through gradient tape but it keeps running out of memory. Yet if I remove the line appending a gradient calculation to a list the script runs through all the epochs.", Kind::GenericOom, "unknown"),
            ("I ran out of GPU memory at step 300.", Kind::GenericOom, "device"),
            ("I keep running out of system memory when loading the dataset.", Kind::HostOom, "host"),
            ("I have 64GB of RAM and I got an OOM error on the GPU.", Kind::GenericOom, "device"),
        ] {
            let f = collect(&[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!((f.kind, f.category), (kind, Category::Oom), "{line}");
            assert_eq!(f.facts["stated_in_prose"], "true", "{line}");
            assert_eq!(f.facts[fact::MEMORY], memory, "{line}");
            assert_eq!(f.sizes.total_bytes, None, "{line}");
        }
        // Not a report: a FAQ's question (3481), a precaution (3482), the
        // bare present (349), a warning (630), a guess, a worry, a habit,
        // a condition, a generalisation.
        for line in [
            "I get an OOM error, what to do?",
            "Haha, I use the GPU on my laptop, but I have to set BATCH_SIZE to 1 so I don't run out of memory,there are too many Total params",
            "With no change, I run out of memory (A100 w/ 24GB). Setting it to anything other than the default causes the following error:",
            "However, with this I get OOM warnings and errors even though nvidia-smi says only ~10% are allocated.",
            "I think OOM is the cause here.",
            "I'm worried about running out of memory on the 4090.",
            "When I run out of memory, the system starts swapping.",
            "so that I get no OOM, I use 4-bit weights.",
            "If your model runs out of memory, reduce the batch size.",
            "In my experience, the GPU often runs out of memory when the batch is large.",
            "Does it run out of memory for you too?",
            "When you hit out-of-memory, knowing which bucket is largest tells you which lever to pull.",
        ] {
            assert!(collect(&[line]).is_none(), "{line}");
        }
    }

    #[test]
    fn the_posters_run_as_the_subject_of_a_report_in_prose() {
        // Real pastes: the run, not `I`, is the subject; the sentence is the
        // poster's by its first person, a subject they own, or an adverb of
        // a repeated observation.
        for (line, kind, category) in [
            ("But today it always show \"CUDA out of memory\" when training step and always stop in same train iter (247).", Kind::GenericOom, Category::Oom),
            ("When I try to use the natural definition data_dmatrix = xgb.DMatrix(data=features, label=labels), the CV crashes with memory overflow when it attempts to reserve 20GB of GPU memory. Why is CV so memory-hungry???", Kind::GenericOom, Category::Oom),
            ("When I logged one day later to check on it, the job had been killed (it said \"killed\" in the terminal).", Kind::HostOomKilled, Category::LikelyOom),
            ("load model时,mem 中native 狂飙,直接被杀死,导致初始化失败。", Kind::HostOomKilled, Category::LikelyOom),
            ("内存崩掉了,然后被系统强杀。", Kind::HostOomKilled, Category::LikelyOom),
            ("when i run the Inference the process is killed but i don't know why.", Kind::HostOomKilled, Category::LikelyOom),
            ("I watched the system monitor and found that the memory was completely (99%+) used during load so it was killed, whereas the memory usage was usually only around 20%.", Kind::HostOomKilled, Category::LikelyOom),
            // A kill told with an adverb of a repeated observation
            // (fixtures/wild/3140.txt, 3129.txt).
            ("@MohitShridhar, using the \"Trajectory JSONs and Resnet feats (~17GB)\" dataset, the training process is still being killed after the preprocess is finished and before the training begins.", Kind::HostOomKilled, Category::LikelyOom),
            ("but the program always be killed, I am confused。", Kind::HostOomKilled, Category::LikelyOom),
        ] {
            let f = collect(&[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!((f.kind, f.category), (kind, category), "{line}");
            assert_eq!(f.facts["stated_in_prose"], "true");
        }
        // Not a report: a condition, a modal, a question, the present of a
        // kill, nobody's run, a possibility or a condition in Chinese.
        for line in [
            "If the training crashes with CUDA out of memory, lower the batch size.",
            "My training will crash with CUDA out of memory with this batch size.",
            "Does it always show \"CUDA out of memory\" at the same step?",
            "It shows \"CUDA out of memory\" when the batch is too large.",
            "The training crashes with CUDA out of memory when the batch is too large.",
            "The process is killed when the container exceeds its limit.",
            "In this example, the process was killed by the kernel.",
            "My job was not killed by the scheduler.",
            "If it was killed, look for the kernel's lines in dmesg.",
            "You likely exceeded system memory limits and the process got killed.",
            "The process is always killed when the container exceeds its limit.",
            "The worker is still killed if it exceeds its memory budget.",
            "The process will always be killed by the OOM killer first.",
            "当内存不足时,进程会被系统杀死。",
            "如果内存不够,程序可能被杀死了。",
            "内存用完了,进程被杀死了吗？",
        ] {
            assert!(collect(&[line]).is_none(), "{line}");
        }
    }

    #[test]
    fn a_bug_title_naming_an_out_of_memory_class_reports_it() {
        // A real issue's title (fixtures/wild/2548.txt).
        let title = "# [Bug] intel/llm-scaler-vllm:latest (1.4 / vLLM 0.14.0 / PyTorch 2.10): XPU OutOfMemoryError on first tensor allocation when 2x Arc B580 are visible";
        let f = collect(&[title]).unwrap_or_else(|| panic!("{title}"));
        assert_eq!((f.kind, f.category), (Kind::GenericOom, Category::Oom));
        assert_eq!(f.backend.as_deref(), Some("xpu"));
        assert_eq!(f.facts["stated_in_prose"], "true");
        // Not a failure: a bug about the message, a request, no bug filed.
        for line in [
            "# [Bug] OutOfMemoryError is not raised when the allocation fails",
            "[Bug] Device lost instead of OutOfMemoryError on XPU",
            "[Bug] CUDA out of memory message should name the device",
            "[Feature] Catch torch.OutOfMemoryError and retry with a smaller batch",
            "# XPU OutOfMemoryError on first tensor allocation",
        ] {
            assert!(collect(&[line]).is_none(), "{line}");
        }
    }

    #[test]
    fn figures_in_their_programs_words() {
        // trtexec (a wild paste): the request on TensorRT's warning line.
        let f = collect(&[
            "[11/22/2024-13:40:47] [E] Error[1]: [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of memory)",
            "[11/22/2024-13:40:47] [W] [TRT] Requested amount of GPU memory (15485030400 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.",
        ])
        .unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(15_485_030_400));
        // Deeplearning4j (a wild paste): the bytes and the bracketed device.
        let f = collect(&["Caused by: java.lang.RuntimeException: Failed to allocate 637074016 bytes from DEVICE [0] memory"]).unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(637_074_016));
        assert_eq!(f.device, Some(0));
        // nvgpu's DMA failure (a wild paste) shouts FAILED: a driver's voice.
        let f = collect(&["nvgpu: 17000000.gpu               nvgpu_dma_print_err:101  [INFO]  DMA alloc FAILED: [sysmem] size=257490944 aligned=257490944 flags:PHYSICALLY_ADDRESSED"]).unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(257_490_944));
        assert!(collect(&["On boot the DMA alloc failed: size=257490944"]).is_none());
        // A size with a unit is not a byte count.
        let f = collect(&["RuntimeError: failed to allocate 128.00 MiB on device"]).unwrap();
        assert_eq!(f.sizes.requested_bytes, None);
    }

    fn scan(text: &str) -> Vec<Finding> {
        crate::scan(text.as_bytes(), "t")
            .map(|r| r.findings)
            .unwrap_or_default()
    }

    /// First-person reports in prose: an out-of-memory exception's class
    /// named as what the poster got (a CuPy issue whose traceback is cut
    /// before its last line), and the OOM killer as the subject of a kill
    /// on the poster's machine (a llama.cpp SYCL write-up). The nearest
    /// sentences that are not reports stay silent.
    #[test]
    fn first_person_reports_name_a_class_or_the_oom_killer() {
        let found = scan(
            "When I run the train_better_rnnlm.py in GPU, I got the OutOfMemoryError in forward.\n",
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::GenericOom);
        assert_eq!(found[0].facts[fact::MEMORY], "device");
        let found = scan("Every time I tried to split a model across both GPUs, my 64GB of system RAM would climb to 100% and the OOM killer would start taking out desktop processes until the system either crashed.\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::HostOomKilled);
        assert_eq!(found[0].category, Category::Oom);
        for text in [
            "How do I catch the OutOfMemoryError in forward?\n",
            "If I get the OutOfMemoryError, the trainer retries with a smaller batch.\n",
            "The OOM killer is configurable through oom_score_adj.\n",
            "If the OOM killer kills my process, systemd restarts it.\n",
            "When the OOM killer takes out a worker, what does Ray do?\n",
            "The OOM killer would start taking out processes once RAM runs out.\n",
        ] {
            assert!(scan(text).is_empty(), "{text}");
        }
    }

    /// A GPU library's allocation status text in the .NET debugger's view
    /// of the exception (managedCuda's NPPException, a wild paste), and the
    /// same words without a program's evidence.
    #[test]
    fn a_library_allocation_error_in_an_exception_view() {
        let text = "ManagedCuda.NPP.NPPException was caught\n  HResult=-2146233088\n  Message=Device allocation error\n  Source=NPP\n";
        let found = scan(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::LibraryAllocFailed);
        assert_eq!(found[0].category, Category::LikelyOom);
        for text in [
            "Device allocation error handling is described in the NPP guide.\n",
            "  Message=Device not ready\n",
        ] {
            assert!(scan(text).is_empty(), "{text}");
        }
    }

    /// Intel's Xe kernel driver's engine fault (fixtures/wild 2410: a
    /// probe's device lost, then the driver's lines): a crash the driver
    /// states, read behind its `[drm]` prefix, in both spellings.
    #[test]
    fn the_xe_drivers_engine_fault() {
        let line = "  xe 0000:04:00.0: [drm] Tile0: GT0: Engine memory CAT error [18]: class=bcs, logical_mask: 0x1, guc_id=6";
        let f = collect(&[line]).unwrap();
        assert_eq!(
            (f.kind, f.category),
            (Kind::GpuRuntimeError, Category::Crash)
        );
        assert_eq!(f.facts[fact::ERROR_NAME], "Engine memory CAT error");
        assert_eq!(
            f.facts[fact::REPORTED_BY],
            crate::i18n::reporter::INTEL_XE.en
        );
        assert!(collect(&["xe 0000:03:00.0: [drm] Tile0: GT0: Engine memory cat error: engine_class=bcs, logical_mask: 0x1, guc_id=2"]).is_some());
        // Without the driver's prefix it is a description of one (a notes
        // page quoting the signature), not the driver's report.
        for line in [
            "Card 0 logged `Engine memory CAT error [18]: class=bcs, guc_id=0` at 00:01:43",
            "Engine memory CAT error [18]: class=bcs",
        ] {
            assert!(collect(&[line]).is_none(), "{line}");
        }
    }

    #[test]
    fn numpy_sizes_as_numpy_prints_them() {
        // NumPy's `_size_to_string` prints `{:#.3g}`: a whole number keeps
        // its point (`184. MiB`, a wild paste of TensorFlow wrapping
        // NumPy's MemoryError); bytes are printed without decimals.
        for (line, requested) in [
            ("W tensorflow/core/framework/op_kernel.cc:1751] Resource exhausted: MemoryError: Unable to allocate 184. MiB for an array with shape (64, 26, 26, 3, 371) and data type float32", 184u64 << 20),
            ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 1.50 GiB for an array with shape (201326592,) and data type float64", 3 << 29),
            ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 12.3 KiB for an array with shape (1574,) and data type float64", 12_595),
            ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 800 bytes for an array with shape (100,) and data type float64", 800),
        ] {
            let f = collect(&[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(f.sizes.requested_bytes, Some(requested), "{line}");
        }
        // The point belongs to the number only when a unit follows it: a
        // sentence's full stop after a figure is not read as a size.
        let f =
            collect(&["MemoryError: Unable to allocate array of 184. Try a smaller one."]).unwrap();
        assert_eq!(f.sizes.requested_bytes, None);
    }
}
