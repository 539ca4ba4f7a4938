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
//!
//! The kernel's own PCIe error report (`drivers/pci/pcie/aer.c`) of a fatal
//! uncorrected error on a link, which takes the device behind it off the bus
//! whatever its driver (and panics a kernel set to panic on it):
//!
//! ```text
//! pcieport 0000:00:01.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)
//! pcieport 0000:00:01.0: device [8086:1901] error status/mask=00000020/00000000
//! pcieport 0000:00:01.0: [ 5] SDES (Surprise Down Error Status)
//! Kernel panic - not syncing: Fatal hardware error!
//! ```
//!
//! Corrected and non-fatal errors (`severity=Corrected`, `Uncorrected
//! (Non-Fatal)`) are recovered by the kernel and are no finding.

use super::{re, Family, Message};
use crate::record::{Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    lost: Regex,
    handle: Regex,
    pci: Regex,
    aer_fatal: Regex,
    aer_tail: Regex,
    aer_port: Regex,
    aer_bit: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        lost: re(r"\b(?:(?:has )?fallen off the bus|GPU is lost)\b"),
        handle: re(r"Unable to determine the device handle for GPU"),
        pci: re(r"(?:GPU |PCI:)((?:[0-9A-Fa-f]{4,8}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)"),
        aer_fatal: re(r"PCIe Bus Error: severity=Uncorrected \(Fatal\)"),
        // The report's own lines after its first (`aer_print_error`), and
        // the panic a fatal error causes where the kernel is set to.
        aer_tail: re(r"^\s*(?:\S+ [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]: )?(?:device \[[0-9a-f]{4}:[0-9a-f]{4}\] error status/mask=|\[\s*\d+\] \w|AER:\s+TLP Header)|^\s*Kernel panic\s*\S+\s*not syncing: Fatal hardware error"),
        aer_port: re(r"([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]): PCIe Bus Error"),
        aer_bit: re(r"\[\s*\d+\]\s*(?:\w+ \()?([A-Z][A-Za-z ]+?(?:Error|Timeout|TLP|Completion|Abort))(?: Status)?\)?\s*(?:\(First\))?\s*$"),
    })
}

/// `... has fallen off the bus` (driver) and `GPU is lost` (nvidia-smi).
pub struct GpuFallenOffBus;

impl Family for GpuFallenOffBus {
    fn triggers(&self) -> &'static [&'static str] {
        // The driver's lines all start with `NVRM: `.
        // The kernel's PCIe error report starts `PCIe Bus Error:`.
        &["NVRM: fallen off the bus", "GPU is lost", "PCIe Bus Error"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        let p = patterns();
        if let Some(m) = p.aer_fatal.find(line) {
            return Some(m.start());
        }
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
        if lines
            .first()
            .is_some_and(|l| patterns().aer_fatal.is_match(l))
        {
            return lines.len() < 12 && patterns().aer_tail.is_match(next);
        }
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
        if p.aer_fatal.is_match(&text) {
            let whole = format!("{}{text}", message.prefix);
            if let Some(c) = p.aer_port.captures(&whole) {
                finding.facts.insert("pci".into(), c[1].to_string());
            }
            if let Some(bit) = message
                .lines
                .iter()
                .find_map(|l| p.aer_bit.captures(l).map(|c| c[1].trim().to_string()))
            {
                finding.facts.insert("pcie_error".into(), bit);
            }
            if text.contains("not syncing") {
                finding.facts.insert("kernel_panic".into(), "true".into());
            }
            finding.facts.insert(
                "reported_by".into(),
                crate::i18n::reporter::LINUX_PCIE_AER.en.into(),
            );
            return Some(finding);
        }
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

    /// The kernel's AER report of a fatal link error, as a kernel log
    /// prints it (fixtures/wild/3228.txt), with the panic it causes; a
    /// corrected error is no finding.
    #[test]
    fn reads_a_fatal_pcie_error() {
        let f = decode_lines(
            &GpuFallenOffBus,
            &[
                "pcieport 0000:00:01.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)",
                "pcieport 0000:00:01.0: device [8086:1901] error status/mask=00000020/00000000",
                "pcieport 0000:00:01.0: [ 5] SDES (Surprise Down Error Status)",
                "Kernel panic - not syncing: Fatal hardware error!",
            ],
        )
        .expect("aer");
        assert_eq!(f.facts["pci"], "0000:00:01.0");
        assert_eq!(f.facts["pcie_error"], "Surprise Down Error");
        assert_eq!(f.facts["kernel_panic"], "true");
        assert_eq!(f.text.lines().count(), 4);
        assert!(GpuFallenOffBus
            .start("pcieport 0000:00:1c.5: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)")
            .is_none());
    }

    #[test]
    fn an_oom_kill_and_a_fatal_pcie_error_are_two_findings() {
        let paste = include_str!("../../../../fixtures/wild/3228.txt");
        let found = crate::decode_str(paste);
        let kinds: Vec<Kind> = found.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, [Kind::HostOomKilled, Kind::GpuFallenOffBus]);
        assert!(found[1].diagnosis.headline.contains("PCIe"));
        assert_eq!(found[1].diagnosis.fixes[0].id, "check-pcie-link-hardware");
    }
}
