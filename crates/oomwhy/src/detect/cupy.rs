//! CuPy memory-pool out-of-memory (docs/formats.md §7.2; cupy/cupy
//! `cupy/cuda/memory.pyx`, `OutOfMemoryError`):
//!
//! ```text
//! Out of memory allocating 1,073,741,824 bytes (allocated so far: 2,147,483,648 bytes).
//! Out of memory allocating 1,073,741,824 bytes (allocated so far: 2,147,483,648 bytes, limit set to: 4,294,967,296 bytes).
//! Out of memory allocating 1,073,741,824 bytes                 (MemoryAsyncPool: usage not tracked)
//! out of memory to allocate 1073741824 bytes (total 12373894656 bytes)      (CuPy ≤ 6, PR #314 → #2242)
//! ```
//!
//! "allocated so far" is the pool's running total when the request came in,
//! freed-but-cached blocks included (`SingleDeviceMemoryPool._try_malloc` @
//! 005d7598: the limit is checked against it before any cudaMalloc; on a
//! device OOM the pool frees its cached blocks, runs `gc.collect()` and
//! retries twice before raising with the earlier total).
//!
//! In the legacy form "total" includes the request itself (PR #2242 shows
//! the same failure as `total 200000004096` before and `allocated so far:
//! 4,096` after), so allocated = total − request there.
//!
//! The bare `Out of memory allocating N bytes` is also printed by unrelated C
//! libraries, so without the parenthesis it is taken only with CuPy's
//! thousands separators or its exception class.

use super::re;
use super::{Family, Message, SizeReader};
use crate::record::{fact, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    current: Regex,
    legacy: Regex,
    xla: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        current: re(
            r"Out of memory allocating ([\d,]+) (bytes)(?: \(allocated so far: ([\d,]+) (bytes)(?:, limit set to: ([\d,]+) (bytes))?\))?",
        ),
        legacy: re(
            r"out of memory to allocate (\d+) (bytes) \(total (\d+) (bytes)(?:, limit set to (\d+) (bytes))?\)",
        ),
        xla: re(r"RESOURCE_EXHAUSTED:\s*$"),
    })
}

/// CuPy's `OutOfMemoryError`.
pub struct CupyOom;

impl Family for CupyOom {
    fn triggers(&self) -> &'static [&'static str] {
        &["Out of memory allocating", "out of memory to allocate"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        let p = patterns();
        if let Some(m) = p.legacy.find(line) {
            return Some(m.start());
        }
        let c = p.current.captures(line)?;
        let m = c.get(0)?;
        let before = &line[..m.start()];
        if p.xla.is_match(before) {
            return None;
        }
        let cupy_like =
            c.get(3).is_some() || c[1].contains(',') || before.contains("OutOfMemoryError");
        cupy_like.then_some(m.start())
    }

    /// None: the patterns match digits as a class, and a count is told by
    /// its commas, not its value.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let text = message.joined();
        let mut finding = message.finding(Kind::CupyOom, text.clone());
        let mut notes = Vec::new();
        let mut sizes = SizeReader::new(&mut notes);
        let limit;
        if let Some(c) = p.legacy.captures(&text) {
            finding.era = Some(Era::Legacy);
            finding.version_hint = Some("CuPy ≈2–6".into());
            let requested = sizes.read(&c, 1, "allocate");
            let total = sizes.read(&c, 3, "total");
            finding.sizes.requested_bytes = requested;
            finding.sizes.allocated_bytes = match (total, requested) {
                (Some(t), Some(r)) => t.checked_sub(r),
                _ => None,
            };
            if let Some(t) = total {
                finding
                    .facts
                    .insert("total_including_request".into(), t.to_string());
            }
            limit = if c.get(5).is_some() {
                sizes.read(&c, 5, "limit set to")
            } else {
                None
            };
        } else {
            let c = p.current.captures(&text)?;
            finding.sizes.requested_bytes = sizes.read(&c, 1, "allocating");
            finding.sizes.allocated_bytes = if c.get(3).is_some() {
                sizes.read(&c, 3, "allocated so far")
            } else {
                None
            };
            limit = if c.get(5).is_some() {
                sizes.read(&c, 5, "limit set to")
            } else {
                None
            };
            finding.era = Some(if c.get(5).is_some() {
                Era::Limit
            } else if c.get(3).is_some() {
                Era::AllocatedSoFar
            } else {
                Era::Bare
            });
            if c.get(3).is_none() {
                finding.facts.insert(
                    fact::POOL.into(),
                    "MemoryAsyncPool (cudaMallocAsync; usage not tracked)".into(),
                );
            }
        }
        finding.sizes.extra.insert("pool_limit_bytes".into(), limit);
        if sizes.overflowed {
            finding.facts.insert(fact::OVERFLOW.into(), "true".into());
        }
        finding.notes = notes;
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Case = (&'static str, u64, Option<u64>, Option<u64>, &'static str);

    use crate::units::GIB;

    fn decode(line: &str) -> Option<Finding> {
        let start = CupyOom.start(line)?;
        let lines = vec![line[start..].to_string()];
        let m = Message {
            input: "t",
            line: 1,
            prefix: &line[..start],
            lines: &lines,
        };
        CupyOom.decode(&m)
    }

    #[test]
    fn every_spelling() {
        // (line, requested, allocated, limit, era)
        let cases: &[Case] = &[
            ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 2,147,483,648 bytes).", GIB, Some(2 * GIB), None, "allocated_so_far"),
            ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 3,758,096,384 bytes, limit set to: 4,294,967,296 bytes).", GIB, Some(3 * GIB + GIB / 2), Some(4 * GIB), "limit"),
            ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes", GIB, None, None, "bare"),
            ("Exception in main training loop: Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).", 25_600_000, Some(3_635_267_072), None, "allocated_so_far"),
            ("cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 1073741824 bytes (total 12373894656 bytes)", GIB, Some(12_373_894_656 - GIB), None, "legacy"),
            ("Exception in main training loop: out of memory to allocate 163840000 bytes (total 1673061376 bytes)", 163_840_000, Some(1_673_061_376 - 163_840_000), None, "legacy"),
            ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 512 bytes", 512, None, None, "bare"),
        ];
        for &(line, requested, allocated, limit, era) in cases {
            let f = decode(line).expect(line);
            assert_eq!(f.kind, Kind::CupyOom);
            assert_eq!(f.sizes.requested_bytes, Some(requested), "{line}");
            assert_eq!(f.sizes.allocated_bytes, allocated, "{line}");
            assert_eq!(f.sizes.extra["pool_limit_bytes"], limit, "{line}");
            assert_eq!(f.era.map(Era::slug), Some(era), "{line}");
        }
        assert_eq!(
            decode(cases[0].0).unwrap().exception.as_deref(),
            Some("cupy.cuda.memory.OutOfMemoryError")
        );
    }

    #[test]
    fn other_libraries_are_not_cupy() {
        for line in [
            "Out of memory allocating 1234 bytes",
            "Out of memory allocating 512 bytes",
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 20,029,400,304 bytes.",
            "Out of memory allocating sublist for foo",
        ] {
            assert!(decode(line).is_none(), "{line}");
        }
    }
}
