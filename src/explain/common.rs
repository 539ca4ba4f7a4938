//! Pieces shared by every family's explanation: building verdicts, fixes
//! and field rows, reading facts, rounding tolerance, and the fixes shared
//! by several families.

use super::docs::Code;
use super::thresholds::{FAILS_AT_START_MAX_STEP, LATE_FAILURE_MIN_STEP};
use crate::record::{Diagnosis, Finding, Fix, Verdict};
use crate::units::format_size as fmt;

pub(super) const MIB: u64 = 1 << 20;

pub(super) const GIB: u64 = 1 << 30;

/// Largest rounding error of a figure PyTorch printed for this value.
/// Sizes reach u64::MAX (`17179869184.00 GiB`), so every `size + tolerance`
/// below saturates (regression test r6_sizes_near_u64_max_do_not_overflow_the_explainer).
pub(super) fn tolerance(value: u64) -> u64 {
    let unit = if value > GIB {
        GIB
    } else if value > MIB {
        MIB
    } else if value > 1024 {
        1024
    } else {
        return 0;
    };
    unit / 200 + 1
}

pub(super) fn verdict(code: Code, title: &str, detail: String) -> Verdict {
    Verdict {
        code: code.as_str().to_string(),
        title: title.to_string(),
        detail,
    }
}

pub(super) fn context_verdicts(f: &Finding, growth: Option<(u64, u64)>, out: &mut Vec<Verdict>) {
    if !f.category.is_oom() {
        return;
    }
    if let Some((before, now)) = growth {
        out.push(verdict(
            Code::MemoryGrowth,
            "Memory grew between repeated OOMs: something accumulates",
            format!(
                "Allocated memory rose at each of the last three OOMs on this device, from {} to {}. Memory that keeps growing between steps points at tensors kept alive across iterations (a loss summed without .item(), outputs appended to a list, a growing cache or sequence length).",
                fmt(before),
                fmt(now)
            ),
        ));
    } else if let Some(step) = f.last_step {
        if step <= FAILS_AT_START_MAX_STEP {
            out.push(verdict(
                Code::FailsAtStart,
                "It failed at the very first step",
                format!("The last progress counter before the crash reads {step}: this configuration does not fit even once. Change the configuration (batch, sequence length, precision), not a leak."),
            ));
        } else if step >= LATE_FAILURE_MIN_STEP {
            out.push(verdict(
                Code::LateFailure,
                "It failed after many successful steps",
                format!("The last progress counter before the crash reads {step}: the same configuration ran many times before. Either one batch was larger than the others (variable sequence lengths, a big last batch, an evaluation pass) or memory grows over time (tensors kept across steps)."),
            ));
        }
    }
}

pub(super) fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// One row of the "what the numbers mean" table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRow {
    /// The field's name as the message (or oomwhy, for derived rows) calls it.
    pub label: String,
    /// The value, formatted like PyTorch formats sizes.
    pub value: String,
    /// One line saying what the number is here.
    pub meaning: String,
    /// True for numbers oomwhy computed rather than read.
    pub derived: bool,
}

pub(super) fn row(
    label: &str,
    value: String,
    meaning: impl Into<String>,
    derived: bool,
) -> FieldRow {
    FieldRow {
        label: label.to_string(),
        value,
        meaning: meaning.into(),
        derived,
    }
}

pub(super) fn fix(title: &str, how: impl Into<String>) -> Fix {
    Fix {
        title: title.to_string(),
        how: how.into(),
    }
}

pub(super) const TIB: u64 = 1 << 40;

pub(super) fn extra(f: &Finding, key: &str) -> Option<u64> {
    f.sizes.extra.get(key).copied().flatten()
}

pub(super) fn fact<'f>(f: &'f Finding, key: &str) -> Option<&'f str> {
    f.facts.get(key).map(String::as_str)
}

pub(super) fn on_device(f: &Finding) -> String {
    f.device.map(|d| format!(" on GPU {d}")).unwrap_or_default()
}

/// How to confirm that a message under another name was an out-of-memory error.
pub(super) const CONFIRM: &str = "To confirm: rerun with half the batch size (if the error goes away or comes later, it was memory); watch `nvidia-smi -l 1` while it runs; print torch.cuda.memory_summary() just before the failing step.";

pub(super) fn confirm_fix() -> Fix {
    fix(
        "Confirm that it is memory",
        "Rerun with half the batch size: if the error disappears or comes later, it was memory. Watch `nvidia-smi -l 1` while it runs and print torch.cuda.memory_summary() just before the failing step.",
    )
}

pub(super) fn workload_fix() -> Fix {
    fix(
        "Make the workload smaller",
        "Halve the batch size (keep the effective batch with gradient accumulation), run under torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16), enable gradient checkpointing, shorten sequences.",
    )
}

/// The fixes of the families whose messages state their own numbers outside
/// PyTorch's CUDA allocator: a request no device can hold gets only the fix
/// for that; otherwise the family's own fixes, then the one for memory that
/// grows across steps.
pub(super) fn framework_fixes(
    d: &Diagnosis,
    out: &mut Vec<Fix>,
    specific: impl FnOnce(&dyn Fn(Code) -> bool, &mut Vec<Fix>),
) {
    let has = |code: Code| d.verdicts.iter().any(|v| v.code == code.as_str());
    if has(Code::RequestExceedsCapacity) {
        out.push(fix(
            "Find the tensor that is far too large",
            "Print the shapes at the failing line (the last frame of your own code in the traceback). Look for an overflowed or wrong dimension, a whole dataset materialised at once, or a pairwise/attention matrix over very long inputs. Memory settings cannot help here.",
        ));
        return;
    }
    specific(&has, out);
    if has(Code::MemoryGrowth) || has(Code::LateFailure) {
        out.push(fix(
            "Look for memory kept across steps",
            "If it ran for a while first, something accumulates: losses summed as tensors instead of floats, outputs appended to a list, caches that grow, or sequences that get longer over the run.",
        ));
    }
}
