//! Inference engines whose KV cache is too small to start (vLLM and
//! engines built on its code).

use super::common::{extra, fact, fix_en, framework_fixes, row_en, verdict_en, FieldRow};
use super::docs::Code;
use super::Explain;
use crate::record::{fact, Diagnosis, Era, Finding, Fix, Verdict};
use crate::units::{format_signed, format_size as fmt};

/// Explains `Kind::KvCacheOom` findings.
pub(super) struct KvCacheOom;

impl Explain for KvCacheOom {
    fn headline_en(&self, f: &Finding) -> String {
        match f.era {
            Some(Era::MaxSeqLen) => format!(
                "The inference engine's KV cache holds {} tokens, fewer than max_model_len {}",
                fact(f, fact::KV_CACHE_TOKENS).unwrap_or("?"),
                fact(f, fact::MAX_SEQ_LEN).unwrap_or("?")
            ),
            Some(Era::KvCacheMemory) => format!(
                "The inference engine needs {} of KV cache for max_model_len {} but has {}",
                extra(f, "kv_cache_needed_bytes").map_or("?".into(), fmt),
                fact(f, fact::MAX_SEQ_LEN).unwrap_or("?"),
                extra(f, "kv_cache_available_bytes").map_or("?".into(), fmt)
            ),
            _ => "The inference engine has no GPU memory left for its KV cache".into(),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        if let Some(n) = fact(f, fact::MAX_SEQ_LEN) {
            rows.push(row_en(
                "max_model_len",
                format!("{n} tokens"),
                "the longest request the engine is configured to serve",
                false,
            ));
        }
        if let Some(m) = fact(f, fact::KV_CACHE_TOKENS) {
            rows.push(row_en(
                "KV cache",
                format!("{m} tokens"),
                "how many tokens the reserved KV cache can hold",
                false,
            ));
        }
        let needed = extra(f, "kv_cache_needed_bytes");
        let available = extra(f, "kv_cache_available_bytes");
        if let Some(x) = needed {
            rows.push(row_en(
                "KV cache needed",
                fmt(x),
                "KV cache one request of max_model_len tokens needs",
                false,
            ));
        }
        if let Some(y) = available {
            rows.push(row_en("KV cache available", fmt(y), "memory left for the KV cache after weights, activations and CUDA graphs within gpu_memory_utilization", false));
        }
        if let (Some(x), Some(y)) = (needed, available) {
            rows.push(row_en(
                "Shortfall (derived)",
                format_signed(i128::from(x) - i128::from(y)),
                "needed − available",
                true,
            ));
        }
        if let Some(e) = fact(f, fact::ESTIMATED_MAX_MODEL_LEN) {
            rows.push(row_en(
                "Longest that fits",
                format!("{e} tokens"),
                "the engine's own estimate of the max_model_len the available memory allows",
                false,
            ));
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        kv_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        framework_fixes(d, out, |_, out| kv_fixes(f, out))
    }
}

fn kv_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let detail = match f.era {
        Some(Era::MaxSeqLen) => {
            let n: Option<u64> = fact(f, fact::MAX_SEQ_LEN).and_then(|v| v.parse().ok());
            let m: Option<u64> = fact(f, fact::KV_CACHE_TOKENS).and_then(|v| v.parse().ok());
            match (n, m) {
                // Checked: a mangled paste can print a length below the cache.
                (Some(n), Some(m)) if n > m => format!(
                    "The engine reserves its KV cache at start-up from what is left of gpu_memory_utilization × GPU memory after the weights and a profiling forward pass. That cache holds {m} tokens, but max_model_len is {n}: a single request of full length would need {}% of it more than exists, so the engine refuses to start. Lower max_model_len to at most {m}, or give the cache more memory.",
                    (n - m).saturating_mul(100) / m.max(1)
                ),
                _ => "The KV cache the engine could reserve holds fewer tokens than max_model_len, so one full-length request would not fit.".into(),
            }
        }
        Some(Era::KvCacheMemory) => {
            let needed = extra(f, "kv_cache_needed_bytes");
            let available = extra(f, "kv_cache_available_bytes");
            let len = fact(f, fact::MAX_SEQ_LEN).unwrap_or("?");
            let estimate = fact(f, fact::ESTIMATED_MAX_MODEL_LEN)
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
    out.push(verdict_en(
        Code::KvCacheTooSmall,
        "The KV cache is too small for the configured context length",
        detail,
    ));
}

fn kv_fixes(f: &Finding, out: &mut Vec<Fix>) {
    let cap = fact(f, fact::ESTIMATED_MAX_MODEL_LEN)
        .or_else(|| fact(f, fact::KV_CACHE_TOKENS))
        .map(|n| format!(" to at most {n}"))
        .unwrap_or_default();
    if f.era != Some(Era::NoCacheBlocks) {
        out.push(fix_en(
            "Lower max_model_len",
            format!("Serve a shorter context: --max-model-len (LLM(max_model_len=...)){cap}. Most requests rarely need the model's full context."),
        ));
    }
    out.push(fix_en(
        "Give the engine more of the GPU",
        "Raise gpu_memory_utilization (--gpu-memory-utilization 0.95) if nothing else runs on the GPU; vLLM refuses to start if the GPU has less free memory than that fraction, so stop other processes first (nvidia-smi).",
    ));
    out.push(fix_en(
        "Store the KV cache in 8 bits",
        "--kv-cache-dtype fp8 halves the memory per cached token (check the model's accuracy with it).",
    ));
    out.push(fix_en(
        "Shrink the weights or spread them",
        "A quantised checkpoint (AWQ, GPTQ, or --quantization fp8) frees memory for the cache; --tensor-parallel-size N splits weights and cache over N GPUs.",
    ));
    out.push(fix_en(
        "Free the memory CUDA graphs and profiling take",
        "--enforce-eager skips CUDA-graph capture (slower decoding, more room); lowering --max-num-seqs and --max-num-batched-tokens shrinks the activation peak measured at start-up.",
    ));
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
