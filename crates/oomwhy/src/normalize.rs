//! Turns a raw log line into the text a message parser should see.
//!
//! Logs wrap the interesting text in noise: ANSI colours, timestamps, logging
//! prefixes, `[rank3]:` prefixes from torchrun, Docker's JSON-lines envelope.
//! [`normalize`] removes these while the caller keeps the original line number.
//! It never alters what the user gave: it returns new strings.
//!
//! Before the prefixes, [`presentation`] undoes how a paste dresses the
//! message (markdown, HTML, typographic quotes, retyped case), so that the
//! families see one canonical text; [`Normalized::origin`] maps the result
//! back to the bytes of the raw line.

pub mod presentation;

pub use presentation::Origin;

use crate::constant_regex;
use regex::Regex;
use std::sync::OnceLock;

/// A line with its log noise removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    /// The text a parser should see.
    pub text: String,
    /// The distributed rank named by a prefix such as `[rank3]:`, if any.
    pub rank: Option<u32>,
    /// The serving engine whose process a prefix names (`vllm` for
    /// `(VllmWorker rank=0 pid=4716)`, `sglang` for `[2025-02-12 02:56:48
    /// TP0] `), if any.
    pub engine: Option<&'static str>,
    /// Where each byte of `text` came from in the raw line (for a line of a
    /// JSON-lines record: in the record's decoded message).
    pub origin: Origin,
}

/// Process names that vLLM's worker and engine processes print before their
/// lines (through Python's multiprocessing or Ray), and the engine they name.
const ENGINE_PROCESSES: &[(&str, &str)] = &[
    ("(VllmWorker ", "vllm"),
    ("(VllmWorkerProcess ", "vllm"),
    ("(EngineCore_", "vllm"),
    ("(RayWorkerWrapper ", "vllm"),
];

struct Prefixes {
    timestamp: Regex,
    syslog: Regex,
    dmesg: Regex,
    cri: Regex,
    glog: Regex,
    vllm: Regex,
    sglang: Regex,
    logging: Regex,
    basic_config: Regex,
    loguru: Regex,
    rank: Regex,
    compose: Regex,
    gha_command: Regex,
}

fn prefixes() -> &'static Prefixes {
    static PREFIXES: OnceLock<Prefixes> = OnceLock::new();
    PREFIXES.get_or_init(|| {
        let re = constant_regex;
        Prefixes {
            // ISO 8601 / GitHub Actions / Python logging asctime, optionally bracketed.
            timestamp: re(
                r"^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?(?:\s+|$)",
            ),
            // `Jun  1 12:00:00 host kernel: ` and `Jun  1 12:00:00 host python[123]: `.
            syslog: re(r"^[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S+ [^:\s]+: "),
            // dmesg `[12345.678901] `.
            dmesg: re(r"^\[\s*\d+\.\d+\]\s?"),
            // Kubernetes CRI: `2024-06-01T12:00:00.123Z stderr F `.
            cri: re(r"^\d{4}-\d{2}-\d{2}T\S+ (?:stdout|stderr) [FP] "),
            // glog / absl: `E1201 10:00:00.123456  1234 file.cc:12] `.
            glog: re(r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [^\]\s]+\] "),
            // vLLM: `ERROR 06-01 12:00:00 [engine.py:160] `.
            vllm: re(
                r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \[[^\]]+\] ",
            ),
            // SGLang: `[2025-02-12 02:56:48 TP0] `, `[2026-06-28 23:41:27 DP0 PP1 TP0] `:
            // the time and the process's place in the data, pipeline, tensor
            // and expert parallel groups.
            sglang: re(
                r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?: (?:DP|PP|TP|EP)\d+)+\] ",
            ),
            // `- ERROR - `, `- root - ERROR - `, `ERROR: ` after a stripped timestamp.
            logging: re(
                r"^-?\s*(?:[\w.\[\]]+\s+-\s+)?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\s*(?:-|\|)\s+",
            ),
            // Python logging.basicConfig default: `ERROR:root:`.
            basic_config: re(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:"),
            // loguru: `| ERROR    | module:func:12 - `.
            loguru: re(r"^\|\s*(?:TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL)\s*\|\s*\S+ - "),
            // torchrun `[rank3]: `, `[default3]:`, `rank3: `, mpirun `[1,3]<stderr>:`.
            rank: re(
                r"^(?:\[(?:rank|default)(\d+)\]:\s?|rank(\d+): |\[\d+,(\d+)\]<std(?:out|err)>:\s?|\([\w.-]+(?: rank=(\d+))? pid=\d+(?:, ip=[\d.]+)?\)\s+)",
            ),
            // docker compose `trainer-1  | `.
            compose: re(r"^[\w.-]+-\d+\s+\| "),
            gha_command: re(r"^##\[(?:error|warning|group|endgroup)\]"),
        }
    })
}

/// Removes leading log prefixes, repeatedly (a timestamp often precedes a
/// level which precedes a rank). Returns the rest, and the rank and the
/// serving engine the prefixes name, if any.
fn strip_prefixes(mut text: &str) -> (&str, Option<u32>, Option<&'static str>) {
    let p = prefixes();
    let mut rank = None;
    let mut engine = None;
    for _ in 0..8 {
        if let Some(caps) = p.rank.captures(text) {
            rank = rank.or_else(|| {
                caps.iter()
                    .skip(1)
                    .flatten()
                    .next()
                    .and_then(|m| m.as_str().parse().ok())
            });
            let prefix = caps.get(0).map_or("", |m| m.as_str());
            engine = engine.or_else(|| {
                ENGINE_PROCESSES
                    .iter()
                    .find(|(name, _)| prefix.starts_with(name))
                    .map(|(_, engine)| *engine)
            });
            text = &text[prefix.len()..];
            continue;
        }
        if let Some(m) = p.sglang.find(text) {
            engine = engine.or(Some("sglang"));
            text = &text[m.end()..];
            continue;
        }
        let stripped = [
            &p.cri,
            &p.timestamp,
            &p.syslog,
            &p.dmesg,
            &p.glog,
            &p.vllm,
            &p.logging,
            &p.basic_config,
            &p.loguru,
            &p.compose,
            &p.gha_command,
        ]
        .iter()
        .find_map(|re| re.find(text).filter(|m| m.end() > 0).map(|m| m.end()));
        match stripped {
            Some(end) => text = &text[end..],
            None => break,
        }
    }
    (text, rank, engine)
}

/// If `text` is a JSON-lines log record (Docker json-file, structured logs),
/// returns its message field.
fn json_message(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if !(trimmed.starts_with('{') && trimmed.ends_with('}')) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(trimmed).ok()?;
    ["log", "message", "msg", "MESSAGE", "textPayload"]
        .iter()
        .find_map(|key| value.get(*key)?.as_str().map(str::to_string))
}

/// Normalises one raw line. A JSON-lines record can hold several lines of
/// text (escaped newlines), and HTML's `<br>` ends a line, so this returns
/// one entry per contained line.
pub fn normalize(raw: &str) -> Vec<Normalized> {
    let raw = raw.strip_suffix('\r').unwrap_or(raw);
    match presentation::canonical(raw) {
        None => from_clean(raw, Origin::verbatim(0)),
        Some(lines) => lines
            .into_iter()
            .flat_map(|(text, origin)| from_clean(&text, origin))
            .collect(),
    }
}

/// Strips the log prefixes of a line already free of presentation.
fn from_clean(clean: &str, origin: Origin) -> Vec<Normalized> {
    let (outer, outer_rank, outer_engine) = strip_prefixes(clean);
    if let Some(message) = json_message(outer) {
        let message = message.strip_suffix('\n').unwrap_or(&message);
        let mut lines = Vec::new();
        let mut offset = 0;
        for line in message.split('\n') {
            let line_origin = Origin::verbatim(offset);
            offset += line.len() + 1;
            let line = line.strip_suffix('\r').unwrap_or(line);
            let pieces = presentation::canonical(line)
                .unwrap_or_else(|| vec![(line.to_string(), line_origin.clone())]);
            for (piece, _) in pieces {
                let (text, rank, engine) = strip_prefixes(&piece);
                lines.push(Normalized {
                    text: text.to_string(),
                    rank: rank.or(outer_rank),
                    engine: engine.or(outer_engine),
                    origin: line_origin.skip(piece.len() - text.len()),
                });
            }
        }
        return lines;
    }
    vec![Normalized {
        text: outer.to_string(),
        rank: outer_rank,
        engine: outer_engine,
        origin: origin.skip(clean.len() - outer.len()),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vllm_process_prefix_names_the_engine() {
        let line = "(VllmWorkerProcess pid=486731) ERROR 03-19 10:55:18 [multiproc_worker_utils.py:242] torch.OutOfMemoryError: CUDA out of memory.";
        let n = &normalize(line)[0];
        assert_eq!(n.text, "torch.OutOfMemoryError: CUDA out of memory.");
        assert_eq!(n.engine, Some("vllm"));
        let n = &normalize("(VllmWorker rank=3 pid=2211) RuntimeError: x")[0];
        assert_eq!((n.rank, n.engine), (Some(3), Some("vllm")));
        assert_eq!(
            normalize("(EngineCore_DP0 pid=3452) ERROR x")[0].engine,
            Some("vllm")
        );
        let n = &normalize("[2026-06-28 23:41:27 DP0 PP1 TP0] Scheduler hit an exception: x")[0];
        assert_eq!(
            (n.text.as_str(), n.engine),
            ("Scheduler hit an exception: x", Some("sglang"))
        );
        let n = &normalize("[2026-02-25 16:41:56] Received sigquit from a child process.")[0];
        assert_eq!(n.engine, None);
        // Ray's prefix for any other actor names no engine.
        let n = &normalize("(TrainWorker pid=77, ip=10.0.0.2) RuntimeError: x")[0];
        assert_eq!((n.text.as_str(), n.engine), ("RuntimeError: x", None));
    }

    fn one(raw: &str) -> (String, Option<u32>) {
        let mut lines = normalize(raw);
        assert_eq!(lines.len(), 1, "{raw}");
        let line = lines.remove(0);
        (line.text, line.rank)
    }

    #[test]
    fn strips_timestamps_and_levels() {
        let cases = [
            "2024-06-01T12:00:00.1234567Z RuntimeError: x",
            "2024-06-01 12:00:00,123 - ERROR - RuntimeError: x",
            "2024-06-01 12:00:00,123 - root - ERROR - RuntimeError: x",
            "[2024-06-01 12:00:00] RuntimeError: x",
            "Jun  1 12:00:00 node7 python[123]: RuntimeError: x",
            "E1201 10:00:00.123456  1234 file.py:12] RuntimeError: x",
            "ERROR 06-01 12:00:00 [engine.py:160] RuntimeError: x",
            "(VllmWorker pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470] RuntimeError: x",
            "ERROR:root:RuntimeError: x",
            "2024-06-01 12:00:00.123 | ERROR    | train:main:12 - RuntimeError: x",
            "2024-06-01T12:00:00.123456789Z stderr F RuntimeError: x",
            "[ 1234.567890] RuntimeError: x",
        ];
        for raw in cases {
            assert_eq!(one(raw).0, "RuntimeError: x", "{raw}");
        }
    }

    #[test]
    fn extracts_ranks() {
        assert_eq!(
            one("[rank3]: RuntimeError: x"),
            ("RuntimeError: x".into(), Some(3))
        );
        assert_eq!(
            one("[default5]:RuntimeError: x"),
            ("RuntimeError: x".into(), Some(5))
        );
        assert_eq!(
            one("rank12: RuntimeError: x"),
            ("RuntimeError: x".into(), Some(12))
        );
        assert_eq!(
            one("[1,2]<stderr>:RuntimeError: x"),
            ("RuntimeError: x".into(), Some(2))
        );
        assert_eq!(
            one("2024-06-01T12:00:00Z [rank1]:   File \"a.py\", line 1, in f"),
            ("  File \"a.py\", line 1, in f".into(), Some(1))
        );
    }

    #[test]
    fn keeps_traceback_indentation() {
        assert_eq!(
            one("  File \"a.py\", line 3, in <module>").0,
            "  File \"a.py\", line 3, in <module>"
        );
    }

    #[test]
    fn decodes_docker_json_lines() {
        let raw = r#"{"log":"RuntimeError: CUDA error: out of memory\n","stream":"stderr","time":"2024-06-01T12:00:00Z"}"#;
        assert_eq!(one(raw).0, "RuntimeError: CUDA error: out of memory");
        let multi = r#"{"msg":"line one\nline two"}"#;
        let lines = normalize(multi);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].text, "line two");
    }

    #[test]
    fn leaves_plain_text_alone() {
        assert_eq!(one("RuntimeError: x").0, "RuntimeError: x");
        assert_eq!(one("").0, "");
        assert_eq!(one("{not json}").0, "{not json}");
    }
}
