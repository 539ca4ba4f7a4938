//! Explanations for the out-of-memory families that state their numbers
//! outside PyTorch's CUDA allocator (issue 4): Apple MPS, host RAM (PyTorch's
//! CPU allocator and processes killed for memory), TensorFlow, XLA/JAX, CuPy
//! and inference engines' KV cache — plus the fixes for Intel XPU, whose
//! message shares PyTorch's allocator grammar but not its CUDA options.
//!
//! Verdict codes used here (each has `src/explanations/<code>.md`):
//! * `mps_high_watermark` — X + O + A ≥ M − rounding: PyTorch's limit refused it.
//! * `unified_memory_exhausted` — below the limit (or limit off): macOS had no memory.
//! * `host_ram_exhausted` — the machine's RAM (host, not GPU) ran out.
//! * `host_memory_limit` — a cgroup / Slurm / Kubernetes limit killed it.
//! * `killed_by_sigkill` — SIGKILL only: probably the OOM killer, not proven.
//! * `xla_preallocation` — XLA's preallocated pool could not serve the buffer.
//! * `xla_host_memory_limit` — XLA's pinned host-memory limit (64 GB default).
//! * `kv_cache_too_small` — the KV cache cannot hold one request of max_model_len.
//!
//! Reused: `memory_limit` (CuPy pool limit), `capacity_exhausted`,
//! `request_exceeds_capacity` (one request ≥ 1 TiB on a GPU, ≥ 4 TiB on the host).

use super::{tolerance, verdict, FieldRow};
use crate::record::{Diagnosis, Finding, Fix, Kind, Verdict};
use crate::units::{format_signed, format_size as fmt};

const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// True for the kinds this module explains.
pub(super) fn handles(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::MpsOom
            | Kind::HostOom
            | Kind::HostOomKilled
            | Kind::TfOom
            | Kind::XlaOom
            | Kind::CupyOom
            | Kind::KvCacheOom
    )
}

/// True for PyTorch allocator messages from Intel GPUs (`XPU` / IPEX `DPCPP`).
pub(super) fn is_intel_xpu(f: &Finding) -> bool {
    f.kind == Kind::TorchAllocatorOom && matches!(f.backend.as_deref(), Some("xpu" | "dpcpp"))
}

fn extra(f: &Finding, key: &str) -> Option<u64> {
    f.sizes.extra.get(key).copied().flatten()
}

fn fact<'f>(f: &'f Finding, key: &str) -> Option<&'f str> {
    f.facts.get(key).map(String::as_str)
}

fn fix(title: &str, how: impl Into<String>) -> Fix {
    Fix {
        title: title.to_string(),
        how: how.into(),
    }
}

fn row(label: &str, value: String, meaning: impl Into<String>, derived: bool) -> FieldRow {
    FieldRow {
        label: label.to_string(),
        value,
        meaning: meaning.into(),
        derived,
    }
}

fn on_device(f: &Finding) -> String {
    f.device.map(|d| format!(" on GPU {d}")).unwrap_or_default()
}

// ---------------------------------------------------------------- headline

/// One line saying what happened.
pub(super) fn headline(f: &Finding) -> String {
    let a = f.sizes.requested_bytes.map(fmt);
    match f.kind {
        Kind::MpsOom => match a {
            Some(a) => format!("PyTorch could not allocate {a} on the Apple GPU (MPS)"),
            None => "PyTorch's MPS backend ran out of memory on the Apple GPU".into(),
        },
        Kind::HostOom => match a {
            Some(a) => {
                format!("PyTorch could not allocate {a} of host RAM (CPU memory, not GPU memory)")
            }
            None => "PyTorch could not allocate host RAM (CPU memory, not GPU memory)".into(),
        },
        Kind::HostOomKilled => killed_headline(f),
        Kind::TfOom => {
            let place = if f.backend.as_deref() == Some("cpu") {
                " in host RAM".to_string()
            } else {
                on_device(f)
            };
            match (f.era.as_deref(), a, fact(f, "shape")) {
                (Some("bfc_allocator"), Some(a), _) => format!(
                    "TensorFlow's allocator {} ran out of memory allocating {a}{place}",
                    fact(f, "allocator").unwrap_or("(BFC)")
                ),
                (_, Some(a), Some(shape)) => format!(
                    "TensorFlow could not allocate {a} for a tensor of shape {shape}{place}"
                ),
                (_, None, Some(shape)) => {
                    format!(
                        "TensorFlow ran out of memory allocating a tensor of shape {shape}{place}"
                    )
                }
                _ => format!("TensorFlow ran out of memory{place}"),
            }
        }
        Kind::XlaOom => match (f.era.as_deref(), a) {
            (Some("host"), Some(a)) => format!("XLA could not allocate {a} of pinned host memory"),
            (_, Some(a)) => format!("XLA (JAX) could not allocate {a}{}", on_device(f)),
            _ => "XLA (JAX) ran out of memory".into(),
        },
        Kind::CupyOom => match a {
            Some(a) => format!("CuPy could not allocate {a} on the GPU"),
            None => "CuPy ran out of GPU memory".into(),
        },
        Kind::KvCacheOom => match f.era.as_deref() {
            Some("max_seq_len") => format!(
                "The inference engine's KV cache holds {} tokens, fewer than max_model_len {}",
                fact(f, "kv_cache_tokens").unwrap_or("?"),
                fact(f, "max_seq_len").unwrap_or("?")
            ),
            Some("kv_cache_memory") => format!(
                "The inference engine needs {} of KV cache for max_model_len {} but has {}",
                extra(f, "kv_cache_needed_bytes").map_or("?".into(), fmt),
                fact(f, "max_seq_len").unwrap_or("?"),
                extra(f, "kv_cache_available_bytes").map_or("?".into(), fmt)
            ),
            _ => "The inference engine has no GPU memory left for its KV cache".into(),
        },
        _ => String::new(),
    }
}

fn killed_headline(f: &Finding) -> String {
    let who = match (fact(f, "pid"), fact(f, "process")) {
        (Some(pid), Some(name)) => format!("process {pid} ({name})"),
        (Some(pid), None) => format!("process {pid}"),
        _ => "a process".into(),
    };
    match f.era.as_deref() {
        Some("kernel") => {
            format!("The Linux out-of-memory killer killed {who}: the machine ran out of RAM")
        }
        Some("cgroup") => format!("A memory cgroup limit (container or job) killed {who}"),
        Some("slurm") => {
            "Slurm's memory limit killed part of the job (cgroup out-of-memory)".into()
        }
        Some("kubernetes") => {
            "Kubernetes killed the container for exceeding its memory limit (OOMKilled)".into()
        }
        Some("torchelastic") => {
            let n: usize = fact(f, "killed_processes")
                .and_then(|n| n.parse().ok())
                .unwrap_or(1);
            format!(
                "{n} training process{} killed with SIGKILL — probably out of host RAM",
                if n == 1 { " was" } else { "es were" }
            )
        }
        Some("dataloader") => {
            "A DataLoader worker was killed with SIGKILL — probably out of host RAM".into()
        }
        _ => format!(
            "{} was killed with SIGKILL (exit status 137) — often the out-of-memory killer",
            capitalise_first(&who)
        ),
    }
}

fn capitalise_first(text: &str) -> String {
    super::capitalise(text)
}

// ---------------------------------------------------------------- verdicts

/// Conclusions for a finding of one of [`handles`]' kinds.
pub(super) fn verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    match f.kind {
        Kind::MpsOom => mps_verdicts(f, out),
        Kind::HostOom => host_verdicts(f, out),
        Kind::HostOomKilled => killed_verdicts(f, out),
        Kind::TfOom => tf_verdicts(f, out),
        Kind::XlaOom => xla_verdicts(f, out),
        Kind::CupyOom => cupy_verdicts(f, out),
        Kind::KvCacheOom => kv_verdicts(f, out),
        _ => {}
    }
}

fn mps_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let x = f.sizes.allocated_bytes;
    let o = extra(f, "other_allocations_bytes");
    let a = f.sizes.requested_bytes;
    let m = extra(f, "max_allowed_bytes");
    let figures = match (x, o, a) {
        (Some(x), Some(o), Some(a)) => Some((x, o, a, x.saturating_add(o).saturating_add(a))),
        _ => None,
    };
    let other_note = match (x, o) {
        (Some(x), Some(o)) if o > x && o >= GIB => format!(
            " Other allocations ({}) exceed PyTorch's own ({}): this is Metal memory of the process outside PyTorch's allocator — MPSGraph's cached graphs and intermediate buffers, or another framework in the same process.",
            fmt(o),
            fmt(x)
        ),
        _ => String::new(),
    };
    match (m, figures) {
        (Some(m), Some((x, o, a, sum))) => {
            let slack = tolerance(x) + tolerance(o) + tolerance(a) + tolerance(m);
            if sum.saturating_add(slack) >= m {
                let relation = if sum > m {
                    format!("{} over", fmt(sum - m))
                } else {
                    "within the rounding of the printed figures of".into()
                };
                out.push(verdict(
                    "mps_high_watermark",
                    "PyTorch's MPS memory limit refused it, not the machine",
                    format!(
                        "MPS allocated {} + other allocations {} + this request {} = {}, {relation} the max allowed {}. That limit is PyTorch's high watermark: PYTORCH_MPS_HIGH_WATERMARK_RATIO (1.7 by default) × Metal's recommended working set for this GPU ({} if the default ratio is in use). PyTorch checks it before asking macOS, so the machine may still have had memory; the limit exists to keep macOS from swapping itself into a freeze.{other_note}",
                        fmt(x),
                        fmt(o),
                        fmt(a),
                        fmt(sum),
                        fmt(m),
                        fmt(m * 10 / 17)
                    ),
                ));
            } else {
                out.push(verdict(
                    "unified_memory_exhausted",
                    "macOS could not provide the memory, below PyTorch's limit",
                    format!(
                        "MPS allocated {} + other allocations {} + this request {} = {}, less than the max allowed {}: the high-watermark limit did not refuse this. Metal itself could not provide {}: on Apple silicon the GPU shares unified memory with macOS and every running app, so what is free depends on everything else on the machine.{other_note}",
                        fmt(x),
                        fmt(o),
                        fmt(a),
                        fmt(sum),
                        fmt(m),
                        fmt(a)
                    ),
                ));
            }
        }
        (Some(m), None) => out.push(verdict(
            "mps_high_watermark",
            "PyTorch's MPS memory limit was on; the message is cut off before all figures",
            format!(
                "The message names a max allowed of {}, PyTorch's high-watermark limit, so the limit was on; the figures needed to tell whether it refused this allocation are missing.",
                fmt(m)
            ),
        )),
        (None, _) => {
            let numbers = figures
                .map(|(x, o, a, sum)| {
                    format!(
                        " PyTorch held {} and other Metal allocations {}; with this request {} that is {}.",
                        fmt(x),
                        fmt(o),
                        fmt(a),
                        fmt(sum)
                    )
                })
                .unwrap_or_default();
            out.push(verdict(
                "unified_memory_exhausted",
                "macOS ran out of memory for the GPU (the MPS limit was off)",
                format!(
                    "This form of the message has no max allowed: the high-watermark limit was turned off (PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0), so nothing in PyTorch refused the allocation — Metal could not get the memory from macOS. On Apple silicon the GPU shares unified memory with macOS and every running app.{numbers}{other_note}"
                ),
            ));
        }
    }
}

fn host_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let Some(n) = f.sizes.requested_bytes else {
        out.push(verdict(
            "host_ram_exhausted",
            "The machine's RAM ran out (host memory, not GPU memory)",
            "PyTorch's CPU allocator could not get memory from the operating system. This is host RAM, not GPU memory.".into(),
        ));
        return;
    };
    if n >= 4 * TIB {
        out.push(verdict(
            "request_exceeds_capacity",
            "One CPU tensor asked for more RAM than any machine has",
            format!(
                "PyTorch tried to create one tensor of {n} bytes ({}) in host RAM. No amount of memory tuning helps: a shape is wrong (an overflowed or uninitialised dimension, an outer product or distance matrix over a whole dataset, a dense matrix that should be sparse).",
                fmt(n)
            ),
        ));
        return;
    }
    let detail = match f.era.as_deref() {
        Some("posix") => format!(
            "The operating system refused PyTorch's CPU allocator {} ({n} bytes) for one tensor{}. This is host RAM, not GPU memory. On Linux with the default overcommit setting the kernel refuses an allocation up front only when it is larger than all RAM plus swap (or when a ulimit -v or vm.overcommit_memory=2 limit applies); smaller requests succeed and the out-of-memory killer ends the process later instead.",
            fmt(n),
            fact(f, "errno")
                .map(|e| format!(" (error {e}, {})", fact(f, "strerror").unwrap_or("ENOMEM")))
                .unwrap_or_default()
        ),
        _ => format!(
            "PyTorch's CPU allocator got no memory for one tensor of {} ({n} bytes). This is host RAM, not GPU memory. This form is printed by Windows builds: Windows refuses allocations beyond its commit limit — RAM plus the page file — so a small or fixed-size page file makes this error come early.",
            fmt(n)
        ),
    };
    out.push(verdict(
        "host_ram_exhausted",
        "The machine's RAM ran out (host memory, not GPU memory)",
        detail,
    ));
}

fn killed_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let who = match (fact(f, "pid"), fact(f, "process")) {
        (Some(pid), Some(name)) => format!("process {pid} ({name})"),
        (Some(pid), None) => format!("process {pid}"),
        _ => "a process".into(),
    };
    let rss = extra(f, "anon_rss_bytes")
        .map(|r| format!(", which held {} of RAM in its own pages (anon-rss)", fmt(r)))
        .unwrap_or_default();
    match f.era.as_deref() {
        Some("kernel") => out.push(verdict(
            "host_ram_exhausted",
            "The machine's RAM ran out (host memory, not GPU memory)",
            format!(
                "The Linux kernel ran out of RAM and swap for the whole machine and its out-of-memory killer ended {who}{rss}. This is host memory, not GPU memory: a GPU out-of-memory error is reported by the framework, not by the kernel. The killer picks the process using the most memory, which is usually — but not always — the training process."
            ),
        )),
        Some("cgroup") => out.push(verdict(
            "host_memory_limit",
            "A memory limit on the container or job killed it, not the machine",
            format!(
                "The kernel killed {who}{rss} because its memory cgroup reached its limit: a container's or job's memory limit, not the machine's RAM. Host memory, not GPU memory."
            ),
        )),
        Some("slurm") => {
            let events = fact(f, "oom_kill_events")
                .map(|n| format!(" counted {n} out-of-memory kill event{} in", if n == "1" { "" } else { "s" }))
                .unwrap_or_else(|| " reports an out-of-memory kill in".into());
            let step = fact(f, "step").map(|s| format!(" step {s}")).unwrap_or_else(|| " this job".into());
            let usage = match (fact(f, "usage"), fact(f, "limit")) {
                (Some(u), Some(l)) => format!(" It measured {u} against a limit of {l} (Slurm's units, usually KiB or bytes depending on version)."),
                _ => String::new(),
            };
            out.push(verdict(
                "host_memory_limit",
                "The job exceeded the memory it requested from Slurm",
                format!(
                    "Slurm{events}{step}: processes in the job's memory cgroup used more host RAM than the job requested (--mem, --mem-per-cpu or --mem-per-gpu, or the partition's default), and the kernel killed them.{usage} This is host RAM, not GPU memory."
                ),
            ));
        }
        Some("kubernetes") => out.push(verdict(
            "host_memory_limit",
            "The container exceeded its Kubernetes memory limit",
            "Kubernetes reports OOMKilled: the container used more host RAM than its resources.limits.memory, and the kernel killed it (exit code 137). This is host RAM, not GPU memory.".into(),
        )),
        era => {
            let what = match era {
                Some("torchelastic") => format!(
                    "torchelastic reports {} worker process{} ended by signal 9 (SIGKILL, exit code -9){}.",
                    fact(f, "killed_processes").unwrap_or("1"),
                    if fact(f, "killed_processes").unwrap_or("1") == "1" { "" } else { "es" },
                    fact(f, "pids").map(|p| format!(", PID {p}")).unwrap_or_default()
                ),
                Some("dataloader") => "A DataLoader worker process was ended by signal 9 (SIGKILL). Each worker is a separate process with its own copy of whatever the Dataset holds, so workers are often what the OOM killer picks.".into(),
                Some("exit_137") => "A process exited with status 137 = 128 + 9: it was ended by signal 9 (SIGKILL).".into(),
                _ => "A process was ended by signal 9 (SIGKILL).".into(),
            };
            out.push(verdict(
                "killed_by_sigkill",
                "Killed by SIGKILL: probably out of host memory, but the log does not prove it",
                format!(
                    "{what} SIGKILL cannot be caught, so Python prints no error of its own. The usual sender is the kernel's out-of-memory killer (host RAM, not GPU memory), but a scheduler enforcing a time or memory limit, a watchdog, or someone running kill -9 sends the same signal: this evidence is circumstantial. `dmesg -T | grep -i -E 'killed process|oom'` (or journalctl -k) on the node shows whether the OOM killer acted; on Slurm, sacct -j JOBID -o JobID,State,MaxRSS,ReqMem; on Kubernetes, kubectl describe pod (Reason: OOMKilled)."
                ),
            ));
        }
    }
}

fn tf_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let a = f.sizes.requested_bytes;
    let what = match (fact(f, "shape"), fact(f, "dtype"), a) {
        (Some(shape), Some(dtype), Some(a)) => {
            format!("{} for a {dtype} tensor of shape {shape}", fmt(a))
        }
        (Some(shape), _, _) => format!("a tensor of shape {shape}"),
        (_, _, Some(a)) => fmt(a),
        _ => "memory".into(),
    };
    if f.backend.as_deref() == Some("cpu") {
        out.push(verdict(
            "host_ram_exhausted",
            "The machine's RAM ran out (host memory, not GPU memory)",
            format!("TensorFlow could not allocate {what} in host RAM (allocator {}). This is CPU memory, not GPU memory.", fact(f, "allocator").unwrap_or("cpu")),
        ));
        return;
    }
    if let Some(a) = a.filter(|&a| a >= TIB) {
        out.push(verdict(
            "request_exceeds_capacity",
            "One tensor is larger than any GPU",
            format!("TensorFlow tried to allocate {} ({what}) in one piece: more than any single GPU has. A dimension is far larger than intended (an unbatched dataset, a wrong reshape, an attention matrix over a very long sequence).", fmt(a)),
        ));
        return;
    }
    let allocator = fact(f, "allocator").unwrap_or("its GPU allocator");
    let detail = if f.era.as_deref() == Some("bfc_allocator") {
        format!(
            "TensorFlow's BFC allocator {allocator} found no free block for {what}{}{}. By default TensorFlow reserves nearly all of the GPU's free memory for this allocator when it starts, so the pool is effectively the card: the tensors TensorFlow keeps alive filled it (or left it too fragmented). The allocation summary TensorFlow prints next lists the chunks in use; the `OOM when allocating tensor` error that usually follows is reported as its own finding.",
            fact(f, "op").map(|op| format!(", requested by op {op}")).unwrap_or_default(),
            on_device(f)
        )
    } else {
        format!(
            "TensorFlow needed {what}{} and its allocator {allocator} had no free block that large. By default TensorFlow reserves nearly all of the GPU's free memory for this allocator when it starts, so the limit is the card itself (less what other processes held at start-up): the tensors TensorFlow keeps alive — weights, optimizer slots, activations saved for the backward pass — fill it.{}",
            on_device(f),
            fact(f, "node").map(|n| format!(" The failing op is node {n}.")).unwrap_or_default()
        )
    };
    out.push(verdict(
        "capacity_exhausted",
        "The workload does not fit in GPU memory",
        detail,
    ));
}

fn xla_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let a = f.sizes.requested_bytes;
    let program = match (extra(f, "program_total_bytes"), extra(f, "program_temp_bytes")) {
        (Some(total), Some(temp)) => format!(
            " The compiled program's buffers total {} ({} of them temporaries), per XLA's BufferAssignment stats.",
            fmt(total),
            fmt(temp)
        ),
        (Some(total), None) => format!(" The compiled program's buffers total {}.", fmt(total)),
        _ => String::new(),
    };
    if f.era.as_deref() == Some("host") {
        out.push(verdict(
            "xla_host_memory_limit",
            "XLA's pinned host-memory limit is reached (64 GB by default)",
            format!(
                "XLA needed {} of pinned (page-locked) host memory — used for host offloading and transfers — and its limit for such memory, 64 GB unless XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB says otherwise, was reached. This is host RAM reserved for the GPU, not GPU memory.{program}",
                a.map_or("more".into(), fmt)
            ),
        ));
        return;
    }
    if let Some(a) = a.filter(|&a| a >= TIB) {
        out.push(verdict(
            "request_exceeds_capacity",
            "One buffer is larger than any GPU",
            format!("XLA needed one buffer of {} ({a} bytes): more than any single GPU has. An array is far larger than intended (a shape bug, a whole dataset put on the device, an attention matrix over a very long sequence).{program}", fmt(a)),
        ));
        return;
    }
    let size = a.map_or("a buffer".into(), |a| format!("{} ({a} bytes)", fmt(a)));
    if f.era.as_deref() == Some("device_allocator") {
        out.push(verdict(
            "capacity_exhausted",
            "The GPU itself had no room for the buffer",
            format!(
                "XLA asked the device driver directly for {size}{} and was refused. This allocator is used when preallocation is off or XLA_PYTHON_CLIENT_ALLOCATOR=platform is set, so no JAX pool stood in the way: the GPU was full — with this program's arrays, or with another process's memory.{program}",
                on_device(f)
            ),
        ));
        return;
    }
    out.push(verdict(
        "xla_preallocation",
        "XLA's preallocated GPU pool had no room for the buffer",
        format!(
            "XLA could not get {size} in one piece. On GPUs JAX serves every buffer from a pool it reserves when the first JAX operation runs — 75% of the GPU's memory by default (older releases: 90% of the memory free at that moment) — so the limit hit is that pool, not necessarily the card: up to a quarter of the GPU can lie outside it, and a second JAX or TensorFlow process on the same GPU preallocates too and fails at once.{program}"
        ),
    ));
}

fn cupy_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let n = f.sizes.requested_bytes;
    let m = f.sizes.allocated_bytes;
    let l = extra(f, "pool_limit_bytes");
    if let (Some(n), Some(m), Some(l)) = (n, m, l) {
        if m.saturating_add(n) > l {
            out.push(verdict(
                "memory_limit",
                "CuPy's memory-pool limit refused it, not the GPU",
                format!(
                    "CuPy's memory pool is capped at {} (MemoryPool.set_limit or CUPY_GPU_MEMORY_LIMIT). It held {} and needed {} more, {} in all, over the cap; CuPy checks the cap before asking the GPU, and what it holds includes freed blocks it keeps cached for reuse.",
                    fmt(l),
                    fmt(m),
                    fmt(n),
                    fmt(m.saturating_add(n))
                ),
            ));
            return;
        }
    }
    if let Some(n) = n.filter(|&n| n >= TIB) {
        out.push(verdict(
            "request_exceeds_capacity",
            "One array is larger than any GPU",
            format!("CuPy tried to allocate one array buffer of {} ({n} bytes): more than any single GPU has. A shape is far larger than intended.", fmt(n)),
        ));
        return;
    }
    let detail = match (n, m) {
        (Some(n), Some(m)) => format!(
            "CuPy's pool held {} when it needed {} more. Before raising, CuPy released the pool's cached free blocks, ran Python's garbage collector and retried twice, so the GPU could not provide {} even then. Memory held outside CuPy's pool — PyTorch's or TensorFlow's cache in the same process, the CUDA context, other processes — is not counted in the {}.",
            fmt(m),
            fmt(n),
            fmt(n),
            fmt(m)
        ),
        (Some(n), None) => format!(
            "The GPU could not provide {} for CuPy. This form of the message comes from CuPy's MemoryAsyncPool (CUDA's stream-ordered allocator), which does not track how much it holds.",
            fmt(n)
        ),
        _ => "CuPy could not get memory from the GPU.".into(),
    };
    out.push(verdict(
        "capacity_exhausted",
        "The workload does not fit in GPU memory",
        detail,
    ));
}

fn kv_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let detail = match f.era.as_deref() {
        Some("max_seq_len") => {
            let n: Option<u64> = fact(f, "max_seq_len").and_then(|v| v.parse().ok());
            let m: Option<u64> = fact(f, "kv_cache_tokens").and_then(|v| v.parse().ok());
            match (n, m) {
                (Some(n), Some(m)) => format!(
                    "The engine reserves its KV cache at start-up from what is left of gpu_memory_utilization × GPU memory after the weights and a profiling forward pass. That cache holds {m} tokens, but max_model_len is {n}: a single request of full length would need {}% of it more than exists, so the engine refuses to start. Lower max_model_len to at most {m}, or give the cache more memory.",
                    (n - m) * 100 / m.max(1)
                ),
                _ => "The KV cache the engine could reserve holds fewer tokens than max_model_len, so one full-length request would not fit.".into(),
            }
        }
        Some("kv_cache_memory") => {
            let needed = extra(f, "kv_cache_needed_bytes");
            let available = extra(f, "kv_cache_available_bytes");
            let len = fact(f, "max_seq_len").unwrap_or("?");
            let estimate = fact(f, "estimated_max_model_len")
                .map(|e| format!(" The engine estimates the longest context that fits is {e} tokens."))
                .unwrap_or_default();
            match (needed, available) {
                (Some(x), Some(y)) => format!(
                    "One request of max_model_len {len} tokens needs {} of KV cache; after the weights, activations and CUDA graphs, only {} of the memory the engine may use (gpu_memory_utilization × GPU memory) is left for it — {} short.{estimate}",
                    fmt(x),
                    fmt(y),
                    format_signed(i128::from(x) - i128::from(y))
                ),
                _ => format!("One request of max_model_len {len} tokens needs more KV cache than is left after the weights and activations.{estimate}"),
            }
        }
        _ => "After loading the weights and profiling a forward pass, nothing was left of the memory the engine may use (gpu_memory_utilization × GPU memory, 0.9 by default in vLLM) for the KV cache: weights, activations and CUDA graphs already take the whole budget. Typical causes: the model barely fits this GPU, another process holds GPU memory, or gpu_memory_utilization is set low.".into(),
    };
    out.push(verdict(
        "kv_cache_too_small",
        "The KV cache is too small for the configured context length",
        detail,
    ));
}

// ---------------------------------------------------------------- fixes

/// Fixes for a finding of one of [`handles`]' kinds; `d.verdicts` is filled.
pub(super) fn fixes(f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
    let has = |code: &str| d.verdicts.iter().any(|v| v.code == code);
    if has("request_exceeds_capacity") {
        out.push(fix(
            "Find the tensor that is far too large",
            "Print the shapes at the failing line (the last frame of your own code in the traceback). Look for an overflowed or wrong dimension, a whole dataset materialised at once, or a pairwise/attention matrix over very long inputs. Memory settings cannot help here.",
        ));
        return;
    }
    match f.kind {
        Kind::MpsOom => mps_fixes(f, &has, out),
        Kind::HostOom | Kind::HostOomKilled => host_fixes(f, &has, out),
        Kind::TfOom => tf_fixes(f, out),
        Kind::XlaOom => xla_fixes(f, out),
        Kind::CupyOom => cupy_fixes(&has, out),
        Kind::KvCacheOom => kv_fixes(f, out),
        _ => {}
    }
    if has("memory_growth") || has("late_failure") {
        out.push(fix(
            "Look for memory kept across steps",
            "If it ran for a while first, something accumulates: losses summed as tensors instead of floats, outputs appended to a list, caches that grow, or sequences that get longer over the run.",
        ));
    }
}

fn mps_fixes(f: &Finding, has: &dyn Fn(&str) -> bool, out: &mut Vec<Fix>) {
    out.push(fix(
        "Make the workload smaller",
        "Reduce the batch size (keep the effective batch with gradient accumulation), the resolution or the sequence length; run in half precision (model.to(torch.float16) or torch.autocast(device_type=\"mps\", dtype=torch.float16)); for diffusers pipelines call pipe.enable_attention_slicing().",
    ));
    if has("mps_high_watermark") {
        out.push(fix(
            "Raise PyTorch's MPS limit — knowing the risk",
            "export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 (before Python starts) removes the limit, as the message suggests: PyTorch may then take more unified memory than macOS recommends for the GPU, the system swaps heavily and can freeze or crash (\"may cause system failure\"). A value between the default 1.7 and 2.0 (the most it accepts on unified memory) raises the limit less riskily. Lower values such as 0.7 do the opposite — PyTorch fails sooner and macOS stays responsive; set PYTORCH_MPS_LOW_WATERMARK_RATIO no higher than it (e.g. 0.5), or PyTorch rejects the setting.",
        ));
    }
    let other = extra(f, "other_allocations_bytes").unwrap_or(0);
    if other >= GIB {
        out.push(fix(
            "Release memory Metal holds outside PyTorch's tensors",
            format!(
                "Other allocations are {}: call torch.mps.empty_cache() between phases (e.g. after loading or evaluation), delete models and outputs you no longer need, and avoid running a second framework on the GPU in the same process.",
                fmt(other)
            ),
        ));
    }
    out.push(fix(
        "Leave unified memory to PyTorch",
        "The GPU shares RAM with macOS: quit memory-heavy apps (browsers, IDEs, other Python processes) and check Activity Monitor's Memory Pressure; load models in float16 to halve their footprint.",
    ));
    if f.sizes.requested_bytes.is_some_and(|a| a >= 4 * GIB) {
        out.push(fix(
            "Split the large operation",
            "A single request of several GiB usually comes from attention or a large matmul over the whole input: process it in chunks (smaller tiles, sliced attention).",
        ));
    }
}

fn host_fixes(f: &Finding, has: &dyn Fn(&str) -> bool, out: &mut Vec<Fix>) {
    if has("host_memory_limit") {
        let how = match f.era.as_deref() {
            Some("slurm") => "Request more memory for the job (#SBATCH --mem=128G, or --mem-per-cpu / --mem-per-gpu); `sacct -j JOBID -o JobID,MaxRSS,ReqMem,State` shows what it used against what it asked for.",
            Some("kubernetes") => "Raise the container's resources.limits.memory (and requests.memory) in the pod spec, or lower what the process holds (below).",
            _ => "Raise the container's or job's memory limit (docker run --memory, the cgroup's memory.max, your scheduler's memory request), or lower what the process holds (below).",
        };
        out.push(fix("Ask for more memory", how));
    }
    if has("killed_by_sigkill") {
        out.push(fix(
            "Confirm it was the out-of-memory killer",
            "On the node: dmesg -T | grep -i -E 'killed process|out of memory' (or journalctl -k). On Slurm: sacct -j JOBID -o JobID,State,MaxRSS,ReqMem. On Kubernetes: kubectl describe pod (Last State: Reason: OOMKilled). If none shows an OOM kill, look for a time limit or a watchdog instead.",
        ));
    }
    let dataloader = fix(
        "Use fewer or lighter DataLoader workers",
        "Each DataLoader worker is a separate process; a Dataset that holds Python lists or dicts of samples gets copied into every worker as reference counts touch its pages. Lower num_workers (and prefetch_factor), keep samples in NumPy arrays or memory-mapped files instead of Python objects, and read them lazily in __getitem__.",
    );
    let checkpoint = fix(
        "Load checkpoints without a full copy in RAM",
        "torch.load(path, map_location=\"cpu\", mmap=True, weights_only=True) (PyTorch ≥ 2.1) maps the file instead of reading it; model.load_state_dict(state, assign=True) avoids a second copy; Hugging Face: from_pretrained(..., low_cpu_mem_usage=True, torch_dtype=torch.bfloat16) or device_map=\"auto\". With several ranks per node, every rank loads its own copy: load on one rank, or shard.",
    );
    let pinned = fix(
        "Turn off pinned memory if RAM is tight",
        "DataLoader(pin_memory=True) and pinned buffers are page-locked RAM the system cannot swap out; set pin_memory=False or reduce prefetching.",
    );
    if f.kind == Kind::HostOom {
        out.push(fix(
            "Allocate less at once",
            "Build large arrays in chunks, or keep them on disk and map them (numpy.memmap, torch.from_file, safetensors) instead of creating them whole in RAM.",
        ));
    }
    let loading = matches!(f.phase.name.as_str(), "model_load" | "checkpoint");
    let data = f.era.as_deref() == Some("dataloader") || f.phase.name == "data_loading";
    if loading {
        out.extend([checkpoint, dataloader, pinned]);
    } else if data {
        out.extend([dataloader, pinned]);
    } else {
        out.extend([dataloader, checkpoint, pinned]);
    }
    if f.kind == Kind::HostOom && f.era.as_deref() != Some("posix") {
        out.push(fix(
            "Enlarge the Windows page file",
            "Windows fails allocations at its commit limit (RAM + page file): set the page file to system-managed or larger (System Properties → Advanced → Performance → Virtual memory).",
        ));
    }
}

fn tf_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if f.backend.as_deref() == Some("cpu") {
        out.push(fix(
            "Reduce what is held in host RAM",
            "Feed data with tf.data pipelines that stream from disk instead of whole NumPy arrays, reduce the batch size and the shuffle buffer, and avoid .cache() on large datasets without a file argument.",
        ));
        return;
    }
    out.push(fix(
        "Reduce the batch size",
        "Halve the batch size (in model.fit(batch_size=...), or the tf.data .batch(...)); activation memory shrinks in proportion. Use a smaller batch for predict()/evaluate() too.",
    ));
    out.push(fix(
        "Use mixed precision",
        "tf.keras.mixed_precision.set_global_policy('mixed_float16') (or 'mixed_bfloat16' on TPUs/Ampere+) at the start: activations take half the memory; keep the final layer's output in float32.",
    ));
    if f.facts.contains_key("hint") || f.era.as_deref() == Some("bfc_allocator") {
        out.push(fix(
            "Try CUDA's asynchronous allocator if memory is fragmented",
            "export TF_GPU_ALLOCATOR=cuda_malloc_async (the BFC allocator's own suggestion): it can reuse freed memory that BFC cannot join into one block.",
        ));
    }
    out.push(fix(
        "Stop TensorFlow from taking the whole GPU when it shares the card",
        "By default TensorFlow reserves nearly all GPU memory at start. If another process or library (PyTorch, JAX, a second TensorFlow process) uses the same GPU, set TF_FORCE_GPU_ALLOW_GROWTH=true or call tf.config.experimental.set_memory_growth(gpu, True) for each GPU before any op runs. This does not give TensorFlow more memory; it leaves room for the others.",
    ));
    out.push(fix(
        "See which tensors hold the memory",
        "Graph mode: pass tf.compat.v1.RunOptions(report_tensor_allocations_upon_oom=True) to see the allocated tensors at the OOM; the BFC allocator's dump after its warning lists chunk sizes in use.",
    ));
}

fn xla_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if f.era.as_deref() == Some("host") {
        out.push(fix(
            "Raise XLA's pinned host-memory limit",
            "export XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB=128 (or what the machine can spare) before starting, as the message says; the default is 64 GB.",
        ));
        out.push(fix(
            "Offload less to the host",
            "Reduce what is offloaded to host memory (host-offloaded activations or optimizer state, large device-to-host transfers held at once).",
        ));
        return;
    }
    if f.era.as_deref() != Some("device_allocator") {
        out.push(fix(
            "Give XLA's pool more of the GPU",
            "export XLA_PYTHON_CLIENT_MEM_FRACTION=.90 (before JAX starts) makes the preallocated pool 90% of the GPU instead of 75%; leave some room for the CUDA context and libraries.",
        ));
        out.push(fix(
            "Allocate on demand when processes share the GPU",
            "export XLA_PYTHON_CLIENT_PREALLOCATE=false: JAX then allocates as needed instead of reserving a pool at start, so several processes (or JAX beside PyTorch/TensorFlow) can share a GPU; it is more prone to fragmentation. XLA_PYTHON_CLIENT_ALLOCATOR=platform allocates and frees exactly — very slow, for debugging OOMs only.",
        ));
    }
    out.push(fix(
        "Make the computation need less memory",
        "Reduce the batch size; rematerialise activations with jax.checkpoint (jax.remat) around blocks; donate input buffers with jax.jit(..., donate_argnums=...) so outputs reuse them; keep parameters and activations in bfloat16.",
    ));
    if f.era.as_deref() == Some("device_allocator") {
        out.push(fix(
            "Check what else holds the GPU",
            "Run nvidia-smi: another process, or another framework in this process (PyTorch's or TensorFlow's cache), may hold the memory XLA asked for.",
        ));
    }
    if f.text.contains("BufferAssignment") {
        out.push(fix(
            "Read XLA's buffer report",
            "The lines after `BufferAssignment OOM Debugging.` list the program's largest buffers (Peak buffers) with shapes and the operations that create them: that is where the memory goes.",
        ));
    }
}

fn cupy_fixes(has: &dyn Fn(&str) -> bool, out: &mut Vec<Fix>) {
    if has("memory_limit") {
        out.push(fix(
            "Raise or remove the pool limit, or release cached blocks",
            "cupy.get_default_memory_pool().set_limit(size=...) (or CUPY_GPU_MEMORY_LIMIT) sets the cap; raise it, or call cupy.get_default_memory_pool().free_all_blocks() first — the cap counts freed blocks the pool still caches.",
        ));
    }
    out.push(fix(
        "Release CuPy's cached memory when sharing the GPU",
        "CuPy's pool keeps freed blocks for reuse. Call cupy.get_default_memory_pool().free_all_blocks() (and cupy.get_default_pinned_memory_pool().free_all_blocks()) after large steps or before handing the GPU to PyTorch/TensorFlow in the same process; cap CuPy with set_limit(fraction=0.5) when both run together.",
    ));
    out.push(fix(
        "Process in smaller pieces",
        "Work on the data in chunks (a few rows or tiles at a time), delete intermediate arrays (del x) as soon as they are done, and prefer in-place operations (out= arguments) for large arrays.",
    ));
}

fn kv_fixes(f: &Finding, out: &mut Vec<Fix>) {
    let cap = fact(f, "estimated_max_model_len")
        .or_else(|| fact(f, "kv_cache_tokens"))
        .map(|n| format!(" to at most {n}"))
        .unwrap_or_default();
    if f.era.as_deref() != Some("no_cache_blocks") {
        out.push(fix(
            "Lower max_model_len",
            format!("Serve a shorter context: --max-model-len (LLM(max_model_len=...)){cap}. Most requests rarely need the model's full context."),
        ));
    }
    out.push(fix(
        "Give the engine more of the GPU",
        "Raise gpu_memory_utilization (--gpu-memory-utilization 0.95) if nothing else runs on the GPU; vLLM refuses to start if the GPU has less free memory than that fraction, so stop other processes first (nvidia-smi).",
    ));
    out.push(fix(
        "Store the KV cache in 8 bits",
        "--kv-cache-dtype fp8 halves the memory per cached token (check the model's accuracy with it).",
    ));
    out.push(fix(
        "Shrink the weights or spread them",
        "A quantised checkpoint (AWQ, GPTQ, or --quantization fp8) frees memory for the cache; --tensor-parallel-size N splits weights and cache over N GPUs.",
    ));
    out.push(fix(
        "Free the memory CUDA graphs and profiling take",
        "--enforce-eager skips CUDA-graph capture (slower decoding, more room); lowering --max-num-seqs and --max-num-batched-tokens shrinks the activation peak measured at start-up.",
    ));
}

/// Fixes for PyTorch allocator messages from Intel GPUs: the CUDA options
/// (`PYTORCH_CUDA_ALLOC_CONF`, `expandable_segments`, `nvidia-smi`) do not apply.
pub(super) fn xpu_fixes(f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
    let has = |code: &str| d.verdicts.iter().any(|v| v.code == code);
    if has("request_exceeds_capacity") {
        out.push(fix(
            "Find the tensor that is far too large",
            "Print the shapes at the failing line (the last frame of your own code in the traceback): a wrong reshape or broadcast, an attention matrix over a very long sequence, or a whole dataset moved to the GPU. Allocator settings cannot help here.",
        ));
        return;
    }
    if has("memory_limit") {
        out.push(fix(
            "Raise or remove the per-process memory limit",
            "Look for torch.xpu.set_per_process_memory_fraction(...) in your code or framework config and raise the fraction.",
        ));
    }
    if has("fragmentation") {
        out.push(fix(
            "Release cached blocks between phases",
            "torch.xpu.empty_cache() — the message's own hint — hands back memory PyTorch caches but no tensor uses, e.g. between training and evaluation. PyTorch already released what it could before raising, and PYTORCH_CUDA_ALLOC_CONF options such as expandable_segments do not apply to Intel GPUs; allocating large, long-lived tensors first reduces fragmentation.",
        ));
    }
    out.push(fix(
        "Reduce the batch size",
        "Halve the batch size; keep the effective batch with gradient accumulation (accumulate N micro-batches, then optimizer.step()).",
    ));
    out.push(fix(
        "Use mixed precision",
        "Run the forward pass under torch.autocast(device_type=\"xpu\", dtype=torch.bfloat16): activations take half the memory.",
    ));
    out.push(fix(
        "Trade compute for memory with gradient checkpointing",
        "model.gradient_checkpointing_enable() (Hugging Face) or torch.utils.checkpoint.checkpoint around blocks; use torch.no_grad() for evaluation.",
    ));
    out.push(fix(
        "Check what else uses the GPU",
        format!(
            "Intel's xpu-smi (e.g. `xpu-smi stats -d {}`) shows device memory in use; stop other processes on the same GPU or select another with ZE_AFFINITY_MASK.",
            f.device.unwrap_or(0)
        ),
    ));
}

// ---------------------------------------------------------------- field rows

/// The stated and derived numbers, each with its meaning in this family.
pub(super) fn field_rows(f: &Finding) -> Vec<FieldRow> {
    let mut rows = Vec::new();
    let s = &f.sizes;
    match f.kind {
        Kind::MpsOom => {
            let pool = match fact(f, "pool") {
                Some("shared") => " on the shared pool (memory the CPU can also read)",
                Some("private") => " on the private pool (GPU-only memory)",
                _ => "",
            };
            if let Some(a) = s.requested_bytes {
                rows.push(row("Tried to allocate", fmt(a), format!("the buffer the MPS allocator needed{pool}, the tensor rounded up to its allocation size"), false));
            }
            if let Some(x) = s.allocated_bytes {
                rows.push(row(
                    "MPS allocated",
                    fmt(x),
                    "memory in buffers PyTorch's MPS allocator holds",
                    false,
                ));
            }
            let o = extra(f, "other_allocations_bytes");
            if let Some(o) = o {
                rows.push(row("Other allocations", fmt(o), "other Metal memory of this process, outside PyTorch's allocator (MPSGraph caches, intermediate buffers, other frameworks)", false));
            }
            let m = extra(f, "max_allowed_bytes");
            if let Some(m) = m {
                rows.push(row("Max allowed", fmt(m), "the high-watermark limit: PYTORCH_MPS_HIGH_WATERMARK_RATIO (1.7 by default) × Metal's recommended working set", false));
            }
            if let (Some(x), Some(o), Some(a)) = (s.allocated_bytes, o, s.requested_bytes) {
                let sum = x.saturating_add(o).saturating_add(a);
                rows.push(row("Total with request (derived)", fmt(sum), "allocated + other + request: what the allocation would have brought the process to", true));
                if let Some(m) = m {
                    rows.push(row(
                        "Room under the limit (derived)",
                        format_signed(i128::from(m) - i128::from(x) - i128::from(o)),
                        "max allowed − allocated − other: what was left for this request",
                        true,
                    ));
                }
            }
        }
        Kind::HostOom => {
            if let Some(n) = s.requested_bytes {
                rows.push(row(
                    "You tried to allocate",
                    format!("{} ({n} bytes)", fmt(n)),
                    "one tensor PyTorch tried to create in host RAM (exact size)",
                    false,
                ));
            }
        }
        Kind::HostOomKilled => {
            if let (Some(pid), Some(name)) = (fact(f, "pid"), fact(f, "process")) {
                rows.push(row(
                    "Killed process",
                    format!("{pid} ({name})"),
                    "the process the kernel chose to kill",
                    false,
                ));
            }
            for (key, label, meaning) in [
                ("anon_rss_bytes", "anon-rss", "RAM the process held in its own pages when killed: the best measure of its memory use"),
                ("file_rss_bytes", "file-rss", "file-backed pages in RAM (mapped files, libraries); reclaimable"),
                ("shmem_rss_bytes", "shmem-rss", "shared-memory pages (e.g. /dev/shm, used by DataLoader workers)"),
                ("total_vm_bytes", "total-vm", "virtual address space reserved, not RAM used (CUDA reserves a lot of it)"),
            ] {
                if let Some(v) = extra(f, key) {
                    rows.push(row(label, fmt(v), meaning, false));
                }
            }
        }
        Kind::TfOom => {
            if f.era.as_deref() == Some("bfc_allocator") {
                if let Some(a) = s.requested_bytes {
                    let meaning = if f.notes.iter().any(|n| n.contains("approximate")) {
                        "the request as printed (rounded to 2 decimals; the exact byte count is not in this form)"
                    } else {
                        "the block the BFC allocator needed: the request rounded up to a multiple of 256 bytes (exact)"
                    };
                    rows.push(row("Trying to allocate", fmt(a), meaning, false));
                }
            } else {
                if let Some(shape) = fact(f, "shape") {
                    rows.push(row(
                        "Shape",
                        shape.to_string(),
                        "dimensions of the tensor TensorFlow tried to create",
                        false,
                    ));
                }
                if let Some(dtype) = fact(f, "dtype") {
                    rows.push(row(
                        "Type",
                        dtype.to_string(),
                        "element type as TensorFlow names it (float = float32, half = float16)",
                        false,
                    ));
                }
                if let Some(a) = s.requested_bytes {
                    rows.push(row(
                        "Tensor size (derived)",
                        fmt(a),
                        format!("product of the shape × bytes per element = {a} bytes"),
                        true,
                    ));
                }
            }
            if let Some(device) = fact(f, "device_name") {
                rows.push(row(
                    "Device",
                    device.to_string(),
                    "where the tensor was to live",
                    false,
                ));
            }
            if let Some(allocator) = fact(f, "allocator") {
                rows.push(row("Allocator", allocator.to_string(), "TensorFlow's allocator for that device (GPU_N_bfc: the pool it reserved on GPU N)", false));
            }
        }
        Kind::XlaOom => {
            if let Some(a) = s.requested_bytes {
                let meaning = if f.era.as_deref() == Some("host") {
                    "pinned host memory XLA needed in one piece (exact)"
                } else if f.era.as_deref() == Some("human_readable") {
                    "one buffer XLA needed, as printed (rounded; approximate)"
                } else {
                    "one buffer XLA needed in one piece (exact)"
                };
                rows.push(row(
                    "Trying to allocate",
                    format!("{} ({a} bytes)", fmt(a)),
                    meaning,
                    false,
                ));
            }
            for (key, label, meaning) in [
                (
                    "program_parameter_bytes",
                    "Parameters",
                    "the compiled program's input buffers",
                ),
                (
                    "program_output_bytes",
                    "Outputs",
                    "buffers that may live on after the program (maybe_live_out)",
                ),
                (
                    "program_temp_bytes",
                    "Temporaries",
                    "scratch buffers the program needs while it runs",
                ),
                (
                    "program_total_bytes",
                    "Program total",
                    "all of the program's buffers, per XLA's BufferAssignment stats",
                ),
            ] {
                if let Some(v) = extra(f, key) {
                    rows.push(row(label, fmt(v), meaning, false));
                }
            }
        }
        Kind::CupyOom => {
            if let Some(n) = s.requested_bytes {
                rows.push(row(
                    "Allocating",
                    fmt(n),
                    "the array buffer CuPy tried to allocate (exact)",
                    false,
                ));
            }
            if let Some(m) = s.allocated_bytes {
                rows.push(row("Allocated so far", fmt(m), "everything CuPy's memory pool held when the request came in, including freed blocks it caches for reuse", false));
            }
            if let Some(l) = extra(f, "pool_limit_bytes") {
                rows.push(row(
                    "Limit set to",
                    fmt(l),
                    "the pool's cap (MemoryPool.set_limit or CUPY_GPU_MEMORY_LIMIT)",
                    false,
                ));
                if let Some(m) = s.allocated_bytes {
                    rows.push(row(
                        "Room under the limit (derived)",
                        format_signed(i128::from(l) - i128::from(m)),
                        "limit − allocated so far: what was left for this request",
                        true,
                    ));
                }
            }
        }
        Kind::KvCacheOom => {
            if let Some(n) = fact(f, "max_seq_len") {
                rows.push(row(
                    "max_model_len",
                    format!("{n} tokens"),
                    "the longest request the engine is configured to serve",
                    false,
                ));
            }
            if let Some(m) = fact(f, "kv_cache_tokens") {
                rows.push(row(
                    "KV cache",
                    format!("{m} tokens"),
                    "how many tokens the reserved KV cache can hold",
                    false,
                ));
            }
            let needed = extra(f, "kv_cache_needed_bytes");
            let available = extra(f, "kv_cache_available_bytes");
            if let Some(x) = needed {
                rows.push(row(
                    "KV cache needed",
                    fmt(x),
                    "KV cache one request of max_model_len tokens needs",
                    false,
                ));
            }
            if let Some(y) = available {
                rows.push(row("KV cache available", fmt(y), "memory left for the KV cache after weights, activations and CUDA graphs within gpu_memory_utilization", false));
            }
            if let (Some(x), Some(y)) = (needed, available) {
                rows.push(row(
                    "Shortfall (derived)",
                    format_signed(i128::from(x) - i128::from(y)),
                    "needed − available",
                    true,
                ));
            }
            if let Some(e) = fact(f, "estimated_max_model_len") {
                rows.push(row(
                    "Longest that fits",
                    format!("{e} tokens"),
                    "the engine's own estimate of the max_model_len the available memory allows",
                    false,
                ));
            }
        }
        _ => {}
    }
    rows
}

#[cfg(test)]
mod tests {
    use crate::decode_str;

    fn codes(text: &str) -> Vec<String> {
        let findings = decode_str(text);
        assert_eq!(findings.len(), 1, "{text}");
        findings[0]
            .diagnosis
            .verdicts
            .iter()
            .map(|v| v.code.clone())
            .collect()
    }

    #[test]
    fn mps_limit_vs_machine() {
        // 9.57 + 17.35 GiB + 292.50 MiB = 27.206 GiB > 27.20 GiB max allowed.
        let c = codes("RuntimeError: MPS backend out of memory (MPS allocated: 9.57 GiB, other allocations: 17.35 GiB, max allowed: 27.20 GiB). Tried to allocate 292.50 MiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).");
        assert_eq!(c[0], "mps_high_watermark");
        // 2 + 1 + 1 = 4 GB < 18.13 GB: macOS refused, not the limit.
        let c = codes("RuntimeError: MPS backend out of memory (MPS allocated: 2.00 GB, other allocations: 1.00 GB, max allowed: 18.13 GB). Tried to allocate 1.00 GB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).");
        assert_eq!(c[0], "unified_memory_exhausted");
        let c = codes("RuntimeError: MPS backend out of memory (MPS allocated: 42.28 GiB, other allocations: 720.00 KiB). Tried to allocate 1.00 GiB on private pool.");
        assert_eq!(c[0], "unified_memory_exhausted");
    }

    #[test]
    fn mps_fix_warns_about_the_ratio() {
        let f = &decode_str("RuntimeError: MPS backend out of memory (MPS allocated: 8.89 GB, other allocations: 172.98 MB, max allowed: 9.07 GB). Tried to allocate 6.25 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).")[0];
        assert_eq!(f.diagnosis.verdicts[0].code, "mps_high_watermark");
        let ratio = f
            .diagnosis
            .fixes
            .iter()
            .find(|x| x.how.contains("PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0"))
            .unwrap();
        assert!(ratio.how.contains("freeze"));
        assert!(ratio.how.contains("0.7"));
    }

    #[test]
    fn host_verdicts() {
        assert_eq!(codes("RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 8000000000000 bytes. Error code 12 (Cannot allocate memory)")[0], "request_exceeds_capacity");
        assert_eq!(codes("RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 34359738368 bytes. Error code 12 (Cannot allocate memory)")[0], "host_ram_exhausted");
        assert_eq!(codes("Out of memory: Killed process 48213 (python) total-vm:98765432kB, anon-rss:61234567kB, file-rss:0kB, shmem-rss:0kB")[0], "host_ram_exhausted");
        assert_eq!(codes("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=2003702.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.")[0], "host_memory_limit");
        let f = &decode_str("trainer-1 exited with code 137")[0];
        assert_eq!(f.diagnosis.verdicts[0].code, "killed_by_sigkill");
        assert!(f.diagnosis.verdicts[0].detail.contains("circumstantial"));
        assert_eq!(f.category, crate::record::Category::LikelyOom);
    }

    #[test]
    fn framework_verdicts() {
        assert_eq!(codes("ResourceExhaustedError: OOM when allocating tensor with shape[8,512,512,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc")[0], "capacity_exhausted");
        assert_eq!(codes("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.")[0], "xla_preallocation");
        assert_eq!(codes("XlaRuntimeError: RESOURCE_EXHAUSTED: Out of host memory while trying to allocate 68719476736 bytes. Please set the environment variable XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB to allocate larger host memory than the default 64 GB.")[0], "xla_host_memory_limit");
        assert_eq!(codes("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 3,758,096,384 bytes, limit set to: 4,294,967,296 bytes).")[0], "memory_limit");
        assert_eq!(codes("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 2,147,483,648 bytes).")[0], "capacity_exhausted");
        assert_eq!(codes("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.")[0], "kv_cache_too_small");
    }

    #[test]
    fn xpu_gets_no_cuda_advice() {
        for text in [
            "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.11 GiB of which 1.02 GiB is free. Of the allocated memory 9.80 GiB is allocated by PyTorch, and 3.90 GiB is reserved by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.",
            "RuntimeError: DPCPP out of memory. Tried to allocate 186.00 MiB (GPU 0; 15.56 GiB total capacity; 12.00 GiB already allocated; 13.00 GiB reserved in total by PyTorch)",
        ] {
            let f = &decode_str(text)[0];
            assert!(!f.diagnosis.fixes.is_empty());
            for x in &f.diagnosis.fixes {
                assert!(!x.how.contains("PYTORCH_CUDA_ALLOC_CONF="), "{}", x.how);
                assert!(!x.how.contains("nvidia-smi"), "{}", x.how);
                assert!(!x.how.contains("device_type=\"cuda\""), "{}", x.how);
            }
        }
    }
}
