//! Apple MPS allocator out-of-memory (docs/formats.md §1, §3.3;
//! pytorch/pytorch `aten/src/ATen/mps/MPSAllocator.mm`, `alloc_buffer_block`):
//!
//! ```text
//! MPS backend out of memory (MPS allocated: X, other allocations: O, max allowed: M). Tried to allocate A on shared|private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).
//! MPS backend out of memory (MPS allocated: X, other allocations: O). Tried to allocate A on shared|private pool.
//! ```
//!
//! The first form is raised while the high-watermark limit is on (the
//! default), the second when `PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0` turned it
//! off. Older builds print `GB/MB/KB`, newer `GiB/MiB/KiB`; both are binary.

use super::text::grows;
use super::{find_size, re};
use super::{Family, Message, SizeReader};
use crate::record::{fact, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    anchor: Regex,
    allocated: Regex,
    other: Regex,
    max_allowed: Regex,
    tried: Regex,
    hint: Regex,
    legacy_units: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        anchor: re(r"MPS backend out of memory"),
        allocated: re(r"MPS allocated:\s*{SIZE}"),
        other: re(r"other allocations:\s*{SIZE}"),
        max_allowed: re(r"max allowed:\s*{SIZE}"),
        tried: re(r"Tried to allocate\s*{SIZE}(?:\s+on\s+(shared|private)\s+pool)?"),
        hint: re(r"PYTORCH_MPS_HIGH_WATERMARK_RATIO=0\.0 to disable upper limit"),
        legacy_units: re(r"\d\s*(?:KB|MB|GB)\b"),
    })
}

fn score(text: &str) -> usize {
    let p = patterns();
    [&p.allocated, &p.other, &p.max_allowed, &p.tried, &p.hint]
        .iter()
        .filter(|r| r.is_match(text))
        .count()
        + usize::from(text.contains(" pool"))
}

/// `MPS backend out of memory (...)`.
pub struct MpsOom;

impl Family for MpsOom {
    fn triggers(&self) -> &'static [&'static str] {
        &["MPS backend out of memory"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        patterns().anchor.find(line).map(|m| m.start())
    }

    /// None: the start pattern is a phrase without figures.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        grows(lines, next, 4, score)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let text = message.joined();
        let mut finding = message.finding(Kind::MpsOom, text.clone());
        finding.backend = Some("mps".into());
        let mut notes = Vec::new();
        let mut sizes = SizeReader::new(&mut notes);
        finding.sizes.allocated_bytes =
            find_size(&p.allocated, &text, 1, "MPS allocated", &mut sizes);
        let other = find_size(&p.other, &text, 1, "other allocations", &mut sizes);
        let max_allowed = find_size(&p.max_allowed, &text, 1, "max allowed", &mut sizes);
        finding.sizes.requested_bytes =
            find_size(&p.tried, &text, 1, "Tried to allocate", &mut sizes);
        finding
            .sizes
            .extra
            .insert("other_allocations_bytes".into(), other);
        finding
            .sizes
            .extra
            .insert("max_allowed_bytes".into(), max_allowed);
        if let Some(pool) = p.tried.captures(&text).and_then(|c| c.get(3)) {
            finding
                .facts
                .insert(fact::POOL.into(), pool.as_str().into());
        }
        let limited = p.max_allowed.is_match(&text);
        finding.era = Some(if limited {
            Era::Watermark
        } else {
            Era::NoWatermark
        });
        finding.facts.insert(
            "high_watermark_limit".into(),
            if limited { "on" } else { "off" }.into(),
        );
        finding.facts.insert(
            "size_units".into(),
            if p.legacy_units.is_match(&text) {
                "GB/MB/KB (older PyTorch; binary multiples)"
            } else {
                "GiB/MiB/KiB"
            }
            .into(),
        );
        if sizes.overflowed {
            finding.facts.insert(fact::OVERFLOW.into(), "true".into());
        }
        let complete = p.tried.captures(&text).is_some_and(|c| c.get(3).is_some())
            && (!limited || p.hint.is_match(&text));
        finding.truncated = !complete;
        finding.notes = notes;
        Some(finding)
    }
}

/// `Invalid buffer size: 104.25 GB`: PyTorch's MPS allocator refuses one
/// buffer larger than the GPU's `MTLDevice.maxBufferLength`
/// (`alloc_buffer_block`'s first check, its size printed by `format_size`).
/// Not memory running out but one allocation too large for Metal: likely an
/// out-of-memory in effect (the tensor must be split or made smaller).
/// Read only with the allocator's size and unit: other programs print the
/// same words before a bare number.
pub struct MpsBufferSize;

fn buffer_size() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        re(r"\bInvalid buffer size: (\d+(?:\.\d+)?)\s*(KiB|MiB|GiB|TiB|KB|MB|GB|TB)\b")
    })
}

impl Family for MpsBufferSize {
    fn triggers(&self) -> &'static [&'static str] {
        // The exception class before it (`RuntimeError: `) holds the
        // prefilter's `rror`: no literal of its own.
        &["rror: Invalid buffer size: "]
    }

    /// None: the start patterns match digits as a class, never a value.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    fn start(&self, line: &str) -> Option<usize> {
        buffer_size().find(line).map(|m| m.start())
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let text = message.joined();
        let caps = buffer_size().captures(&text)?;
        let mut finding = message.finding(Kind::GenericOom, text.clone());
        finding.category = crate::record::Category::LikelyOom;
        finding.backend = Some("mps".into());
        finding
            .facts
            .insert(fact::REPORTED_BY.into(), "PyTorch (MPS)".into());
        let mut notes = Vec::new();
        let mut sizes = SizeReader::new(&mut notes);
        finding.sizes.requested_bytes = sizes.read(&caps, 1, "Invalid buffer size");
        finding.notes = notes;
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fixtures/wild/2024.txt; the same words before a bare number are
    /// another program's (an audio buffer's, a socket's).
    #[test]
    fn buffer_above_metal_limit() {
        let line = "Same thing here with an M1 Ultra 128GB running Python 3.10.13:   `RuntimeError: Invalid buffer size: 104.25 GB`";
        let f = crate::detect::decode_lines(&MpsBufferSize, &[line]).unwrap();
        assert_eq!(f.category, crate::record::Category::LikelyOom);
        assert_eq!(f.backend.as_deref(), Some("mps"));
        assert_eq!(
            f.sizes.requested_bytes,
            Some((104.25 * 1024.0 * 1024.0 * 1024.0) as u64)
        );
        assert!(MpsBufferSize
            .start("Log.e(TAG, \"Invalid buffer size: \" + minBufferSize);")
            .is_none());
        assert!(MpsBufferSize.start("Invalid buffer size: 4096").is_none());
    }

    type Case = (
        &'static str,
        u64,
        u64,
        Option<u64>,
        u64,
        &'static str,
        &'static str,
    );

    use crate::units::{GIB, MIB};

    fn decode(line: &str) -> Finding {
        let start = MpsOom.start(line).expect("anchor");
        let lines = vec![line[start..].to_string()];
        let m = Message {
            input: "t",
            line: 1,
            prefix: &line[..start],
            lines: &lines,
        };
        MpsOom.decode(&m).unwrap()
    }

    fn extra(f: &Finding, key: &str) -> Option<u64> {
        f.sizes.extra.get(key).copied().flatten()
    }

    #[test]
    fn every_spelling() {
        // (line, allocated, other, max allowed, requested, pool, era)
        let cases: &[Case] = &[
            (
                "RuntimeError: MPS backend out of memory (MPS allocated: 9.57 GiB, other allocations: 17.35 GiB, max allowed: 27.20 GiB). Tried to allocate 292.50 MiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
                10_275_709_256, // round(9.57 × 2^30)
                18_629_420_646, // round(17.35 × 2^30)
                Some(29_205_777_613), // round(27.20 × 2^30)
                306_708_480,    // 292.50 × 2^20
                "private",
                "watermark",
            ),
            (
                "RuntimeError: MPS backend out of memory (MPS allocated: 5.56 GB, other allocations: 1.10 GB, max allowed: 6.80 GB). Tried to allocate 768.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
                5_970_004_541,
                1_181_116_006,
                Some(7_301_444_403),
                768 * MIB,
                "private",
                "watermark",
            ),
            (
                "MPS backend out of memory (MPS allocated: 16.00 GB, other allocations: 3.31 GB, max allowed: 18.13 GB). Tried to allocate 256 bytes on shared pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
                16 * GIB,
                3_554_085_437,
                Some(19_466_939_269),
                256,
                "shared",
                "watermark",
            ),
            (
                "RuntimeError: MPS backend out of memory (MPS allocated: 42.28 GiB, other allocations: 720.00 KiB). Tried to allocate 1.00 GiB on private pool.",
                45_397_804_319,
                720 * 1024,
                None,
                GIB,
                "private",
                "no_watermark",
            ),
        ];
        for &(line, x, o, m, a, pool, era) in cases {
            let f = decode(line);
            assert_eq!(f.sizes.allocated_bytes, Some(x), "{line}");
            assert_eq!(extra(&f, "other_allocations_bytes"), Some(o), "{line}");
            assert_eq!(extra(&f, "max_allowed_bytes"), m, "{line}");
            assert_eq!(f.sizes.requested_bytes, Some(a), "{line}");
            assert_eq!(f.facts["pool"], pool);
            assert_eq!(f.era.map(Era::slug), Some(era));
            assert_eq!(f.backend.as_deref(), Some("mps"));
            assert!(!f.truncated, "{line}");
        }
        assert_eq!(
            decode(cases[0].0).exception.as_deref(),
            Some("RuntimeError")
        );
        assert!(decode(cases[1].0).facts["size_units"].starts_with("GB/MB/KB"));
    }

    #[test]
    fn cut_message_is_truncated() {
        let f = decode("RuntimeError: MPS backend out of memory (MPS allocated: 7.23 GB, other allocations: 1.54 GB, max allowed: 9.07 GB). Tried to allocate 896.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0");
        assert!(f.truncated);
        assert_eq!(f.sizes.requested_bytes, Some(896 * MIB));
    }

    #[test]
    fn wrapped_message_continues() {
        let first = vec![
            "MPS backend out of memory (MPS allocated: 7.23 GB, other allocations: 1.54 GB, max allowed: 9.07 GB).".to_string(),
        ];
        assert!(MpsOom.continues(&first, "Tried to allocate 896.00 MB on private pool."));
        assert!(!MpsOom.continues(&first, "Epoch 2/10"));
    }
}
