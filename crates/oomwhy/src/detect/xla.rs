//! XLA out-of-memory, as JAX and TensorFlow-with-XLA report it
//! (docs/formats.md §7.1, §1.3):
//!
//! * `bytes` — `TfAllocatorAdapter`: `Out of memory while trying to allocate N bytes.`,
//!   usually as `RESOURCE_EXHAUSTED: ...` after `jaxlib.xla_extension.XlaRuntimeError: `,
//!   or `Resource exhausted: ...` in TensorFlow 1.x/2.x graph errors. Also the
//!   `RESOURCE_EXHAUSTED: Out of memory allocating N bytes.` spelling seen in JAX logs.
//! * `host` — `Out of host memory while trying to allocate N bytes. Please set the
//!   environment variable XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB ...` (pinned host memory).
//! * `human_readable` — `RESOURCE_EXHAUSTED: Out of memory while trying to allocate 11.96GiB`
//!   (seen in logs, §1.3 units; source not read).
//! * `device_allocator` — `StreamExecutorMemoryAllocator::Allocate`:
//!   `RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB (3206250496B) on device ordinal 0`.
//!
//! XLA appends `BufferAssignment OOM Debugging.` and the program's buffer
//! statistics; the totals are kept, the per-buffer list is not.

use super::text::{grows, int};
use super::{find_size, re};
use super::{Family, Message, SizeReader};
use crate::record::{fact, Era, Finding, Kind, Note};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    anchor: Regex,
    raw: Regex,
    constant: Regex,
    human: Regex,
    device_allocator: Regex,
    fragmentation: Regex,
    /// TPU compile-time failure: `Ran out of memory in memory space hbm.
    /// Used 12.34G of 8.00G hbm. Exceeded hbm capacity by 4.34G.`
    hbm: Regex,
    /// TPU runtime: `Error allocating device buffer: Attempting to allocate
    /// 4.39G. That was not possible. There are 2.30G free.; (0x0x0_HBM0)`
    /// (JAX, Keras and PyTorch/XLA on TPUs print it).
    tpu_buffer: Regex,
    hbm_reserved: Regex,
    hbm_line: Regex,
    stats_line: Regex,
    stats: [(Regex, &'static str, &'static str); 4],
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        anchor: re(concat!(
            r"(?:(?:RESOURCE_EXHAUSTED|Resource exhausted):\s*)?Out of (?:host )?memory while trying to allocate \d",
            // A paste hard-wrapped right after `Out`.
            r"|^of (?:host )?memory while trying to allocate \d",
            r"|\bFailed to allocate \d+ bytes for new constant",
            r"|RESOURCE_EXHAUSTED:\s*Out of memory allocating \d+ bytes",
            r"|(?:(?:RESOURCE_EXHAUSTED|Resource exhausted):\s*)?Failed to allocate request for \d[^()]*\(\d+B\) on device ordinal",
            r"|Ran out of memory in memory space hbm\. Used \d",
            r"|Error allocating device buffer: Attempting to allocate \d"
        )),
        tpu_buffer: re(r"Attempting to allocate (\d+(?:\.\d+)?)([KMGT]?)\. That was not possible\.(?: There are (\d+(?:\.\d+)?)([KMGT]?) free\.)?"),
        // A paste may break the line before `Exceeded`.
        hbm: re(r"Ran out of memory in memory space hbm\. Used (\d+(?:\.\d+)?)([KMGT]?) of (\d+(?:\.\d+)?)([KMGT]?) hbm\.(?:\s+Exceeded hbm capacity by (\d+(?:\.\d+)?)([KMGT]?)\.)?"),
        // The compiler's breakdown after it, on lines of their own or run
        // together: `Total hbm usage >= 22.47G:` then `reserved 530.00M`,
        // `program 21.95G`, `arguments 0B` (a size or `unknown size`).
        hbm_reserved: re(r"Total hbm usage >= [\d.]+[KMGT]?B?:\s+reserved\s+(\d+(?:\.\d+)?)([KMGT]?)B?\b"),
        hbm_line: re(r"^(?:Exceeded hbm capacity by \d|Total hbm usage >= \d|(?:reserved|program|arguments)\s+(?:\d+(?:\.\d+)?[KMGT]?B?|unknown size)$)"),
        raw: re(r"(?:^|Out )of (host )?memory (?:while trying to allocate|allocating) (\d+) (bytes)"),
        constant: re(r"Failed to allocate (\d+) bytes for new constant"),
        human: re(r"Out of (host )?memory while trying to allocate {TF_SIZE}"),
        device_allocator: re(r"Failed to allocate request for {TF_SIZE} \((\d+)B\) on device ordinal (\d+)"),
        fragmentation: re(r"total fragmentation:\s*{TF_SIZE}\s*\(([\d.]+)%\)"),
        stats_line: re(r"^(?:[a-z_ ]+ allocation|total fragmentation):\s*\d"),
        stats: [
            (re(r"parameter allocation:\s*{TF_SIZE}"), "program_parameter_bytes", "parameter allocation"),
            (re(r"maybe_live_out allocation:\s*{TF_SIZE}"), "program_output_bytes", "maybe_live_out allocation"),
            (re(r"preallocated temp allocation:\s*{TF_SIZE}"), "program_temp_bytes", "preallocated temp allocation"),
            (re(r"\btotal allocation:\s*{TF_SIZE}"), "program_total_bytes", "total allocation"),
        ],
    })
}

fn score(text: &str) -> usize {
    let p = patterns();
    let stats = p.stats.iter().filter(|(r, _, _)| r.is_match(text)).count();
    stats
        + usize::from(text.contains("BufferAssignment OOM Debugging"))
        + usize::from(text.contains("BufferAssignment stats"))
        + usize::from(text.contains("total fragmentation"))
        + usize::from(text.contains("XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB"))
}

/// The TPU compiler's breakdown after its HBM failure: the `Exceeded`
/// sentence a paste broke onto its own line, the `Total hbm usage` lines,
/// and one blank line before them.
fn continues_hbm(lines: &[String], next: &str) -> bool {
    let p = patterns();
    if !lines.first().is_some_and(|l| p.hbm.is_match(l)) {
        return false;
    }
    let t = next.trim();
    if t.is_empty() {
        let blank_before = lines.last().is_some_and(|l| l.trim().is_empty());
        return !blank_before && !lines.iter().any(|l| l.contains("Total hbm usage"));
    }
    p.hbm_line.is_match(t)
}

/// XLA's `Out of memory while trying to allocate ...`.
/// The version hint of a message from a jaxlib that preallocates 90%.
pub const OLD_JAXLIB: &str = "jaxlib before 2023 (90% preallocated)";

pub struct XlaOom;

impl Family for XlaOom {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "memory while trying to allocate",
            "Out of memory allocating",
            "Failed to allocate request for",
            "out of memory in memory space hbm",
            "Error allocating device buffer",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        patterns().anchor.find(line).map(|m| m.start())
    }

    /// None: the start pattern matches digits as a class.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        let t = next.trim_start();
        let stats_line = t.starts_with("BufferAssignment") || patterns().stats_line.is_match(t);
        (stats_line && lines.len() < 12)
            || (lines.len() < 8 && continues_hbm(lines, next))
            || grows(lines, next, 10, score)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let text = message.joined();
        let mut finding = message.finding(
            Kind::XlaOom,
            message.lines.join("\n").trim_end().to_string(),
        );
        // jaxlib built inside TensorFlow's tree names its sources
        // `external/org_tensorflow/` and spells the status `Resource
        // exhausted:`; both are from before 2023, when JAX's default pool
        // was still 90% of free memory (75% since, JAX documentation: GPU
        // memory allocation).
        if message.prefix.contains("external/org_tensorflow/")
            || message.prefix.ends_with("Resource exhausted: ")
        {
            finding.version_hint = Some(OLD_JAXLIB.into());
        }
        let mut notes = Vec::new();
        let mut sizes = SizeReader::new(&mut notes);
        let host;
        if let Some(c) = p.raw.captures(&text) {
            host = c.get(1).is_some();
            finding.era = Some(if host { Era::Host } else { Era::Bytes });
            finding.sizes.requested_bytes = sizes.read(&c, 2, "trying to allocate");
        } else if let Some(c) = p.constant.captures(&text) {
            // XLA's GPU runtime placing a constant of the compiled program.
            host = false;
            finding.era = Some(Era::Constant);
            finding.sizes.requested_bytes = c[1].parse().ok();
        } else if let Some(c) = p.device_allocator.captures(&text) {
            host = false;
            finding.era = Some(Era::DeviceAllocator);
            finding.sizes.requested_bytes = int::<u64>(&p.device_allocator, &text, 3);
            if finding.sizes.requested_bytes.is_none() {
                sizes.overflowed = true;
            }
            finding.device = c[4].parse().ok();
        } else if let Some(c) = p.human.captures(&text) {
            host = c.get(1).is_some();
            finding.era = Some(if host { Era::Host } else { Era::HumanReadable });
            finding.sizes.requested_bytes = sizes.read(&c, 2, "trying to allocate");
            let printed = format!("{}{}", &c[2], &c[3]);
            finding.notes.push(
                crate::say!(
                    en: "the request is printed rounded ({printed}); its byte count is approximate",
                    zh: "申请量打印时做了取整（{printed}）；字节数是近似值",
                )
                .into(),
            );
        } else if let Some(c) = p.hbm.captures(&text) {
            // The compiler's estimate of the program's TPU memory, not one
            // allocation: there is no request size.
            host = false;
            finding.era = Some(Era::TpuCompile);
            let mut read = |at: usize, what: &str| {
                let unit = match &c[at + 1] {
                    "" => "B",
                    u => u,
                };
                sizes.read_parts(&c[at], unit, what)
            };
            let used = read(1, "used");
            finding.sizes.total_bytes = read(3, "hbm capacity");
            let exceeded = c.get(5).and_then(|_| read(5, "exceeded by"));
            // What the TPU runtime keeps for itself out of the capacity.
            if let Some(r) = p.hbm_reserved.captures(&text) {
                let unit = match &r[2] {
                    "" => "B",
                    u => u,
                };
                finding.sizes.reserved_bytes = sizes.read_parts(&r[1], unit, "reserved");
            }
            finding.sizes.extra.insert("used_bytes".into(), used);
            finding
                .sizes
                .extra
                .insert("exceeded_bytes".into(), exceeded);
            finding.notes.push(rounded_by_xla());
        } else if let Some(c) = p.tpu_buffer.captures(&text) {
            host = false;
            finding.era = Some(Era::TpuBuffer);
            let mut read = |at: usize, what: &str| {
                let unit = match &c[at + 1] {
                    "" => "B",
                    u => u,
                };
                sizes.read_parts(&c[at], unit, what)
            };
            finding.sizes.requested_bytes = read(1, "attempting to allocate");
            if c.get(3).is_some() {
                finding.sizes.free_bytes = read(3, "free");
            }
            finding.notes.push(rounded_by_xla());
        } else {
            return None;
        }
        finding.backend = host.then(|| "cpu".into());
        finding.facts.insert(
            "memory_space".into(),
            if host { "pinned host memory" } else { "device" }.into(),
        );
        for (re, key, what) in &p.stats {
            if re.is_match(&text) {
                let value = find_size(re, &text, 1, what, &mut sizes);
                finding.sizes.extra.insert((*key).into(), value);
            }
        }
        if let Some(c) = p.fragmentation.captures(&text) {
            finding.facts.insert(
                "program_fragmentation".into(),
                format!("{}{} ({}%)", &c[1], &c[2], &c[3]),
            );
        }
        if sizes.overflowed {
            finding.facts.insert(fact::OVERFLOW.into(), "true".into());
        }
        finding.truncated = finding.sizes.requested_bytes.is_none() && !sizes.overflowed;
        finding.notes.extend(notes);
        Some(finding)
    }
}

/// XLA prints sizes with one-letter units (`G`, `M`), rounded.
fn rounded_by_xla() -> Note {
    crate::say!(
        en: "sizes are printed rounded (XLA's G/M units); byte counts are approximate",
        zh: "大小打印时做了取整（XLA 的 G/M 单位）；字节数是近似值",
    )
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    type Case = (
        &'static str,
        u64,
        &'static str,
        Option<u32>,
        Option<&'static str>,
    );

    fn decode(lines: &[&str]) -> Option<Finding> {
        crate::detect::decode_lines(&XlaOom, lines)
    }

    #[test]
    fn every_spelling() {
        // (line, requested, era, device, exception)
        let cases: &[Case] = &[
            ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.", 7_406_166_528, "bytes", None, Some("jaxlib.xla_extension.XlaRuntimeError")),
            ("RuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 14285187448 bytes.", 14_285_187_448, "bytes", None, Some("RuntimeError")),
            ("  (0) Resource exhausted: Out of memory while trying to allocate 68852648264 bytes.", 68_852_648_264, "bytes", None, None),
            ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 20029400304 bytes.", 20_029_400_304, "bytes", None, Some("jaxlib.xla_extension.XlaRuntimeError")),
            ("XlaRuntimeError: RESOURCE_EXHAUSTED: Out of host memory while trying to allocate 68719476736 bytes. Please set the environment variable XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB to allocate larger host memory than the default 64 GB.", 64 << 30, "host", None, Some("XlaRuntimeError")),
            ("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 11.96GiB", 12_841_952_215, "human_readable", None, None),
            ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB (3206250496B) on device ordinal 0", 3_206_250_496, "device_allocator", Some(0), Some("jaxlib.xla_extension.XlaRuntimeError")),
        ];
        for &(line, bytes, era, device, exception) in cases {
            let f = decode(&[line]).expect(line);
            assert_eq!(f.kind, Kind::XlaOom);
            assert_eq!(f.sizes.requested_bytes, Some(bytes), "{line}");
            assert_eq!(f.era.map(Era::slug), Some(era), "{line}");
            assert_eq!(f.device, device, "{line}");
            assert_eq!(f.exception.as_deref(), exception, "{line}");
        }
        let host = decode(&[cases[4].0]).unwrap();
        assert_eq!(host.backend.as_deref(), Some("cpu"));
        assert_eq!(host.facts["memory_space"], "pinned host memory");
    }

    #[test]
    fn buffer_assignment_stats_join() {
        let f = decode(&[
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.",
            "BufferAssignment OOM Debugging.",
            "BufferAssignment stats:",
            "             parameter allocation:  372.76MiB",
            "              constant allocation:    48.5KiB",
            "        maybe_live_out allocation:    9.64GiB",
            "     preallocated temp allocation:    4.44GiB",
            "                 total allocation:   14.44GiB",
            "              total fragmentation:  680.30MiB (4.60%)",
            "Peak buffers:",
        ])
        .unwrap();
        assert_eq!(f.text.lines().count(), 9);
        let e = |k: &str| f.sizes.extra.get(k).copied().flatten();
        assert_eq!(e("program_total_bytes"), Some(15_504_831_939)); // 14.44 × 2^30
        assert_eq!(e("program_temp_bytes"), Some(4_767_413_699)); // 4.44 × 2^30
        assert_eq!(e("program_parameter_bytes"), Some(390_867_190)); // 372.76 × 2^20
        assert_eq!(f.facts["program_fragmentation"], "680.30MiB (4.60%)");
    }

    #[test]
    fn not_cupy_or_prose() {
        assert!(XlaOom
            .start("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 0 bytes).")
            .is_none());
        assert!(XlaOom
            .start("we ran out of memory while trying to allocate buffers")
            .is_none());
    }

    #[test]
    fn tpu_breakdown_across_lines() {
        // A JAX paste (TPU compile failure) broken before `Exceeded`, with
        // the compiler's breakdown after a blank line; the one-line form is
        // XLA's error-code page's example.
        let f = decode(&[
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 21.95G of 15.48G hbm.",
            " Exceeded hbm capacity by 6.47G.",
            "",
            "Total hbm usage >= 22.47G:",
            "    reserved        530.00M",
            "    program          21.95G",
            "    arguments            0B",
            "",
            "    How to fix this?",
        ])
        .unwrap();
        assert_eq!(f.text.lines().count(), 7);
        assert_eq!(f.sizes.extra["exceeded_bytes"], Some(6_947_109_601)); // 6.47 × 2^30
        assert_eq!(f.sizes.reserved_bytes, Some(555_745_280)); // 530 × 2^20
        let f = decode(&["XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 49.34G of 32.00G hbm. Exceeded hbm capacity by 17.34G. Total hbm usage >= 49.34G: reserved 3.12M program unknown size arguments 49.34G"]).unwrap();
        assert_eq!(f.sizes.reserved_bytes, Some(3_271_557)); // 3.12 × 2^20
                                                             // A blank line alone, with no breakdown after it, ends the message.
        let f = decode(&[
            "XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 21.95G of 15.48G hbm.",
            "",
            "Epoch 2",
        ])
        .unwrap();
        assert_eq!(f.text.lines().count(), 1);
        assert_eq!(f.sizes.reserved_bytes, None);
    }
}
