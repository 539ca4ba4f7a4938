//! Live input: `--follow FILE` and a standard input that stays open report
//! a finding soon after its message is complete, while other lines keep
//! arriving; `--follow` waits for a file that is not there yet and can start
//! at its end; like `tail -f`, it ends soon after the reader of its output
//! goes away, even on a quiet log. Every wait is bounded; every process
//! started is killed.
#![cfg(unix)]

use crate::live;
use crate::live::{first_line_within, oomwhy, Live, ILLEGAL, RUNTIME_OOM, SEED};
use oomwhy::{Finding, Stream};
use serde_json::Value;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("follow-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn append(path: &Path, text: &str) {
    let mut f = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    writeln!(f, "{text}").unwrap();
}

/// Appends a noise line to `path` every 50 ms until the flag is set: other
/// ranks and a watchdog still writing after the crash.
fn keep_writing(path: PathBuf, line: &'static str) -> (Arc<AtomicBool>, thread::JoinHandle<()>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let writer = thread::spawn(move || {
        while !flag.load(Ordering::SeqCst) {
            append(&path, line);
            thread::sleep(Duration::from_millis(50));
        }
    });
    (stop, writer)
}

/// The next NDJSON finding on stdout.
fn next_finding(run: &mut Live, what: &str) -> Value {
    let line = run.stdout_line(what, |l| l.contains("\"type\":\"finding\""));
    serde_json::from_str::<Value>(&line).unwrap()["finding"].clone()
}

#[test]
fn follow_reports_a_crash_while_other_lines_keep_coming() {
    let dir = temp_dir("busy");
    let log = dir.join("train.log");
    fs::write(&log, "start\n").unwrap();
    let mut run = Live::piped(oomwhy().args(["--follow", "--format", "ndjson"]).arg(&log));
    let (stop, writer) = keep_writing(log.clone(), "[rank1]: watchdog heartbeat");
    thread::sleep(Duration::from_millis(300));
    append(&log, &format!("[rank0]: {SEED}"));
    // rank 0 went quiet after its crash; rank 1 keeps writing until the
    // finding is reported (far fewer lines than the fold window, and never
    // a second of quiet): only settling reports it.
    let finding = next_finding(&mut run, "the crash, while the log still grows");
    assert_eq!(finding["kind"], "torch_allocator_oom");
    assert_eq!(finding["ranks"], serde_json::json!([0]));
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
}

#[test]
fn follow_waits_for_the_file_to_appear() {
    let dir = temp_dir("later");
    let log = dir.join("not-yet.log");
    let mut run = Live::piped(oomwhy().args(["--follow", "--format", "ndjson"]).arg(&log));
    thread::sleep(Duration::from_millis(500));
    assert!(
        run.child.try_wait().unwrap().is_none(),
        "a missing file is waited for, not an error"
    );
    append(&log, "step 3");
    append(&log, RUNTIME_OOM);
    let finding = next_finding(&mut run, "the crash in the file created later");
    assert_eq!(finding["kind"], "cuda_runtime_oom");
    assert_eq!(finding["source"]["line"], 2);
    let err = run.stderr.as_ref().unwrap();
    let notes: Vec<String> = err.try_iter().collect();
    assert!(
        notes.iter().any(|n| n.contains("does not exist yet")),
        "{notes:?}"
    );
}

#[test]
fn follow_from_the_end_skips_old_crashes() {
    let dir = temp_dir("from_end");
    let log = dir.join("train.log");
    fs::write(&log, format!("{SEED}\nrestarted\n")).unwrap();
    let mut run = Live::piped(
        oomwhy()
            .args(["--follow", "--from-end", "--format", "ndjson"])
            .arg(&log),
    );
    // Appended until reported: oomwhy may take a while to start and skip
    // to the end on a busy machine, and what it skipped is not reported.
    let is_finding = |l: &str| l.contains("\"type\":\"finding\"");
    let line = (0..10)
        .find_map(|_| {
            append(&log, ILLEGAL);
            append(&log, "after");
            run.stdout_line_within(Duration::from_secs(2), is_finding)
        })
        .expect("the new crash is reported");
    let finding = serde_json::from_str::<Value>(&line).unwrap()["finding"].clone();
    assert_eq!(finding["kind"], "illegal_memory_access");
    assert_eq!(finding["id"], 1, "the old crash is not reported");

    // --from-end means nothing without --follow.
    let mut run = Live::piped(oomwhy().arg("--from-end").arg(&log));
    assert_eq!(run.exit_within(live::PATIENCE).code(), Some(2));
}

#[test]
fn a_pipe_that_stays_open_reports_as_it_goes() {
    // `tail -f log | oomwhy --format ndjson`.
    let mut run = Live::start(
        oomwhy()
            .args(["--format", "ndjson"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        Stdio::piped(),
    );
    let mut stdin = run.child.stdin.take().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let writer = thread::spawn(move || {
        writeln!(stdin, "epoch 1\n{RUNTIME_OOM}").unwrap();
        while !flag.load(Ordering::SeqCst) {
            if writeln!(stdin, "still running").is_err() {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
        // Dropping stdin ends the input.
    });
    let finding = next_finding(&mut run, "the crash, with the pipe still open");
    assert_eq!(finding["kind"], "cuda_runtime_oom");
    assert_eq!(finding["source"]["line"], 2);
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    assert_eq!(run.exit_within(live::PATIENCE).code(), Some(0));
    let summary = run.stdout_line("the summary", |l| l.contains("\"type\":\"summary\""));
    assert!(summary.contains("\"findings\":1"), "{summary}");
}

fn settle(stream: &mut Stream) -> Vec<Finding> {
    let mut found = Vec::new();
    stream.settle(&mut |f| found.push(f));
    found
}

#[test]
fn settle_hands_out_complete_messages_only() {
    let mut stream = Stream::new("live");
    let mut none = |_: Finding| panic!("not complete yet");
    stream.feed(format!("{RUNTIME_OOM}\n").as_bytes(), &mut none);
    // The message could still continue on the next line...
    assert!(settle(&mut stream).is_empty());
    // ...but no line came until the next settle: it is complete.
    assert_eq!(settle(&mut stream).len(), 1);

    // Rank 1 crashes and goes quiet while rank 0 keeps logging: its message
    // is finished one settle after its last line.
    stream.feed(format!("[rank1]: {SEED}\n").as_bytes(), &mut none);
    stream.feed(b"[rank0]: step 10\n", &mut none);
    assert!(
        settle(&mut stream).is_empty(),
        "rank 1 printed since the last settle"
    );
    stream.feed(b"[rank0]: step 11\n", &mut none);
    let found = settle(&mut stream);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind.slug(), "torch_allocator_oom");
    assert_eq!(found[0].ranks, [1]);

    // An unfinished line stays unprocessed.
    stream.feed(RUNTIME_OOM.as_bytes(), &mut none);
    assert!(settle(&mut stream).is_empty());
    let mut rest = Vec::new();
    stream.finish(&mut |f| rest.push(f));
    assert_eq!(rest.len(), 1);
}

/// How soon after its reader closes a live oomwhy must exit (`tail -f`
/// exits at once).
const CLOSED_READER_EXIT: Duration = Duration::from_secs(1);

/// Plays `head -1` on oomwhy's stdout: reads one line if `expect_line`,
/// else waits a while and reads nothing; checks that oomwhy is still
/// running, closes the read end, and returns how long oomwhy took to exit
/// (with status 0, as for any closed pipe).
fn exit_after_the_reader_closes(
    mut run: Live,
    mut out: std::process::ChildStdout,
    expect_line: Option<&str>,
    what: &str,
) -> Duration {
    match expect_line {
        Some(wanted) => {
            let line = first_line_within(&mut out, live::PATIENCE)
                .unwrap_or_else(|| panic!("{what}: no line came"));
            assert!(line.contains(wanted), "{what}: {line}");
        }
        None => {
            // Time to start and settle into waiting; nothing is written.
            let line = first_line_within(&mut out, Duration::from_millis(1500));
            assert_eq!(line, None, "{what}");
        }
    }
    assert!(run.running(), "{what}: oomwhy ended before its reader did");
    drop(out);
    let closed = Instant::now();
    let status = run.exit_within(live::PATIENCE);
    let latency = closed.elapsed();
    eprintln!("{what}: exited {latency:?} after its reader closed");
    assert_eq!(status.code(), Some(0), "{what}");
    assert!(
        latency < CLOSED_READER_EXIT,
        "{what}: exited only {latency:?} after its reader closed"
    );
    latency
}

#[test]
fn follow_ends_soon_after_its_reader_on_a_quiet_log() {
    let dir = temp_dir("reader_gone");
    // A log that never gets a finding: oomwhy never writes at all.
    let quiet = dir.join("quiet.log");
    fs::write(&quiet, "epoch 1 loss 0.5\n").unwrap();
    let (run, out) = Live::with_raw_stdout(oomwhy().arg("--follow").arg(&quiet), Stdio::null());
    exit_after_the_reader_closes(run, out, None, "a log without a finding");

    // One crash, read by `head -1`, then nothing more is written.
    let crashed = dir.join("crashed.log");
    fs::write(&crashed, format!("step 3\n{RUNTIME_OOM}\n")).unwrap();
    for (format, first) in [
        ("ndjson", "\"type\":\"finding\""),
        ("text", "OUT OF MEMORY"),
    ] {
        let (run, out) = Live::with_raw_stdout(
            oomwhy()
                .args(["--follow", "--format", format])
                .arg(&crashed),
            Stdio::null(),
        );
        exit_after_the_reader_closes(run, out, Some(first), &format!("a crash in {format}"));
    }

    // Still waiting for the file to appear.
    let missing = dir.join("not-yet.log");
    let (run, out) = Live::with_raw_stdout(oomwhy().arg("--follow").arg(&missing), Stdio::null());
    exit_after_the_reader_closes(run, out, None, "a log not created yet");
}

#[test]
fn follow_ends_soon_after_its_reader_on_a_busy_log_without_findings() {
    let dir = temp_dir("reader_gone_busy");
    let log = dir.join("train.log");
    fs::write(&log, "start\n").unwrap();
    let (run, out) = Live::with_raw_stdout(oomwhy().arg("--follow").arg(&log), Stdio::null());
    // A line every 50 ms: the follow loop seldom sleeps a whole poll.
    let (stop, writer) = keep_writing(log.clone(), "step 1 loss 0.5");
    exit_after_the_reader_closes(run, out, None, "a growing log without a finding");
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
}

#[test]
fn a_pipe_that_stays_open_ends_soon_after_its_reader() {
    // `tail -f log | oomwhy --format ndjson | head -1` with a quiet log.
    let (mut run, out) =
        Live::with_raw_stdout(oomwhy().args(["--format", "ndjson"]), Stdio::piped());
    let mut stdin = run.child.stdin.take().unwrap();
    writeln!(stdin, "epoch 1").unwrap();
    exit_after_the_reader_closes(run, out, None, "an open pipe without a finding");
    drop(stdin);
}
