//! Hostile logs: a log is untrusted input that ends up on the
//! user's terminal. Text output must never carry a raw control character
//! (ESC, BEL, C1 controls, DEL, bidi overrides) taken from the input, only
//! an escaped form; JSON output must stay valid JSON whatever the input held.

use crate::support::assert_terminal_safe;
use oomwhy::record::{
    ChainedException, Era, Finding, Fix, Frame, Hint, Kind, Phase, ProcessUsage, Traceback, Verdict,
};
use oomwhy::render::{render, Format, RenderOptions};
use oomwhy::{Analysis, Summary};
use std::path::PathBuf;
use std::process::{Command, Output};

/// Every kind of sequence a log could use against a terminal.
const EVIL: &[&str] = &[
    "\x1b]52;c;cm0gLXJmIH4K\x07",    // OSC 52: write the clipboard
    "\x1b]0;pwned\x07",              // window title
    "\x1b]2;pwned\x1b\\",            // title, ST-terminated
    "\x1b[2J\x1b[H\x1b[1A\x1b[999C", // clear screen, cursor moves
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\", // OSC 8 hyperlink
    "\u{202e}evil\u{202c}",          // bidi override
    "\u{2066}iso\u{2069}",           // bidi isolate
    "\u{9d}52;c;cm0K\u{9c}",         // OSC 52 with C1 controls
    "\u{9b}2J",                      // C1 CSI
    "\u{90}q\u{9c}",                 // C1 DCS
    "\x07\x08\x7f\x00\x0b\x0c",      // BEL, BS, DEL, NUL, VT, FF
    "\x1bc",                         // ESC c: reset the terminal
];

fn evil() -> String {
    EVIL.concat()
}

/// An OOM with a traceback and a chained exception, every part laced.
fn hostile_log() -> String {
    let e = evil();
    format!(
        "{e}epoch 1{e}\n\
         Traceback (most recent call last):\n\
         \x20 File \"/src/{e}load.py\", line 3, in {e}setup\n\
         \x20   model = load{e}()\n\
         ValueError: bad {e} value\n\
         \n\
         During handling of the above exception, another exception occurred:\n\
         \n\
         Traceback (most recent call last):\n\
         \x20 File \"/src/tr{e}ain.py\", line 10, in <mod{e}ule>\n\
         \x20   loss{e}.backward()\n\
         \x20 File \"{e}\", line 7, in {e}\n\
         \x20   {e}\n\
         torch.OutOfMemoryError{e}: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 7.79 GiB of which 9.38 MiB is free. {e}Process 7 has 1.00 GiB memory in use.{e} Of the allocated memory 6.32 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/{e}docs)\n\
         {e}RuntimeError: CUDA error: out of memory{e}\n\
         CUDA kernel errors might be asynchronously reported {e}\n\
         [rank1]: {e}RuntimeError: CUDA error: an illegal memory access was encountered {e}\n\
         Process finished with exit code -1073740791 (0xC0000409){e}\n"
    )
}

fn render_all(findings: &[Finding], summary: &Summary, format: Format, color: bool) -> String {
    let mut out = Vec::new();
    render(
        format,
        findings,
        summary,
        RenderOptions {
            color,
            ..Default::default()
        },
        &mut out,
    )
    .unwrap();
    String::from_utf8(out).expect("output is UTF-8")
}

/// Removes the SGR colour sequences oomwhy itself writes (`ESC [ … m`).
fn strip_own_colors(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after.find(|c: char| !(c.is_ascii_digit() || c == ';')) {
            Some(end) if after[end..].starts_with('m') => rest = &after[end + 1..],
            _ => {
                // Not one of ours: keep it, so the check below sees it.
                out.push_str("\x1b[");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn hostile_log_is_decoded_and_escaped_in_text_output() {
    let log = hostile_log();
    let mut analysis = Analysis::new();
    analysis.add(oomwhy::scan(log.as_bytes(), &format!("train{}.log", evil())).unwrap());
    let (findings, summary) = analysis.finish();
    let kinds: Vec<Kind> = findings.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            Kind::TorchAllocatorOom,
            Kind::CudaRuntimeOom,
            Kind::IllegalMemoryAccess,
            Kind::WindowsFailFast
        ]
    );
    let tb = findings[0].traceback.as_ref().expect("traceback");
    assert_eq!(tb.frames.len(), 2);
    assert_eq!(tb.chained.len(), 1);

    let plain = render_all(&findings, &summary, Format::Text, false);
    assert_terminal_safe(&plain, "text output");
    // Escaped, not dropped: the reader can still see something was there.
    assert!(plain.contains("\\u{202e}"), "{plain}");
    let colored = render_all(&findings, &summary, Format::Text, true);
    assert_terminal_safe(&strip_own_colors(&colored), "coloured text output");
}

#[test]
fn json_output_is_valid_whatever_the_input() {
    let mut inputs: Vec<Vec<u8>> = vec![hostile_log().into_bytes()];
    // Every byte value inside and around a message, invalid UTF-8 included.
    let all_bytes: Vec<u8> = (0..=255u8).collect();
    let mut laced = all_bytes.clone();
    laced.extend_from_slice(b"\nRuntimeError: CUDA error: out of memory ");
    laced.extend_from_slice(&all_bytes);
    laced.extend_from_slice(b"\n\"}\\u0000{\n");
    inputs.push(laced);
    for input in inputs {
        let mut analysis = Analysis::new();
        analysis.add(oomwhy::scan(&input[..], "in\"put\\\x1b\u{0}.log").unwrap());
        let (findings, summary) = analysis.finish();
        assert!(!findings.is_empty());
        let json = render_all(&findings, &summary, Format::Json, false);
        let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(value["findings"].as_array().unwrap().len(), findings.len());
        // serde_json escapes every C0 control: none reaches the output raw.
        assert!(!json.chars().any(|c| c < ' ' && c != '\n'), "{json}");
    }
}

/// A finding with a hostile string in every field the text renderer can
/// print, whether a parser or the explainer filled it: the renderer must
/// escape all of them, not only the ones known to come from the log today.
#[test]
fn every_printed_field_is_escaped() {
    let e = evil();
    let mut f = Finding::new(
        Kind::TorchAllocatorOom,
        &format!("in{e}put"),
        1,
        format!("text{e}"),
    );
    f.id = 1;
    f.exception = Some(format!("Exc{e}"));
    f.backend = Some(format!("cuda{e}"));
    // `era` is a closed set of plain slugs: it cannot carry hostile text.
    f.era = Some(Era::Capacity);
    f.version_hint = Some(format!("v{e}"));
    f.device = Some(0);
    f.sizes.requested_bytes = Some(2 << 30);
    f.sizes.total_bytes = Some(8 << 30);
    f.sizes.free_bytes = Some(1 << 30);
    f.sizes.reserved_bytes = Some(7 << 30);
    f.sizes.allocated_bytes = Some(5 << 30);
    f.processes.push(ProcessUsage {
        pid: 7,
        in_use_bytes: 1 << 30,
    });
    f.hint = Some(Hint {
        option: Some(format!("opt{e}")),
        env_var: Some(format!("VAR{e}")),
        docs_url: Some(format!("https://x/{e}")),
    });
    f.facts.insert(format!("key{e}"), format!("value{e}"));
    f.truncated = true;
    f.notes.push(oomwhy::record::Note {
        text: format!("note{e}"),
        zh: None,
    });
    let frame = |n: u64| Frame {
        file: format!("file{e}.py"),
        line: n,
        function: format!("fn{e}"),
        code: Some(format!("code{e}")),
    };
    f.traceback = Some(Traceback {
        frames: (0..8).map(frame).collect(),
        omitted_frames: 3,
        chained: vec![ChainedException {
            relation: format!("rel{e}"),
            exception: format!("chained{e}"),
            frames: vec![frame(1)],
        }],
    });
    f.phase = Phase {
        name: format!("phase{e}"),
        confidence: format!("conf{e}"),
        evidence: vec![format!("evidence{e}")],
    };
    f.last_step = Some(5);
    f.ranks = vec![0, 1];
    f.first_rank = Some(0);
    f.devices = vec![0, 1];
    f.occurrences = 2;
    f.diagnosis.verdicts.push(Verdict {
        code: format!("code{e}"),
        title: format!("title{e}"),
        detail: format!("detail{e}"),
        zh: None,
    });
    f.diagnosis.fixes.push(Fix {
        id: format!("id{e}"),
        title: format!("fix{e}"),
        how: format!("how{e}"),
        zh: None,
    });
    f.explain = vec![format!("explain{e}")];
    let mut bare = Finding::new(Kind::IllegalMemoryAccess, &e, 2, e.clone());
    bare.id = 2;
    bare.facts.insert(format!("k{e}"), format!("v{e}"));
    bare.consequence_of = Some(1);
    let summary = Summary::default();
    for color in [false, true] {
        let text = render_all(&[f.clone(), bare.clone()], &summary, Format::Text, color);
        assert_terminal_safe(&strip_own_colors(&text), &format!("text (colour {color})"));
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oomwhy-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oomwhy"))
        .args(args)
        .output()
        .unwrap()
}

/// File names come from the command line (`oomwhy *`) and can be hostile too:
/// in the report, in error messages, in JSON.
#[cfg(unix)]
#[test]
fn hostile_file_names_are_escaped_everywhere() {
    let dir = scratch("names");
    let name = "log\x1b]0;pwned\x07\u{9b}2J\u{202e}.txt";
    let file = dir.join(name);
    std::fs::write(&file, hostile_log()).unwrap();
    let missing = dir.join(format!("missing{name}"));
    let subdir = dir.join(format!("dir{name}"));
    std::fs::create_dir_all(&subdir).unwrap();
    // A directory is read; a binary file in it is skipped with a warning
    // that names it.
    std::fs::write(subdir.join(format!("core{name}")), b"\0\x01").unwrap();
    for color in ["never", "always"] {
        let output = run(&[
            "--color".as_ref(),
            color.as_ref(),
            file.as_os_str(),
            missing.as_os_str(),
            subdir.as_os_str(),
        ]);
        assert_eq!(output.status.code(), Some(2));
        let stdout = String::from_utf8(output.stdout).unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stdout.contains("\\u{9b}2J"), "{stdout}");
        assert_terminal_safe(&strip_own_colors(&stdout), "stdout");
        assert_eq!(stderr.lines().count(), 2, "{stderr}");
        assert_terminal_safe(&stderr, "stderr");
    }
    let output = run(&[
        "--format".as_ref(),
        "json".as_ref(),
        file.as_os_str(),
        missing.as_os_str(),
    ]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert_eq!(
        report["findings"][0]["source"]["input"],
        file.display().to_string()
    );
    assert_terminal_safe(&String::from_utf8(output.stderr).unwrap(), "stderr");
}
