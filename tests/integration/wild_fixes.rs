//! Over the real-paste corpus (`fixtures/wild/`): no fix names a tool,
//! option or API that cannot apply to the finding's GPU vendor, framework,
//! inference engine, phase or PyTorch release.

use oomwhy::decode_str;
use oomwhy::record::Era;
use std::fs;

#[test]
fn no_wild_paste_gets_a_fix_that_cannot_apply() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    let mut paths: Vec<_> = fs::read_dir("fixtures/wild")
        .expect("fixtures/wild")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    paths.sort();
    for path in paths {
        let text = String::from_utf8_lossy(&fs::read(&path).unwrap()).into_owned();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for f in decode_str(&text) {
            checked += 1;
            let fixes: String = f
                .diagnosis
                .fixes
                .iter()
                .map(|x| format!("{} {}\n", x.title, x.how))
                .collect();
            let mut bad = |why: &str| wrong.push(format!("{name}: {why}"));
            let non_nvidia = matches!(
                f.backend.as_deref(),
                Some("hip" | "xpu" | "dpcpp" | "mps" | "metal" | "npu")
            ) || f.kind.slug() == "mps_oom";
            if non_nvidia {
                for nvidia in [
                    "nvidia-smi",
                    "MIG",
                    "CUDA_VISIBLE_DEVICES",
                    "PYTORCH_CUDA_ALLOC_CONF",
                ] {
                    // PyTorch's ROCm build reads PYTORCH_CUDA_ALLOC_CONF first
                    // (PYTORCH_HIP_ALLOC_CONF is its alternative), and some
                    // releases print that name in their HIP message.
                    let read_on_rocm =
                        nvidia == "PYTORCH_CUDA_ALLOC_CONF" && f.backend.as_deref() == Some("hip");
                    if fixes.contains(nvidia) && !read_on_rocm {
                        bad(&format!("{nvidia} for a {:?} GPU", f.backend));
                    }
                }
            }
            let non_torch = matches!(f.kind.slug(), "tf_oom" | "xla_oom" | "cupy_oom")
                || matches!(
                    f.era,
                    Some(Era::LlamaCpp | Era::Onnxruntime | Era::Ctranslate2 | Era::CupyOomClass)
                );
            if non_torch {
                for torch in ["torch.autocast", "torch.cuda", "torch.utils"] {
                    if fixes.contains(torch) {
                        bad(&format!("{torch} for {}", f.kind.slug()));
                    }
                }
            }
            let engine = f.traceback.as_ref().is_some_and(|tb| {
                tb.frames.iter().any(|fr| {
                    ["vllm/", "sglang/", "text_generation_server/"]
                        .iter()
                        .any(|e| fr.file.contains(e))
                })
            });
            let loading = matches!(f.phase.name.as_str(), "model_load" | "checkpoint");
            if engine || loading {
                for training in ["Reduce the batch size", "gradient checkpointing"] {
                    if fixes.contains(training) {
                        bad(&format!(
                            "training advice ({training}) for an engine or a load"
                        ));
                    }
                }
            }
            // Releases: expandable_segments is 2.1+, max_split_size_mb ≈1.10+.
            if matches!(f.era, Some(Era::Cached | Era::Reserved | Era::Paren))
                && fixes.contains("expandable_segments")
            {
                bad("expandable_segments before 2.1");
            }
            // (Named as the release to upgrade to, it is not offered.)
            let dated_before_1_10 =
                f.era == Some(Era::Cached) || f.version_hint.as_deref() == Some("PyTorch ≈1.4–1.9");
            if dated_before_1_10
                && fixes.contains("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb")
            {
                bad("max_split_size_mb before 1.10");
            }
            // Intel's XPU allocator prints the reserved form in every release
            // (PyTorch ≥ 1.10 with Intel's extension, then PyTorch from 2.4).
            let intel = matches!(f.backend.as_deref(), Some("xpu" | "dpcpp"));
            // A version hint from the exception's class (`torch.cuda.OutOfMemoryError`:
            // 1.13+) can date the form past 1.10.
            let hinted_1_10 = f
                .version_hint
                .as_deref()
                .and_then(|h| h.strip_prefix("PyTorch "))
                .and_then(|h| {
                    let mut parts = h.split(|c: char| !c.is_ascii_digit());
                    Some((
                        parts.next()?.parse::<u32>().ok()?,
                        parts.next()?.parse::<u32>().ok()?,
                    ))
                })
                .is_some_and(|release| release >= (1, 10));
            if matches!(f.era, Some(Era::Cached | Era::Reserved | Era::Paren))
                && !intel
                && !hinted_1_10
                && f.hint.is_none()
                && fixes.contains("torch.autocast(")
                && !fixes.contains("PyTorch ≥ 1.10")
                && !fixes.contains("need ≥ 1.10")
            {
                bad("torch.autocast without its release for a pre-1.10 form");
            }
        }
    }
    assert!(checked >= 200, "only {checked} findings in the corpus");
    assert!(
        wrong.is_empty(),
        "{} fixes cannot apply:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
