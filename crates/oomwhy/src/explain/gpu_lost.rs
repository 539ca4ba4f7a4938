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

/// The kernel's PCIe error report (AER) of a fatal error on a link, not a
/// GPU driver's: the device behind the port is not named there.
fn pcie_fatal(f: &Finding) -> bool {
    fact(f, "reported_by") == Some(crate::i18n::reporter::LINUX_PCIE_AER.en)
}

impl Explain for GpuFallenOffBus {
    fn headline(&self, f: &Finding) -> Said {
        if pcie_fatal(f) {
            let panic = if fact(f, "kernel_panic").is_some() {
                say!(en: "; the kernel panicked", zh: "；内核随之 panic")
            } else {
                Said::default()
            };
            let port = fact(f, "pci").unwrap_or("?");
            return crate::say_parts!(
                en: "A fatal PCIe error on port {port}: the device behind it (usually the GPU in that slot) dropped off the bus{panic}",
                zh: "PCIe 端口 {port} 出现致命错误：它后面的设备（通常就是插在那个插槽里的 GPU）掉线了{panic}",
                port = Said::same(port),
                panic = panic
            );
        }
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
        if pcie_fatal(f) {
            let what = match fact(f, "pcie_error") {
                Some(e) if e.starts_with("Surprise Down") => say!(
                    en: " A Surprise Down error means the link to the device went down without warning: the device stopped answering.",
                    zh: "Surprise Down 错误表示到这个设备的链路毫无预兆地断了：设备不再响应。"
                ),
                Some(e) => {
                    say!(en: " The error the port logged: {e}.", zh: "端口记录的错误：{e}。", e = e)
                }
                None => Said::default(),
            };
            let panic = if fact(f, "kernel_panic").is_some() {
                say!(
                    en: " The kernel then panicked on the fatal error, which took the whole machine down: any other error in the same log (an out-of-memory kill) is a separate event.",
                    zh: "随后内核因为这个致命错误 panic，整台机器都停了：同一份日志里的其他错误（比如内存不足被杀）是另一件事。"
                )
            } else {
                Said::default()
            };
            out.push(verdict(
                Code::HardwareFault,
                say!(
                    en: "A PCIe device or its link failed, not your program",
                    zh: "是 PCIe 设备或它的链路出了故障，不是你的程序"
                ),
                crate::say_parts!(
                    en: "The kernel's PCIe error reporting (AER) logged an uncorrected, fatal error on port {port}.{what} On a GPU machine the device in that slot is usually the GPU, which then has fallen off the bus. The usual causes are power delivery (the power supply, the card's power cables), overheating and the slot or riser; a smaller batch or other memory settings will not help.{panic}",
                    zh: "内核的 PCIe 错误报告（AER）在端口 {port} 上记录了一个不可纠正的致命错误。{what}在 GPU 机器上，插在这个插槽里的通常就是 GPU，它因此掉卡了。常见原因是供电（电源、显卡供电线）、过热，以及插槽或转接卡；减小 batch 或改其他显存设置都没有用。{panic}",
                    port = Said::same(fact(f, "pci").unwrap_or("?")),
                    what = what,
                    panic = panic
                ),
            ));
            return;
        }
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
        if pcie_fatal(f) {
            out.push(fix(
                &CHECK_PCIE_LINK_HARDWARE,
                say!(
                    en: "Power the machine off and on; reseat the card behind port {port} (with its riser and power cables), check that the power supply has headroom for the card's peak draw, and read the BMC's event log (`ipmitool sel list`) for power or thermal events at that time. `lspci -tv` shows which device sits behind the port; if the error comes back with the same card, have it serviced.",
                    zh: "给机器断电重启；把端口 {port} 后面的卡（连同转接卡和供电线）重新插好，确认电源余量够这张卡的峰值功耗，再看 BMC 的事件日志（`ipmitool sel list`）里那个时刻有没有供电或温度事件。`lspci -tv` 能看出这个端口后面接的是哪个设备；同一张卡反复出错就送修。",
                    port = fact(f, "pci").unwrap_or("?")
                ),
            ));
            return;
        }
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

/// Any vendor's card: the kernel's report names only the port.
const CHECK_PCIE_LINK_HARDWARE: FixSpec = FixSpec::new(
    "check-pcie-link-hardware",
    "Check the card, its slot and its power",
    "检查这张卡、它的插槽和供电",
)
.sources(&["Linux kernel documentation: PCI Express Advanced Error Reporting (AER)"]);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    REBOOT_AND_CHECK_HARDWARE,
    DRIVER_XID_LINE,
    CHECK_PCIE_LINK_HARDWARE,
];
