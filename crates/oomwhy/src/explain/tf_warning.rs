//! TensorFlow's BFC retry warning: not an error.

use super::common::{fix_en, on_device};
use super::Explain;
use crate::record::{Diagnosis, Finding, Fix, Verdict};
use crate::units::format_size as fmt;

/// Explains `Kind::TfAllocatorWarning` findings: no verdicts, a warning
/// never gets the out-of-memory ones.
pub(super) struct TfAllocatorWarning;

impl Explain for TfAllocatorWarning {
    fn headline_en(&self, f: &Finding) -> String {
        let size = f
            .sizes
            .requested_bytes
            .map(|b| format!(" {}", fmt(b)))
            .unwrap_or_default();
        format!(
            "Warning, not an error: TensorFlow could not allocate{size}{} at once and retried",
            on_device(f)
        )
    }

    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, _out: &mut Vec<Verdict>) {}

    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix_en(
            "Nothing to fix unless the job fails",
            "TensorFlow says the caller handles the failed allocation (it falls back to an algorithm that needs less memory). Look for an `OOM when allocating tensor` or `ResourceExhaustedError` later in the log: only that is an out-of-memory error.",
        ));
        out.push(fix_en(
            "Give TensorFlow more room if it is slow",
            "The fallback can be slower: a smaller batch, mixed precision, or stopping other processes on the GPU leaves room for the faster algorithm.",
        ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
