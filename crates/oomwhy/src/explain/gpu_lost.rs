//! The driver lost a GPU (`fallen off the bus`, `GPU is lost`).

use super::common::{capitalise, fact, fix_en, verdict_en};
use super::docs::Code;
use super::Explain;
use crate::record::{Diagnosis, Finding, Fix, Verdict};

/// Explains `Kind::GpuFallenOffBus` findings.
pub(super) struct GpuFallenOffBus;

impl Explain for GpuFallenOffBus {
    fn headline_en(&self, f: &Finding) -> String {
        match fact(f, "pci") {
            Some(pci) => format!("GPU {pci} has fallen off the bus: the driver lost it"),
            None => "A GPU has fallen off the bus: the driver lost it".into(),
        }
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        let who = fact(f, "reported_by").unwrap_or("the NVIDIA driver");
        out.push(verdict_en(
            Code::HardwareFault,
            "The GPU or its connection failed, not your program",
            format!("{} reports that the GPU stopped answering over PCIe (the condition NVIDIA's Xid 79 reports). It stays unusable until the node is rebooted. NVIDIA names power delivery, overheating and PCIe slot or riser faults as causes; a smaller batch or other memory settings will not help.", capitalise(who)),
        ));
    }

    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix_en(
            "Reboot the node and check the hardware",
            "Power-cycle the machine; check power supply headroom, temperatures (`nvidia-smi -q -d TEMPERATURE,POWER`) and the PCIe slot or riser; if it recurs on the same GPU, have it serviced.",
        ));
        out.push(fix_en(
            "Look for the driver's Xid line",
            "`sudo dmesg -T | grep -i -e xid -e NVRM` around the crash time shows what the driver saw first.",
        ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
