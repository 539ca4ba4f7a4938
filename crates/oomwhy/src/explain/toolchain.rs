//! Kernel toolchain failures: Triton's launch-resource check and ptxas
//! running out of host memory.

use super::common::{extra, fact, fix_en, verdict_en};
use super::docs::Code;
use super::Explain;
use crate::record::{Diagnosis, Finding, Fix, Verdict};
use crate::units::format_size as fmt;

/// Explains `Kind::TritonOutOfResources` findings.
pub(super) struct TritonOutOfResources;

impl Explain for TritonOutOfResources {
    fn headline_en(&self, f: &Finding) -> String {
        let resource = fact(f, "resource").unwrap_or("shared memory");
        match (f.sizes.requested_bytes, extra(f, "hardware_limit_bytes")) {
            (Some(req), Some(limit)) if resource == "shared memory" => format!(
                "A Triton kernel needs {} of shared memory per block; this GPU allows {}",
                fmt(req),
                fmt(limit)
            ),
            _ => format!("A Triton kernel needs more {resource} than this GPU has"),
        }
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        let resource = fact(f, "resource").unwrap_or("shared memory");
        let need = f
            .sizes
            .requested_bytes
            .map_or_else(|| "more".to_string(), fmt);
        let limit = extra(f, "hardware_limit_bytes").map_or_else(|| "its".to_string(), fmt);
        let detail = if resource == "shared memory" {
            format!("A Triton kernel was compiled to use {need} of shared memory per thread block, more than this GPU's limit of {limit}. Shared memory is on-chip memory of each multiprocessor, not the GPU's main memory: this is not an out-of-memory error, and a smaller batch or freeing GPU memory will not help. The kernel's tile sizes and pipeline stages (BLOCK_* and num_stages) were chosen for a GPU with more shared memory.")
        } else {
            format!("A Triton kernel's launch configuration needs more {resource} than this GPU offers per block. It is a limit of the chip, not of free GPU memory.")
        };
        out.push(verdict_en(
            Code::SharedMemoryLimit,
            "A kernel's configuration does not fit this GPU",
            detail,
        ));
    }

    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix_en(
            "Use a kernel configuration for this GPU",
            "Update the library that ships the kernel (vLLM, unsloth, flash-linear-attention, ...): newer releases often carry configurations for more GPUs. If you own the kernel, lower num_stages or the BLOCK_* sizes in its triton.Config / autotune list.",
        ));
        out.push(fix_en(
            "Switch to a non-Triton path",
            "Disable the Triton kernel (torch.compile off, another attention backend) to confirm; batch size and memory settings do not affect this error.",
        ));
    }
}

/// Explains `Kind::PtxasAllocFailure` findings.
pub(super) struct PtxasAllocFailure;

impl Explain for PtxasAllocFailure {
    fn headline_en(&self, _f: &Finding) -> String {
        "ptxas (NVIDIA's PTX assembler) ran out of memory while compiling a kernel".into()
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        let repeated = if f.occurrences > 1 {
            format!(
                " It failed {} times (one per kernel or architecture).",
                f.occurrences
            )
        } else {
            String::new()
        };
        out.push(verdict_en(
            Code::HostRamExhausted,
            "Probably the build machine's memory ran out",
            format!("ptxas, which turns PTX into GPU machine code at build time or at first launch, could not allocate memory. That is host memory (RAM), not GPU memory: very large kernels, many target architectures compiled at once, parallel build jobs or a 32-bit ptxas exhaust it.{repeated}"),
        ));
    }

    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix_en(
            "Give the compiler more memory",
            "Build with fewer parallel jobs (make -j1, MAX_JOBS=1), close other programs or add swap, and compile only for the GPUs you use (-gencode / TORCH_CUDA_ARCH_LIST for one architecture).",
        ));
        out.push(fix_en(
            "Use a 64-bit, current CUDA toolkit",
            "Old or 32-bit ptxas builds have a small address space; a current 64-bit toolkit avoids the limit.",
        ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
