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
    f.traceback.as_ref().is_some_and(|tb| {
        tb.frames
            .iter()
            .chain(tb.chained.iter().flat_map(|c| c.frames.iter()))
            .any(|fr| {
                let file = fr.file.replace('\\', "/");
                INFERENCE_FILES.iter().any(|p| file.contains(p))
            })
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

    fn fix_ids(text: &str) -> Vec<String> {
        crate::decode_str(text)[0]
            .diagnosis
            .fixes
            .iter()
            .map(|x| x.id.clone())
            .collect()
    }

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
