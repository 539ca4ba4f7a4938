//! The structured record of one finding: what the scanner found, the numbers
//! it stated, where it came from, and (filled in by [`crate::explain`]) what it
//! means. These types *are* the JSON contract; see README.md "JSON output".
//! They also read back from it (`Deserialize`), so that a finding that went
//! through JSON (the Python package) can be rendered again.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the JSON document. Raised only when an existing field changes
/// meaning or disappears; new fields may be added without raising it.
pub const SCHEMA_VERSION: u32 = 1;

/// Defines [`Kind`] from one list: each line gives the variant, its stable
/// slug (the JSON value, the `oomwhy explain` code and the name of its
/// explanation page) and its [`Category`]. Adding a kind is one line here;
/// `explain::explainer` then refuses to compile until it is explained.
macro_rules! kinds {
    ($($(#[$doc:meta])* $variant:ident = $slug:literal, $category:ident;)*) => {
        /// What family of message a finding is. Serialised as a stable snake_case slug.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Kind {
            $($(#[$doc])* #[serde(rename = $slug)] $variant,)*
        }

        impl Kind {
            /// Every kind, in documentation order.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant),*];

            /// The stable slug used in JSON and by `oomwhy explain`.
            pub fn slug(self) -> &'static str {
                match self {
                    $(Kind::$variant => $slug,)*
                }
            }

            /// How sure we are that this kind of message means the GPU ran out of memory.
            pub fn category(self) -> Category {
                match self {
                    $(Kind::$variant => Category::$category,)*
                }
            }
        }
    };
}

kinds! {
    /// PyTorch caching-allocator OOM (`CUDA out of memory. Tried to allocate ...`),
    /// every era and backend prefix, and the `cudaMallocAsync` form.
    TorchAllocatorOom = "torch_allocator_oom", Oom;
    /// A CUDA runtime/driver call failed with out-of-memory; no sizes stated.
    CudaRuntimeOom = "cuda_runtime_oom", Oom;
    /// `an illegal memory access was encountered` (cudaErrorIllegalAddress, 700).
    IllegalMemoryAccess = "illegal_memory_access", Crash;
    /// Windows fail-fast exit code 0xC0000409.
    WindowsFailFast = "windows_fail_fast", Crash;
    /// Apple MPS allocator: `MPS backend out of memory (MPS allocated: ...)`.
    MpsOom = "mps_oom", Oom;
    /// PyTorch's CPU allocator could not get host memory (`DefaultCPUAllocator: ...`).
    HostOom = "host_oom", Oom;
    /// A process was killed for host memory (Linux OOM killer, Slurm/Kubernetes
    /// cgroup limits) or by SIGKILL, which usually means that (`likely_oom`).
    // Spellings that state the OOM (kernel OOM killer, Slurm, Kubernetes)
    // are raised to `oom` by the parser; SIGKILL alone stays `likely_oom`.
    HostOomKilled = "host_oom_killed", LikelyOom;
    /// TensorFlow: `OOM when allocating tensor with shape[...]`, BFC allocator warnings.
    TfOom = "tf_oom", Oom;
    /// XLA (JAX, TensorFlow with XLA): `Out of memory while trying to allocate N bytes.`
    XlaOom = "xla_oom", Oom;
    /// CuPy memory pool: `Out of memory allocating N bytes (allocated so far: M bytes).`
    CupyOom = "cupy_oom", Oom;
    /// vLLM-style inference engine: no room for the KV cache at start-up.
    KvCacheOom = "kv_cache_oom", Oom;
    /// A CUDA library (cuBLAS, cuDNN, cuSOLVER) could not allocate its handle or
    /// workspace (`CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)``).
    LibraryAllocFailed = "library_alloc_failed", LikelyOom;
    /// NCCL could not allocate GPU memory (`NCCL WARN Cuda failure 'out of memory'`,
    /// `Failed to CUDA calloc N bytes`, or an NCCL error whose last error says so).
    NcclOom = "nccl_oom", LikelyOom;
    /// An internal assert of PyTorch's caching allocator that replaces the OOM
    /// message (`NVML_SUCCESS == r INTERNAL ASSERT FAILED`, `!handles_.at(i)`).
    AllocatorAssert = "allocator_assert", LikelyOom;
    /// `CUDA driver error: device not ready`, seen under memory pressure (WSL2).
    DeviceNotReady = "device_not_ready", LikelyOom;
    /// `CUDA error: device-side assert triggered` and the kernel's `Assertion ... failed.` lines.
    DeviceSideAssert = "device_side_assert", Crash;
    /// `CUDA error: misaligned address` (cudaErrorMisalignedAddress, 716).
    MisalignedAddress = "misaligned_address", Crash;
    /// `CUDA error: unspecified launch failure` (cudaErrorLaunchFailure, 719).
    LaunchFailure = "launch_failure", Crash;
    /// `no kernel image is available for execution on the device` (209).
    NoKernelImage = "no_kernel_image", Crash;
    /// An NCCL or c10d backend error (`NCCL error in: ...`, `ncclSystemError`, `DistBackendError`).
    NcclError = "nccl_error", Crash;
    /// `Watchdog caught collective operation timeout: WorkNCCL(...) ran for N milliseconds`.
    NcclTimeout = "nccl_timeout", Crash;
    /// `NCCL communicator was aborted on rank N`, `watchdog thread terminated with exception`.
    ProcessGroupAborted = "process_group_aborted", Crash;
    /// torchelastic's `ChildFailedError` report with its `Root Cause` entry.
    ChildFailed = "child_failed", Crash;
    /// An NVIDIA kernel-driver `NVRM: Xid` event.
    Xid = "xid", Crash;
    /// Windows access violation, exit code 0xC0000005 (-1073741819).
    WindowsAccessViolation = "windows_access_violation", Crash;
    /// `OSError: [WinError 1455] The paging file is too small for this operation to complete`.
    // Windows could not commit virtual memory: RAM plus page file exhausted,
    // a host out-of-memory (Windows' own error 1455 wording aside).
    WindowsPagingFile = "windows_paging_file", Oom;
    /// Any other message that states a GPU/accelerator allocation failed
    /// (`cudaMalloc failed: out of memory`, `CUDA_ERROR_OUT_OF_MEMORY`, ...).
    GenericOom = "generic_oom", Oom;
    /// A process died of a fatal signal other than SIGKILL (SIGBUS, SIGSEGV,
    /// SIGABRT, SIGFPE, SIGILL) or a Windows crash status: DataLoader worker
    /// deaths in logs, the wrapped command's ending in `oomwhy run`. A bus
    /// error (shared memory exhausted) is raised to `likely_oom`.
    FatalSignal = "fatal_signal", Crash;
    /// A PyTorch CUDA memory snapshot (a pickle, not a log): an OOM when it
    /// holds an `oom` event, otherwise a memory-state summary.
    // Raised to `oom` by the snapshot reader when it holds an `oom` event.
    MemorySnapshot = "memory_snapshot", MemoryState;
    /// TensorFlow's BFC allocator could not satisfy an allocation and says the
    /// caller will retry (`The caller indicates that this is not a failure`).
    TfAllocatorWarning = "tf_allocator_warning", Warning;
    /// Triton could not launch a kernel: `out of resource: shared memory,
    /// Required: X, Hardware limit: Y` (on-chip memory per block, not an OOM).
    TritonOutOfResources = "triton_out_of_resources", Crash;
    /// `CUDNN_STATUS_NOT_SUPPORTED`: cuDNN has no kernel for the call; an OOM
    /// only when the log shows memory pressure too (raised by the parser).
    CudnnNotSupported = "cudnn_not_supported", Crash;
    /// The driver lost the GPU (`GPU has fallen off the bus`, `GPU is lost`).
    GpuFallenOffBus = "gpu_fallen_off_bus", Crash;
    /// NVIDIA's PTX assembler ran out of host memory (`ptxas fatal : Memory
    /// allocation failure`).
    PtxasAllocFailure = "ptxas_alloc_failure", LikelyOom;
    /// A GPU runtime, driver or library call failed with a status that is
    /// not out of memory (`cudaErrorInsufficientDriver`, `CUDA failure 35`,
    /// `CUDNN_STATUS_INTERNAL_ERROR`), read from the status tables.
    GpuRuntimeError = "gpu_runtime_error", Crash;
}

impl Kind {
    /// True for crashes in which the GPU or the code running on it faulted
    /// (a "GPU crash"), not a process, a worker or a collective.
    pub fn is_gpu_fault(self) -> bool {
        matches!(
            self,
            Kind::IllegalMemoryAccess
                | Kind::DeviceSideAssert
                | Kind::MisalignedAddress
                | Kind::LaunchFailure
                | Kind::NoKernelImage
                | Kind::Xid
                | Kind::GpuFallenOffBus
                | Kind::TritonOutOfResources
                | Kind::CudnnNotSupported
                | Kind::GpuRuntimeError
        )
    }

    /// True for crashes that typically follow another rank's or process's
    /// failure (NCCL aborts, launcher reports) rather than cause one.
    pub fn is_consequence(self) -> bool {
        matches!(
            self,
            Kind::NcclError | Kind::NcclTimeout | Kind::ProcessGroupAborted | Kind::ChildFailed
        )
    }
}

/// Keys of [`Finding::facts`] that code reads back (the explainer, the
/// scanner's folding). Detectors write these keys through the same
/// constants, so a renamed or misspelt key does not compile apart from its
/// readers. Keys that are only written, for display, stay literal where
/// they are written.
pub mod fact {
    /// `allocator`: the allocator the message names (TensorFlow's, or PyTorch's CPU allocator).
    pub const ALLOCATOR: &str = "allocator";
    /// `assert`: the failed condition of an allocator assert (`NVML_SUCCESS == r`).
    pub const ASSERT: &str = "assert";
    /// `assertion`: the failed `Assertion ...` of a device-side assert.
    pub const ASSERTION: &str = "assertion";
    /// `call`: the library call that failed (`cublasCreate(handle)`).
    pub const CALL: &str = "call";
    /// `device_name`: TensorFlow's device name (`/job:localhost/.../device:GPU:0`).
    pub const DEVICE_NAME: &str = "device_name";
    /// `dll_name`: the DLL a Windows loader error names.
    pub const DLL_NAME: &str = "dll_name";
    /// `dtype`: a TensorFlow tensor's dtype.
    pub const DTYPE: &str = "dtype";
    /// `engine`: the serving engine whose process printed the message, named
    /// by its line prefix (`vllm` for `(VllmWorker rank=0 pid=4716)`,
    /// `sglang` for `[2025-02-12 02:56:48 TP0] `).
    pub const ENGINE: &str = "engine";
    /// `errno`: the errno of a refused host allocation.
    pub const ERRNO: &str = "errno";
    /// `error_name`: the error name a generic OOM printed (`CUDA_ERROR_OUT_OF_MEMORY`).
    pub const ERROR_NAME: &str = "error_name";
    /// `estimated_max_model_len`: the max model length vLLM estimates would fit.
    pub const ESTIMATED_MAX_MODEL_LEN: &str = "estimated_max_model_len";
    /// `file`: the source file of an allocator assert.
    pub const FILE: &str = "file";
    /// `hint`: a hint about the cause the message carried (cuDNN's
    /// non-contiguous input, TensorFlow's `TF_GPU_ALLOCATOR=cuda_malloc_async`).
    pub const HINT: &str = "hint";
    /// `kernel`: the CUDA kernel of a device-side assert.
    pub const KERNEL: &str = "kernel";
    /// `killed_processes`: how many worker processes torchelastic reports killed.
    pub const KILLED_PROCESSES: &str = "killed_processes";
    /// `kv_cache_tokens`: tokens the KV cache can hold.
    pub const KV_CACHE_TOKENS: &str = "kv_cache_tokens";
    /// `last_error`: NCCL's last error (`Last error: ...`).
    pub const LAST_ERROR: &str = "last_error";
    /// `library`: the CUDA library that failed (cuBLAS, cuDNN, ...).
    pub const LIBRARY: &str = "library";
    /// `limit`: a job's memory limit as Slurm printed it.
    pub const LIMIT: &str = "limit";
    /// `line`: the source line of an allocator assert.
    pub const LINE: &str = "line";
    /// `location`: where the message says the failure was raised (`file:line`,
    /// or which DataLoader worker); the scanner folds a second print of one
    /// failure by it.
    pub const LOCATION: &str = "location";
    /// `max_seq_len`: the model's max sequence length (`max_model_len`).
    pub const MAX_SEQ_LEN: &str = "max_seq_len";
    /// `memory`: which memory a signal death points at (`/dev/shm`).
    pub const MEMORY: &str = "memory";
    /// `nccl_error`: the NCCL error name (`ncclSystemError`, ...).
    pub const NCCL_ERROR: &str = "nccl_error";
    /// `node`: the TensorFlow graph node.
    pub const NODE: &str = "node";
    /// `ntstatus`: the Windows NTSTATUS name of an exit status.
    pub const NTSTATUS: &str = "ntstatus";
    /// `oom_kill_events`: Slurm's count of OOM-kill events.
    pub const OOM_KILL_EVENTS: &str = "oom_kill_events";
    /// `op`: the TensorFlow op.
    pub const OP: &str = "op";
    /// `op_type`: the collective of a timed-out NCCL work item (`OpType`).
    pub const OP_TYPE: &str = "op_type";
    /// `overflow`: `true` when a size did not fit in 64 bits.
    pub const OVERFLOW: &str = "overflow";
    /// `pid`: the process id the message names.
    pub const PID: &str = "pid";
    /// `pids`: process ids torchelastic reports killed, comma-separated.
    pub const PIDS: &str = "pids";
    /// `pool`: the MPS pool (`shared`/`private`).
    pub const POOL: &str = "pool";
    /// `process`: the process name the message names.
    pub const PROCESS: &str = "process";
    /// `ran_for_ms`: how long a timed-out NCCL work item ran, in ms.
    pub const RAN_FOR_MS: &str = "ran_for_ms";
    /// `rank`: the rank the message names.
    pub const RANK: &str = "rank";
    /// `reason`: the reason the message gives (an NCCL failure's, `OOMKilled`,
    /// or [`EVICTED`]).
    pub const REASON: &str = "reason";
    /// The [`REASON`] of a pod the kubelet evicted because its node ran low
    /// on memory.
    pub const EVICTED: &str = "Evicted";
    /// `reported_by`: who printed a generic OOM (library or API).
    pub const REPORTED_BY: &str = "reported_by";
    /// `root_cause_error_file`: torchelastic's root-cause `error_file`.
    pub const ROOT_CAUSE_ERROR_FILE: &str = "root_cause_error_file";
    /// `root_cause_exitcode`: torchelastic's root-cause exit code.
    pub const ROOT_CAUSE_EXITCODE: &str = "root_cause_exitcode";
    /// `root_cause_rank`: torchelastic's root-cause rank.
    pub const ROOT_CAUSE_RANK: &str = "root_cause_rank";
    /// `root_cause_signal`: torchelastic's root-cause signal.
    pub const ROOT_CAUSE_SIGNAL: &str = "root_cause_signal";
    /// `script`: the script torchelastic reports failed.
    pub const SCRIPT: &str = "script";
    /// `seq_num`: the sequence number of a timed-out NCCL work item (`SeqNum`).
    pub const SEQ_NUM: &str = "seq_num";
    /// `shape`: a TensorFlow tensor's shape.
    pub const SHAPE: &str = "shape";
    /// `signal`: the signal that ended a process, with its number.
    pub const SIGNAL: &str = "signal";
    /// `status`: the library status (`CUBLAS_STATUS_ALLOC_FAILED`).
    pub const STATUS: &str = "status";
    /// `step`: the Slurm job step.
    pub const STEP: &str = "step";
    /// `strerror`: the error text of a refused host allocation.
    pub const STRERROR: &str = "strerror";
    /// `timeout_ms`: the watchdog timeout of an NCCL work item (`Timeout(ms)`).
    pub const TIMEOUT_MS: &str = "timeout_ms";
    /// `stated_card_bytes`: the card size the text just before the message
    /// states ("RX6800 with 16gb"), in bytes.
    pub const STATED_CARD_BYTES: &str = "stated_card_bytes";
    /// `usage`: a job's memory usage as Slurm printed it.
    pub const USAGE: &str = "usage";
    /// `xid`: the NVIDIA Xid number.
    pub const XID: &str = "xid";
}

/// Defines [`Era`] from one list: each line gives the variant and its slug
/// (the JSON value of `era`). A detector can only set, and the explainer only
/// test, a form that is listed here, so a misspelt slug does not compile.
macro_rules! eras {
    ($($(#[$doc:meta])* $variant:ident = $slug:literal;)*) => {
        /// Which form (generation) of its family's message a finding was read
        /// from. Serialised as a stable snake_case slug.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Era {
            $($(#[$doc])* #[serde(rename = $slug)] $variant,)*
        }

        impl Era {
            /// Every era, in the order listed.
            pub const ALL: &'static [Era] = &[$(Era::$variant),*];

            /// The stable slug used in JSON.
            pub fn slug(self) -> &'static str {
                match self {
                    $(Era::$variant => $slug,)*
                }
            }
        }
    };
}

eras! {
    /// PyTorch allocator (`torch_allocator_oom`): `(GPU 0; ... cached)`, PyTorch ≈0.4.1–1.3.
    Cached = "cached";
    /// PyTorch allocator: `... reserved in total by PyTorch)`, PyTorch ≈1.4–2.0.
    Reserved = "reserved";
    /// PyTorch allocator: a `(GPU 0; ...` message cut before its era shows.
    Paren = "paren";
    /// PyTorch allocator: sentence form with the `total capacty` typo, PyTorch 2.1.
    Capacty = "capacty";
    /// PyTorch allocator: sentence form with `total capacity`, PyTorch ≥ 2.2.
    Capacity = "capacity";
    /// PyTorch allocator: sentence form cut before its total capacity.
    Sentence = "sentence";
    /// PyTorch allocator: the `cudaMallocAsync` backend's message.
    MallocAsync = "malloc_async";
    /// PyTorch allocator: the size guard that refuses more than 1 EB.
    SizeGuard = "size_guard";
    /// CUDA runtime OOM (`cuda_runtime_oom`): `CUDA error: out of memory`.
    Runtime = "runtime";
    /// CUDA runtime OOM: `CUDA driver error: out of memory`.
    Driver = "driver";
    /// CUDA runtime OOM: `cuda runtime error (2) : out of memory` (THC, PyTorch ≤ 0.4).
    Thc = "thc";
    /// Allocator assert (`allocator_assert`): `NVML_SUCCESS == r INTERNAL ASSERT FAILED`.
    Nvml = "nvml";
    /// Allocator assert: `!handles_.at(i)`.
    Handles = "handles";
    /// Host OOM (`host_oom`): the POSIX `can't allocate memory` form.
    Posix = "posix";
    /// Host OOM: the old form ending in `Buy new RAM!`.
    BuyNewRam = "buy_new_ram";
    /// Host OOM: `not enough memory` (Windows builds).
    NotEnoughMemory = "not_enough_memory";
    /// Host OOM killed (`host_oom_killed`): the kernel's OOM killer.
    Kernel = "kernel";
    /// Host OOM killed: a memory cgroup limit.
    Cgroup = "cgroup";
    /// Host OOM killed: Slurm's cgroup OOM report.
    Slurm = "slurm";
    /// Host OOM killed: Kubernetes `OOMKilled`.
    Kubernetes = "kubernetes";
    /// Host OOM kill: systemd's `UNIT: Failed with result 'oom-kill'`.
    Systemd = "systemd";
    /// Host OOM killed: torchelastic reports a child killed by SIGKILL.
    Torchelastic = "torchelastic";
    /// Child failed: DeepSpeed's launcher killed its ranks after one exited.
    Deepspeed = "deepspeed";
    /// Host OOM killed and fatal signal (`fatal_signal`): a DataLoader worker killed by a signal.
    Dataloader = "dataloader";
    /// Host OOM killed: a SIGKILL named in the log, or `oomwhy run`'s child killed by it.
    Sigkill = "sigkill";
    /// Host OOM killed: exit status 137.
    Exit137 = "exit_137";
    /// Host OOM killed: the shell's bare `Killed` ending the output.
    BareKilled = "bare_killed";
    /// Host OOM killed: the shell's own report of a job SIGKILL ended
    /// (bash's `PID Killed` job line, zsh's `zsh: killed`, fish's
    /// `terminated by signal SIGKILL`).
    Shell = "shell";
    /// Host OOM killed: Open MPI's launcher reports a rank ended by
    /// signal 9 (`mpirun noticed that process rank N ... exited on signal 9`).
    Mpi = "mpi";
    /// Host OOM killed: Ray's raylet lost a worker's connection without a
    /// word from it (`Worker unexpectedly exits with a connection error
    /// code N`), whose first cause it names is the OOM killer's SIGKILL.
    RayWorker = "ray_worker";
    /// Host OOM killed: YARN killed a container at its memory limit (Spark's
    /// `Container killed by YARN for exceeding memory limits`, the
    /// NodeManager's `is running beyond physical memory limits`).
    Yarn = "yarn";
    /// Host OOM killed: Ray's memory monitor killed a worker at its node's
    /// memory usage threshold.
    RayMonitor = "ray_monitor";
    /// Host OOM killed: Dask's nanny restarted a worker at its memory budget;
    /// as a warning, a Dask worker's high-memory warning.
    Dask = "dask";
    /// Host OOM: the JVM refused an allocation at one of its own limits
    /// (`java.lang.OutOfMemoryError: Java heap space`, `GC overhead limit
    /// exceeded`, `Metaspace`, ...), whatever RAM the machine had.
    Jvm = "jvm";
    /// `oomwhy run`: the wrapped command's exit status or Windows crash status.
    ExitStatus = "exit_status";
    /// XLA OOM (`xla_oom`): `Out of memory while trying to allocate N bytes.`
    Bytes = "bytes";
    /// XLA OOM: pinned host memory.
    Host = "host";
    /// XLA OOM: the request human-readable (rounded).
    HumanReadable = "human_readable";
    /// XLA OOM: the device allocator's form.
    DeviceAllocator = "device_allocator";
    /// XLA OOM: TPU compilation ran out of memory.
    TpuCompile = "tpu_compile";
    /// XLA OOM: the TPU runtime could not allocate a device buffer in HBM.
    TpuBuffer = "tpu_buffer";
    /// Process group aborted (`process_group_aborted`): `NCCL communicator was aborted`.
    CommunicatorAborted = "communicator_aborted";
    /// Process group aborted: `watchdog thread terminated with exception`.
    WatchdogException = "watchdog_exception";
    /// CuPy OOM (`cupy_oom`): CuPy ≤ 6, `out of memory to allocate N bytes (total M bytes)`.
    Legacy = "legacy";
    /// CuPy OOM: with the pool's `limit set to`.
    Limit = "limit";
    /// CuPy OOM: with `allocated so far`.
    AllocatedSoFar = "allocated_so_far";
    /// CuPy OOM: the request alone (e.g. `MemoryAsyncPool: usage not tracked`).
    Bare = "bare";
    /// TensorFlow OOM (`tf_oom`): the BFC allocator's warning.
    BfcAllocator = "bfc_allocator";
    /// TensorFlow OOM: `OOM when allocating tensor` from an op kernel.
    OpKernel = "op_kernel";
    /// MPS OOM (`mps_oom`): with `max allowed:` (the high-watermark limit is on).
    Watermark = "watermark";
    /// MPS OOM: without `max allowed:` (the high-watermark limit is off).
    NoWatermark = "no_watermark";
    /// KV cache OOM (`kv_cache_oom`): vLLM's `No available memory for the cache blocks`.
    NoCacheBlocks = "no_cache_blocks";
    /// KV cache OOM: text-generation-inference's warm-up failure.
    TgiWarmup = "tgi_warmup";
    /// KV cache OOM: SGLang's form.
    Sglang = "sglang";
    /// KV cache OOM: vLLM V0, the cache holds fewer tokens than the max seq len.
    MaxSeqLen = "max_seq_len";
    /// KV cache OOM: vLLM V1, the cache needs more memory than is available.
    KvCacheMemory = "kv_cache_memory";
    /// Generic OOM (`generic_oom`): llama.cpp / ggml `cudaMalloc failed`.
    LlamaCpp = "llama_cpp";
    /// Generic OOM: CTranslate2.
    Ctranslate2 = "ctranslate2";
    /// Generic OOM: ONNX Runtime's BFC arena.
    Onnxruntime = "onnxruntime";
    /// Generic OOM: Triton's `out of resource: shared memory`.
    TritonSharedMemory = "triton_shared_memory";
    /// Generic OOM: `torch.OutOfMemoryError` without the allocator's text.
    TorchOomClass = "torch_oom_class";
    /// Generic OOM: `cupy.cuda.memory.OutOfMemoryError` without the pool's text.
    CupyOomClass = "cupy_oom_class";
    /// Generic OOM: `CUDA_ERROR_OUT_OF_MEMORY`.
    CudaDriver = "cuda_driver";
    /// Generic OOM: `cudaErrorMemoryAllocation`.
    CudaRuntime = "cuda_runtime";
    /// Generic OOM: `hipErrorOutOfMemory`.
    Hip = "hip";
    /// Generic OOM: a vendor backend's `MLU/NPU/GCU/MUSA out of memory`.
    Vendor = "vendor";
    /// Generic OOM: RELION's `CudaCustomAllocator out of memory`.
    Relion = "relion";
    /// Generic OOM: PaddlePaddle's `Out of memory error on GPU N. Cannot allocate X memory`.
    Paddle = "paddle";
    /// Launch failure (`launch_failure`): cuBLAS's `CUBLAS_STATUS_EXECUTION_FAILED`.
    CublasExecution = "cublas_execution";
    /// Generic OOM: MXNet's pooled storage manager, `cudaMalloc failed: out of memory`.
    Mxnet = "mxnet";
    /// Generic OOM: Vulkan's `ErrorOutOfDeviceMemory` (ggml's Vulkan backend, LM Studio).
    Vulkan = "vulkan";
    /// Generic OOM: TensorRT's `Error Code 2: OutOfMemory`.
    Tensorrt = "tensorrt";
    /// Generic OOM: Apple's Metal, a command buffer failed with `Insufficient Memory`.
    Metal = "metal";
    /// TensorFlow (`tf_oom`): the fatal `EigenAllocator for GPU ran out of memory`.
    EigenAllocator = "eigen_allocator";
    /// TensorFlow (`tf_allocator_warning`): the CPU allocator's warning that
    /// one allocation exceeds 10% of (free) system memory.
    LargeAllocation = "large_allocation";
    /// XLA (`xla_oom`): the GPU runtime could not place a constant of the compiled program.
    Constant = "constant";
    /// NCCL (`nccl_oom`/`nccl_error`): a `/dev/shm` segment could not be created or grown.
    Shm = "shm";
}

impl std::fmt::Display for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.slug())
    }
}

/// Whether a finding is an out-of-memory error, probably one, or another crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// The message states an out-of-memory condition.
    Oom,
    /// The message is not an OOM message but usually means one.
    LikelyOom,
    /// A GPU or native crash that is not an OOM.
    Crash,
    /// Not an error: the memory state a snapshot recorded without an OOM.
    MemoryState,
    /// A warning about memory that is not an error (never given OOM verdicts).
    Warning,
}

impl Category {
    /// Whether findings of this category are (probably) out-of-memory errors.
    pub fn is_oom(self) -> bool {
        matches!(self, Category::Oom | Category::LikelyOom)
    }
}

/// Where a finding was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// File name as given on the command line, or `<stdin>`.
    pub input: String,
    /// 1-based line number of the message's first line.
    pub line: u64,
}

/// Byte counts stated by the message; `None` (JSON `null`) when not stated.
///
/// Values are exact conversions of the printed figures (see [`crate::units`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sizes {
    /// "Tried to allocate": for the native PyTorch allocator this is the rounded
    /// segment size it tried to cudaMalloc, not the tensor's size.
    pub requested_bytes: Option<u64>,
    /// "total capacity" / "Device limit": device memory as reported by CUDA.
    pub total_bytes: Option<u64>,
    /// "free": device-wide free memory, measured after PyTorch released its cache.
    pub free_bytes: Option<u64>,
    /// "already allocated" / "allocated by PyTorch": memory in live tensors
    /// (since 2.4 this includes free memory parked in CUDA-graph private pools).
    pub allocated_bytes: Option<u64>,
    /// "reserved in total by PyTorch": all memory the caching allocator holds.
    pub reserved_bytes: Option<u64>,
    /// "reserved by PyTorch but unallocated": held by the allocator, not in use.
    pub reserved_unallocated_bytes: Option<u64>,
    /// "cached" (PyTorch ≤ 1.3): reserved but not allocated, same meaning as the above.
    pub cached_bytes: Option<u64>,
    /// "allowed": the limit set with `torch.cuda.set_per_process_memory_fraction`.
    pub allowed_bytes: Option<u64>,
    /// "allocated in private pools (e.g., CUDA Graphs)": free blocks held by graph pools.
    pub private_pools_bytes: Option<u64>,
    /// "Including non-PyTorch memory, this process has X memory in use".
    pub process_in_use_bytes: Option<u64>,
    /// Family-specific quantities with self-explaining names (e.g.
    /// `pool_limit_bytes` for CuPy); absent for families that have none.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Option<u64>>,
}

impl Sizes {
    /// True if no size at all was stated.
    pub fn is_empty(&self) -> bool {
        self.requested_bytes.is_none()
            && self.total_bytes.is_none()
            && self.free_bytes.is_none()
            && self.allocated_bytes.is_none()
            && self.reserved_bytes.is_none()
            && self.reserved_unallocated_bytes.is_none()
            && self.cached_bytes.is_none()
            && self.allowed_bytes.is_none()
            && self.private_pools_bytes.is_none()
            && self.process_in_use_bytes.is_none()
            && self.extra.values().all(Option::is_none)
    }
}

/// One `Process N has X memory in use.` item of a PyTorch ≥ 2.1 message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessUsage {
    /// Host PID as NVML reports it (in a container this is not `getpid()`).
    pub pid: u32,
    /// GPU memory the process holds, in bytes.
    pub in_use_bytes: u64,
}

/// The advice line PyTorch appended to the message, as a version fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hint {
    /// The allocator option it recommends: `max_split_size_mb` or `expandable_segments`.
    pub option: Option<String>,
    /// The environment variable it names (`PYTORCH_CUDA_ALLOC_CONF`, ...).
    pub env_var: Option<String>,
    /// The documentation URL it links, if any.
    pub docs_url: Option<String>,
}

/// One frame of a Python traceback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// Source file as printed.
    pub file: String,
    /// Line number in that file.
    pub line: u64,
    /// Function name.
    pub function: String,
    /// The code line Python printed under the frame, if any.
    pub code: Option<String>,
}

/// An earlier exception in a chained traceback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainedException {
    /// `during_handling` ("During handling of the above exception, another
    /// exception occurred") or `direct_cause` ("The above exception was the
    /// direct cause of the following exception").
    pub relation: String,
    /// The earlier exception's last line, e.g. `torch.OutOfMemoryError: CUDA out of memory...`.
    pub exception: String,
    /// Frames of the earlier traceback (bounded like [`Traceback::frames`]).
    pub frames: Vec<Frame>,
}

/// The Python traceback that ended in the finding's message.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Traceback {
    /// Frames, outermost first. Very long tracebacks keep the first and last frames.
    pub frames: Vec<Frame>,
    /// Frames left out of `frames` to keep memory bounded.
    pub omitted_frames: u64,
    /// Exceptions that came before this one in the same chain, oldest first.
    pub chained: Vec<ChainedException>,
}

/// The training phase the crash happened in, as inferred from the traceback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phase {
    /// One of `model_load`, `forward`, `backward`, `optimizer_step`,
    /// `evaluation`, `data_loading`, `checkpoint`, `compile`, `unknown`.
    pub name: String,
    /// `high`, `medium`, `low`, or `none` for `unknown`.
    pub confidence: String,
    /// The frames or code lines the inference rests on.
    pub evidence: Vec<String>,
}

impl Default for Phase {
    fn default() -> Self {
        Phase {
            name: "unknown".into(),
            confidence: "none".into(),
            evidence: Vec::new(),
        }
    }
}

/// A conclusion about why the error happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Stable code, also accepted by `oomwhy explain`.
    pub code: String,
    /// One-line title.
    pub title: String,
    /// The reasoning, with the numbers.
    pub detail: String,
    /// The same title and detail in Chinese, written next to the English
    /// (the JSON carries the language asked for instead).
    #[serde(skip)]
    pub zh: Option<Chinese>,
}

/// The Chinese of a title and its text, written by the explainer next to
/// the English.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chinese {
    /// The title.
    pub title: String,
    /// The detail of a verdict, or how to apply a fix.
    pub text: String,
}

/// A remark about how the message was read (a size that could not be
/// read, a message cut short), written with its Chinese next to it. In JSON
/// it is one string, in the language asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Note {
    /// The remark in English (in the language asked for, once localized).
    pub text: String,
    /// The same remark in Chinese. Only a note read back from JSON lacks it.
    #[serde(skip)]
    pub zh: Option<String>,
}

/// Something to change, most effective first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fix {
    /// Stable identifier of the fix in the explainer's catalogue
    /// (`reduce-batch-size`): the same advice has the same id in every
    /// finding, language and release.
    pub id: String,
    /// What to do, in one line.
    pub title: String,
    /// The exact knob, flag, variable or code change.
    pub how: String,
    /// The same title and how in Chinese, written next to the English
    /// (the JSON carries the language asked for instead).
    #[serde(skip)]
    pub zh: Option<Chinese>,
}

/// Range of tensor sizes that PyTorch's allocator rounds to the printed
/// "Tried to allocate" figure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestRange {
    /// Smallest request (bytes) that prints this way.
    pub min_bytes: u64,
    /// Largest request (bytes) that prints this way.
    pub max_bytes: u64,
}

/// One row of the "what the numbers mean" table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldRow {
    /// The field's name as the message (or oomwhy, for derived rows) calls it.
    pub label: String,
    /// The value, formatted as the message formats sizes.
    pub value: String,
    /// One line saying what the number is here.
    pub meaning: String,
    /// True for numbers oomwhy computed rather than read.
    pub derived: bool,
    /// The label and meaning in Chinese, written next to the English
    /// (the JSON carries the language asked for instead).
    #[serde(skip)]
    pub zh: Option<Chinese>,
}

/// The answer: what happened in one line, what each number means, derived
/// quantities, verdicts and fixes. Every derived number is `None` when the
/// message does not give what it needs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// What happened, in one line: the report's first line.
    #[serde(default)]
    pub headline: String,
    /// The headline in Chinese, written next to the English (the JSON
    /// carries the language asked for instead).
    #[serde(skip)]
    pub headline_zh: Option<String>,
    /// Every stated and derived number, with what it means in this message.
    #[serde(default)]
    pub fields: Vec<FieldRow>,
    /// Memory held by PyTorch's caching allocator: stated, or allocated + unallocated.
    pub reserved_bytes: Option<u64>,
    /// Reserved but not in live tensors: stated, or reserved − allocated.
    pub reserved_unallocated_bytes: Option<u64>,
    /// This process's GPU memory outside PyTorch's allocator (CUDA context,
    /// cuBLAS/cuDNN workspaces, NCCL, other libraries): process total − reserved.
    pub non_pytorch_bytes: Option<u64>,
    /// Sum of the `Process N has X` items other than this process.
    pub other_processes_bytes: Option<u64>,
    /// requested − free. Negative when the device reported more free memory
    /// than the request, which points at a limit or a race, not at the hardware.
    pub shortfall_bytes: Option<i64>,
    /// total − free − reserved: device memory in use by anything other than
    /// this process's PyTorch allocator (own context, other libraries, other processes).
    pub outside_allocator_bytes: Option<i64>,
    /// What the "Tried to allocate" figure means as a tensor size (native allocator only).
    pub request_range: Option<RequestRange>,
    /// The `Process N` item that is probably this process itself (containers
    /// print the own process under its host PID).
    pub probable_self_pid: Option<u32>,
    /// Conclusions, most important first.
    pub verdicts: Vec<Verdict>,
    /// What to change, most effective first.
    pub fixes: Vec<Fix>,
}

/// One crash found in the input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// 1-based position among the findings of this run.
    pub id: usize,
    /// Message family.
    pub kind: Kind,
    /// `oom`, `likely_oom` or `crash`.
    pub category: Category,
    /// Where the (first copy of the) message was read.
    pub source: Source,
    /// The message as found (normalised: log prefixes removed, wrapped lines joined).
    pub text: String,
    /// The exception prefix, e.g. `torch.OutOfMemoryError`, if printed.
    pub exception: Option<String>,
    /// `cuda`, `hip`, `xpu`, ... or `None` when the message does not say.
    pub backend: Option<String>,
    /// Which form of its family's message this is (see [`Era`]).
    pub era: Option<Era>,
    /// The framework versions that print this exact form, when the form tells.
    pub version_hint: Option<String>,
    /// GPU index the message names.
    pub device: Option<u32>,
    /// Stated sizes in bytes.
    pub sizes: Sizes,
    /// `Process N has X memory in use` items, in message order.
    pub processes: Vec<ProcessUsage>,
    /// The allocator hint the message carried.
    pub hint: Option<Hint>,
    /// Family-specific facts (error codes, tensor shapes, exit codes).
    pub facts: BTreeMap<String, String>,
    /// The message stops before its known end (cut off in the log or by a PyTorch bug).
    pub truncated: bool,
    /// Problems met while reading the numbers (e.g. a value too large for 64 bits).
    pub notes: Vec<Note>,
    /// The traceback that ended in this message.
    pub traceback: Option<Traceback>,
    /// Training phase, inferred from the traceback.
    pub phase: Phase,
    /// Last progress counter (step, iteration, batch) seen before the crash.
    pub last_step: Option<u64>,
    /// Ranks whose copy of this crash was folded into this finding.
    pub ranks: Vec<u32>,
    /// Devices named by the folded copies.
    pub devices: Vec<u32>,
    /// How many copies were folded into this finding (≥ 1).
    pub occurrences: u64,
    /// The rank whose copy appeared first in the log.
    pub first_rank: Option<u32>,
    /// `id` of an earlier OOM this crash is a consequence of (NCCL aborts, ...).
    pub consequence_of: Option<usize>,
    /// `nvidia-smi` output or `torch.cuda.memory_summary()` found next to this
    /// finding in the input (see [`Diagnostics`]); `None` when there was none.
    pub diagnostics: Option<Diagnostics>,
    /// Derived numbers, verdicts and fixes.
    pub diagnosis: Diagnosis,
    /// Codes to pass to `oomwhy explain` for the long explanation.
    pub explain: Vec<String>,
    /// What a PyTorch memory snapshot recorded (absent from JSON when there is none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Box<SnapshotReport>>,
    /// The timestamp that starts the line the message starts on, if any,
    /// normalised so that two of one log's timestamps compare as text: to
    /// tell which of a job's per-rank files failed first. Not in the JSON.
    #[serde(skip)]
    pub(crate) time: Option<String>,
    /// The lines around the message that may tell how the job ran (an
    /// engine, a demo script, training, a batch size already lowered),
    /// joined by newlines: read by the explainer, not in the JSON.
    #[serde(skip)]
    pub(crate) nearby: String,
}

impl Finding {
    /// A finding with only its kind, source and text; parsers fill in the rest.
    pub fn new(kind: Kind, input: &str, line: u64, text: String) -> Self {
        Finding {
            id: 0,
            kind,
            category: kind.category(),
            source: Source {
                input: input.to_string(),
                line,
            },
            text,
            exception: None,
            backend: None,
            era: None,
            version_hint: None,
            device: None,
            sizes: Sizes::default(),
            processes: Vec::new(),
            hint: None,
            facts: BTreeMap::new(),
            truncated: false,
            notes: Vec::new(),
            traceback: None,
            phase: Phase::default(),
            last_step: None,
            ranks: Vec::new(),
            devices: Vec::new(),
            occurrences: 1,
            first_rank: None,
            consequence_of: None,
            diagnostics: None,
            diagnosis: Diagnosis::default(),
            explain: Vec::new(),
            snapshot: None,
            time: None,
            nearby: String::new(),
        }
    }

    /// Every frame of the finding's traceback: its own, then those of the
    /// exceptions chained before it.
    pub(crate) fn traceback_frames(&self) -> impl Iterator<Item = &Frame> {
        self.traceback.iter().flat_map(|tb| {
            tb.frames
                .iter()
                .chain(tb.chained.iter().flat_map(|c| c.frames.iter()))
        })
    }
}

/// The framework that printed the message or ran the failing code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framework {
    PyTorch,
    TensorFlow,
    Jax,
    CuPy,
    OnnxRuntime,
    /// llama.cpp and the tools built on its ggml library (Ollama, LM Studio).
    Ggml,
    /// The message and its traceback do not say.
    Unknown,
}

impl Framework {
    pub(crate) fn of(f: &Finding) -> Framework {
        match f.kind {
            Kind::TorchAllocatorOom | Kind::MpsOom | Kind::KvCacheOom => return Framework::PyTorch,
            Kind::TfOom | Kind::TfAllocatorWarning => return Framework::TensorFlow,
            Kind::CupyOom => return Framework::CuPy,
            _ => {}
        }
        if f.exception
            .as_deref()
            .is_some_and(|e| e.starts_with("torch."))
        {
            return Framework::PyTorch;
        }
        let files: Vec<String> = f
            .traceback_frames()
            .map(|fr| fr.file.replace('\\', "/"))
            .collect();
        let in_package = |package: &str| files.iter().any(|file| file.contains(package));
        let text = f.text.as_str();
        if in_package("/torch/") {
            Framework::PyTorch
        } else if in_package("/tensorflow/") || in_package("/keras/") {
            Framework::TensorFlow
        } else if in_package("/jax/")
            || in_package("/jaxlib/")
            || text.contains("jaxlib")
            || f.exception.as_deref().is_some_and(|e| e.starts_with("jax"))
        {
            Framework::Jax
        } else if f.kind == Kind::XlaOom {
            // XLA's message without a traceback: JAX or TensorFlow.
            Framework::Unknown
        } else if in_package("/cupy/")
            || text.contains("cupy")
            || f.exception
                .as_deref()
                .is_some_and(|e| e.starts_with("cupy"))
        {
            Framework::CuPy
        } else if text.contains("onnxruntime") || text.contains("[ONNXRuntimeError]") {
            Framework::OnnxRuntime
        } else if TENSORFLOW_TEXT_MARKS.iter().any(|m| text.contains(m)) {
            Framework::TensorFlow
        } else if text.contains("ggml")
            || text.contains("llama_")
            || f.facts
                .get(fact::REPORTED_BY)
                .is_some_and(|r| r.starts_with("ggml"))
        {
            Framework::Ggml
        } else {
            framework_nearby(f).unwrap_or(Framework::Unknown)
        }
    }
}

/// What only TensorFlow prints in a message: the op-node annotation its
/// runtime errors end with (`[[{{node bert/encoder/.../mul}}]]`, `[[node
/// X`, TF 1.x's `[[Node: X = ...`) and its C++ sources' log paths.
const TENSORFLOW_TEXT_MARKS: &[&str] = &[
    "[[{{node ",
    "[[node ",
    "[[Node: ",
    "tensorflow/core/",
    "tensorflow/stream_executor/",
];

/// The writer's lines around the message (`Finding::nearby`, the message
/// line's own log prefix included) that show the program which ran, where
/// the message itself does not: CuPy's modules or its import, ONNX
/// Runtime's log prefix (`[E:onnxruntime:Default, tensorrt_execution_provider.h:50 log]`,
/// printed before the TensorRT execution provider's messages), its Python
/// modules or its TensorRT provider's name; TensorFlow's Python modules and
/// installed package (`tensorflow.python.framework.errors_impl.ResourceExhaustedError`,
/// `site-packages/tensorflow/python/client/session.py`) and its C++ log
/// paths. A bare mention of a name
/// ("tried cupy too") shows none; a message with a Python exception or
/// traceback of its own is read from those.
fn framework_nearby_patterns() -> &'static [(regex::Regex, Framework); 3] {
    static RE: std::sync::OnceLock<[(regex::Regex, Framework); 3]> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        [
            (
                crate::constant_regex(
                    r"\bimport\s+cupy\b|\bfrom\s+cupy\b|\bcupy(?:_backends)?\.(?:cuda|core|_core|api|ndarray|asarray|zeros|ones|empty|array|get_default_memory_pool)\b|(?:site|dist)-packages[/\\]cupy|\bcupy[/\\](?:cuda|core|_core)[/\\]",
                ),
                Framework::CuPy,
            ),
            (
                crate::constant_regex(
                    r"\b[EWIV]:onnxruntime:|\bonnxruntime\.(?:capi|InferenceSession)\b|\bimport\s+onnxruntime\b|\bTensorrtExecutionProvider\b|\btensorrt_execution_provider\.(?:h|cc)\b|\bOnnxRuntimeException\b",
                ),
                Framework::OnnxRuntime,
            ),
            (
                crate::constant_regex(
                    r"\btensorflow\.python\.|\berrors_impl\.\w+Error\b|(?:site|dist)-packages[/\\]tensorflow[/\\]|\btensorflow[/\\](?:core|stream_executor|compiler)[/\\]|\[\[\{\{node ",
                ),
                Framework::TensorFlow,
            ),
        ]
    })
}

fn framework_nearby(f: &Finding) -> Option<Framework> {
    // A Python exception or traceback is the program's own account, and the
    // lines read after a message may be the next message's (another
    // framework's, in a paste that mixes them).
    if f.nearby.is_empty() || f.exception.is_some() || f.traceback.is_some() {
        return None;
    }
    framework_nearby_patterns()
        .iter()
        .find(|(re, _)| re.is_match(&f.nearby))
        .map(|&(_, framework)| framework)
}

/// Diagnostics pasted alongside an OOM (or printed by the framework with it):
/// the nearest `nvidia-smi` table and `torch.cuda.memory_summary()` within
/// 500 lines before or after the finding. Both were sampled at another moment
/// than the error, so their numbers are evidence, not the state at the failure.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// The `nvidia-smi` default table, if one was found.
    pub nvidia_smi: Option<NvidiaSmi>,
    /// The `torch.cuda.memory_summary()` table, if one was found.
    pub memory_summary: Option<MemorySummary>,
}

/// `nvidia-smi`'s default table. Sizes are printed in MiB (1024² bytes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NvidiaSmi {
    /// 1-based line of the `NVIDIA-SMI ... Driver Version` header.
    pub line: u64,
    /// `Driver Version: ...`, as printed.
    pub driver_version: Option<String>,
    /// `CUDA Version: ...` (the highest CUDA the driver supports), as printed.
    pub cuda_version: Option<String>,
    /// One entry per GPU row, in table order.
    pub gpus: Vec<SmiGpu>,
    /// The `Processes:` table, in table order (empty for `No running processes found`).
    pub processes: Vec<SmiProcess>,
}

/// One GPU of an `nvidia-smi` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmiGpu {
    /// GPU index as nvidia-smi numbers it (all GPUs of the machine, not
    /// `CUDA_VISIBLE_DEVICES` order).
    pub index: u32,
    /// Product name, as printed (long names are cut with `...`).
    pub name: String,
    /// `Memory-Usage` used part, in bytes; `None` when not printed (`Not Supported`).
    pub used_bytes: Option<u64>,
    /// `Memory-Usage` total part, in bytes.
    pub total_bytes: Option<u64>,
}

/// One row of `nvidia-smi`'s `Processes:` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmiProcess {
    /// GPU index the process uses.
    pub gpu: u32,
    /// Host PID (`None` when printed as `N/A`).
    pub pid: Option<u32>,
    /// `C` (compute), `G` (graphics), `C+G`, `M` (MPS), ... as printed.
    #[serde(rename = "type")]
    pub kind: String,
    /// Process name as printed (long paths are cut with a leading `...`).
    pub name: String,
    /// GPU memory the process holds, in bytes; `None` for `N/A` (Windows WDDM).
    pub used_bytes: Option<u64>,
}

/// `torch.cuda.memory_summary()` for one device. Sizes are the printed
/// figures in bytes: PyTorch floors each value to its unit (`B`, `KiB`/`KB`,
/// `MiB`/`MB`, ..., all powers of 1024), so the true value is at most one
/// unit more. `None` where the row is missing (abbreviated or older layouts).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemorySummary {
    /// 1-based line of the `PyTorch CUDA memory summary, device ID N` title.
    pub line: u64,
    /// `device ID N`.
    pub device: Option<u32>,
    /// `CUDA OOMs`: OOM errors this process has raised so far on the device.
    pub ooms: Option<u64>,
    /// `cudaMalloc retries`: times a cudaMalloc failed, the allocator freed
    /// its cached blocks and tried again. Each is a moment at the limit.
    pub alloc_retries: Option<u64>,
    /// `Allocated memory`, current: memory in live tensors.
    pub allocated_current_bytes: Option<u64>,
    /// `Allocated memory`, peak since start (or the last peak reset).
    pub allocated_peak_bytes: Option<u64>,
    /// `Active memory`, current: live tensors plus blocks waiting for streams.
    pub active_current_bytes: Option<u64>,
    /// `Active memory`, peak.
    pub active_peak_bytes: Option<u64>,
    /// `Requested memory` (PyTorch ≥ 2.0), current: bytes the tensors asked
    /// for, before rounding to the allocator's block sizes.
    pub requested_current_bytes: Option<u64>,
    /// `Requested memory`, peak.
    pub requested_peak_bytes: Option<u64>,
    /// `GPU reserved memory`, current: everything the caching allocator holds.
    pub reserved_current_bytes: Option<u64>,
    /// `GPU reserved memory`, peak.
    pub reserved_peak_bytes: Option<u64>,
    /// `Non-releasable memory`, current: free space inside split blocks that
    /// cannot be returned while the rest of the block is in use (fragmentation).
    pub non_releasable_current_bytes: Option<u64>,
    /// `Non-releasable memory`, peak.
    pub non_releasable_peak_bytes: Option<u64>,
}

/// Everything oomwhy read from one PyTorch memory snapshot file (JSON:
/// `finding.snapshot`): plain data, filled in by the snapshot reader.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotReport {
    /// `dict` (`_snapshot()`/`_dump_snapshot()`) or `segment_list` (`memory_snapshot()`).
    pub layout: String,
    /// The PyTorch versions that write this shape, e.g. `2.1` or `≥2.10`.
    pub era: String,
    /// The keys the era rests on.
    pub era_evidence: Vec<String>,
    /// Pickle protocol of the file.
    pub pickle_protocol: u8,
    /// `PYTORCH_CUDA_ALLOC_CONF` as recorded in `allocator_settings`, if any.
    pub alloc_conf: Option<String>,
    /// `max_split_size` in bytes; `None` when unlimited or not recorded.
    pub max_split_size_bytes: Option<u64>,
    /// `expandable_segments` setting, if recorded.
    pub expandable_segments: Option<bool>,
    /// Memory state per device (at the OOM for the OOM's device).
    pub devices: Vec<DeviceState>,
    /// The OOM this finding is about; `None` for a memory-state summary.
    pub oom: Option<OomAnalysis>,
    /// Why there is no `oom` event, when there is none.
    pub missing_oom: Option<String>,
}

/// The allocator's memory on one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceState {
    /// Device index.
    pub device: i64,
    /// Segments (cudaMalloc'd regions or expandable mappings).
    pub segments: u64,
    /// Of which expandable.
    pub expandable_segments: u64,
    /// Sum of segment sizes: what PyTorch reserved.
    pub reserved_bytes: u64,
    /// Blocks in live tensors.
    pub allocated_bytes: u64,
    /// What those tensors asked for, before rounding.
    pub tensor_bytes: u64,
    /// Freed blocks still waiting for other streams.
    pub pending_free_bytes: u64,
    /// Free blocks inside segments (holes).
    pub free_in_segments_bytes: u64,
    /// The largest hole.
    pub largest_hole_bytes: u64,
    /// Reserved memory in private pools (CUDA graphs, `MemPool`).
    pub private_pool_bytes: u64,
    /// Trace events recorded for the device.
    pub trace_events: u64,
    /// Live memory grouped by the user's allocation site, largest first.
    pub top_sites: Vec<Site>,
}

/// Live memory allocated from one place in the user's code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// `file:line in function` of the innermost user frame, or a
    /// parenthesised description when no stack was recorded.
    pub location: String,
    /// Bytes of live blocks allocated there.
    pub bytes: u64,
    /// Number of live blocks.
    pub blocks: u64,
    /// A few user frames, innermost first.
    pub stack: Vec<String>,
}

/// The OOM event and what the state at that moment says about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OomAnalysis {
    /// Device index.
    pub device: i64,
    /// The request, rounded up to 512 bytes (the event's `size`).
    pub request_bytes: u64,
    /// The segment the allocator tried to cudaMalloc for it: what the
    /// error message prints as "Tried to allocate".
    pub allocation_bytes: u64,
    /// `small` (≤ 1 MiB) or `large`.
    pub pool: String,
    /// The stream that asked.
    pub stream: i64,
    /// What CUDA reported free at the failure (`device_free`).
    pub device_free_bytes: Option<u64>,
    /// Position of the event in the device's trace.
    pub event_index: u64,
    /// Trace events recorded after the OOM.
    pub events_after: u64,
    /// `at_oom` (dumped from the OOM observer), `rewound` (later dump,
    /// trace undone back to the OOM) or `after_oom` (could not be rewound).
    pub state: String,
    /// The largest free block the allocator could have used: same pool
    /// type, same stream, default pool, within the `max_split_size` rules.
    pub largest_usable_hole_bytes: u64,
    /// Free bytes in holes of that kind, together.
    pub usable_class_free_bytes: u64,
    /// Largest hole of the right size class on another stream.
    pub largest_other_stream_hole_bytes: u64,
    /// Largest hole in a private pool.
    pub largest_private_pool_hole_bytes: u64,
    /// Largest hole big enough but refused by the `max_split_size` rules.
    pub largest_oversize_hole_bytes: u64,
    /// Freed blocks of the same pool type waiting for other streams.
    pub pending_free_bytes: u64,
    /// The user frames of the failed allocation, innermost first.
    pub stack: Vec<String>,
}

/// Counts for the end-of-run summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of findings.
    pub findings: usize,
    /// Findings with category `oom`.
    pub oom: usize,
    /// Findings with category `likely_oom`.
    pub likely_oom: usize,
    /// Findings with category `crash`.
    pub crash: usize,
    /// Findings with category `warning` (left out of the JSON when zero).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warning: usize,
    /// Inputs read (files and stdin).
    pub inputs: usize,
    /// Inputs that could not be read.
    pub input_errors: usize,
    /// Lines read over all inputs.
    pub lines: u64,
    /// Bytes read over all inputs.
    pub bytes: u64,
}

impl Summary {
    /// Counts one finding by its category (a memory-state snapshot is a
    /// finding but neither an error nor a crash).
    pub fn count(&mut self, category: Category) {
        match category {
            Category::Oom => self.oom += 1,
            Category::LikelyOom => self.likely_oom += 1,
            Category::Crash => self.crash += 1,
            Category::MemoryState => {}
            Category::Warning => self.warning += 1,
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The whole JSON document.
#[derive(Debug, Clone, Serialize)]
pub struct Report<'a> {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Findings in the order they occurred.
    pub findings: &'a [Finding],
    /// Counts.
    pub summary: &'a Summary,
}

#[cfg(test)]
mod tests {
    use super::Era;

    #[test]
    fn every_era_is_its_slug_in_json_and_reads_back() {
        let mut seen = std::collections::BTreeSet::new();
        for &era in Era::ALL {
            assert!(seen.insert(era.slug()), "duplicate slug {}", era.slug());
            let json = serde_json::to_string(&era).unwrap();
            assert_eq!(json, format!("\"{}\"", era.slug()));
            assert_eq!(era.to_string(), era.slug());
            assert_eq!(serde_json::from_str::<Era>(&json).unwrap(), era);
        }
    }

    #[test]
    fn an_unknown_era_is_an_error_not_a_panic() {
        let err = serde_json::from_str::<Era>("\"no_such_era\"").unwrap_err();
        assert!(err.to_string().contains("no_such_era"), "{err}");
    }
}
