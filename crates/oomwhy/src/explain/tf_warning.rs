//! TensorFlow's BFC retry warning and its CPU allocator's large-allocation
//! warning: not errors.

use super::catalogue::{Cost, FixSpec};
use super::common::fix;
use super::setting::Framework;
use super::Explain;
use crate::i18n::Said;
use crate::record::{Diagnosis, Era, Finding, Fix, Verdict};
use crate::say;
use crate::units::format_size as fmt;

/// Explains `Kind::TfAllocatorWarning` findings: no verdicts, a warning
/// never gets the out-of-memory ones.
pub(super) struct TfAllocatorWarning;

impl Explain for TfAllocatorWarning {
    fn headline(&self, f: &Finding) -> Said {
        if f.era == Some(Era::LargeAllocation) {
            return match f.sizes.requested_bytes.map(fmt) {
                Some(size) => say!(
                    en: "Warning, not an error: TensorFlow allocated {size} of host memory in one piece, more than 10% of the system's memory",
                    zh: "只是警告，不是报错：TensorFlow 一次分配了 {size} 主机内存，超过了系统内存的 10%",
                    size = size
                ),
                None => say!(
                    en: "Warning, not an error: TensorFlow allocated more than 10% of the system's memory in one piece",
                    zh: "只是警告，不是报错：TensorFlow 一次分配的主机内存超过了系统内存的 10%"
                ),
            };
        }
        // `on_device` says NPU for torch_npu only; TensorFlow's devices are GPUs.
        match (f.sizes.requested_bytes.map(fmt), f.device) {
            (Some(size), Some(d)) => say!(
                en: "Warning, not an error: TensorFlow could not allocate {size} on GPU {d} at once and retried",
                zh: "只是警告，不是报错：TensorFlow 没能在 GPU {d} 上一次分配到 {size}，已经重试",
                size = size,
                d = d
            ),
            (Some(size), None) => say!(
                en: "Warning, not an error: TensorFlow could not allocate {size} at once and retried",
                zh: "只是警告，不是报错：TensorFlow 没能一次分配到 {size}，已经重试",
                size = size
            ),
            (None, Some(d)) => say!(
                en: "Warning, not an error: TensorFlow could not allocate on GPU {d} at once and retried",
                zh: "只是警告，不是报错：TensorFlow 没能在 GPU {d} 上一次完成分配，已经重试",
                d = d
            ),
            (None, None) => say!(
                en: "Warning, not an error: TensorFlow could not allocate at once and retried",
                zh: "只是警告，不是报错：TensorFlow 没能一次完成分配，已经重试"
            ),
        }
    }

    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, _out: &mut Vec<Verdict>) {}

    fn fixes(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        // The allocation succeeded; the warning says only that it is large.
        if f.era == Some(Era::LargeAllocation) {
            out.push(fix(
                &NOTHING_TO_FIX,
                say!(
                    en: "TensorFlow's CPU allocator warns about any single allocation larger than 10% of the machine's memory; the allocation itself succeeded. It often comes from loading a whole dataset into one tensor. If the process is later killed or fails for lack of memory, feeding the data in batches (tf.data) keeps such allocations smaller; otherwise nothing is wrong.",
                    zh: "TensorFlow 的 CPU 分配器在单次分配超过本机内存的 10% 时就会发出这条警告；这次分配本身是成功的。它常见于把整个数据集一次性装进一个张量。如果进程之后被杀掉或因内存不足而失败，用 tf.data 分批喂数据可以让这类分配变小；否则没有问题。"
                ),
            ));
            return;
        }
        // The stream executor's own line, logged at info level: the BFC
        // allocator asks again for less.
        if f.era == Some(Era::CudaDriver) {
            out.push(fix(
                &NOTHING_TO_FIX,
                say!(
                    en: "TensorFlow logs a failed device allocation at info level on purpose: its allocator then asks for less memory and goes on (at start-up it tries to reserve most of the GPU this way). Look for an `OOM when allocating tensor` or `ResourceExhaustedError` later in the log: only that is an out-of-memory error.",
                    zh: "TensorFlow 故意用 info 级别记录这次失败的显存分配：它的分配器随后会少要一些显存，继续运行（启动时它就是这样尝试预留 GPU 的大部分显存）。在日志后面找 `OOM when allocating tensor` 或 `ResourceExhaustedError`：只有那才是显存不足错误。"
                ),
            ));
            return;
        }
        out.push(fix(
            &NOTHING_TO_FIX,
            say!(
                en: "TensorFlow says the caller handles the failed allocation (it falls back to an algorithm that needs less memory). Look for an `OOM when allocating tensor` or `ResourceExhaustedError` later in the log: only that is an out-of-memory error.",
                zh: "TensorFlow 说明这次失败的分配由调用方处理（它会退回到一个需要显存更少的算法）。在日志后面找 `OOM when allocating tensor` 或 `ResourceExhaustedError`：只有那才是显存不足错误。"
            ),
        ));
        out.push(fix(
            &MORE_ROOM,
            say!(
                en: "The fallback can be slower: a smaller batch, mixed precision, or stopping other processes on the GPU leaves room for the faster algorithm.",
                zh: "退回去的算法可能更慢：更小的 batch、混合精度，或者结束这块 GPU 上的其他进程，都能给更快的算法留出空间。"
            ),
        ));
    }
}

const NOTHING_TO_FIX: FixSpec = FixSpec::new(
    "tf-warning-nothing-to-fix",
    "Nothing to fix unless the job fails",
    "任务没失败就不用处理",
)
.frameworks(&[Framework::TensorFlow])
.cost(Cost::Look);

const MORE_ROOM: FixSpec = FixSpec::new(
    "tf-warning-more-room",
    "Give TensorFlow more room if it is slow",
    "如果变慢了，给 TensorFlow 多留些显存",
)
.frameworks(&[Framework::TensorFlow]);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[NOTHING_TO_FIX, MORE_ROOM];

/// Report order: an error comes before the "not a failure" warnings
/// printed ahead of it, so finding [1] is what failed.
#[cfg(test)]
mod report_order {
    /// TensorFlow on Windows (fixtures/wild/1826.txt): two BFC retries
    /// ("not a failure"), then the driver's CUDA_ERROR_OUT_OF_MEMORY. The
    /// warnings alone keep their order.
    #[test]
    fn the_error_comes_before_the_warnings_ahead_of_it() {
        let paste = include_str!("../../../../fixtures/wild/1826.txt");
        let findings = crate::decode_str(paste);
        assert!(findings.len() >= 3, "{}", findings.len());
        assert!(findings[0].category.is_oom(), "{:?}", findings[0].category);
        assert!(findings[1..]
            .iter()
            .all(|f| f.category == crate::record::Category::Warning));
        let warnings: String = paste
            .lines()
            .filter(|l| l.contains("not a failure"))
            .map(|l| format!("{l}\n"))
            .collect();
        let alone = crate::decode_str(&warnings);
        assert_eq!(alone.len(), 2);
        assert!(alone[0].source.line < alone[1].source.line);
    }
}
