//! Allocation failures a GPU driver reports itself, and messages that blame
//! the driver: a kernel driver's own log line (Jetson's nvgpu, NVIDIA's
//! NVRM) is a driver-level failure that no program setting changes, and a
//! plugin that says the driver failed (OpenVINO's GPU plugin) asks for a
//! driver update before anything else. Their causes and fixes are the
//! driver's and the platform's (CMA on Jetson, the Intel GPU's runtime), never
//! a batch size.

use super::catalogue::{Cost, FixSpec};
use super::common::{fact, fix, verdict};
use super::docs::Code;
use crate::i18n::Said;
use crate::record::{fact, Finding, Fix, Verdict};
use crate::{say, say_parts};

/// A GPU kernel driver whose own log line the finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KernelDriver {
    /// Jetson's (Tegra's) integrated-GPU driver.
    Nvgpu,
    /// NVIDIA's discrete-GPU kernel driver (its resource manager).
    Nvrm,
}

/// The kernel driver that reported the finding, by the reporter the
/// grammar named from the line's own prefix (`nvgpu:`, `NVRM:`).
pub(super) fn kernel_driver(f: &Finding) -> Option<KernelDriver> {
    let reporter = fact(f, fact::REPORTED_BY)?;
    if reporter.contains("(nvgpu)") {
        Some(KernelDriver::Nvgpu)
    } else if reporter.contains("(NVRM)") {
        Some(KernelDriver::Nvrm)
    } else {
        None
    }
}

/// Whether the finding comes from a Jetson (Tegra) board, whose memory is
/// the system's and which has no nvidia-smi (tegrastats instead).
pub(super) fn on_jetson(f: &Finding) -> bool {
    if kernel_driver(f) == Some(KernelDriver::Nvgpu) {
        return true;
    }
    let text = f.text.to_ascii_lowercase();
    ["nvgpu", "tegra", "jetson"]
        .iter()
        .any(|w| text.contains(w))
}

/// OpenVINO's GPU plugin, which runs only on Intel GPUs.
fn openvino_gpu(f: &Finding) -> bool {
    fact(f, fact::REPORTED_BY).is_some_and(|r| r.contains("OpenVINO"))
}

/// Whether the message itself says the driver failed or asks for a newer
/// one (OpenVINO's "Due to the driver bug ... Please try to update the
/// driver or reduce memory consumption").
pub(super) fn blames_driver(f: &Finding) -> bool {
    let text = f.text.to_ascii_lowercase();
    [
        "driver bug",
        "update the driver",
        "update your driver",
        "update the gpu driver",
    ]
    .iter()
    .any(|w| text.contains(w))
}

pub(super) fn headline(f: &Finding) -> Option<Said> {
    match kernel_driver(f) {
        Some(KernelDriver::Nvgpu) => Some(say!(
            en: "The Jetson GPU driver (nvgpu) failed an allocation of its own: probably the kernel's contiguous memory area (CMA) ran short",
            zh: "Jetson 的 GPU 驱动（nvgpu）自己的一次分配失败：多半是内核的连续内存区（CMA）不够"
        )),
        Some(KernelDriver::Nvrm) => Some(say!(
            en: "The NVIDIA kernel driver (NVRM) could not allocate memory for itself: the driver ran short, usually of system memory",
            zh: "NVIDIA 内核驱动（NVRM）没能为自己分配到内存：是驱动缺内存，通常是系统内存"
        )),
        None if openvino_gpu(f) => Some(say!(
            en: "OpenVINO's GPU plugin ran out of resources on the Intel GPU (CL_OUT_OF_RESOURCES) and blames the driver: a driver failure or GPU memory running out",
            zh: "OpenVINO 的 GPU 插件在 Intel GPU 上资源不足（CL_OUT_OF_RESOURCES），报错归咎于驱动：可能是驱动出错，也可能是显存不够"
        )),
        None => None,
    }
}

pub(super) fn verdict_of(f: &Finding) -> Option<Verdict> {
    match kernel_driver(f) {
        Some(KernelDriver::Nvgpu) => Some(verdict(
            Code::MaskedOom,
            say!(
                en: "The GPU driver could not get contiguous memory",
                zh: "GPU 驱动拿不到连续内存"
            ),
            say!(
                en: "A Jetson's GPU has no memory of its own: nvgpu allocates from system memory, and what it needs physically contiguous (`PHYSICALLY_ADDRESSED`, such as the compression tags' backing store set up when the GPU powers on) comes from the kernel's contiguous memory area (CMA). When that area is too small or fragmented the kernel logs `cma_alloc ... ret: -12` (ENOMEM) and the driver fails to bring up the GPU; at boot no program is running, so nothing a program does caused it.",
                zh: "Jetson 的 GPU 没有自己的显存：nvgpu 从系统内存里分配，需要物理连续的部分（`PHYSICALLY_ADDRESSED`，比如 GPU 上电时建立的压缩标签 comptags 的后备存储）来自内核的连续内存区（CMA）。这块区域太小或太碎时，内核会记下 `cma_alloc ... ret: -12`（ENOMEM），驱动就启动不了 GPU；开机时还没有程序在运行，所以这不是哪个程序造成的。"
            ),
        )),
        Some(KernelDriver::Nvrm) => Some(verdict(
            Code::MaskedOom,
            say!(
                en: "The kernel driver could not allocate for itself",
                zh: "内核驱动没能为自己分配到内存"
            ),
            say!(
                en: "NVRM, the NVIDIA kernel driver, logged that an allocation of its own failed (`NV_ERR_NO_MEMORY` in its resource manager): system memory the driver needs for its own structures, not a tensor a program asked for. On a machine whose GPU shares system memory (Grace Blackwell GB10, Grace Hopper, Jetson) a program that takes nearly all of it starves the driver; elsewhere the host's RAM ran out. The lines around it in the kernel log say what the driver was doing.",
                zh: "NVRM（NVIDIA 内核驱动）记下了它自己的一次分配失败（资源管理器里的 `NV_ERR_NO_MEMORY`）：缺的是驱动自身结构要用的系统内存，不是某个程序申请的张量。在 GPU 与系统共用内存的机器上（Grace Blackwell GB10、Grace Hopper、Jetson），某个程序占掉几乎全部内存就会饿死驱动；在其他机器上则是主机内存用完了。内核日志里它前后的行会说明驱动当时在做什么。"
            ),
        )),
        None if blames_driver(f) => {
            let reporter = if openvino_gpu(f) {
                say!(en: "OpenVINO's GPU plugin", zh: "OpenVINO 的 GPU 插件")
            } else {
                match fact(f, fact::REPORTED_BY) {
                    Some(reporter) => Said::same(reporter),
                    None => say!(en: "The program", zh: "程序"),
                }
            };
            Some(verdict(
                Code::MaskedOom,
                say!(
                    en: "The message itself blames the GPU driver",
                    zh: "报错本身把问题归到了 GPU 驱动上"
                ),
                say_parts!(
                    en: "{reporter} says the failure came from the driver and asks for a driver update, or for less memory use. CL_OUT_OF_RESOURCES is OpenCL's status for a resource the driver could not provide on the device (often its memory, or another per-device limit); after it, further OpenCL calls can hang, so the process must restart.",
                    zh: "{reporter} 说这次失败出在驱动上，建议更新驱动，或者少用一些内存。CL_OUT_OF_RESOURCES 是 OpenCL 表示驱动在设备上给不出某种资源的状态（常常是显存，或别的按设备的上限）；出现它之后，后续的 OpenCL 调用可能会卡住，所以进程必须重启。",
                    reporter = reporter
                ),
            ))
        }
        None => None,
    }
}

/// The fixes, driver and platform first; false when the finding is not
/// this module's.
pub(super) fn fixes(f: &Finding, out: &mut Vec<Fix>) -> bool {
    match kernel_driver(f) {
        Some(KernelDriver::Nvgpu) => {
            out.push(fix(
                &ENLARGE_CMA,
                say!(
                    en: "Check the contiguous memory area (`grep -i cma /proc/meminfo`; `sudo dmesg | grep -iE 'cma|nvgpu'` shows `cma_alloc ... ret: -12` when it ran short) and enlarge it beyond the failed request: the `cma=<size>M` kernel argument on the APPEND line of /boot/extlinux/extlinux.conf, or the size of the device tree's `linux,cma` reserved-memory node; then reboot. On a Jetson, `tegrastats` shows memory use (there is no nvidia-smi).",
                    zh: "检查连续内存区（`grep -i cma /proc/meminfo`；不够时 `sudo dmesg | grep -iE 'cma|nvgpu'` 会显示 `cma_alloc ... ret: -12`），并把它调到比失败的那次申请更大：在 /boot/extlinux/extlinux.conf 的 APPEND 行加内核参数 `cma=<size>M`，或者改设备树里 `linux,cma` 预留内存节点的大小；然后重启。Jetson 上用 `tegrastats` 看内存占用（没有 nvidia-smi）。"
                ),
            ));
            out.push(fix(
                &READ_DRIVER_LOG,
                say!(
                    en: "Read the kernel log around the line (`sudo dmesg -T | grep -iE 'nvgpu|cma'`): a failure at power-on means the board's memory layout (a custom kernel, device tree or JetPack/L4T release that does not match the board: `cat /etc/nv_tegra_release`); one while a program runs means the system memory the GPU shares was exhausted (`tegrastats`).",
                    zh: "看这一行前后的内核日志（`sudo dmesg -T | grep -iE 'nvgpu|cma'`）：上电时就失败，说明是板子的内存布局问题（自定义的内核、设备树，或与板子不配套的 JetPack/L4T 版本：`cat /etc/nv_tegra_release`）；程序运行中失败，说明 GPU 共用的系统内存用完了（`tegrastats`）。"
                ),
            ));
            true
        }
        Some(KernelDriver::Nvrm) => {
            out.push(fix(
                &READ_DRIVER_LOG,
                say!(
                    en: "Read the kernel log around the line (`sudo dmesg -T | grep -iE 'nvrm|xid|out of memory'`) and check the host's free memory (`free -h`). Leave the driver system memory: on a machine whose GPU shares it, cap what the framework takes (vLLM `--gpu-memory-utilization`, JAX `XLA_PYTHON_CLIENT_MEM_FRACTION`, PyTorch `torch.cuda.set_per_process_memory_fraction`) below the whole; reboot if the driver stays unusable, and update it if this recurs with memory to spare.",
                    zh: "看这一行前后的内核日志（`sudo dmesg -T | grep -iE 'nvrm|xid|out of memory'`），并检查主机的空闲内存（`free -h`）。给驱动留出系统内存：在 GPU 与系统共用内存的机器上，把框架占用的上限调到整体以下（vLLM `--gpu-memory-utilization`、JAX `XLA_PYTHON_CLIENT_MEM_FRACTION`、PyTorch `torch.cuda.set_per_process_memory_fraction`）；驱动一直不可用就重启；内存充足时仍反复出现就更新驱动。"
                ),
            ));
            true
        }
        None if blames_driver(f) => {
            let update = if openvino_gpu(f) {
                say!(
                    en: "Install the current Intel GPU driver, as the message asks: on Linux the compute runtime (Intel's compute-runtime release or the distribution's `intel-opencl-icd`) on a kernel that supports the GPU, on Windows Intel's graphics driver. Then restart the process: after this error OpenCL calls can hang.",
                    zh: "按报错的建议装上最新的 Intel GPU 驱动：Linux 上是 compute runtime（Intel 的 compute-runtime 发行版或发行版自带的 `intel-opencl-icd`），内核要支持这块 GPU；Windows 上是 Intel 的显卡驱动。然后重启进程：出了这个错误之后 OpenCL 调用可能会卡住。"
                )
            } else {
                say!(
                    en: "Install the GPU vendor's current driver, as the message asks, then restart the process.",
                    zh: "按报错的建议装上 GPU 厂商最新的驱动，然后重启进程。"
                )
            };
            out.push(fix(&UPDATE_DRIVER_AS_ASKED, update));
            if openvino_gpu(f) {
                out.push(fix(
                    &OPENVINO_LESS_MEMORY,
                    say!(
                        en: "Ask the GPU for less, with OpenVINO's own settings: a smaller batch or input shape, fewer inference streams (`ov::num_streams`, `NUM_STREAMS`), f16 inference precision (`ov::hint::inference_precision`, `INFERENCE_PRECISION_HINT`), or compile the model for the CPU device instead.",
                        zh: "用 OpenVINO 自己的设置让 GPU 少分配一些：更小的 batch 或输入形状、更少的推理流（`ov::num_streams`、`NUM_STREAMS`）、f16 推理精度（`ov::hint::inference_precision`、`INFERENCE_PRECISION_HINT`），或者改为在 CPU 设备上编译模型。"
                    ),
                ));
                out.push(fix(
                    &super::common::CHECK_GPU_HOLDERS,
                    say!(
                        en: "Check what else uses the Intel GPU (`intel_gpu_top`, or `xpu-smi` on data-center GPUs) and stop it.",
                        zh: "检查还有什么在用这块 Intel GPU（`intel_gpu_top`，数据中心 GPU 用 `xpu-smi`），结束它。"
                    ),
                ));
            } else {
                out.push(super::common::workload_fix());
            }
            true
        }
        None => false,
    }
}

/// The kernel's contiguous memory area on Jetson boards.
const ENLARGE_CMA: FixSpec = FixSpec::new(
    "jetson-enlarge-cma",
    "Give the GPU driver a larger CMA region",
    "给 GPU 驱动更大的 CMA 区域",
)
.sources(&[
    "Linux kernel documentation: kernel-parameters (cma=)",
    "NVIDIA Jetson Linux Developer Guide: kernel command line (extlinux.conf)",
]);

/// dmesg around a kernel driver's line.
const READ_DRIVER_LOG: FixSpec = FixSpec::new(
    "read-gpu-driver-log",
    "Read the driver's kernel log",
    "看驱动的内核日志",
)
.cost(Cost::Look);

/// A message that asks for a driver update.
const UPDATE_DRIVER_AS_ASKED: FixSpec = FixSpec::new(
    "update-driver-as-message-asks",
    "Update the GPU driver, as the message asks",
    "按报错的建议更新 GPU 驱动",
);

/// OpenVINO's streams and inference precision.
const OPENVINO_LESS_MEMORY: FixSpec = FixSpec::new(
    "openvino-gpu-less-memory",
    "Ask OpenVINO's GPU plugin for less memory",
    "让 OpenVINO 的 GPU 插件少用些显存",
)
.sources(&["OpenVINO documentation: GPU device, properties (ov::num_streams, ov::hint::inference_precision)"]);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    ENLARGE_CMA,
    READ_DRIVER_LOG,
    UPDATE_DRIVER_AS_ASKED,
    OPENVINO_LESS_MEMORY,
];

#[cfg(test)]
mod tests {
    use crate::record::Kind;

    fn finding(paste: &str) -> crate::record::Finding {
        crate::decode_str(paste)
            .into_iter()
            .find(|f| f.kind == Kind::LibraryAllocFailed)
            .unwrap_or_else(|| panic!("no finding in {paste}"))
    }

    fn fix_ids(f: &crate::record::Finding) -> Vec<String> {
        f.diagnosis.fixes.iter().map(|x| x.id.clone()).collect()
    }

    /// fixtures/wild/1760.txt: a Jetson AGX Orin's nvgpu failing to
    /// allocate its comptags at boot (`cma_alloc ... ret: -12`).
    #[test]
    fn an_nvgpu_allocation_failure_is_the_drivers_cma_not_a_batch() {
        let f = finding(include_str!("../../../../fixtures/wild/1760.txt"));
        let d = &f.diagnosis;
        assert!(
            d.headline.starts_with("The Jetson GPU driver (nvgpu)"),
            "{}",
            d.headline
        );
        assert!(!d.headline.contains("unrecognised"));
        let zh = d.headline_zh.clone().unwrap();
        assert!(zh.starts_with("Jetson 的 GPU 驱动"), "{zh}");
        assert_eq!(fix_ids(&f), ["jetson-enlarge-cma", "read-gpu-driver-log"]);
        let first = &d.fixes[0].how;
        assert!(
            first.contains("cma=") && first.contains("tegrastats"),
            "{first}"
        );
        assert!(d.verdicts[0].detail.contains("cma_alloc"));
        // No batch size, and nvidia-smi only as what a Jetson lacks.
        for x in &d.fixes {
            assert!(!x.how.contains("batch"), "{}", x.how);
            assert!(
                !x.how.contains("nvidia-smi") || x.how.contains("no nvidia-smi"),
                "{}",
                x.how
            );
        }
    }

    /// The same line without the driver's own prefix is no driver's line:
    /// it keeps the general reading.
    #[test]
    fn without_the_drivers_prefix_the_line_is_not_the_drivers() {
        let line = "17000000.gpu            nvgpu_cbc_init_support:91   [ERR]  Failed to allocate comptags";
        let f = finding(line);
        assert_eq!(super::kernel_driver(&f), None);
        assert!(!f
            .diagnosis
            .headline
            .contains("Jetson GPU driver (nvgpu) failed"));
        // It still says nvgpu, so it is a Jetson's: tegrastats, not nvidia-smi.
        assert!(super::on_jetson(&f));
        assert!(f.diagnosis.fixes[0].how.contains("tegrastats"));
    }

    /// NVRM's resource manager failing a system-memory allocation, as
    /// dmesg prints it on unified-memory machines (the driver's
    /// `nvCheckOkFailedNoLog` line, quoted in NVIDIA/open-gpu-kernel-modules
    /// reports): the driver's reading, never a batch size. Without the
    /// `NVRM:` prefix the same words are no driver's line.
    #[test]
    fn an_nvrm_allocation_failure_is_the_drivers() {
        let line = "[ 1234.567890] NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359";
        let findings = crate::decode_str(line);
        let f = &findings[0];
        assert_eq!(super::kernel_driver(f), Some(super::KernelDriver::Nvrm));
        assert!(f
            .diagnosis
            .headline
            .starts_with("The NVIDIA kernel driver (NVRM)"));
        assert_eq!(fix_ids(f), ["read-gpu-driver-log"]);
        assert!(f.diagnosis.fixes[0].how.contains("free -h"));
        assert!(f.diagnosis.fixes.iter().all(|x| !x.how.contains("batch")));
        let bare = line.replace("NVRM: ", "");
        let findings = crate::decode_str(&bare);
        assert!(findings.iter().all(|f| super::kernel_driver(f).is_none()));
    }

    /// fixtures/wild/1513.txt: OpenVINO's GPU plugin, whose message blames
    /// the driver and asks for an update.
    #[test]
    fn a_message_that_blames_the_driver_updates_it_first() {
        let f = finding(include_str!("../../../../fixtures/wild/1513.txt"));
        assert_eq!(
            fix_ids(&f),
            [
                "update-driver-as-message-asks",
                "openvino-gpu-less-memory",
                "check-what-holds-gpu"
            ]
        );
        let all: String = f.diagnosis.fixes.iter().map(|x| x.how.clone()).collect();
        assert!(all.contains("Intel") && all.contains("ov::num_streams"));
        assert!(
            !all.contains("nvidia-smi") && !all.contains("Ampere"),
            "{all}"
        );
        let zh = f.diagnosis.verdicts[0].zh.clone().unwrap();
        assert!(!zh.text.contains("OpenVINO's"), "{}", zh.text);
        // Without the sentence that blames the driver, the same status is
        // the ordinary reading.
        let plain = include_str!("../../../../fixtures/wild/1513.txt")
            .replace("Due to the driver bug any", "Any")
            .replace("Please try to update the driver or reduce", "Please reduce");
        let f = finding(&plain);
        assert!(!super::blames_driver(&f));
        assert_eq!(fix_ids(&f)[0], "check-what-holds-gpu");
    }
}
