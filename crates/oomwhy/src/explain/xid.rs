//! NVIDIA kernel-driver Xid events.

use super::catalogue::{Cost, FixSpec};
use super::common::{fact, fix, verdict};
use super::docs::Code;
use super::platform::recurs_at_random;
use super::setting::Vendor;
use super::thresholds::{COOL_GPU_MAX_C, LOW_POWER_DRAW_MAX_W, NULL_PAGE_END};
use super::Explain;
use crate::i18n::Said;
use crate::record::{fact, Diagnosis, Finding, Fix, Verdict};
use crate::say;
use crate::say_parts;

/// Explains `Kind::Xid` findings.
pub(super) struct Xid;

impl Explain for Xid {
    fn headline(&self, f: &Finding) -> Said {
        let code = fact(f, fact::XID).unwrap_or("?");
        match described(f) {
            Some(info) => say_parts!(
                en: "NVIDIA driver Xid {code}: {title}",
                zh: "NVIDIA 驱动报告 Xid {code}：{title}",
                code = Said::same(code),
                title = info.title.said()
            ),
            None => match recovery_action(f) {
                Some(action) => say!(
                    en: "NVIDIA driver Xid {code}: the GPU's recovery action is now \"{action}\"",
                    zh: "NVIDIA 驱动报告 Xid {code}：这块 GPU 的恢复操作变成了 \"{action}\"",
                    code = code,
                    action = action
                ),
                None => say!(
                    en: "NVIDIA driver Xid {code} event",
                    zh: "NVIDIA 驱动报告了 Xid {code} 事件",
                    code = code
                ),
            },
        }
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        xid_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        let code = fact(f, fact::XID).unwrap_or("");
        if let Some(earlier) = caused_by(f) {
            // The event is a follow-up and names its cause: act on that.
            match xid_info(earlier) {
                Some(info) => out.push(fix(
                    &ACT_ON_CAUSING_XID,
                    say_parts!(
                        en: "Xid {earlier} ({title}) came first: {action}",
                        zh: "先出现的 Xid {earlier}（{title}）才是原因：{action}",
                        earlier = Said::same(earlier),
                        title = info.title.said(),
                        action = info.action.said()
                    ),
                )),
                None => out.push(fix(
                    &LOOK_UP_CAUSING_XID,
                    say!(
                        en: "Xid {earlier} came first: look it up in NVIDIA's Xid catalog (https://docs.nvidia.com/deploy/xid-errors/) and find its line in the kernel log (dmesg -T | grep -i xid).",
                        zh: "先出现的 Xid {earlier} 才是原因：在 NVIDIA 的 Xid 目录（https://docs.nvidia.com/deploy/xid-errors/）里查它，并在内核日志里找到它那一行（dmesg -T | grep -i xid）。",
                        earlier = earlier
                    ),
                )),
            }
        } else if let Some(action) = recovery_action(f) {
            out.push(recovery_fix(action, gpu_class_of(f)));
        } else if code == "79" && gpu_class_of(f) == GpuClass::Desktop {
            out.push(desktop_bus_fix(f));
        } else if let Some(info) = xid_info(code) {
            match system_process(f) {
                Some(process) if !info.hardware => out.push(fix(
                    &RESET_GPU,
                    system_fault_action(process, gpu_class_of(f)),
                )),
                _ => {
                    let spec = xid_fix(info.fix).unwrap_or(&FOLLOW_RECOVERY_ACTION);
                    // A restart only postpones an Xid that comes back at
                    // random: the driver and the hardware come first.
                    if spec.id == RESTART_APPLICATION.id && recurs_at_random(f) {
                        out.push(fix(
                            &CHECK_DRIVER_AND_PCIE,
                            say!(
                                en: "It comes back at random, so a restart only postpones it: update the driver (or try another driver branch), then rule out power (PSU, power limit), heat and the PCIe link (reseat the card, another slot, or force PCIe Gen 3 in the BIOS).",
                                zh: "它会随机复发，重启只能推迟它：更新驱动（或换一个驱动分支），再排除供电（电源、功耗上限）、温度和 PCIe 链路（重新插卡、换插槽，或在 BIOS 里强制 PCIe Gen 3）。"
                            ),
                        ));
                    }
                    out.push(fix(spec, info.action.said()))
                }
            }
        }
        // ECC, row remapping and DCGM are data-centre GPUs' tools.
        if gpu_class_of(f) != GpuClass::Desktop {
            out.push(fix(
                &CHECK_GPU_HEALTH,
                say!(
                    en: "`nvidia-smi -q -d ECC,ROW_REMAPPER` shows memory errors and pending remaps; `dcgmi diag -r 2` runs NVIDIA's diagnostics (a few minutes).",
                    zh: "`nvidia-smi -q -d ECC,ROW_REMAPPER` 显示显存错误和待处理的行重映射；`dcgmi diag -r 2` 运行 NVIDIA 的诊断（需要几分钟）。"
                ),
            ));
        }
        out.push(fix(
            &KEEP_KERNEL_LOG,
            say!(
                en: "`sudo dmesg -T | grep -i xid` (or journalctl -k) around the crash time: the Xid code tells hardware faults from program faults.",
                zh: "在崩溃时间前后运行 `sudo dmesg -T | grep -i xid`（或 journalctl -k）：Xid 代码能区分硬件故障和程序错误。"
            ),
        ));
    }
}

/// A text of the Xid table in both languages.
#[derive(Clone, Copy)]
pub(super) struct Text {
    pub en: &'static str,
    pub zh: &'static str,
}

/// What NVIDIA's Xid documentation says about a code.
pub(super) struct XidInfo {
    pub title: Text,
    pub meaning: Text,
    pub action: Text,
    /// The GPU or its connection, not the program.
    pub hardware: bool,
    /// The fix that carries out `action`, by id.
    pub fix: &'static str,
}

/// What NVIDIA's Xid catalog says about a code (`codes/xid.tsv`).
pub(super) fn xid_info(code: &str) -> Option<XidInfo> {
    let entry = crate::codes::xid::get(code)?;
    let text = |both: crate::codes::advice::Both| Text {
        en: both.en,
        zh: both.zh,
    };
    Some(XidInfo {
        title: text(entry.title),
        meaning: text(entry.meaning),
        action: text(entry.action),
        hardware: entry.hardware,
        fix: entry.fix,
    })
}

impl Text {
    /// The text in both languages, for `say_parts!`.
    fn said(self) -> Said {
        Said {
            en: self.en.to_string(),
            zh: self.zh.to_string(),
        }
    }
}

/// The table's entry for the finding's Xid, unless the line states the
/// GPU's recovery action (Xid 154): the stated action says more.
fn described(f: &Finding) -> Option<XidInfo> {
    if recovery_action(f).is_some() {
        return None;
    }
    xid_info(fact(f, fact::XID)?)
}

/// Processes of the driver's own tooling: a fault the driver attributes to
/// one of them (`name=modprobe` while the module loads) came from the
/// driver or the system, not from an application to restart and debug.
const SYSTEM_PROCESSES: &[&str] = &[
    "modprobe",
    "nvidia-modprobe",
    "insmod",
    "rmmod",
    "nvidia-smi",
    "nvidia-persistenced",
    "nv-fabricmanager",
    "nvidia-fabricmanager",
];

/// The process the line names, when it is one of [`SYSTEM_PROCESSES`].
fn system_process(f: &Finding) -> Option<&str> {
    fact(f, fact::PROCESS).filter(|name| SYSTEM_PROCESSES.contains(name))
}

/// What to do about a fault in the driver's own tooling.
fn system_fault_action(process: &str, class: GpuClass) -> Said {
    say_parts!(
        en: "The fault belongs to {process}, part of the driver's own tooling, not to an application: restarting or debugging a program will not help. Stop the work on this GPU and reset it (`sudo nvidia-smi -r -i <gpu>`) or reboot the node, update the driver, and run {diagnostics} if it recurs.",
        zh: "出错的是 {process}，属于驱动自身的工具，不是某个应用：重启或调试程序都没有用。停掉这块 GPU 上的工作，然后重置它（`sudo nvidia-smi -r -i <gpu>`）或重启节点，更新驱动；如果反复出现，运行 {diagnostics}。",
        process = Said::same(process),
        diagnostics = diagnostics(class)
    )
}

/// The earlier Xid a follow-up event names (`... caused by previous Xid 149`).
pub(crate) fn caused_by(f: &Finding) -> Option<&str> {
    let message = fact(f, "driver_message")?;
    let rest =
        &message[message.find("caused by previous Xid ")? + "caused by previous Xid ".len()..];
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    (digits > 0).then(|| &rest[..digits])
}

/// The recovery action a line states (Xid 154: `GPU recovery action
/// changed from 0x0 (None) to 0x2 (OS Reboot)`): what the driver says the
/// GPU needs before it can be used again.
pub(crate) fn recovery_action(f: &Finding) -> Option<&str> {
    let message = fact(f, "driver_message")?;
    let rest = &message[message.find("recovery action changed from ")?..];
    let to = &rest[rest.find(" to ")? + " to ".len()..];
    let action = &to[to.find('(')? + 1..];
    let action = action[..action.find(')')?].trim();
    (!action.is_empty() && action != "None").then_some(action)
}

/// The fix for the action the driver states: a reboot, a GPU reset, or
/// the action's own words.
fn recovery_fix(action: &str, class: GpuClass) -> Fix {
    let lower = action.to_ascii_lowercase();
    let how = if lower.contains("reboot") {
        say_parts!(
            en: "The driver states the recovery action \"{action}\": this GPU cannot be used again until the machine reboots. Drain the node of jobs and reboot it; if it recurs, run {diagnostics} and check the GPU's health.",
            zh: "驱动写明了恢复操作 \"{action}\"：重启机器之前这块 GPU 都不能再用。先把节点上的任务撤走，再重启；如果反复出现，运行 {diagnostics}并检查 GPU 的健康状况。",
            action = Said::same(action),
            diagnostics = diagnostics(class)
        )
    } else if lower.contains("reset") {
        say!(
            en: "The driver states the recovery action \"{action}\": stop the processes on this GPU and reset it (`sudo nvidia-smi -r -i <gpu>`), or reboot the node.",
            zh: "驱动写明了恢复操作 \"{action}\"：停掉这块 GPU 上的进程，然后重置它（`sudo nvidia-smi -r -i <gpu>`），或者重启节点。",
            action = action
        )
    } else {
        say!(
            en: "The driver states the recovery action \"{action}\": carry it out before using this GPU again; NVIDIA's Xid catalog (https://docs.nvidia.com/deploy/xid-errors/) describes each action.",
            zh: "驱动写明了恢复操作 \"{action}\"：再用这块 GPU 之前先照做；NVIDIA 的 Xid 目录（https://docs.nvidia.com/deploy/xid-errors/）介绍了每种操作。",
            action = action
        )
    };
    fix(&FOLLOW_RECOVERY_ACTION, how)
}

fn xid_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let code = fact(f, fact::XID).unwrap_or("?");
    let process = match (fact(f, fact::PROCESS), fact(f, fact::PID)) {
        (Some(name), Some(pid)) => say!(
            en: "The driver names process {name} (PID {pid}).",
            zh: "驱动指出的进程是 {name}（PID {pid}）。",
            name = name,
            pid = pid
        ),
        (None, Some(pid)) => say!(
            en: "The driver names PID {pid}.",
            zh: "驱动指出的是 PID {pid}。",
            pid = pid
        ),
        _ => Said::default(),
    };
    let Some(info) = described(f) else {
        // A line that states its recovery action says what the GPU needs.
        let unknown = match recovery_action(f) {
            Some(action) => say!(
                en: "The driver states what this GPU needs before it can be used again: the recovery action \"{action}\".",
                zh: "驱动写明了这块 GPU 再次可用之前需要做什么：恢复操作 \"{action}\"。",
                action = action
            ),
            None => say!(
                en: "oomwhy does not describe this code; look it up in NVIDIA's Xid catalog (https://docs.nvidia.com/deploy/xid-errors/) before acting on it.",
                zh: "oomwhy 没有收录这个代码；处理之前先在 NVIDIA 的 Xid 目录（https://docs.nvidia.com/deploy/xid-errors/）里查一查。"
            ),
        };
        let detail = say!(
            en: "The NVIDIA kernel driver logged Xid {code}.",
            zh: "NVIDIA 内核驱动记录了 Xid {code}。",
            code = code
        )
        .then(process)
        .then(unknown);
        let title = match recovery_action(f) {
            Some(action) => say!(
                en: "Xid {code}: the driver asks for \"{action}\"",
                zh: "Xid {code}：驱动要求 \"{action}\"",
                code = code,
                action = action
            ),
            None => say!(
                en: "NVIDIA driver Xid {code}",
                zh: "NVIDIA 驱动报告 Xid {code}",
                code = code
            ),
        };
        out.push(verdict(Code::XidError, title, detail));
        return;
    };
    let what = match caused_by(f) {
        Some(earlier) => match xid_info(earlier) {
            Some(earlier_info) => say_parts!(
                en: "The driver names the error it followed: Xid {earlier}, {title}.",
                zh: "驱动写明了它跟在哪个错误之后：Xid {earlier}，{title}。",
                earlier = Said::same(earlier),
                title = Said {
                    en: earlier_info.title.en.to_lowercase(),
                    zh: earlier_info.title.zh.to_string(),
                }
            ),
            None => say!(
                en: "The driver names the error it followed: Xid {earlier}, which oomwhy does not describe; NVIDIA's Xid catalog (https://docs.nvidia.com/deploy/xid-errors/) does.",
                zh: "驱动写明了它跟在哪个错误之后：Xid {earlier}，oomwhy 没有收录它；NVIDIA 的 Xid 目录（https://docs.nvidia.com/deploy/xid-errors/）里有。",
                earlier = earlier
            ),
        },
        None => say_parts!(
            en: "What to do: {action}",
            zh: "处理办法：{action}",
            action = match system_process(f) {
                Some(process) if !info.hardware => system_fault_action(process, gpu_class_of(f)),
                _ => info.action.said(),
            }
        ),
    };
    let desktop = gpu_class_of(f) == GpuClass::Desktop;
    let null = code == "31" && null_fault(&f.text);
    let title = if null {
        say!(
            en: "Xid {code}: a kernel read or wrote through a null pointer",
            zh: "Xid {code}：某个 kernel 通过空指针读写了显存",
            code = code
        )
    } else {
        say_parts!(
            en: "Xid {code}: {title}",
            zh: "Xid {code}：{title}",
            code = Said::same(code),
            title = info.title.said()
        )
    };
    let detail = if code == "79" && desktop && caused_by(f).is_none() {
        desktop_bus_meaning(f).then(process)
    } else if null {
        say!(
            en: "The GPU's memory management unit stopped a kernel at address 0 (or just above it): the kernel dereferenced a null pointer, a buffer that was never allocated, whose allocation failed unchecked, or that was never passed to it. It is a bug in the program or a library it loads, not a hardware fault.",
            zh: "GPU 的内存管理单元在地址 0（或紧挨着它的地址）上拦下了一个 kernel：这个 kernel 解引用了空指针——某个缓冲区从没分配过、分配失败了却没检查，或者根本没传给它。这是程序或它加载的某个库的 bug，不是硬件故障。"
        )
        .then(process)
        .then(what)
    } else {
        info.meaning.said().then(process).then(what)
    };
    out.push(verdict(Code::XidError, title, detail));
    if info.hardware && desktop {
        out.push(verdict(
            Code::HardwareFault,
            say!(
                en: "The GPU or its connection failed, not your program",
                zh: "是 GPU 或它的连接坏了，不是你的程序"
            ),
            say!(
                en: "Xid {code} comes from the GPU, its PCIe link, its power or its driver, not from the program that was running on it (a game or a training job alike): a smaller batch or different memory settings will not help.",
                zh: "Xid {code} 来自 GPU、它的 PCIe 链路、供电或驱动，而不是当时在它上面运行的程序（游戏和训练任务都一样）：减小 batch 或改显存设置都没有用。",
                code = code
            ),
        ));
    } else if info.hardware {
        out.push(verdict(
            Code::HardwareFault,
            say!(
                en: "The GPU or its connection failed, not your program",
                zh: "是 GPU 或它的连接坏了，不是你的程序"
            ),
            say!(
                en: "Xid {code} comes from the GPU hardware, its memory, its links or its firmware. The training code did not cause it, and a smaller batch or different memory settings will not help. Move the job to another GPU or node while this one is checked.",
                zh: "Xid {code} 来自 GPU 硬件、它的显存、互连链路或固件。不是训练代码引起的，减小 batch 或改显存设置都没有用。检查这块卡期间，把任务挪到别的 GPU 或节点上。",
                code = code
            ),
        ));
    }
}

/// Where the GPU a finding names sits: its advice differs (a desktop or
/// laptop has no node to drain and no DCGM).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GpuClass {
    /// A GeForce or laptop GPU, or a gaming context.
    Desktop,
    /// A named data-centre GPU (A100, H100, Tesla, ...).
    DataCentre,
    Unknown,
}

/// Data-centre GPUs and systems, as whole words.
const DATA_CENTRE_GPUS: &[&str] = &[
    "A100", "A800", "A10", "A10G", "A30", "A40", "H100", "H200", "H800", "H20", "GH200", "B100",
    "B200", "GB200", "V100", "P100", "P40", "T4", "L4", "L40", "L40S", "Tesla", "DGX", "HGX",
];

/// Desktop and laptop marks, as whole words.
const DESKTOP_MARKS: &[&str] = &["GeForce", "GTX", "Laptop", "laptop", "gaming", "Gaming"];

/// Whether `word` stands in `text` as a whole word (no letter or digit
/// touches it).
fn has_word(text: &str, word: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(word).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + word.len()).copied();
        !before.is_some_and(|b| b.is_ascii_alphanumeric())
            && !after.is_some_and(|b| b.is_ascii_alphanumeric())
    })
}

/// A GeForce RTX model number (`RTX 3090`, `RTX5070`): 20–50 series, a
/// 0 in the hundreds and a tier of 50–90. Workstation cards (`RTX 5000`,
/// `RTX A6000`) do not match.
fn geforce_rtx(text: &str) -> bool {
    text.match_indices("RTX").any(|(at, _)| {
        let rest = text[at + 3..].trim_start_matches(' ').as_bytes();
        matches!(rest, [a, b'0', c, b'0', ..] if (b'2'..=b'5').contains(a) && (b'5'..=b'9').contains(c))
    })
}

/// The class of the GPU a finding names, in its message, its device's
/// name, or on the lines
/// around it (`Finding::nearby`: "Also experiencing this issue on an RTX
/// 4090!").
pub(super) fn gpu_class_of(f: &Finding) -> GpuClass {
    let device = fact(f, fact::DEVICE_NAME).unwrap_or("");
    if f.nearby.is_empty() && device.is_empty() {
        gpu_class(&f.text)
    } else {
        gpu_class(&format!("{}\n{}\n{}", f.text, device, f.nearby))
    }
}

/// NVIDIA's diagnostics for this GPU: DCGM (`dcgmi`) supports data-centre
/// GPUs only, so a GeForce card is pointed at `nvidia-smi -q`.
fn diagnostics(class: GpuClass) -> Said {
    if class == GpuClass::Desktop {
        say!(
            en: "`nvidia-smi -q` (the card's state: clocks, power, temperature, throttle reasons)",
            zh: "`nvidia-smi -q`（这块卡的状态：频率、功耗、温度、降频原因）"
        )
    } else {
        say!(
            en: "NVIDIA's diagnostics (`dcgmi diag -r 2`)",
            zh: "NVIDIA 的诊断（`dcgmi diag -r 2`）"
        )
    }
}

/// The class of the GPU a text names; a data-centre name wins.
pub(super) fn gpu_class(text: &str) -> GpuClass {
    if DATA_CENTRE_GPUS.iter().any(|w| has_word(text, w)) {
        GpuClass::DataCentre
    } else if DESKTOP_MARKS.iter().any(|w| has_word(text, w)) || geforce_rtx(text) {
        GpuClass::Desktop
    } else {
        GpuClass::Unknown
    }
}

/// The figures written before `unit` in `text` (`60°C`, `41 W`), each
/// whole number standing right before it (a space allowed).
fn stated_figures(text: &str, unit: &str) -> Vec<u64> {
    let bytes = text.as_bytes();
    text.match_indices(unit)
        .filter(|(at, _)| {
            // The unit ends its word (`41 W)`, not `41 Watts` or `WARN`).
            !bytes
                .get(at + unit.len())
                .is_some_and(|b| b.is_ascii_alphanumeric())
        })
        .filter_map(|(at, _)| {
            let head = text[..at].strip_suffix(' ').unwrap_or(&text[..at]);
            let digits = head.len() - head.bytes().rev().take_while(u8::is_ascii_digit).count();
            let before = head.as_bytes().get(digits.wrapping_sub(1)).copied();
            // A figure, not the tail of a decimal or a word (`1.5 W`, `x41W`).
            if digits == head.len() || before.is_some_and(|b| b == b'.' || b.is_ascii_alphabetic())
            {
                return None;
            }
            head[digits..].parse().ok()
        })
        .collect()
}

/// What the paste's own readings rule out: (heat, power draw), with the
/// highest reading of each.
fn ruled_out(text: &str) -> (Option<u64>, Option<u64>) {
    let highest_if_all = |figures: Vec<u64>, max: u64| {
        let top = figures.iter().copied().max()?;
        (top <= max).then_some(top)
    };
    (
        highest_if_all(stated_figures(text, "°C"), COOL_GPU_MAX_C),
        highest_if_all(stated_figures(text, "W"), LOW_POWER_DRAW_MAX_W),
    )
}

/// What a GPU falling off the bus means on a desktop or laptop, leaving
/// out the causes the paste's readings rule out.
pub(super) fn desktop_bus_meaning(f: &Finding) -> Said {
    let head = say!(
        en: "The driver lost contact with the GPU over PCIe; it stays unusable until the computer restarts. On a GeForce or laptop GPU the usual causes are the driver and PCIe power management (the link or the GPU switching power states: ASPM, fast P-state changes)",
        zh: "驱动通过 PCIe 联系不上这块 GPU 了；重启电脑之前它都不能用。在 GeForce 或笔记本 GPU 上，常见原因是驱动和 PCIe 电源管理（链路或 GPU 切换电源状态：ASPM、频繁的 P-state 切换）"
    );
    let tail = match ruled_out(&f.text) {
        (None, None) => say!(
            en: ", then power delivery (the power adapter or power supply) and heat.",
            zh: "，其次是供电（电源适配器或电源）和过热。"
        ),
        (Some(t), None) => say!(
            en: ", then power delivery (the power adapter or power supply); the temperatures in the paste (up to {t} °C) rule out heat.",
            zh: "，其次是供电（电源适配器或电源）；贴出的温度（最高 {t} °C）排除了过热。",
            t = t
        ),
        (None, Some(w)) => say!(
            en: ", then heat; the power draw in the paste (up to {w} W) rules out an overloaded power supply.",
            zh: "，其次是过热；贴出的功耗（最高 {w} W）排除了电源过载。",
            w = w
        ),
        (Some(t), Some(w)) => say!(
            en: ". The readings in the paste (up to {t} °C, {w} W) rule out heat and power draw.",
            zh: "。贴出的读数（最高 {t} °C、{w} W）排除了过热和功耗过大。",
            t = t,
            w = w
        ),
    };
    let mut said = head;
    said.en.push_str(&tail.en);
    said.zh.push_str(&tail.zh);
    said
}

/// The fix for a desktop or laptop GPU that fell off the bus.
pub(super) fn desktop_bus_fix(f: &Finding) -> Fix {
    let head = say!(
        en: "Install the current NVIDIA driver, or go back to the last one that worked; turn off PCIe link power management (Linux: boot with pcie_aspm=off; Windows: Power Options, PCI Express, Link State Power Management: Off); to test, stop the GPU from switching power states by locking its clocks (`nvidia-smi -lgc <min>,<max>` as administrator).",
        zh: "装上最新的 NVIDIA 驱动，或者退回到上一个正常的版本；关闭 PCIe 链路电源管理（Linux：启动参数加 pcie_aspm=off；Windows：电源选项 → PCI Express → 链接状态电源管理：关闭）；排查时锁定 GPU 频率（以管理员身份运行 `nvidia-smi -lgc <最低>,<最高>`），让它不再切换电源状态。"
    );
    let tail = match ruled_out(&f.text) {
        (None, None) => say!(
            en: " If it continues, check the power adapter or power supply and the cooling.",
            zh: "如果还会出现，检查电源适配器或电源，以及散热。"
        ),
        (Some(_), None) => say!(
            en: " If it continues, check the power adapter or power supply.",
            zh: "如果还会出现，检查电源适配器或电源。"
        ),
        (None, Some(_)) => say!(
            en: " If it continues, check the cooling.",
            zh: "如果还会出现，检查散热。"
        ),
        (Some(_), Some(_)) => Said::default(),
    };
    let mut said = head;
    said.en.push_str(&tail.en);
    said.zh.push_str(&tail.zh);
    fix(&DESKTOP_DRIVER_AND_LINK_POWER, said)
}

/// Whether an Xid 31 line's MMU fault address (`faulted @ 0x0_00000000`)
/// lies in the null page.
fn null_fault(text: &str) -> bool {
    let Some((_, rest)) = text.split_once("faulted @ 0x") else {
        return false;
    };
    let hex: String = rest
        .chars()
        .take_while(|c| c.is_ascii_hexdigit() || *c == '_')
        .filter(|c| *c != '_')
        .collect();
    u64::from_str_radix(&hex, 16).is_ok_and(|address| address < NULL_PAGE_END)
}

/// The driver, PCIe ASPM and clock locking (nvidia-smi -lgc).
const DESKTOP_DRIVER_AND_LINK_POWER: FixSpec = FixSpec::new(
    "xid-79-driver-and-link-power",
    "Change the driver and turn off PCIe power saving",
    "更换驱动并关闭 PCIe 节能",
)
.vendors(&[Vendor::Nvidia])
.sources(&[
    "NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors): Xid 79",
    "Linux kernel documentation: kernel parameters (pcie_aspm)",
    "nvidia-smi documentation: --lock-gpu-clocks",
]);

/// Every fix below names NVIDIA's tools (nvidia-smi, dcgmi) or its
/// driver's Xid events.
const ACT_ON_CAUSING_XID: FixSpec = FixSpec::new(
    "act-on-causing-xid",
    "Act on the Xid that caused it",
    "处理引起它的那个 Xid",
)
.vendors(&[Vendor::Nvidia])
.sources(&["NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"]);

const LOOK_UP_CAUSING_XID: FixSpec = FixSpec::new(
    "look-up-causing-xid",
    "Look up the Xid that caused it",
    "查一查引起它的那个 Xid",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look)
.sources(&["NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"]);

/// The fixes that carry out NVIDIA's action for an Xid, named by
/// `codes/xid.tsv`: each title says the action itself.
const RESTART_APPLICATION: FixSpec = FixSpec::new(
    "xid-restart-application",
    "Restart the application",
    "重启应用",
)
.vendors(&[Vendor::Nvidia])
.sources(&["NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"]);

const RESET_GPU: FixSpec = FixSpec::new(
    "xid-reset-gpu",
    "Reset the GPU or reboot",
    "重置 GPU 或重启",
)
.vendors(&[Vendor::Nvidia])
.sources(&["NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"]);

const REBOOT_NODE: FixSpec = FixSpec::new(
    "xid-reboot-node",
    "Reboot the node and check its hardware",
    "重启节点并检查硬件",
)
.vendors(&[Vendor::Nvidia])
.sources(&["NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"]);

const CHECK_DRIVER_AND_PCIE: FixSpec = FixSpec::new(
    "xid-check-driver-and-pcie",
    "Update the driver and check the PCIe link",
    "更新驱动并检查 PCIe 链路",
)
.vendors(&[Vendor::Nvidia])
.sources(&["NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"]);

const CHECK_NVLINK: FixSpec = FixSpec::new(
    "xid-check-nvlink",
    "Check the NVLink links",
    "检查 NVLink 链路",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look)
.sources(&["NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"]);

const WATCH_ECC_RATE: FixSpec = FixSpec::new(
    "xid-watch-ecc-rate",
    "Watch the ECC error rate",
    "留意 ECC 错误率",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look)
.sources(&["NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"]);

const LOOK_AT_EARLIER_ERROR: FixSpec = FixSpec::new(
    "xid-look-at-earlier-error",
    "Look at the error just before it",
    "看它之前紧挨着的那个错误",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look)
.sources(&["NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"]);

/// The fix an Xid's row names, by id.
fn xid_fix(id: &str) -> Option<&'static FixSpec> {
    FIXES.iter().find(|spec| spec.id == id)
}

/// The recovery action an Xid 154 line states.
const FOLLOW_RECOVERY_ACTION: FixSpec = FixSpec::new(
    "follow-xid-recovery-action",
    "Carry out the recovery action the driver states",
    "执行驱动写明的恢复操作",
)
.vendors(&[Vendor::Nvidia])
.sources(&["NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors): Xid 154"]);

const CHECK_GPU_HEALTH: FixSpec = FixSpec::new(
    "check-gpu-health",
    "Check the GPU's health",
    "检查 GPU 的健康状况",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look)
.sources(&[
    "NVIDIA DCGM documentation: dcgmi diag",
    "nvidia-smi documentation: -q -d ECC,ROW_REMAPPER",
]);

const KEEP_KERNEL_LOG: FixSpec = FixSpec::new(
    "keep-kernel-log",
    "Keep the kernel log with the job log",
    "把内核日志和任务日志一起保存",
)
.vendors(&[Vendor::Nvidia])
.cost(Cost::Look);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    ACT_ON_CAUSING_XID,
    LOOK_UP_CAUSING_XID,
    RESTART_APPLICATION,
    RESET_GPU,
    REBOOT_NODE,
    CHECK_DRIVER_AND_PCIE,
    CHECK_NVLINK,
    WATCH_ECC_RATE,
    LOOK_AT_EARLIER_ERROR,
    FOLLOW_RECOVERY_ACTION,
    CHECK_GPU_HEALTH,
    KEEP_KERNEL_LOG,
    DESKTOP_DRIVER_AND_LINK_POWER,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;

    /// An Xid whose catalog action is a restart, in a paste that says it
    /// comes back at random (fixtures/wild/2257.txt: Xid 109 "anywhere from
    /// 20 minutes to 20 hours into training"), gets the driver and the
    /// hardware first; the same kernel-log line alone keeps the restart.
    #[test]
    fn an_xid_that_recurs_at_random_reads_the_driver_and_hardware_first() {
        let first_fix = |paste: &str| {
            xids(paste)
                .first()
                .and_then(|f| f.diagnosis.fixes.first())
                .map(|x| x.id.clone())
                .unwrap_or_default()
        };
        assert_eq!(
            first_fix(include_str!("../../../../fixtures/wild/2257.txt")),
            "xid-check-driver-and-pcie"
        );
        let line = "NVRM: Xid (PCI:0000:01:00): 109, pid=4124, name=python, Ch 00000028, errorString CTX SWITCH TIMEOUT, Info 0x2c014\n";
        assert_eq!(first_fix(line), "xid-restart-application");
        assert_eq!(
            first_fix(&format!("the error always occurs randomly\n{line}")),
            "xid-check-driver-and-pcie"
        );
    }

    fn xids(paste: &str) -> Vec<Finding> {
        crate::decode_str(paste)
            .into_iter()
            .filter(|f| f.kind == Kind::Xid)
            .collect()
    }

    #[test]
    fn xid_32_says_what_it_is_and_what_to_do_first() {
        // fixtures/wild/1558.txt: Xid 32 twice, then Xid 31.
        let found = xids(include_str!("../../../../fixtures/wild/1558.txt"));
        let f = &found[0];
        assert!(f
            .diagnosis
            .headline
            .contains("Invalid or corrupted push buffer stream"));
        let zh = f.diagnosis.headline_zh.clone().unwrap();
        assert!(zh.contains("命令流"), "{zh}");
        let v = &f.diagnosis.verdicts[0];
        assert!(v.detail.contains("PCIe"), "{}", v.detail);
        assert!(!v.detail.contains("does not describe"));
        let fix = &f.diagnosis.fixes[0];
        assert_eq!(fix.id, "xid-check-driver-and-pcie");
        assert_eq!(fix.zh.as_ref().unwrap().title, "更新驱动并检查 PCIe 链路");
    }

    #[test]
    fn a_fault_in_modprobe_is_not_an_application_to_restart() {
        // fixtures/wild/1286.txt: Xid 31 in python3.12, then in modprobe,
        // then Xid 154 "OS Reboot" on three GPUs.
        let found = xids(include_str!("../../../../fixtures/wild/1286.txt"));
        let app = &found[0];
        assert_eq!(app.diagnosis.fixes[0].id, "xid-restart-application");
        let tool = found
            .iter()
            .find(|f| f.facts.get("process").is_some_and(|p| p == "modprobe"))
            .unwrap();
        let first = &tool.diagnosis.fixes[0];
        assert_eq!(first.id, "xid-reset-gpu");
        assert!(!first.how.contains("debug it like"), "{}", first.how);
        assert!(first.zh.as_ref().unwrap().text.contains("modprobe"));
        assert!(!tool.diagnosis.verdicts[0]
            .detail
            .contains("Restart the application"));
        // Xid 154 keeps the recovery action the line states.
        let reboot = found
            .iter()
            .find(|f| f.facts.get("xid").is_some_and(|x| x == "154"))
            .unwrap();
        assert_eq!(reboot.diagnosis.fixes[0].id, "follow-xid-recovery-action");
        assert!(reboot.diagnosis.headline.contains("OS Reboot"));
    }

    /// Xid 31 at address 0 (fixtures/wild/1842.txt) is a null pointer: the
    /// Why says so. An address past the null page (0x0_04687000, the
    /// kernel log in fixtures/xid_kernel_log_mixed.log) keeps the table's
    /// page fault; both sides of the 0x1000 margin.
    #[test]
    fn xid_31_at_address_0_is_a_null_pointer() {
        let null = &xids(include_str!("../../../../fixtures/wild/1842.txt"))[0];
        let v = &null.diagnosis.verdicts[0];
        assert_eq!(
            v.title,
            "Xid 31: a kernel read or wrote through a null pointer"
        );
        assert!(v.detail.contains("null pointer"), "{}", v.detail);
        assert!(v.zh.as_ref().unwrap().title.contains("空指针"));
        let line = |address: &str| {
            format!("NVRM: Xid (PCI:0000:0c:00): 31, pid=11461, Ch 00000053, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_2 faulted @ {address}. Fault is of type FAULT_PDE ACCESS_TYPE_READ")
        };
        assert!(null_fault(&line("0x0_00000fff")));
        assert!(!null_fault(&line("0x0_00001000")));
        assert!(!null_fault(&line("0x0_04687000")));
        assert!(!null_fault(
            "NVRM: Xid (PCI:0000:0c:00): 31, pid=1, MMU Fault"
        ));
        let far = &xids(&line("0x0_04687000"))[0];
        assert_eq!(
            far.diagnosis.verdicts[0].title,
            "Xid 31: GPU memory page fault"
        );
    }

    /// Xid 79 on a laptop GPU while gaming (fixtures/wild/1947.txt, telemetry
    /// at 60 °C and 41 W): the driver and PCIe power management first, no
    /// node, no DCGM, and neither heat nor power, which the readings rule
    /// out. The same line on a data-centre GPU keeps the node's advice.
    #[test]
    fn xid_79_on_a_laptop_gets_a_desktops_advice() {
        let paste = include_str!("../../../../fixtures/wild/1947.txt");
        let f = &xids(paste)[0];
        let fixes: Vec<&str> = f.diagnosis.fixes.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(fixes[0], "xid-79-driver-and-link-power");
        assert!(!fixes.contains(&"check-gpu-health"), "{fixes:?}");
        let said: String = f
            .diagnosis
            .verdicts
            .iter()
            .map(|v| format!("{} {} ", v.title, v.detail))
            .chain(f.diagnosis.fixes.iter().map(|x| x.how.clone()))
            .collect();
        for word in [
            "node",
            "dcgmi",
            "overheating",
            "cooling",
            "power supply and",
        ] {
            assert!(!said.contains(word), "{word}: {said}");
        }
        assert!(said.contains("rule out heat and power draw"), "{said}");
        // A data-centre GPU's Xid 79 (fixtures/xid_79_fallen_off_bus.log),
        // even in a text that also says "gaming".
        let node = "May 18 19:02:39 node7 kernel: NVRM: Xid (PCI:0000:2b:00): 79, pid=1934, name=python3, GPU has fallen off the bus.";
        for text in [
            node.to_string(),
            format!("{node} on our A100 box, not a gaming rig"),
        ] {
            let f = &xids(&text)[0];
            assert_eq!(f.diagnosis.fixes[0].id, "xid-reboot-node", "{text}");
            assert!(f.diagnosis.fixes.iter().any(|x| x.id == "check-gpu-health"));
        }
    }

    /// The GPU classes by name: GeForce RTX model numbers, not workstation
    /// cards; data-centre names win; unknown when nothing is named.
    #[test]
    fn gpu_names_decide_the_class() {
        assert_eq!(gpu_class("My RTX 5070 Laptop GPU"), GpuClass::Desktop);
        assert_eq!(gpu_class("an RTX3090 card"), GpuClass::Desktop);
        assert_eq!(gpu_class("NVIDIA GeForce GTX 1080 Ti"), GpuClass::Desktop);
        assert_eq!(gpu_class("NVIDIA RTX 5000 Ada"), GpuClass::Unknown);
        assert_eq!(gpu_class("NVIDIA RTX A6000"), GpuClass::Unknown);
        assert_eq!(gpu_class("NVIDIA A100-SXM4-80GB"), GpuClass::DataCentre);
        assert_eq!(
            gpu_class("8x H100 and an RTX 4090 laptop"),
            GpuClass::DataCentre
        );
        // Whole words only: `T4` inside a hash is not a Tesla T4.
        assert_eq!(gpu_class("GPU-T4f2 crashed"), GpuClass::Unknown);
        assert_eq!(gpu_class("NVRM: GPU at PCI:0000:a1:00"), GpuClass::Unknown);
    }

    /// The readings rule out heat from 80 °C down and power from 75 W down
    /// (both sides of each margin); a figure that is no reading is skipped.
    #[test]
    fn telemetry_rules_out_only_within_its_margins() {
        assert_eq!(
            ruled_out("dying cool (60°C) and at low power (41 W)"),
            (Some(60), Some(41))
        );
        assert_eq!(ruled_out("at 80°C and 75 W"), (Some(80), Some(75)));
        assert_eq!(ruled_out("at 81°C and 76 W"), (None, None));
        assert_eq!(ruled_out("60°C then 92°C"), (None, None));
        assert_eq!(ruled_out("no readings, WARN 41 Watts"), (None, None));
        assert_eq!(ruled_out("1.5 W, 41W"), (None, Some(41)));
    }

    #[test]
    fn every_xid_row_names_a_fix_of_this_family() {
        for entry in crate::codes::xid::all() {
            assert!(
                xid_fix(entry.fix).is_some(),
                "Xid {}: no fix {}",
                entry.xid,
                entry.fix
            );
        }
    }
}
