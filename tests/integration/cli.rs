//! Tests of the built binary: inputs, exit statuses, formats, subcommands,
//! `oomwhy run` and `--follow`. Standard input is fed from a thread and every
//! wait is bounded; a failing test prints the command's output. The `run`
//! tests use `sh`, so they are Unix-only.

use serde_json::Value;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

const SEED: &str = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)";
const RUNTIME_OOM: &str = "RuntimeError: CUDA error: out of memory";
const ILLEGAL: &str = "RuntimeError: CUDA error: an illegal memory access was encountered";
/// Longest wait for output that should come.
const PATIENCE: Duration = Duration::from_secs(20);

fn oomwhy() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_oomwhy"));
    // English and the default width, whatever the machine's locale and terminal.
    cmd.env_remove("NO_COLOR")
        .env("TERM", "dumb")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("LANG", "C")
        .env_remove("COLUMNS");
    cmd
}

/// A fresh directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// Runs `cmd` with `stdin` written from a thread (no deadlock on big output).
fn run(cmd: &mut Command, stdin: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_string();
    let writer = thread::spawn(move || {
        let _ = pipe.write_all(input.as_bytes());
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[track_caller]
fn assert_status(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "status\n--- stdout\n{}\n--- stderr\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

#[test]
fn stdin_and_file_give_the_same_finding() {
    let from_stdin = run(&mut oomwhy(), &format!("{SEED}\n"));
    assert_status(&from_stdin, 0);
    let dir = temp_dir("stdin_file");
    let log = dir.join("train.log");
    fs::write(&log, format!("{SEED}\n")).unwrap();
    let from_file = run(oomwhy().arg(&log), "");
    assert_status(&from_file, 0);
    let out = text(&from_file.stdout);
    assert!(out.contains("[1] OUT OF MEMORY PyTorch could not allocate 2.00 GiB"));
    assert!(out.contains("train.log line 1"));
    assert!(text(&from_stdin.stdout).contains("<stdin> line 1"));
    assert!(out.contains("More: oomwhy explain torch_allocator_oom"));
    let dash = run(oomwhy().arg("-"), &format!("{SEED}\n"));
    assert_eq!(dash.stdout, from_stdin.stdout);
}

#[test]
fn nothing_found_exits_1() {
    let output = run(&mut oomwhy(), "epoch 1 loss 0.5\nall good\n");
    assert_status(&output, 1);
    assert!(output.stdout.is_empty());
    assert!(
        text(&output.stderr).contains("no out-of-memory error or GPU crash found (2 lines read)")
    );
}

#[test]
fn missing_file_is_reported_and_the_rest_processed() {
    let dir = temp_dir("missing");
    let good = dir.join("good.log");
    fs::write(&good, format!("{SEED}\n")).unwrap();
    let missing = dir.join("missing.log");
    let output = run(oomwhy().arg(&missing).arg(&good), "");
    assert_status(&output, 2);
    let err = text(&output.stderr);
    assert!(
        err.contains(&format!("oomwhy: {}: no such file", missing.display())),
        "{err}"
    );
    assert!(text(&output.stdout).contains("good.log line 1"));
    assert!(text(&output.stdout).contains("1 unreadable"));
}

#[test]
fn a_file_named_like_a_subcommand_needs_a_path() {
    let dir = temp_dir("subcommand_name");
    fs::write(dir.join("explain"), format!("{SEED}\n")).unwrap();
    let output = run(oomwhy().current_dir(&dir).arg("./explain"), "");
    assert_status(&output, 0);
    assert!(text(&output.stdout).contains("./explain line 1"));
}

#[test]
fn json_has_schema_version() {
    let output = run(
        oomwhy()
            .args(["--format", "json"])
            .arg(fixture("torch_reserved_era_seed.log")),
        "",
    );
    assert_status(&output, 0);
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["findings"][0]["kind"], "torch_allocator_oom");
    // With nothing found the document is still written.
    let empty = run(oomwhy().args(["--format", "json"]), "nothing\n");
    assert_status(&empty, 1);
    let json: Value = serde_json::from_slice(&empty.stdout).unwrap();
    assert_eq!(json["findings"].as_array().unwrap().len(), 0);
}

#[test]
fn ndjson_lines_parse() {
    let output = run(
        oomwhy()
            .args(["--format", "ndjson"])
            .arg(fixture("torch_reserved_era_growth_fairseq.log"))
            .arg(fixture("illegal_memory_access_cuda_failure_700.log")),
        "",
    );
    assert_status(&output, 0);
    let lines: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let (summary, findings) = lines.split_last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["summary"]["inputs"], 2);
    assert_eq!(
        findings.len(),
        summary["summary"]["findings"].as_u64().unwrap() as usize
    );
    for (n, line) in findings.iter().enumerate() {
        assert_eq!(line["type"], "finding");
        assert_eq!(line["schema_version"], 1);
        assert_eq!(line["finding"]["id"], n + 1);
    }
    let growth = &findings[2]["finding"]["diagnosis"]["verdicts"];
    assert!(growth
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["code"] == "memory_growth"));
}

#[test]
fn markdown_and_github_formats() {
    let log = fixture("torch_capacity_2_5_allowed_other_process.log");
    let md = run(oomwhy().args(["--format", "markdown"]).arg(&log), "");
    assert_status(&md, 0);
    let md = text(&md.stdout);
    assert!(md.starts_with("### 1. Out of memory: PyTorch could not allocate 1.95 GiB"));
    assert!(md.contains("| Number | Value | Meaning |"));
    assert!(md.contains("\n1. **Raise or remove the per-process memory limit**"));
    assert!(md.contains("\n```text\nCUDA out of memory. Tried to allocate 1.95 GiB."));
    assert!(md.contains("`oomwhy explain memory_limit`"));

    let gh = run(oomwhy().args(["--format", "github"]).arg(&log), "");
    assert_status(&gh, 0);
    let gh = text(&gh.stdout);
    assert_eq!(gh.lines().count(), 1);
    assert!(gh.starts_with(&format!(
        "::error file={},line=14,title=oomwhy%3A PyTorch could not allocate 1.95 GiB on GPU 1::",
        log.display()
    )));
    assert!(!gh.trim_end().contains('\n'));
}

#[test]
fn quiet_prints_nothing() {
    let found = run(oomwhy().arg("-q"), &format!("{SEED}\n"));
    assert_status(&found, 0);
    assert!(found.stdout.is_empty() && found.stderr.is_empty());
    let nothing = run(oomwhy().arg("--quiet"), "fine\n");
    assert_status(&nothing, 1);
    assert!(nothing.stdout.is_empty() && nothing.stderr.is_empty());
    let json = run(
        oomwhy().args(["-q", "--format", "ndjson"]),
        &format!("{SEED}\n"),
    );
    assert_status(&json, 0);
    assert!(json.stdout.is_empty() && json.stderr.is_empty());
}

#[test]
fn explain_prints_lists_and_rejects() {
    let output = run(oomwhy().args(["explain", "Frag"]), "");
    assert_status(&output, 0);
    let out = text(&output.stdout);
    assert!(out.starts_with("# fragmentation: "));
    assert!(out.contains("## How to fix it"));
    assert!(!out.contains('\x1b'), "no colour when not a terminal");

    let list = run(oomwhy().args(["explain", "--list"]), "");
    assert_status(&list, 0);
    let list = text(&list.stdout);
    for (code, title) in oomwhy::explain::docs::list() {
        assert!(
            list.lines()
                .any(|l| l.trim_start().starts_with(code) && l.ends_with(title)),
            "{code}"
        );
    }

    let unknown = run(oomwhy().args(["explain", "nonsense"]), "");
    assert_status(&unknown, 2);
    assert!(unknown.stdout.is_empty());
    let err = text(&unknown.stderr);
    assert!(err.contains("unknown code `nonsense`"), "{err}");
    assert!(err.contains("explain --list"), "{err}");
    assert!(err.lines().count() <= 2, "no wall of codes: {err}");

    // A misspelling gets suggestions, an ambiguous prefix names its matches.
    let typo = run(oomwhy().args(["explain", "fragmantation"]), "");
    assert_status(&typo, 2);
    let err = text(&typo.stderr);
    assert!(err.contains("did you mean: fragmentation"), "{err}");
    let ambiguous = run(oomwhy().args(["explain", "memory_"]), "");
    assert_status(&ambiguous, 2);
    let err = text(&ambiguous.stderr);
    assert!(
        err.contains("matches several codes")
            && err.contains("memory_limit")
            && err.contains("memory_growth"),
        "{err}"
    );

    // The list groups kinds and verdicts.
    assert!(list.starts_with("Kinds of error"), "{list}");
    assert!(list.contains("\nVerdicts (why it happened"), "{list}");

    let neither = run(oomwhy().arg("explain"), "");
    assert_status(&neither, 2);
}

#[test]
fn schema_prints_the_shipped_files() {
    let report = run(oomwhy().arg("schema"), "");
    assert_status(&report, 0);
    assert_eq!(text(&report.stdout), oomwhy::schema::REPORT);
    let ndjson = run(oomwhy().args(["schema", "--ndjson"]), "");
    assert_status(&ndjson, 0);
    let json: Value = serde_json::from_slice(&ndjson.stdout).unwrap();
    assert_eq!(
        json["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
}

#[test]
fn completions_man_help_version() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let output = run(oomwhy().args(["completions", shell]), "");
        assert_status(&output, 0);
        let script = text(&output.stdout);
        assert!(
            script.contains("oomwhy") && script.contains("explain"),
            "{shell}"
        );
    }
    let man = run(oomwhy().arg("man"), "");
    assert_status(&man, 0);
    assert!(text(&man.stdout).contains(".TH oomwhy"));

    let help = run(oomwhy().arg("--help"), "");
    assert_status(&help, 0);
    let help = text(&help.stdout);
    assert!(help.contains("Examples:") && help.contains("oomwhy run -- python train.py"));
    let version = run(oomwhy().arg("--version"), "");
    assert_status(&version, 0);
    assert_eq!(
        text(&version.stdout).trim(),
        format!("oomwhy {}", env!("CARGO_PKG_VERSION"))
    );
}

#[cfg(unix)]
#[test]
fn run_passes_output_through_and_exits_with_the_commands_status() {
    let script = format!(
        "printf 'out\\r1\\000'; printf '{RUNTIME_OOM}\\n' >&2; printf 'no newline'; exit 3"
    );
    let output = run(oomwhy().args(["run", "--", "sh", "-c", &script]), "");
    assert_status(&output, 3);
    assert_eq!(output.stdout, b"out\r1\0no newline");
    let err = text(&output.stderr);
    assert!(err.starts_with(&format!("{RUNTIME_OOM}\n")), "{err}");
    assert!(err.contains("oomwhy: the command exited with status 3"));
    // stdout and stderr are scanned as one log, in the order their lines
    // arrive: stdout's unfinished line may come before or after (line 1 or 2).
    assert!(err.contains("<output> line "), "{err}");
    assert!(err.contains("More: oomwhy explain cuda_runtime_oom"));

    // In Chinese: the status line and the report.
    let output = run(
        oomwhy().args(["--lang", "zh", "run", "--", "sh", "-c", &script]),
        "",
    );
    assert_status(&output, 3);
    let err = text(&output.stderr);
    assert!(err.contains("oomwhy: 命令以状态 3 退出"), "{err}");
    assert!(
        err.contains("详见：oomwhy explain cuda_runtime_oom"),
        "{err}"
    );
    let missing = run(
        oomwhy().args(["--lang", "zh", "run", "no-such-command-x"]),
        "",
    );
    assert_status(&missing, 127);
    assert!(text(&missing.stderr).contains("无法运行 no-such-command-x：找不到命令"));

    let clean = run(oomwhy().args(["run", "sh", "-c", "echo fine"]), "");
    assert_status(&clean, 0);
    assert_eq!(clean.stdout, b"fine\n");
    assert!(clean.stderr.is_empty());

    let failed = run(oomwhy().args(["run", "--", "sh", "-c", "exit 42"]), "");
    assert_status(&failed, 42);
    assert!(text(&failed.stderr).contains("no out-of-memory error or GPU crash found"));

    let missing = run(oomwhy().args(["run", "--", "no-such-command-oomwhy"]), "");
    assert_status(&missing, 127);

    let quiet = run(oomwhy().args(["run", "-q", "--", "sh", "-c", &script]), "");
    assert_status(&quiet, 3);
    assert_eq!(text(&quiet.stderr), format!("{RUNTIME_OOM}\n"));
}

#[cfg(unix)]
#[test]
fn run_writes_a_json_report() {
    let dir = temp_dir("run_json");
    let report = dir.join("report.json");
    let script = format!("echo '{SEED}'; exit 1");
    let output = run(
        oomwhy()
            .args(["run", "--format", "json", "--report"])
            .arg(&report)
            .args(["--", "sh", "-c", &script]),
        "",
    );
    assert_status(&output, 1);
    assert_eq!(
        text(&output.stdout),
        format!("{SEED}\n"),
        "stdout untouched"
    );
    let json: Value = serde_json::from_str(&fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["findings"][0]["source"]["input"], "<output>");
    assert_eq!(json["summary"]["inputs"], 1);
}

#[cfg(unix)]
#[test]
fn run_decodes_a_signal_death() {
    let output = run(oomwhy().args(["run", "--", "sh", "-c", "kill -9 $$"]), "");
    assert_status(&output, 137);
    let err = text(&output.stderr);
    assert!(err.contains("signal 9 (SIGKILL"), "{err}");
    assert!(
        err.contains("most likely by the kernel's out-of-memory killer"),
        "{err}"
    );
}

/// Reads `from` on a thread and sends what arrives.
fn forward<R: Read + Send + 'static>(from: R) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

#[cfg(unix)]
#[test]
fn run_passes_partial_lines_through_live() {
    let mut child = oomwhy()
        .args([
            "run",
            "--",
            "sh",
            "-c",
            "printf 'epoch 1 '; read x; printf 'done\\n'",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut byte = [0u8; 1];
        while let Ok(1) = stdout.read(&mut byte) {
            if tx.send(byte[0]).is_err() {
                return;
            }
        }
    });
    let mut seen = Vec::new();
    while seen != b"epoch 1 " {
        match rx.recv_timeout(PATIENCE) {
            Ok(b) => seen.push(b),
            Err(_) => {
                let _ = child.kill();
                panic!("the partial line did not come through: {seen:?}");
            }
        }
    }
    // The command is still waiting for its input: the bytes came live.
    child.stdin.take().unwrap().write_all(b"\n").unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let rest: Vec<u8> = rx.iter().collect();
    assert_eq!(rest, b"done\n");
}

fn append(path: &Path, line: &str) {
    let mut f = fs::OpenOptions::new().append(true).open(path).unwrap();
    writeln!(f, "{line}").unwrap();
}

#[test]
fn follow_survives_truncation_and_rotation() {
    let dir = temp_dir("follow");
    let log = dir.join("train.log");
    // Long enough that the truncated file below is shorter.
    fs::write(&log, "step 1 loss 2.0\n".repeat(200)).unwrap();
    let mut child = oomwhy()
        .args(["--follow", "--format", "ndjson"])
        .arg(&log)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = forward(child.stdout.take().unwrap());
    let messages = forward(child.stderr.take().unwrap());
    let next_finding = |what: &str| -> Value {
        match lines.recv_timeout(PATIENCE) {
            Ok(line) => {
                let json: Value = serde_json::from_str(&line).unwrap();
                assert_eq!(json["type"], "finding", "{what}");
                json["finding"].clone()
            }
            Err(_) => panic!("no finding for {what}"),
        }
    };

    // A thread appends, as a training job would.
    let writer = {
        let log = log.clone();
        thread::spawn(move || append(&log, RUNTIME_OOM))
    };
    writer.join().unwrap();
    let first = next_finding("the appended crash");
    assert_eq!(first["kind"], "cuda_runtime_oom");
    assert_eq!(first["source"]["line"], 201);

    fs::write(&log, format!("{SEED}\n")).unwrap();
    let second = next_finding("the crash after truncation");
    assert_eq!(second["kind"], "torch_allocator_oom");
    assert_eq!(second["source"]["line"], 1);
    assert_eq!(second["id"], 2);

    fs::rename(&log, dir.join("train.log.1")).unwrap();
    fs::write(&log, "restarted\n").unwrap();
    append(&log, ILLEGAL);
    let third = next_finding("the crash in the rotated-in file");
    assert_eq!(third["kind"], "illegal_memory_access");
    assert_eq!(third["source"]["line"], 2);

    let _ = child.kill();
    let _ = child.wait();
    let notes: Vec<String> = messages.try_iter().collect();
    assert!(
        notes.iter().any(|n| n.contains("was truncated")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("was replaced")),
        "{notes:?}"
    );
}

#[test]
fn follow_needs_one_file_and_a_streaming_format() {
    let two = run(oomwhy().args(["--follow", "a.log", "b.log"]), "");
    assert_status(&two, 2);
    let json = run(
        oomwhy()
            .args(["--follow", "--format", "json"])
            .arg(fixture("torch_reserved_era_seed.log")),
        "",
    );
    assert_status(&json, 2);
    assert!(text(&json.stderr).contains("--format text, ndjson"));
}

/// Every line of `text` fits in `width` display columns.
fn assert_fits(text: &str, width: usize) {
    for line in text.lines() {
        let columns = unicode_width::UnicodeWidthStr::width(line);
        assert!(columns <= width, "{columns} columns: {line}");
    }
}

#[test]
fn text_fits_the_terminal_width() {
    let log =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/nccl_timeout_multirank_after_oom.log");
    for lang in ["en", "zh"] {
        let output = run(
            oomwhy()
                .env("COLUMNS", "80")
                .args(["--lang", lang])
                .arg(&log),
            "",
        );
        assert_status(&output, 0);
        assert_fits(&text(&output.stdout), 80);
        let narrow = run(
            oomwhy()
                .env("COLUMNS", "20")
                .args(["--lang", lang])
                .arg(&log),
            "",
        );
        assert_fits(&text(&narrow.stdout), 40);
    }
}

#[test]
fn brief_prints_only_the_answer() {
    let output = run(oomwhy().arg("--brief"), &format!("{SEED}\n"));
    assert_status(&output, 0);
    let out = text(&output.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("[1] OUT OF MEMORY"), "{out}");
    assert!(lines[1].trim_start().starts_with("Why: "), "{out}");
    assert!(out.contains("First fix: "), "{out}");
    assert!(!out.contains("What the numbers mean"), "{out}");
    assert!(out.ends_with("(1 line in 1 input)\n"), "{out}");
}

#[test]
fn chinese_from_the_flag_or_the_locale() {
    let flag = run(oomwhy().args(["--lang", "zh"]), &format!("{SEED}\n"));
    assert_status(&flag, 0);
    let out = text(&flag.stdout);
    assert!(
        out.starts_with("[1] 显存不足 PyTorch 在 GPU 0 上分配 2.00 GiB 失败"),
        "{out}"
    );
    assert!(out.contains("怎么办（最有效的在前）"), "{out}");
    let locale = run(oomwhy().env("LANG", "zh_CN.UTF-8"), &format!("{SEED}\n"));
    assert_eq!(locale.stdout, flag.stdout);
    // LC_ALL wins over LANG, and the flag over both.
    let lc_all = run(
        oomwhy()
            .env("LANG", "zh_CN.UTF-8")
            .env("LC_ALL", "en_US.UTF-8"),
        &format!("{SEED}\n"),
    );
    assert!(text(&lc_all.stdout).contains("What to do"));
    let english = run(
        oomwhy().env("LANG", "zh_CN.UTF-8").args(["--lang", "en"]),
        &format!("{SEED}\n"),
    );
    assert!(text(&english.stdout).contains("What to do"));
    // JSON keeps its keys and codes.
    let json = run(
        oomwhy().args(["--lang", "zh", "--format", "json"]),
        &format!("{SEED}\n"),
    );
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        value["findings"][0]["diagnosis"]["verdicts"][0]["code"],
        "inconsistent_numbers"
    );
    // Errors and the explain list too.
    let nothing = run(oomwhy().args(["--lang", "zh"]), "all good\n");
    assert!(
        text(&nothing.stderr).contains("没有找到"),
        "{}",
        text(&nothing.stderr)
    );
    let list = run(oomwhy().args(["--lang", "zh", "explain", "--list"]), "");
    assert!(text(&list.stdout).contains("结论（为什么会发生"));
}

#[test]
fn completions_offer_the_codes_and_the_man_page_stands_alone() {
    let bash = run(oomwhy().args(["completions", "bash"]), "");
    assert_status(&bash, 0);
    assert!(text(&bash.stdout).contains("fragmentation"));
    let man = run(oomwhy().arg("man"), "");
    let page = text(&man.stdout);
    assert!(
        !page.contains("oomwhy-explain(1)"),
        "a sub-page nothing installs"
    );
    assert!(page.contains("OOMWHY EXPLAIN"));
}

#[test]
fn help_in_chinese() {
    let help = run(oomwhy().args(["--lang", "zh", "--help"]), "");
    assert_status(&help, 0);
    let out = text(&help.stdout);
    assert!(out.contains("逐一解释"), "{out}");
    assert!(out.contains("显示帮助"), "{out}");
    let explain = run(
        oomwhy()
            .env("LANG", "zh_CN.UTF-8")
            .args(["explain", "--help"]),
        "",
    );
    assert!(text(&explain.stdout).contains("列出所有代码"));
    let english = run(oomwhy().arg("--help"), "");
    assert!(text(&english.stdout).contains("Explain why your GPU ran out of memory"));
}

/// Every page renders for a terminal (`--color always`, reflowed to
/// `COLUMNS`) in both languages, and piped it is the Markdown source.
#[test]
fn every_page_renders_in_both_languages() {
    for (code, _) in oomwhy::explain::docs::list() {
        for lang in ["en", "zh"] {
            let styled = run(
                oomwhy()
                    .env("COLUMNS", "60")
                    .args(["explain", code, "--color", "always", "--lang", lang]),
                "",
            );
            assert_status(&styled, 0);
            assert!(text(&styled.stdout).contains('\x1b'), "{code} {lang}");
        }
        let piped = run(oomwhy().args(["explain", code]), "");
        assert!(text(&piped.stdout).starts_with(&format!("# {code}: ")));
    }
}

/// Text without its colour codes.
#[cfg(unix)]
fn plain(text: &str) -> String {
    regex::Regex::new("\x1b\\[[0-9;]*m")
        .unwrap()
        .replace_all(text, "")
        .into_owned()
}

/// A tall report on a terminal goes through the pager, as git's output
/// does, so that its answer does not scroll away; a report that fits,
/// `--no-pager`, `PAGER=cat` and a pager that cannot be started print it
/// directly. The pager here is a shell line that keeps what it is given
/// (and the LESS it was run with) in files.
#[cfg(unix)]
#[test]
fn a_tall_report_on_a_terminal_goes_through_the_pager() {
    use crate::live::{on_a_terminal, Terminal};
    use std::ffi::OsStr;
    let rows = |rows| Terminal {
        rows,
        columns: 80,
        interrupt_on: "",
    };
    let dir = temp_dir("pager");
    let (paged, less) = (dir.join("paged.txt"), dir.join("less.txt"));
    let pager = format!(
        "printf '%s\\n' \"$LESS\" > '{}'; cat > '{}'",
        less.display(),
        paged.display()
    );
    let pager = OsStr::new(&pager);
    // One out-of-memory report of about 90 lines, on a 24-row terminal.
    let log = fixture("torch_capacity_2_9_pytorch_alloc_conf.log");
    let log = log.as_os_str();
    let answer = "More: oomwhy explain";
    let reset = || {
        let _ = fs::remove_file(&paged);
        let _ = fs::remove_file(&less);
    };

    let (status, screen) = on_a_terminal(&[log], &[("PAGER", pager)], rows(24));
    assert_eq!(status, 0, "{screen}");
    let report = plain(&fs::read_to_string(&paged).expect("the pager ran"));
    assert!(report.contains(answer), "{report}");
    assert!(report.lines().count() > 24, "{report}");
    assert!(
        !plain(&screen).contains(answer),
        "printed as well: {screen}"
    );
    assert_eq!(fs::read_to_string(&less).unwrap(), "FRX\n");

    // A LESS the user set is kept.
    reset();
    let env = [("PAGER", pager), ("LESS", OsStr::new("-S"))];
    let (status, _) = on_a_terminal(&[log], &env, rows(24));
    assert_eq!(status, 0);
    assert_eq!(fs::read_to_string(&less).unwrap(), "-S\n");

    // Printed directly: with --no-pager, when the report fits the window,
    // with PAGER=cat, and when the pager is not there.
    let no_pager = OsStr::new("--no-pager");
    let cases: [(&str, &[&OsStr], &OsStr, u16); 4] = [
        ("--no-pager", &[no_pager, log], pager, 24),
        ("a report that fits", &[log], pager, 200),
        ("PAGER=cat", &[log], OsStr::new("cat"), 24),
        (
            "a missing pager",
            &[log],
            OsStr::new("no-such-pager-here"),
            24,
        ),
    ];
    for (what, args, pager, height) in cases {
        reset();
        let (status, screen) = on_a_terminal(args, &[("PAGER", pager)], rows(height));
        assert_eq!(status, 0, "{what}: {screen}");
        assert!(!paged.exists(), "{what}: paged");
        assert!(plain(&screen).contains(answer), "{what}: {screen}");
    }

    // Ctrl-C while the pager runs is the pager's: oomwhy waits for it
    // instead of ending and handing the terminal back to the shell under
    // the pager's feet. (This pager ignores it, as less does.)
    reset();
    let pager = format!(
        "trap '' INT; echo pager started; sleep 1; cat > '{}'",
        paged.display()
    );
    let terminal = Terminal {
        interrupt_on: "pager started",
        ..rows(24)
    };
    let (status, screen) = on_a_terminal(&[log], &[("PAGER", OsStr::new(&pager))], terminal);
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("^C"), "no interrupt was pressed: {screen}");
    let report = plain(&fs::read_to_string(&paged).expect("the pager ran to its end"));
    assert!(report.contains(answer), "{report}");
}

#[test]
fn no_pager_is_in_the_help_in_both_languages() {
    let english = run(oomwhy().arg("--help"), "");
    assert_status(&english, 0);
    let english = text(&english.stdout);
    assert!(english.contains("--no-pager"), "{english}");
    assert!(english.contains("less -FRX"), "{english}");
    let chinese = run(oomwhy().args(["--lang", "zh", "--help"]), "");
    let chinese = text(&chinese.stdout);
    assert!(chinese.contains("--no-pager"), "{chinese}");
    assert!(chinese.contains("直接打印到终端"), "{chinese}");
    // Not a terminal: the flag changes nothing.
    let log = fixture("torch_capacity_2_9_pytorch_alloc_conf.log");
    let paged = run(oomwhy().arg(&log), "");
    let direct = run(oomwhy().arg("--no-pager").arg(&log), "");
    assert_status(&direct, 0);
    assert_eq!(paged.stdout, direct.stdout);
}
