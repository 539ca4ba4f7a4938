//! The Chinese output reads as Chinese: the whole explainer runs with
//! `--lang zh` over every fixture (`fixtures/*.log` and the real pastes of
//! `fixtures/wild/`), in the text and the Markdown format, and no output
//! may hold an English sentence fragment.
//!
//! What is left out, because it is not oomwhy's own prose: the quoted
//! message (text `│` lines, Markdown fences), the traceback, anything in
//! backticks or in quotation marks (“…”, "…", 「…」, and '…' after a
//! space, as a shell command quotes), the values of facts that quote the
//! input (a location, a call, a driver's message), and any run the input
//! itself holds word for word (the message's own words, quoted in a gloss:
//! `掉卡了（fallen off the bus）`).
//!
//! What is left is cut into runs: maximal stretches of Latin-script tokens
//! that no Chinese character or Chinese punctuation interrupts. A token is
//! * code when it holds a digit, `_`, `.`, `/`, `=`, `:` or other
//!   non-letters inside, or starts with `-` (`torch.cuda.empty_cache()`,
//!   `--medvram`, `gpu_mem_limit`): it neither counts nor ends a run;
//! * a name when it has a capital letter (PyTorch, CUDA, Ollama) or is on
//!   [`LOWERCASE_NAMES`] (commands and programs written in lower case:
//!   `nvidia-smi`, `kubectl top pod`);
//! * a term when it is on [`TERMS`]: engineering words a Chinese ML
//!   engineer writes in English (batch size, kernel, KV cache);
//! * otherwise an English word.
//!
//! A run is an English fragment when it holds an English possessive
//! (`OpenVINO's GPU plugin`), three English words (`an unrecognised
//! program`), or two English words one of which is a function word that only
//! English grammar needs (`of memory`, `the driver`).
//!
//! Shorter English has its own check: every fact a finding carries has a
//! Chinese label and every detector's note its Chinese, so a Details line
//! never reads `local rank: 0`.

use oomwhy::i18n::{zh, Lang};
use oomwhy::render::{render, Format, RenderOptions};
use oomwhy::Analysis;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Commands, programs and tools whose names are written in lower case.
const LOWERCASE_NAMES: &[&str] = &[
    "oomwhy",
    "explain",
    "nvidia-smi",
    "rocm-smi",
    "xpu-smi",
    "npu-smi",
    "amd-smi",
    "ps",
    "top",
    "htop",
    "sacct",
    "kubectl",
    "pod",
    "dmesg",
    "journalctl",
    "torchrun",
    "pip",
    "conda",
    "python",
    "torch-directml",
    "ncnn-vulkan",
    "llama",
    "cpp",
    "ollama",
    "nvcc",
    "ptxas",
    "ulimit",
    "free",
    "grep",
];

/// Engineering words kept in English in Chinese ML writing.
const TERMS: &[&str] = &[
    "batch",
    "size",
    "kernel",
    "kernels",
    "cache",
    "token",
    "tokens",
    "worker",
    "workers",
    "rank",
    "ranks",
    "arena",
    "block",
    "dtype",
    "checkpoint",
    "provider",
    "shared",
    "memory",
    "pool",
    "stream",
    "warp",
];

/// Words that only English grammar needs.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "by", "for", "with", "from", "and", "or", "its",
    "is", "are", "was", "were", "not", "no", "this", "that", "it", "be", "as", "at", "than",
];

/// The keys of facts whose values quote the input rather than describe it.
const QUOTED_FACTS: &[&str] = &[
    "assert",
    "assertion",
    "call",
    "constraint",
    "device_name",
    "driver_message",
    "failed_check",
    "file",
    "hint",
    "kernel",
    "last_error",
    "location",
    "op",
    "op_type",
    "process",
    "raised_at",
    "reason",
    "resource",
    "root_cause_error_file",
    "root_cause_host",
    "script",
    "source",
    "strerror",
    "node",
    "dll",
    "dll_name",
    "allocator",
    "allocator_backend",
    "library",
    "engine",
    "pool",
];

#[derive(Debug, PartialEq)]
enum Token {
    Code,
    Name,
    Word { function: bool, possessive: bool },
}

fn token(raw: &str) -> Option<Token> {
    let t = raw.trim_matches(|c: char| {
        matches!(
            c,
            '(' | ')' | '[' | ']' | ',' | ';' | ':' | '.' | '!' | '?' | '{' | '}' | '"' | '\''
        )
    });
    if t.is_empty() {
        return None;
    }
    let possessive = t.ends_with("'s") || t.ends_with("’s");
    let stem = t
        .strip_suffix("'s")
        .or_else(|| t.strip_suffix("’s"))
        .unwrap_or(t);
    let letters = |c: char| c.is_ascii_alphabetic() || c == '-' || c == '\'' || c == '’';
    if t.starts_with('-') || !stem.chars().all(letters) {
        return Some(Token::Code);
    }
    let lower = stem.to_ascii_lowercase();
    if stem.chars().any(|c| c.is_ascii_uppercase()) || LOWERCASE_NAMES.contains(&lower.as_str()) {
        return Some(if possessive {
            Token::Word {
                function: false,
                possessive,
            }
        } else {
            Token::Name
        });
    }
    if TERMS.contains(&lower.as_str()) {
        return Some(Token::Name);
    }
    Some(Token::Word {
        function: FUNCTION_WORDS.contains(&lower.as_str()),
        possessive,
    })
}

/// The English fragments of one line of prose.
fn fragments(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    // A run is what lies between non-Latin characters; ASCII punctuation
    // and spaces stay inside it.
    for run in line.split(|c: char| !c.is_ascii() && c != '’') {
        let tokens: Vec<Token> = run.split_whitespace().filter_map(token).collect();
        let words = tokens
            .iter()
            .filter(|t| matches!(t, Token::Word { .. }))
            .count();
        let function = tokens
            .iter()
            .any(|t| matches!(t, Token::Word { function: true, .. }));
        let possessive = tokens.iter().any(|t| {
            matches!(
                t,
                Token::Word {
                    possessive: true,
                    ..
                }
            )
        });
        if possessive || words >= 3 || (words >= 2 && function) {
            out.push(run.trim().to_string());
        }
    }
    out
}

/// Removes what oomwhy quotes: backtick spans and quotation marks.
fn unquoted(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut close: Option<char> = None;
    for c in line.chars() {
        match close {
            Some(end) if c == end => {
                close = None;
                out.push(' ');
            }
            Some(_) => {}
            None => match c {
                '`' => close = Some('`'),
                '“' => close = Some('”'),
                '「' => close = Some('」'),
                '"' => close = Some('"'),
                // A shell's single quotes open after a space; an
                // apostrophe (OpenVINO's) never does.
                '\'' if out.is_empty() || out.ends_with(' ') => close = Some('\''),
                _ => out.push(c),
            },
        }
    }
    out
}

/// oomwhy's own prose in a text or Markdown output.
fn prose_lines(output: &str, format: Format) -> Vec<String> {
    let where_heading = "出错位置（调用栈，最内层在最后）";
    let traceback_heading = "调用栈（最内层在最后）";
    let quoted_labels: Vec<&str> = QUOTED_FACTS
        .iter()
        .filter_map(|k| zh::fact_label(k))
        .collect();
    let mut lines = Vec::new();
    let mut in_fence = false;
    let mut in_traceback = false;
    for line in output.lines() {
        let trimmed = line.trim();
        if format == Format::Markdown && trimmed.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || trimmed.starts_with('│') {
            continue;
        }
        if trimmed == where_heading || trimmed == traceback_heading {
            in_traceback = true;
            continue;
        }
        if in_traceback {
            if trimmed.is_empty() && format == Format::Text || trimmed.starts_with("详见") {
                in_traceback = false;
            } else {
                continue;
            }
        }
        let fact_line = trimmed.strip_prefix("- ").unwrap_or(trimmed);
        if quoted_labels.iter().any(|label| {
            fact_line
                .strip_prefix(label)
                .is_some_and(|rest| rest.starts_with('：') || rest.starts_with(": "))
        }) {
            continue;
        }
        lines.push(unquoted(line));
    }
    lines
}

/// Text as [`quotes_input`] compares it: lower case, Markdown's escapes
/// removed, every run of spaces one space.
fn comparable(text: &str) -> String {
    text.replace('\\', "")
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the input holds `fragment` word for word.
fn quotes_input(fragment: &str, input: &str) -> bool {
    let fragment = comparable(fragment);
    let fragment = fragment.trim_matches(|c: char| c.is_ascii_punctuation() || c == ' ');
    !fragment.is_empty() && input.contains(fragment)
}

fn inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut inputs = Vec::new();
    for (dir, ext) in [("fixtures", "log"), ("fixtures/wild", "txt")] {
        let mut found: Vec<PathBuf> = fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect();
        found.sort();
        inputs.extend(found);
    }
    inputs
}

/// Every English fragment of every Chinese output, with where it was seen.
fn english_in_chinese() -> BTreeMap<String, Vec<String>> {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for input in inputs() {
        let name = input.file_name().unwrap().to_string_lossy().to_string();
        let mut analysis = Analysis::new();
        analysis.add(oomwhy::scan(fs::File::open(&input).unwrap(), &name).unwrap());
        let (findings, summary) = analysis.finish();
        let input_text = comparable(&String::from_utf8_lossy(&fs::read(&input).unwrap()));
        // A label or a note without its Chinese prints its English, one
        // or two words at a time: below the fragment rule, so named here.
        for f in &findings {
            let untranslated = f
                .facts
                .keys()
                .filter(|key| zh::fact_label(key).is_none())
                .map(|key| format!("fact label {key:?}"))
                .chain(
                    f.notes
                        .iter()
                        .filter(|note| note.zh.is_none())
                        .map(|note| format!("note {note:?}")),
                );
            for what in untranslated {
                seen.entry(what).or_default().push(name.clone());
            }
        }
        for format in [Format::Text, Format::Markdown] {
            let options = RenderOptions {
                lang: Lang::Zh,
                // Wide enough that no run is wrapped in two.
                width: 10_000,
                ..RenderOptions::default()
            };
            let mut out = Vec::new();
            render(format, &findings, &summary, options, &mut out).unwrap();
            let output = String::from_utf8(out).unwrap();
            for line in prose_lines(&output, format) {
                for fragment in fragments(&line) {
                    if quotes_input(&fragment, &input_text) {
                        continue;
                    }
                    seen.entry(fragment)
                        .or_default()
                        .push(format!("{name} ({format:?}): {}", line.trim()));
                }
            }
        }
    }
    seen
}

#[test]
fn chinese_output_has_no_english_fragments() {
    let seen = english_in_chinese();
    let total: usize = seen.values().map(Vec::len).sum();
    let mut report = String::new();
    for (fragment, places) in &seen {
        report.push_str(&format!(
            "{} × {fragment:?}\n    e.g. {}\n",
            places.len(),
            places[0]
        ));
    }
    assert!(
        seen.is_empty(),
        "{total} English fragments ({} distinct) in the Chinese output:\n{report}",
        seen.len()
    );
}

#[test]
fn the_fragment_rule_on_both_sides() {
    // Reporters pasted into Chinese sentences.
    assert_eq!(
        fragments("an unrecognised program 报告它在 GPU 上资源不足"),
        ["an unrecognised program"]
    );
    assert_eq!(
        fragments("显存不足：ONNX Runtime's BFC arena 无法分配 7.81 GiB"),
        ["ONNX Runtime's BFC arena"]
    );
    assert_eq!(
        fragments("Ollama (its check before loading a model) 需要"),
        ["Ollama (its check before loading a model)"]
    );
    assert_eq!(
        fragments("显存不足：the NVIDIA driver 报告"),
        ["the NVIDIA driver"]
    );
    // Names, terms, code and commands are not fragments.
    assert!(fragments("把 batch size 减半，KV cache 占满了").is_empty());
    assert!(fragments(
        "设置 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True 后调用 torch.cuda.empty_cache()"
    )
    .is_empty());
    assert!(fragments("kubectl top pod；nvidia-smi、rocm-smi").is_empty());
    assert!(fragments("CUDA execution provider 还是 CPU").is_empty());
    assert!(fragments("用 --medvram（或 --lowvram）启动").is_empty());
    // Two English words count only with a function word.
    assert!(fragments("原生代码 native code 了").is_empty());
    assert_eq!(fragments("一次 out of 显存"), ["out of"]);
    // Quotes are left out.
    assert_eq!(unquoted("报错格式“out of memory here”").trim(), "报错格式");
    assert_eq!(unquoted("见 `a b c d` 和"), "见   和");
    assert_eq!(
        unquoted("dmesg | grep -E 'killed process|out of memory'（或"),
        "dmesg | grep -E  （或"
    );
    assert_eq!(unquoted("OpenVINO's GPU plugin"), "OpenVINO's GPU plugin");
    // The message's own words are a quote.
    assert!(quotes_input(
        "(unspecified launch failure)",
        &comparable("CUDA error: unspecified launch failure\n")
    ));
    assert!(!quotes_input(
        "an unrecognised program",
        &comparable("CUDA error: unspecified launch failure\n")
    ));
}
