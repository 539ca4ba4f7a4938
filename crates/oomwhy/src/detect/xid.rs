//! NVIDIA kernel-driver Xid events (docs/formats.md §11), as dmesg, journalctl or
//! syslog show them:
//!
//! ```text
//! NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.
//! NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.
//! ```
//!
//! and the code as people report it in their own words, where it names the
//! event they saw (`My GPU falls off the bus (Xid 79 → Xid 154 ...)`).
//!
//! The meaning of each code lives in the explainer; this module only reads
//! the code, the PCI address, the process and the driver's text.

use super::text::collapse_repeats;
use super::{Family, Message};
use crate::constant_regex;
use crate::record::{fact, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct XidPatterns {
    line: Regex,
    /// `Xid 79` in a sentence: NVIDIA's spelling, then a code of the table.
    prose: Regex,
    pid: Regex,
    name: Regex,
}

fn patterns() -> &'static XidPatterns {
    static P: OnceLock<XidPatterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = constant_regex;
        XidPatterns {
            line: re(r"NVRM: Xid \((?:PCI:)?([^)]*)\): (\d+)(?:,\s*(.*))?"),
            prose: re(r"\bXid (\d{1,3})\b"),
            pid: re(r"^pid=('[^']*'|<[^>]*>|\d+),\s*"),
            name: re(r"^name=([^,]*),\s*"),
        }
    })
}

/// (PCI address, code) of an Xid line.
fn xid_of(line: &str) -> Option<(String, String)> {
    let c = patterns().line.captures(line)?;
    Some((c[1].to_string(), c[2].to_string()))
}

/// `Xid N` in a report's own words: (start, code). The code must be one of
/// the table's, and the number a code, not a list entry or a version: a
/// catalogue's `Xid 13: Graphics Engine Exception` and NVLink's `XID 149.38
/// (err status ...)` are pages that list codes, not reports of one.
fn prose_xid(line: &str) -> Option<(usize, String)> {
    patterns().prose.captures_iter(line).find_map(|c| {
        let (all, code) = (c.get(0)?, c.get(1)?);
        let after = &line[code.end()..];
        let listed = after.starts_with(':')
            || after.starts_with('.') && after[1..].starts_with(|ch: char| ch.is_ascii_digit());
        let known = crate::codes::xid::get(code.as_str()).is_some();
        (known && !listed && !super::is_mention(line, all.start()))
            .then(|| (all.start(), code.as_str().to_string()))
    })
}

/// An `NVRM: Xid (...): N, ...` line and the NVRM lines right after it; the
/// same code repeated for the same GPU is counted, not reported again. A
/// code named in prose (`Xid 79`) is read alone.
pub struct Xid;

impl Family for Xid {
    fn triggers(&self) -> &'static [&'static str] {
        &["NVRM: Xid", "Xid "]
    }

    fn start(&self, line: &str) -> Option<usize> {
        match patterns().line.find(line) {
            Some(m) => Some(m.start()),
            None => prose_xid(line).map(|(start, _)| start),
        }
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        let from_driver = lines.first().is_some_and(|l| xid_of(l).is_some());
        if !from_driver || lines.len() >= 200 || !next.contains("NVRM: ") {
            return false;
        }
        match xid_of(next) {
            None => true,
            Some(other) => xid_of(&lines[0]).is_some_and(|first| first == other),
        }
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let first = message.lines.first()?;
        let Some(caps) = p.line.captures(first) else {
            let (_, code) = prose_xid(first)?;
            let mut finding = message.finding(Kind::Xid, first.trim_end().to_string());
            finding.exception = None;
            finding.backend = Some("cuda".into());
            finding.facts.insert(fact::XID.into(), code);
            return Some(finding);
        };
        let key = (caps[1].to_string(), caps[2].to_string());
        let (text, repeats) = collapse_repeats(message.lines, |l| {
            xid_of(l).is_some_and(|other| other == key)
        });
        let mut finding = message.finding(Kind::Xid, text);
        finding.exception = None;
        finding.backend = Some("cuda".into());
        finding.facts.insert(fact::XID.into(), key.1.clone());
        finding.facts.insert("pci".into(), key.0.clone());
        let mut rest = caps.get(3).map_or("", |m| m.as_str()).trim();
        if let Some(c) = p.pid.captures(rest) {
            let pid = c[1].trim_matches('\'');
            if pid.chars().all(|ch| ch.is_ascii_digit()) {
                finding.facts.insert(fact::PID.into(), pid.to_string());
            }
            rest = &rest[c.get(0).map_or(0, |m| m.end())..];
        }
        if let Some(c) = p.name.captures(rest) {
            let name = c[1].trim();
            if !name.starts_with('<') && !name.is_empty() {
                finding.facts.insert(fact::PROCESS.into(), name.to_string());
            }
            rest = &rest[c.get(0).map_or(0, |m| m.end())..];
        }
        if !rest.is_empty() {
            finding
                .facts
                .insert("driver_message".into(), rest.trim().to_string());
        }
        // A finding starts at one occurrence; each repeated line is one more.
        finding.occurrences += repeats as u64;
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(lines: &[&str]) -> Finding {
        crate::detect::decode_lines(&Xid, lines).expect("xid line")
    }

    #[test]
    fn reads_every_field() {
        let f = decode(&[
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
        ]);
        assert_eq!(f.kind, Kind::Xid);
        assert_eq!(f.facts["xid"], "79");
        assert_eq!(f.facts["pci"], "0000:3b:00");
        assert_eq!(f.facts["pid"], "1234");
        assert_eq!(f.facts["process"], "python");
        assert_eq!(f.facts["driver_message"], "GPU has fallen off the bus.");
    }

    #[test]
    fn spellings() {
        let f = decode(&["NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate."]);
        assert_eq!(f.facts["xid"], "63");
        assert_eq!(
            f.facts["driver_message"],
            "Row Remapper: New row marked for remapping, reset gpu to activate."
        );
        let g =
            decode(&["NVRM: Xid (PCI:0000:65:00): 92, pid='N/A', High single-bit ECC error rate"]);
        assert!(!g.facts.contains_key("pid"));
        assert_eq!(g.facts["driver_message"], "High single-bit ECC error rate");
        let h = decode(&["NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus."]);
        assert_eq!(h.facts["driver_message"], "GPU has fallen off the bus.");
        let i = decode(&["NVRM: Xid (PCI:0000:08:00): 31, pid='<unknown>', name=<unknown>, Ch 0000003b, intr 10000000. MMU Fault: ENGINE GRAPHICS HUBCLIENT_SCC faulted @ 0x0_04687000. Fault is of type FAULT_PDE ACCESS_TYPE_READ"]);
        assert_eq!(i.facts["xid"], "31");
        assert!(!i.facts.contains_key("process"));
        assert!(i.facts["driver_message"].starts_with("Ch 0000003b"));
    }

    #[test]
    fn folds_repeats_and_follow_ups() {
        let f = decode(&[
            "NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
            "NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.",
            "NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
            "NVRM: Xid (PCI:0000:2b:00): 45, pid=1, Ch 00000010",
        ]);
        assert_eq!(f.occurrences, 2);
        assert_eq!(f.text.lines().count(), 2);
    }

    #[test]
    fn a_negation_about_the_event_is_still_a_report() {
        // The same subject with a verb about what happened, not about the
        // code's listing.
        for line in [
            "Xid 109 does not go away after a reboot",
            "Xid 79 does not exist anymore after the driver update, but Xid 109 does",
        ] {
            let found = Xid
                .start(line)
                .filter(|&s| !crate::detect::is_mention(line, s));
            assert!(found.is_some(), "{line}");
        }
    }

    #[test]
    fn negatives() {
        assert!(Xid.start("grep Xid /var/log/syslog").is_none());
        assert!(Xid
            .start("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05")
            .is_none());
    }

    #[test]
    fn a_code_in_a_report() {
        // A wild paste (an issue on the open kernel modules).
        let f = decode(&["My RTX 5070 Laptop GPU reliably falls off the PCIe bus (Xid 79 \u{2192} Xid 154 \"Node Reboot Required\" \u{2192} full system freeze, hard power-off required) during gaming sessions."]);
        assert_eq!(f.facts["xid"], "79");
        assert!(!f.facts.contains_key("pci"));
        // A list of codes (a catalogue, NVLink's `XID 149.38`), a code the
        // table does not have, or another word ending in `Xid`.
        for line in [
            "Xid 13: Graphics Engine Exception",
            "- Xid 149.38 (err status 0x00000000) NVLINK_NETIR_ERROR detected on GPU PCI:0000:00:00",
            "saw Xid 999 twice",
            "the field myXid 79 is set",
            // A wild paste: the poster on the code, not a new event.
            "Xid 109 does not even exist in nvidia's [documentation](https://docs.nvidia.com/deploy/xid-errors/index.html)??",
            "Xid 109 isn't documented anywhere",
        ] {
            let found = Xid
                .start(line)
                .filter(|&s| !crate::detect::is_mention(line, s));
            assert!(found.is_none(), "{line}");
        }
    }
}
