//! Helpers shared by the MPS, host, TensorFlow, XLA, CuPy and inference
//! families: TensorFlow/XLA size tokens, "does the next line add to the
//! message" continuation, and reading a size from captures into a finding.

use regex::Regex;

/// TensorFlow/XLA `HumanReadableNumBytes` (docs/message-formats.md §1.3):
/// `512B`, `1.5KiB`, `11.77MiB`, `2.00GiB`, no space before the unit.
/// Two groups: number, unit.
pub const TF_SIZE: &str = r"(\d+(?:\.\d+)?)(B|KiB|MiB|GiB|TiB|PiB|EiB)\b";

/// Whether appending `next` to `lines` lets `score` read more of the message:
/// the rule for hard-wrapped messages. Stops at `max_lines` and at lines that
/// start something else (a traceback, another exception).
pub fn grows(lines: &[String], next: &str, max_lines: usize, score: fn(&str) -> usize) -> bool {
    if lines.len() >= max_lines || super::torch::looks_like_new_record(next) {
        return false;
    }
    let joined = super::join_lines(lines);
    let before = score(&joined);
    let after = score(&format!("{joined} {}", next.trim()));
    after > before
}

/// An integer group of the first match, parsed.
pub fn int<T: std::str::FromStr>(re: &Regex, text: &str, at: usize) -> Option<T> {
    re.captures(text)?
        .get(at)?
        .as_str()
        .replace(',', "")
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use crate::detect::{find_size, re, SizeReader};

    #[test]
    fn tf_sizes_need_no_space() {
        let r = re(r"allocate {TF_SIZE}");
        let c = r.captures("allocate 11.77MiB").unwrap();
        assert_eq!((&c[1], &c[2]), ("11.77", "MiB"));
        assert!(r.captures("allocate 512B").is_some());
        assert!(r.captures("allocate 2.00 GiB").is_none());
    }

    #[test]
    fn raw_counts_read_as_bytes() {
        let r = re(r"allocating ([\d,]+) (bytes)");
        let mut notes = Vec::new();
        let mut sizes = SizeReader::new(&mut notes);
        assert_eq!(
            find_size(&r, "allocating 1,073,741,824 bytes", 1, "x", &mut sizes),
            Some(1 << 30)
        );
        assert_eq!(
            find_size(
                &r,
                "allocating 99999999999999999999999 bytes",
                1,
                "x",
                &mut sizes
            ),
            None
        );
        assert!(sizes.overflowed);
    }
}
