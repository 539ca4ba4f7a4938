//! Pieces shared by every family's explanation: building verdicts, fixes
//! and field rows, reading facts, rounding tolerance, and the fixes shared
//! by several families.

use super::catalogue::FixSpec;
use super::docs::Code;
use super::setting::{available, is_loading, since, Availability, Runtime, Vendor};
use super::thresholds::{FAILS_AT_START_MAX_STEP, LATE_FAILURE_MIN_STEP};
use crate::i18n::Said;
pub use crate::record::FieldRow;
use crate::record::{Chinese, Diagnosis, Finding, Fix, Kind, Verdict};
use crate::units::format_size as fmt;
// The explainers take the size units from here with the other shared pieces.
pub(super) use crate::units::{GIB, MIB, TIB};

/// Largest rounding error of a figure PyTorch printed for this value.
/// Sizes reach u64::MAX (`17179869184.00 GiB`), so every `size + tolerance`
/// below saturates (regression test r6_sizes_near_u64_max_do_not_overflow_the_explainer).
pub(super) fn tolerance(value: u64) -> u64 {
    let unit = if value > GIB {
        GIB
    } else if value > MIB {
        MIB
    } else if value > 1024 {
        1024
    } else {
        return 0;
    };
    unit / 200 + 1
}

/// A verdict, its title and detail in both languages.
pub(super) fn verdict(code: Code, title: Said, detail: Said) -> Verdict {
    Verdict {
        code: code.as_str().to_string(),
        title: title.en,
        detail: detail.en,
        zh: Some(Chinese {
            title: title.zh,
            text: detail.zh,
        }),
    }
}

/// A verdict in English only; its Chinese is looked up by its code in
/// `i18n/zh.rs`. Being replaced by [`verdict`].
pub(super) fn verdict_en(code: Code, title: &str, detail: String) -> Verdict {
    Verdict {
        code: code.as_str().to_string(),
        title: title.to_string(),
        detail,
        zh: None,
    }
}

pub(super) fn context_verdicts(f: &Finding, growth: Option<(u64, u64)>, out: &mut Vec<Verdict>) {
    if !f.category.is_oom() {
        return;
    }
    if let Some((before, now)) = growth {
        out.push(verdict_en(
            Code::MemoryGrowth,
            "Memory grew between repeated OOMs: something accumulates",
            format!(
                "Allocated memory rose at each of the last three OOMs on this device, from {} to {}. Memory that keeps growing between steps points at tensors kept alive across iterations (a loss summed without .item(), outputs appended to a list, a growing cache or sequence length).",
                fmt(before),
                fmt(now)
            ),
        ));
    } else if let Some(step) = f.last_step {
        if step <= FAILS_AT_START_MAX_STEP {
            out.push(verdict_en(
                Code::FailsAtStart,
                "It failed at the very first step",
                format!("The last progress counter before the crash reads {step}: this configuration does not fit even once. Change the configuration (batch, sequence length, precision), not a leak."),
            ));
        } else if step >= LATE_FAILURE_MIN_STEP {
            out.push(verdict_en(
                Code::LateFailure,
                "It failed after many successful steps",
                format!("The last progress counter before the crash reads {step}: the same configuration ran many times before. Either one batch was larger than the others (variable sequence lengths, a big last batch, an evaluation pass) or memory grows over time (tensors kept across steps)."),
            ));
        }
    }
}

pub(super) fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A row, its label and meaning in both languages.
pub(super) fn row(label: Said, value: String, meaning: Said, derived: bool) -> FieldRow {
    FieldRow {
        label: label.en,
        value,
        meaning: meaning.en,
        derived,
        zh: Some(Chinese {
            title: label.zh,
            text: meaning.zh,
        }),
    }
}

pub(super) fn row_en(
    label: &str,
    value: String,
    meaning: impl Into<String>,
    derived: bool,
) -> FieldRow {
    FieldRow {
        label: label.to_string(),
        value,
        meaning: meaning.into(),
        derived,
        zh: None,
    }
}

/// The fix `spec` of the catalogue with how to apply it here, in both
/// languages.
pub(super) fn fix(spec: &FixSpec, how: Said) -> Fix {
    Fix {
        id: spec.id.to_string(),
        title: spec.title.to_string(),
        how: how.en,
        zh: Some(Chinese {
            title: spec.title_zh.to_string(),
            text: how.zh,
        }),
    }
}

/// A fix in English only, with an id made from its title; its Chinese is
/// looked up by the title in `i18n/zh.rs`. Being replaced by [`fix`].
pub(super) fn fix_en(title: &str, how: impl Into<String>) -> Fix {
    Fix::english(title, how)
}

pub(super) fn extra(f: &Finding, key: &str) -> Option<u64> {
    f.sizes.extra.get(key).copied().flatten()
}

pub(super) fn fact<'f>(f: &'f Finding, key: &str) -> Option<&'f str> {
    f.facts.get(key).map(String::as_str)
}

pub(super) fn on_device(f: &Finding) -> String {
    // torch_npu numbers Ascend NPUs as `NPU N`.
    let what = if f.backend.as_deref() == Some("npu") {
        "NPU"
    } else {
        "GPU"
    };
    f.device
        .map(|d| format!(" on {what} {d}"))
        .unwrap_or_default()
}

/// How to confirm that a message under another name was an out-of-memory error.
pub(super) const CONFIRM: &str = "To confirm: rerun with half the batch size (if the error goes away or comes later, it was memory); watch `nvidia-smi -l 1` while it runs; print torch.cuda.memory_summary() just before the failing step.";

pub(super) fn confirm_fix() -> Fix {
    fix_en(
        "Confirm that it is memory",
        "Rerun with half the batch size: if the error disappears or comes later, it was memory. Watch `nvidia-smi -l 1` while it runs and print torch.cuda.memory_summary() just before the failing step.",
    )
}

/// The workload fix for messages whose framework is not known: nothing in
/// it is specific to one framework.
pub(super) fn workload_fix() -> Fix {
    fix_en(
        "Make the workload smaller",
        "Halve the batch size, shorten sequences or lower the resolution, use lower precision (bfloat16/float16, or a quantised model for inference), or a smaller model.",
    )
}

/// True when the message or its traceback shows PyTorch.
pub(super) fn is_pytorch(f: &Finding) -> bool {
    matches!(
        f.kind,
        Kind::TorchAllocatorOom | Kind::CudaRuntimeOom | Kind::MpsOom | Kind::DeviceSideAssert
    ) || f
        .exception
        .as_deref()
        .is_some_and(|e| e.starts_with("torch."))
        || torch_in_traceback(f)
}

/// True when a traceback frame is in PyTorch's own package.
pub(super) fn torch_in_traceback(f: &Finding) -> bool {
    f.traceback.as_ref().is_some_and(|tb| {
        tb.frames
            .iter()
            .any(|fr| fr.file.replace('\\', "/").contains("/torch/"))
    })
}

/// The fix for an OOM while a model's parameters were loaded, moved or converted.
pub(super) fn loading_fix() -> Fix {
    fix_en(
        "Load the model in less memory",
        "The parameters themselves do not fit, so smaller batches or recomputing activations cannot help here. Load the weights in half precision (Hugging Face: from_pretrained(..., torch_dtype=torch.bfloat16); plain PyTorch: model.half() or .to(torch.bfloat16) on the CPU before moving it), quantised (BitsAndBytesConfig(load_in_4bit=True)), or spread over devices and the CPU (device_map=\"auto\", FSDP or DeepSpeed ZeRO-3 to shard across GPUs); load checkpoints with torch.load(path, map_location=\"cpu\") before moving them.",
    )
}

/// Workload fixes fitted to what the finding ran in: an inference engine's
/// or front end's own settings, loading fixes while parameters were moved,
/// otherwise PyTorch training advice in the API of the message's release.
pub(super) fn workload_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if let Some(runtime) = Runtime::of(f) {
        out.push(runtime_fix(runtime));
        if runtime.is_engine() {
            return;
        }
    }
    if is_loading(f) {
        out.push(loading_fix());
        return;
    }
    if !is_pytorch(f) {
        out.push(workload_fix());
        return;
    }
    if Runtime::of(f).is_some() {
        return;
    }
    out.push(fix_en(
        "Reduce the batch size",
        "Halve the batch size; keep the effective batch with gradient accumulation (accumulate N micro-batches, then optimizer.step()). Activation memory shrinks in proportion.",
    ));
    out.push(fix_en("Use mixed precision", mixed_precision(f)));
    if f.phase.name != "backward" {
        out.push(fix_en(
            "Trade compute for memory with gradient checkpointing",
            "model.gradient_checkpointing_enable() (Hugging Face) or torch.utils.checkpoint.checkpoint around blocks: activations are recomputed in the backward pass instead of stored.",
        ));
    }
    out.push(fix_en(
        "Shorten sequences or shrink inputs",
        "Memory for attention and activations grows with sequence length (and image resolution); cap max_length or crop inputs.",
    ));
}

/// Mixed precision in the API of the releases that print this message.
pub(super) fn mixed_precision(f: &Finding) -> String {
    let amd = Vendor::of(f) == Vendor::Amd;
    let dtype_note = if amd {
        "bfloat16 where the GPU supports it (torch.cuda.is_bf16_supported()), otherwise float16 with a gradient scaler"
    } else {
        "bfloat16 needs an Ampere or newer NVIDIA GPU (compute capability ≥ 8.0; check torch.cuda.is_bf16_supported()), otherwise use float16 with a gradient scaler"
    };
    let scaler = match available(f, since::AMP_GRAD_SCALER) {
        Availability::Yes => "torch.amp.GradScaler(\"cuda\")",
        _ => "torch.cuda.amp.GradScaler(); from PyTorch 2.3 also torch.amp.GradScaler(\"cuda\"), the form 2.4 asks for when it deprecates the former",
    };
    match available(f, since::AUTOCAST) {
        Availability::Yes => format!(
            "Run the forward pass under torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16): activations take half the memory. {dtype_note} ({scaler})."
        ),
        Availability::From(_) => format!(
            "Run the forward pass under torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16) (PyTorch ≥ 1.10; in 1.6–1.9 use torch.cuda.amp.autocast(), which is float16 only; before 1.6 there is no native mixed precision): activations take half the memory. {dtype_note} ({scaler})."
        ),
        Availability::Upgrade(_) => match available(f, since::CUDA_AMP) {
            Availability::Upgrade(name) => format!(
                "This PyTorch has no native mixed precision: upgrade to {name} for torch.cuda.amp.autocast() with torch.cuda.amp.GradScaler() (torch.autocast from 1.10), or cast the model to half precision with model.half() and keep the loss in float32."
            ),
            _ => "Run the forward pass under torch.cuda.amp.autocast() with torch.cuda.amp.GradScaler() (float16; PyTorch 1.6–1.9 — torch.autocast and bfloat16 need ≥ 1.10): activations take half the memory.".to_string(),
        },
    }
}

/// The settings that bound an inference engine's or front end's memory.
pub(super) fn runtime_fix(runtime: Runtime) -> Fix {
    match runtime {
        Runtime::Vllm => fix_en(
            "Give vLLM less to fit",
            "Lower --max-model-len (the context every sequence may reach) and --max-num-seqs (sequences batched at once); lower --gpu-memory-utilization when other processes share the GPU (raise it toward 0.95 only when vLLM is alone); --enforce-eager skips CUDA-graph capture and its memory; --tensor-parallel-size N splits the model over N GPUs; a quantised checkpoint shrinks the weights.",
        ),
        Runtime::Sglang => fix_en(
            "Give SGLang less to fit",
            "Lower --mem-fraction-static when other processes share the GPU or the activations do not fit, --context-length and --max-running-requests; --disable-cuda-graph skips graph capture; --tp-size N splits the model over N GPUs; or use a quantised checkpoint.",
        ),
        Runtime::Tgi => fix_en(
            "Give text-generation-inference less to fit",
            "Lower --max-total-tokens, --max-input-tokens and --max-batch-prefill-tokens; --cuda-memory-fraction leaves room for other processes; --num-shard N splits the model over N GPUs; --quantize shrinks the weights.",
        ),
        Runtime::Diffusers => fix_en(
            "Use diffusers' low-memory modes",
            "pipe.enable_model_cpu_offload() (or enable_sequential_cpu_offload() for the least memory), pipe.enable_attention_slicing(), pipe.enable_vae_tiling() for large images, torch_dtype=torch.float16 when loading; or a lower resolution and fewer images per prompt.",
        ),
        Runtime::ComfyUi => fix_en(
            "Use ComfyUI's low-VRAM modes",
            "Start ComfyUI with --lowvram (or --novram), decode with the \"VAE Decode (Tiled)\" node, use fp16/fp8 model weights, a lower resolution or batch size; close other GPU applications.",
        ),
    }
}

/// The fixes of the families whose messages state their own numbers outside
/// PyTorch's CUDA allocator: a request no device can hold gets only the fix
/// for that; otherwise the family's own fixes, then the one for memory that
/// grows across steps.
pub(super) fn framework_fixes(
    d: &Diagnosis,
    out: &mut Vec<Fix>,
    specific: impl FnOnce(&dyn Fn(Code) -> bool, &mut Vec<Fix>),
) {
    let has = |code: Code| d.verdicts.iter().any(|v| v.code == code.as_str());
    if has(Code::RequestExceedsCapacity) {
        out.push(fix_en(
            "Find the tensor that is far too large",
            "Print the shapes at the failing line (the last frame of your own code in the traceback). Look for an overflowed or wrong dimension, a whole dataset materialised at once, or a pairwise/attention matrix over very long inputs. Memory settings cannot help here.",
        ));
        return;
    }
    specific(&has, out);
    if has(Code::MemoryGrowth) || has(Code::LateFailure) {
        out.push(fix_en(
            "Look for memory kept across steps",
            "If it ran for a while first, something accumulates: losses summed as tensors instead of floats, outputs appended to a list, caches that grow, or sequences that get longer over the run.",
        ));
    }
}

/// Room for cuBLAS, cuDNN, cuSOLVER and NCCL, which allocate with cudaMalloc
/// beside PyTorch's cache: a cap on the cache where this PyTorch has one
/// (`set_per_process_memory_fraction`, 1.8), else emptying it.
pub(super) fn library_headroom_fix(f: &Finding) -> Fix {
    match available(f, since::MEMORY_FRACTION) {
        Availability::Upgrade(_) => fix_en(
            "Empty PyTorch's cache before the library call",
            "cuBLAS, cuDNN, cuSOLVER and NCCL allocate with cudaMalloc directly and cannot use memory PyTorch has cached. Call torch.cuda.empty_cache() just before the failing call; stop other processes on the GPU (`nvidia-smi`). Capping PyTorch's cache (torch.cuda.set_per_process_memory_fraction) needs PyTorch ≥ 1.8.",
        ),
        Availability::From(name) => fix_en(
            "Leave room outside PyTorch's cache",
            format!("cuBLAS, cuDNN, cuSOLVER and NCCL allocate with cudaMalloc directly and cannot use memory PyTorch has cached. Cap PyTorch with torch.cuda.set_per_process_memory_fraction(0.9) ({name}), or call torch.cuda.empty_cache() before the failing call; stop other processes on the GPU (`nvidia-smi`)."),
        ),
        Availability::Yes => fix_en(
            "Leave room outside PyTorch's cache",
            "cuBLAS, cuDNN, cuSOLVER and NCCL allocate with cudaMalloc directly and cannot use memory PyTorch has cached. Cap PyTorch with torch.cuda.set_per_process_memory_fraction(0.9), or call torch.cuda.empty_cache() before the failing call; stop other processes on the GPU (`nvidia-smi`).",
        ),
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
