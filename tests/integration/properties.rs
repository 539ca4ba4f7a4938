//! Property tests: arbitrary input never panics, sizes survive a
//! print→parse round trip, and findings do not depend on how the input was
//! split into reads. Case counts keep this file to a few seconds in debug.

use crate::support;
use crate::support::{Chunked, CAPACITY, SEED};
use oomwhy::units::{format_size, parse_size, rounding_tolerance};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use std::sync::OnceLock;

fn fixture_lines() -> &'static [String] {
    static LINES: OnceLock<Vec<String>> = OnceLock::new();
    LINES.get_or_init(support::fixture_lines)
}

/// One piece of a log: a fixture line, junk, or an awkward character.
fn fragment() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => proptest::sample::select(fixture_lines()).prop_map(|l| format!("{l}\n").into_bytes()),
        1 => Just(format!("{SEED}\n").into_bytes()),
        1 => Just(format!("[rank1]: {CAPACITY}\r\n").into_bytes()),
        2 => proptest::collection::vec(any::<u8>(), 0..24),
        1 => proptest::sample::select(vec![
            "é", "€", "𝄞", "\u{feff}", "\r\n", "\r", "\n", "\0", "\x1b[31m", "\x1b]0;t\x07",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => (0u32..10_000, 0u32..100, proptest::sample::select(vec!["bytes", "KiB", "MiB", "GiB"]))
            .prop_map(|(n, d, u)| format!(" {n}.{d:02} {u}").into_bytes()),
        // A progress bar redrawn with carriage returns.
        1 => (0u32..1000).prop_map(|i| format!(" {}%|██▌ | {i}/1000 [00:01<00:02]\r", i / 10).into_bytes()),
    ]
}

/// A log of fixture messages interleaved with junk.
fn mixed_log() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(fragment(), 0..40).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        // Failures become named tests in tests/integration/regressions.rs instead.
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..ProptestConfig::default()
    })]

    #[test]
    fn scan_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let outcome = oomwhy::scan_log(&bytes[..], "p").expect("reading a slice cannot fail");
        prop_assert_eq!(outcome.bytes, bytes.len() as u64);
    }

    #[test]
    fn scan_never_panics_on_mixed_logs(log in mixed_log()) {
        oomwhy::scan_log(&log[..], "p").expect("reading a slice cannot fail");
    }

    #[test]
    fn decode_str_never_panics(text in any::<String>()) {
        oomwhy::decode_str(&text);
    }

    #[test]
    fn decode_str_never_panics_on_mixed_logs(log in mixed_log()) {
        oomwhy::decode_str(&String::from_utf8_lossy(&log));
    }

    #[test]
    fn findings_do_not_depend_on_read_sizes(
        log in mixed_log(),
        sizes in proptest::collection::vec(1usize..300, 1..8),
    ) {
        let whole = oomwhy::scan_log(&log[..], "p").expect("slice");
        let split = oomwhy::scan_log(Chunked::new(&log, sizes), "p").expect("chunked reader");
        prop_assert_eq!(&split.findings, &whole.findings);
        prop_assert_eq!(split.lines, whole.lines);
        prop_assert_eq!(split.bytes, whole.bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2048,
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..ProptestConfig::default()
    })]

    /// PyTorch's `format_size` output parses back to the same bytes, within
    /// half of the last printed digit.
    ///
    /// Up to 2^53 bytes (8 PiB): beyond, `format_size` (like PyTorch's, which
    /// divides a double) starts from a value already off by up to 1024 bytes.
    #[test]
    fn sizes_round_trip_through_pytorch_format(bytes in prop_oneof![
        0u64..=1 << 53,
        0u64..5000,
        // Around every power of two, where the unit changes.
        (0u32..64, -3i64..=3).prop_map(|(shift, d)| (1u64 << shift).saturating_add_signed(d)),
        Just(u64::MAX),
    ]) {
        let printed = format_size(bytes);
        let parsed = parse_size(&printed);
        prop_assert!(parsed.is_ok(), "{} -> {:?} -> {:?}", bytes, printed, parsed);
        let parsed = parsed.unwrap();
        let (number, unit) = printed.split_once(' ').expect("number and unit");
        let tolerance = rounding_tolerance(number, unit);
        prop_assert!(
            parsed.abs_diff(bytes) <= tolerance,
            "{} -> {} -> {} (off by {}, tolerance {})", bytes, printed, parsed, parsed.abs_diff(bytes), tolerance
        );
    }
}

/// Every way of cutting an input into two reads, including inside a
/// multi-byte character and between the `\r` and `\n` of a CRLF.
#[test]
fn every_two_way_split_gives_the_same_findings() {
    let log = format!(
        "épochs €\r\n[rank0]: {SEED}\r\n 45%|█▌ | 450/1000\r\u{1d11e}\nTraceback (most recent call last):\r\n  File \"t€.py\", line 3, in <module>\r\n    loss.backward()\r\n{CAPACITY}\r\nafter 𝄞\n"
    );
    let bytes = log.as_bytes();
    let whole = oomwhy::scan(bytes, "s").unwrap();
    assert_eq!(whole.findings.len(), 2);
    for cut in 1..bytes.len() {
        let split = oomwhy::scan(Chunked::new(bytes, vec![cut, bytes.len()]), "s").unwrap();
        assert_eq!(split.findings, whole.findings, "cut at byte {cut}");
        assert_eq!(split.lines, whole.lines, "cut at byte {cut}");
    }
}
