//! NVIDIA kernel-driver Xid events.

use super::catalogue::{Cost, FixSpec};
use super::common::{fact, fix, verdict};
use super::docs::Code;
use super::setting::Vendor;
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
            out.push(recovery_fix(action));
        } else if let Some(info) = xid_info(code) {
            match system_process(f) {
                Some(process) if !info.hardware => {
                    out.push(fix(&RESET_GPU, system_fault_action(process)))
                }
                _ => {
                    let spec = xid_fix(info.fix).unwrap_or(&FOLLOW_RECOVERY_ACTION);
                    out.push(fix(spec, info.action.said()))
                }
            }
        }
        out.push(fix(
            &CHECK_GPU_HEALTH,
            say!(
                en: "`nvidia-smi -q -d ECC,ROW_REMAPPER` shows memory errors and pending remaps; `dcgmi diag -r 2` runs NVIDIA's diagnostics (a few minutes).",
                zh: "`nvidia-smi -q -d ECC,ROW_REMAPPER` 显示显存错误和待处理的行重映射；`dcgmi diag -r 2` 运行 NVIDIA 的诊断（需要几分钟）。"
            ),
        ));
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
fn system_fault_action(process: &str) -> Said {
    say!(
        en: "The fault belongs to {process}, part of the driver's own tooling, not to an application: restarting or debugging a program will not help. Stop the work on this GPU and reset it (`sudo nvidia-smi -r -i <gpu>`) or reboot the node, update the driver, and run NVIDIA's diagnostics (`dcgmi diag -r 2`) if it recurs.",
        zh: "出错的是 {process}，属于驱动自身的工具，不是某个应用：重启或调试程序都没有用。停掉这块 GPU 上的工作，然后重置它（`sudo nvidia-smi -r -i <gpu>`）或重启节点，更新驱动；如果反复出现，运行 NVIDIA 的诊断（`dcgmi diag -r 2`）。",
        process = process
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
fn recovery_fix(action: &str) -> Fix {
    let lower = action.to_ascii_lowercase();
    let how = if lower.contains("reboot") {
        say!(
            en: "The driver states the recovery action \"{action}\": this GPU cannot be used again until the machine reboots. Drain the node of jobs and reboot it; if it recurs, run NVIDIA's diagnostics (`dcgmi diag -r 2`) and check the GPU's health.",
            zh: "驱动写明了恢复操作 \"{action}\"：重启机器之前这块 GPU 都不能再用。先把节点上的任务撤走，再重启；如果反复出现，运行 NVIDIA 的诊断（`dcgmi diag -r 2`）并检查 GPU 的健康状况。",
            action = action
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
                Some(process) if !info.hardware => system_fault_action(process),
                _ => info.action.said(),
            }
        ),
    };
    out.push(verdict(
        Code::XidError,
        say_parts!(
            en: "Xid {code}: {title}",
            zh: "Xid {code}：{title}",
            code = Said::same(code),
            title = info.title.said()
        ),
        info.meaning.said().then(process).then(what),
    ));
    if info.hardware {
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
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;

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
