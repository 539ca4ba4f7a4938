//! Logs where they live: compressed files (told by their magic bytes),
//! directories (nested, with symlink loops, unreadable and binary files) and
//! the per-rank files of one job. Every wait on the binary is bounded and
//! its process group is killed on timeout.

use oomwhy::input::{self, Content, Input, Scanned};
use serde_json::Value;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const SEED: &str = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)";
const PATIENCE: Duration = Duration::from_secs(60);

fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("inputs-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Lines that compress poorly (pseudo-random hex), so that a cut archive
/// is cut in the middle of the text, not after it.
fn noise(lines: usize, seed: u64) -> String {
    let mut state = seed | 1;
    let mut out = String::new();
    for i in 0..lines {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.push_str(&format!(
            "step {i} loss {state:016x} {:016x}\n",
            state.rotate_left(17)
        ));
    }
    out
}

/// The seed message first, then noise.
fn log() -> String {
    format!("{SEED}\n{}", noise(20_000, 7))
}

type Compress = fn(&[u8]) -> Vec<u8>;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}
fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(data, 3).unwrap()
}
fn xz(data: &[u8]) -> Vec<u8> {
    let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
    e.write_all(data).unwrap();
    e.finish().unwrap()
}
fn bzip2(data: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

const FORMATS: [(&str, Compress, Content); 4] = [
    ("gzip", gzip, Content::Gzip),
    ("zstd", zstd, Content::Zstd),
    ("xz", xz, Content::Xz),
    ("bzip2", bzip2, Content::Bzip2),
];

fn scan_file(path: &Path) -> Scanned {
    input::scan_input(&Input::file(path))
}

#[test]
fn each_compression_format_is_read_by_its_magic_bytes() {
    let dir = temp_dir("formats");
    let plain = log();
    let expected = oomwhy::scan(plain.as_bytes(), "x").unwrap();
    for (name, compress, content) in FORMATS {
        // No telling extension: the content decides.
        let path = dir.join(format!("{name}-log.data"));
        fs::write(&path, compress(plain.as_bytes())).unwrap();
        let opened = Input::file(&path).open().unwrap();
        assert_eq!(opened.content, content, "{name}");
        let Scanned::Done(outcome) = scan_file(&path) else {
            panic!("{name}: not read to its end");
        };
        assert_eq!(outcome.findings.len(), 1, "{name}");
        assert_eq!(outcome.lines, expected.lines, "{name}");
        assert_eq!(outcome.bytes, plain.len() as u64, "{name}");

        // Two streams one after the other (`cat a.gz b.gz`): both are read.
        let mut two = compress(b"first part\n");
        two.extend(compress(format!("{SEED}\n").as_bytes()));
        fs::write(&path, two).unwrap();
        let Scanned::Done(outcome) = scan_file(&path) else {
            panic!("{name}: concatenated streams not read");
        };
        assert_eq!(outcome.findings.len(), 1, "{name}: concatenated");
        assert_eq!(outcome.findings[0].source.line, 2, "{name}: concatenated");
    }
}

#[test]
fn truncated_and_corrupt_archives_keep_what_came_before() {
    let dir = temp_dir("damaged");
    let plain = log();
    for (name, compress, _) in FORMATS {
        let whole = compress(plain.as_bytes());
        let mut corrupt = whole.clone();
        let middle = corrupt.len() / 2;
        for b in &mut corrupt[middle..middle + 64] {
            *b ^= 0x5a;
        }
        let truncated = whole[..whole.len() / 2].to_vec();
        for (damage, bytes) in [("truncated", truncated), ("corrupt", corrupt)] {
            let path = dir.join(format!("{name}-{damage}"));
            fs::write(&path, bytes).unwrap();
            let Scanned::Failed(outcome, err) = scan_file(&path) else {
                panic!("{name} {damage}: no error");
            };
            let message = err.to_string();
            assert!(message.contains(name), "{name} {damage}: {message}");
            assert!(
                message.contains(if damage == "truncated" {
                    "ends early"
                } else {
                    "corrupt"
                }),
                "{name} {damage}: {message}"
            );
            // The message at the start was found, and some lines read.
            assert_eq!(outcome.findings.len(), 1, "{name} {damage}");
            assert!(outcome.lines > 1_000, "{name} {damage}: {}", outcome.lines);
        }
    }
}

/// Runs the binary; kills its process group if it takes too long.
fn oomwhy(args: &[&str], dir: &Path) -> Output {
    oomwhy_with_stdin(args, dir, None)
}

/// Runs the binary with `stdin` written from a thread.
fn oomwhy_with_stdin(args: &[&str], dir: &Path, stdin: Option<Vec<u8>>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_oomwhy"));
    cmd.args(args)
        .current_dir(dir)
        .env("TERM", "dumb")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().expect("the binary starts");
    let pid = child.id();
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(PATIENCE) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
            panic!("oomwhy {args:?} took longer than {PATIENCE:?}");
        }
    }
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}\n--- stdout\n{}\n--- stderr\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn sources(report: &Value) -> Vec<(String, u64)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let source = &f["source"];
            (
                source["input"].as_str().unwrap().to_string(),
                source["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn directories_are_walked_in_path_order() {
    let dir = temp_dir("walk");
    let logs = dir.join("logs");
    fs::create_dir_all(logs.join("b/deeper")).unwrap();
    fs::create_dir_all(logs.join("a")).unwrap();
    fs::write(logs.join("b/deeper/z.log"), format!("x\n{SEED}\n")).unwrap();
    fs::write(
        logs.join("b/late.log.gz"),
        gzip(format!("{SEED}\n").as_bytes()),
    )
    .unwrap();
    fs::write(logs.join("a/one.log"), format!("a\nb\n{SEED}\n")).unwrap();
    fs::write(logs.join("a/quiet.log"), "nothing here\n").unwrap();
    // A binary file that contains the phrase is skipped, as ripgrep skips it.
    fs::write(logs.join("a/core.bin"), format!("\0\0{SEED}\n")).unwrap();
    #[cfg(unix)]
    {
        // A loop back to the top, and a symlink to nowhere (unreadable).
        std::os::unix::fs::symlink("..", logs.join("b/up")).unwrap();
        std::os::unix::fs::symlink("missing.log", logs.join("a/dangling.log")).unwrap();
        // A FIFO is passed over: reading it would wait for a writer forever.
        let fifo = logs.join("a/pipe.log");
        let made = Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()) || !fifo.exists());
    }
    let output = oomwhy(&["--format", "json", "logs"], &dir);
    let report = json(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        sources(&report),
        [
            ("logs/a/one.log".to_string(), 3),
            ("logs/b/deeper/z.log".to_string(), 2),
            ("logs/b/late.log.gz".to_string(), 1),
        ]
    );
    assert!(
        stderr.contains("logs/a/core.bin: binary file, skipped"),
        "{stderr}"
    );
    #[cfg(unix)]
    {
        assert!(
            stderr.contains("logs/b/up: a symlink back to logs"),
            "{stderr}"
        );
        assert!(stderr.contains("dangling.log"), "{stderr}");
        // The same notes in Chinese.
        let output = oomwhy(&["--lang", "zh", "--format", "json", "logs"], &dir);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("logs/a/core.bin：二进制文件，跳过"),
            "{stderr}"
        );
        assert!(stderr.contains("logs/b/up：指回 logs"), "{stderr}");
        assert!(stderr.contains("dangling.log：文件不存在"), "{stderr}");
        // The dangling symlink could not be read: exit status 2, findings kept.
        assert_eq!(report["summary"]["input_errors"], 1, "{stderr}");
        assert_eq!(output.status.code(), Some(2));
    }
    // A directory among files (a shell glob) is walked, not an error.
    fs::remove_file(logs.join("a/dangling.log")).unwrap_or(());
    let output = oomwhy(&["-q", "logs", "logs/a/one.log"], &dir);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_in_a_directory_is_an_error_for_that_file_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("unreadable");
    let logs = dir.join("logs");
    fs::create_dir_all(&logs).unwrap();
    fs::write(logs.join("a.log"), format!("{SEED}\n")).unwrap();
    let secret = logs.join("b.log");
    fs::write(&secret, format!("{SEED}\n")).unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&secret).is_ok() {
        // Running as root: permissions do not stop reads; the dangling
        // symlink case in `directories_are_walked_in_path_order` covers it.
        return;
    }
    let output = oomwhy(&["--format", "json", "logs"], &dir);
    let report = json(&output);
    assert_eq!(sources(&report), [("logs/a.log".to_string(), 1)]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("logs/b.log: permission denied"));
    assert_eq!(output.status.code(), Some(2));
}

fn rank_log(rank: u32, time: Option<&str>) -> String {
    let stamp = |t: &str| time.map(|_| format!("{t} ")).unwrap_or_default();
    format!(
        "{}step 10\n{}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU {rank} has a total capacity of 79.15 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has 77.93 GiB memory in use. Of the allocated memory 70.12 GiB is allocated by PyTorch, and 6.88 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n",
        stamp("2025-03-01T12:00:00.000Z"),
        time.map(|t| format!("{t} ")).unwrap_or_default(),
    )
}

#[test]
fn per_rank_files_of_one_job_fold_into_one_finding() {
    let dir = temp_dir("ranks");
    let job = dir.join("job");
    fs::create_dir_all(&job).unwrap();
    // Rank 2 fails first.
    let times = ["12:00:09.5", "12:00:07", "12:00:03.25", "12:00:08"];
    for (rank, time) in times.iter().enumerate() {
        let stamp = format!("2025-03-01T{time}Z");
        fs::write(
            job.join(format!("rank{rank}.log")),
            rank_log(rank as u32, Some(&stamp)),
        )
        .unwrap();
    }
    let report = json(&oomwhy(&["--format", "json", "job"], &dir));
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report:#}");
    let f = &findings[0];
    assert_eq!(f["ranks"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(f["devices"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(f["first_rank"], 2);
    assert_eq!(f["occurrences"], 4);
    assert_eq!(f["source"]["input"], "job/rank2.log");
    assert_eq!(report["summary"]["inputs"], 4);

    // Without timestamps: still folded, but which rank failed first is unknown.
    for rank in 0..2u32 {
        fs::write(job.join(format!("rank{rank}.log")), rank_log(rank, None)).unwrap();
    }
    fs::remove_file(job.join("rank2.log")).unwrap();
    fs::remove_file(job.join("rank3.log")).unwrap();
    let report = json(&oomwhy(&["--format", "json", "job"], &dir));
    let f = &report["findings"][0];
    assert_eq!(report["findings"].as_array().unwrap().len(), 1);
    assert_eq!(f["ranks"], serde_json::json!([0, 1]));
    assert_eq!(f["first_rank"], Value::Null);
    assert!(f["notes"][0].as_str().unwrap().contains("unknown"), "{f:#}");

    // Ranks compressed apart (rotated, or compressed by a different step)
    // still belong to one job.
    let stamp = |t: &str| format!("2025-03-01T12:00:0{t}Z");
    fs::write(job.join("rank0.log"), rank_log(0, Some(&stamp("5")))).unwrap();
    fs::remove_file(job.join("rank1.log")).unwrap();
    fs::write(
        job.join("rank1.log.gz"),
        gzip(rank_log(1, Some(&stamp("2"))).as_bytes()),
    )
    .unwrap();
    fs::write(
        job.join("rank2.log.zst"),
        zstd(rank_log(2, Some(&stamp("4"))).as_bytes()),
    )
    .unwrap();
    let report = json(&oomwhy(&["--format", "json", "job"], &dir));
    assert_eq!(
        report["findings"].as_array().unwrap().len(),
        1,
        "{report:#}"
    );
    let f = &report["findings"][0];
    assert_eq!(f["ranks"], serde_json::json!([0, 1, 2]));
    assert_eq!(f["first_rank"], 1);
    assert_eq!(f["source"]["input"], "job/rank1.log.gz");
}

#[test]
fn files_of_different_jobs_never_fold() {
    let dir = temp_dir("jobs");
    for (path, rank) in [
        ("a/rank0.log", 0),
        ("b/rank1.log", 1),
        ("job7_rank0.log", 0),
        ("job8_rank1.log", 1),
        ("slurm-1234.out", 0),
        ("slurm-1235.out", 1),
    ] {
        let path = dir.join("runs").join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, rank_log(rank, None)).unwrap();
    }
    let report = json(&oomwhy(&["--format", "json", "runs"], &dir));
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 6, "{report:#}");
    for f in findings {
        assert_eq!(f["occurrences"], 1);
    }
}

#[test]
fn a_truncated_archive_named_alone_keeps_its_findings() {
    let dir = temp_dir("alone");
    let whole = gzip(log().as_bytes());
    fs::write(dir.join("cut.gz"), &whole[..whole.len() / 2]).unwrap();
    for format in ["json", "ndjson"] {
        let output = oomwhy(&["--format", format, "cut.gz"], &dir);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("cut.gz: the gzip data ends early"),
            "{stderr}"
        );
        assert_eq!(output.status.code(), Some(2));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("torch_allocator_oom"), "{format}: {stdout}");
    }
}

#[test]
fn compressed_standard_input_is_decompressed() {
    let dir = temp_dir("stdin");
    for (name, compress, _) in FORMATS {
        let output = oomwhy_with_stdin(
            &["--format", "json"],
            &dir,
            Some(compress(log().as_bytes())),
        );
        let report = json(&output);
        assert_eq!(sources(&report), [("<stdin>".to_string(), 1)], "{name}");
        assert_eq!(report["summary"]["lines"], 20_001, "{name}");
    }
}

/// The files of one job's archive: two ranks' logs of one crash (rank 1
/// fails first) and a binary file.
fn job_files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "job/rank0.log",
            rank_log(0, Some("2025-03-01T12:00:09Z")).into_bytes(),
        ),
        // Rank 1 fails first.
        (
            "job/rank1.log",
            rank_log(1, Some("2025-03-01T12:00:03Z")).into_bytes(),
        ),
        (
            "job/model.bin",
            b"\x7fELF\x02\x01\x01\x00\x00\x00".repeat(64),
        ),
    ]
}

/// A tar archive of `files` (path, bytes), as `tar` writes it.
fn tar_of(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, path, bytes.as_slice())
            .unwrap();
    }
    builder.into_inner().unwrap()
}

#[test]
fn each_file_of_a_tar_archive_is_an_input_of_its_own() {
    let dir = temp_dir("tar");
    let mut files = job_files();
    files.extend([
        // A compressed file inside the archive is decompressed.
        (
            "notes/other.txt.gz",
            gzip(format!("noise\n{SEED}\n").as_bytes()),
        ),
    ]);
    // An archive inside the archive is passed over, not opened.
    let inner = gzip(&tar_of(&files[3..]));
    files.push(("job/inner.tar.gz", inner));
    let archive = tar_of(&files);
    fs::write(dir.join("job.tar"), &archive).unwrap();
    fs::write(dir.join("job.tar.gz"), gzip(&archive)).unwrap();
    fs::write(dir.join("job.tar.zst"), zstd(&archive)).unwrap();
    for name in ["job.tar", "job.tar.gz", "job.tar.zst"] {
        let output = oomwhy(&["--format", "json", name], &dir);
        let report = json(&output);
        assert_eq!(
            sources(&report),
            [
                (format!("{name}:job/rank1.log"), 2),
                (format!("{name}:notes/other.txt.gz"), 2)
            ],
            "{name}: {report:#}"
        );
        // The two ranks' copies of one crash fold, as in a directory.
        let f = &report["findings"][0];
        assert_eq!(f["ranks"], serde_json::json!([0, 1]), "{name}");
        assert_eq!(f["first_rank"], 1, "{name}");
        assert_eq!(report["summary"]["inputs"], 3, "{name}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        for skipped in ["job/model.bin", "job/inner.tar.gz"] {
            assert!(
                stderr.contains(&format!("{skipped}: binary file, skipped")),
                "{stderr}"
            );
        }
        assert_eq!(output.status.code(), Some(0), "{name}");
    }

    // A tar archive found in a directory is read too (not skipped as binary),
    // and the fleet summary and NDJSON name its files.
    fs::create_dir_all(dir.join("runs")).unwrap();
    fs::write(dir.join("runs/job.tar"), &archive).unwrap();
    let report = json(&oomwhy(&["--format", "json", "runs"], &dir));
    assert_eq!(
        report["findings"].as_array().unwrap().len(),
        2,
        "{report:#}"
    );
    let summary = json(&oomwhy(&["--summary", "--format", "json", "runs"], &dir));
    // The skipped files count as inputs of the summary, as in a directory.
    assert_eq!(summary["inputs"], 5, "{summary:#}");
    assert_eq!(summary["inputs_with_findings"], 3, "{summary:#}");
    let output = oomwhy(&["--format", "ndjson", "job.tar.gz"], &dir);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("\"input\":\"job.tar.gz:notes/other.txt.gz\""),
        "{text}"
    );
}

#[test]
fn a_truncated_tar_archive_keeps_the_files_before_the_damage() {
    let dir = temp_dir("tar-cut");
    let files = [
        ("a.log", format!("{SEED}\n").into_bytes()),
        ("b.log", noise(20_000, 3).into_bytes()),
        ("c.log", format!("{SEED}\n").into_bytes()),
    ];
    let whole = gzip(&tar_of(&files));
    fs::write(dir.join("cut.tar.gz"), &whole[..whole.len() / 2]).unwrap();
    let output = oomwhy(&["--format", "json", "cut.tar.gz"], &dir);
    let report = json(&output);
    assert_eq!(sources(&report), [("cut.tar.gz:a.log".to_string(), 1)]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("ends early").count(), 1, "{stderr}");
    assert_eq!(output.status.code(), Some(2));
}

/// A zip archive of `files` (path, bytes), deflated.
fn zip_of(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, bytes) in files {
        writer
            .start_file(*path, zip::write::SimpleFileOptions::default())
            .unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

#[test]
fn each_file_of_a_zip_archive_is_an_input_of_its_own() {
    let dir = temp_dir("zip");
    let mut files = job_files();
    files.extend([
        ("notes/big.log", noise(20_000, 5).into_bytes()),
        ("notes/last.log", format!("noise\n{SEED}\n").into_bytes()),
    ]);
    let archive = zip_of(&files);
    fs::write(dir.join("job.zip"), &archive).unwrap();
    let output = oomwhy(&["--format", "json", "job.zip"], &dir);
    let report = json(&output);
    assert_eq!(
        sources(&report),
        [
            ("job.zip:job/rank1.log".to_string(), 2),
            ("job.zip:notes/last.log".to_string(), 2)
        ],
        "{report:#}"
    );
    assert_eq!(report["findings"][0]["ranks"], serde_json::json!([0, 1]));
    assert_eq!(report["findings"][0]["first_rank"], 1);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("job.zip:job/model.bin: binary file, skipped"),
        "{stderr}"
    );
    assert_eq!(output.status.code(), Some(0));

    // Cut short (a download that stopped): the directory at the end is
    // lost, the files before the damage are still read, the error is said.
    fs::write(dir.join("cut.zip"), &archive[..archive.len() * 3 / 4]).unwrap();
    let output = oomwhy(&["--format", "json", "cut.zip"], &dir);
    let report = json(&output);
    assert_eq!(
        sources(&report)[0],
        ("cut.zip:job/rank1.log".to_string(), 2)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cut.zip: the zip archive is damaged or cut short"),
        "{stderr}"
    );
    assert_eq!(output.status.code(), Some(2));

    // A zip's directory is at its end: standard input cannot be read as one.
    let output = oomwhy_with_stdin(&["--format", "json"], &dir, Some(archive));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("read from a file"), "{stderr}");
    assert_eq!(output.status.code(), Some(2));
}

/// Runs oomwhy with no arguments under a pseudo-terminal (Python's `pty`),
/// as a user who pastes into it: waits for the paste prompt, types each
/// piece of `argv[2]` (a JSON list) a moment apart, then waits for the
/// command to end. Prints `status N` (or `status timeout`, after which the
/// command is killed) and what the terminal showed.
#[cfg(unix)]
const PASTE_DRIVER: &str = r#"
import json, os, pty, select, signal, sys, time
oomwhy, pieces = sys.argv[1], json.loads(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.environ.update({"TERM": "dumb", "NO_COLOR": "1", "LC_ALL": "C.UTF-8"})
    os.execv(oomwhy, [oomwhy])
output, status, deadline = b"", None, time.time() + 20
def pump(until):
    global output
    while time.time() < until:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return
            if not chunk:
                return
            output += chunk
        if until is deadline and b"Ctrl-D" in output:
            return
try:
    pump(deadline)
    for piece in pieces:
        os.write(fd, piece.encode())
        pump(time.time() + 0.3)
    # One Ctrl-D must be enough: wait a few seconds, not for more typing.
    end = time.time() + 5
    while time.time() < end:
        done, code = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(code)
            break
        pump(time.time() + 0.1)
    pump(time.time() + 0.2)
    print("status", "timeout" if status is None else status, flush=True)
    print(output.decode(errors="replace").replace("\r\n", "\n"), flush=True)
finally:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
"#;

/// The status line and the terminal's text from [`PASTE_DRIVER`].
#[cfg(unix)]
fn paste(pieces: &[&str]) -> (String, String) {
    let pieces = serde_json::to_string(pieces).unwrap();
    let mut cmd = Command::new("python3");
    cmd.args(["-c", PASTE_DRIVER, env!("CARGO_BIN_EXE_oomwhy"), &pieces])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = cmd.spawn().expect("python3 starts");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(PATIENCE) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
            panic!("the terminal driver took longer than {PATIENCE:?}");
        }
    };
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let (status, shown) = out.split_once('\n').unwrap_or((&out, ""));
    assert!(
        status.starts_with("status "),
        "{out}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (status.to_string(), shown.to_string())
}

#[cfg(unix)]
#[test]
fn one_ctrl_d_ends_an_empty_terminal() {
    let (status, shown) = paste(&["\x04"]);
    // Nothing pasted, nothing found: exit 1, at once.
    assert_eq!(status, "status 1", "{shown}");
    assert!(
        shown.contains("no out-of-memory error or GPU crash found"),
        "{shown}"
    );
}

#[cfg(unix)]
#[test]
fn one_ctrl_d_on_a_fresh_line_ends_a_paste() {
    let (status, shown) = paste(&[&format!("step 1\n{SEED}\n"), "\x04"]);
    assert_eq!(status, "status 0", "{shown}");
    assert!(shown.contains("OUT OF MEMORY"), "{shown}");
}

#[cfg(unix)]
#[test]
fn the_report_starts_on_a_fresh_line_after_a_paste_without_one() {
    // The paste's last line has no newline: a first Ctrl-D hands it over,
    // a second ends the input. The report must not go on that line.
    let (status, shown) = paste(&[SEED, "\x04", "\x04"]);
    assert_eq!(status, "status 0", "{shown}");
    let echoed = shown
        .lines()
        .find(|line| line.contains("7.88 GiB reserved in total by PyTorch)"))
        .unwrap_or_else(|| panic!("the paste is not echoed: {shown}"));
    assert!(
        echoed.ends_with("PyTorch)"),
        "the report went on the pasted line: {echoed:?}\n{shown}"
    );
    assert!(shown.contains("OUT OF MEMORY"), "{shown}");
}

/// The findings of a report as the JSON document holds them.
fn findings_json(findings: &[oomwhy::Finding]) -> Value {
    serde_json::to_value(findings).unwrap()
}

#[test]
fn the_library_reads_what_the_command_reads() {
    let dir = temp_dir("front-door");
    let plain = log();
    let explained = |outcome| {
        let mut analysis = oomwhy::Analysis::new();
        analysis.add(outcome);
        findings_json(&analysis.finish().0)
    };
    let expected = explained(oomwhy::scan(plain.as_bytes(), "x").unwrap());
    assert_eq!(expected.as_array().unwrap().len(), 1);
    // A compressed stream is decompressed; the log scanner alone does not.
    for (name, compress, _) in FORMATS {
        let data = compress(plain.as_bytes());
        let outcome = oomwhy::scan(&data[..], "x").unwrap();
        assert_eq!(explained(outcome), expected, "{name}");
        assert!(oomwhy::scan_log(&data[..], "x")
            .unwrap()
            .findings
            .is_empty());
    }
    // A tar archive: its files' findings, folded across ranks, named
    // `NAME:PATH`, exactly as the command reports them.
    let archive = gzip(&tar_of(&job_files()));
    fs::write(dir.join("job.tar.gz"), &archive).unwrap();
    let command = json(&oomwhy(&["--format", "json", "job.tar.gz"], &dir));
    let outcome = oomwhy::scan(&archive[..], "job.tar.gz").unwrap();
    assert_eq!(explained(outcome), command["findings"]);
    assert_eq!(command["findings"][0]["ranks"], serde_json::json!([0, 1]));
    // A zip archive needs its directory, at its end: not from a stream.
    let zip = zip_of(&job_files());
    let err = oomwhy::scan(&zip[..], "job.zip").unwrap_err();
    assert!(err.to_string().contains("not from a stream"), "{err}");

    // Paths, as the command takes them: a directory with both archives, a
    // compressed log and a binary file.
    let logs = dir.join("logs");
    fs::create_dir_all(logs.join("nested")).unwrap();
    fs::write(logs.join("job.tar.gz"), &archive).unwrap();
    fs::write(logs.join("nested/job.zip"), &zip).unwrap();
    fs::write(logs.join("nested/train.log.xz"), xz(plain.as_bytes())).unwrap();
    fs::write(logs.join("core.bin"), b"\0\x01\x02").unwrap();
    let command = json(&oomwhy(&["--format", "json", "logs"], &dir));
    let report = oomwhy::scan_paths(&[&logs]);
    let renamed: Vec<_> = report
        .findings
        .iter()
        .cloned()
        .map(|mut f| {
            let relative = Path::new(&f.source.input).strip_prefix(&dir).unwrap();
            f.source.input = relative.display().to_string();
            f
        })
        .collect();
    assert_eq!(findings_json(&renamed), command["findings"]);
    assert_eq!(command["findings"].as_array().unwrap().len(), 3);
    let skipped: Vec<_> = report
        .notices
        .iter()
        .filter_map(|n| match n {
            oomwhy::Notice::Binary(name) => Some(name.rsplit('/').next().unwrap_or(name)),
            _ => None,
        })
        .collect();
    assert_eq!(skipped, ["core.bin", "model.bin", "model.bin"]);
    assert_eq!(
        report.summary.findings,
        command["summary"]["findings"].as_u64().unwrap() as usize
    );
}

/// One rank runs out of memory; the others wait for it in a collective until
/// NCCL's watchdog times out. The timeout in rank 1's file points at the OOM
/// in rank 0's, as it would in one file.
#[test]
fn a_timeout_in_one_rank_file_is_linked_to_the_oom_in_another() {
    let dir = temp_dir("linked-ranks");
    let job = dir.join("job");
    fs::create_dir_all(&job).unwrap();
    fs::write(
        job.join("rank0.log"),
        rank_log(0, Some("2025-03-01T12:00:03Z")),
    )
    .unwrap();
    fs::write(
        job.join("rank1.log"),
        "2025-03-01T12:10:04Z step 10\n2025-03-01T12:10:04Z [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1432, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600098 milliseconds before timing out.\n",
    )
    .unwrap();
    let report = json(&oomwhy(&["--format", "json", "job"], &dir));
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2, "{report:#}");
    let oom = findings
        .iter()
        .find(|f| f["kind"] == "torch_allocator_oom")
        .unwrap();
    let timeout = findings
        .iter()
        .find(|f| f["kind"] == "nccl_timeout")
        .unwrap();
    assert_eq!(timeout["consequence_of"], oom["id"], "{report:#}");
}
