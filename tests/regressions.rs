//! Regression tests for the bugs that fuzzing and property testing found
//! (issue 6). Each is named `r6_<what>` and was added before its fix.

mod support;

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

/// Found by tests/hostile.rs: an OSC/DCS/APC string (`ESC ]`, `ESC P`,
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

/// Found by tests/hostile.rs: a file name given on the command line went raw
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
