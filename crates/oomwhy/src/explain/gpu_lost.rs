//! The driver lost a GPU (`fallen off the bus`, `GPU is lost`).

use super::catalogue::{Cost, FixSpec};
use super::common::{capitalise, fact, fix, verdict};
use super::docs::Code;
use super::platform::Platform;
use super::setting::Vendor;
use super::Explain;
use crate::i18n::Said;
use crate::record::{Diagnosis, Finding, Fix, Verdict};
use crate::say;

/// Explains `Kind::GpuFallenOffBus` findings.
pub(super) struct GpuFallenOffBus;

impl Explain for GpuFallenOffBus {
    fn headline(&self, f: &Finding) -> Said {
        match fact(f, "pci") {
            Some(pci) => say!(
                en: "GPU {pci} has fallen off the bus: the driver lost it",
                zh: "GPU {pci} 掉卡了（“fallen off the bus”）：驱动已经找不到它",
                pci = pci
            ),
            None => say!(
                en: "A GPU has fallen off the bus: the driver lost it",
                zh: "有一块 GPU 掉卡了（“fallen off the bus”）：驱动已经找不到它"
            ),
        }
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        // The detector names the kernel driver or nvidia-smi; the Chinese
        // names the driver in Chinese and keeps a tool's name as it is.
        let desktop = super::xid::gpu_class_of(f) == super::xid::GpuClass::Desktop;
        let detail = match fact(f, "reported_by") {
            // A desktop or laptop GPU: its own causes, no node to reboot.
            _ if desktop => super::xid::desktop_bus_meaning(f),
            None => say!(
                en: "The NVIDIA driver reports that the GPU stopped answering over PCIe (the condition NVIDIA's Xid 79 reports). It stays unusable until the node is rebooted. NVIDIA names power delivery, overheating and PCIe slot or riser faults as causes; a smaller batch or other memory settings will not help.",
                zh: "NVIDIA 驱动报告这块 GPU 已不再通过 PCIe 响应（NVIDIA 的 Xid 79 报告的就是这种情况）。重启节点之前它都不能用。NVIDIA 列出的原因有供电、过热，以及 PCIe 插槽或转接卡故障；减小 batch 或改其他显存设置都没有用。"
            ),
            Some("NVIDIA kernel driver") => say!(
                en: "NVIDIA kernel driver reports that the GPU stopped answering over PCIe (the condition NVIDIA's Xid 79 reports). It stays unusable until the node is rebooted. NVIDIA names power delivery, overheating and PCIe slot or riser faults as causes; a smaller batch or other memory settings will not help.",
                zh: "NVIDIA 内核驱动报告这块 GPU 已不再通过 PCIe 响应（NVIDIA 的 Xid 79 报告的就是这种情况）。重启节点之前它都不能用。NVIDIA 列出的原因有供电、过热，以及 PCIe 插槽或转接卡故障；减小 batch 或改其他显存设置都没有用。"
            ),
            // English capitalises the sentence's first word; the tool's name is lower case.
            Some("nvidia-smi") => say!(
                en: "Nvidia-smi reports that the GPU stopped answering over PCIe (the condition NVIDIA's Xid 79 reports). It stays unusable until the node is rebooted. NVIDIA names power delivery, overheating and PCIe slot or riser faults as causes; a smaller batch or other memory settings will not help.",
                zh: "nvidia-smi 报告这块 GPU 已不再通过 PCIe 响应（NVIDIA 的 Xid 79 报告的就是这种情况）。重启节点之前它都不能用。NVIDIA 列出的原因有供电、过热，以及 PCIe 插槽或转接卡故障；减小 batch 或改其他显存设置都没有用。"
            ),
            Some(tool) => say!(
                en: "{tool} reports that the GPU stopped answering over PCIe (the condition NVIDIA's Xid 79 reports). It stays unusable until the node is rebooted. NVIDIA names power delivery, overheating and PCIe slot or riser faults as causes; a smaller batch or other memory settings will not help.",
                zh: "{tool} 报告这块 GPU 已不再通过 PCIe 响应（NVIDIA 的 Xid 79 报告的就是这种情况）。重启节点之前它都不能用。NVIDIA 列出的原因有供电、过热，以及 PCIe 插槽或转接卡故障；减小 batch 或改其他显存设置都没有用。",
                tool = capitalise(tool)
            ),
        };
        out.push(verdict(
            Code::HardwareFault,
            say!(
                en: "The GPU or its connection failed, not your program",
                zh: "是 GPU 或它的连接坏了，不是你的程序"
            ),
            detail,
        ));
    }

    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        if super::xid::gpu_class_of(f) == super::xid::GpuClass::Desktop {
            out.push(super::xid::desktop_bus_fix(f));
        } else {
            out.push(reboot_and_check());
        }
        // Windows has no dmesg: its driver's events are in the Event Viewer.
        out.push(fix(
            &DRIVER_XID_LINE,
            if Platform::of(f) == Platform::Windows {
                say!(
                    en: "Event Viewer (Windows Logs > System) around the crash time shows the driver's own events (nvlddmkm, Event ID 4101 for a TDR reset) and what it saw first.",
                    zh: "在事件查看器（Windows 日志 > 系统）里看崩溃时间前后驱动自己的事件（nvlddmkm；TDR 重置是事件 ID 4101），看它最先看到的是什么。"
                )
            } else {
                say!(
                    en: "`sudo dmesg -T | grep -i -e xid -e NVRM` around the crash time shows what the driver saw first.",
                    zh: "在崩溃时间前后运行 `sudo dmesg -T | grep -i -e xid -e NVRM`，看驱动最先看到的是什么。"
                )
            },
        ));
    }
}

/// A data-centre or unnamed GPU: the node's hardware.
fn reboot_and_check() -> Fix {
    fix(
        &REBOOT_AND_CHECK_HARDWARE,
        say!(
            en: "Power-cycle the machine; check power supply headroom, temperatures (`nvidia-smi -q -d TEMPERATURE,POWER`) and the PCIe slot or riser; if it recurs on the same GPU, have it serviced.",
            zh: "给机器断电重启；检查电源余量、温度（`nvidia-smi -q -d TEMPERATURE,POWER`）以及 PCIe 插槽或转接卡；同一块 GPU 反复出现就送修。"
        ),
    )
}

/// Names nvidia-smi: NVIDIA's tool.
const REBOOT_AND_CHECK_HARDWARE: FixSpec = FixSpec::new(
    "reboot-node-check-hardware",
    "Reboot the node and check the hardware",
    "重启节点并检查硬件",
)
.vendors(&[Vendor::Nvidia])
.sources(&["NVIDIA Xid catalog: Xid 79 (GPU has fallen off the bus)"]);

/// Xid and NVRM lines are the NVIDIA kernel driver's.
const DRIVER_XID_LINE: FixSpec = FixSpec::new(
    "find-driver-xid-line",
    "Look for the driver's Xid line",
    "找驱动的 Xid 记录",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look)
.sources(&["NVIDIA Xid catalog"]);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[REBOOT_AND_CHECK_HARDWARE, DRIVER_XID_LINE];
