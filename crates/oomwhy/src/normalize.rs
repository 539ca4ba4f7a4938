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

/// A log-prefix pattern, compiled the first time a text could match it.
/// `could_match` is a necessary condition of a match (every pattern is
/// anchored at the start, so it mostly looks at the first byte): until the
/// pattern is compiled a text failing it is no match, and once compiled the
/// pattern alone decides. A log reaches few of these prefixes, and each took
/// 0.1–0.5 ms to compile (Unicode spaces and non-spaces) on the first
/// message of every run.
struct Prefix {
    pattern: &'static str,
    could_match: fn(&str) -> bool,
    regex: OnceLock<Regex>,
}

impl Prefix {
    const fn new(pattern: &'static str, could_match: fn(&str) -> bool) -> Self {
        Prefix {
            pattern,
            could_match,
            regex: OnceLock::new(),
        }
    }

    /// The compiled pattern, if `text` could match it.
    fn regex(&self, text: &str) -> Option<&Regex> {
        match self.regex.get() {
            Some(regex) => Some(regex),
            None if (self.could_match)(text) => {
                Some(self.regex.get_or_init(|| constant_regex(self.pattern)))
            }
            None => None,
        }
    }

    fn find<'t>(&self, text: &'t str) -> Option<regex::Match<'t>> {
        self.regex(text)?.find(text)
    }
}

/// Whether `text` starts with one of `bytes`.
fn starts_with_any(text: &str, bytes: &[u8]) -> bool {
    text.as_bytes().first().is_some_and(|b| bytes.contains(b))
}

/// Whether `text` starts with four digits and a dash, as a date does.
fn date_at(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() > 4 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-'
}

/// Whether `text` starts with a level word (`DEBUG`, `INFO`, `WARNING`,
/// `ERROR`, `CRITICAL`) and then `after`.
fn level_then(text: &str, after: u8) -> bool {
    ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
        .iter()
        .any(|level| {
            text.strip_prefix(level)
                .is_some_and(|rest| rest.as_bytes().first() == Some(&after))
        })
}

/// Whether `text` holds one of the level words that the `logging` prefix
/// requires.
fn holds_level(text: &str) -> bool {
    ["DEBUG", "INFO", "WARN", "ERROR", "CRITICAL", "FATAL"]
        .iter()
        .any(|level| text.contains(level))
}

// ISO 8601 / GitHub Actions / Python logging asctime, optionally bracketed.
static TIMESTAMP: Prefix = Prefix::new(
    r"^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?(?:\s+|$)",
    |t| date_at(t.strip_prefix('[').unwrap_or(t)),
);
// `Jun  1 12:00:00 host kernel: ` and `Jun  1 12:00:00 host python[123]: `,
// and without the host as `journalctl --no-hostname` prints it (`Jun  1
// 12:00:00 kernel: `): a host name holds no colon, and a program's name
// alone starts in lower case (an exception's class is not one).
static SYSLOG: Prefix = Prefix::new(
    r"^[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} (?:[^\s:]+ [^:\s]+|[a-z][\w.-]*(?:\[\d+\])?): ",
    |t| {
        let b = t.as_bytes();
        b.len() > 4
            && b[0].is_ascii_uppercase()
            && b[1..3].iter().all(u8::is_ascii_lowercase)
            && b[3] == b' '
    },
);
// dmesg `[12345.678901] `.
static DMESG: Prefix = Prefix::new(r"^\[\s*\d+\.\d+\]\s?", |t| {
    t.strip_prefix('[')
        .and_then(|t| t.trim_start().as_bytes().first())
        .is_some_and(u8::is_ascii_digit)
});
// Kubernetes CRI: `2024-06-01T12:00:00.123Z stderr F `.
static CRI: Prefix = Prefix::new(r"^\d{4}-\d{2}-\d{2}T\S+ (?:stdout|stderr) [FP] ", date_at);
// glog / absl: `E1201 10:00:00.123456  1234 file.cc:12] `.
static GLOG: Prefix = Prefix::new(
    r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [^\]\s]+\] ",
    |t| {
        let b = t.as_bytes();
        b.len() > 5
            && b"IWEF".contains(&b[0])
            && b[1..5].iter().all(u8::is_ascii_digit)
            && b[5] == b' '
    },
);
// vLLM: `ERROR 06-01 12:00:00 [engine.py:160] `.
static VLLM: Prefix = Prefix::new(
    r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \[[^\]]+\] ",
    |t| level_then(t, b' '),
);
// SGLang: `[2025-02-12 02:56:48 TP0] `, `[2026-06-28 23:41:27 DP0 PP1 TP0] `:
// the time and the process's place in the data, pipeline, tensor
// and expert parallel groups.
static SGLANG: Prefix = Prefix::new(
    r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?: (?:DP|PP|TP|EP)\d+)+\] ",
    |t| t.strip_prefix('[').is_some_and(date_at),
);
// `- ERROR - `, `- root - ERROR - `, `ERROR: ` after a stripped timestamp.
static LOGGING: Prefix = Prefix::new(
    r"^-?\s*(?:[\w.\[\]]+\s+-\s+)?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\s*(?:-|\|)\s+",
    holds_level,
);
// Python logging.basicConfig default: `ERROR:root:`.
static BASIC_CONFIG: Prefix = Prefix::new(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:", |t| {
    level_then(t, b':')
});
// loguru: `| ERROR    | module:func:12 - `.
static LOGURU: Prefix = Prefix::new(
    r"^\|\s*(?:TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL)\s*\|\s*\S+ - ",
    |t| t.starts_with('|'),
);
// torchrun `[rank3]: `, `[default3]:`, `rank3: `, mpirun `[1,3]<stderr>:`.
static RANK: Prefix = Prefix::new(
    r"^(?:\[(?:rank|default)(\d+)\]:\s?|rank(\d+): |\[\d+,(\d+)\]<std(?:out|err)>:\s?|\([\w.-]+(?: rank=(\d+))? pid=\d+(?:, ip=[\d.]+)?\)\s+)",
    |t| starts_with_any(t, b"[r("),
);
// docker compose `trainer-1  | `.
static COMPOSE: Prefix = Prefix::new(r"^[\w.-]+-\d+\s+\| ", |t| t.contains("| "));
static GHA_COMMAND: Prefix = Prefix::new(r"^##\[(?:error|warning|group|endgroup)\]", |t| {
    t.starts_with("##[")
});

/// Removes leading log prefixes, repeatedly (a timestamp often precedes a
/// level which precedes a rank). Returns the rest, and the rank and the
/// serving engine the prefixes name, if any.
fn strip_prefixes(mut text: &str) -> (&str, Option<u32>, Option<&'static str>) {
    let mut rank = None;
    let mut engine = None;
    for _ in 0..8 {
        if let Some(caps) = RANK.regex(text).and_then(|re| re.captures(text)) {
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
        if let Some(m) = SGLANG.find(text) {
            engine = engine.or(Some("sglang"));
            text = &text[m.end()..];
            continue;
        }
        let stripped = [
            &CRI,
            &TIMESTAMP,
            &SYSLOG,
            &DMESG,
            &GLOG,
            &VLLM,
            &LOGGING,
            &BASIC_CONFIG,
            &LOGURU,
            &COMPOSE,
            &GHA_COMMAND,
        ]
        .iter()
        .find_map(|prefix| prefix.find(text).filter(|m| m.end() > 0).map(|m| m.end()));
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
            // `journalctl --no-hostname`.
            "Jun  1 12:00:00 python[123]: RuntimeError: x",
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
    fn a_kernel_line_without_its_host_keeps_the_driver_tag() {
        // A forum post's kernel log (`journalctl -k --no-hostname`): the
        // `kernel: ` tag is the prefix; `NVRM: ` is the driver's own text.
        let raw = "Mar 29 15:38:59 kernel: NVRM: Xid (PCI:0000:01:00): 120, GSP kernel exception: store access page fault (cause:0xf) @ pc:0xffffffff93003d42, partition:4#0";
        assert!(one(raw).0.starts_with("NVRM: Xid (PCI:0000:01:00): 120, "));
        let hosted = "Mar 29 15:38:59 gpu01 kernel: NVRM: Xid (PCI:0000:01:00): 120, x";
        assert_eq!(one(hosted).0, "NVRM: Xid (PCI:0000:01:00): 120, x");
        // An exception's class after a time is no program's tag.
        let class = "Mar 29 15:38:59 RuntimeError: x";
        assert_eq!(one(class).0, class);
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
