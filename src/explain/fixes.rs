//! Fixes, most effective first, fitted to the verdicts, the training phase
//! and the allocator options that exist in the message's PyTorch era.

use crate::record::{Diagnosis, Finding, Fix, Kind};

fn fix(title: &str, how: impl Into<String>) -> Fix {
    Fix {
        title: title.to_string(),
        how: how.into(),
    }
}

/// Which allocator options this era's PyTorch has, and under which variable.
struct AllocConf {
    env_var: String,
    expandable_segments: bool,
    /// `Some(caveat)` when max_split_size_mb exists (caveat may be empty).
    max_split: Option<&'static str>,
    note: Option<String>,
}

fn alloc_conf(f: &Finding) -> AllocConf {
    let hint = f.hint.as_ref();
    let hinted_var = hint.and_then(|h| h.env_var.clone());
    let backend = f.backend.as_deref().unwrap_or("cuda");
    let mut note = None;
    let env_var = match (hinted_var.as_deref(), backend) {
        // 2.9–2.10 print the generic name, but 2.9.1 ignored expandable_segments
        // set through it for CUDA (pytorch/pytorch#183387); the CUDA name still works.
        (Some("PYTORCH_ALLOC_CONF"), "cuda") => {
            note = Some("PyTorch 2.9–2.10 print PYTORCH_ALLOC_CONF, but 2.9.1 ignores expandable_segments set that way for CUDA (pytorch/pytorch#183387); PYTORCH_CUDA_ALLOC_CONF still works there (with a deprecation warning).".to_string());
            "PYTORCH_CUDA_ALLOC_CONF".to_string()
        }
        (Some(var), _) => var.to_string(),
        (None, "hip") => "PYTORCH_HIP_ALLOC_CONF".to_string(),
        (None, _) => "PYTORCH_CUDA_ALLOC_CONF".to_string(),
    };
    let (expandable_segments, max_split) = match f.era.as_deref() {
        Some("capacity") => (true, Some("")),
        Some("capacty") => (false, Some("")),
        Some("reserved") if hint.is_some() => (false, Some("")),
        Some("reserved") | Some("paren") => (
            false,
            Some(" (PyTorch 1.10 or newer; older releases have no allocator options)"),
        ),
        _ => (false, None),
    };
    AllocConf {
        env_var,
        expandable_segments,
        max_split,
        note,
    }
}

/// Builds the fix list for a finding whose verdicts are already in `d`.
pub(super) fn fixes(f: &Finding, d: &Diagnosis) -> Vec<Fix> {
    let mut out: Vec<Fix> = Vec::new();
    let has = |code: &str| d.verdicts.iter().any(|v| v.code == code);
    match f.kind {
        Kind::TorchAllocatorOom if super::families_stated::is_intel_xpu(f) => {
            super::families_stated::xpu_fixes(f, d, &mut out)
        }
        Kind::TorchAllocatorOom => allocator_fixes(f, d, &has, &mut out),
        Kind::CudaRuntimeOom => runtime_oom_fixes(f, &mut out),
        Kind::IllegalMemoryAccess => illegal_access_fixes(&mut out),
        Kind::WindowsFailFast => fail_fast_fixes(&mut out),
        Kind::MpsOom
        | Kind::HostOom
        | Kind::HostOomKilled
        | Kind::TfOom
        | Kind::XlaOom
        | Kind::CupyOom
        | Kind::KvCacheOom => super::families_stated::fixes(f, d, &mut out),
        Kind::LibraryAllocFailed
        | Kind::NcclOom
        | Kind::AllocatorAssert
        | Kind::DeviceNotReady
        | Kind::DeviceSideAssert
        | Kind::MisalignedAddress
        | Kind::LaunchFailure
        | Kind::NoKernelImage
        | Kind::NcclError
        | Kind::NcclTimeout
        | Kind::ProcessGroupAborted
        | Kind::ChildFailed
        | Kind::Xid
        | Kind::WindowsAccessViolation
        | Kind::WindowsPagingFile
        | Kind::GenericOom => super::families_masked::fixes(f, &mut out),
        // Verdicts and fixes come from the snapshot analysis (snapshot::after_explain).
        Kind::MemorySnapshot => {}
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|fix| seen.insert(fix.title.clone()));
    out
}

fn allocator_fixes(f: &Finding, d: &Diagnosis, has: &dyn Fn(&str) -> bool, out: &mut Vec<Fix>) {
    if has("request_exceeds_capacity") {
        out.push(fix(
            "Find the tensor that is far too large",
            "Print the shapes at the failing line (the last frame of your own code in the traceback). Look for a wrong reshape/broadcast, an attention matrix over a very long sequence (use torch.nn.functional.scaled_dot_product_attention or chunk the sequence), or a whole dataset moved to the GPU at once. Allocator settings cannot help here.",
        ));
        return;
    }
    // Fixes follow the verdicts' order of importance.
    for v in &d.verdicts {
        match v.code.as_str() {
            "memory_limit" => out.push(fix(
                "Raise or remove the per-process memory limit",
                "Search your code and framework config for torch.cuda.set_per_process_memory_fraction(...) (some launchers and notebooks set it) and raise the fraction; check MIG/vGPU/container GPU limits if none is set.",
            )),
            "free_exceeds_request" => out.push(fix(
                "Check what changes on the GPU around the crash",
                "Watch `nvidia-smi -l 1` while it runs: other jobs starting and stopping, or a MIG/vGPU/container limit below the card's size, explain a failure with memory apparently free. Re-run on an idle GPU (CUDA_VISIBLE_DEVICES=N) to compare.",
            )),
            "other_processes" => other_process_fix(f, d, out),
            "memory_outside_pytorch" => {
                out.push(fix(
                    "Find who else holds the GPU",
                    "Run `nvidia-smi` (or `rocm-smi --showpids` on AMD) to see other processes and their memory; stop stale jobs and old notebook kernels, or pick an idle GPU with CUDA_VISIBLE_DEVICES=N.",
                ));
                out.push(non_pytorch_fix());
            }
            "fragmentation" => fragmentation_fixes(f, out),
            "cuda_graph_pools" => out.push(fix(
                "Capture fewer or smaller CUDA graphs",
                "Each captured graph keeps its pool. torch.compile(mode=\"reduce-overhead\") captures graphs per input shape: use mode=\"default\" or fewer distinct shapes; in vLLM lower the captured batch sizes or set enforce_eager=True.",
            )),
            "non_pytorch_memory" => out.push(non_pytorch_fix()),
            "capacity_exhausted" | "inconsistent_numbers" => {
                phase_fixes(f, has, out);
                workload_fixes(f, out);
            }
            _ => {}
        }
    }
    phase_fixes(f, has, out);
    if out.is_empty() {
        workload_fixes(f, out);
    }
}

fn other_process_fix(f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
    let pids: Vec<String> = f
        .processes
        .iter()
        .filter(|p| Some(p.pid) != d.probable_self_pid)
        .map(|p| match super::pasted::smi_process(f, p.pid) {
            Some(row) => format!("{} = {} on GPU {}", p.pid, row.name, row.gpu),
            None => p.pid.to_string(),
        })
        .take(5)
        .collect();
    out.push(fix(
        "Free the GPU from other processes",
        format!(
            "Run `nvidia-smi` to see who holds GPU {}{}; stop stale jobs, old notebook kernels and zombie DataLoader workers, or pick an idle GPU with CUDA_VISIBLE_DEVICES=N.",
            f.device.map_or("memory".to_string(), |d| d.to_string()),
            if pids.is_empty() {
                String::new()
            } else {
                format!(" (PIDs {})", pids.join(", "))
            }
        ),
    ));
}

fn non_pytorch_fix() -> Fix {
    fix(
        "Stop other GPU libraries in this process from holding memory",
        "TensorFlow and JAX preallocate most of the GPU: TF_FORCE_GPU_ALLOW_GROWTH=true, XLA_PYTHON_CLIENT_PREALLOCATE=false. Release CuPy's pool with cupy.get_default_memory_pool().free_all_blocks(). NCCL buffers grow with NCCL_BUFFSIZE and the number of communicators.",
    )
}

fn fragmentation_fixes(f: &Finding, out: &mut Vec<Fix>) {
    let conf = alloc_conf(f);
    if f.era.as_deref() == Some("malloc_async") {
        out.push(fix(
            "Try the native allocator",
            "This message comes from the cudaMallocAsync backend (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync; ComfyUI enables it by default), which ignores expandable_segments and max_split_size_mb. Remove backend:cudaMallocAsync (ComfyUI: --disable-cuda-malloc) and compare.",
        ));
        return;
    }
    if f.backend.as_deref() == Some("xpu") {
        out.push(fix(
            "Release cached memory",
            "Call torch.xpu.empty_cache() between phases (e.g. after evaluation) so that cached blocks can be reused for differently sized tensors.",
        ));
        return;
    }
    if conf.expandable_segments {
        out.push(fix(
            "Let the allocator grow segments instead of fragmenting them",
            format!(
                "export {}=expandable_segments:True (set it before Python starts, or in os.environ before the first CUDA call). Not supported on Windows; on WSL2 and Jetson it can itself fail with `CUDA driver error: out of memory`.{}",
                conf.env_var,
                conf.note.as_deref().map(|n| format!(" {n}")).unwrap_or_default()
            ),
        ));
    }
    if let Some(caveat) = conf.max_split {
        out.push(fix(
            "Stop the allocator from splitting large blocks",
            format!(
                "export {}=max_split_size_mb:128{caveat}. Blocks larger than 128 MB are then never split, which leaves fewer unusable slivers; try 128–512, smaller values can cost speed.",
                conf.env_var
            ),
        ));
    }
}

fn phase_fixes(f: &Finding, has: &dyn Fn(&str) -> bool, out: &mut Vec<Fix>) {
    if has("memory_growth") || has("late_failure") {
        out.push(fix(
            "Look for tensors kept across steps",
            "Accumulate metrics with loss.item() (not `total += loss`), .detach().cpu() outputs you keep, clear lists of tensors each epoch, and check for sequence lengths that grow over the run (sort or cap them). torch.cuda.memory._record_memory_history() plus _dump_snapshot() shows which allocations grow.",
        ));
    }
    match f.phase.name.as_str() {
        "evaluation" => out.push(fix(
            "Run evaluation without autograd",
            "Wrap evaluation/generation in `with torch.no_grad():` (or torch.inference_mode()) and call model.eval(); without it every activation is kept for a backward pass that never comes. Use a smaller eval batch and move collected outputs to the CPU.",
        )),
        "optimizer_step" => out.push(fix(
            "Make the optimizer state smaller",
            "The first optimizer.step() allocates Adam's two moment buffers (2 × the trainable parameters in fp32). Use an 8-bit optimizer (bitsandbytes.optim.AdamW8bit), torch.optim.AdamW(..., foreach=False) to avoid temporary copies, fewer trainable parameters (LoRA), or shard the state (FSDP, DeepSpeed ZeRO).",
        )),
        "backward" => out.push(fix(
            "Keep fewer activations for the backward pass",
            "Enable gradient checkpointing (Hugging Face: model.gradient_checkpointing_enable(); plain PyTorch: torch.utils.checkpoint.checkpoint), and reduce the batch or sequence length, which activation memory grows with.",
        )),
        "model_load" => out.push(fix(
            "Load the model in less memory",
            "Load weights in half precision (from_pretrained(..., torch_dtype=torch.bfloat16)), quantised (BitsAndBytesConfig(load_in_4bit=True)), or spread over devices (device_map=\"auto\"); load checkpoints with torch.load(path, map_location=\"cpu\") before moving them.",
        )),
        "checkpoint" => out.push(fix(
            "Load checkpoints onto the CPU first",
            "torch.load(path, map_location=\"cpu\") keeps a checkpoint from being materialised on the GPU next to the live model; free the old state (del state_dict) before loading a new one.",
        )),
        "data_loading" => out.push(fix(
            "Move data to the GPU one batch at a time",
            "Keep datasets on the CPU and call .to(device, non_blocking=True) per batch inside the loop; do not create CUDA tensors in Dataset.__getitem__ or collate_fn.",
        )),
        "compile" => out.push(fix(
            "Give compilation less to autotune",
            "torch.compile(mode=\"max-autotune\") benchmarks many kernels and can need extra memory: use the default mode, or disable compilation once to see whether the model fits without it.",
        )),
        _ => {}
    }
}

fn workload_fixes(f: &Finding, out: &mut Vec<Fix>) {
    out.push(fix(
        "Reduce the batch size",
        "Halve the batch size; keep the effective batch with gradient accumulation (accumulate N micro-batches, then optimizer.step()). Activation memory shrinks in proportion.",
    ));
    out.push(fix(
        "Use mixed precision",
        "Run the forward pass under torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16) (or float16 with torch.amp.GradScaler): activations take half the memory.",
    ));
    if f.phase.name != "backward" {
        out.push(fix(
            "Trade compute for memory with gradient checkpointing",
            "model.gradient_checkpointing_enable() (Hugging Face) or torch.utils.checkpoint.checkpoint around blocks: activations are recomputed in the backward pass instead of stored.",
        ));
    }
    out.push(fix(
        "Shorten sequences or shrink inputs",
        "Memory for attention and activations grows with sequence length (and image resolution); cap max_length or crop inputs.",
    ));
}

fn runtime_oom_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if f.era.as_deref() == Some("driver") {
        out.push(fix(
            "Turn off expandable segments if you set them",
            "Remove expandable_segments:True from PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF: the driver-API mapping it uses fails on WSL2 and Jetson even with free memory.",
        ));
    }
    out.push(fix(
        "Check what else holds the GPU",
        "Run `nvidia-smi`: if other processes fill the card, even creating the CUDA context (a few hundred MiB) fails. Stop them or choose another GPU with CUDA_VISIBLE_DEVICES.",
    ));
    out.push(fix(
        "Leave room for libraries outside PyTorch's cache",
        "cuBLAS, cuDNN and NCCL allocate with cudaMalloc directly and cannot use memory PyTorch caches. Call torch.cuda.empty_cache() before the failing call, or cap PyTorch with torch.cuda.set_per_process_memory_fraction(0.9).",
    ));
    out.push(fix(
        "Reduce the workload",
        "A smaller batch, sequence length or model leaves more room for these allocations.",
    ));
}

fn illegal_access_fixes(out: &mut Vec<Fix>) {
    out.push(fix(
        "Find the kernel that really failed",
        "Re-run with CUDA_LAUNCH_BLOCKING=1 so each kernel is checked as it finishes; the traceback then points at the real call. Slower, so reproduce on a small input.",
    ));
    out.push(fix(
        "Run under compute-sanitizer",
        "compute-sanitizer --tool memcheck python train.py names the kernel and the out-of-bounds address (very slow: use a tiny batch).",
    ));
    out.push(fix(
        "Check the usual causes",
        "An index out of range (embedding ids ≥ num_embeddings, labels ≥ num_classes, gather/scatter indices): run the same step on the CPU for a clear IndexError. Custom CUDA/Triton kernels and extensions (flash-attn, bitsandbytes, apex) built for another PyTorch/CUDA version. Tensors on the wrong device or non-contiguous inputs passed to custom ops.",
    ));
    out.push(fix(
        "Rule out the hardware",
        "If it happens at random places, check the kernel log (`sudo dmesg | grep -i xid`) for NVIDIA Xid errors and run the GPU alone.",
    ));
}

fn fail_fast_fixes(out: &mut Vec<Fix>) {
    out.push(fix(
        "Get a native stack trace",
        "Run from a terminal instead of the IDE with `python -X faulthandler train.py`; open Event Viewer → Windows Logs → Application and read the 'Faulting module' of the crash (nvcuda64.dll, cudnn*.dll, ucrtbase.dll ...).",
    ));
    out.push(fix(
        "Match CUDA, cuDNN and the driver to your PyTorch/TensorFlow build",
        "Compare torch.version.cuda (or tf.sysconfig.get_build_info()) with the installed toolkit/cuDNN and update the GPU driver; mixed pip/conda CUDA libraries are a common cause.",
    ));
    out.push(fix(
        "Rule out memory exhaustion inside native code",
        "Retry with a smaller batch or model: an allocation failure inside a native library can end in abort() instead of a Python OOM error.",
    ));
}
