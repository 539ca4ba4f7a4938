//! `CUDNN_STATUS_NOT_SUPPORTED`: cuDNN has no kernel for the call.

use super::common::{fact, fix_en, verdict_en};
use super::docs::Code;
use super::Explain;
use crate::record::{Category, Diagnosis, Finding, Fix, Verdict};

/// Explains `Kind::CudnnNotSupported` findings.
pub(super) struct CudnnNotSupported;

impl Explain for CudnnNotSupported {
    fn headline_en(&self, _f: &Finding) -> String {
        "cuDNN does not support this call (CUDNN_STATUS_NOT_SUPPORTED)".into()
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        if f.category == Category::LikelyOom {
            out.push(verdict_en(
                Code::MaskedOom,
                "Probably out of memory under another name",
                "The log around the cuDNN error says memory ran out: cuDNN reports NOT_SUPPORTED when no algorithm fits the workspace it could get. Treat it as an out-of-memory error.".into(),
            ));
        }
    }

    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        if fact(f, "hint").is_some() {
            out.push(fix_en(
                "Make the input contiguous",
                "Call .contiguous() on the tensors passed to the failing convolution / RNN (after permute, transpose or slicing), as PyTorch's hint suggests.",
            ));
        }
        out.push(fix_en(
            "Try a smaller batch, then without cuDNN",
            "A tensor too large for cuDNN's 32-bit indexing or a workspace that did not fit also produce this status: halve the batch size; `torch.backends.cudnn.enabled = False` confirms cuDNN is the one refusing.",
        ));
        out.push(fix_en(
            "Match cuDNN to the GPU and framework",
            "Use the cuDNN build your PyTorch/TensorFlow release ships with; half precision or unusual strides, groups or dilations are not supported by every algorithm.",
        ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
