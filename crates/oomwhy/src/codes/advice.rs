//! Advice per status code, as data (`advice.tsv`): what a code means in
//! practice and the first thing to do about it, in English and Chinese side
//! by side, with where it was read. The code tables say what a code is; this
//! says what a user meets it for.
//!
//! One row serves a group of codes that share their meaning in practice (the
//! whole stream-capture family, every runtime's illegal address). A row may
//! name a context: words the finding's text or traceback must hold for the
//! row to apply (cuDNN's execution failure inside TensorRT is a different
//! problem from the same status in Caffe); such a row is preferred over the
//! row without a context for the same code.
//!
//! The file is compiled in and parsed once; a row that lacks a column, or
//! one of its languages, is dropped, and a test checks that none is.

use std::sync::OnceLock;

/// A text in both languages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Both {
    pub en: &'static str,
    pub zh: &'static str,
}

/// One row: the advice for a group of codes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advice {
    /// Stable name of the row (`stream-capture`).
    pub id: &'static str,
    /// The code names it applies to, as the tables (or a fault family) write them.
    pub codes: Vec<&'static str>,
    /// Words of which one must appear in the finding; empty for any finding.
    pub context: Vec<&'static str>,
    /// What happened, in a few words: the Why's title.
    pub title: Both,
    /// What the code means in practice: its usual causes.
    pub why: Both,
    /// The id of the fix it offers first (a fix of `explain/status.rs`).
    pub fix: &'static str,
    /// The fix, concretely.
    pub how: Both,
    /// Where the meaning and the fix were read.
    pub source: &'static str,
}

const TEXT: &str = include_str!("advice.tsv");

fn split_list(text: &'static str) -> Vec<&'static str> {
    text.split('|')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Whether a text is a Chinese half: it holds at least one CJK character.
pub fn has_chinese(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

fn parse_row(line: &'static str) -> Option<Advice> {
    let columns: Vec<&'static str> = line.split('\t').map(str::trim).collect();
    let [id, codes, context, title_en, title_zh, why_en, why_zh, fix, how_en, how_zh, source] =
        columns[..]
    else {
        return None;
    };
    let both = |en: &'static str, zh: &'static str| {
        (!en.is_empty() && has_chinese(zh)).then_some(Both { en, zh })
    };
    let advice = Advice {
        id,
        codes: split_list(codes),
        context: split_list(context),
        title: both(title_en, title_zh)?,
        why: both(why_en, why_zh)?,
        fix,
        how: both(how_en, how_zh)?,
        source,
    };
    let complete = !advice.id.is_empty()
        && !advice.codes.is_empty()
        && !advice.fix.is_empty()
        && !advice.source.is_empty();
    complete.then_some(advice)
}

fn rows() -> impl Iterator<Item = &'static str> {
    TEXT.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
}

/// Every row, parsed once, in the file's order.
pub fn all() -> &'static [Advice] {
    static ALL: OnceLock<Vec<Advice>> = OnceLock::new();
    ALL.get_or_init(|| rows().filter_map(parse_row).collect())
}

/// The advice for a code: a row whose context `seen` confirms first, else
/// the row with no context. `seen` answers whether the finding holds a word.
pub fn lookup(name: &str, seen: impl Fn(&str) -> bool) -> Option<&'static Advice> {
    let mut rows = all().iter().filter(|a| a.codes.contains(&name));
    let (with_context, plain): (Vec<&Advice>, Vec<&Advice>) =
        rows.by_ref().partition(|a| !a.context.is_empty());
    with_context
        .into_iter()
        .find(|a| a.context.iter().any(|word| seen(word)))
        .or_else(|| plain.into_iter().next())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::{tables, Class};

    /// Names a fault family writes that are not in a code table: nvgpu's
    /// MMU fault, Windows' TDR, ROCr's HSA statuses and its memory access
    /// fault, the NVIDIA kernel driver's failure to bring up the GPU,
    /// Intel's Xe driver's engine fault.
    fn written_by_a_fault_family(name: &str) -> bool {
        matches!(
            name,
            "MMU fault"
                | "TDR (timeout detection and recovery)"
                | "Memory access fault"
                | "RmInitAdapter failed"
                | "Engine memory CAT error"
                | "Ascend kernel runtime initialization failed"
                | "UNRECOVERABLE_IF"
                | "GPU exception"
        ) || name.starts_with("HSA_STATUS_ERROR_")
    }

    #[test]
    fn every_row_is_complete_in_both_languages() {
        assert_eq!(
            all().len(),
            rows().count(),
            "a row lacks a column or a half"
        );
        let mut ids = std::collections::HashSet::new();
        for advice in all() {
            assert!(ids.insert(advice.id), "{} twice", advice.id);
            for half in [advice.title, advice.why, advice.how] {
                assert!(!has_chinese(half.en), "{}: Chinese in English", advice.id);
                assert!(has_chinese(half.zh), "{}: no Chinese", advice.id);
            }
        }
    }

    #[test]
    fn every_code_named_is_a_known_code() {
        for advice in all() {
            for name in &advice.codes {
                let known = crate::codes::by_name(name).is_some()
                    || tables()
                        .iter()
                        .any(|t| t.entries.iter().any(|e| e.name == *name))
                    || written_by_a_fault_family(name);
                assert!(known, "{}: {name} is in no table", advice.id);
            }
        }
    }

    #[test]
    fn one_plain_row_per_code() {
        let mut seen = std::collections::HashMap::new();
        for advice in all().iter().filter(|a| a.context.is_empty()) {
            for name in &advice.codes {
                if let Some(other) = seen.insert(*name, advice.id) {
                    panic!("{name} in {other} and {}", advice.id);
                }
            }
        }
    }

    #[test]
    fn every_memory_code_has_advice() {
        for table in tables()
            .iter()
            .filter(|t| t.scanned || t.id == "absl_status")
        {
            for entry in table.entries.iter().filter(|e| e.class == Class::Memory) {
                assert!(
                    lookup(entry.name, |_| false).is_some(),
                    "{} {}: no advice",
                    table.id,
                    entry.name
                );
            }
        }
    }

    #[test]
    fn a_context_row_wins_only_in_its_context() {
        let name = "CUDNN_STATUS_EXECUTION_FAILED";
        // TensorRT's runner line, as printed in the real paste the
        // audit quoted (`../rtSafe/cuda/cudaConvolutionRunner.cpp`).
        let trt = "ERROR: ../rtSafe/cuda/cudaConvolutionRunner.cpp (483) - Cudnn Error in executeConv: 8 (CUDNN_STATUS_EXECUTION_FAILED)";
        let in_trt = lookup(name, |w| trt.contains(w)).map(|a| a.id);
        // That `file.cpp (line) - Cudnn Error in` form is TensorRT 7's.
        assert_eq!(in_trt, Some("cudnn-execution-tensorrt7"));
        // TensorRT 8's form of the same failure (fixtures/wild/1735.txt),
        // which names no TensorRT, gets the row with TensorRT 8's options.
        let trt8 = "Error Code 1: Cudnn (CUDNN_STATUS_EXECUTION_FAILED)";
        let in_trt8 = lookup(name, |w| trt8.contains(w)).map(|a| a.id);
        assert_eq!(in_trt8, Some("cudnn-execution-tensorrt"));
        // Paddle's own `Cudnn error,` is neither (fixtures/wild/1426.txt).
        let paddle = "OSError: (External)  Cudnn error, CUDNN_STATUS_EXECUTION_FAILED  (at /paddle/paddle/fluid/operators/conv_cudnn_op.cu:731)";
        let in_paddle = lookup(name, |w| paddle.contains(w)).map(|a| a.id);
        assert_eq!(in_paddle, Some("cudnn-execution"));
        // Caffe's check of the same status names no TensorRT.
        let caffe =
            "Check failed: status == CUDNN_STATUS_SUCCESS (8 vs. 0)  CUDNN_STATUS_EXECUTION_FAILED";
        let in_caffe = lookup(name, |w| caffe.contains(w)).map(|a| a.id);
        assert_eq!(in_caffe, Some("cudnn-execution"));
    }

    #[test]
    fn the_codes_users_meet_most_have_advice() {
        for name in [
            "cudaErrorIllegalAddress",
            "CUDA_ERROR_ILLEGAL_ADDRESS",
            "hipErrorIllegalAddress",
            "cudaErrorLaunchFailure",
            "cudaErrorLaunchTimeout",
            "cudaErrorAssert",
            "cudaErrorNoKernelImageForDevice",
            "hipErrorNoBinaryForGpu",
            "cudaErrorUnsupportedPtxVersion",
            "cudaErrorNotPermitted",
            "cudaErrorStreamCaptureUnsupported",
            "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
            "hipErrorStreamCaptureUnsupported",
            "cudaErrorECCUncorrectable",
            "cudaErrorInitializationError",
            "cudaErrorNoDevice",
            "cudaErrorInsufficientDriver",
            "CUDNN_STATUS_EXECUTION_FAILED",
            "CUDNN_STATUS_NOT_SUPPORTED",
            "CUDNN_STATUS_INTERNAL_ERROR",
            "CUBLAS_STATUS_EXECUTION_FAILED",
            "ncclUnhandledCudaError",
            "ncclSystemError",
            "ncclInternalError",
            "ncclRemoteError",
            "DXGI_ERROR_DEVICE_REMOVED",
            "DXGI_ERROR_DEVICE_HUNG",
            "DXGI_ERROR_DEVICE_RESET",
            "VK_ERROR_DEVICE_LOST",
        ] {
            assert!(lookup(name, |_| false).is_some(), "{name}: no advice");
        }
    }
}
