//! TensorFlow out-of-memory (docs/formats.md §6, §1.3):
//!
//! * `op_kernel` — `OpKernelContext::allocate_tensor`:
//!   `OOM when allocating tensor with shape[8,512,512,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc`,
//!   also as `ResourceExhaustedError: ...`, `Resource exhausted: ...`,
//!   `N root error(s) found. (0) Resource exhausted: ...`, the TF 1.x
//!   `of shape [..]` spelling and the early form without device/allocator.
//!   The requested size is computed: Π(shape) × sizeof(dtype).
//! * `bfc_allocator` — the BFC allocator's warning before it gives up:
//!   `Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.00GiB [(rounded to N)][requested by op X].  Current allocation summary follows.`
//!   The `with freed_by_count=...  The caller indicates that this is not a
//!   failure` variant is a retried allocation, not an error: it becomes a
//!   `tf_allocator_warning` finding (category `warning`), also when a
//!   terminal wrapped the sentence onto the next line.
//! * `large_allocation` — the CPU allocator's warning that one allocation
//!   is large (`cpu_allocator_impl.cc`, `allocator.cc` before it): `W
//!   tensorflow/core/framework/allocator.cc:107] Allocation of 6442450944
//!   exceeds 10% of system memory.` (`of free system memory` since TF 2.x).
//!   The allocation succeeded: a `tf_allocator_warning` finding too.
//!
//! The C++ log line `OP_REQUIRES failed at conv_ops.cc:N : RESOURCE_EXHAUSTED: OOM
//! when allocating ...` repeats the error Python raises right after; it is
//! not reported a second time.

use super::re;
use super::text::{grows, int};
use super::{Family, Message, SizeReader};
use crate::record::{fact, Era, Finding, Kind, Note};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    oom: Regex,
    prefixed: Regex,
    shape: Regex,
    dtype: Regex,
    device: Regex,
    allocator: Regex,
    allocator_device: Regex,
    node: Regex,
    op: Regex,
    bfc: Regex,
    bfc_rounded: Regex,
    bfc_op: Regex,
    not_a_failure: Regex,
    tf1_exception: Regex,
    eigen: Regex,
    large: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        oom: re(r"OOM when allocating tensor (?:with|of) shape"),
        prefixed: re(r"(?:Resource exhausted|RESOURCE_EXHAUSTED):\s*OOM when allocating tensor"),
        shape: re(r"OOM when allocating tensor (?:with|of) shape\s*(\[[^\]]*\])"),
        dtype: re(r"\]\s*and type (\w+)"),
        device: re(r" on (/\S*device:([A-Z_]+):(\d+))"),
        allocator: re(r"by allocator (\S+)"),
        allocator_device: re(r"^(GPU|XLA_GPU)_(\d+)_bfc$"),
        node: re(r"\[\[(?:\{\{)?(?:node |Node: )([^}\s\]]+)|Node: '([^']+)'"),
        op: re(r"\[Op:([\w.]+)"),
        // Before TensorFlow 1.0 the warning named no allocator: `Ran out of
        // memory trying to allocate 220.5KiB.  See logs for memory state.`
        bfc: re(r"(?:Allocator \(([^)]+)\) r|\bR)an out of memory trying to allocate {TF_SIZE}"),
        bfc_rounded: re(r"\(rounded to (\d+)\)"),
        bfc_op: re(r"requested by op (\S+)"),
        not_a_failure: re(r"freed_by_count|not a failure"),
        tf1_exception: re(r"(\w+Error) \(see above for traceback\):\s*$"),
        eigen: re(r"EigenAllocator for GPU ran out of memory when allocating (\d+)"),
        large: re(r"\bAllocation of (\d+) exceeds 10% of (?:free )?system memory"),
    })
}

/// The op node a TensorFlow runtime error names in its annotation
/// (`[[{{node X}}]]`, `[[node X`, TF 1.x's `[[Node: X = ...`), which only
/// TensorFlow prints.
pub(crate) fn annotated_node(text: &str) -> Option<String> {
    let at = text.find("[[")?;
    let c = patterns().node.captures(&text[at..])?;
    c.get(1).map(|m| m.as_str().to_string())
}

/// Bytes per element for the dtype names `DataTypeString` prints (framework/types.cc).
fn dtype_size(name: &str) -> Option<u64> {
    Some(match name {
        "bool" | "int8" | "uint8" | "qint8" | "quint8" | "float8_e5m2" | "float8_e4m3fn" => 1,
        "half" | "bfloat16" | "int16" | "uint16" | "qint16" | "quint16" => 2,
        "float" | "int32" | "uint32" | "qint32" => 4,
        "double" | "int64" | "uint64" | "complex64" => 8,
        "complex128" => 16,
        _ => return None,
    })
}

/// Product of the dimensions of `[d0,d1,...]`; `None` if a dimension is not
/// a number or the product overflows.
fn elements(shape: &str) -> Option<u64> {
    let inner = shape.trim().strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim().is_empty() {
        return Some(1);
    }
    inner.split(',').try_fold(1u64, |acc, d| {
        acc.checked_mul(d.trim().parse::<u64>().ok()?)
    })
}

fn score(text: &str) -> usize {
    let p = patterns();
    [&p.shape, &p.dtype, &p.device, &p.allocator, &p.node, &p.op]
        .iter()
        .filter(|r| r.is_match(text))
        .count()
        + usize::from(text.contains("report_tensor_allocations_upon_oom"))
        + usize::from(text.contains("Current allocation summary follows"))
        + usize::from(text.contains("TF_GPU_ALLOCATOR=cuda_malloc_async"))
}

/// TensorFlow's `OOM when allocating tensor` and the BFC allocator's warning.
pub struct TensorFlowOom;

impl Family for TensorFlowOom {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "OOM when allocating tensor",
            ") ran out of memory trying to allocate",
            "Ran out of memory trying to allocate",
            "ran out of memory when allocating",
            // The CPU allocator's large-allocation warning, both spellings.
            "exceeds 10% of",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        let p = patterns();
        if let Some(m) = p.bfc.find(line) {
            return Some(m.start());
        }
        if let Some(m) = p.eigen.find(line) {
            return Some(m.start());
        }
        if let Some(m) = p.large.find(line) {
            return Some(m.start());
        }
        // The C++ `OP_REQUIRES failed at ...` line: a finding when it is
        // alone; the scanner folds it into the Python error that repeats it.
        if let Some(m) = p.prefixed.find(line) {
            return Some(m.start());
        }
        p.oom.find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        let t = next.trim_start();
        // The node and hint lines TensorFlow appends start with `[[`, `Hint:`, `[Op:`.
        let appendix = t.starts_with("[[")
            || t.starts_with("Hint: If you want to see a list of allocated tensors")
            || t.starts_with("[Op:")
            || t.starts_with("If the cause is memory fragmentation")
            || t == "Current allocation summary follows.";
        // The retry warning's sentence, wrapped onto the next line(s).
        let warning_tail = lines.len() < 3
            && patterns().bfc.is_match(&lines[0])
            && !patterns().bfc.is_match(next)
            && !lines
                .iter()
                .any(|l| l.contains("more memory were available"))
            && [
                "freed_by_count",
                "caller indicates",
                "not a failure",
                "performance gains",
                "were available",
            ]
            .iter()
            .any(|w| t.starts_with(w) || t.contains(w));
        warning_tail || (appendix && lines.len() < 8) || grows(lines, next, 4, score)
    }

    /// None: its patterns match digits as a class (`\d`, a size's number).
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    /// `continues` compares words and scores of patterns that match digits
    /// as a class, and `decode` reads from the prefix only an exception's
    /// name at its end (before `: ` or ` (see above for traceback):`) and
    /// the `OP_REQUIRES failed at` phrase.
    fn message_figure_blind(&self) -> bool {
        true
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let text = message.joined();
        if let Some(c) = p.large.captures(&text) {
            // A warning about one allocation that succeeded: no request failed.
            let mut finding = message.finding(Kind::TfAllocatorWarning, message.lines.join("\n"));
            finding.era = Some(Era::LargeAllocation);
            finding.backend = Some("cpu".into());
            finding.sizes.requested_bytes = c[1].parse().ok();
            finding.facts.insert(fact::MEMORY.into(), "host".into());
            return Some(finding);
        }
        let kind = if p.bfc.is_match(&text) && p.not_a_failure.is_match(&text) {
            Kind::TfAllocatorWarning
        } else {
            Kind::TfOom
        };
        let mut finding = message.finding(kind, message.lines.join("\n"));
        if finding.exception.is_none() {
            finding.exception = p
                .tf1_exception
                .captures(message.prefix)
                .map(|c| c[1].to_string());
        }
        let mut notes = Vec::new();

        if message.prefix.contains("OP_REQUIRES failed at") {
            finding.facts.insert("op_requires".into(), "true".into());
        }
        let allocator = if let Some(c) = p.eigen.captures(&text) {
            // Fatal (`F`): the GPU device's Eigen allocator got nothing.
            finding.era = Some(Era::EigenAllocator);
            finding.sizes.requested_bytes = c[1].parse().ok();
            None
        } else if let Some(c) = p.bfc.captures(&text) {
            finding.era = Some(Era::BfcAllocator);
            finding.sizes.requested_bytes = match int::<u64>(&p.bfc_rounded, &text, 1) {
                Some(bytes) => Some(bytes),
                None => {
                    let printed = format!("{}{}", &c[2], &c[3]);
                    notes.push(
                        crate::say!(
                            en: "the request is printed rounded ({printed}); its byte count is approximate",
                            zh: "申请量打印时做了取整（{printed}）；字节数是近似值",
                        )
                        .into(),
                    );
                    SizeReader::new(&mut notes).read(&c, 2, "trying to allocate")
                }
            };
            if let Some(op) = p.bfc_op.captures(&text) {
                finding.facts.insert(fact::OP.into(), op[1].to_string());
            }
            if text.contains("TF_GPU_ALLOCATOR=cuda_malloc_async") {
                finding.facts.insert(
                    fact::HINT.into(),
                    "TF_GPU_ALLOCATOR=cuda_malloc_async".into(),
                );
            }
            finding.truncated =
                kind == Kind::TfOom && !text.contains("Current allocation summary follows");
            c.get(1).map(|m| m.as_str().to_string())
        } else {
            finding.era = Some(Era::OpKernel);
            let shape = p.shape.captures(&text).map(|c| c[1].to_string());
            let dtype = p.dtype.captures(&text).map(|c| c[1].to_string());
            if let Some(shape) = &shape {
                finding.facts.insert(fact::SHAPE.into(), shape.clone());
            }
            if let Some(dtype) = &dtype {
                finding.facts.insert(fact::DTYPE.into(), dtype.clone());
            }
            finding.sizes.requested_bytes = match (&shape, &dtype) {
                (Some(shape), Some(dtype)) => match (elements(shape), dtype_size(dtype)) {
                    (Some(n), Some(each)) => {
                        let bytes = n.checked_mul(each);
                        if bytes.is_none() {
                            notes.push(
                                crate::say!(
                                    en: "{shape} × {each} bytes does not fit in 64 bits",
                                    zh: "{shape} × {each} 字节超出了 64 位整数的范围",
                                )
                                .into(),
                            );
                        }
                        bytes
                    }
                    (None, _) => {
                        notes.push(
                            crate::say!(
                                en: "the shape {shape} could not be multiplied out",
                                zh: "形状 {shape} 无法相乘得出大小",
                            )
                            .into(),
                        );
                        None
                    }
                    (_, None) => {
                        notes.push(
                            crate::say!(
                                en: "dtype `{dtype}` has no fixed size known to oomwhy, so the tensor's bytes are not computed",
                                zh: "oomwhy 不知道 dtype `{dtype}` 的固定大小，所以没有计算张量的字节数",
                            )
                            .into(),
                        );
                        None
                    }
                },
                _ => None,
            };
            if let Some(c) = p.device.captures(&text) {
                finding
                    .facts
                    .insert(fact::DEVICE_NAME.into(), c[1].to_string());
                // The host's `device:CPU:0` is no GPU index.
                finding.backend = match &c[2] {
                    "CPU" => Some("cpu".into()),
                    _ => {
                        finding.device = c[3].parse().ok();
                        None
                    }
                };
            }
            if let Some(c) = p.node.captures(&text) {
                let node = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
                finding.facts.insert(fact::NODE.into(), node.to_string());
            }
            if let Some(c) = p.op.captures(&text) {
                finding.facts.insert(fact::OP.into(), c[1].to_string());
            }
            finding.truncated = shape.is_none() || dtype.is_none();
            p.allocator
                .captures(&text)
                .map(|c| c[1].trim_end_matches(['.', ',']).to_string())
        };
        if let Some(allocator) = allocator {
            if let Some(c) = p.allocator_device.captures(&allocator) {
                finding.device = finding.device.or(c[2].parse().ok());
            } else if allocator.eq_ignore_ascii_case("cpu") || allocator.contains("cpu") {
                finding.backend = Some("cpu".into());
            }
            finding.facts.insert(fact::ALLOCATOR.into(), allocator);
        }
        if sizes_overflowed(&notes) {
            finding.facts.insert(fact::OVERFLOW.into(), "true".into());
        }
        finding.notes = notes;
        Some(finding)
    }
}

fn sizes_overflowed(notes: &[Note]) -> bool {
    notes
        .iter()
        .any(|n| n.text.contains("too large") || n.text.contains("does not fit"))
}

#[cfg(test)]
mod tests {
    use super::*;

    type Case = (
        &'static str,
        Option<u64>,
        Option<u32>,
        Option<&'static str>,
        Option<&'static str>,
    );

    use crate::units::GIB;

    fn decode(lines: &[&str]) -> Option<Finding> {
        crate::detect::decode_lines(&TensorFlowOom, lines)
    }

    #[test]
    fn op_kernel_spellings() {
        // (line, requested, device, dtype, exception)
        let cases: &[Case] = &[
            ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[8,512,512,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", Some(8 * 512 * 512 * 64 * 4), Some(0), Some("float"), Some("tensorflow.python.framework.errors_impl.ResourceExhaustedError")),
            ("  (0) Resource exhausted: OOM when allocating tensor with shape[16,112,112,147] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", Some(16 * 112 * 112 * 147 * 4), Some(0), Some("float"), None),
            ("ResourceExhaustedError: OOM when allocating tensor with shape[128,128,109,109] and type half on /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc", Some(128 * 128 * 109 * 109 * 2), Some(1), Some("half"), Some("ResourceExhaustedError")),
            ("ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[500,17,17,4032] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc.", Some(500 * 17 * 17 * 4032 * 4), Some(0), Some("float"), Some("ResourceExhaustedError")),
            ("ResourceExhaustedError (see above for traceback): OOM when allocating tensor of shape [563354,256] and type float", Some(563_354 * 256 * 4), None, Some("float"), Some("ResourceExhaustedError")),
            ("ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[100,4096,32]", None, None, None, Some("ResourceExhaustedError")),
            ("RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[1024,1024,1024] and type bfloat16 on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu", Some(2 * GIB), None, Some("bfloat16"), None),
            ("ResourceExhaustedError: OOM when allocating tensor with shape[4,16] and type string on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu", None, None, Some("string"), Some("ResourceExhaustedError")),
        ];
        for &(line, requested, device, dtype, exception) in cases {
            let f = decode(&[line]).expect(line);
            assert_eq!(f.kind, Kind::TfOom);
            assert_eq!(f.era, Some(Era::OpKernel));
            assert_eq!(f.sizes.requested_bytes, requested, "{line}");
            assert_eq!(f.device, device, "{line}");
            assert_eq!(f.facts.get("dtype").map(String::as_str), dtype, "{line}");
            assert_eq!(f.exception.as_deref(), exception, "{line}");
        }
        let cpu = decode(&[cases[6].0]).unwrap();
        assert_eq!(cpu.backend.as_deref(), Some("cpu"));
        assert_eq!(cpu.facts["allocator"], "cpu");
        let string = decode(&[cases[7].0]).unwrap();
        assert!(string.notes[0].text.contains("string"));
    }

    #[test]
    fn dtype_sizes() {
        for (name, bytes) in [
            ("float", 4),
            ("half", 2),
            ("bfloat16", 2),
            ("double", 8),
            ("int32", 4),
            ("int64", 8),
            ("uint8", 1),
            ("int8", 1),
            ("bool", 1),
            ("complex64", 8),
            ("complex128", 16),
        ] {
            assert_eq!(dtype_size(name), Some(bytes), "{name}");
        }
        assert_eq!(dtype_size("string"), None);
        assert_eq!(dtype_size("resource"), None);
        assert_eq!(elements("[]"), Some(1));
        assert_eq!(elements("[3, 4]"), Some(12));
        assert_eq!(elements("[?,4]"), None);
        assert_eq!(elements("[4294967296,4294967296,2]"), None);
    }

    #[test]
    fn op_requires_log_line_is_marked_for_folding() {
        let f = decode(&["2023-03-02 14:21:07.562051: W tensorflow/core/framework/op_kernel.cc:1780] OP_REQUIRES failed at conv_ops.cc:1068 : RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[32,64,512,512] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"]).unwrap();
        assert_eq!(f.facts["op_requires"], "true");
        assert_eq!(f.device, Some(0));
    }

    /// TensorFlow before 1.0 named no allocator in the BFC warning
    /// (fixtures/wild/2101.txt); the request is read in both forms.
    #[test]
    fn bfc_warning_before_1_0_names_no_allocator() {
        let f = decode(&["W tensorflow/core/common_runtime/bfc_allocator.cc:271] Ran out of memory trying to allocate 220.5KiB.  See logs for memory state."]).unwrap();
        assert_eq!(f.kind, Kind::TfOom);
        assert_eq!(f.era, Some(Era::BfcAllocator));
        assert_eq!(f.sizes.requested_bytes, Some(225_792));
        let named = decode(&["W tensorflow/core/common_runtime/bfc_allocator.cc:424] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.00GiB (rounded to 2147483648).  Current allocation summary follows."]).unwrap();
        assert_eq!(named.sizes.requested_bytes, Some(2_147_483_648));
        assert_eq!(named.device, Some(0));
        // A sentence that only contains the words is not the warning.
        assert!(decode(&["The worker Ran out of memory trying to allocate buffers."]).is_none());
    }

    #[test]
    fn eigen_allocator_is_an_oom() {
        let f = decode(&[": F tensorflow/core/common_runtime/gpu/gpu_device.cc:103] EigenAllocator for GPU ran out of memory when allocating 0. See error logs for more detailed info."]).unwrap();
        assert_eq!(f.kind, Kind::TfOom);
        assert_eq!(f.era.map(crate::record::Era::slug), Some("eigen_allocator"));
        assert_eq!(f.sizes.requested_bytes, Some(0));
    }

    #[test]
    fn appendix_lines_join() {
        let f = decode(&[
            "OOM when allocating tensor with shape[32,64,256,256] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
            "\t [[{{node model/conv2d/Conv2D}}]]",
            "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info. This isn't available when running in Eager mode.",
            " [Op:__inference_train_function_1234]",
            "Epoch 2/10",
        ])
        .unwrap();
        assert_eq!(f.text.lines().count(), 4);
        assert_eq!(f.facts["node"], "model/conv2d/Conv2D");
        assert_eq!(f.facts["op"], "__inference_train_function_1234");
        assert_eq!(f.sizes.requested_bytes, Some(32 * 64 * 256 * 256 * 4));
    }

    #[test]
    fn bfc_warnings() {
        let f = decode(&[
            "2023-10-02 16:36:14.402881: W tensorflow/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of memory trying to allocate 585.94MiB (rounded to 614400000)requested by op _EagerConst",
            "If the cause is memory fragmentation maybe the environment variable 'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation. ",
            "Current allocation summary follows.",
            "Current allocation summary follows.",
            "2023-10-02 16:36:14.402957: I tensorflow/tsl/framework/bfc_allocator.cc:1039] BFCAllocator dump for GPU_0_bfc",
        ])
        .unwrap();
        assert_eq!(f.era, Some(Era::BfcAllocator));
        assert_eq!(f.sizes.requested_bytes, Some(614_400_000));
        assert_eq!(f.device, Some(0));
        assert_eq!(f.facts["op"], "_EagerConst");
        assert_eq!(f.facts["hint"], "TF_GPU_ALLOCATOR=cuda_malloc_async");
        assert_eq!(f.text.lines().count(), 4);
        assert!(!f.truncated);

        let old = decode(&["2017-06-20 20:25:42.825757: W tensorflow/core/common_runtime/bfc_allocator.cc:273] Allocator (GPU_0_bfc) ran out of memory trying to allocate 286.00MiB.  Current allocation summary follows."]).unwrap();
        assert_eq!(old.sizes.requested_bytes, Some(286 << 20));
        assert!(old.notes[0].text.contains("approximate"));

        let mid = decode(&["W tensorflow/core/common_runtime/bfc_allocator.cc:419] Allocator (GPU_1_bfc) ran out of memory trying to allocate 216.8KiB (rounded to 221952).  Current allocation summary follows."]).unwrap();
        assert_eq!(mid.sizes.requested_bytes, Some(221_952));
        assert_eq!(mid.device, Some(1));

        let warning = decode(&["W tensorflow/core/common_runtime/bfc_allocator.cc:239] Allocator (GPU_0_bfc) ran out of memory trying to allocate 45.32MiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available."]).unwrap();
        assert_eq!(warning.kind, Kind::TfAllocatorWarning);
        assert_eq!(warning.category, crate::record::Category::Warning);
        // Hard-wrapped: the sentence that makes it a warning on the next line.
        let wrapped = decode(&[
            "W tensorflow/core/common_runtime/bfc_allocator.cc:239] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.14GiB with freed_by_count=0. The caller",
            "indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
        ])
        .unwrap();
        assert_eq!(wrapped.kind, Kind::TfAllocatorWarning);
    }
}
