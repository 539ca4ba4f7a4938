//! Apple MPS out-of-memory: PyTorch's high-watermark limit against the
//! machine's unified memory.

use super::common::{
    extra, fact, fix_en, framework_fixes, row_en, tolerance, verdict_en, FieldRow, GIB,
};
use super::docs::Code;
use super::Explain;
use crate::record::{fact, Diagnosis, Finding, Fix, Verdict};
use crate::units::{format_signed, format_size as fmt};

/// Explains `Kind::MpsOom` findings.
pub(super) struct MpsOom;

impl Explain for MpsOom {
    fn headline_en(&self, f: &Finding) -> String {
        let a = f.sizes.requested_bytes.map(fmt);
        match a {
            Some(a) => format!("PyTorch could not allocate {a} on the Apple GPU (MPS)"),
            None => "PyTorch's MPS backend ran out of memory on the Apple GPU".into(),
        }
    }
    fn field_rows(&self, f: &Finding) -> Vec<FieldRow> {
        let mut rows = Vec::new();
        let s = &f.sizes;
        let pool = match fact(f, fact::POOL) {
            Some("shared") => " on the shared pool (memory the CPU can also read)",
            Some("private") => " on the private pool (GPU-only memory)",
            _ => "",
        };
        if let Some(a) = s.requested_bytes {
            rows.push(row_en("Tried to allocate", fmt(a), format!("the buffer the MPS allocator needed{pool}, the tensor rounded up to its allocation size"), false));
        }
        if let Some(x) = s.allocated_bytes {
            rows.push(row_en(
                "MPS allocated",
                fmt(x),
                "memory in buffers PyTorch's MPS allocator holds",
                false,
            ));
        }
        let o = extra(f, "other_allocations_bytes");
        if let Some(o) = o {
            rows.push(row_en("Other allocations", fmt(o), "other Metal memory of this process, outside PyTorch's allocator (MPSGraph caches, intermediate buffers, other frameworks)", false));
        }
        let m = extra(f, "max_allowed_bytes");
        if let Some(m) = m {
            rows.push(row_en("Max allowed", fmt(m), "the high-watermark limit: PYTORCH_MPS_HIGH_WATERMARK_RATIO (1.7 by default) × Metal's recommended working set", false));
        }
        if let (Some(x), Some(o), Some(a)) = (s.allocated_bytes, o, s.requested_bytes) {
            let sum = x.saturating_add(o).saturating_add(a);
            rows.push(row_en("Total with request (derived)", fmt(sum), "allocated + other + request: what the allocation would have brought the process to", true));
            if let Some(m) = m {
                rows.push(row_en(
                    "Room under the limit (derived)",
                    format_signed(i128::from(m) - i128::from(x) - i128::from(o)),
                    "max allowed − allocated − other: what was left for this request",
                    true,
                ));
            }
        }
        rows
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        mps_verdicts(f, out)
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        framework_fixes(d, out, |has, out| mps_fixes(f, has, out))
    }
}

fn mps_verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let x = f.sizes.allocated_bytes;
    let o = extra(f, "other_allocations_bytes");
    let a = f.sizes.requested_bytes;
    let m = extra(f, "max_allowed_bytes");
    let figures = match (x, o, a) {
        (Some(x), Some(o), Some(a)) => Some((x, o, a, x.saturating_add(o).saturating_add(a))),
        _ => None,
    };
    let other_note = match (x, o) {
        (Some(x), Some(o)) if o > x && o >= GIB => format!(
            " Other allocations ({}) exceed PyTorch's own ({}): this is Metal memory of the process outside PyTorch's allocator — MPSGraph's cached graphs and intermediate buffers, or another framework in the same process.",
            fmt(o),
            fmt(x)
        ),
        _ => String::new(),
    };
    match (m, figures) {
        (Some(m), Some((x, o, a, sum))) => {
            let slack = tolerance(x) + tolerance(o) + tolerance(a) + tolerance(m);
            if sum.saturating_add(slack) >= m {
                let relation = if sum > m {
                    format!("{} over", fmt(sum - m))
                } else {
                    "within the rounding of the printed figures of".into()
                };
                out.push(verdict_en(
                    Code::MpsHighWatermark,
                    "PyTorch's MPS memory limit refused it, not the machine",
                    format!(
                        "MPS allocated {} + other allocations {} + this request {} = {}, {relation} the max allowed {}. That limit is PyTorch's high watermark: PYTORCH_MPS_HIGH_WATERMARK_RATIO (1.7 by default) × Metal's recommended working set for this GPU ({} if the default ratio is in use). PyTorch checks it before asking macOS, so the machine may still have had memory; the limit exists to keep macOS from swapping itself into a freeze.{other_note}",
                        fmt(x),
                        fmt(o),
                        fmt(a),
                        fmt(sum),
                        fmt(m),
                        fmt(m * 10 / 17)
                    ),
                ));
            } else {
                out.push(verdict_en(
                    Code::UnifiedMemoryExhausted,
                    "macOS could not provide the memory, below PyTorch's limit",
                    format!(
                        "MPS allocated {} + other allocations {} + this request {} = {}, less than the max allowed {}: the high-watermark limit did not refuse this. Metal itself could not provide {}: on Apple silicon the GPU shares unified memory with macOS and every running app, so what is free depends on everything else on the machine.{other_note}",
                        fmt(x),
                        fmt(o),
                        fmt(a),
                        fmt(sum),
                        fmt(m),
                        fmt(a)
                    ),
                ));
            }
        }
        (Some(m), None) => out.push(verdict_en(
            Code::MpsHighWatermark,
            "PyTorch's MPS memory limit was on; the message is cut off before all figures",
            format!(
                "The message names a max allowed of {}, PyTorch's high-watermark limit, so the limit was on; the figures needed to tell whether it refused this allocation are missing.",
                fmt(m)
            ),
        )),
        (None, _) => {
            let numbers = figures
                .map(|(x, o, a, sum)| {
                    format!(
                        " PyTorch held {} and other Metal allocations {}; with this request {} that is {}.",
                        fmt(x),
                        fmt(o),
                        fmt(a),
                        fmt(sum)
                    )
                })
                .unwrap_or_default();
            out.push(verdict_en(
                Code::UnifiedMemoryExhausted,
                "macOS ran out of memory for the GPU (the MPS limit was off)",
                format!(
                    "This form of the message has no max allowed: the high-watermark limit was turned off (PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0), so nothing in PyTorch refused the allocation — Metal could not get the memory from macOS. On Apple silicon the GPU shares unified memory with macOS and every running app.{numbers}{other_note}"
                ),
            ));
        }
    }
}

fn mps_fixes(f: &Finding, has: &dyn Fn(Code) -> bool, out: &mut Vec<Fix>) {
    out.push(fix_en(
        "Make the workload smaller",
        "Reduce the batch size (keep the effective batch with gradient accumulation), the resolution or the sequence length; run in half precision (model.to(torch.float16) or torch.autocast(device_type=\"mps\", dtype=torch.float16)); for diffusers pipelines call pipe.enable_attention_slicing().",
    ));
    if has(Code::MpsHighWatermark) {
        out.push(fix_en(
            "Raise PyTorch's MPS limit — knowing the risk",
            "export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 (before Python starts) removes the limit, as the message suggests: PyTorch may then take more unified memory than macOS recommends for the GPU, the system swaps heavily and can freeze or crash (\"may cause system failure\"). A value between the default 1.7 and 2.0 (the most it accepts on unified memory) raises the limit less riskily. Lower values such as 0.7 do the opposite — PyTorch fails sooner and macOS stays responsive; set PYTORCH_MPS_LOW_WATERMARK_RATIO no higher than it (e.g. 0.5), or PyTorch rejects the setting.",
        ));
    }
    let other = extra(f, "other_allocations_bytes").unwrap_or(0);
    if other >= GIB {
        out.push(fix_en(
            "Release memory Metal holds outside PyTorch's tensors",
            format!(
                "Other allocations are {}: call torch.mps.empty_cache() between phases (e.g. after loading or evaluation), delete models and outputs you no longer need, and avoid running a second framework on the GPU in the same process.",
                fmt(other)
            ),
        ));
    }
    out.push(fix_en(
        "Leave unified memory to PyTorch",
        "The GPU shares RAM with macOS: quit memory-heavy apps (browsers, IDEs, other Python processes) and check Activity Monitor's Memory Pressure; load models in float16 to halve their footprint.",
    ));
    if f.sizes.requested_bytes.is_some_and(|a| a >= 4 * GIB) {
        out.push(fix_en(
            "Split the large operation",
            "A single request of several GiB usually comes from attention or a large matmul over the whole input: process it in chunks (smaller tiles, sliced attention).",
        ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
