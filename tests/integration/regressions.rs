//! Regression tests for the bugs that fuzzing and property testing found.
//! Each is named `r6_<what>` and was added before its fix.

use crate::support;
use oomwhy::units::{format_size, parse_size, rounding_tolerance};

/// Found by `sizes_round_trip_through_pytorch_format`: PyTorch prints the
/// largest 64-bit values as `17179869184.00 GiB` (2^64 bytes after rounding);
/// reading that back must give u64::MAX, not "too large for 64 bits".
#[test]
fn r6_size_near_u64_max_round_trips() {
    for bytes in [u64::MAX, u64::MAX - 1, u64::MAX - (1 << 20)] {
        let printed = format_size(bytes);
        assert_eq!(printed, "17179869184.00 GiB");
        let parsed = parse_size(&printed).expect("a value PyTorch can print parses");
        assert!(parsed.abs_diff(bytes) <= rounding_tolerance("17179869184.00", "GiB"));
    }
    // A printed value whose whole rounding interval is beyond 64 bits still is too large.
    assert!(parse_size("17179869184.01 GiB").is_err());
    assert!(parse_size("18446744073709551616 bytes").is_err());
    assert!(parse_size("99999999999999999999.00 GiB").is_err());
}

/// Found by `sizes_round_trip_through_pytorch_format`: 1053819 bytes prints
/// as `1.01 MiB`, which reads back as 1059062 bytes (the nearest byte to
/// 1.01 MiB), 5243 bytes away; the tolerance said 5242 because it rounded
/// half a digit (5242.88 bytes) down.
#[test]
fn r6_rounding_tolerance_covers_byte_rounding() {
    let printed = format_size(1_053_819);
    assert_eq!(printed, "1.01 MiB");
    let parsed = parse_size(&printed).unwrap();
    assert_eq!(parsed, 1_059_062);
    assert!(parsed.abs_diff(1_053_819) <= rounding_tolerance("1.01", "MiB"));
}

/// Found by tests/integration/hostile.rs: an OSC/DCS/APC string (`ESC ]`, `ESC P`,
/// `ESC _`, ...) with no BEL or ST on its line swallowed the rest of the
/// line, message included. Only the introducer may go.
#[test]
fn r6_unterminated_escape_string_keeps_the_message() {
    for introducer in [
        "\x1b]0;title ",
        "\x1b]52;c;",
        "\x1bP",
        "\x1b_",
        "\x1b^",
        "\x1bX",
    ] {
        for message in [support::SEED, "RuntimeError: CUDA error: out of memory"] {
            let log = format!("{introducer}{message}\n");
            let findings = oomwhy::decode_str(&log);
            assert_eq!(findings.len(), 1, "{log:?}");
        }
    }
    // A terminated string is still removed whole.
    let findings = oomwhy::decode_str("\x1b]0;CUDA error: out of memory\x07 no message\n");
    assert!(findings.is_empty());
}

/// Found by tests/integration/hostile.rs: a file name given on the command line went raw
/// into the "cannot read" error on stderr (`oomwhy *` in a directory holding
/// a file named with an OSC 52 sequence could write the user's clipboard).
#[cfg(unix)]
#[test]
fn r6_error_message_escapes_file_name() {
    let name = std::env::temp_dir().join(format!(
        "oomwhy-r6-{}-\x1b]52;c;cm0K\x07\u{9b}2J.log",
        std::process::id()
    ));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_oomwhy"))
        .arg(&name)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    support::assert_terminal_safe(&stderr, "stderr");
    assert!(
        stderr.contains("\\u{1b}]52;c;cm0K\\u{7}\\u{9b}2J.log: no such file"),
        "{stderr}"
    );
}

/// Found while sizing the adversarial tests: each new rank past 4096 made
/// the scanner sweep every rank state, and states in the middle of a
/// traceback were never dropped, so a log of distinct `[rankN]:` prefixes
/// each opening a traceback took quadratic time (40,000 lines: 16 s in a
/// debug build, a 45 MB log: hours) and memory growing with every rank.
#[test]
fn r6_thousands_of_open_ranks_in_linear_time() {
    // Time grows with the log's length, not its square: three times the
    // ranks may take about three times as long, never nine (a ratio, so a
    // busy machine slows both runs alike). The faster of two runs each
    // keeps a stray pause out of the ratio.
    let time = |ranks: usize| {
        let mut log = String::new();
        for rank in 0..ranks {
            log.push_str(&format!(
                "[rank{rank}]: Traceback (most recent call last):\n"
            ));
        }
        log.push_str(&format!("[rank7]: {}\n", support::SEED));
        (0..2)
            .map(|_| {
                let started = std::time::Instant::now();
                let out = oomwhy::scan(log.as_bytes(), "ranks").unwrap();
                assert_eq!(out.findings.len(), 1);
                started.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let (small, large) = (time(10_000), time(30_000));
    assert!(
        large < small * 6,
        "10,000 ranks took {small:?}, 30,000 took {large:?}"
    );
}

/// Found while sizing the adversarial tests: a long line full of distinct
/// messages became one finding per 1 MiB piece, each keeping the whole piece
/// as its text (twice, with the fold key): 50 MiB of input took 118 MiB and
/// 10,000 such pieces would take over 20 GiB. Stored text is now capped.
#[cfg(target_os = "linux")]
#[test]
fn r6_long_line_of_distinct_messages_in_bounded_memory() {
    let mut line = String::new();
    let mut n = 0u64;
    while line.len() < 24 << 20 {
        line.push_str(&format!("CUDA error: out of memory {n} "));
        n += 1;
    }
    line.push('\n');
    let (output, peak) = support::run_streaming(&["--format", "json"], line.as_bytes());
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    // One finding per 1 MiB piece of the line (the last few bytes hold none).
    assert_eq!(report["findings"].as_array().unwrap().len(), 24);
    let peak_kib = peak.expect("/proc");
    assert!(
        peak_kib < 40 * 1024,
        "peak RSS {peak_kib} KiB for 24 MiB of input"
    );
}

/// Found while sizing the adversarial tests: a CUDA error takes up to 200
/// boilerplate lines (`frame #N: ...`), each up to 1 MiB, so one message
/// could hold 200 MiB while it was collected. A message's lines now stop at
/// MAX_LINE bytes in all.
#[cfg(target_os = "linux")]
#[test]
fn r6_message_lines_are_bounded() {
    let junk = "x".repeat(1_000_000);
    let head = b"RuntimeError: CUDA error: out of memory\n";
    let body = format!("frame #1: {junk}\n");
    let tail = b"RuntimeError: CUDA error: an illegal memory access was encountered\n";
    let input = support::Generated::new(head, body.as_bytes(), 64 * body.len() as u64, tail);
    let (output, peak) = support::run_streaming(&["--format", "json"], input);
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["findings"].as_array().unwrap().len(), 2);
    let peak_kib = peak.expect("/proc");
    assert!(
        peak_kib < 40 * 1024,
        "peak RSS {peak_kib} KiB for a 64 MB message"
    );
}

/// Found while sizing the adversarial tests: traceback frames kept their
/// file, function and code whole, up to a megabyte each, 60 frames per
/// traceback and 8 chained tracebacks per finding, each copied into the
/// finding: memory grew with the input (4 tracebacks of 60 frames with
/// 256 KiB paths, 126 MB: 135 MiB RSS). Frame fields are now capped.
#[cfg(target_os = "linux")]
#[test]
fn r6_traceback_frames_are_bounded() {
    let path = "p/".repeat(32 * 1024);
    let mut one = String::from("Traceback (most recent call last):\n");
    for line in 0..60 {
        one.push_str(&format!("  File \"/{path}.py\", line {line}, in f{path}\n"));
    }
    let mut log = String::new();
    for n in 0..4 {
        log.push_str(&one);
        log.push_str(&format!("RuntimeError: CUDA out of memory. Tried to allocate {n}.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)\n"));
    }
    let (output, peak) = support::run_streaming(&["--format", "json"], log.as_bytes());
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 4);
    assert_eq!(
        findings[3]["traceback"]["frames"].as_array().unwrap().len(),
        60
    );
    let peak_kib = peak.expect("/proc");
    assert!(
        peak_kib < 24 * 1024,
        "peak RSS {peak_kib} KiB for {} bytes",
        log.len()
    );
}

/// Found by the scan_chunked fuzz target (crash-9d103477…): two messages on
/// one line for different ranks (a `\r` redraw drops the rank prefix), both
/// still open at the end of the input, came out in the iteration order of a
/// HashMap, which differs from run to run. They now come out in the order
/// they started.
#[test]
fn r6_findings_at_end_of_input_in_start_order() {
    let log = "[rank0]: CUDA out of memory. Tried to allocate 12.50 MiB\rOut of memory. Tried to allocate 2.00 MiB\n";
    for _ in 0..32 {
        let out = oomwhy::scan(log.as_bytes(), "r").unwrap();
        let order: Vec<(Option<u32>, Option<u64>)> = out
            .findings
            .iter()
            .map(|f| (f.first_rank, f.sizes.requested_bytes))
            .collect();
        assert_eq!(order, [(Some(0), Some(13_107_200)), (None, Some(2 << 20))]);
    }
}

/// Found by the scan fuzz target (crash-f74fde0d…) on the final code: sizes
/// near 2^64 (`17179869183.99 GiB`, or `17179869184.00 GiB` now that it
/// reads as u64::MAX) overflowed the explainer's `x + tolerance(x)` checks
/// (`attempt to add with overflow` in debug builds, wrong verdicts in
/// release ones). Every field at the top of the range, in every era.
#[test]
fn r6_sizes_near_u64_max_do_not_overflow_the_explainer() {
    for top in ["17179869183.99 GiB", "17179869184.00 GiB"] {
        let messages = [
            format!("Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated     : {top}\nRequested               : 12.50 MiB\nDevice limit            : {top}\nFree (according to CUDA): {top}\nPyTorch limit (set by user-supplied memory fraction)\n                        : 17179869182.00 GiB\n"),
            format!("RuntimeError: CUDA out of memory. Tried to allocate {top} (GPU 0; {top} total capacity; {top} already allocated; {top} free; {top} allowed; {top} reserved in total by PyTorch)\n"),
            format!("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {top}. GPU 0 has a total capacity of {top} of which {top} is free. Process 1 has {top} memory in use. Process 2 has {top} memory in use. Including non-PyTorch memory, this process has {top} memory in use. {top} allowed; Of the allocated memory {top} is allocated by PyTorch, with {top} allocated in private pools (e.g., CUDA Graphs), and {top} is reserved by PyTorch but unallocated.\n"),
            format!("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 8.00 GiB of which 1.00 GiB is free. Process 1 has {top} memory in use. Of the allocated memory 1.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n"),
            format!("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of {top} of which 1.00 GiB is free. Including non-PyTorch memory, this process has {top} memory in use. Of the allocated memory 1.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n"),
        ];
        for message in &messages {
            assert_eq!(oomwhy::decode_str(message).len(), 1, "{message}");
        }
        // Three OOMs on one device with allocated memory rising to the top
        // (the growth rule compares each with the one before, + 5 %).
        let growth: String = ["1.00 GiB", "16000000000.00 GiB", top]
            .iter()
            .map(|allocated| format!("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; {allocated} already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)\n"))
            .collect();
        assert_eq!(oomwhy::decode_str(&growth).len(), 3);
    }
}
