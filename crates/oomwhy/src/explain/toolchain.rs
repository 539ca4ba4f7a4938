//! Kernel toolchain failures: Triton's launch-resource check and ptxas
//! running out of host memory.

use super::catalogue::{Cost, FixSpec};
use super::common::{extra, fact, fix, is_pytorch, verdict};
use super::docs::Code;
use super::setting::Vendor;
use super::Explain;
use crate::i18n::Said;
use crate::record::{Diagnosis, Finding, Fix, Verdict};
use crate::say;
use crate::units::format_size as fmt;

/// Explains `Kind::TritonOutOfResources` findings.
pub(super) struct TritonOutOfResources;

impl Explain for TritonOutOfResources {
    fn headline(&self, f: &Finding) -> Said {
        let resource = fact(f, "resource").unwrap_or("shared memory");
        match (f.sizes.requested_bytes, extra(f, "hardware_limit_bytes")) {
            (Some(req), Some(limit)) if resource == "shared memory" => say!(
                en: "A Triton kernel needs {need} of shared memory per block; this GPU allows {limit}",
                zh: "Triton kernel 每个 block 需要 {need} 的 shared memory，这块 GPU 只允许 {limit}",
                need = fmt(req),
                limit = fmt(limit)
            ),
            _ => say!(
                en: "A Triton kernel needs more {resource} than this GPU has",
                zh: "Triton kernel 需要的 {resource} 超出了这块 GPU 的上限",
                resource = resource
            ),
        }
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        let resource = fact(f, "resource").unwrap_or("shared memory");
        let detail = if resource == "shared memory" {
            let limit = extra(f, "hardware_limit_bytes");
            match (f.sizes.requested_bytes, limit) {
                (Some(need), Some(limit)) => say!(
                    en: "A Triton kernel was compiled to use {need} of shared memory per thread block, more than this GPU's limit of {limit}. Shared memory is on-chip memory of each multiprocessor, not the GPU's main memory: this is not an out-of-memory error, and a smaller batch or freeing GPU memory will not help. The kernel's tile sizes and pipeline stages (BLOCK_* and num_stages) were chosen for a GPU with more shared memory.",
                    zh: "一个 Triton kernel 编译出来每个 thread block 要用 {need} 的 shared memory，超过了这块 GPU 的上限 {limit}。shared memory 是每个 SM 上的片上内存，不是 GPU 的显存：这不是显存不足，减小 batch 或释放显存都没有用。kernel 的 tile 大小和流水线级数（BLOCK_* 和 num_stages）是按 shared memory 更多的 GPU 选的。",
                    need = fmt(need),
                    limit = fmt(limit)
                ),
                (Some(need), None) => say!(
                    en: "A Triton kernel was compiled to use {need} of shared memory per thread block, more than this GPU's limit of its. Shared memory is on-chip memory of each multiprocessor, not the GPU's main memory: this is not an out-of-memory error, and a smaller batch or freeing GPU memory will not help. The kernel's tile sizes and pipeline stages (BLOCK_* and num_stages) were chosen for a GPU with more shared memory.",
                    zh: "一个 Triton kernel 编译出来每个 thread block 要用 {need} 的 shared memory，超过了这块 GPU 的上限。shared memory 是每个 SM 上的片上内存，不是 GPU 的显存：这不是显存不足，减小 batch 或释放显存都没有用。kernel 的 tile 大小和流水线级数（BLOCK_* 和 num_stages）是按 shared memory 更多的 GPU 选的。",
                    need = fmt(need)
                ),
                (None, Some(limit)) => say!(
                    en: "A Triton kernel was compiled to use more of shared memory per thread block, more than this GPU's limit of {limit}. Shared memory is on-chip memory of each multiprocessor, not the GPU's main memory: this is not an out-of-memory error, and a smaller batch or freeing GPU memory will not help. The kernel's tile sizes and pipeline stages (BLOCK_* and num_stages) were chosen for a GPU with more shared memory.",
                    zh: "一个 Triton kernel 编译出来每个 thread block 要用的 shared memory 超过了这块 GPU 的上限 {limit}。shared memory 是每个 SM 上的片上内存，不是 GPU 的显存：这不是显存不足，减小 batch 或释放显存都没有用。kernel 的 tile 大小和流水线级数（BLOCK_* 和 num_stages）是按 shared memory 更多的 GPU 选的。",
                    limit = fmt(limit)
                ),
                (None, None) => say!(
                    en: "A Triton kernel was compiled to use more of shared memory per thread block, more than this GPU's limit of its. Shared memory is on-chip memory of each multiprocessor, not the GPU's main memory: this is not an out-of-memory error, and a smaller batch or freeing GPU memory will not help. The kernel's tile sizes and pipeline stages (BLOCK_* and num_stages) were chosen for a GPU with more shared memory.",
                    zh: "一个 Triton kernel 编译出来每个 thread block 要用的 shared memory 超过了这块 GPU 的上限。shared memory 是每个 SM 上的片上内存，不是 GPU 的显存：这不是显存不足，减小 batch 或释放显存都没有用。kernel 的 tile 大小和流水线级数（BLOCK_* 和 num_stages）是按 shared memory 更多的 GPU 选的。"
                ),
            }
        } else {
            say!(
                en: "A Triton kernel's launch configuration needs more {resource} than this GPU offers per block. It is a limit of the chip, not of free GPU memory.",
                zh: "一个 Triton kernel 的启动配置每个 block 需要的 {resource} 超出了这块 GPU 的上限。这是芯片的限制，和空闲显存无关。",
                resource = resource
            )
        };
        out.push(verdict(
            Code::SharedMemoryLimit,
            say!(
                en: "A kernel's configuration does not fit this GPU",
                zh: "kernel 的配置超出了这块 GPU 的上限"
            ),
            detail,
        ));
    }

    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix(
            &TRITON_KERNEL_CONFIG,
            say!(
                en: "Update the library that ships the kernel (vLLM, unsloth, flash-linear-attention, ...): newer releases often carry configurations for more GPUs. If you own the kernel, lower num_stages or the BLOCK_* sizes in its triton.Config / autotune list.",
                zh: "升级提供这个 kernel 的库（vLLM、unsloth、flash-linear-attention 等）：新版本通常带有适配更多 GPU 的配置。如果 kernel 是你自己写的，在它的 triton.Config / autotune 列表里调低 num_stages 或 BLOCK_* 大小。"
            ),
        ));
        out.push(fix(
            &NON_TRITON_PATH,
            say!(
                en: "Disable the Triton kernel (torch.compile off, another attention backend) to confirm; batch size and memory settings do not affect this error.",
                zh: "关掉这个 Triton kernel 来确认（关闭 torch.compile、换一个注意力后端）；batch size 和显存设置对这个错误没有影响。"
            ),
        ));
    }
}

/// Explains `Kind::PtxasAllocFailure` findings.
pub(super) struct PtxasAllocFailure;

impl Explain for PtxasAllocFailure {
    fn headline(&self, _f: &Finding) -> Said {
        say!(
            en: "ptxas (NVIDIA's PTX assembler) ran out of memory while compiling a kernel",
            zh: "ptxas（NVIDIA 的 PTX 汇编器）编译 kernel 时内存不足"
        )
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        let repeated = if f.occurrences > 1 {
            say!(
                en: "It failed {n} times (one per kernel or architecture).",
                zh: "它失败了 {n} 次（每个 kernel 或架构一次）。",
                n = f.occurrences
            )
        } else {
            Said::default()
        };
        let detail = say!(
            en: "ptxas, which turns PTX into GPU machine code at build time or at first launch, could not allocate memory. That is host memory (RAM), not GPU memory: very large kernels, many target architectures compiled at once, parallel build jobs or a 32-bit ptxas exhaust it.",
            zh: "ptxas 在编译时或首次启动时把 PTX 转成 GPU 机器码，它分配不到内存了。这是主机内存（RAM），不是显存：kernel 特别大、同时编译很多目标架构、并行编译任务或 32 位的 ptxas 都会把它耗尽。"
        )
        .then(repeated);
        out.push(verdict(
            Code::HostRamExhausted,
            say!(
                en: "Probably the build machine's memory ran out",
                zh: "多半是编译机器的内存用完了"
            ),
            detail,
        ));
    }

    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        let toolkit = fix(
            &CURRENT_TOOLKIT,
            say!(
                en: "Old or 32-bit ptxas builds have a small address space; a current 64-bit toolkit avoids the limit.",
                zh: "旧的或 32 位的 ptxas 地址空间很小；较新的 64 位工具包没有这个限制。"
            ),
        );
        // A build that says it is 32-bit has found its cause.
        let says_32_bit = ["32-bit", "32 bit", "32bit"]
            .iter()
            .any(|w| f.text.to_ascii_lowercase().contains(w));
        if says_32_bit {
            out.push(toolkit.clone());
        }
        // PyTorch's extension builder's variables only where PyTorch shows.
        out.push(if is_pytorch(f) || f.text.contains("torch") {
            fix(
                &COMPILER_MEMORY,
                say!(
                    en: "Build with fewer parallel jobs (make -j1, MAX_JOBS=1), close other programs or add swap, and compile only for the GPUs you use (-gencode / TORCH_CUDA_ARCH_LIST for one architecture).",
                    zh: "减少并行编译任务（make -j1、MAX_JOBS=1），关掉其他程序或加 swap，并且只为你用的 GPU 编译（-gencode / TORCH_CUDA_ARCH_LIST 只写一个架构）。"
                ),
            )
        } else {
            fix(
                &COMPILER_MEMORY,
                say!(
                    en: "Build with fewer parallel jobs (make -j1), close other programs or add swap, and compile only for the GPUs you use (one -gencode architecture, or CMAKE_CUDA_ARCHITECTURES).",
                    zh: "减少并行编译任务（make -j1），关掉其他程序或加 swap，并且只为你用的 GPU 编译（只写一个 -gencode 架构，或 CMAKE_CUDA_ARCHITECTURES）。"
                ),
            )
        });
        if !says_32_bit {
            out.push(toolkit);
        }
    }
}

/// Triton's autotune configurations; the same advice for Triton's error
/// wherever it is recognised.
pub(super) const TRITON_KERNEL_CONFIG: FixSpec = FixSpec::new(
    "triton-kernel-config-for-gpu",
    "Use a kernel configuration for this GPU",
    "用适合这块 GPU 的 kernel 配置",
)
.sources(&["Triton documentation: triton.Config, triton.autotune"]);

/// Names torch.compile as one way to turn Triton off, among others: not
/// PyTorch only.
pub(super) const NON_TRITON_PATH: FixSpec = FixSpec::new(
    "switch-to-non-triton-path",
    "Switch to a non-Triton path",
    "换一条不走 Triton 的路径",
)
.cost(Cost::Speed);

/// ptxas is NVIDIA's assembler (CUDA toolkit).
const COMPILER_MEMORY: FixSpec = FixSpec::new(
    "give-compiler-more-memory",
    "Give the compiler more memory",
    "给编译器更多内存",
)
.vendors(&[Vendor::Nvidia]);

const CURRENT_TOOLKIT: FixSpec = FixSpec::new(
    "current-64-bit-cuda-toolkit",
    "Use a 64-bit, current CUDA toolkit",
    "用较新的 64 位 CUDA 工具包",
)
.vendors(&[Vendor::Nvidia]);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    TRITON_KERNEL_CONFIG,
    NON_TRITON_PATH,
    COMPILER_MEMORY,
    CURRENT_TOOLKIT,
];
