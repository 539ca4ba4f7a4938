//! The fallback: any other message that states a GPU or accelerator
//! allocation failed. Last in [`super::FAMILIES`], so every specific family
//! wins over it.
//!
//! Precision comes from an explicit allow-list of phrases that frameworks
//! really print (each with its source in fixtures/SOURCES-masked.md), never
//! from the words "memory" or "allocate" alone: metrics, configs, source code
//! and documentation mention memory all the time. Bare error names
//! (`cudaErrorMemoryAllocation`) must also be reported, not mentioned
//! (see `text::reported_token`), and the scanner's quote check applies.

use super::text::is_boilerplate;
use super::text::{collapse_repeats, reported_token};
use super::{is_mention, Family, Message};
use crate::constant_regex;
use crate::record::{fact, Category, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

/// One allowed phrase.
struct Phrase {
    /// Stable slug, used as the finding's `era`.
    id: Era,
    re: Regex,
    /// A bare error name: must pass [`reported_token`].
    token: bool,
    /// The name alone says little: the message is the whole line.
    whole_line: bool,
    /// Where the message starts: at the match, or after `Class: `.
    after_colon: bool,
    backend: &'static str,
    reported_by: &'static str,
    /// The program says it goes on without the memory: a warning.
    warning: bool,
}

fn phrases() -> &'static [Phrase] {
    static P: OnceLock<Vec<Phrase>> = OnceLock::new();
    P.get_or_init(|| {
        let p = |id, pattern: &str, token, after_colon, backend, reported_by| Phrase {
            id,
            re: constant_regex(pattern),
            token,
            whole_line: token && id != Era::Vendor,
            after_colon,
            backend,
            reported_by,
            warning: false,
        };
        vec![
            // MXNet prints the same words as ggml, after its storage manager's
            // source location; it starts earlier on the line, so it wins.
            p(Era::Mxnet, r"\bpooled_storage_manager\.h:\d+: cudaMalloc failed: out of memory", false, false, "cuda", crate::i18n::reporter::MXNET_POOL.en),
            p(Era::LlamaCpp, r"(?:\w+: )?(?:allocating [\d.]+ MiB on device \d+: )?cudaMalloc failed: out of memory", false, false, "cuda", "llama.cpp / ggml (cudaMalloc)"),
            p(Era::Ctranslate2, r"\b(?i:cuda) failed with error out of memory", false, false, "cuda", "CTranslate2"),
            p(Era::Relion, r"\bCudaCustomAllocator out of memory", false, false, "cuda", "RELION (CudaCustomAllocator)"),
            // CUDAAllocator::AllocateImpl: `Out of memory error on GPU %d. Cannot
            // allocate %s memory on GPU %d, [%s memory has been allocated and
            // ]available memory is only %s.`
            p(Era::Paddle, r"\bOut of memory error on GPU \d+\. Cannot allocate", false, false, "", crate::i18n::reporter::PADDLE_ALLOCATOR.en),
            // Vulkan-Hpp's exception for VK_ERROR_OUT_OF_DEVICE_MEMORY
            // (`vk::Device::allocateMemory: ErrorOutOfDeviceMemory`).
            // vulkano's `OomError(OutOfDeviceMemory)` (Rust's Debug form).
            // ggml's Vulkan backend states the size on the line before the
            // exception (`ggml_vulkan: Device memory allocation of size N
            // failed.`), which it prints only when the allocation threw.
            p(Era::Vulkan, r"\bErrorOutOfDeviceMemory\b|\bOomError\(OutOfDeviceMemory\)|\bggml_vulkan: Device memory allocation of size \d+ failed", false, false, "vulkan", crate::i18n::reporter::VULKAN_DRIVER.en),
            // TensorRT's logger: `[TRT] [E] 2: [FILE::FUNC::LINE] Error Code 2: OutOfMemory (...)`.
            p(Era::Tensorrt, r"\bError Code 2: OutOfMemory\b", false, false, "cuda", "TensorRT"),
            // TensorRT's builder refusing a plugin whose scratch space for
            // the largest shapes it must build for is more than its
            // workspace pool allows (`[TRT] [E] 4: Internal error: plugin
            // node .../PLUGIN_V2_GPTAttention_0 requires N bytes of scratch
            // space, but only M is available. Try increasing the workspace
            // size with IBuilderConfig::setMemoryPoolLimit().`): the pool
            // defaults to the GPU's whole memory, so the engine as
            // configured does not fit on the GPU.
            p(Era::Tensorrt, r"\bplugin node \S+ requires \d+ bytes of scratch space, but only \d+ is available\b", false, false, "cuda", "TensorRT"),
            // TensorRT's builder skipping a tactic whose memory does not fit
            // (`[TRT] [W] UNSUPPORTED_STATE: Skipping tactic 33 due to
            // insufficient memory on requested size of 629145600 detected for
            // tactic 0x...`, then `Tactic Device request: 600MB Available:
            // 302MB. Device memory is insufficient to use tactic.`): it tries
            // another tactic, so the line is a warning, not the failure.
            Phrase {
                warning: true,
                ..p(Era::Tensorrt, r"Skipping tactic \d+ due to insuf+icient memory on requested size of \d+|\bTactic Device request: \d+ ?MB Available: \d+ ?MB\. Device memory is insufficient to use tactic", false, false, "cuda", "TensorRT")
            },
            // MTLCommandBufferError 8 (kIOGPUCommandBufferCallbackErrorOutOfMemory),
            // as MLX, ggml's Metal backend and Swift programs print it.
            p(Era::Metal, r"\bInsufficient Memory \((?:0*8:kIOGPUCommandBufferCallbackErrorOutOfMemory|IOAF code 8)\)", false, false, "metal", crate::i18n::reporter::METAL_DRIVER.en),
            // The second form is the same message cut short after the arena's function;
            // the third, the arena at its configured limit (`gpu_mem_limit`).
            p(Era::Onnxruntime, r"\bFailed to allocate memory for requested buffer of size \d+|\bBFCArena::AllocateRawInternal\([^)]{0,200}\) Failed to alloc|\bAvailable memory of \d+ is smaller than requested bytes of \d+", false, false, "", crate::i18n::reporter::ORT_ARENA.en),
            p(Era::TorchOomClass, r"\btorch\.(?:cuda\.)?OutOfMemoryError: \S", false, true, "", "PyTorch (OutOfMemoryError)"),
            p(Era::CupyOomClass, r"\bcupy\.cuda\.memory\.OutOfMemoryError: \S", false, true, "cuda", "CuPy (OutOfMemoryError)"),
            p(Era::CudaDriver, r"\bCUDA_ERROR_OUT_OF_MEMORY\b", true, false, "cuda", crate::i18n::reporter::CUDA_DRIVER_API_OOM.en),
            p(Era::CudaRuntime, r"\bcudaErrorMemoryAllocation\b", true, false, "cuda", crate::i18n::reporter::CUDA_RUNTIME_API_OOM.en),
            p(Era::Hip, r"\b(?:HIP_ERROR_OutOfMemory|hipErrorOutOfMemory)\b", true, false, "hip", "HIP / ROCm (hipErrorOutOfMemory)"),
            p(Era::Vendor, r"\b(?:MLU|NPU|GCU|MUSA) out of memory\b", true, false, "", crate::i18n::reporter::VENDOR_TORCH_BACKEND.en),
        ]
    })
}

/// The first allowed phrase reported on the line: (phrase, start).
fn find(line: &str) -> Option<(&'static Phrase, usize)> {
    phrases()
        .iter()
        .filter_map(|phrase| {
            phrase
                .re
                .find_iter(line)
                .find(|m| {
                    (!phrase.token || reported_token(line, m.start()))
                        && !is_mention(line, m.start())
                })
                .map(|m| {
                    // Vulkan's error name alone says little: the line names the call.
                    let start = if phrase.whole_line || phrase.id == Era::Vulkan {
                        0
                    } else if phrase.after_colon {
                        // The match's last character, which may be multi-byte.
                        line[..m.end()]
                            .char_indices()
                            .next_back()
                            .map_or(m.start(), |(i, _)| i)
                    } else {
                        m.start()
                    };
                    (phrase, start)
                })
        })
        .min_by_key(|(_, start)| *start)
}

/// `SomeError: ` at the start of a line.
fn leading_exception() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)): "))
}

struct SizePatterns {
    bytes_in_parens: Regex,
    alloc_bytes: Regex,
    buffer_of_size: Regex,
    ggml_mib: Regex,
    cupy_bytes: Regex,
    relion_request: Regex,
    async_request: Regex,
    tensorrt_request: Regex,
    tensorrt_scratch: Regex,
    tactic_request: Regex,
    tactic_mib: Regex,
    listed_free: Regex,
    listed_request: Regex,
    free_total: Regex,
    ggml_device: Regex,
    paddle_request: Regex,
    paddle_allocated: Regex,
    paddle_available: Regex,
    paddle_size_alone: Regex,
    device: Regex,
}

fn size_patterns() -> &'static SizePatterns {
    static P: OnceLock<SizePatterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = constant_regex;
        SizePatterns {
            // TensorFlow/XLA stream executor: `failed to allocate 2.96G (3179741184 bytes) from device`.
            bytes_in_parens: re(r"failed to allocate [\d.]+\s*\w* \((\d+) ?(?:bytes|B)\)"),
            // Its cuda_driver.cc for unified and pinned host memory, byte
            // counts only: `failed to alloc 2740606464 bytes unified memory;
            // result: ...`, `failed to alloc 782758144 bytes on host: ...`.
            alloc_bytes: re(r"failed to alloc (\d+) bytes (?:unified memory|on host)\b"),
            // ONNX Runtime, and ggml's follow-up line `failed to allocate CUDA0 buffer of size N`.
            buffer_of_size: re(r"(?:buffer of size|memory allocation of size|smaller than requested bytes of) (\d+)\b"),
            ggml_mib: re(r"allocating ([\d.]+) (MiB) on device (\d+)"),
            cupy_bytes: re(r"allocating ([\d,]+) bytes"),
            relion_request: re(r"requestedSpace:\s*(\d+) B\b"),
            // XLA/TSL's cudaMallocAsync allocator: `cuMemAllocAsync failed to
            // allocate N bytes: ...` then `Reported by CUDA: Free memory/Total
            // memory: F/T`.
            async_request: re(r"cuMemAllocAsync failed to allocate (\d+) bytes"),
            // TensorRT states its request on a warning line (`Requested
            // amount of GPU memory (N bytes) could not be allocated`) or in
            // the error's own parentheses (`Error Code 2: OutOfMemory
            // (Requested size was N bytes.)`).
            tensorrt_request: re(
                r"Requested (?:amount of (?:GPU )?memory \((\d+) bytes\) could not be allocated|size was (\d+) bytes)",
            ),
            // A plugin's scratch space against the workspace pool's limit
            // (what TensorRT calls available).
            tensorrt_scratch: re(r"requires (\d+) bytes of scratch space, but only (\d+) is available"),
            // XGBoost's device allocator after its error: `- Free memory: N`
            // and `- Requested memory: N` lines.
            // The builder's skipped tactic: its exact request in bytes, and
            // the request and the free memory in MiB (`MB`, shifted by 20).
            tactic_request: re(r"insufficient memory on requested size of (\d+)"),
            tactic_mib: re(r"Tactic Device request: (\d+) ?(MB) Available: (\d+) ?MB\b"),
            listed_free: re(r"(?:^|\s)- Free memory: (\d+)\b"),
            listed_request: re(r"(?:^|\s)- Requested memory: (\d+)\b"),
            free_total: re(r"Free memory/Total memory: (\d+)/(\d+)"),
            // ggml names its devices CUDA0, Vulkan0, ...
            ggml_device: re(r"\b(?:CUDA|Vulkan)(\d+) buffer\b"),
            // Paddle's HumanReadableSize: `%f` and B/kB/MB/GB/TB, 1024-based.
            paddle_request: re(r"Cannot allocate ([\d.]+)\s*(B|kB|MB|GB|TB) memory on GPU (\d+)"),
            paddle_allocated: re(r"([\d.]+)\s*(B|kB|MB|GB|TB) memory has been allocated"),
            paddle_available: re(r"available memory is only\s+([\d.]+)\s*(B|kB|MB|GB|TB)\b"),
            paddle_size_alone: re(r"^\s+[\d.]+(?:B|kB|MB|GB|TB)\.?\s*$"),
            device: re(r"\bon device (\d+)\b"),
        }
    })
}

/// Any other message that says a GPU/accelerator allocation failed.
pub struct GenericOom;

impl Family for GenericOom {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "cudaMalloc failed: out of memory",
            "CUDA failed with error out of memory",
            "CudaCustomAllocator out of memory",
            "Failed to allocate memory for requested buffer",
            // Also finds the arena's message cut short (`... Failed to alloc`).
            "Failed to alloc",
            // The arena at its limit (`Available memory of 0 is smaller than
            // requested bytes of N`) after its function's name
            // (`AllocateRawInternal`), on the piece `lloc fail` uses.
            "llocateRawInternal",
            "Out of memory error on GPU",
            "Insufficient Memory (",
            "ErrorOutOfDeviceMemory",
            "OomError(OutOfDeviceMemory)",
            "Device memory allocation of size",
            "Error Code 2: OutOfMemory",
            // On the `rror` literal the status tables search for.
            "Internal error: plugin node",
            // The `Tactic Device request` line that goes with it follows it.
            // Also TensorRT 7's `Tactic Device request` line alone (at ERROR
            // level): one literal for both, on the piece `ctic`.
            "actic",
            "OutOfMemoryError: ",
            "CUDA_ERROR_OUT_OF_MEMORY",
            "cudaErrorMemoryAllocation",
            "HIP_ERROR_OutOfMemory",
            "hipErrorOutOfMemory",
            "MLU out of memory",
            "NPU out of memory",
            "GCU out of memory",
            "MUSA out of memory",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        find(line).map(|(_, start)| start)
    }

    /// TensorRT's error code 2 and Metal's status 8; elsewhere the phrases
    /// match digits as a class.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&["rror Code", "kIOGPU", "IOAF code"])
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        if lines.len() >= 500 {
            return false;
        }
        // PyTorch's headline alone on its line (its class, in the prefix,
        // is what started the message): the allocator's sentence wrapped
        // onto the next lines.
        if super::torch::continues_wrapped(lines, next) {
            return true;
        }
        let Some((first, _)) = find(&lines[0]) else {
            return is_boilerplate(next);
        };
        // TensorRT's skipped tactics go on with the builder's later lines:
        // more of them, and its error when the build runs out (then the
        // message is that error, not a warning).
        if first.warning {
            return lines.len() < 200
                && (find(next).is_some_and(|(p, _)| p.id == first.id)
                    || tensorrt_builder_line(next)
                    || next.contains("Requested amount of GPU memory")
                    || next.contains(TENSORRT_BUILD_FAILED));
        }
        // The same failure printed again (TensorFlow retries with smaller sizes).
        if find(next).is_some_and(|(p, _)| p.id == first.id) {
            return true;
        }
        match first.id {
            // ggml's size line, then the model loader giving up on the same
            // buffer (`error loading model: unable to allocate CUDA0 buffer`),
            // which the general grammar would report again on its own.
            Era::LlamaCpp | Era::Vulkan => {
                size_patterns().buffer_of_size.is_match(next)
                    || (lines.len() <= 3 && ggml_loader_gave_up(next))
            }
            // TensorRT repeats the error and states the request on a warning
            // line; TensorRT-LLM's builder then says whether the build failed.
            Era::Tensorrt => {
                lines.len() < 12
                    && (next.contains("Requested amount of GPU memory")
                        || next.contains("Error Code 2:")
                        || next.trim_end().ends_with("[E] 2:")
                        || next.contains(TENSORRT_BUILD_FAILED))
            }
            // XGBoost lists the device's free memory and its request.
            Era::CudaRuntime if next.trim_start().starts_with("- ") => {
                lines.len() < 4
                    && ["- Free memory: ", "- Requested memory: "]
                        .iter()
                        .any(|s| next.trim_start().starts_with(s))
            }
            // RELION prints the request and the allocator's state after it.
            Era::Relion => lines.len() < 4 && next.contains("requestedSpace:"),
            // XLA's cudaMallocAsync allocator states the device's memory on
            // the next line.
            // TensorFlow's pinned host allocator repeats each failed
            // `failed to alloc N bytes on host` as a warning of its own.
            Era::CudaDriver => {
                (lines.len() < 4 && size_patterns().free_total.is_match(next))
                    || next.contains("could not allocate pinned host memory of size")
                    || is_boilerplate(next)
            }
            // Paddle's message goes on with its advice and source location; a
            // terminal may wrap the figure that ends its first sentence.
            Era::Paddle => {
                lines.len() < 10
                    && (size_patterns().paddle_size_alone.is_match(next)
                        || [
                            "Please check whether there is any other process",
                            "1. If yes",
                            "2. If no",
                            "(at /",
                            "Or set environment variable",
                            "The command is `export FLAGS_gpu_memory_limit_mb",
                        ]
                        .iter()
                        .any(|s| next.trim_start().starts_with(s)))
            }
            _ => is_boilerplate(next),
        }
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        // After-colon phrases leave their class name in the prefix.
        let (phrase, _) = find(&format!("{}{first}", message.prefix))?;
        if phrase.id == Era::TorchOomClass {
            if let Some(finding) = super::torch::decode_wrapped(message) {
                return Some(finding);
            }
        }
        // ggml's size line and the exception after it are one failure, not
        // a repeat.
        let size_line = |l: &str| l.contains("Device memory allocation of size");
        let (text, repeats) = collapse_repeats(message.lines, |l| {
            find(l).is_some_and(|(p, _)| p.id == phrase.id && p.warning == phrase.warning)
                && size_line(l) == size_line(first)
        });
        let mut finding = message.finding(Kind::GenericOom, text);
        if phrase.whole_line {
            finding.exception = leading_exception()
                .captures(first)
                .map(|c| c[1].to_string());
        }
        finding.era = Some(phrase.id);
        finding
            .facts
            .insert(fact::REPORTED_BY.into(), phrase.reported_by.into());
        if phrase.token {
            if let Some(m) = phrase.re.find(first) {
                finding
                    .facts
                    .insert(fact::ERROR_NAME.into(), m.as_str().to_string());
            }
        }
        let backend = match phrase.id {
            Era::Vendor => first
                .split_whitespace()
                .next()
                .map(str::to_ascii_lowercase)
                .unwrap_or_default(),
            _ => phrase.backend.to_string(),
        };
        if !backend.is_empty() {
            finding.backend = Some(backend);
        }
        // A finding starts at one occurrence; each repeated line is one more.
        finding.occurrences += repeats as u64;
        let joined = message.joined();
        if phrase.id == Era::Vulkan
            && (message.prefix.contains("ggml_vulkan") || joined.contains("ggml_vulkan"))
        {
            finding.facts.insert(
                fact::REPORTED_BY.into(),
                crate::i18n::reporter::GGML_VULKAN.en.into(),
            );
        }
        // TensorRT's source location before the code names where the
        // memory ran out (`[virtualMemoryBuffer.cpp::resizePhysical::144]`:
        // the builder's buffer for a tactic).
        if phrase.id == Era::Tensorrt {
            if let Some(at) = tensorrt_location(message.prefix) {
                finding.facts.insert(fact::LOCATION.into(), at.to_string());
            }
        }
        if phrase.id == Era::CudaDriver && size_patterns().async_request.is_match(&joined) {
            finding.facts.insert(
                fact::REPORTED_BY.into(),
                crate::i18n::reporter::XLA_ASYNC_ALLOCATOR.en.into(),
            );
        }
        // Skipped tactics alone are a warning; with the builder's error
        // they are its failure.
        if phrase.warning
            && !message
                .lines
                .iter()
                .any(|l| find(l).is_some_and(|(p, _)| p.id == phrase.id && !p.warning))
        {
            finding.category = Category::Warning;
        }
        if failed_device_alloc_at_info(&format!("{}{first}", message.prefix)) {
            // The stream executor logs its failed cuMemAlloc at info level on
            // purpose: the BFC allocator retries with less, so the line alone
            // is not a failure (a real one follows as its own message).
            finding.category = Category::Warning;
        }
        read_sizes(&mut finding, &joined, phrase.id);
        Some(finding)
    }
}

/// Whether the line is the stream executor's failed device allocation
/// logged at info level (`... I tensorflow/stream_executor/cuda/cuda_driver.cc:801]
/// failed to allocate 7.81G (8387559424 bytes) from device: ...`, or glog's
/// `I0924 16:22:13.020179 12345 cuda_driver.cc:801] ...`).
fn failed_device_alloc_at_info(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r"(?:^|\s)I\d{0,4}\s+(?:\d\d:\d\d:\d\d\.\d+\s+\d+\s+)?[\w./-]+\.cc:\d+\]\s*failed to allocate\b[^\n]*\bfrom device\b",
        )
    })
    .is_match(line)
}

/// TensorRT-LLM's builder after a failed build (`[TRT-LLM] [E] Engine
/// building failed, please check the error log.`).
pub(crate) const TENSORRT_BUILD_FAILED: &str = "Engine building failed";

/// The last `[FILE::FUNC::LINE]` before TensorRT's error code.
fn tensorrt_location(prefix: &str) -> Option<&str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"\[(\w+\.(?:cpp|cu|h)::\w+::\d+)\]"))
        .captures_iter(prefix)
        .last()
        .and_then(|c| c.get(1))
        .map(|m| m.as_str())
}

/// Fills in the sizes a phrase states; states nothing it does not say.
fn read_sizes(finding: &mut Finding, text: &str, id: Era) {
    let p = size_patterns();
    let raw = |re: &Regex, at: usize| -> Option<u64> {
        re.captures(text)
            .and_then(|c| c.get(at))
            .and_then(|m| m.as_str().replace(',', "").parse().ok())
    };
    // A figure and its unit in the first two groups (`1.53 GB`, `144817.04 MiB`).
    let sized = |re: &Regex| -> Option<u64> {
        let c = re.captures(text)?;
        crate::units::to_bytes(&c[1], &c[2]).ok()
    };
    match id {
        Era::LlamaCpp => {
            // The follow-up line gives the exact byte count; the MiB figure is rounded.
            finding.sizes.requested_bytes =
                raw(&p.buffer_of_size, 1).or_else(|| sized(&p.ggml_mib));
        }
        Era::CudaDriver if p.async_request.is_match(text) => {
            finding.sizes.requested_bytes = raw(&p.async_request, 1);
            finding.sizes.free_bytes = raw(&p.free_total, 1);
            finding.sizes.total_bytes = raw(&p.free_total, 2);
        }
        Era::Onnxruntime | Era::Vulkan => finding.sizes.requested_bytes = raw(&p.buffer_of_size, 1),
        Era::Tensorrt if finding.category == Category::Warning => {
            finding.sizes.requested_bytes =
                raw(&p.tactic_request, 1).or_else(|| sized(&p.tactic_mib));
            finding.sizes.free_bytes = p
                .tactic_mib
                .captures(text)
                .and_then(|c| crate::units::to_bytes(&c[3], &c[2]).ok());
        }
        Era::Tensorrt if p.tensorrt_scratch.is_match(text) => {
            finding.sizes.requested_bytes = raw(&p.tensorrt_scratch, 1);
            finding.sizes.free_bytes = raw(&p.tensorrt_scratch, 2);
        }
        Era::Tensorrt => {
            finding.sizes.requested_bytes = raw(&p.tensorrt_request, 1)
                .or_else(|| raw(&p.tensorrt_request, 2))
                .or_else(|| raw(&p.tactic_request, 1))
        }
        Era::CudaRuntime if p.listed_request.is_match(text) => {
            finding.sizes.requested_bytes = raw(&p.listed_request, 1);
            finding.sizes.free_bytes = raw(&p.listed_free, 1);
        }
        Era::Relion => finding.sizes.requested_bytes = raw(&p.relion_request, 1),
        Era::CupyOomClass => finding.sizes.requested_bytes = raw(&p.cupy_bytes, 1),
        Era::Paddle => {
            finding.sizes.requested_bytes = sized(&p.paddle_request);
            finding.sizes.free_bytes = sized(&p.paddle_available);
            if let Some(used) = sized(&p.paddle_allocated) {
                // What Paddle's allocator already holds on this GPU: its
                // `Allocated` statistic, live allocations (kept as
                // `used_bytes` too, the name earlier records gave it).
                finding.sizes.allocated_bytes = Some(used);
                finding.sizes.extra.insert("used_bytes".into(), Some(used));
            }
            finding.device = raw(&p.paddle_request, 3).and_then(|d| u32::try_from(d).ok());
            return;
        }
        _ => {
            finding.sizes.requested_bytes =
                raw(&p.bytes_in_parens, 1).or_else(|| raw(&p.alloc_bytes, 1))
        }
    }
    let ggml = matches!(id, Era::LlamaCpp | Era::Vulkan);
    finding.device = raw(&p.device, 1)
        .or_else(|| ggml.then(|| raw(&p.ggml_device, 1)).flatten())
        .and_then(|d| u32::try_from(d).ok());
}

/// A line of TensorRT's builder at info, verbose or warning level (`[TRT]
/// [I] Detected 41 inputs ...`): the build going on between its skipped
/// tactics and the error that ends it.
fn tensorrt_builder_line(line: &str) -> bool {
    ["[TRT] [I] ", "[TRT] [V] ", "[TRT] [W] "]
        .iter()
        .any(|tag| line.contains(tag))
}

/// llama.cpp's model loader after a backend buffer failed.
fn ggml_loader_gave_up(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"\bunable to allocate [A-Za-z]+\d* buffer\b"))
        .is_match(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(text: &[&str]) -> Option<Finding> {
        crate::detect::decode_lines(&GenericOom, text)
    }

    /// TensorFlow's stream executor states unified and pinned host
    /// allocations in bytes only (fixtures/wild/2018.txt, 2127.txt); the
    /// CUDA family leaves them to this one.
    #[test]
    fn stream_executor_alloc_lines_state_their_bytes() {
        for (line, bytes) in [
            ("2021-10-15 15:01:44.577626: E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_driver.cc:764] failed to alloc 2740606464 bytes unified memory; result: CUDA_ERROR_OUT_OF_MEMORY: out of memory", 2_740_606_464u64),
            ("2022-07-03 15:46:53.245176: E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_driver.cc:802] failed to alloc 782758144 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory", 782_758_144),
        ] {
            let findings = crate::decode_str(line);
            assert_eq!(findings.len(), 1, "{line}");
            assert_eq!(findings[0].kind, Kind::GenericOom, "{line}");
            assert_eq!(findings[0].sizes.requested_bytes, Some(bytes), "{line}");
            assert_eq!(findings[0].category, Category::Oom, "{line}");
        }
        // The pinned host allocator's own warning after each joins it.
        let f = collect(&[
            "E cuda_driver.cc:802] failed to alloc 782758144 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            "W device_host_allocator.h:46] could not allocate pinned host memory of size: 782758144",
            "E cuda_driver.cc:802] failed to alloc 704482304 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        ])
        .unwrap();
        assert_eq!(f.occurrences, 2);
        // Without a byte count the CUDA family still reads the error name.
        let bare = crate::decode_str("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY: out of memory");
        assert_eq!(bare[0].kind, Kind::CudaRuntimeOom);
    }

    /// TensorRT's builder skipping a tactic (fixtures/wild/2011.txt,
    /// 2044.txt) is a warning with its figures; an error after it stays
    /// an out-of-memory finding of its own.
    #[test]
    fn tensorrt_skipped_tactic_is_a_warning() {
        let f = collect(&[
            "[10/01/2025-08:26:34] [TRT] [W] UNSUPPORTED_STATE: Skipping tactic 33 due to insufficient memory on requested size of 629145600 detected for tactic 0xa5a46bfbd719d757.",
            "[10/01/2025-08:26:34] [TRT] [W] Tactic Device request: 600MB Available: 302MB. Device memory is insufficient to use tactic.",
        ])
        .unwrap();
        assert_eq!(f.category, Category::Warning);
        assert_eq!(f.era, Some(Era::Tensorrt));
        assert_eq!(f.sizes.requested_bytes, Some(600 << 20));
        assert_eq!(f.sizes.free_bytes, Some(302 << 20));
        // Run together with its status, as TensorRT-LLM's logger printed it.
        let joined = collect(&["[11/28/2023-15:47:38] [TRT] [W] UNSUPPORTED_STATESkipping tactic 4 due to insufficient memory on requested size of 66048 detected for tactic 0x000000000000001f."]).unwrap();
        assert_eq!(joined.category, Category::Warning);
        assert_eq!(joined.sizes.requested_bytes, Some(66_048));
        // The builder's real failure after the warnings is an error.
        let log = "[TRT] [W] UNSUPPORTED_STATE: Skipping tactic 3 due to insufficient memory on requested size of 66048 detected for tactic 0x1f.\n[11/10/2023-06:30:40] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)\n";
        let findings = crate::decode_str(log);
        let categories: Vec<Category> = findings.iter().map(|f| f.category).collect();
        assert_eq!(categories, [Category::Oom]);
        assert_eq!(findings[0].sizes.requested_bytes, Some(66_048));
        // fixtures/wild/1512.txt: the builder states its request on a
        // warning line before; the error after the skipped tactic is one
        // out-of-memory finding with that request.
        let build = "[11/07/2023-08:45:41] [TRT] [W] Requested amount of GPU memory (33555480576 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.\n[11/07/2023-08:45:41] [TRT] [W] UNSUPPORTED_STATESkipping tactic 2 due to insufficient memory on requested size of 33555480576 detected for tactic 0x000000000000001e.\n[11/07/2023-08:45:41] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)\n";
        let findings = crate::decode_str(build);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].category, Category::Oom);
        assert_eq!(findings[0].sizes.requested_bytes, Some(33_555_480_576));
    }

    /// TensorRT's builder refusing a plugin's scratch space (fixtures/wild
    /// 2402, TensorRT-LLM's GPT attention plugin): the engine as configured
    /// does not fit, with the scratch it needs and what the pool allows.
    /// Skipped tactics and the builder's info lines before it are its build.
    #[test]
    fn a_plugins_scratch_space_beyond_the_workspace_pool() {
        let error = "[11/10/2023-21:47:10] [TRT] [E] 4: Internal error: plugin node LLaMAForCausalLM/layers/0/attention/PLUGIN_V2_GPTAttention_0 requires 56405524864 bytes of scratch space, but only 47590277120 is available. Try increasing the workspace size with IBuilderConfig::setMemoryPoolLimit().";
        let f = collect(&[error]).unwrap();
        assert_eq!((f.kind, f.category), (Kind::GenericOom, Category::Oom));
        assert_eq!(f.sizes.requested_bytes, Some(56_405_524_864));
        assert_eq!(f.sizes.free_bytes, Some(47_590_277_120));
        let log = format!("[11/10/2023-21:47:10] [TRT] [W] UNSUPPORTED_STATESkipping tactic 2 due to insufficient memory on requested size of 132096 detected for tactic 0x000000000000001f.\n[11/10/2023-21:47:10] [TRT] [I] Detected 41 inputs and 1 output network tensors.\n{error}\n");
        let findings = crate::decode_str(&log);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].category, Category::Oom);
        assert_eq!(findings[0].sizes.requested_bytes, Some(56_405_524_864));
        // Skipped tactics and info lines with no error after them stay a warning.
        let warned = crate::decode_str("[TRT] [W] UNSUPPORTED_STATESkipping tactic 2 due to insufficient memory on requested size of 132096 detected for tactic 0x1f.\n[TRT] [I] Detected 41 inputs and 1 output network tensors.\n");
        assert_eq!(warned.len(), 1);
        assert_eq!(warned[0].category, Category::Warning);
        // The message cut before its figures says nothing this reads.
        assert!(collect(&["[TRT] [E] 4: [pluginV2Builder.cpp::makeRunner::519] Error Code 4: Internal Error (Internal error: plugin node LLaMAForCausalLM/layers/0/attention/PLUGIN_V2_GPTAttention_0 requires 564055248"]).is_none());
    }

    /// The stream executor logs its failed cuMemAlloc at info level (the
    /// BFC allocator then asks for less): a warning, as TensorFlow's own
    /// "not a failure" line is (the line of wild paste 1952). At error
    /// level, as older releases logged it, it stays an out of memory.
    #[test]
    fn failed_device_allocation_at_info_level_is_a_warning() {
        let info = "2021-09-24 16:22:13.020179: I tensorflow/stream_executor/cuda/cuda_driver.cc:801] failed to allocate 7.81G (8387559424 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory";
        let f = collect(&[info]).expect("found");
        assert_eq!(f.kind, Kind::GenericOom);
        assert_eq!(f.category, Category::Warning);
        assert_eq!(f.sizes.requested_bytes, Some(8_387_559_424));
        let error = info.replace(": I tensorflow", ": E tensorflow");
        let f = collect(&[error.as_str()]).expect("found");
        assert_eq!(f.kind, Kind::GenericOom);
        assert_eq!(f.category, Category::Oom);
    }

    #[test]
    fn every_phrase() {
        for (line, era, requested) in [
            ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory", "llama_cpp", Some(151_851_672_535u64)),
            ("RuntimeError: CUDA failed with error out of memory", "ctranslate2", None),
            ("onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node. Name:'Conv_3' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 2830172160", "onnxruntime", Some(2_830_172_160)),
            ("torch.OutOfMemoryError: Insufficient VRAM to load model, requested 5.15GB but only had 3.30GB free", "torch_oom_class", None),
            ("2019-07-21 23:23:06.228049: E tensorflow/stream_executor/cuda/cuda_driver.cc:828] failed to allocate 32.00M (33554432 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory", "cuda_driver", Some(33_554_432)),
            ("numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY", "cuda_driver", None),
            ("terminate called after throwing an instance of 'thrust::system::detail::bad_alloc'\n", "", None),
            ("  what():  std::bad_alloc: cudaErrorMemoryAllocation: out of memory", "cuda_runtime", None),
            ("2024-06-24 17:01:13.933585: E external/xla/xla/stream_executor/rocm/rocm_driver.cc:1268] failed to allocate 154.06GiB (165425291480 bytes) from device: HIP_ERROR_OutOfMemory", "hip", Some(165_425_291_480)),
            ("RuntimeError: HIP error: hipErrorOutOfMemory", "hip", None),
            ("RuntimeError: MLU out of memory", "vendor", None),
            ("mxnet.base.MXNetError: [11:18:15] src/storage/./pooled_storage_manager.h:157: cudaMalloc failed: out of memory", "mxnet", None),
            ("/onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to alloc", "onnxruntime", None),
            ("报错信息：Out of memory error on GPU 0. Cannot allocate 1.531250GB memory on GPU 0, available memory is only 416.625000MB.", "paddle", Some(1_644_167_168)),
            ("libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)", "metal", None),
            ("**Fatal error: MetalExecutionError: Error Domain=MTLCommandBufferErrorDomain Code=8 \"Insufficient Memory (IOAF code 8)\" UserInfo={NSLocalizedDescription=Insufficient Memory (IOAF code 8)}", "metal", None),
        ] {
            let found = collect(&[line]);
            if era.is_empty() {
                assert!(found.is_none(), "{line}");
                continue;
            }
            let f = found.unwrap_or_else(|| panic!("{line}"));
            assert_eq!(f.kind, Kind::GenericOom);
            assert_eq!(f.era.map(Era::slug), Some(era), "{line}");
            assert_eq!(f.sizes.requested_bytes, requested, "{line}");
        }
    }

    #[test]
    fn exact_bytes_from_the_follow_up_line() {
        let f = collect(&[
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory",
            "alloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624",
            "llama_model_load: error loading model: unable to allocate CUDA0 buffer",
        ])
        .unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(151_851_674_624));
        assert_eq!(f.device, Some(0));
        // The loader giving up on the same buffer belongs to the message
        // (else the general grammar reports it again); the next line not.
        assert_eq!(f.text.lines().count(), 3);
        let f = collect(&[
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory",
            "alloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624",
            "llama_model_load: error loading model: unable to allocate CUDA0 buffer",
            "llama_load_model_from_file: failed to load model",
        ])
        .unwrap();
        assert_eq!(f.text.lines().count(), 3);
    }

    #[test]
    fn xla_async_allocator_states_free_and_total() {
        let f = collect(&[
            "E1103 18:23:55.103160 3413767 gpu_cudamallocasync_allocator.cc:361] gpu_async_1 cuMemAllocAsync failed to allocate 1225195446464 bytes: RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            " Reported by CUDA: Free memory/Total memory: 22635544576/85095874560",
        ])
        .unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(1_225_195_446_464));
        assert_eq!(f.sizes.free_bytes, Some(22_635_544_576));
        assert_eq!(f.sizes.total_bytes, Some(85_095_874_560));
    }

    #[test]
    fn ggml_names_the_device_in_its_buffer() {
        let f = collect(&[
            "Error: llama runner process has terminated: cudaMalloc failed: out of memory",
            "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 838447104",
        ])
        .unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(838_447_104));
        assert_eq!(f.device, Some(0));
    }

    #[test]
    fn vulkan_and_tensorrt() {
        let f = collect(&[
            "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory",
            "alloc_tensor_range: failed to allocate Vulkan0 buffer of size 1059303232",
        ])
        .unwrap();
        assert_eq!(f.era, Some(Era::Vulkan));
        assert_eq!(f.sizes.requested_bytes, Some(1_059_303_232));
        assert_eq!(f.device, Some(0));
        // The size on the line before the exception (fixtures/wild/1506.txt).
        let f = collect(&[
            "ggml_vulkan: Device memory allocation of size 1610612736 failed.",
            "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory",
        ])
        .unwrap();
        assert_eq!(f.era, Some(Era::Vulkan));
        assert_eq!(f.sizes.requested_bytes, Some(1_610_612_736));
        assert!(f.text.contains("ErrorOutOfDeviceMemory"), "{}", f.text);
        let f = collect(&[
            "[11/10/2023-06:30:40] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)",
            "[11/10/2023-06:30:40] [TRT] [W] Requested amount of GPU memory (24793579520 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.",
        ])
        .unwrap();
        assert_eq!(f.era, Some(Era::Tensorrt));
        assert_eq!(f.sizes.requested_bytes, Some(24_793_579_520));
    }

    #[test]
    fn paddle_figures_and_wrapped_lines() {
        let f = collect(&[
            "Out of memory error on GPU 0. Cannot allocate 40.429688MB memory on GPU 0, 23.667969GB memory has been allocated and available memory is only 16.687500MB.",
            "Please check whether there is any other process using GPU 0.",
            "1. If yes, please stop them, or start PaddlePaddle on another GPU.",
            "2. If no, please decrease the batch size of your model. ",
            " (at /paddle/paddle/fluid/memory/allocation/cuda_allocator.cc:86)",
            "Epoch 2",
        ])
        .unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(42_393_601));
        assert_eq!(f.sizes.free_bytes, Some(17_498_112));
        assert_eq!(f.sizes.extra["used_bytes"], Some(25_413_288_204));
        assert_eq!(f.device, Some(0));
        assert_eq!(f.text.lines().count(), 5);
        // The first sentence's last figure wrapped onto a line of its own.
        let f = collect(&[
            "Out of memory error on GPU 0. Cannot allocate 1.531250GB memory on GPU 0, available memory is only ",
            "                   416.625000MB.",
        ])
        .unwrap();
        assert_eq!(f.sizes.free_bytes, Some(436_862_976));
    }

    #[test]
    fn folds_tensorflow_retries() {
        let f = collect(&[
            "2017-08-12 08:25:14.841699: E tensorflow/stream_executor/cuda/cuda_driver.cc:924] failed to allocate 90.48M (94873600 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY",
            "2017-08-12 08:25:14.845234: E tensorflow/stream_executor/cuda/cuda_driver.cc:924] failed to allocate 81.43M (85386240 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY",
            "2017-08-12 08:25:14.845857: E tensorflow/stream_executor/cuda/cuda_driver.cc:924] failed to allocate 73.29M (76847616 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY",
            "Epoch 1/10",
        ])
        .unwrap();
        assert_eq!(f.occurrences, 3);
        assert_eq!(f.sizes.requested_bytes, Some(94_873_600));
        assert_eq!(f.text.lines().count(), 1);
    }

    #[test]
    fn mentions_are_not_findings() {
        for line in [
            "gpu_mem_used=14.2GiB gpu_mem_free=1.1GiB step=100",
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "    if err == cudaErrorMemoryAllocation:",
            "    case CUDA_ERROR_OUT_OF_MEMORY: return \"out of memory\";",
            "# handle hipErrorOutOfMemory by halving the batch",
            "Search for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.",
            "    except torch.OutOfMemoryError:",
            "How to avoid NPU out of memory errors",
            "    msg = \"CUDA failed with error out of memory\"",
            "max_memory_allocated: 10.2 GiB",
            "Allocated memory for requested buffer of size 1024",
            "use_shared_memory: true",
        ] {
            assert!(collect(&[line]).is_none(), "{line}");
        }
    }

    #[test]
    fn requests_stated_after_the_error() {
        // TensorRT-LLM's engine build (a wild paste): the request inside
        // the error's parentheses.
        let f = collect(&["[08/11/2024-06:10:36] [TRT] [E] [virtualMemoryBuffer.cpp::resizePhysical::151] Error Code 2: OutOfMemory (Requested size was 16654532608 bytes.)"]).unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(16_654_532_608));
        // XGBoost's device allocator (a wild paste) lists free and requested.
        let f = collect(&[
            "../src/tree/updater_gpu_hist.cu:784: Exception in gpu_hist: [11:01:50] ../src/c_api/../data/../common/device_helpers.cuh:431: Memory allocation error on worker 0: std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
            "- Free memory: 8126464",
            "- Requested memory: 33554432",
            "",
            "Stack trace:",
        ])
        .unwrap();
        assert_eq!(f.sizes.requested_bytes, Some(33_554_432));
        assert_eq!(f.sizes.free_bytes, Some(8_126_464));
        // Another list item is not the allocator's.
        let f = collect(&[
            "std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
            "- Batch size: 64",
        ])
        .unwrap();
        assert_eq!(f.text.lines().count(), 1);
    }
}
