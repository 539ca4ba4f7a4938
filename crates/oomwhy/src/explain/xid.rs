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
        match xid_info(code) {
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
            out.push(fix(&FOLLOW_NVIDIA_XID_ACTION, info.action.said()));
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

/// What NVIDIA's Xid documentation says about the codes ML jobs meet.
pub(super) struct XidInfo {
    pub title: Text,
    pub meaning: Text,
    pub action: Text,
    /// The GPU or its connection, not the program.
    pub hardware: bool,
}

pub(super) fn xid_info(code: &str) -> Option<XidInfo> {
    let text = |en, zh| Text { en, zh };
    let info = |title, meaning, action, hardware| XidInfo {
        title,
        meaning,
        action,
        hardware,
    };
    Some(match code {
        "13" => info(
            text("Graphics engine exception", "图形引擎异常"),
            text("The GPU's compute engine raised an exception while running a kernel. NVIDIA lists application errors (such as an out-of-range access in a kernel) as well as driver and hardware faults as causes; its catalog's immediate action is to restart the application.", "GPU 的计算引擎在运行 kernel 时抛出了异常。NVIDIA 列出的原因既有应用自身的错误（如 kernel 里的越界访问），也有驱动和硬件故障；它的目录给出的第一步处理是重启应用。"),
            text("Restart the application. If it recurs in the same program, debug it like an illegal memory access (CUDA_LAUNCH_BLOCKING=1, compute-sanitizer); if it recurs across programs, run DCGM diagnostics (dcgmi diag -r 2).", "重启应用。如果同一个程序里反复出现，就按非法内存访问来排查（CUDA_LAUNCH_BLOCKING=1、compute-sanitizer）；如果不同程序都出现，运行 DCGM 诊断（dcgmi diag -r 2）。"),
            false,
        ),
        "31" => info(
            text("GPU memory page fault", "GPU 显存页错误"),
            text("A kernel accessed a GPU virtual address that is not mapped (an MMU fault): usually an application bug (an illegal memory access) or a driver bug, rarely hardware.", "某个 kernel 访问了一个没有映射的 GPU 虚拟地址（MMU 错误）：通常是应用的 bug（非法内存访问）或驱动的 bug，很少是硬件问题。"),
            text("Restart the application and debug it like an illegal memory access (compute-sanitizer --tool memcheck).", "重启应用，并按非法内存访问来排查（compute-sanitizer --tool memcheck）。"),
            false,
        ),
        "43" => info(
            text("GPU stopped processing", "GPU 停止处理"),
            text("The driver stopped the faulting application's work on the GPU after an error in that application (NVIDIA lists user-application and driver errors as causes). The GPU normally stays usable for other work.", "应用出错后，驱动停止了这个出错应用在 GPU 上的工作（NVIDIA 列出的原因是用户应用错误和驱动错误）。这块 GPU 通常还能继续用于其他工作。"),
            text("Restart the application; look for the application's own CUDA error in its log.", "重启应用；在应用自己的日志里找它的 CUDA 错误。"),
            false,
        ),
        "45" => info(
            text("Preemptive cleanup, due to previous errors", "之前出错后的抢占式清理"),
            text("The driver cleaned up an application's GPU work because of an earlier error, or because the process was killed while work was pending. It is a follow-up, not a cause.", "因为更早的一个错误，或者因为进程在还有工作未完成时被杀掉，驱动清理了这个应用在 GPU 上的工作。它是后续事件，不是原因。"),
            text("Look at the Xid or application error just before it.", "看它之前紧挨着的那个 Xid 或应用错误。"),
            false,
        ),
        "48" => info(
            text("Double-bit ECC error", "双比特 ECC 错误"),
            text("An uncorrectable (double-bit) ECC error in GPU memory: a hardware memory error. Applications using that memory are affected.", "显存里出现了无法纠正的（双比特）ECC 错误：这是硬件的显存错误。用到这块显存的应用都会受影响。"),
            text("Reset the GPU (nvidia-smi -r) or reboot so the bad memory is retired or remapped; if it recurs, have the GPU serviced.", "重置 GPU（nvidia-smi -r）或重启，让坏掉的显存被退役或重映射；如果反复出现，就把 GPU 送修。"),
            true,
        ),
        "63" => info(
            text("ECC page retirement or row-remapping event", "ECC 页退役或行重映射事件"),
            text("After ECC errors the driver recorded a memory page to retire (older GPUs) or a row to remap (A100 and newer); it takes effect after the GPU is reset.", "出现 ECC 错误后，驱动记录了一个要退役的显存页（较老的 GPU）或一行要重映射的显存（A100 及更新的 GPU）；GPU 重置后才生效。"),
            text("Reset the GPU or reboot at a convenient time; check `nvidia-smi -q -d ROW_REMAPPER` (or PAGE_RETIREMENT on older GPUs).", "在方便的时候重置 GPU 或重启；检查 `nvidia-smi -q -d ROW_REMAPPER`（较老的 GPU 看 PAGE_RETIREMENT）。"),
            true,
        ),
        "64" => info(
            text("ECC page retirement or row-remapping failure", "ECC 页退役或行重映射失败"),
            text("The driver failed to record a page retirement or row remapping after ECC errors.", "出现 ECC 错误后，驱动没能记录页退役或行重映射。"),
            text("Reset the GPU; if it recurs, the GPU needs service (RMA).", "重置 GPU；如果反复出现，GPU 需要送修（RMA）。"),
            true,
        ),
        "74" => info(
            text("NVLink error", "NVLink 错误"),
            text("An error on an NVLink connection between GPUs (or between a GPU and an NVSwitch).", "GPU 之间（或 GPU 与 NVSwitch 之间）的 NVLink 连接出错。"),
            text("Check `nvidia-smi nvlink -e`; reset the GPUs or the node; recurring errors need hardware service.", "检查 `nvidia-smi nvlink -e`；重置这些 GPU 或整个节点；反复出错就需要硬件维修。"),
            true,
        ),
        "79" => info(
            text("GPU has fallen off the bus", "GPU 从总线上掉线"),
            text("The driver lost contact with the GPU over PCIe; the GPU is unusable until the node is rebooted. The causes are in the hardware or platform: power delivery, overheating, a PCIe slot or riser fault.", "驱动通过 PCIe 联系不上这块 GPU 了；重启节点之前它都不能用。原因在硬件或平台：供电、过热、PCIe 插槽或转接卡故障。"),
            text("Reboot (power-cycle) the node; check power and temperatures; if it recurs on the same GPU, have it serviced.", "重启节点（断电重启）；检查供电和温度；同一块 GPU 反复出现就送修。"),
            true,
        ),
        "92" => info(
            text("High single-bit ECC error rate", "单比特 ECC 错误率过高"),
            text("Correctable (single-bit) ECC errors occur at a high rate. Data is still corrected; the rate is an early warning of failing memory.", "可纠正的（单比特）ECC 错误出现得很频繁。数据仍会被纠正；这个错误率是显存快要坏掉的早期预警。"),
            text("Watch `nvidia-smi -q -d ECC`; plan maintenance if the rate keeps rising.", "留意 `nvidia-smi -q -d ECC`；如果错误率持续上升，就安排维护。"),
            true,
        ),
        "94" => info(
            text("Contained ECC error", "已隔离的 ECC 错误"),
            text("An uncorrectable ECC error that the GPU contained: only the application(s) using the affected memory are hit and must restart; other applications keep running.", "一个无法纠正、但被 GPU 隔离住的 ECC 错误：只有用到受影响显存的应用会受影响，必须重启；其他应用照常运行。"),
            text("Restart the affected application; reset the GPU at a convenient time so the row remapping takes effect.", "重启受影响的应用；在方便的时候重置 GPU，让行重映射生效。"),
            true,
        ),
        "95" => info(
            text("Uncontained ECC error", "未隔离的 ECC 错误"),
            text("An uncorrectable ECC error that could not be contained: every application on this GPU is affected.", "一个无法纠正、也没能隔离的 ECC 错误：这块 GPU 上的所有应用都受影响。"),
            text("Stop the work on this GPU and reset it (nvidia-smi -r) or reboot; recurring errors need hardware service.", "停掉这块 GPU 上的工作，然后重置它（nvidia-smi -r）或重启；反复出错就需要硬件维修。"),
            true,
        ),
        "119" => info(
            text("GSP RPC timeout", "GSP RPC 超时"),
            text("The GPU System Processor (GSP, firmware that runs part of the driver on the GPU) did not answer the driver in time.", "GPU 系统处理器（GSP，在 GPU 上运行部分驱动功能的固件）没有及时回应驱动。"),
            text("Reset the GPU or reboot the node and update the driver; contact your provider or NVIDIA support if it recurs.", "重置 GPU 或重启节点，并更新驱动；如果反复出现，联系你的云服务商或 NVIDIA 支持。"),
            true,
        ),
        _ => return None,
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
    let Some(info) = xid_info(code) else {
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
            action = info.action.said()
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

const FOLLOW_NVIDIA_XID_ACTION: FixSpec = FixSpec::new(
    "follow-nvidia-xid-action",
    "Do what NVIDIA recommends for this Xid",
    "按 NVIDIA 对这个 Xid 的建议处理",
)
.vendors(&[Vendor::Nvidia])
.sources(&["NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"]);

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
    FOLLOW_NVIDIA_XID_ACTION,
    FOLLOW_RECOVERY_ACTION,
    CHECK_GPU_HEALTH,
    KEEP_KERNEL_LOG,
];
