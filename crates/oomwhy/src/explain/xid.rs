//! NVIDIA kernel-driver Xid events.

use super::common::{fact, fix_en, verdict_en};
use super::docs::Code;
use super::Explain;
use crate::record::{fact, Diagnosis, Finding, Fix, Verdict};

/// Explains `Kind::Xid` findings.
pub(super) struct Xid;

impl Explain for Xid {
    fn headline_en(&self, f: &Finding) -> String {
        let code = fact(f, fact::XID).unwrap_or("?");
        match xid_info(code) {
            Some(info) => format!("NVIDIA driver Xid {code}: {}", info.title),
            None => format!("NVIDIA driver Xid {code} event"),
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
                Some(info) => out.push(fix_en(
                    "Act on the Xid that caused it",
                    format!("Xid {earlier} ({}) came first: {}", info.title, info.action),
                )),
                None => out.push(fix_en(
                    "Look up the Xid that caused it",
                    format!("Xid {earlier} came first: look it up in NVIDIA's Xid catalog (https://docs.nvidia.com/deploy/xid-errors/) and find its line in the kernel log (dmesg -T | grep -i xid)."),
                )),
            }
        } else if let Some(info) = xid_info(code) {
            out.push(fix_en(
                "Do what NVIDIA recommends for this Xid",
                info.action,
            ));
        }
        out.push(fix_en(
                "Check the GPU's health",
                "`nvidia-smi -q -d ECC,ROW_REMAPPER` shows memory errors and pending remaps; `dcgmi diag -r 2` runs NVIDIA's diagnostics (a few minutes).",
            ));
        out.push(fix_en(
                "Keep the kernel log with the job log",
                "`sudo dmesg -T | grep -i xid` (or journalctl -k) around the crash time: the Xid code tells hardware faults from program faults.",
            ));
    }
}

/// What NVIDIA's Xid documentation says about the codes ML jobs meet.
pub(super) struct XidInfo {
    pub title: &'static str,
    pub meaning: &'static str,
    pub action: &'static str,
    /// The GPU or its connection, not the program.
    pub hardware: bool,
}

pub(super) fn xid_info(code: &str) -> Option<XidInfo> {
    let info = |title, meaning, action, hardware| XidInfo {
        title,
        meaning,
        action,
        hardware,
    };
    Some(match code {
        "13" => info("Graphics engine exception", "The GPU's compute engine raised an exception while running a kernel. NVIDIA lists application errors (such as an out-of-range access in a kernel) as well as driver and hardware faults as causes; its catalog's immediate action is to restart the application.", "Restart the application. If it recurs in the same program, debug it like an illegal memory access (CUDA_LAUNCH_BLOCKING=1, compute-sanitizer); if it recurs across programs, run DCGM diagnostics (dcgmi diag -r 2).", false),
        "31" => info("GPU memory page fault", "A kernel accessed a GPU virtual address that is not mapped (an MMU fault): usually an application bug (an illegal memory access) or a driver bug, rarely hardware.", "Restart the application and debug it like an illegal memory access (compute-sanitizer --tool memcheck).", false),
        "43" => info("GPU stopped processing", "The driver stopped the faulting application's work on the GPU after an error in that application (NVIDIA lists user-application and driver errors as causes). The GPU normally stays usable for other work.", "Restart the application; look for the application's own CUDA error in its log.", false),
        "45" => info("Preemptive cleanup, due to previous errors", "The driver cleaned up an application's GPU work because of an earlier error, or because the process was killed while work was pending. It is a follow-up, not a cause.", "Look at the Xid or application error just before it.", false),
        "48" => info("Double-bit ECC error", "An uncorrectable (double-bit) ECC error in GPU memory: a hardware memory error. Applications using that memory are affected.", "Reset the GPU (nvidia-smi -r) or reboot so the bad memory is retired or remapped; if it recurs, have the GPU serviced.", true),
        "63" => info("ECC page retirement or row-remapping event", "After ECC errors the driver recorded a memory page to retire (older GPUs) or a row to remap (A100 and newer); it takes effect after the GPU is reset.", "Reset the GPU or reboot at a convenient time; check `nvidia-smi -q -d ROW_REMAPPER` (or PAGE_RETIREMENT on older GPUs).", true),
        "64" => info("ECC page retirement or row-remapping failure", "The driver failed to record a page retirement or row remapping after ECC errors.", "Reset the GPU; if it recurs, the GPU needs service (RMA).", true),
        "74" => info("NVLink error", "An error on an NVLink connection between GPUs (or between a GPU and an NVSwitch).", "Check `nvidia-smi nvlink -e`; reset the GPUs or the node; recurring errors need hardware service.", true),
        "79" => info("GPU has fallen off the bus", "The driver lost contact with the GPU over PCIe; the GPU is unusable until the node is rebooted. The causes are in the hardware or platform: power delivery, overheating, a PCIe slot or riser fault.", "Reboot (power-cycle) the node; check power and temperatures; if it recurs on the same GPU, have it serviced.", true),
        "92" => info("High single-bit ECC error rate", "Correctable (single-bit) ECC errors occur at a high rate. Data is still corrected; the rate is an early warning of failing memory.", "Watch `nvidia-smi -q -d ECC`; plan maintenance if the rate keeps rising.", true),
        "94" => info("Contained ECC error", "An uncorrectable ECC error that the GPU contained: only the application(s) using the affected memory are hit and must restart; other applications keep running.", "Restart the affected application; reset the GPU at a convenient time so the row remapping takes effect.", true),
        "95" => info("Uncontained ECC error", "An uncorrectable ECC error that could not be contained: every application on this GPU is affected.", "Stop the work on this GPU and reset it (nvidia-smi -r) or reboot; recurring errors need hardware service.", true),
        "119" => info("GSP RPC timeout", "The GPU System Processor (GSP, firmware that runs part of the driver on the GPU) did not answer the driver in time.", "Reset the GPU or reboot the node and update the driver; contact your provider or NVIDIA support if it recurs.", true),
        _ => return None,
    })
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

fn xid_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let code = fact(f, fact::XID).unwrap_or("?");
    let process = match (fact(f, fact::PROCESS), fact(f, fact::PID)) {
        (Some(name), Some(pid)) => format!(" The driver names process {name} (PID {pid})."),
        (None, Some(pid)) => format!(" The driver names PID {pid}."),
        _ => String::new(),
    };
    let Some(info) = xid_info(code) else {
        out.push(verdict_en(
            Code::XidError,
            &format!("NVIDIA driver Xid {code}"),
            format!("The NVIDIA kernel driver logged Xid {code}.{process} oomwhy does not describe this code; look it up in NVIDIA's Xid catalog (https://docs.nvidia.com/deploy/xid-errors/) before acting on it."),
        ));
        return;
    };
    let what = match caused_by(f) {
        Some(earlier) => match xid_info(earlier) {
            Some(earlier_info) => format!(" The driver names the error it followed: Xid {earlier}, {}.", earlier_info.title.to_lowercase()),
            None => format!(" The driver names the error it followed: Xid {earlier}, which oomwhy does not describe; NVIDIA's Xid catalog (https://docs.nvidia.com/deploy/xid-errors/) does."),
        },
        None => format!(" What to do: {}", info.action),
    };
    out.push(verdict_en(
        Code::XidError,
        &format!("Xid {code}: {}", info.title),
        format!("{}{process}{what}", info.meaning),
    ));
    if info.hardware {
        out.push(verdict_en(
            Code::HardwareFault,
            "The GPU or its connection failed, not your program",
            format!("Xid {code} comes from the GPU hardware, its memory, its links or its firmware. The training code did not cause it, and a smaller batch or different memory settings will not help. Move the job to another GPU or node while this one is checked."),
        ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
