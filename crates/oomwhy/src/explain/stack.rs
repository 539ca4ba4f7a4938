//! What the general grammar's findings owe to the stack that printed them:
//! a remedy the message names itself leads the fixes, and the advice to
//! make the work smaller speaks of that stack (PaddlePaddle, a TPU, an
//! Intel or Apple GPU, an unnamed back end), never of NVIDIA's GPU
//! generations where the finding shows no NVIDIA GPU.

use super::catalogue::FixSpec;
use super::common::{fact, fix, FIND_OVERSIZED_TENSOR, SMALLER_WORKLOAD};
use super::setting::{on_tpu, Vendor};
use crate::i18n::Said;
use crate::record::{fact, Era, Finding, Fix};
use crate::say;

/// Words that open a program's own advice inside its message ("Please try
/// lowering max_num_seqs ...", "Try increasing gpu_memory_utilization ...",
/// "consider using --max-model-len ..."): the sentence they open is the
/// remedy. Case matters: "Try" opens a sentence, "try setting" follows a
/// condition ("If ... is large try setting ...").
const REMEDY_OPENERS: &[&str] = &[
    "Please try ",
    "please try ",
    "Please consider ",
    "please consider ",
    "You can try ",
    "you can try ",
    "You may try ",
    "you may try ",
    "Try ",
    "try setting ",
    "try reducing ",
    "try lowering ",
    "try increasing ",
    "Consider ",
    "consider ",
];

/// The remedy a message names itself, as the message words it: from its
/// opening words to the end of their sentence. `None` where the message
/// names none.
pub(super) fn named_remedy(text: &str) -> Option<String> {
    let start = REMEDY_OPENERS
        .iter()
        .filter_map(|opener| {
            text.match_indices(opener)
                // "Try" inside a word ("Retry ") is not an opener.
                .find(|(i, _)| {
                    text[..*i]
                        .chars()
                        .next_back()
                        .is_none_or(|c| !c.is_alphanumeric())
                })
                .map(|(i, _)| i)
        })
        .min()?;
    let rest = &text[start..];
    // The sentence ends at a full stop followed by a space or the end, or
    // at the end of the line; a dot inside a name (torch.cuda) does not.
    let mut end = rest.find('\n').unwrap_or(rest.len());
    for (i, _) in rest.match_indices('.') {
        if i >= end {
            break;
        }
        let after = rest[i + 1..].chars().next();
        if after.is_none_or(char::is_whitespace) {
            end = i + 1;
            break;
        }
    }
    let remedy = rest[..end].trim();
    // A remedy names something to do: a few words at least.
    (remedy.split_whitespace().count() >= 3).then(|| remedy.to_string())
}

/// The message's own remedy, quoted.
const OWN_REMEDY: FixSpec = FixSpec::new(
    "do-what-the-message-suggests",
    "Do what the message itself suggests",
    "照报错自己给出的办法做",
)
.sources(&["the failing program's own message"]);

/// The fix that quotes the message's remedy.
pub(super) fn own_remedy_fix(f: &Finding) -> Option<Fix> {
    let remedy = named_remedy(&f.text)?;
    let who = fact(f, fact::REPORTED_BY)
        .filter(|r| !r.ends_with("Error"))
        .map(crate::i18n::reporter::said)
        .unwrap_or_else(|| say!(en: "the program", zh: "程序"));
    Some(fix(
        &OWN_REMEDY,
        crate::say_parts!(
            en: "The message names its own remedy: “{remedy}” It comes from {who}, which knows which of its settings sizes this memory, so try that first, with the option names it gives.",
            zh: "报错自己给出了办法：“{remedy}” 这是{who}自己的建议，它知道是哪个设置决定了这部分显存，所以先照做，用它给出的选项名。",
            remedy = Said::same(remedy),
            who = who
        ),
    ))
}

/// OpenVINO's GPU plugin sizes buffers of a dynamic-shape model from the
/// shapes' upper bounds: an unbounded dimension makes the impossible size,
/// and static or bounded shapes are the fix.
fn openvino_wrong_size_fix(f: &Finding) -> Option<Fix> {
    let openvino = fact(f, fact::REPORTED_BY).is_some_and(|r| r.contains("OpenVINO"))
        || f.text.contains("OpenVINO")
        || f.text.contains("intel_gpu");
    openvino.then(|| {
        fix(
            &FIND_OVERSIZED_TENSOR,
            say!(
                en: "Look for a dynamic dimension: with an unbounded one (-1) the GPU plugin can size a buffer from an overflowed upper bound. Reshape the model to static shapes before compiling it (model.reshape([1, 3, 224, 224]) with your real sizes), or give each dynamic dimension an upper bound (ov.Dimension(1, 512)); check also the input shapes you pass. Memory settings cannot help here.",
                zh: "找动态维度：维度无上界（-1）时，GPU 插件可能按溢出的上界去分配缓冲区。编译模型之前把它 reshape 成静态形状（model.reshape([1, 3, 224, 224])，换成你的实际大小），或者给每个动态维度设上界（ov.Dimension(1, 512)）；也检查一下你传进去的输入形状。这种情况调显存的设置都没用。"
            ),
        )
    })
}

/// The message's own remedy where the requested size is wrong: it comes
/// second, for once the size is right.
fn own_remedy_after_wrong_size(f: &Finding) -> Option<Fix> {
    let remedy = named_remedy(&f.text)?;
    Some(fix(
        &OWN_REMEDY,
        crate::say_parts!(
            en: "The message names its own remedy: “{remedy}” It cannot make room for a size no GPU holds; try it once the size is right, if memory is still short.",
            zh: "报错自己给出了办法：“{remedy}” 但它腾不出任何 GPU 都放不下的空间；等大小改对之后如果显存仍然不够，再照做。",
            remedy = Said::same(remedy)
        ),
    ))
}

/// The general workload fix's ids: a named remedy replaces them, as the
/// program's own levers are more precise than a general recipe.
const GENERAL_WORKLOAD_IDS: &[&str] = &["make-workload-smaller", "make-work-smaller"];

/// Leads with the message's own remedy where it names one, without the
/// general recipe beside it; otherwise puts the workload fix in the words
/// of the finding's stack.
pub(super) fn fit_fixes_to_stack(f: &Finding, out: &mut Vec<Fix>) {
    // A size no GPU can hold is wrong, and no remedy of the message's can
    // make room for it: finding that size leads, the remedy follows.
    let wrong_size = out.iter().any(|x| x.id == FIND_OVERSIZED_TENSOR.id);
    if wrong_size {
        if let Some(own) = openvino_wrong_size_fix(f) {
            for x in out.iter_mut().filter(|x| x.id == FIND_OVERSIZED_TENSOR.id) {
                *x = own.clone();
            }
        }
        if let Some(remedy) = own_remedy_after_wrong_size(f) {
            out.push(remedy);
        }
        return;
    }
    if let Some(remedy) = own_remedy_fix(f) {
        out.retain(|x| !GENERAL_WORKLOAD_IDS.contains(&x.id.as_str()));
        out.insert(0, remedy);
        return;
    }
    for x in out.iter_mut() {
        if x.id == SMALLER_WORKLOAD.id && x.how.contains("Ampere") {
            if let Some(own) = stack_workload_fix(f) {
                *x = own;
            }
        }
    }
}

/// True when the finding shows an NVIDIA GPU: its back end, CUDA in the
/// message, or NVIDIA's tools.
fn shows_nvidia(f: &Finding) -> bool {
    Vendor::of(f) == Vendor::Nvidia
        || ["CUDA", "cuda", "NVIDIA", "nvidia", "cuBLAS", "cuDNN"]
            .iter()
            .any(|w| f.text.contains(w))
}

/// The workload fix in the stack's words; `None` where the general text
/// (with its note on NVIDIA's bfloat16) fits: an NVIDIA GPU, or nothing
/// that names another stack.
fn stack_workload_fix(f: &Finding) -> Option<Fix> {
    let how = if f.era == Some(Era::Paddle) {
        say!(
            en: "Halve the batch size (the batch_size your DataLoader or reader gives the model), shorten sequences or lower the resolution, train with mixed precision (paddle.amp.auto_cast with float16, or bfloat16 where the GPU supports it), or use a smaller model.",
            zh: "把 batch size 减半（DataLoader 或 reader 交给模型的 batch_size），缩短序列或降低分辨率，用混合精度训练（paddle.amp.auto_cast 配合 float16，GPU 支持时也可用 bfloat16），或者换更小的模型。"
        )
    } else if shows_nvidia(f) {
        return None;
    } else if on_tpu(f) {
        say!(
            en: "Halve the batch size, shorten sequences or lower the resolution, keep weights and activations in bfloat16 (a TPU's native low precision), or use a smaller model.",
            zh: "把 batch size 减半，缩短序列或降低分辨率，权重和激活值用 bfloat16（TPU 原生支持的低精度），或者换更小的模型。"
        )
    } else {
        // Which precisions the stack and the device offer is theirs to
        // say: no one vendor's GPU generation is named.
        say!(
            en: "Halve the batch size, shorten sequences or lower the resolution, use a lower precision where the framework and this device support it (float16 or bfloat16; a quantised model for inference), or a smaller model.",
            zh: "把 batch size 减半，缩短序列或降低分辨率，在框架和这个设备支持的前提下用更低的精度（float16 或 bfloat16；推理时可用量化模型），或者换更小的模型。"
        )
    };
    Some(fix(&SMALLER_WORKLOAD, how))
}

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[OWN_REMEDY];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::test_support::fix_ids;

    /// vLLM's sampler warm-up (fixtures/wild/1833.txt, its second error):
    /// the message names its remedy, which leads, quoted with its option
    /// names, and no general training recipe stands beside it.
    #[test]
    fn a_message_s_own_remedy_leads() {
        let paste = include_str!("../../../../fixtures/wild/1833.txt");
        let findings = crate::decode_str(paste);
        let warmup = findings
            .iter()
            .find(|f| f.text.contains("warming up sampler"))
            .expect("the sampler's warm-up error");
        let fixes = &warmup.diagnosis.fixes;
        assert_eq!(fixes[0].id, "do-what-the-message-suggests");
        assert!(
            fixes[0]
                .how
                .contains("lowering max_num_seqs or gpu_memory_utilization"),
            "{}",
            fixes[0].how
        );
        for x in fixes {
            assert!(!x.how.contains("Ampere"), "{}: {}", x.id, x.how);
            assert!(!GENERAL_WORKLOAD_IDS.contains(&x.id.as_str()), "{}", x.id);
        }
    }

    /// The remedy is the sentence its opener starts, up to a full stop
    /// that ends it (not a dot inside a name) or the line's end; an opener
    /// inside a word, or fewer than three words, is none.
    #[test]
    fn the_remedy_is_one_sentence_of_the_message() {
        // vLLM's message (fixtures/wild/1833.txt).
        assert_eq!(
            named_remedy("RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering max_num_seqs or gpu_memory_utilization when initializing the engine.").as_deref(),
            Some("Please try lowering max_num_seqs or gpu_memory_utilization when initializing the engine.")
        );
        // A dot inside a name does not end the sentence; a line end does.
        assert_eq!(
            named_remedy("out of memory. Try calling torch.cuda.empty_cache() first\nnext line")
                .as_deref(),
            Some("Try calling torch.cuda.empty_cache() first")
        );
        // "Retry" holds "try" but opens nothing; two words are no remedy.
        assert_eq!(named_remedy("cudaMalloc Retry failed: out of memory"), None);
        assert_eq!(named_remedy("out of memory. Try again."), None);
        assert_eq!(
            named_remedy("out of memory. Try again later.").as_deref(),
            Some("Try again later.")
        );
    }

    /// PaddlePaddle's own message (fixtures/wild/1932.txt): the workload
    /// fix speaks of Paddle's mixed precision, never of NVIDIA's Ampere.
    #[test]
    fn paddle_s_workload_fix_is_paddle_s() {
        let f = &crate::decode_str(include_str!("../../../../fixtures/wild/1932.txt"))[0];
        let workload = f
            .diagnosis
            .fixes
            .iter()
            .find(|x| x.id == SMALLER_WORKLOAD.id)
            .expect("a workload fix");
        assert!(
            workload.how.contains("paddle.amp.auto_cast"),
            "{}",
            workload.how
        );
        assert!(!workload.how.contains("Ampere"), "{}", workload.how);
    }

    /// A finding that shows an NVIDIA GPU keeps the general text with its
    /// note on bfloat16 (a CUDA runtime error, a real message form); one
    /// that shows none gets the neutral text (DirectML on Windows,
    /// fixtures/status_directml_e_outofmemory.log).
    #[test]
    fn only_nvidia_findings_hear_of_ampere() {
        let directml = include_str!("../../../../fixtures/status_directml_e_outofmemory.log");
        let f = &crate::decode_str(directml)[0];
        for x in &f.diagnosis.fixes {
            assert!(!x.how.contains("Ampere"), "{}: {}", x.id, x.how);
        }
        assert!(fix_ids(directml).contains(&SMALLER_WORKLOAD.id.to_string()));
    }
}
