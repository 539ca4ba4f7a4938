//! What a finding ran in, as far as its message and traceback tell: the GPU
//! vendor, an inference engine or diffusion front end, whether the model's
//! parameters were being loaded or moved, and the PyTorch releases the
//! message form allows. Fixes are chosen from it so that none is given that
//! cannot apply (docs/fix-versions.md lists the versions and their sources).

use crate::record::{fact, Era, Finding, Kind};

/// The GPU's vendor, from the backend the message names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vendor {
    Nvidia,
    Amd,
    Intel,
    Apple,
    /// Huawei Ascend NPUs (torch_npu).
    Ascend,
    /// The message does not say (most non-PyTorch messages).
    Unknown,
}

impl Vendor {
    pub(crate) fn of(f: &Finding) -> Vendor {
        // llama.cpp's HIP build keeps the CUDA backend's names but calls
        // its devices ROCm0, ROCm1, ...
        if f.text.contains("ROCm") {
            return Vendor::Amd;
        }
        match f.backend.as_deref() {
            Some("cuda" | "nccl") => Vendor::Nvidia,
            Some("hip" | "rocm") => Vendor::Amd,
            Some("xpu" | "dpcpp") => Vendor::Intel,
            Some("mps" | "metal") => Vendor::Apple,
            Some("npu") => Vendor::Ascend,
            _ if f.kind == Kind::MpsOom => Vendor::Apple,
            _ if f.text.contains("HIP out of memory") || f.text.contains("hipError") => Vendor::Amd,
            _ => Vendor::Unknown,
        }
    }

    /// The tool that shows who holds this GPU's memory.
    pub(super) fn smi(self) -> &'static str {
        match self {
            Vendor::Amd => "`rocm-smi --showpids --showmeminfo vram`",
            Vendor::Intel => "`xpu-smi stats -d 0`",
            Vendor::Apple => "Activity Monitor (Window → GPU History)",
            Vendor::Ascend => "`npu-smi info`",
            Vendor::Nvidia | Vendor::Unknown => "`nvidia-smi`",
        }
    }

    /// The variable that picks which GPUs a process sees.
    pub(super) fn visible_devices(self) -> &'static str {
        match self {
            Vendor::Amd => "HIP_VISIBLE_DEVICES=N",
            Vendor::Intel => "ZE_AFFINITY_MASK=N",
            Vendor::Ascend => "ASCEND_RT_VISIBLE_DEVICES=N",
            Vendor::Nvidia | Vendor::Unknown | Vendor::Apple => "CUDA_VISIBLE_DEVICES=N",
        }
    }
}

/// A serving engine or front end whose own settings decide its memory use;
/// training advice (batch size, gradient checkpointing) does not apply to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runtime {
    Vllm,
    Sglang,
    Tgi,
    Diffusers,
    ComfyUi,
}

impl Runtime {
    /// Recognised from the traceback's file paths, the message text, and the
    /// process a line prefix names; a KV-cache error is always an engine's
    /// own, named by its message form where nothing else names it.
    pub(crate) fn of(f: &Finding) -> Option<Runtime> {
        let seen = Runtime::seen(f);
        if f.kind != Kind::KvCacheOom {
            return seen;
        }
        Some(match f.era {
            Some(Era::TgiWarmup) => Runtime::Tgi,
            Some(Era::Sglang) => Runtime::Sglang,
            // vLLM's forms, also printed by engines built on its code.
            _ => seen.filter(|r| r.is_engine()).unwrap_or(Runtime::Vllm),
        })
    }

    fn seen(f: &Finding) -> Option<Runtime> {
        let mut places: Vec<String> = f
            .traceback
            .iter()
            .flat_map(|tb| {
                tb.frames
                    .iter()
                    .chain(tb.chained.iter().flat_map(|c| c.frames.iter()))
            })
            .map(|fr| fr.file.replace('\\', "/").to_ascii_lowercase())
            .collect();
        places.push(f.text.to_ascii_lowercase());
        let any = |needle: &str| places.iter().any(|p| p.contains(needle));
        let named = f.facts.get(fact::ENGINE).map(String::as_str);
        // Engines before front ends: ComfyUI can run on top of diffusers.
        if named == Some("vllm") || any("vllm/") || any("vllm.") {
            Some(Runtime::Vllm)
        } else if named == Some("sglang") || any("sglang/") {
            Some(Runtime::Sglang)
        } else if any("text_generation_server/") {
            Some(Runtime::Tgi)
        } else if any("comfyui") || any("/comfy/") {
            Some(Runtime::ComfyUi)
        } else if any("diffusers/") {
            Some(Runtime::Diffusers)
        } else {
            None
        }
    }

    /// True for the inference servers.
    pub(super) fn is_engine(self) -> bool {
        matches!(self, Runtime::Vllm | Runtime::Sglang | Runtime::Tgi)
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
            .traceback
            .iter()
            .flat_map(|tb| {
                tb.frames
                    .iter()
                    .chain(tb.chained.iter().flat_map(|c| c.frames.iter()))
            })
            .map(|fr| fr.file.replace('\\', "/"))
            .collect();
        let in_package = |package: &str| files.iter().any(|file| file.contains(package));
        let text = f.text.as_str();
        if in_package("/torch/") {
            Framework::PyTorch
        } else if in_package("/tensorflow/") || in_package("/keras/") {
            Framework::TensorFlow
        } else if in_package("/jax/") || in_package("/jaxlib/") || text.contains("jaxlib") {
            Framework::Jax
        } else if f.kind == Kind::XlaOom {
            // XLA's message without a traceback: JAX or TensorFlow.
            Framework::Unknown
        } else if in_package("/cupy/") || text.contains("cupy") {
            Framework::CuPy
        } else if text.contains("onnxruntime") || text.contains("[ONNXRuntimeError]") {
            Framework::OnnxRuntime
        } else if text.contains("ggml") || text.contains("llama_") {
            Framework::Ggml
        } else {
            Framework::Unknown
        }
    }
}

/// What kind of program reported the finding, where it names itself: the
/// program decides the advice. Advice about a model's workload (batch
/// size, precision, a smaller or quantised model) is for programs that run
/// a model; a Python framework's API is for programs that run in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Program {
    /// Python code, a framework, or nothing the finding names.
    Unknown,
    /// A native program that runs a model through its own options
    /// (llama.cpp's ggml, darknet, TensorRT): workload fixes apply through
    /// that program, no Python framework's API does.
    NativeModel,
    /// A program that runs no model: a video encoder (FFmpeg's NVENC), a
    /// renderer (Blender's Cycles), a miner, a CUDA sample, a script in
    /// another language. Neither workload fixes nor framework APIs apply.
    NoModel,
}

/// Reporters (the `reported_by` fact, or the program a line names) that
/// run a model natively.
const NATIVE_MODEL_REPORTERS: &[&str] = &["darknet", "TensorRT", "ggml", "llama.cpp"];

/// Reporters that run no model.
const NO_MODEL_REPORTERS: &[&str] = &["FFmpeg", "Blender", "Cycles", "ccminer", "deviceQuery"];

/// Words of a finding's text that only a program running no model prints:
/// NVENC's session call, Blender Cycles' device allocation, the CUDA
/// samples' device query.
const NO_MODEL_TEXT: &[&str] = &[
    "OpenEncodeSessionEx",
    "nvEncOpenEncodeSessionEx",
    "_nvenc",
    "cuMemAlloc(&device_pointer",
    "cudaGetDeviceCount returned",
];

/// Processes the kernel's OOM killer names that are no Python interpreter
/// (`perl`, `java`, a shell): their memory is not a model's.
const NOT_PYTHON_PROCESSES: &[&str] = &["perl", "java", "node", "bash", "sh", "ruby", "Rscript"];

impl Program {
    pub(crate) fn of(f: &Finding) -> Program {
        if Framework::of(f) == Framework::Ggml {
            return Program::NativeModel;
        }
        // A traceback or an exception class is Python's: what the message
        // names inside it is a library the script called.
        if f.traceback.is_some() || f.exception.is_some() {
            return Program::Unknown;
        }
        let reporter = f.facts.get(fact::REPORTED_BY).map_or("", String::as_str);
        let named = |names: &[&str]| names.iter().any(|n| reporter.starts_with(n));
        if named(NO_MODEL_REPORTERS) || NO_MODEL_TEXT.iter().any(|w| f.text.contains(w)) {
            return Program::NoModel;
        }
        if named(NATIVE_MODEL_REPORTERS) {
            return Program::NativeModel;
        }
        let process = f.facts.get(fact::PROCESS).map_or("", String::as_str);
        if NOT_PYTHON_PROCESSES.contains(&process) {
            return Program::NoModel;
        }
        Program::Unknown
    }

    /// A native program named itself: no Python framework's API applies.
    pub(crate) fn is_native(self) -> bool {
        self != Program::Unknown
    }
}

/// What a finding ran in, read once: the facts every fix's applicability
/// is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Setting {
    pub framework: Framework,
    pub vendor: Vendor,
    pub runtime: Option<Runtime>,
    /// Parameters were being loaded, moved or converted.
    pub loading: bool,
    /// The PyTorch releases the message form allows (first, last).
    pub torch: (Release, Option<Release>),
    /// The kind of program that reported the finding.
    pub program: Program,
}

impl Setting {
    pub(crate) fn of(f: &Finding) -> Setting {
        Setting {
            framework: Framework::of(f),
            vendor: Vendor::of(f),
            runtime: Runtime::of(f),
            loading: is_loading(f),
            torch: torch_releases(f),
            program: Program::of(f),
        }
    }
}

/// Functions that move or convert a model's parameters (`Module.to` calls
/// `_apply`, which calls `convert` for every tensor) or load them.
const LOADING_FUNCTIONS: &[&str] = &[
    "_apply",
    "convert",
    "load_state_dict",
    "_load_state_dict_into_meta_model",
    "from_pretrained",
    "load_checkpoint_and_dispatch",
];

/// True when the OOM happened while the model's parameters were loaded,
/// moved or converted: then loading fixes apply, not batch-size ones.
pub(crate) fn is_loading(f: &Finding) -> bool {
    if matches!(f.phase.name.as_str(), "model_load" | "checkpoint") {
        return true;
    }
    f.traceback.as_ref().is_some_and(|tb| {
        // The innermost frames decide: a training step that calls `.to()`
        // on a batch is not loading a model.
        tb.frames
            .iter()
            .rev()
            .take(4)
            .any(|fr| LOADING_FUNCTIONS.contains(&fr.function.as_str()))
    })
}

/// A PyTorch release as (major, minor).
pub(crate) type Release = (u32, u32);

/// The releases a message form allows: the first, and the last when the
/// form stopped being printed.
pub(crate) fn torch_releases(f: &Finding) -> (Release, Option<Release>) {
    if f.kind != Kind::TorchAllocatorOom && f.kind != Kind::CudaRuntimeOom {
        return ((0, 0), None);
    }
    let (first, last) = match f.era {
        Some(Era::Cached) => ((0, 4), Some((1, 3))),
        Some(Era::Reserved) => ((1, 4), Some((2, 0))),
        Some(Era::Paren) => ((0, 4), Some((2, 0))),
        Some(Era::Capacty) => ((2, 1), Some((2, 1))),
        Some(Era::Capacity) => ((2, 2), None),
        Some(Era::Sentence) => ((2, 1), None),
        Some(Era::Thc) => ((0, 1), Some((0, 4))),
        _ => ((0, 0), None),
    };
    // Intel's XPU allocator (its extension for PyTorch ≥ 1.10, then PyTorch
    // itself from 2.4) prints the reserved-era form in every release: the
    // form dates nothing.
    if Vendor::of(f) == Vendor::Intel {
        return (since::AUTOCAST, None);
    }
    // The max_split_size_mb hint was added in ≈1.10.
    let first = if f.era == Some(Era::Reserved) && f.hint.is_some() {
        since::MAX_SPLIT
    } else {
        first
    };
    // The version hint ("PyTorch 2.2–2.3", "PyTorch 2.4+") narrows the start.
    let hinted = f
        .version_hint
        .as_deref()
        .and_then(|h| h.strip_prefix("PyTorch "))
        .and_then(parse_release);
    match hinted {
        Some(h) if h > first => (h, last),
        _ => (first, last),
    }
}

fn parse_release(text: &str) -> Option<Release> {
    let digits = |s: &str| -> Option<u32> {
        let n: String = s.chars().take_while(char::is_ascii_digit).collect();
        n.parse().ok()
    };
    let text = text.trim_start_matches(['≈', '~']);
    let (major, rest) = text.split_once('.')?;
    Some((digits(major)?, digits(rest)?))
}

/// Whether an option that first shipped in `since` exists for this message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Availability {
    /// Every release that prints this form has it.
    Yes,
    /// Some do: the text says from which release.
    From(String),
    /// None does: offered only as "upgrade to ≥ X".
    Upgrade(String),
}

pub(super) fn available(f: &Finding, since: Release) -> Availability {
    let (first, last) = torch_releases(f);
    let name = format!("PyTorch ≥ {}.{}", since.0, since.1);
    if first >= since {
        Availability::Yes
    } else if last.is_some_and(|l| l < since) {
        Availability::Upgrade(name)
    } else {
        Availability::From(name)
    }
}

/// The first release of each PyTorch option a fix names (sources in
/// docs/fix-versions.md).
pub(super) mod since {
    use super::Release;
    /// `torch.cuda.amp.autocast` and `GradScaler`: native mixed precision.
    pub const CUDA_AMP: Release = (1, 6);
    /// `torch.autocast(device_type=...)`, the device-generic form.
    pub const AUTOCAST: Release = (1, 10);
    /// `torch.amp.GradScaler("cuda")` is offered from the release that
    /// deprecates `torch.cuda.amp.GradScaler` (it exists from 2.3).
    pub const AMP_GRAD_SCALER: Release = (2, 4);
    /// `max_split_size_mb` in the allocator configuration (the OOM hint names it from ≈1.10).
    pub const MAX_SPLIT: Release = (1, 10);
    /// `expandable_segments`.
    pub const EXPANDABLE_SEGMENTS: Release = (2, 1);
    /// `torch.cuda.set_per_process_memory_fraction` (pytorch/pytorch#48172).
    pub const MEMORY_FRACTION: Release = (1, 8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_from_hints() {
        assert_eq!(parse_release("2.2–2.3"), Some((2, 2)));
        assert_eq!(parse_release("≈1.10+"), Some((1, 10)));
        assert_eq!(parse_release("2.4+"), Some((2, 4)));
        assert_eq!(parse_release("new"), None);
    }
}
