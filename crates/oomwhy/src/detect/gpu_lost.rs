//! The driver lost contact with a GPU (docs/formats.md, "GPU lost"):
//!
//! ```text
//! NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) installed in this system has
//! NVRM: fallen off the bus and is not responding to commands.
//! Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost.  Reboot the system to recover this GPU
//! ```
//!
//! The first is the kernel driver's (dmesg), the second `nvidia-smi`'s. The
//! `NVRM: Xid (...): 79` line says the same and is read by the Xid family.

use super::{re, Family, Message};
use crate::record::{Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    lost: Regex,
    handle: Regex,
    pci: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        lost: re(r"\b(?:(?:has )?fallen off the bus|GPU is lost)\b"),
        handle: re(r"Unable to determine the device handle for GPU"),
        pci: re(r"(?:GPU |PCI:)((?:[0-9A-Fa-f]{4,8}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)"),
    })
}

/// `... has fallen off the bus` (driver) and `GPU is lost` (nvidia-smi).
pub struct GpuFallenOffBus;

impl Family for GpuFallenOffBus {
    fn triggers(&self) -> &'static [&'static str] {
        // The driver's lines all start with `NVRM: `.
        &["NVRM: fallen off the bus", "GPU is lost"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        let p = patterns();
        let m = p.lost.find(line)?;
        Some(
            p.handle
                .find(line)
                .map_or(m.start(), |h| h.start().min(m.start())),
        )
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        // nvidia-smi's sentence wrapped by a terminal, the driver's NVRM tail.
        let t = next.trim_start();
        let open = lines.last().is_some_and(|l| !l.trim_end().ends_with('.'));
        lines.len() < 3
            && open
            && (t.starts_with("the system to recover")
                || t.starts_with("NVRM: ") && !t.contains("Xid"))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let text = message.joined();
        let mut finding = message.finding(Kind::GpuFallenOffBus, message.lines.join("\n"));
        finding.exception = None;
        finding.backend = Some("cuda".into());
        let pci = p
            .pci
            .captures(&text)
            .or_else(|| p.pci.captures(message.prefix));
        if let Some(c) = pci {
            finding.facts.insert("pci".into(), c[1].to_string());
        }
        finding.facts.insert(
            "reported_by".into(),
            if p.handle.is_match(&text) {
                "nvidia-smi"
            } else {
                crate::i18n::reporter::NVIDIA_KERNEL_DRIVER.en
            }
            .into(),
        );
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::decode_lines;

    #[test]
    fn reads_both_wordings() {
        let f = decode_lines(
            &GpuFallenOffBus,
            &[
                "Unable to determine the device handle for GPU 0000:03:00.0: GPU is lost.  Reboot",
                " the system to recover this GPU",
            ],
        )
        .expect("nvidia-smi");
        assert_eq!(f.kind, Kind::GpuFallenOffBus);
        assert_eq!(f.facts["pci"], "0000:03:00.0");
        assert_eq!(f.text.lines().count(), 2);
        let f = decode_lines(
            &GpuFallenOffBus,
            &["NVRM: GPU 0000:41:00.0: GPU has fallen off the bus."],
        )
        .expect("driver");
        assert_eq!(f.facts["pci"], "0000:41:00.0");
        assert_eq!(f.facts["reported_by"], "NVIDIA kernel driver");
    }
}
