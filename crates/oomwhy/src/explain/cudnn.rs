//! `CUDNN_STATUS_NOT_SUPPORTED`: cuDNN has no kernel for the call.

use super::catalogue::{Cost, FixSpec};
use super::common::{fact, fix, verdict};
use super::docs::Code;
use super::setting::Vendor;
use super::Explain;
use crate::i18n::Said;
use crate::record::{Category, Diagnosis, Finding, Fix, Verdict};
use crate::say;

/// Explains `Kind::CudnnNotSupported` findings.
pub(super) struct CudnnNotSupported;

impl Explain for CudnnNotSupported {
    fn headline(&self, _f: &Finding) -> Said {
        say!(
            en: "cuDNN does not support this call (CUDNN_STATUS_NOT_SUPPORTED)",
            zh: "cuDNN 不支持这个调用（CUDNN_STATUS_NOT_SUPPORTED）"
        )
    }

    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        if f.category == Category::LikelyOom {
            out.push(verdict(
                Code::MaskedOom,
                say!(
                    en: "Probably out of memory under another name",
                    zh: "多半其实就是显存不足"
                ),
                say!(
                    en: "The log around the cuDNN error says memory ran out: cuDNN reports NOT_SUPPORTED when no algorithm fits the workspace it could get. Treat it as an out-of-memory error.",
                    zh: "cuDNN 报错附近的日志说显存用完了：拿到的工作区放不下任何算法时，cuDNN 就报 NOT_SUPPORTED。把它当作显存不足处理。"
                ),
            ));
        }
    }

    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        if fact(f, "hint").is_some() {
            out.push(fix(
                &MAKE_INPUT_CONTIGUOUS,
                say!(
                    en: "Call .contiguous() on the tensors passed to the failing convolution / RNN (after permute, transpose or slicing), as PyTorch's hint suggests.",
                    zh: "按 PyTorch 的提示，对传给出错的卷积 / RNN 的张量调用 .contiguous()（在 permute、transpose 或切片之后）。"
                ),
            ));
        }
        out.push(fix(
            &SMALLER_BATCH_THEN_WITHOUT_CUDNN,
            say!(
                en: "A tensor too large for cuDNN's 32-bit indexing or a workspace that did not fit also produce this status: halve the batch size; `torch.backends.cudnn.enabled = False` confirms cuDNN is the one refusing.",
                zh: "张量大到超出 cuDNN 的 32 位索引，或者工作区放不下，也会得到这个状态：把 batch size 减半；设 `torch.backends.cudnn.enabled = False` 可以确认拒绝调用的是 cuDNN。"
            ),
        ));
        out.push(fix(
            &MATCH_CUDNN,
            say!(
                en: "Use the cuDNN build your PyTorch/TensorFlow release ships with; half precision or unusual strides, groups or dilations are not supported by every algorithm.",
                zh: "用 PyTorch/TensorFlow 发行版自带的 cuDNN；半精度，或者不常见的 stride、groups、dilation，并不是每个算法都支持。"
            ),
        ));
    }
}

/// PyTorch's hint names `.contiguous()`; the detector keeps it only from
/// PyTorch's message.
const MAKE_INPUT_CONTIGUOUS: FixSpec = FixSpec::new(
    "make-input-contiguous",
    "Make the input contiguous",
    "让输入连续",
)
.frameworks(&[super::setting::Framework::PyTorch]);

/// `torch.backends.cudnn.enabled` is PyTorch's switch; cuDNN is NVIDIA's.
const SMALLER_BATCH_THEN_WITHOUT_CUDNN: FixSpec = FixSpec::new(
    "smaller-batch-then-without-cudnn",
    "Try a smaller batch, then without cuDNN",
    "先减小 batch，再试试不用 cuDNN",
)
.frameworks(&[super::setting::Framework::PyTorch])
.vendors(&[Vendor::Nvidia])
.cost(Cost::Quality)
.sources(&["PyTorch documentation: torch.backends.cudnn.enabled"]);

/// cuDNN is NVIDIA's library.
const MATCH_CUDNN: FixSpec = FixSpec::new(
    "match-cudnn-to-framework",
    "Match cuDNN to the GPU and framework",
    "让 cuDNN 和 GPU、框架匹配",
)
.vendors(&[Vendor::Nvidia]);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    MAKE_INPUT_CONTIGUOUS,
    SMALLER_BATCH_THEN_WITHOUT_CUDNN,
    MATCH_CUDNN,
];
