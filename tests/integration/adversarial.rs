//! Adversarial inputs: junk around messages, huge lines and
//! files, absurd numbers, endless repeats, unreadable inputs, closed or full
//! output. The gigabyte-sized cases are `#[ignore]`d (run them with
//! `cargo test --release --test integration adversarial:: -- --ignored`; they stream their
//! input and never hold it); a smaller version of each runs every time.
//! `tests/limits.sh` measures the same cases on the release binary.

use crate::support::{run_streaming, Generated, CAPACITY, SEED};
use oomwhy::record::Kind;
use oomwhy::scan;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_oomwhy"))
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oomwhy-adv-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

fn assert_rss_below(peak: Option<u64>, limit_mib: u64, what: &str) {
    match peak {
        Some(kib) => {
            eprintln!("{what}: peak RSS {} MiB", kib / 1024);
            assert!(
                kib < limit_mib * 1024,
                "{what}: peak RSS {kib} KiB ≥ {limit_mib} MiB"
            );
        }
        None => eprintln!("{what}: no /proc here, peak RSS not measured"),
    }
}

/// Deterministic pseudo-random bytes (all 256 values, NULs and newlines included).
fn junk(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

// ---------------------------------------------------------------- junk around

#[test]
fn invalid_utf8_inside_and_around_a_message_is_still_found() {
    let mut log = Vec::new();
    log.extend_from_slice(b"\xff\xfe\x80 header \xc3\x28 junk\n\xe2\x82\n");
    log.extend_from_slice(b"\xf0\x9f\x92 \xff RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity;\xff 6.32 GiB already allocated;\xc0\xaf 1.56 GiB free; \xed\xa0\x80 7.88 GiB reserved in total by PyTorch) \xfe\xfe\n");
    log.extend_from_slice(b"\xff\xff\xff trailing \x80\n\xe2");
    let out = scan(&log[..], "u").unwrap();
    assert_eq!(out.findings.len(), 1);
    let s = &out.findings[0].sizes;
    assert_eq!(s.requested_bytes, Some(2 * GIB));
    assert_eq!(s.total_bytes, Some(8 * GIB));
    // The invalid byte after `capacity;` does not hide the next figure.
    assert_eq!(s.allocated_bytes, Some(6_786_048_328));
    assert_eq!(out.findings[0].source.line, 3);
    assert_eq!(out.bytes, log.len() as u64);
}

fn three_messages_in_junk() -> Vec<u8> {
    let mut log = Vec::new();
    log.extend(junk(64 * 1024, 1));
    log.extend_from_slice(b"\n\0\0\0");
    log.extend_from_slice(format!("\n{SEED}\n").as_bytes());
    log.extend(junk(64 * 1024, 2));
    log.extend_from_slice(b"\0\0\n");
    log.extend_from_slice(format!("{CAPACITY}\n").as_bytes());
    // A megabyte and a half of NULs without a newline, then a crash.
    log.extend(std::iter::repeat_n(0u8, 3 * MIB as usize / 2));
    log.extend_from_slice(
        b"\nRuntimeError: CUDA error: an illegal memory access was encountered\n",
    );
    log.extend(junk(4096, 3));
    log
}

#[test]
fn nul_bytes_and_binary_junk_do_not_hide_later_findings() {
    let log = three_messages_in_junk();
    let out = scan(&log[..], "j").unwrap();
    let kinds: Vec<Kind> = out.findings.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            Kind::TorchAllocatorOom,
            Kind::TorchAllocatorOom,
            Kind::IllegalMemoryAccess
        ]
    );
    assert_eq!(out.findings[0].sizes.requested_bytes, Some(2 * GIB));
    assert_eq!(out.findings[1].device, Some(3));

    // The binary reads files the same way.
    let dir = scratch("nul");
    let file = dir.join("junk.log");
    std::fs::write(&file, &log).unwrap();
    let output = bin()
        .args(["--format", "json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(json(&output)["findings"].as_array().unwrap().len(), 3);
}

// ---------------------------------------------------------------- huge inputs

/// A message, a line of `len` bytes without a newline, then a crash.
fn long_line(len: u64) -> Generated {
    Generated::new(
        format!("{SEED}\n").as_bytes(),
        b"0123456789abcdef\0\xff garbage without newline ",
        len,
        b"\nRuntimeError: CUDA error: an illegal memory access was encountered\n",
    )
}

fn check_long_line(len: u64, rss_limit_mib: u64) {
    let (output, peak) = run_streaming(&["--format", "json"], long_line(len));
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = json(&output);
    assert_eq!(report["findings"].as_array().unwrap().len(), 2);
    assert_eq!(report["summary"]["lines"], 3);
    assert_eq!(report["summary"]["bytes"], long_line(len).len());
    assert_rss_below(peak, rss_limit_mib, &format!("{len}-byte line"));
}

#[test]
fn long_line_of_64_mib_in_bounded_memory() {
    check_long_line(64 * MIB, 64);
}

#[test]
#[ignore = "2 GiB streamed through the binary; run with --ignored (and --release)"]
fn long_line_of_2_gib_in_bounded_memory() {
    check_long_line(2 * GIB, 64);
}

/// Lines that trip the prefilter but are no message.
const NEAR_MISSES: &str = concat!(
    "    if \"CUDA out of memory. Tried to allocate\" in str(e):\n",
    "warning: out of memory. Tried nothing\n",
    "grep 'error: out of memory' in logs\n",
    "no illegal memory access here, cudaErrorIllegalAddressX\n",
    "step 3221226505 loss 0.1 id=-1073740791\n",
    "Traceback (most recent call last) was printed above\n",
    "CUDA failure 7000 of 0xC00004090\n",
);

fn check_near_misses(len: u64, time_limit: Duration) {
    let started = Instant::now();
    let (output, peak) = run_streaming(&[], Generated::new(b"", NEAR_MISSES.as_bytes(), len, b""));
    let elapsed = started.elapsed();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stdout.is_empty());
    eprintln!("{len} bytes of near misses: {elapsed:?}");
    assert!(
        elapsed < time_limit,
        "{len} bytes of near misses took {elapsed:?}"
    );
    assert_rss_below(peak, 64, "near misses");
}

#[test]
fn near_miss_lines_in_bounded_time() {
    // Debug build: about 2 s on one core.
    check_near_misses(4 * MIB, Duration::from_secs(120));
}

#[test]
#[ignore = "1 GiB streamed through the binary; run with --ignored --release"]
fn near_miss_lines_1_gib_in_bounded_time() {
    check_near_misses(GIB, Duration::from_secs(900));
}

fn check_repeats(count: u64) -> Option<u64> {
    let line = format!("{SEED}\n");
    let len = count * line.len() as u64;
    let (output, peak) = run_streaming(
        &["--format", "json"],
        Generated::new(b"", line.as_bytes(), len, b""),
    );
    assert_eq!(output.status.code(), Some(0));
    let report = json(&output);
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0]["occurrences"], count);
    peak
}

#[test]
fn repeated_message_is_one_finding() {
    let peak = check_repeats(5_000);
    assert_rss_below(peak, 64, "5,000 repeats");
}

#[test]
#[ignore = "a million messages (190 MB) through the binary; run with --ignored --release"]
fn message_repeated_a_million_times_is_one_finding() {
    let peak = check_repeats(1_000_000);
    assert_rss_below(peak, 64, "1,000,000 repeats");
}

// ---------------------------------------------------------------- numbers

#[test]
fn numbers_too_large_for_any_integer_are_flagged_not_overflowed() {
    let huge = "99999999999999999999.00 GiB";
    let messages = [
        format!("CUDA out of memory. Tried to allocate {huge} (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)"),
        format!("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; {huge} total capacity; 6.32 GiB already allocated; {huge} free; {huge} reserved in total by PyTorch)"),
        format!("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 8.00 GiB of which {huge} is free. Process 1 has {huge} memory in use. Including non-PyTorch memory, this process has {huge} memory in use. Of the allocated memory {huge} is allocated by PyTorch, and {huge} is reserved by PyTorch but unallocated."),
        "CUDA out of memory. Tried to allocate 999999999999999999999999999999999999999999999999999999999999999999999999999999999.99 GiB. GPU 0 has a total capacity of 8.00 GiB of which 0 bytes is free.".to_string(),
    ];
    for message in &messages {
        let findings = oomwhy::decode_str(message);
        assert_eq!(findings.len(), 1, "{message}");
        let f = &findings[0];
        assert!(
            f.diagnosis
                .verdicts
                .iter()
                .any(|v| v.code == "inconsistent_numbers"),
            "{message}: {:?}",
            f.diagnosis.verdicts
        );
        assert!(
            f.notes.iter().any(|n| n.text.contains("too large")),
            "{message}"
        );
    }
}

#[test]
fn thousands_of_process_items_in_one_message() {
    let mut message = String::from("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 1.00 MiB is free. ");
    for pid in 0..5_000u32 {
        message.push_str(&format!("Process {pid} has 16.00 MiB memory in use. "));
    }
    message.push_str("Of the allocated memory 1.00 GiB is allocated by PyTorch, and 2.00 MiB is reserved by PyTorch but unallocated.");
    let started = Instant::now();
    let findings = oomwhy::decode_str(&message);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].processes.len(), 5_000);
    assert_eq!(
        findings[0].diagnosis.other_processes_bytes,
        Some(5_000 * 16 * MIB)
    );
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn traceback_of_100_000_frames_is_bounded() {
    let mut log = String::from("Traceback (most recent call last):\n");
    for i in 0..100_000 {
        log.push_str(&format!("  File \"/src/model.py\", line {i}, in forward\n"));
    }
    log.push_str("    loss.backward()\n");
    log.push_str(&format!("{SEED}\n"));
    let out = scan(log.as_bytes(), "t").unwrap();
    assert_eq!(out.findings.len(), 1);
    let tb = out.findings[0]
        .traceback
        .as_ref()
        .expect("traceback attached");
    assert_eq!(tb.frames.len(), 60);
    assert_eq!(tb.omitted_frames, 100_000 - 60);
    assert_eq!(tb.frames.last().unwrap().line, 99_999);
}

// ---------------------------------------------------------------- inputs

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn empty_input_finds_nothing() {
    let (output, _) = run_streaming(&[], &b""[..]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let dir = scratch("empty");
    let file = dir.join("empty.log");
    std::fs::write(&file, b"").unwrap();
    let output = bin().arg(&file).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        "oomwhy: no out-of-memory error or GPU crash found (0 lines read)\n"
    );
}

/// One line on stderr naming `name`, the good input still reported, exit 2.
fn check_bad_input(bad: &Path, expect: &str) {
    let dir = scratch("good");
    let good = dir.join("good.log");
    std::fs::write(&good, format!("{SEED}\n")).unwrap();
    let output = bin()
        .args(["--format", "json"])
        .arg(bad)
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&bad.display().to_string()), "{err}");
    assert!(err.contains(expect), "{err}");
    let report = json(&output);
    assert_eq!(report["findings"].as_array().unwrap().len(), 1);
    assert_eq!(report["summary"]["input_errors"], 1);
}

#[test]
fn missing_file_is_a_clear_error() {
    let dir = scratch("missing");
    check_bad_input(&dir.join("no-such.log"), "no such file");
}

/// A directory is read (every file under it), not an error: among other
/// inputs, an empty one changes neither the findings nor the exit status.
#[test]
fn directory_is_read_not_an_error() {
    let empty = scratch("dir");
    let dir = scratch("good");
    let good = dir.join("good.log");
    std::fs::write(&good, format!("{SEED}\n")).unwrap();
    let output = bin()
        .args(["--format", "json"])
        .arg(&empty)
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["findings"].as_array().unwrap().len(), 1);
    assert_eq!(report["summary"]["input_errors"], 0);
}

#[cfg(unix)]
#[test]
fn unreadable_file_is_a_clear_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("perm");
    let file = dir.join("secret.log");
    std::fs::write(&file, format!("{SEED}\n")).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::File::open(&file).is_ok() {
        // Root (as in CI) reads files whatever their mode: nothing to test.
        eprintln!("unreadable_file_is_a_clear_error: skipped, running as root");
        return;
    }
    check_bad_input(&file, "permission denied");
}

#[cfg(unix)]
#[test]
fn fifo_is_read_like_a_pipe() {
    let dir = scratch("fifo");
    let fifo = dir.join("pipe.log");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("fifo_is_read_like_a_pipe: skipped, no mkfifo");
        return;
    }
    let child = bin()
        .args(["--format", "json"])
        .arg(&fifo)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Open for writing once the binary has opened the reading end (a plain
    // open would wait for it, as a shell's `cmd > fifo` does, but would hang
    // the test forever if the binary never opened it).
    let mut writer = open_fifo_writer(&fifo);
    writer.write_all(b"\0\xff junk\n").unwrap();
    writer.write_all(format!("{SEED}\n").as_bytes()).unwrap();
    drop(writer);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(json(&output)["findings"].as_array().unwrap().len(), 1);
}

#[cfg(unix)]
fn open_fifo_writer(fifo: &Path) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: fail with ENXIO instead of waiting while no reader is there.
    #[cfg(target_os = "linux")]
    const O_NONBLOCK: i32 = 0o4000;
    #[cfg(not(target_os = "linux"))]
    const O_NONBLOCK: i32 = 0x0004;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(O_NONBLOCK)
            .open(fifo)
        {
            Ok(file) => return file,
            Err(e) if Instant::now() < deadline => {
                assert_eq!(e.raw_os_error(), Some(6), "{e}"); // ENXIO: no reader yet
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("oomwhy never opened the FIFO: {e}"),
        }
    }
}

// ---------------------------------------------------------------- outputs

/// A log whose text report is far larger than a pipe buffer.
fn many_findings_log(dir: &Path) -> PathBuf {
    let file = dir.join("many.log");
    let mut log = String::new();
    for i in 0..300 {
        log.push_str(&format!("RuntimeError: CUDA out of memory. Tried to allocate {i}.00 MiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)\n"));
    }
    std::fs::write(&file, log).unwrap();
    file
}

#[cfg(unix)]
#[test]
fn stdout_closed_early_exits_quietly() {
    let dir = scratch("pipe");
    let file = many_findings_log(&dir);
    // `oomwhy file | head -1`, with the exit status of oomwhy.
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; '{}' '{}' | head -1",
            env!("CARGO_BIN_EXE_oomwhy"),
            file.display()
        ))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).lines().count(), 1);
    assert_eq!(stderr(&output), "");

    // The reading end closed before anything is written.
    let mut child = bin()
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stderr(&output), "");
}

#[cfg(target_os = "linux")]
#[test]
fn stdout_that_cannot_be_written_is_a_clear_error() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full");
        return;
    };
    let dir = scratch("full");
    let file = many_findings_log(&dir);
    for format in ["text", "json"] {
        let output = bin()
            .args(["--format", format])
            .arg(&file)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{format}");
        let err = stderr(&output);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("oomwhy: cannot write the output"), "{err}");
        assert!(err.contains("No space left on device"), "{err}");
    }
}
