//! Inference engines that reserve a KV cache at start-up and refuse to start
//! when it is too small (vLLM and engines built on its code):
//!
//! * `no_cache_blocks` — `No available memory for the cache blocks. Try increasing
//!   `gpu_memory_utilization` when initializing the engine.` (vLLM V0
//!   `raise_if_cache_size_invalid` in vllm/worker/worker.py; V1
//!   `_check_enough_kv_cache_memory` in vllm/v1/core/kv_cache_utils.py, which
//!   later appends a docs URL and a note on the CPU backend).
//! * `max_seq_len` — V0: `The model's max seq len (N) is larger than the maximum
//!   number of tokens that can be stored in KV cache (M). Try increasing
//!   `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.`
//! * SGLang: `Loaded weights leave no GPU memory for the KV cache under
//!   --mem-fraction-static=F.` (ModelRunner, when the weights took the share).
//! * `kv_cache_memory` — V1: `To serve at least one request with the models's max seq
//!   len (N), (X GiB KV cache is needed, which is larger than the available KV cache
//!   memory (Y GiB). Based on the available memory, the estimated maximum model length
//!   is E. Try increasing ...` (`models's` was later corrected to `model's`).

use super::text::{glues_by_score, grows, int};
use super::{find_size, re};
use super::{Family, Message, SizeReader};
use crate::record::{fact, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    anchor: Regex,
    check_frame: Regex,
    no_blocks: Regex,
    v0: Regex,
    v1_len: Regex,
    v1_needed: Regex,
    v1_available: Regex,
    v1_estimate: Regex,
    hint: Regex,
    tgi: Regex,
    sglang_fraction: Regex,
    blocks: Regex,
    profiled: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        anchor: re(concat!(
            r"No available memory for the cache blocks",
            r"|The model's max seq len \(\d+\) is larger than the maximum number of tokens",
            r"|To serve at least one request with the models?'s max seq len",
            // TGI's warm-up and SGLang's start-up and scheduler failures.
            r"|Not enough memory to handle \d+ (?:total tokens with \d+ )?prefill tokens",
            r"|Not enough memory\. Please try to increase --mem-fraction-static",
            r"|alloc_req_slots runs out of memory",
            // SGLang's model runner when the weights took the static share.
            r"|Loaded weights leave no GPU memory for the KV cache",
            // vLLM's start-up count of KV-cache blocks when none fit (older
            // releases: `# GPU blocks`, then `# cuda blocks`), and SGLang's
            // negative profiled token budget.
            r"|# (?:GPU|cuda|CUDA) blocks: (?:0|-\d+)\b",
            // (Its line names the budget asked for first: the message
            // starts there.)
            r"|(?:max_total_tokens=\d+ )?is larger than the profiled value -\d+",
            // A traceback's frame in vLLM's own check of the KV cache's
            // size (`File ".../vllm/v1/core/kv_cache_utils.py", line 699, in
            // check_enough_kv_cache_memory`): the function raises only
            // that the cache does not fit, so a paste cut before the
            // exception's line still says it.
            r"|\bin _?check_enough_kv_cache_memory\s*$",
        )),
        check_frame: re(r"\bin _?check_enough_kv_cache_memory\s*$"),
        blocks: re(r"# (?:GPU|cuda|CUDA) blocks: (-?\d+), # CPU blocks: (\d+)"),
        profiled: re(r"max_total_tokens=(\d+) is larger than the profiled value (-\d+)"),
        tgi: re(r"Not enough memory to handle (?:(\d+) total tokens with )?(\d+) prefill tokens"),
        sglang_fraction: re(r"mem[_-]fraction[_-]static=(\d+(?:\.\d+)?)"),
        no_blocks: re(r"No available memory for the cache blocks"),
        v0: re(r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((\d+)\)"),
        v1_len: re(r"with the models?'s max seq len \((\d+)\)"),
        v1_needed: re(r"\(?{SIZE} KV cache is needed"),
        v1_available: re(r"available KV cache memory \({SIZE}\)"),
        v1_estimate: re(r"estimated maximum model length is (\d+)"),
        hint: re(r"Try increasing `gpu_memory_utilization`"),
    })
}

fn score(text: &str) -> usize {
    let p = patterns();
    [
        &p.v0,
        &p.v1_len,
        &p.v1_needed,
        &p.v1_available,
        &p.v1_estimate,
        &p.hint,
    ]
    .iter()
    .filter(|r| r.is_match(text))
    .count()
        + usize::from(text.contains("when initializing the engine"))
        + usize::from(text.contains("conserving_memory"))
}

/// vLLM's KV-cache capacity errors.
pub struct KvCacheOom;

impl Family for KvCacheOom {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "No available memory for the cache blocks",
            "that can be stored in KV cache",
            "max seq len (",
            "Not enough memory",
            "alloc_req_slots runs out of memory",
            "leave no GPU memory for the KV cache",
            "blocks: ",
            "larger than the profiled value",
            "check_enough_kv_cache_memory",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        patterns().anchor.find(line).map(|m| m.start())
    }

    /// vLLM's count of KV-cache blocks, which starts a message when it is
    /// 0; elsewhere the pattern matches digits as a class.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&["blocks: "])
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        // From the check's frame: its source lines (the `raise` and its
        // string) and the exception's line, until a blank line or a frame
        // of another function.
        if lines
            .first()
            .is_some_and(|first| patterns().check_frame.is_match(first))
        {
            return lines.len() < 12 && !next.trim().is_empty() && !next.contains("File \"");
        }
        grows(lines, next, 6, score)
    }

    /// A traceback hard-wrapped at a fixed column (`(4.26 GiB KV cach` /
    /// `e is needed, ...`): the cut word is glued where that reads more.
    fn glues(&self, lines: &[String], next: &str) -> bool {
        glues_by_score(lines, next, 6, score)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let text = message.joined();
        let mut finding = message.finding(Kind::KvCacheOom, text.clone());
        // Only the check's frame: what it raises may be cut from the paste.
        let from_frame = message
            .lines
            .first()
            .is_some_and(|first| p.check_frame.is_match(first));
        let mut notes = Vec::new();
        let mut sizes = SizeReader::new(&mut notes);
        if let Some(c) = p.blocks.captures(&text) {
            finding.era = Some(Era::NoCacheBlocks);
            finding.version_hint = Some("vLLM V0 engine".into());
            finding.facts.insert("gpu_blocks".into(), c[1].to_string());
            finding.facts.insert("cpu_blocks".into(), c[2].to_string());
        } else if let Some(c) = p.profiled.captures(&text) {
            finding.era = Some(Era::Sglang);
            finding.version_hint = Some("SGLang".into());
            finding
                .facts
                .insert("max_total_tokens".into(), c[1].to_string());
            finding
                .facts
                .insert("profiled_tokens".into(), c[2].to_string());
            if let Some(c) = p.sglang_fraction.captures(&text) {
                finding
                    .facts
                    .insert("mem_fraction_static".into(), c[1].to_string());
            }
        } else if p.no_blocks.is_match(&text) {
            finding.era = Some(Era::NoCacheBlocks);
        } else if let Some(c) = p.tgi.captures(&text) {
            finding.era = Some(Era::TgiWarmup);
            finding.version_hint = Some("text-generation-inference".into());
            if let Some(total) = c.get(1) {
                finding
                    .facts
                    .insert("total_tokens".into(), total.as_str().to_string());
            }
            finding
                .facts
                .insert("prefill_tokens".into(), c[2].to_string());
        } else if text.contains("mem-fraction-static") || text.contains("alloc_req_slots") {
            finding.era = Some(Era::Sglang);
            finding.version_hint = Some("SGLang".into());
            if let Some(c) = p.sglang_fraction.captures(&text) {
                finding
                    .facts
                    .insert("mem_fraction_static".into(), c[1].to_string());
            }
        } else if let Some(c) = p.v0.captures(&text) {
            finding.era = Some(Era::MaxSeqLen);
            finding.version_hint = Some("vLLM V0 engine (≤ ≈0.10)".into());
            finding
                .facts
                .insert(fact::MAX_SEQ_LEN.into(), c[1].to_string());
            finding
                .facts
                .insert(fact::KV_CACHE_TOKENS.into(), c[2].to_string());
        } else {
            finding.era = Some(Era::KvCacheMemory);
            finding.version_hint = Some("vLLM V1 engine".into());
            if let Some(n) = int::<u64>(&p.v1_len, &text, 1) {
                finding
                    .facts
                    .insert(fact::MAX_SEQ_LEN.into(), n.to_string());
            }
            let needed = find_size(&p.v1_needed, &text, 1, "KV cache needed", &mut sizes);
            let available = find_size(
                &p.v1_available,
                &text,
                1,
                "available KV cache memory",
                &mut sizes,
            );
            finding
                .sizes
                .extra
                .insert("kv_cache_needed_bytes".into(), needed);
            finding
                .sizes
                .extra
                .insert("kv_cache_available_bytes".into(), available);
            if let Some(e) = int::<u64>(&p.v1_estimate, &text, 1) {
                finding
                    .facts
                    .insert(fact::ESTIMATED_MAX_MODEL_LEN.into(), e.to_string());
            }
            finding.truncated = needed.is_none() || available.is_none();
        }
        if let Some(url) = re_url().find(&text) {
            finding.facts.insert(
                "docs_url".into(),
                url.as_str().trim_end_matches('.').to_string(),
            );
        }
        finding.notes = notes;
        finding.truncated |= from_frame;
        Some(finding)
    }
}

fn re_url() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| re(r"https://docs\.vllm\.ai/\S+"))
}

/// TensorRT-LLM's executor when a component does not fit
/// (`tensorrt_llm/_torch/pyexecutor/py_executor_creator.py`,
/// `_ExecutorMemoryMonitor._maybe_explain_if_oom`): `Executor creation
/// failed due to insufficient GPU memory.`, then the component (`The
/// following component could not be created: KV cache`), the device's total
/// and the free memory before the attempt (`Total GPU memory (GiB): 140.06`,
/// `Free GPU memory before component creation attempt (GiB): 108.86`), and
/// a table of the components created before it (`Model: 139.55 / 110.70`).
/// The figures are in the unit the heading names.
pub struct ExecutorMemory;

struct ExecutorPatterns {
    anchor: Regex,
    body: Regex,
    cut_row: Regex,
    component: Regex,
    total: Regex,
    free: Regex,
}

fn executor_patterns() -> &'static ExecutorPatterns {
    static P: OnceLock<ExecutorPatterns> = OnceLock::new();
    P.get_or_init(|| ExecutorPatterns {
        anchor: re(r"\b(\w+) creation failed due to insufficient GPU memory\b"),
        body: re(concat!(
            r"^\s*(?:The following component could not be created: ",
            r"|Total GPU memory \(|Free GPU memory before component creation attempt \(",
            r"|Previously created components and free GPU memory",
            r"|Please refer to the TensorRT-LLM documentation",
            // A row of the table (`Initial KV cache (temporary for KV cache
            // size estimation): 110.70 / 110.33`), cut or whole.
            r"|[A-Za-z_][\w ()\-/.,]*: \d+(?:\.\d+)? / \d+(?:\.\d+)?\s*$)",
        )),
        cut_row: re(r"^\s*[A-Za-z_][\w ()\-/.,]*$"),
        component: re(r"The following component could not be created: ([^\n]+?)\s*(?:\n|$)"),
        total: re(r"Total GPU memory \(([KMGT]i?B)\): (\d+(?:\.\d+)?)"),
        free: re(
            r"Free GPU memory before component creation attempt \(([KMGT]i?B)\): (\d+(?:\.\d+)?)",
        ),
    })
}

impl Family for ExecutorMemory {
    fn triggers(&self) -> &'static [&'static str] {
        // On the piece ` fai` the prefilter already searches for.
        &["failed due to insufficient"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        executor_patterns().anchor.find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        if lines.len() >= 48 {
            return false;
        }
        // One blank line between the parts; the table's rows after them.
        if next.trim().is_empty() {
            return lines.last().is_some_and(|l| !l.trim().is_empty());
        }
        let p = executor_patterns();
        // A row the paste cut short (`Additional executor resources
        // (temporary fo`), right after the table's heading or a row.
        let in_table = lines.last().is_some_and(|l| {
            l.contains("Previously created components") || p.body.is_match(l) && l.contains(" / ")
        });
        p.body.is_match(next) || (in_table && p.cut_row.is_match(next))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = executor_patterns();
        let text = message.lines.join("\n");
        let c = p.anchor.captures(&text)?;
        let mut finding = message.finding(Kind::GenericOom, text.trim_end().to_string());
        finding
            .facts
            .insert(fact::REPORTED_BY.into(), "TensorRT-LLM".into());
        // The component that did not fit (`KV cache`, `Model`, `Sampler`),
        // else what the anchor says failed (`Executor`).
        let component = p
            .component
            .captures(&text)
            .map_or_else(|| c[1].to_string(), |m| m[1].to_string());
        finding.facts.insert("resource".into(), component);
        let size = |re: &Regex| {
            let m = re.captures(&text)?;
            crate::units::to_bytes(&m[2], &m[1]).ok()
        };
        finding.sizes.total_bytes = size(&p.total);
        finding.sizes.free_bytes = size(&p.free);
        finding.facts.insert(fact::MEMORY.into(), "device".into());
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(lines: &[&str]) -> Option<Finding> {
        crate::detect::decode_lines(&KvCacheOom, lines)
    }

    #[test]
    fn every_spelling() {
        let f = decode(&["ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."]).unwrap();
        assert_eq!(f.era, Some(Era::NoCacheBlocks));
        assert_eq!(f.exception.as_deref(), Some("ValueError"));
        assert!(!f.facts.contains_key("max_seq_len"));

        let f = decode(&["ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."]).unwrap();
        assert_eq!(
            f.facts["docs_url"],
            "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"
        );

        let f = decode(&["ValueError: The model's max seq len (30000) is larger than the maximum number of tokens that can be stored in KV cache (19632). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."]).unwrap();
        assert_eq!(f.era, Some(Era::MaxSeqLen));
        assert_eq!(f.facts["max_seq_len"], "30000");
        assert_eq!(f.facts["kv_cache_tokens"], "19632");

        let f = decode(&["(EngineCore_DP0 pid=18799) ValueError: To serve at least one request with the models's max seq len (40960), (5.62 GiB KV cache is needed, which is larger than the available KV cache memory (4.50 GiB). Based on the available memory, the estimated maximum model length is 32768. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."]).unwrap();
        assert_eq!(f.era, Some(Era::KvCacheMemory));
        assert_eq!(f.facts["max_seq_len"], "40960");
        assert_eq!(f.facts["estimated_max_model_len"], "32768");
        let e = |k: &str| f.sizes.extra.get(k).copied().flatten();
        assert_eq!(e("kv_cache_needed_bytes"), Some(6_034_429_051)); // round(5.62 × 2^30)
        assert_eq!(e("kv_cache_available_bytes"), Some(4_831_838_208)); // 4.50 × 2^30
        assert!(!f.truncated);

        // "model's" spelling, one-decimal sizes, no estimate.
        let f = decode(&["ValueError: To serve at least one request with the model's max seq len (4096), (1.0 GiB KV cache is needed, which is larger than the available KV cache memory (0.58 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."]).unwrap();
        assert_eq!(f.facts["max_seq_len"], "4096");
        assert!(!f.facts.contains_key("estimated_max_model_len"));
        assert_eq!(f.sizes.extra["kv_cache_needed_bytes"], Some(1 << 30));
    }

    #[test]
    fn wrapped_v1_message_joins() {
        let f = decode(&[
            "ValueError: To serve at least one request with the models's max seq len (131072),",
            "(9.50 GiB KV cache is needed, which is larger than the available KV cache",
            "memory (6.91 GiB). Based on the available memory, the estimated maximum model length is 91520.",
            "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
            "INFO 06-02 05:17:19 [launcher.py:80] Shutting down",
        ])
        .unwrap();
        assert_eq!(f.facts["estimated_max_model_len"], "91520");
        assert_eq!(
            f.sizes.extra["kv_cache_available_bytes"],
            Some(7_419_556_004)
        );
        assert!(!f.text.contains("Shutting down"));
    }

    #[test]
    fn hard_wrapped_v1_message_glues_the_cut_word() {
        // A traceback pasted from a terminal cut at a fixed column, inside
        // `cache` (the engine core's prefix is on every line).
        let text = "(EngineCore pid=316)     raise ValueError(\n(EngineCore pid=316) ValueError: To serve at least one request with the model's max seq len (100000), (4.26 GiB KV cach\ne is needed, which is larger than the available KV cache memory (4.25 GiB). Based on the avai\n";
        let found = crate::decode_str(text);
        assert_eq!(found.len(), 1);
        let e = |k: &str| found[0].sizes.extra.get(k).copied().flatten();
        assert_eq!(e("kv_cache_needed_bytes"), Some(4_574_140_170)); // round(4.26 × 2^30)
        assert_eq!(e("kv_cache_available_bytes"), Some(4_563_402_752)); // 4.25 × 2^30
        assert_eq!(found[0].facts["max_seq_len"], "100000");
        // A line that starts a new word is not glued.
        let lines = vec!["(4.26 GiB KV cache".to_string()];
        assert!(!KvCacheOom.glues(
            &lines,
            "is needed, which is larger than the available KV cache memory (4.25 GiB)."
        ));
    }

    #[test]
    fn prose_is_not_a_finding() {
        assert!(KvCacheOom
            .start("KV cache usage: 45%, max seq len 4096")
            .is_none());
    }

    /// TensorRT-LLM's executor refusing a component for memory (a wild
    /// paste, cut inside its table): the device's total and the free
    /// memory before the attempt, in the heading's unit. A line of prose
    /// that names the failure without the message is not it.
    #[test]
    fn tensorrt_llm_executor_creation_figures() {
        let text = "[07/08/2025-19:47:15] [TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: Executor creation failed due to insufficient GPU memory.\n\nThe following component could not be created: KV cache\nTotal GPU memory (GiB): 140.06\nFree GPU memory before component creation attempt (GiB): 108.86\n\nPreviously created components and free GPU memory before/after creation (GiB):\nModel: 139.55 / 110.70\nSampler: 110.70 / 110.70\nAdditional executor resources (temporary fo\n";
        let found = crate::scan(text.as_bytes(), "t")
            .map(|r| r.findings)
            .unwrap_or_default();
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.kind, Kind::GenericOom);
        assert_eq!(f.facts["resource"], "KV cache");
        let gib = |x: f64| (x * 1024.0 * 1024.0 * 1024.0).round() as u64;
        assert_eq!(f.sizes.total_bytes, Some(gib(140.06)));
        assert_eq!(f.sizes.free_bytes, Some(gib(108.86)));
        assert!(f.text.contains("Additional executor resources"));
        let quoted = "    msg = \"Executor creation failed due to insufficient GPU memory.\"\n";
        assert!(crate::scan(quoted.as_bytes(), "t")
            .map(|r| r.findings)
            .unwrap_or_default()
            .is_empty());
    }
}
