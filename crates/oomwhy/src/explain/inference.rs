//! Inference engines whose KV cache is too small to start (vLLM and
//! engines built on its code, text-generation-inference's warm-up,
//! SGLang's memory pools).

use super::catalogue::{Cost, Engines, FixSpec};
use super::common::{extra, fact, fix, format_derived, framework_fixes, row, verdict, FieldRow};
use super::docs::Code;
use super::setting::{Runtime, Vendor};
use super::thresholds::MEM_FRACTION_HIGH_PERCENT;
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};
use crate::say;
use crate::units::{format_signed, format_size as fmt};

/// Explains `Kind::KvCacheOom` findings.
pub(super) struct KvCacheOom;

impl Explain for KvCacheOom {
    fn headline(&self, f: &Finding) -> Said {
        match f.era {
            Some(Era::MaxSeqLen) => say!(
                en: "The inference engine's KV cache holds {m} tokens, fewer than max_model_len {n}",
                zh: "推理引擎的 KV cache 只能放 {m} 个 token，少于 max_model_len {n}",
                m = fact(f, fact::KV_CACHE_TOKENS).unwrap_or("?"),
                n = fact(f, fact::MAX_SEQ_LEN).unwrap_or("?")
            ),
            Some(Era::KvCacheMemory) => say!(
                en: "The inference engine needs {x} of KV cache for max_model_len {n} but has {y}",
                zh: "推理引擎要支持 max_model_len {n}，需要 {x} 的 KV cache，但只有 {y}",
                x = extra(f, "kv_cache_needed_bytes").map_or("?".into(), fmt),
                n = fact(f, fact::MAX_SEQ_LEN).unwrap_or("?"),
                y = extra(f, "kv_cache_available_bytes").map_or("?".into(), fmt)
            ),
            Some(Era::Sglang) if fact(f, "profiled_tokens").is_some() => say!(
                en: "SGLang's weights leave no memory for its KV cache: {tokens} tokens profiled, {asked} asked for",
                zh: "SGLang 的权重没给 KV cache 留下显存：剖析出 {tokens} 个 token，要求的是 {asked} 个",
                tokens = fact(f, "profiled_tokens").unwrap_or("?"),
                asked = fact(f, "max_total_tokens").unwrap_or("?")
            ),
            Some(Era::Sglang) => say!(
                en: "SGLang has too little GPU memory left for its memory pools",
                zh: "SGLang 没有足够的显存留给它的内存池"
            ),
            _ => say!(
                en: "The inference engine has no GPU memory left for its KV cache",
                zh: "推理引擎没有剩余显存留给 KV cache"
            ),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        if let Some(n) = fact(f, fact::MAX_SEQ_LEN) {
            rows.push(row(
                say!(en: "max_model_len", zh: "max_model_len"),
                format!("{n} tokens"),
                say!(
                    en: "the longest request the engine is configured to serve",
                    zh: "引擎配置的可服务的最长请求"
                ),
                false,
            ));
        }
        if let Some(m) = fact(f, fact::KV_CACHE_TOKENS) {
            rows.push(row(
                say!(en: "KV cache", zh: "KV cache"),
                format!("{m} tokens"),
                say!(
                    en: "how many tokens the reserved KV cache can hold",
                    zh: "预留的 KV cache 能放多少个 token"
                ),
                false,
            ));
        }
        let needed = extra(f, "kv_cache_needed_bytes");
        let available = extra(f, "kv_cache_available_bytes");
        if let Some(x) = needed {
            rows.push(row(
                say!(en: "KV cache needed", zh: "需要的 KV cache"),
                fmt(x),
                say!(
                    en: "KV cache one request of max_model_len tokens needs",
                    zh: "一个长度为 max_model_len 个 token 的请求需要的 KV cache"
                ),
                false,
            ));
        }
        if let Some(y) = available {
            rows.push(row(
                say!(en: "KV cache available", zh: "可用的 KV cache"),
                fmt(y),
                say!(
                    en: "memory left for the KV cache within gpu_memory_utilization × GPU memory after the weights and the activation peak measured at start-up (since vLLM 0.21 also the CUDA graphs' estimate)",
                    zh: "在 gpu_memory_utilization × GPU 显存的范围内，除去权重和启动时测出的激活值峰值（vLLM 0.21 起还有 CUDA graph 的估算）之后留给 KV cache 的显存"
                ),
                false,
            ));
        }
        if let (Some(x), Some(y)) = (needed, available) {
            rows.push(row(
                say!(en: "Shortfall (derived)", zh: "缺口（推算）"),
                format_derived(i128::from(x) - i128::from(y), &[x, y]),
                say!(en: "needed − available", zh: "需要的 − 可用的"),
                true,
            ));
        }
        if let Some(e) = fact(f, fact::ESTIMATED_MAX_MODEL_LEN) {
            rows.push(row(
                say!(en: "Longest that fits", zh: "放得下的最长长度"),
                format!("{e} tokens"),
                say!(
                    en: "the engine's own estimate of the max_model_len the available memory allows",
                    zh: "引擎自己估算的、可用显存允许的 max_model_len"
                ),
                false,
            ));
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        kv_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        framework_fixes(d, out, |_, out| match Runtime::of(f) {
            Some(Runtime::Tgi) => tgi_fixes(out),
            Some(Runtime::Sglang) => sglang_fixes(f, out),
            _ => vllm_fixes(f, out),
        })
    }
}

fn kv_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let detail = match f.era {
        Some(Era::MaxSeqLen) => {
            let n: Option<u64> = fact(f, fact::MAX_SEQ_LEN).and_then(|v| v.parse().ok());
            let m: Option<u64> = fact(f, fact::KV_CACHE_TOKENS).and_then(|v| v.parse().ok());
            match (n, m) {
                // Checked: a mangled paste can print a length below the cache.
                (Some(n), Some(m)) if n > m => say!(
                    en: "The engine reserves its KV cache at start-up from what is left of gpu_memory_utilization × GPU memory after the weights and a profiling forward pass. That cache holds {m} tokens, but max_model_len is {n}: a single request of full length would need {percent}% of it more than exists, so the engine refuses to start. Lower max_model_len to at most {m}, or give the cache more memory.",
                    zh: "引擎在启动时预留 KV cache：gpu_memory_utilization × GPU 显存，减去权重和一次剖析用的前向传播之后剩下的部分。这个 cache 能放 {m} 个 token，而 max_model_len 是 {n}：一个满长度的请求需要比现有的多 {percent}%，所以引擎拒绝启动。把 max_model_len 调低到不超过 {m}，或者给 cache 更多显存。",
                    percent = (n - m).saturating_mul(100) / m.max(1),
                    m = m,
                    n = n
                ),
                _ => say!(
                    en: "The KV cache the engine could reserve holds fewer tokens than max_model_len, so one full-length request would not fit.",
                    zh: "引擎能预留的 KV cache 放得下的 token 比 max_model_len 少，一个满长度的请求都放不下。"
                ),
            }
        }
        Some(Era::KvCacheMemory) => {
            let needed = extra(f, "kv_cache_needed_bytes");
            let available = extra(f, "kv_cache_available_bytes");
            let len = fact(f, fact::MAX_SEQ_LEN).unwrap_or("?");
            let estimate = fact(f, fact::ESTIMATED_MAX_MODEL_LEN)
                .map(|e| {
                    say!(
                        en: "The engine estimates the longest context that fits is {e} tokens.",
                        zh: "引擎估算放得下的最长上下文是 {e} 个 token。",
                        e = e
                    )
                })
                .unwrap_or_default();
            match (needed, available) {
                // vLLM prints both figures rounded to 0.01 GiB: a gap within
                // their rounding is not a figure to state.
                (Some(x), Some(y)) if format_derived(i128::from(x) - i128::from(y), &[x, y]) == "≈ 0" => say!(
                    en: "One request of max_model_len {len} tokens needs {x} of KV cache and {y} is left for it, less apart than the rounding of the printed figures: the engine may use gpu_memory_utilization × GPU memory, and the KV cache gets what remains of it after the weights and the activation peak measured at start-up. The cache is only just too small, so a slightly shorter max_model_len or slightly more memory is enough.",
                    zh: "一个 max_model_len 为 {len} 个 token 的请求需要 {x} 的 KV cache，留给它的是 {y}，两者之差小于打印数字的舍入误差：引擎可用的是 gpu_memory_utilization × GPU 显存，KV cache 只能拿到其中除去权重和启动时测出的激活值峰值之后剩下的部分。cache 只是差一点点，把 max_model_len 稍微调短或多给一点显存就够了。",
                    len = len,
                    x = fmt(x),
                    y = fmt(y)
                ),
                (Some(x), Some(y)) => say!(
                    en: "One request of max_model_len {len} tokens needs {x} of KV cache, but only {y} is left for it — {short} short: the engine may use gpu_memory_utilization × GPU memory, and the KV cache gets what remains of it after the weights and the activation peak measured at start-up.",
                    zh: "一个 max_model_len 为 {len} 个 token 的请求需要 {x} 的 KV cache，但留给它的只有 {y}，差 {short}：引擎可用的是 gpu_memory_utilization × GPU 显存，KV cache 只能拿到其中除去权重和启动时测出的激活值峰值之后剩下的部分。",
                    len = len,
                    short = format_signed(i128::from(x) - i128::from(y)),
                    x = fmt(x),
                    y = fmt(y)
                ),
                _ => say!(
                    en: "One request of max_model_len {len} tokens needs more KV cache than is left after the weights and activations.",
                    zh: "一个 max_model_len 为 {len} 个 token 的请求需要的 KV cache，比除去权重和激活值之后剩下的还多。",
                    len = len
                ),
            }
            .then(estimate)
        }
        Some(Era::TgiWarmup) => match fact(f, "prefill_tokens") {
            Some(prefill) => say!(
                en: "After loading the weights, text-generation-inference warms up by running one prefill batch of {prefill} tokens (--max-batch-prefill-tokens) beside its KV cache; that batch did not fit in GPU memory, so the server stops. Its message names the settings to lower: --max-batch-prefill-tokens and --max-batch-total-tokens.",
                zh: "加载完权重后，text-generation-inference 会在 KV cache 旁边跑一个 {prefill} 个 token 的 prefill batch 来预热（--max-batch-prefill-tokens）；这个 batch 放不进显存，于是服务停止。它的报错写明了要调低的设置：--max-batch-prefill-tokens 和 --max-batch-total-tokens。",
                prefill = prefill
            ),
            None => say!(
                en: "After loading the weights, text-generation-inference warms up by running one prefill batch (--max-batch-prefill-tokens) beside its KV cache; that batch did not fit in GPU memory, so the server stops. Its message names the settings to lower: --max-batch-prefill-tokens and --max-batch-total-tokens.",
                zh: "加载完权重后，text-generation-inference 会在 KV cache 旁边跑一个 prefill batch 来预热（--max-batch-prefill-tokens）；这个 batch 放不进显存，于是服务停止。它的报错写明了要调低的设置：--max-batch-prefill-tokens 和 --max-batch-total-tokens。"
            ),
        },
        Some(Era::Sglang) if f.text.contains("alloc_req_slots") => say!(
            en: "SGLang's pool of request slots was full: more requests were running at once than it has slots for. Its message asks for a smaller --max-running-requests.",
            zh: "SGLang 的请求槽池满了：同时运行的请求比它的槽位还多。它的报错建议调小 --max-running-requests。"
        ),
        Some(Era::Sglang) => say!(
            en: "SGLang gives the weights and its KV cache pool --mem-fraction-static of the GPU's memory and leaves the rest for activations and CUDA graphs; after the weights, too little of that share was left for the KV cache pool (none at all when the profiled token count is negative).",
            zh: "SGLang 把 GPU 显存的 --mem-fraction-static 这一份给权重和 KV cache 池，其余留给激活值和 CUDA graph；除去权重之后，这一份里留给 KV cache 池的太少了（剖析出的 token 数为负时是一点也没有）。"
        ),
        _ => say!(
            en: "After loading the weights and profiling a forward pass, nothing was left of the memory the engine may use (gpu_memory_utilization × GPU memory, 0.9 by default in vLLM) for the KV cache: the weights and the activation peak measured at start-up (since vLLM 0.21 also the CUDA graphs' estimate) already take the whole budget. Typical causes: the model barely fits this GPU, another process holds GPU memory, or gpu_memory_utilization is set low.",
            zh: "加载权重并剖析一次前向传播之后，引擎可用的显存（gpu_memory_utilization × GPU 显存，vLLM 默认 0.9）已经没有剩余留给 KV cache：权重和启动时测出的激活值峰值（vLLM 0.21 起还有 CUDA graph 的估算）已经占满了全部额度。常见原因：模型在这块 GPU 上勉强放得下、别的进程占着显存，或者 gpu_memory_utilization 设得太低。"
        ),
    };
    // SGLang's pools are sized by --mem-fraction-static, not by a context
    // length the message names.
    let title = if f.era == Some(Era::Sglang) {
        say!(
            en: "The weights leave too little of SGLang's static share for its KV cache",
            zh: "权重占掉之后，SGLang 的静态份额里留给 KV cache 的太少了"
        )
    } else {
        say!(
            en: "The KV cache is too small for the configured context length",
            zh: "KV cache 放不下配置的上下文长度"
        )
    };
    out.push(verdict(Code::KvCacheTooSmall, title, detail));
}

const VLLM: Engines = Engines::Only(&[Runtime::Vllm]);
const VLLM_DOCS: &[&str] = &["vLLM documentation: Engine arguments; Conserving memory"];

const LOWER_MAX_MODEL_LEN: FixSpec = FixSpec::new(
    "vllm-lower-max-model-len",
    "Lower max_model_len",
    "调低 max_model_len",
)
.engines(VLLM)
.cost(Cost::Quality)
.sources(VLLM_DOCS);

const GPU_MEMORY_UTILIZATION: FixSpec = FixSpec::new(
    "vllm-gpu-memory-utilization",
    "Give the engine more of the GPU",
    "让引擎用上 GPU 更多的显存",
)
.engines(VLLM)
.vendors(&[Vendor::Nvidia])
.sources(VLLM_DOCS);

const KV_CACHE_FP8: FixSpec = FixSpec::new(
    "vllm-kv-cache-fp8",
    "Store the KV cache in 8 bits",
    "用 8 位存 KV cache",
)
.engines(VLLM)
.cost(Cost::Quality)
.sources(&["vLLM documentation: Quantized KV cache (--kv-cache-dtype)"])
.applied_when(&[
    "--kv-cache-dtype fp8",
    "kv_cache_dtype=\"fp8",
    "kv_cache_dtype=fp8",
]);

const SHRINK_OR_SPREAD: FixSpec = FixSpec::new(
    "vllm-quantise-or-tensor-parallel",
    "Shrink the weights or spread them",
    "缩小权重，或把它们分到多块 GPU 上",
)
.engines(VLLM)
.cost(Cost::Quality)
.sources(VLLM_DOCS);

const ENFORCE_EAGER: FixSpec = FixSpec::new(
    "vllm-enforce-eager",
    "Free the memory CUDA graphs and profiling take",
    "腾出 CUDA graph 和启动剖析占用的显存",
)
.engines(VLLM)
.cost(Cost::Speed)
.sources(VLLM_DOCS)
.applied_when(&["--enforce-eager", "enforce_eager=true"]);

fn vllm_fixes(f: &Finding, out: &mut Vec<Fix>) {
    let cap = fact(f, fact::ESTIMATED_MAX_MODEL_LEN).or_else(|| fact(f, fact::KV_CACHE_TOKENS));
    if f.era != Some(Era::NoCacheBlocks) {
        out.push(fix(
            &LOWER_MAX_MODEL_LEN,
            match cap {
                Some(n) => say!(
                    en: "Serve a shorter context: --max-model-len (LLM(max_model_len=...)) to at most {n}. Most requests rarely need the model's full context.",
                    zh: "服务更短的上下文：把 --max-model-len（LLM(max_model_len=...)）设为不超过 {n}。大多数请求很少用到模型的完整上下文。",
                    n = n
                ),
                None => say!(
                    en: "Serve a shorter context: --max-model-len (LLM(max_model_len=...)). Most requests rarely need the model's full context.",
                    zh: "服务更短的上下文：调低 --max-model-len（LLM(max_model_len=...)）。大多数请求很少用到模型的完整上下文。"
                ),
            },
        ));
    }
    out.push(fix(
        &GPU_MEMORY_UTILIZATION,
        say!(
            en: "Raise gpu_memory_utilization (--gpu-memory-utilization 0.95) if nothing else runs on the GPU; vLLM refuses to start if the GPU has less free memory than that fraction, so stop other processes first (nvidia-smi).",
            zh: "如果这块 GPU 上没有别的任务，调高 gpu_memory_utilization（--gpu-memory-utilization 0.95）；GPU 的空闲显存少于这个比例时 vLLM 会拒绝启动，所以先结束其他进程（nvidia-smi）。"
        ),
    ));
    out.push(fix(
        &KV_CACHE_FP8,
        say!(
            en: "--kv-cache-dtype fp8 halves the memory per cached token (check the model's accuracy with it).",
            zh: "--kv-cache-dtype fp8 让每个缓存 token 的显存减半（要检查模型在这个设置下的精度）。"
        ),
    ));
    out.push(fix(
        &SHRINK_OR_SPREAD,
        say!(
            en: "A quantised checkpoint (AWQ, GPTQ, or --quantization fp8) frees memory for the cache; --tensor-parallel-size N splits weights and cache over N GPUs.",
            zh: "量化的 checkpoint（AWQ、GPTQ，或 --quantization fp8）能给 cache 腾出显存；--tensor-parallel-size N 把权重和 cache 分到 N 块 GPU 上。"
        ),
    ));
    out.push(fix(
        &ENFORCE_EAGER,
        say!(
            en: "Lowering --max-num-seqs and --max-num-batched-tokens shrinks the activation peak measured at start-up, and the KV cache gets what is left after it; --enforce-eager skips CUDA-graph capture (slower decoding), whose estimated memory the start-up check subtracts since vLLM 0.21.",
            zh: "调低 --max-num-seqs 和 --max-num-batched-tokens 能降低启动时测出的激活值峰值，KV cache 分到的正是减去它之后剩下的；--enforce-eager 跳过 CUDA graph 捕获（解码变慢），vLLM 0.21 起启动检查会减去 CUDA graph 的估算显存。"
        ),
    ));
}

const TGI_BATCH_TOKENS: FixSpec = FixSpec::new(
    "tgi-lower-batch-tokens",
    "Lower text-generation-inference's batch token limits",
    "调低 text-generation-inference 的 batch token 上限",
)
.engines(Engines::Only(&[Runtime::Tgi]))
.cost(Cost::Speed)
.sources(&["text-generation-inference documentation: Launcher arguments"]);

const TGI_SHARD_OR_QUANTIZE: FixSpec = FixSpec::new(
    "tgi-shard-or-quantize",
    "Spread or shrink text-generation-inference's model",
    "把 text-generation-inference 的模型分到多块 GPU 上或缩小它",
)
.engines(Engines::Only(&[Runtime::Tgi]))
.cost(Cost::Quality)
.sources(&["text-generation-inference documentation: Launcher arguments"]);

fn tgi_fixes(out: &mut Vec<Fix>) {
    out.push(fix(
        &TGI_BATCH_TOKENS,
        say!(
            en: "As the message says, lower --max-batch-prefill-tokens (the warm-up batch) and --max-batch-total-tokens; --max-input-tokens and --max-total-tokens bound each request and must stay within them.",
            zh: "照报错说的，调低 --max-batch-prefill-tokens（预热用的 batch）和 --max-batch-total-tokens；--max-input-tokens 和 --max-total-tokens 限定每个请求的长度，必须不超过它们。"
        ),
    ));
    out.push(fix(
        &TGI_SHARD_OR_QUANTIZE,
        say!(
            en: "--num-shard N splits the model over N GPUs; --quantize (e.g. awq, gptq, eetq, bitsandbytes) shrinks the weights and leaves more room for the batch and its KV cache.",
            zh: "--num-shard N 把模型分到 N 块 GPU 上；--quantize（如 awq、gptq、eetq、bitsandbytes）缩小权重，给 batch 和它的 KV cache 留出更多空间。"
        ),
    ));
}

const SGLANG: Engines = Engines::Only(&[Runtime::Sglang]);
const SGLANG_DOCS: &[&str] = &["SGLang documentation: Server arguments"];

const SGLANG_RUNNING_REQUESTS: FixSpec = FixSpec::new(
    "sglang-fewer-running-requests",
    "Run fewer requests at once in SGLang",
    "让 SGLang 同时运行的请求少一些",
)
.engines(SGLANG)
.cost(Cost::Speed)
.sources(SGLANG_DOCS);

const SGLANG_MEM_FRACTION: FixSpec = FixSpec::new(
    "sglang-raise-mem-fraction-static",
    "Give SGLang's KV cache pool more of the GPU",
    "给 SGLang 的 KV cache 池更多显存",
)
.engines(SGLANG)
.sources(SGLANG_DOCS);

const SGLANG_SHRINK_OR_SPREAD: FixSpec = FixSpec::new(
    "sglang-tp-or-quantize",
    "Spread or shrink SGLang's model",
    "把 SGLang 的模型分到多块 GPU 上或缩小它",
)
.engines(SGLANG)
.cost(Cost::Quality)
.sources(SGLANG_DOCS);

fn sglang_fixes(f: &Finding, out: &mut Vec<Fix>) {
    if f.text.contains("alloc_req_slots") {
        out.push(fix(
            &SGLANG_RUNNING_REQUESTS,
            say!(
                en: "As the message says, set a smaller --max-running-requests: each running request takes a slot in the request pool.",
                zh: "照报错说的，把 --max-running-requests 设小一些：每个正在运行的请求都占请求池里的一个槽位。"
            ),
        ));
        return spread_or_shrink_sglang(out);
    }
    // A fraction already at the high mark leaves nothing to raise; a
    // negative profiled budget means the weights alone overflow the
    // share, which a few more percent rarely cover: the model needs more
    // GPUs or smaller weights first.
    let fraction_high = fact(f, "mem_fraction_static")
        .and_then(|v| v.parse::<f64>().ok())
        .is_some_and(|v| v * 100.0 >= MEM_FRACTION_HIGH_PERCENT as f64);
    let overflowed = fact(f, "profiled_tokens").is_some_and(|v| v.starts_with('-'));
    if fraction_high || overflowed {
        spread_or_shrink_sglang(out);
    }
    if fraction_high {
        return;
    }
    let raise = if overflowed {
        say!(
            en: "Only if --mem-fraction-static is below 0.9 and nothing else uses the GPU, raise it (e.g. to 0.9): the weights and the KV cache pool share that fraction. A negative profiled budget means the weights alone take more than the share, so a few more percent rarely suffice; at 0.9 or above, more GPUs or smaller weights are the way.",
            zh: "只有在 --mem-fraction-static 低于 0.9 并且这块 GPU 上没有别的任务时，才调高它（如调到 0.9）：权重和 KV cache 池共用这一份显存。剖析出的预算为负，说明光是权重就超过了这一份，多几个百分点通常不够；已经是 0.9 或更高时，只能用更多 GPU 或更小的权重。"
        )
    } else {
        say!(
            en: "Raise --mem-fraction-static (e.g. 0.85–0.9) when nothing else uses the GPU: the weights and the KV cache pool share that fraction. If a higher value then fails with CUDA out of memory while serving, the activations no longer fit beside it: the model needs more GPUs or smaller weights at this context length.",
            zh: "如果这块 GPU 上没有别的任务，调高 --mem-fraction-static（如 0.85–0.9）：权重和 KV cache 池共用这一份显存。如果调高之后在服务时报 CUDA 显存不足，说明旁边已经放不下激活值：在这个上下文长度下，模型需要更多 GPU 或更小的权重。"
        )
    };
    out.push(fix(&SGLANG_MEM_FRACTION, raise));
    if !overflowed {
        spread_or_shrink_sglang(out);
    }
}

fn spread_or_shrink_sglang(out: &mut Vec<Fix>) {
    out.push(fix(
        &SGLANG_SHRINK_OR_SPREAD,
        say!(
            en: "--tp-size N splits weights and KV cache over N GPUs (more GPUs, or more nodes with --nnodes); a quantised or smaller checkpoint (AWQ, GPTQ, or --quantization fp8) frees memory for the cache; --context-length caps the longest request.",
            zh: "--tp-size N 把权重和 KV cache 分到 N 块 GPU 上（更多 GPU，或用 --nnodes 跨更多节点）；量化的或更小的 checkpoint（AWQ、GPTQ，或 --quantization fp8）能给 cache 腾出显存；--context-length 限定最长的请求。"
        ),
    ));
}

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    LOWER_MAX_MODEL_LEN,
    GPU_MEMORY_UTILIZATION,
    KV_CACHE_FP8,
    SHRINK_OR_SPREAD,
    ENFORCE_EAGER,
    TGI_BATCH_TOKENS,
    TGI_SHARD_OR_QUANTIZE,
    SGLANG_RUNNING_REQUESTS,
    SGLANG_MEM_FRACTION,
    SGLANG_SHRINK_OR_SPREAD,
];

#[cfg(test)]
mod sglang_tests {
    use crate::decode_str;

    fn ids(text: &str) -> Vec<String> {
        assert_eq!(decode_str(text).len(), 1, "{text}");
        crate::explain::test_support::fix_ids(text)
    }

    /// SGLang's scheduler log (a DeepSeek-V3 paste, fixtures/wild): its own
    /// form and figures, not vLLM's, and the weights overflow the share.
    #[test]
    fn a_negative_profiled_budget_is_read_as_sglang() {
        let line = "[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.";
        let f = &decode_str(line)[0];
        assert_eq!(f.version_hint.as_deref(), Some("SGLang"));
        let headline = crate::explain::headline(f);
        assert!(
            headline.contains("-561981") && headline.contains("131072"),
            "{headline}"
        );
        assert!(!headline.contains('?'), "{headline}");
        let ids = ids(line);
        assert_eq!(ids[0], "sglang-tp-or-quantize", "{ids:?}");
    }

    /// SGLang's start-up message (its model runner) states the fraction:
    /// from 0.9 raising it is not offered, below it is.
    #[test]
    fn a_high_mem_fraction_is_not_raised() {
        let at = |v: &str| {
            format!("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: self.server_args.mem_fraction_static={v}")
        };
        let high = ids(&at("0.9"));
        assert!(
            !high.iter().any(|x| x == "sglang-raise-mem-fraction-static"),
            "{high:?}"
        );
        assert_eq!(high[0], "sglang-tp-or-quantize", "{high:?}");
        let below = ids(&at("0.89"));
        assert_eq!(below[0], "sglang-raise-mem-fraction-static", "{below:?}");
    }
}
