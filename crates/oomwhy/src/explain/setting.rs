//! What a finding ran in, as far as its message and traceback tell: the GPU
//! vendor, an inference engine or diffusion front end, whether the model's
//! parameters were being loaded or moved, and the PyTorch releases the
//! message form allows. Fixes are chosen from it so that none is given that
//! cannot apply (docs/fix-versions.md lists the versions and their sources).

use crate::detect::grammar::program_named_in;
/// The framework is a property of the finding, so it lives with the record
/// (the scanner orders findings by it too); the explainer names it here.
pub(crate) use crate::record::Framework;
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
            Some("xpu" | "dpcpp" | "level_zero") => Vendor::Intel,
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
            .traceback_frames()
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
        } else if any("comfyui") || any("/comfy/") || comfyui_shortened(f) {
            Some(Runtime::ComfyUi)
        } else if any("diffusers/") {
            Some(Runtime::Diffusers)
        } else {
            engine_nearby(f)
        }
    }

    /// True for the inference servers.
    pub(super) fn is_engine(self) -> bool {
        matches!(self, Runtime::Vllm | Runtime::Sglang | Runtime::Tgi)
    }
}

/// The writer's lines around the message (`Finding::nearby`) that name an
/// engine's own run: vLLM's version or log ("vllm version 0.2.5",
/// "Initializing an LLM engine (v0.2.5)", `from vllm import LLM`, `vllm
/// serve`, a traceback line in its installed package where a log prefix
/// kept the traceback from being read as one, its `model_runner.py` "Model
/// loading took" line), SGLang's, text-generation-inference's launcher,
/// ComfyUI. A bare mention ("tried vllm too") names none.
pub(super) fn engine_nearby_patterns() -> [(&'static crate::GatedRegex, Runtime); 4] {
    use crate::GatedRegex;
    static VLLM: GatedRegex = GatedRegex::new(
        &["vllm", "initializing a", "model_runner.py:"],
        r"(?i)\bvllm\s*(?:version\s*|==\s*|v)?\d+\.\d+|\bvllm\s+(?:engine|serve)\b|\bvllm\.(?:entrypoints|engine|worker|model_executor|v1)\b|\bfrom\s+vllm\s+import\b|\bInitializing an? (?:LLM|V1 LLM) engine\b|\bVllmWorker\b|(?:site|dist)-packages[/\\]vllm[/\\]|\[model_runner\.py:\d+\] Model loading took\b",
    );
    static SGLANG: GatedRegex = GatedRegex::new(
        &["sglang"],
        r"(?i)\bsglang\s*(?:version\s*|==\s*|v)?\d+\.\d+|\bsglang\.(?:launch_server|srt)\b|\bsglang\s+serve\b|(?:site|dist)-packages[/\\]sglang[/\\]",
    );
    static TGI: GatedRegex = GatedRegex::new(
        &["text-generation-", "text_generation_server"],
        r"text-generation-launcher|text_generation_server|text-generation-inference",
    );
    static COMFYUI: GatedRegex = GatedRegex::new(&["comfyui"], r"(?i)\bcomfyui\b");
    [
        (&VLLM, Runtime::Vllm),
        (&SGLANG, Runtime::Sglang),
        (&TGI, Runtime::Tgi),
        (&COMFYUI, Runtime::ComfyUi),
    ]
}

fn engine_nearby(f: &Finding) -> Option<Runtime> {
    if f.nearby.is_empty() {
        return None;
    }
    engine_nearby_patterns()
        .into_iter()
        .find(|(re, _)| re.is_match(&f.nearby))
        .map(|(_, runtime)| runtime)
}

/// ComfyUI prints only the first words of the cudaMallocAsync backend's
/// message (`torch.OutOfMemoryError: Allocation on device`), which it
/// enables by default; PyTorch's own message goes on with the device and
/// its figures.
fn comfyui_shortened(f: &Finding) -> bool {
    f.era == Some(Era::MallocAsync)
        && f.text
            .trim_end()
            .trim_end_matches(['.', ' '])
            .ends_with("Allocation on device")
}

/// The job was writing a checkpoint when it failed, as the finding's
/// phase says (read once, in `context::phase_of`): a traceback in a save
/// (`torch.save`, `save_checkpoint`), or the writer's lines just before the
/// message showing one being written (`checkpoint_saving`). Saving gathers
/// the weights, and often the optimizer's state, into host RAM and
/// serialises them there: a bare `Killed` then is that spike, not a data
/// pipeline or a batch.
pub(crate) fn saving_checkpoint(f: &Finding) -> bool {
    match f.phase.name.as_str() {
        "checkpoint_saving" => true,
        "checkpoint" => f.phase.evidence.iter().any(|e| e.contains("save")),
        _ => false,
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
        let framework = Framework::of(f);
        if framework == Framework::Ggml {
            return Program::NativeModel;
        }
        // A program the text names decides, even behind an exception class
        // (LuxCore's Python binding raises RuntimeError), unless a Python
        // framework's own frames show the work was a model's.
        if let Some(named) = NamedProgram::of(f) {
            match named.class {
                ProgramClass::TiledUpscaler | ProgramClass::NcnnTool => {
                    return Program::NativeModel
                }
                ProgramClass::MlFramework => {}
                _ if framework == Framework::Unknown => return Program::NoModel,
                _ => {}
            }
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
        if named(NATIVE_MODEL_REPORTERS) || darknet_shows(f) {
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

/// The kind of program a finding's text names: its advice is given in that
/// program's own terms, not a model's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgramClass {
    /// A 3D renderer: its memory is the scene (geometry, textures) and the
    /// image buffers.
    Renderer,
    /// A video encoder (FFmpeg's NVENC encoders).
    MediaEncoder,
    /// A computer-vision library's GPU module (OpenCV's CUDA module).
    VisionLibrary,
    /// A 3D reconstruction or SLAM system: its memory is the voxel volume.
    Reconstruction,
    /// An image upscaler on ncnn's Vulkan backend (Real-ESRGAN, waifu2x,
    /// Real-CUGAN, SRMD, RealSR, Upscayl), named as such: it runs a model
    /// over the image tile by tile, with its `-t` tile size.
    TiledUpscaler,
    /// Another program on ncnn's Vulkan backend, or one not named (a
    /// text-to-image generator, a detector): it runs a model, but the
    /// upscalers' tile and scale options are not its.
    NcnnTool,
    /// A machine-learning framework that the rest of the tool does not
    /// read (MXNet, DirectML): a model's workload, in its own settings.
    MlFramework,
    /// A GPU data-processing library (Spark RAPIDS, cuDF, RMM, Dask-CUDA):
    /// its memory is tables and partitions in its own pool, set by its own
    /// configuration; no model's batch or precision.
    DataLibrary,
}

/// A program the finding names, with its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NamedProgram {
    /// Its name, as its makers write it.
    pub name: &'static str,
    pub class: ProgramClass,
}

impl NamedProgram {
    /// The first program the finding names (`detect::grammar::program_named_in`),
    /// read from its text, reporter and traceback files.
    pub(crate) fn of(f: &Finding) -> Option<NamedProgram> {
        let mut places = vec![f.text.as_str()];
        if let Some(reporter) = f.facts.get(fact::REPORTED_BY) {
            places.push(reporter);
        }
        let files: Vec<&str> = f
            .traceback
            .iter()
            .flat_map(|tb| tb.frames.iter().map(|fr| fr.file.as_str()))
            .collect();
        places.extend(files);
        let name = places.into_iter().find_map(program_named_in)?;
        let class = match class_of(name)? {
            ProgramClass::TiledUpscaler if !ncnn_upscaler_named(f) => ProgramClass::NcnnTool,
            class => class,
        };
        Some(NamedProgram { name, class })
    }
}

/// The tiled upscalers built on ncnn's Vulkan backend, as their names show
/// in the message, the reporter or the writer's lines around it (the
/// command line): Real-ESRGAN, RealSR, waifu2x, Real-CUGAN and SRMD's
/// ncnn-vulkan builds, and Upscayl, which runs Real-ESRGAN's. Each takes
/// `-t` tile size and `-s` scale.
const NCNN_UPSCALERS: &[&str] = &[
    "realesrgan",
    "real-esrgan",
    "realsr-ncnn",
    "waifu2x",
    "realcugan",
    "real-cugan",
    "srmd-ncnn",
    "upscayl",
];

fn ncnn_upscaler_named(f: &Finding) -> bool {
    let reporter = f.facts.get(fact::REPORTED_BY).map_or("", String::as_str);
    [f.text.as_str(), reporter, f.nearby.as_str()]
        .iter()
        .any(|place| {
            let place = place.to_ascii_lowercase();
            NCNN_UPSCALERS.iter().any(|n| place.contains(n))
        })
}

/// The kind of each program `program_named_in` names; `None` for the
/// frameworks the rest of the explainer reads by their own messages.
fn class_of(name: &str) -> Option<ProgramClass> {
    use crate::detect::grammar::program_names as n;
    Some(match name {
        n::BLENDER | n::LUXCORE | n::LUISA | n::MITSUBA => ProgramClass::Renderer,
        n::FFMPEG => ProgramClass::MediaEncoder,
        n::OPENCV => ProgramClass::VisionLibrary,
        n::INFINITAM | n::ELASTICFUSION | n::BUNDLEFUSION => ProgramClass::Reconstruction,
        n::NCNN_VULKAN => ProgramClass::TiledUpscaler,
        n::MXNET | n::DIRECTML => ProgramClass::MlFramework,
        n::SPARK_RAPIDS | n::RMM | n::CUDF | n::DASK_CUDA => ProgramClass::DataLibrary,
        _ => return None,
    })
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
    /// The failing work is inference: generation, a pipeline, evaluation,
    /// an inference engine or front end. No gradients, no optimizer.
    pub inference: bool,
    /// The PyTorch releases the message form allows (first, last).
    pub torch: (Release, Option<Release>),
    /// The kind of program that reported the finding.
    pub program: Program,
    /// A Python traceback through another library's package shows, and
    /// nothing shows PyTorch: PyTorch's API is not for it.
    pub python_without_torch: bool,
}

impl Setting {
    pub(crate) fn of(f: &Finding) -> Setting {
        Setting {
            framework: Framework::of(f),
            vendor: Vendor::of(f),
            runtime: Runtime::of(f),
            loading: is_loading(f),
            inference: is_inference(f),
            torch: torch_releases(f),
            program: Program::of(f),
            python_without_torch: python_without_torch(f),
        }
    }
}

/// darknet's own printed form of a CUDA error (`check_error` in its
/// src/cuda.c, dark_cuda.c in AlexeyAB's fork: `CUDA Error: %s`, with a
/// capital E; PyTorch prints `CUDA error: %s`), read as darknet's where no
/// Python shows and darknet's marks are in the message or the writer's
/// lines around it: its name, YOLO, its .cfg's `subdivisions`, its
/// `CUDA status Error: file:` line or its sources (`./src/cuda.c`,
/// `./src/utils.c`). The assertion after the error or `Cuda malloc failed`
/// already name it (`reported_by`).
pub(crate) fn darknet_shows(f: &Finding) -> bool {
    if f.facts
        .get(fact::REPORTED_BY)
        .is_some_and(|r| r == "darknet")
    {
        return true;
    }
    if f.traceback.is_some() || f.exception.is_some() || !f.text.contains("CUDA Error: ") {
        return false;
    }
    static MARKS: crate::GatedRegex = crate::GatedRegex::new(
        &[
            "darknet",
            "yolo",
            "subdivision",
            "cuda status error",
            "/src/",
        ],
        r"(?i)darknet|\byolo|subdivision|CUDA status Error: file:|\./src/(?:dark_)?cuda\.c|\./src/utils\.c",
    );
    MARKS.is_match(&f.text) || MARKS.is_match(&f.nearby)
}

/// Python packages that run without PyTorch, as their directories show in
/// a traceback: scientific Python, classical machine learning, other deep
/// learning frameworks, RAPIDS, point clouds.
const PACKAGES_WITHOUT_TORCH: &[&str] = &[
    "/sklearn/",
    "/scipy/",
    "/numpy/",
    "/pandas/",
    "/numba/",
    "/xgboost/",
    "/lightgbm/",
    "/catboost/",
    "/statsmodels/",
    "/skimage/",
    "/gensim/",
    "/cntk/",
    "/mxnet/",
    "/chainer/",
    "/theano/",
    "/cudf/",
    "/rmm/",
    "/cupoch/",
    "/open3d/",
];

/// A Python traceback runs through a package that works without PyTorch
/// (scikit-learn's pairwise distances, CNTK's trainer, NumPy), and
/// neither its frames, the message nor the exception class show PyTorch,
/// whose framework the kind does not imply either.
pub(crate) fn python_without_torch(f: &Finding) -> bool {
    let frames: Vec<String> = f
        .traceback_frames()
        .map(|fr| fr.file.replace('\\', "/").to_ascii_lowercase())
        .collect();
    Framework::of(f) == Framework::Unknown
        && frames
            .iter()
            .any(|file| PACKAGES_WITHOUT_TORCH.iter().any(|p| file.contains(p)))
        && !frames.iter().any(|file| file.contains("torch"))
        && !f.text.to_ascii_lowercase().contains("torch")
        && !f
            .exception
            .as_deref()
            .is_some_and(|e| e.to_ascii_lowercase().contains("torch"))
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
    if matches!(f.phase.name.as_str(), "model_load" | "checkpoint") || shards_loading(f) {
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

/// Hugging Face's progress bar while a model's weight files load
/// (`Loading checkpoint shards:  50%|...| 1/2`): below 100% when the
/// message came, the weights were still being loaded.
fn shards_loading(f: &Finding) -> bool {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| crate::constant_regex(r"Loading checkpoint shards:\s*(\d{1,3})%"));
    if f.traceback.is_some() {
        // The traceback's own frames say where it failed.
        return false;
    }
    re.captures_iter(&f.nearby)
        .last()
        .and_then(|c| c[1].parse::<u32>().ok())
        .is_some_and(|percent| percent < 100)
}

/// What the writer's lines around the message say the run was, where they
/// say it (`Finding::nearby`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunNearby {
    /// Training: a training script (`train_net.py`, `train.py`), fine-tuning,
    /// epochs, "to train".
    Training,
    /// Inference: a demo or chat script (`python web_demo.py`,
    /// `cli_demo.py`), generation (`.generate(`, `max_new_tokens`), a
    /// pipeline, a web UI (gradio, streamlit), a local LLM runner
    /// (llama.cpp, Ollama, MLC-LLM), "推理".
    Inference,
}

fn training_words() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        crate::constant_regex(
            r"(?i)\btrain(?:_net|ing)?[\w-]*\.py|\btrain(?:ing)?\b|\bfine[-_ ]?tun|--do_train\b|\bepochs?\b|\.backward\(|optimizer\.step\(|训练|微调",
        )
    })
}

fn inference_words() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        crate::constant_regex(
            r"(?i)\b[\w-]*(?:demo|chat|infer|inference|generate|webui|web_ui)[\w-]*\.py|\.generate\(|\bpipeline\(|\bmax[_-]new[_-]tokens\b|\bgradio\b|\bstreamlit\s+run\b|\bllama\.cpp\b|\bllama-(?:cli|server)\b|\bollama\s+(?:run|serve)\b|\bmlc[_-](?:chat|llm)\b|\binference\b|推理",
        )
    })
}

/// The run the lines around the message show; training wins where both
/// show (a training script that samples text as it goes).
pub(crate) fn run_nearby(f: &Finding) -> Option<RunNearby> {
    if f.nearby.is_empty() {
        return None;
    }
    if training_words().is_match(&f.nearby) {
        Some(RunNearby::Training)
    } else if inference_words().is_match(&f.nearby) {
        Some(RunNearby::Inference)
    } else {
        None
    }
}

/// Library code that only runs inference: Hugging Face and diffusers
/// pipelines, and generation.
const INFERENCE_FILES: &[&str] = &["/pipelines/", "transformers/generation/"];

/// True when the failing work is inference (`generate()`, a pipeline,
/// evaluation or prediction, a serving engine or diffusion front end):
/// training remedies (gradient accumulation, gradient checkpointing, the
/// optimizer's state) cannot apply there.
pub(crate) fn is_inference(f: &Finding) -> bool {
    if Runtime::of(f).is_some() || f.phase.name == "evaluation" {
        return true;
    }
    // A traceback through the backward pass or the optimizer is training,
    // whatever the writer's lines say.
    let training_frames = matches!(f.phase.name.as_str(), "backward" | "optimizer_step");
    if !training_frames && run_nearby(f) == Some(RunNearby::Inference) {
        return true;
    }
    f.traceback_frames().any(|fr| {
        let file = fr.file.replace('\\', "/");
        INFERENCE_FILES.iter().any(|p| file.contains(p))
    })
}

/// NVIDIA GPU names a message or its paste may give, and whether the GPU
/// has bfloat16 (compute capability 8.0, Ampere, or newer). Longer names
/// first where one contains another.
const NAMED_GPUS: &[(&str, bool)] = &[
    ("RTX 50", true),
    ("RTX 40", true),
    ("RTX 30", true),
    ("RTX A", true),
    ("A100", true),
    ("A800", true),
    ("H100", true),
    ("H800", true),
    ("H200", true),
    ("B200", true),
    ("L40", true),
    ("A6000", true),
    ("A40", true),
    ("A10", true),
    ("L4", true),
    ("RTX 20", false),
    ("GTX", false),
    ("TITAN", false),
    ("Titan", false),
    ("V100", false),
    ("P100", false),
    ("P40", false),
    ("K80", false),
    ("Tesla T4", false),
    ("T4 ", false),
    ("Quadro", false),
];

/// Marks of a TPU's memory: the TPU runtime's buffer form names its
/// memory space `..._HBM0`, the TPU compiler says `memory space hbm`, and
/// the TPU runtime that TensorFlow and PyTorch/XLA (XRT) run reserves a
/// program's memory `at the bottom of memory` from `tpu_execute_op.cc`.
const TPU_MARKS: &[&str] = &[
    "_HBM",
    "memory space hbm",
    "tpu_execute_op",
    "at the bottom of memory",
    // The TPU compiler's own name, and a TPU core's vector memory (VMEM).
    "XLA:TPU",
    "memory space vmem",
];

/// True when the finding's memory is a TPU's high-bandwidth memory (HBM):
/// no GPU's settings, precision notes or tools apply to it.
pub(crate) fn on_tpu(f: &Finding) -> bool {
    matches!(f.era, Some(Era::TpuBuffer | Era::TpuCompile))
        || TPU_MARKS.iter().any(|m| f.text.contains(m))
}

/// True when Keras shows in the finding (its package in the traceback or
/// its name in the text): only then is Keras's API named in advice.
pub(crate) fn shows_keras(f: &Finding) -> bool {
    let in_traceback = f.traceback_frames().any(|fr| fr.file.contains("keras"));
    in_traceback || f.text.to_ascii_lowercase().contains("keras")
}

/// True when PyTorch/XLA shows in the finding (`torch_xla` in the text or
/// the traceback).
pub(crate) fn shows_torch_xla(f: &Finding) -> bool {
    let in_traceback = f.traceback_frames().any(|fr| fr.file.contains("torch_xla"));
    in_traceback || f.text.contains("torch_xla")
}

/// Whether the GPU a finding's text names has bfloat16: `None` when it
/// names none this table knows.
pub(crate) fn named_gpu_has_bf16(text: &str) -> Option<bool> {
    NAMED_GPUS
        .iter()
        .filter_map(|(name, bf16)| text.find(name).map(|at| (at, name.len(), *bf16)))
        // The earliest name in the text; at one place, the longest.
        .min_by_key(|&(at, len, _)| (at, std::cmp::Reverse(len)))
        .map(|(_, _, bf16)| bf16)
}

/// A PyTorch release as (major, minor).
pub(crate) type Release = (u32, u32);

/// The releases a message form allows: the first, and the last when the
/// form stopped being printed.
pub(crate) fn torch_releases(f: &Finding) -> (Release, Option<Release>) {
    if f.kind != Kind::TorchAllocatorOom && f.kind != Kind::CudaRuntimeOom {
        return releases_from_sources(f);
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
    // The version hint ("PyTorch 2.2–2.3", "PyTorch 2.4+") narrows the
    // start, and its end ("≈1.4–1.9": a message seen to its end without the
    // hint ≈1.10 added) the end.
    let hint = f
        .version_hint
        .as_deref()
        .and_then(|h| h.strip_prefix("PyTorch "));
    let hinted = hint.and_then(parse_release);
    let hinted_last = hint
        .and_then(|h| h.split_once('–'))
        .and_then(|(_, end)| parse_release(end));
    let first = match hinted {
        Some(h) if h > first => h,
        _ => first,
    };
    let last = match (last, hinted_last) {
        (Some(l), Some(h)) => Some(l.min(h)),
        (l, h) => l.or(h),
    };
    // A source tree the paste's path names (`.../pytorch-0.1.12/torch/lib/
    // THC/...`, a conda build) is the release itself, when the form allows it.
    match release_in_path(&f.text) {
        Some(r) if r >= first && last.is_none_or(|l| r <= l) => (r, Some(r)),
        _ => (first, last),
    }
}

/// The release of a PyTorch source tree a path names (`pytorch-0.1.12/`).
fn release_in_path(text: &str) -> Option<Release> {
    let text = text.replace('\\', "/");
    text.match_indices("pytorch-").find_map(|(at, marker)| {
        let rest = &text[at + marker.len()..];
        let version: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let slash = rest[version.len()..].starts_with('/');
        (slash && version.matches('.').count() >= 1)
            .then(|| parse_release(&version))
            .flatten()
    })
}

/// The releases a message whose form dates nothing allows, read from the
/// paths and library versions it prints: PyTorch's c10d sources lived in
/// `torch/lib/c10d` up to 1.9 and ProcessGroupNCCL in
/// `torch/csrc/distributed/c10d` from 1.10 (pytorch/pytorch#60543, June
/// 2021); an NCCL older than 2.7 is the one PyTorch bundled up to 1.6 (2.4.8
/// from mid-2019, 2.7.3 from mid-2020).
fn releases_from_sources(f: &Finding) -> (Release, Option<Release>) {
    const LAST_OLD_C10D: Release = (1, 9);
    const LAST_NCCL_2_4: Release = (1, 6);
    let text = f.text.replace('\\', "/");
    let (first, mut last) = if text.contains("torch/lib/c10d/") {
        ((1, 0), Some(LAST_OLD_C10D))
    } else if text.contains("torch/csrc/distributed/c10d/ProcessGroupNCCL") {
        ((1, 10), None)
    } else {
        ((0, 0), None)
    };
    let nccl = f.facts.get("nccl_version").and_then(|v| parse_release(v));
    if nccl.is_some_and(|v| v < (2, 7)) {
        last = Some(last.map_or(LAST_NCCL_2_4, |l: Release| l.min(LAST_NCCL_2_4)));
    }
    (first, last)
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
    /// `torch.cuda.empty_cache` (PyTorch 0.3.0's release notes).
    pub const EMPTY_CACHE: Release = (0, 3);
    /// `torch.cuda.set_per_process_memory_fraction` (pytorch/pytorch#48172).
    pub const MEMORY_FRACTION: Release = (1, 8);
    /// torchelastic (`torch.distributed.elastic`, its `@record`) upstreamed.
    pub const ELASTIC: Release = (1, 9);
    /// The `torchrun` command (`python -m torch.distributed.run` before).
    pub const TORCHRUN: Release = (1, 10);
    /// Loading in 4 bits through `BitsAndBytesConfig` (Hugging Face
    /// Transformers 4.30, mid-2023), when PyTorch 2.0 was current: not
    /// offered to a message form that ends before it.
    pub const FOUR_BIT_LOADING: Release = (2, 0);
}

/// Where a finding can name the program it came from, lowercased: its
/// text, the facts `keys` name, its traceback's files (backslashes as `/`)
/// and, with `with_code`, the frames' lines of code.
pub(super) fn places_named(f: &Finding, keys: &[&str], with_code: bool) -> Vec<String> {
    let mut places = vec![f.text.to_ascii_lowercase()];
    places.extend(
        keys.iter()
            .filter_map(|key| f.facts.get(*key))
            .map(|v| v.to_ascii_lowercase()),
    );
    for fr in f.traceback_frames() {
        places.push(fr.file.replace('\\', "/").to_ascii_lowercase());
        if let Some(code) = fr.code.as_ref().filter(|_| with_code) {
            places.push(code.to_ascii_lowercase());
        }
    }
    places
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A conda build's source path names its release (a real PyTorch 0.1.12
    /// paste's location, its build directory joined from pieces); a
    /// path without a version, or a name that is not a source tree, does
    /// not.
    #[test]
    fn a_source_path_names_its_release() {
        assert_eq!(
            release_in_path(&format!(
                "out of memory at /opt/conda/conda-bld/pytorch_1501969512886/{}/pytorch-0.1.12/torch/lib/THC/generic/THCStorage.cu:66",
                "work"
            )),
            Some((0, 1))
        );
        assert_eq!(
            release_in_path("C:\\src\\pytorch-1.0.1\\aten"),
            Some((1, 0))
        );
        assert_eq!(
            release_in_path("/opt/conda/conda-bld/pytorch_1501969512886/torch"),
            None
        );
        assert_eq!(release_in_path("pip install pytorch-lightning"), None);
        assert_eq!(release_in_path("pytorch-2 /x"), None);
    }

    #[test]
    fn releases_parse_from_hints() {
        assert_eq!(parse_release("2.2–2.3"), Some((2, 2)));
        assert_eq!(parse_release("≈1.10+"), Some((1, 10)));
        assert_eq!(parse_release("2.4+"), Some((2, 4)));
        assert_eq!(parse_release("new"), None);
    }

    fn reserved(line: &str) -> Finding {
        crate::decode_str(line)
            .into_iter()
            .next()
            .expect("the reserved form decodes")
    }

    /// A `reserved` message seen to its end without the max_split_size_mb
    /// hint is from before 1.10, where the option does not exist; one cut
    /// before where the hint would stand dates nothing beyond its form.
    /// (Real messages: PyTorch forum and issue pastes, fixtures/wild.)
    #[test]
    fn a_complete_message_without_the_hint_predates_max_split() {
        let complete = reserved("RuntimeError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 4.00 GiB total capacity; 2.57 GiB already allocated; 74.77 MiB free; 2.85 GiB reserved in total by PyTorch)");
        assert_eq!(complete.version_hint.as_deref(), Some("PyTorch ≈1.4–1.9"));
        assert_eq!(torch_releases(&complete), ((1, 4), Some((1, 9))));
        assert!(matches!(
            available(&complete, since::MAX_SPLIT),
            Availability::Upgrade(_)
        ));
        let quoted = reserved("\" CUDA out of memory. Tried to allocate 264.00 MiB (GPU 0; 2.00 GiB total capacity; 788.51 MiB already allocated; 145.93 MiB free; 1.02 GiB reserved in total by PyTorch)\"");
        assert_eq!(torch_releases(&quoted).1, Some((1, 9)));
        let native = reserved(
            r"RuntimeError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 4.00 GiB total capacity; 2.57 GiB already allocated; 74.77 MiB free; 2.85 GiB reserved in total by PyTorch) (malloc at ..\c10\cuda\CUDACachingAllocator.cpp:289)",
        );
        assert_eq!(torch_releases(&native).1, Some((1, 9)));
        // Cut inside the hint, or before the closing parenthesis: not dated.
        let cut_hint = reserved("RuntimeError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 4.00 GiB total capacity; 2.57 GiB already allocated; 74.77 MiB free; 2.85 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory");
        assert_eq!(torch_releases(&cut_hint).1, Some((1, 12)));
        assert_eq!(cut_hint.version_hint.as_deref(), Some("PyTorch ≈1.4–1.12"));
        let cut_paren = reserved("RuntimeError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 4.00 GiB total capacity; 2.57 GiB already allocated; 74.77 MiB free; 2.85 GiB reserved in total by PyTorch");
        assert_eq!(torch_releases(&cut_paren).1, Some((1, 12)));
        assert_eq!(
            available(&cut_paren, since::MAX_SPLIT),
            Availability::From("PyTorch ≥ 1.10".into())
        );
        // With the hint: from 1.10, and the option exists.
        let hinted = reserved("RuntimeError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 4.00 GiB total capacity; 2.57 GiB already allocated; 74.77 MiB free; 2.85 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF");
        assert_eq!(hinted.version_hint.as_deref(), Some("PyTorch ≈1.10–1.12"));
        assert_eq!(available(&hinted, since::MAX_SPLIT), Availability::Yes);
    }

    use crate::explain::test_support::fix_ids;

    /// `generate()` (a Qwen quickstart paste, fixtures/library_alloc_failed_cublas_create.log) is
    /// inference: no training remedies. The same failure under a training
    /// step's frames gets them.
    #[test]
    fn generation_gets_no_training_remedies() {
        let generate = include_str!("../../../../fixtures/library_alloc_failed_cublas_create.log");
        let f = &crate::decode_str(generate)[0];
        assert!(Setting::of(f).inference);
        let ids = fix_ids(generate);
        for training in [
            "reduce-batch-size",
            "gradient-checkpointing",
            "mixed-precision-autocast",
        ] {
            assert!(!ids.iter().any(|x| x == training), "{training} in {ids:?}");
        }
        assert!(
            ids.iter().any(|x| x == "inference-in-less-memory"),
            "{ids:?}"
        );
        let training = generate
            .replace(
                "generated_ids = model.generate(**model_inputs, max_new_tokens=512)",
                "loss = model(**model_inputs).loss",
            )
            .replace(
                "transformers/generation/utils.py\", line 2024, in generate",
                "transformers/trainer.py\", line 2024, in training_step",
            )
            .replace("result = self._sample(", "outputs = model(**inputs)");
        let f = &crate::decode_str(&training)[0];
        assert!(!Setting::of(f).inference, "{}", f.phase.name);
        let ids = fix_ids(&training);
        assert!(ids.iter().any(|x| x == "reduce-batch-size"), "{ids:?}");
    }

    /// LLaMA-Factory on eight ranks (fixtures/wild/1443.txt): rank 5's OOM
    /// has no traceback, rank 6's traceback, cut by the end of the paste,
    /// is inside load_model. The job was loading the model: loading fixes,
    /// with the ranks' own advice, not the batch size. Without rank 6's
    /// traceback nothing is borrowed; under the same rank, it follows the
    /// message and is its own (`scanner::collect::Hold`), not borrowed.
    #[test]
    fn another_rank_s_open_traceback_gives_the_phase() {
        let paste = include_str!("../../../../fixtures/wild/1443.txt");
        let f = &crate::decode_str(paste)[0];
        assert_eq!(f.phase.name, "model_load");
        assert_eq!(f.phase.confidence, "medium");
        assert!(Setting::of(f).loading);
        let ids = fix_ids(paste);
        assert_eq!(ids[0], "load-model-in-less-memory", "{ids:?}");
        assert!(!ids.iter().any(|x| x == "reduce-batch-size"), "{ids:?}");
        assert!(f.diagnosis.fixes[0].how.contains("rank 5"));
        let alone: String = paste.lines().take(1).map(|l| format!("{l}\n")).collect();
        assert_eq!(crate::decode_str(&alone)[0].phase.name, "unknown");
        assert!(fix_ids(&alone).iter().any(|x| x == "reduce-batch-size"));
        let same_rank = paste.replace("[rank6]", "[rank5]");
        let own = &crate::decode_str(&same_rank)[0];
        assert_eq!(own.phase.name, "model_load");
        assert_eq!(own.phase.confidence, "high");
        assert!(own.traceback.is_some());
    }

    /// bfloat16 is advised only where the named GPU has it: a model's
    /// workload fix for MXNet on a GTX 750 Ti (fixtures/wild/1436.txt) says
    /// float16; the same sentence naming an RTX 3090 gets bfloat16; naming
    /// no GPU, bfloat16 comes with its condition. (MXNet's own first fix
    /// names no precision at all.)
    #[test]
    fn bfloat16_follows_the_named_gpu() {
        let paste = include_str!("../../../../fixtures/wild/1436.txt");
        let how = |text: &str| {
            let f = &crate::decode_str(text)[0];
            assert!(!f.diagnosis.fixes[0].how.contains("bfloat16"));
            crate::explain::common::model_workload_fix_for(f)
                .how
                .clone()
        };
        let maxwell = how(paste);
        assert!(maxwell.contains("no bfloat16"), "{maxwell}");
        let ampere = how(&paste.replace("GeForce GTX 750 Ti", "GeForce RTX 3090"));
        assert!(ampere.contains("bfloat16 or float16"), "{ampere}");
        let unnamed = how(&paste.replace("GeForce GTX 750 Ti", "显卡"));
        assert!(
            unnamed.contains("bfloat16 on an Ampere or newer GPU"),
            "{unnamed}"
        );
        assert_eq!(super::named_gpu_has_bf16("Tesla T4 "), Some(false));
        assert_eq!(
            super::named_gpu_has_bf16("NVIDIA A100-SXM4-80GB"),
            Some(true)
        );
    }

    /// `torch.cuda.OutOfMemoryError` exists from 1.13; a notebook prints its
    /// bare class name (a Colab paste, fixtures/wild).
    #[test]
    fn the_oom_class_dates_the_reserved_form_from_1_13() {
        let tail = ": CUDA out of memory. Tried to allocate 384.00 MiB (GPU 0; 14.75 GiB total capacity; 13.52 GiB already allocated; 124.81 MiB free; 13.81 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF";
        for class in ["OutOfMemoryError", "torch.cuda.OutOfMemoryError"] {
            let f = reserved(&format!("{class}{tail}"));
            assert_eq!(
                f.version_hint.as_deref(),
                Some("PyTorch 1.13–2.0"),
                "{class}"
            );
        }
        let runtime = reserved(&format!("RuntimeError{tail}"));
        assert_eq!(runtime.version_hint.as_deref(), Some("PyTorch ≈1.10–1.12"));
        let unnamed = reserved(tail.trim_start_matches(": "));
        assert_eq!(unnamed.version_hint.as_deref(), Some("PyTorch ≈1.10–2.0"));
    }
}

/// The program that reported a finding decides its advice: real messages
/// of programs that are not PyTorch, each with its source paste.
#[cfg(test)]
mod program_fixes {
    use super::{Program, Setting};
    use crate::explain::catalogue::FixSpec;
    use crate::explain::setting::Framework;
    use crate::record::Finding;

    fn only(text: &str) -> Finding {
        let mut findings = crate::decode_str(text);
        assert_eq!(findings.len(), 1, "{text}");
        findings.remove(0)
    }

    fn fix_ids(f: &Finding) -> Vec<&str> {
        f.diagnosis.fixes.iter().map(|x| x.id.as_str()).collect()
    }

    // fixtures/wild/1274.txt (FFmpeg's h264_nvenc opening its CUDA context).
    const FFMPEG_CUCTX: &str = "    [h264_nvenc @ 0x55d020323ac0] dl_fn->cuda_dl->cuCtxCreate(&ctx->cu_context_internal, 0, cu_device) failed -> CUDA_ERROR_OUT_OF_MEMORY: out of memory\n    [h264_nvenc @ 0x55d020323ac0] No capable devices found\n";
    // fixtures/wild/1273.txt (FFmpeg's hevc_nvenc opening its session).
    const FFMPEG_SESSION: &str = "[hevc_nvenc @ 0x55f45f5f5cc0] OpenEncodeSessionEx failed: out of memory (10): (no details)\n[hevc_nvenc @ 0x55f45f5f5cc0] No capable devices found\n";

    #[test]
    fn nvenc_is_fixed_through_its_sessions_and_driver() {
        let f = only(FFMPEG_SESSION);
        assert_eq!(Setting::of(&f).program, Program::NoModel);
        assert_eq!(
            fix_ids(&f),
            [
                "nvenc-fewer-sessions",
                "nvenc-driver-for-encoder",
                "check-what-holds-gpu"
            ]
        );
        // Creating the CUDA context is not opening a session: the card's
        // memory is really taken, and the session limit is not the cause.
        let f = only(FFMPEG_CUCTX);
        assert_eq!(Setting::of(&f).program, Program::NoModel);
        assert_eq!(f.facts["reported_by"], "FFmpeg (h264_nvenc)");
        assert_eq!(
            fix_ids(&f),
            ["check-what-holds-gpu", "nvenc-driver-for-encoder"]
        );
        let fix = &f.diagnosis.fixes[0];
        let zh = fix.zh.as_ref().map(|z| z.text.as_str()).unwrap_or("");
        assert!(fix.how.contains("cuCtxCreate") && zh.contains("cuCtxCreate"));
        assert!(!fix.how.contains("session"), "{}", fix.how);
    }

    // fixtures/wild/272.txt (darknet's check_error after CUDA's error).
    const DARKNET: &str = "CUDA Error: out of memory\ndarknet: ./src/cuda.c:36: check_error: Assertion `0' failed.\nAborted (core dumped)\n";

    #[test]
    fn darknet_is_fixed_in_its_cfg_not_with_torch() {
        let f = only(DARKNET);
        assert_eq!(f.facts["reported_by"], "darknet");
        assert_eq!(Setting::of(&f).program, Program::NativeModel);
        assert_eq!(
            fix_ids(&f),
            ["darknet-smaller-passes", "check-what-holds-gpu"]
        );
        // Without darknet's line, the capital-E form is still no PyTorch
        // message (PyTorch prints `CUDA error:`): no PyTorch API for it.
        let bare = only("CUDA Error: out of memory\n");
        assert_eq!(Setting::of(&bare).program, Program::Unknown);
        assert!(!fix_ids(&bare).contains(&"leave-room-outside-torch-cache"));
    }

    // fixtures/wild/1283.txt (llama.cpp's ggml-cuda on a GPU its build left out).
    const GGML_NO_KERNEL: &str = "opt/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:97: CUDA error\nggml_cuda_compute_forward: SCALE failed\nCUDA error: no kernel image is available for execution on the device\ncurrent device: 0, in function ggml_cuda_compute_forward at /opt/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:2761 err\n";

    #[test]
    fn llama_cpp_is_rebuilt_for_the_architecture() {
        let f = crate::decode_str(GGML_NO_KERNEL)
            .into_iter()
            .find(|f| f.kind == crate::record::Kind::NoKernelImage)
            .expect("the no-kernel-image finding");
        assert_eq!(Framework::of(&f), Framework::Ggml);
        assert_eq!(fix_ids(&f), ["llama-cpp-build-for-arch"]);
        let said = &f.diagnosis.verdicts[0].detail;
        assert!(!said.contains("torch"), "{said}");
        // PyTorch's own message keeps PyTorch's fixes.
        let torch = only(
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
        );
        assert_eq!(
            fix_ids(&torch),
            ["install-build-for-gpu", "rebuild-extensions-for-arch"]
        );
    }

    // fixtures/wild/1237.txt (TensorRT's builder skipping a tactic).
    const TENSORRT_TACTIC: &str = "[E] [defaultAllocator.cpp::allocate::19] Error code 1: cuda Runtime (out of memory)TE] Error code: 9: skipping tactic 0x0000000000000000 due to exception [tunablegraph.cpp:create:116] autotuning: user allocator error allocating 86114305024-byte buffer\n";
    // fixtures/wild/1242.txt (the user's engine was generated).
    const TENSORRT_RESIZE: &str = ".engine have generated, but throw follow OutOfMemory error, ask if this error affect the result? thanks.\n[virtualMemoryBuffer.cpp::resizePhysical::144] Error Code 2: OutOfMemory (no further information)\n";

    #[test]
    fn tensorrt_codes_are_tensorrt_s_and_a_skipped_tactic_is_not_fatal() {
        for text in [TENSORRT_TACTIC, TENSORRT_RESIZE] {
            let findings = crate::decode_str(text);
            // Never a CUDA runtime status: 9 is TensorRT's kINVALID_STATE.
            assert!(
                findings
                    .iter()
                    .all(|f| f.facts.get("error_name").map(String::as_str)
                        != Some("cudaErrorInvalidConfiguration")),
                "{text}"
            );
            let f = &findings[0];
            assert_eq!(f.facts["reported_by"], "TensorRT", "{text}");
            assert_eq!(
                fix_ids(f),
                [
                    "tensorrt-check-build-finished",
                    "tensorrt-smaller-engine-limits"
                ],
                "{text}"
            );
            let said = &f.diagnosis.verdicts[0].detail;
            assert!(said.contains("not fatal"), "{said}");
        }
        // fixtures/wild/733.txt: the same buffer's failures, then
        // TensorRT-LLM's builder says the build failed: the memory is the cause.
        let failed = only("[11/10/2023-06:30:40] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)\n[11/10/2023-06:30:40] [TRT] [W] Requested amount of GPU memory (24793579520 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.\n[11/10/2023-06:30:40] [TRT-LLM] [E] Engine building failed, please check the error log.\n");
        assert_eq!(fix_ids(&failed), ["tensorrt-smaller-engine-limits"]);
        let said = &failed.diagnosis.verdicts[0].detail;
        assert!(said.contains("build failed"), "{said}");
    }

    // fixtures/status_unknown_error_devicequery.log (the CUDA samples' deviceQuery).
    const DEVICE_QUERY: &str = "$ ./deviceQuery \n./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\ncudaGetDeviceCount returned 999\n-> unknown error\nResult = FAIL\n";

    #[test]
    fn an_unknown_error_at_start_up_is_the_driver_s_state() {
        let f = only(DEVICE_QUERY);
        assert_eq!(Setting::of(&f).program, Program::NoModel);
        // The advice is concrete; no pointer back to the code tables follows.
        assert_eq!(fix_ids(&f), ["check-gpu-driver-state"]);
        // fixtures/wild/307.txt: the same code from NCCL's later call is
        // not about the runtime's start-up.
        let later = crate::decode_str("[rank0]: Cuda failure 999 'unknown error'\n");
        assert!(later
            .iter()
            .all(|f| !fix_ids(f).contains(&"check-gpu-driver-state")));
    }

    // fixtures/wild/1286.txt (Xid 154 on three GPUs).
    const XID_154: &str = "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (OS Reboot)\n";

    #[test]
    fn an_xid_line_that_states_its_recovery_action_is_acted_on() {
        let f = only(XID_154);
        assert_eq!(fix_ids(&f)[0], "follow-xid-recovery-action");
        assert!(f.diagnosis.fixes[0].how.contains("reboot"));
        let said = &f.diagnosis.verdicts[0].detail;
        assert!(!said.contains("does not describe"), "{said}");
        assert!(said.contains("\"OS Reboot\""), "{said}");
        // The Xid 31 line of the same paste states no recovery action: NVIDIA's
        // catalogue's action for Xid 31 comes first.
        let xid_31 = only("Aug 19 11:36:35  NVRM: Xid (PCI:0000:02:00): 31, pid=56543, name=python3.12,\n  channel 0x01000005. MMU Fault: ENGINE CE2 HUBCLIENT_HSCE2 faulted @ 0x100_07600000.\n  Fault is of type FAULT_INFO_TYPE_REGION_VIOLATION ACCESS_TYPE_VIRT_WRITE\n");
        assert_eq!(fix_ids(&xid_31)[0], "xid-restart-application");
    }

    // fixtures/wild/1268.txt (vulkano's examples on a 2 GB card).
    const VULKANO: &str = "thread '<main>' panicked at 'called `Result::unwrap()` on an `Err` value: OomError(OutOfDeviceMemory)', ../src/libcore\\result.rs:746\n";

    #[test]
    fn a_vulkan_failure_without_sizes_does_not_blame_the_workload() {
        let f = only(VULKANO);
        assert_eq!(
            fix_ids(&f),
            [
                "close-other-gpu-programs",
                "update-vulkan-driver-and-library"
            ]
        );
        let said = &f.diagnosis.verdicts[0].detail;
        assert!(!said.contains("does not fit"), "{said}");
    }

    /// A real paste of `fixtures/wild`, by its number.
    fn wild(number: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/wild")
            .join(format!("{number}.txt"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The first finding's program, fixes, and the first fix's words in
    /// both languages.
    fn first(number: &str) -> (Option<super::NamedProgram>, Vec<String>, String, String) {
        let findings = crate::decode_str(&wild(number));
        let f = findings
            .first()
            .unwrap_or_else(|| panic!("{number}: no finding"));
        let fix = &f.diagnosis.fixes[0];
        let zh = fix.zh.as_ref().map(|z| z.text.clone()).unwrap_or_default();
        (
            super::NamedProgram::of(f),
            fix_ids(f).iter().map(|s| s.to_string()).collect(),
            fix.how.clone(),
            zh,
        )
    }

    /// fixtures/wild/2201.txt: vLLM's engine start-up, its log prefix on
    /// every traceback line. The traceback's `site-packages/vllm/` path names
    /// vLLM, whose own knobs lead and no training advice follows; with the
    /// package renamed nothing names it and the general advice stays.
    #[test]
    fn a_prefixed_traceback_in_vllm_s_package_is_vllm() {
        let (_, ids, how, _) = first("2201");
        assert_eq!(ids[0], "vllm-less-to-fit", "{ids:?}");
        assert!(!ids.iter().any(|x| x == "reduce-batch-size"), "{ids:?}");
        assert!(how.contains("--max-model-len"), "{how}");
        let renamed = wild("2201")
            .replace("site-packages/vllm/", "site-packages/other/")
            .replace("Model loading took", "Loading took");
        let findings = crate::decode_str(&renamed);
        let f = &findings[0];
        assert_eq!(super::Runtime::of(f), None, "{:?}", f.nearby);
    }

    /// fixtures/wild/2313.txt: llama.cpp already at Q4_K_M and host RAM at
    /// three times the model: no smaller quantisation is offered, the RAM
    /// beyond the model is looked into; at Q8_0 the smaller one stays.
    #[test]
    fn a_model_already_at_4_bits_is_not_told_to_quantise() {
        let (_, ids, how, zh) = first("2313");
        assert_eq!(ids[0], "llama-cpp-ram-beyond-model", "{ids:?}");
        assert!(!ids.iter().any(|x| x == "llama-cpp-less-ram"), "{ids:?}");
        assert!(
            how.contains("--no-mmap") && zh.contains("--no-mmap"),
            "{how}"
        );
        let q8 = crate::decode_str(&wild("2313").replace("Q4_K_M", "Q8_0"));
        let ids = fix_ids(&q8[0]);
        assert_eq!(ids[0], "llama-cpp-less-ram", "{ids:?}");
    }

    /// The 4-bit forms people name, and near misses that are none.
    #[test]
    fn four_bit_quantisations_are_read_by_name() {
        let re = super::super::catalogue::four_bit_pattern();
        for yes in [
            "llama-2-7b.Q4_K_M.gguf",
            "model-q4_0.gguf",
            "IQ4_XS",
            "load_in_4bit=True",
            "unsloth/llama-3-8b-bnb-4bit",
            "TheBloke/Llama-2-13B-AWQ",
            "a GPTQ checkpoint",
        ] {
            assert!(re.is_match(yes), "{yes}");
        }
        for no in [
            "Q5_K_M",
            "q8_0",
            "load_in_4bit=False",
            "gptqmodel_x",
            "awqward",
        ] {
            assert!(!re.is_match(no), "{no}");
        }
    }

    /// fixtures/wild/2252.txt: TensorRT-LLM's executor report of a KV cache
    /// that did not fit, with its component table: the Why gives its figures
    /// and TensorRT-LLM's own knobs lead; without the free-memory line there
    /// are no figures to give and its knobs are not offered on them.
    #[test]
    fn tensorrt_llm_s_component_table_gives_the_why_and_its_knobs() {
        let (_, ids, how, zh) = first("2252");
        assert_eq!(ids[0], "trtllm-smaller-kv-cache-and-batch", "{ids:?}");
        assert!(how.contains("free_gpu_memory_fraction") && zh.contains("max_num_tokens"));
        let f = &crate::decode_str(&wild("2252"))[0];
        let why = &f.diagnosis.verdicts[0];
        assert!(
            why.title.contains("108.86 GiB") && why.title.contains("140.06 GiB"),
            "{}",
            why.title
        );
        let cut = wild("2252").replace(
            "Free GPU memory before component creation attempt (GiB): 108.86",
            "",
        );
        let f = &crate::decode_str(&cut)[0];
        assert!(!fix_ids(f).contains(&"trtllm-smaller-kv-cache-and-batch"));
    }

    /// fixtures/wild/2232.txt: ComfyUI's HIP message, cut by PyTorch after
    /// "GPU": ComfyUI's own options lead over printing the figures; the
    /// same message in a script of one's own keeps printing them first.
    #[test]
    fn a_known_front_end_s_fix_leads_a_message_pytorch_cut() {
        let (_, ids, how, _) = first("2232");
        assert_eq!(ids[0], "comfyui-low-vram", "{ids:?}");
        assert!(how.contains("--lowvram"), "{how}");
        assert!(ids.iter().any(|x| x == "print-memory-state"), "{ids:?}");
        let own = wild("2232")
            .replace("/ComfyUI/comfy/", "/project/")
            .replace("tiled VAE", "tiled")
            .replace("ComfyUI", "mine");
        let f = &crate::decode_str(&own)[0];
        assert_eq!(fix_ids(f)[0], "print-memory-state", "{:?}", fix_ids(f));
    }

    /// Words of a model's workload: never for a program that runs none.
    const MODEL_ADVICE: &[&str] = &["batch size", "quantised", "bfloat16", "sequences"];
    const MODEL_ADVICE_ZH: &[&str] = &["batch size", "量化", "bfloat16", "序列"];

    fn no_model_advice(number: &str, en: &str, zh: &str) {
        for w in MODEL_ADVICE {
            assert!(!en.contains(w), "{number}: {w} in {en}");
        }
        for w in MODEL_ADVICE_ZH {
            assert!(!zh.contains(w), "{number}: {w} in {zh}");
        }
    }

    /// Renderers (LuisaRender 1502, Mitsuba 1505, Blender's "System is out
    /// of GPU memory" 1562 and its cuMemAlloc 1560, LuxCore 1552): the
    /// scene first, in the renderer's terms, in both languages.
    #[test]
    fn a_renderer_is_told_to_shrink_its_scene() {
        for (number, name) in [
            ("1502", "LuisaRender"),
            ("1505", "Mitsuba"),
            ("1562", "Blender Cycles"),
            ("1560", "Blender Cycles"),
            ("1552", "LuxCore"),
        ] {
            let (named, ids, en, zh) = first(number);
            let named = named.unwrap_or_else(|| panic!("{number}: not named"));
            assert_eq!(
                (named.name, named.class),
                (name, super::ProgramClass::Renderer)
            );
            assert_eq!(
                ids,
                ["renderer-smaller-scene", "check-what-holds-gpu"],
                "{number}"
            );
            no_model_advice(number, &en, &zh);
            assert!(
                en.contains("scene") && zh.contains("场景"),
                "{number}: {en} / {zh}"
            );
        }
        let (_, _, en, zh) = first("1562");
        assert!(en.contains("Simplify") && zh.contains("Simplify"), "{en}");
    }

    /// Cycles' illegal address (fixtures/status_cycles_illegal_address.log)
    /// is an end user's crash: the scene, the driver and the card, not
    /// CUDA_LAUNCH_BLOCKING or compute-sanitizer; other programs keep those.
    #[test]
    fn a_renderer_s_gpu_crash_gets_end_user_steps() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/status_cycles_illegal_address.log");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let findings = crate::decode_str(&text);
        assert_eq!(findings.len(), 2);
        for f in &findings {
            assert_eq!(
                fix_ids(f),
                ["renderer-smaller-scene", "renderer-driver-and-clocks"]
            );
            let second = &f.diagnosis.fixes[1];
            let zh = second.zh.as_ref().map_or("", |z| z.text.as_str());
            assert!(second.how.contains("stock clocks") && zh.contains("默认频率"));
        }
        let other = only("CUDA error: an illegal memory access was encountered\n");
        assert!(
            fix_ids(&other).contains(&"run-compute-sanitizer"),
            "{:?}",
            fix_ids(&other)
        );
    }

    /// A source path names its program (InfiniTAM 1549, OpenCV 1527); a
    /// path that names none is native code, never the path itself.
    #[test]
    fn a_source_path_names_its_program() {
        let f = crate::decode_str(&wild("1549")).remove(0);
        assert_eq!(f.facts["reported_by"], "InfiniTAM");
        assert!(
            f.diagnosis.headline.contains("(InfiniTAM)"),
            "{}",
            f.diagnosis.headline
        );
        let (_, ids, en, zh) = first("1549");
        assert_eq!(
            ids,
            ["reconstruction-smaller-volume", "check-what-holds-gpu"]
        );
        assert!(en.contains("SDF_LOCAL_BLOCK_NUM") && zh.contains("SDF_LOCAL_BLOCK_NUM"));
        no_model_advice("1549", &en, &zh);
        let f = crate::decode_str(&wild("1527")).remove(0);
        assert_eq!(f.facts["reported_by"], "OpenCV");
        // A path under no project's directory.
        let f = crate::decode_str(
            "src/utils/MemoryBlock.h(217) : cudaSafeCall() Runtime API error : out of memory.\n",
        )
        .remove(0);
        assert_eq!(f.facts["reported_by"], "native code (MemoryBlock.h)");
        let headline_zh = f.diagnosis.headline_zh.as_deref().unwrap_or("");
        assert!(
            headline_zh.contains("原生代码（MemoryBlock.h）"),
            "{headline_zh}"
        );
    }

    /// OpenCV's setDevice creates the CUDA context (1527): the GPU is held
    /// or unusable, not a batch too large; cuda_host_mem is host memory.
    #[test]
    fn opencv_set_device_is_a_context_that_did_not_fit() {
        let f = crate::decode_str(&wild("1527")).remove(0);
        assert_eq!(fix_ids(&f), ["check-what-holds-gpu"]);
        let v = &f.diagnosis.verdicts[0];
        let zh = v.zh.as_ref().map(|z| z.text.as_str()).unwrap_or("");
        assert!(
            v.detail.contains("context") && zh.contains("上下文"),
            "{}",
            v.detail
        );
        assert!(v.detail.contains("page-locked host memory") && zh.contains("锁页的主机内存"));
        let title_zh = v.zh.as_ref().map_or("", |z| z.title.as_str());
        assert!(
            v.title.starts_with("Creating the CUDA context failed"),
            "{}",
            v.title
        );
        assert!(title_zh.starts_with("创建 CUDA 上下文失败"), "{title_zh}");
        // The same library's allocation after the context exists is its images'.
        let later = crate::decode_str("opencv/modules/core/src/cuda/gpu_mat.cu:116: error: (-217:Gpu API call) out of memory in function 'allocate'\n").remove(0);
        assert_eq!(
            fix_ids(&later),
            ["make-work-smaller", "check-what-holds-gpu"]
        );
    }

    /// Frameworks and tools the rest of the explainer does not read, by
    /// their own messages: MXNet (1436), DirectML (1544), ncnn (1533, whose
    /// paste names no upscaler: no upscaler's `-t`).
    #[test]
    fn a_named_framework_or_tool_gets_its_own_levers() {
        for (number, name, fix, word, word_zh) in [
            (
                "1436",
                "MXNet",
                "mxnet-less-at-once",
                "MXNET_GPU_MEM_POOL_RESERVE",
                "MXNET_GPU_MEM_POOL_RESERVE",
            ),
            (
                "1544",
                "torch-directml",
                "directml-less-at-once",
                "--medvram",
                "--medvram",
            ),
            (
                "1533",
                "an ncnn-vulkan tool",
                "ncnn-smaller-job",
                "--help",
                "--help",
            ),
        ] {
            let (named, ids, en, zh) = first(number);
            assert_eq!(named.map(|n| n.name), Some(name), "{number}");
            assert_eq!(ids[0], fix, "{number}");
            assert!(
                en.contains(word) && zh.contains(word_zh),
                "{number}: {en} / {zh}"
            );
        }
        let f = crate::decode_str(&wild("1544")).remove(0);
        assert_eq!(f.facts["reported_by"], "torch-directml");
    }

    /// A program nothing names and no model's word shows gets the work
    /// made smaller in no model's terms; a model's words keep a model's.
    #[test]
    fn an_unknown_program_gets_neutral_workload_advice() {
        // fixtures/wild/1505.txt without Mitsuba's allocator name.
        let f = crate::decode_str("Caught a critical exception: cudaMalloc(): out of memory!\n");
        let ids: Vec<&str> = f.iter().flat_map(fix_ids).collect();
        if !ids.is_empty() {
            assert!(!ids.contains(&"make-workload-smaller"), "{ids:?}");
        }
        let plain = only(
            "src/utils/MemoryBlock.h(217) : cudaSafeCall() Runtime API error : out of memory.\n",
        );
        assert_eq!(fix_ids(&plain), ["make-work-smaller"]);
        let fix = &plain.diagnosis.fixes[0];
        no_model_advice(
            "plain",
            &fix.how,
            &fix.zh.as_ref().map(|z| z.text.clone()).unwrap_or_default(),
        );
        let model =
            only("src/model/layers.h(217) : cudaSafeCall() Runtime API error : out of memory.\n");
        assert_eq!(fix_ids(&model), ["make-workload-smaller"]);
        // fixtures/wild/1423.txt: XLA's words show a model's compiler.
        let xla = crate::decode_str(&wild("1423")).remove(0);
        assert!(
            !fix_ids(&xla).contains(&"make-work-smaller"),
            "{:?}",
            fix_ids(&xla)
        );
    }

    /// The catalogue's two program predicates, on both sides.
    #[test]
    fn the_catalogue_withholds_by_program() {
        const WORKLOAD: FixSpec = FixSpec::new("w", "w", "工作").models_only();
        const TORCH_API: FixSpec = FixSpec::new("t", "t", "框架").frameworks(&[Framework::PyTorch]);
        let setting = |program| Setting {
            framework: Framework::Unknown,
            vendor: super::Vendor::Nvidia,
            runtime: None,
            loading: false,
            torch: ((0, 0), None),
            inference: false,
            program,
            python_without_torch: false,
        };
        assert!(WORKLOAD.contradiction(&setting(Program::NoModel)).is_some());
        assert!(WORKLOAD
            .contradiction(&setting(Program::NativeModel))
            .is_none());
        assert!(WORKLOAD.contradiction(&setting(Program::Unknown)).is_none());
        assert!(TORCH_API
            .contradiction(&setting(Program::NoModel))
            .is_some());
        assert!(TORCH_API
            .contradiction(&setting(Program::NativeModel))
            .is_some());
        assert!(TORCH_API
            .contradiction(&setting(Program::Unknown))
            .is_none());
        // A traceback through a library that runs without PyTorch: no
        // PyTorch-only fix; a fix for any framework stays.
        let without_torch = Setting {
            python_without_torch: true,
            ..setting(Program::Unknown)
        };
        assert!(TORCH_API.contradiction(&without_torch).is_some());
        const BOTH: FixSpec =
            FixSpec::new("b", "b", "两者").frameworks(&[Framework::PyTorch, Framework::TensorFlow]);
        assert!(BOTH.contradiction(&without_torch).is_none());
        assert!(WORKLOAD.contradiction(&without_torch).is_none());
    }
}

/// The writer's lines around a message (`Finding::nearby`) tell how the job
/// ran: real pastes from `fixtures/wild`, each with its number.
#[cfg(test)]
mod run_nearby_tests {
    use super::{is_inference, is_loading, run_nearby, RunNearby, Runtime, Setting};
    use crate::explain::test_support::fix_ids;
    use crate::record::Finding;

    fn only(text: &str) -> Finding {
        let mut findings = crate::decode_str(text);
        assert_eq!(findings.len(), 1, "{text}");
        findings.remove(0)
    }

    // fixtures/wild/2012.txt: vLLM 0.2.5 named on the line before the
    // message (the paste's nvidia-smi table left out).
    const VLLM_025: &str = "Running the same code and vllm version 0.2.5 I get a similar error:\n`torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacty of 23.69 GiB of which 3.09 GiB is free. Including non-PyTorch memory, this process has 20.57 GiB memory in use. Of the allocated memory 20.13 GiB is allocated by PyTorch, and 755.50 KiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF`\n";

    /// vLLM's version on the line before is vLLM's run: its own settings
    /// first, no training advice, and its reservation explained.
    #[test]
    fn a_vllm_version_before_the_message_is_vllm() {
        let f = only(VLLM_025);
        assert_eq!(Runtime::of(&f), Some(Runtime::Vllm));
        assert!(Setting::of(&f).inference);
        let ids = fix_ids(VLLM_025);
        assert_eq!(ids[0], "vllm-less-to-fit", "{ids:?}");
        for training in ["reduce-batch-size", "gradient-checkpointing"] {
            assert!(!ids.iter().any(|x| x == training), "{ids:?}");
        }
        let why = &f.diagnosis.verdicts[0];
        assert!(
            why.detail.contains("preallocated KV cache"),
            "{}",
            why.detail
        );
        let zh = why.zh.as_ref().map_or("", |z| z.text.as_str());
        assert!(zh.contains("预先分配的 KV cache"), "{zh}");
    }

    /// A bare mention of vLLM names no run of it.
    #[test]
    fn a_mention_of_vllm_is_not_its_run() {
        let text = VLLM_025.replace("and vllm version 0.2.5", "as with vllm");
        let f = only(&text);
        assert_eq!(Runtime::of(&f), None);
        assert!(!Setting::of(&f).inference);
    }

    // fixtures/wild/2030.txt: Huatuo's command-line chat demo, the command
    // on the message's own line and "max-new-tokens 64 did not help" after.
    const HUATUO: &str = "远程服务器上执行python huatuo_cli_demo_stream.py --model-name $model_dir报错torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 270.00 MiB. GPU 。\n在网上搜寻的建议是缩小batch size，但是在Huatuo的config文件中没有找到，应该怎么办呢，将输入的max-new-tokens改成64也不行。\n";

    /// A chat demo is inference: its fixes, never training's.
    #[test]
    fn a_cli_demo_is_inference() {
        let f = only(HUATUO);
        assert_eq!(run_nearby(&f), Some(RunNearby::Inference), "{:?}", f.nearby);
        assert!(is_inference(&f));
        let ids = fix_ids(HUATUO);
        assert!(
            ids.iter().any(|x| x == "inference-in-less-memory"),
            "{ids:?}"
        );
        for training in [
            "reduce-batch-size",
            "mixed-precision-autocast",
            "gradient-checkpointing",
        ] {
            assert!(!ids.iter().any(|x| x == training), "{ids:?}");
        }
    }

    // fixtures/wild/908.txt: detectron2's train_net.py before the message,
    // "l tried to change the batch size to 1" after it.
    const DETECTRON2: &str = "l just pull docker image of detectron2 and use \n`./train_net.py \\\n  --config-file ../configs/COCO-InstanceSegmentation/mask_rcnn_R_50_FPN_1x.yaml   --num-gpus 1 SOLVER.IMS_PER_BATCH 2 SOLVER.BASE_LR 0.0025`  to train, but l got this problem `cuda out of memory, tried to allocate 50MiB(GPU 0; 1.96GiB totalcapacity;1.33GiB already allocated; 43.5MiB free;1.36 GiB reserved in total by Pytorch)`\n\nl tried to change the batch size to 1, but it still occured.  cuda version is 11.0 and torch version is 1.7.0+cua101. does anyone else have this problem ?\n";

    /// Training, and the batch already at 1: the batch fix is dropped.
    #[test]
    fn a_batch_lowered_below_the_message_drops_the_batch_fix() {
        let f = only(DETECTRON2);
        assert_eq!(run_nearby(&f), Some(RunNearby::Training), "{:?}", f.nearby);
        assert!(!is_inference(&f));
        let ids = fix_ids(DETECTRON2);
        assert!(!ids.iter().any(|x| x == "reduce-batch-size"), "{ids:?}");
        assert!(!ids.is_empty());
    }

    /// The lines after a message are read for six lines: the writer's
    /// words on the sixth count, on the seventh they do not.
    #[test]
    fn the_window_after_a_message_is_six_lines() {
        let message = "RuntimeError: CUDA out of memory. Tried to allocate 50.00 MiB (GPU 0; 1.96 GiB total capacity; 1.33 GiB already allocated; 43.50 MiB free; 1.36 GiB reserved in total by PyTorch)\n";
        let at = |filler: usize| {
            let mut text = message.to_string();
            for _ in 0..filler {
                text.push_str("nothing to see\n");
            }
            text.push_str("I tried to change the batch size to 1, but it still occured.\n");
            fix_ids(&text)
        };
        let sixth = at(5);
        assert!(!sixth.iter().any(|x| x == "reduce-batch-size"), "{sixth:?}");
        let seventh = at(6);
        assert!(
            seventh.iter().any(|x| x == "reduce-batch-size"),
            "{seventh:?}"
        );
    }

    /// Training words win over inference words (a training script that
    /// samples text as it goes).
    #[test]
    fn training_wins_over_generation() {
        let message = VLLM_025.split_once('\n').map_or("", |(_, m)| m);
        let f = only(&format!(
            "python train.py uses model.generate( for samples\n{message}"
        ));
        assert_eq!(run_nearby(&f), Some(RunNearby::Training), "{:?}", f.nearby);
        assert!(!is_inference(&f));
    }

    // fixtures/wild/142.txt: `python web_demo.py`, the checkpoint shards at
    // 0% when the process was killed.
    const WEB_DEMO_KILLED: &str = "我在python web_demo.py时 出现 \nLoading checkpoint shards:   0% 。。。。。.\nKilled \n这是什么问题  是不是需要显卡 我是第一次允许,测试\n";

    /// Shards below 100% are still loading; at 100% they are done.
    #[test]
    fn checkpoint_shards_below_100_percent_are_loading() {
        let f = only(WEB_DEMO_KILLED);
        assert!(is_loading(&f), "{:?}", f.nearby);
        assert_eq!(run_nearby(&f), Some(RunNearby::Inference));
        let at = |percent: &str| {
            let text = WEB_DEMO_KILLED.replace(
                "0% 。。。。。.",
                &format!("{percent}|██████████| 2/2 [00:08<00:00]"),
            );
            is_loading(&only(&text))
        };
        assert!(at("99%"));
        assert!(!at("100%"));
    }
}
