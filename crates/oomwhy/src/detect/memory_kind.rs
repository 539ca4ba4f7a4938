//! Which memory a failed call asked for, read from the call itself.
//!
//! An out-of-memory status says that an allocation failed, not which
//! memory it was for: `cudaErrorMemoryAllocation`, `CUDA error: out of
//! memory` and `hipErrorOutOfMemory` are returned by the calls that
//! page-lock host RAM (`cudaHostAlloc`, `cudaHostRegister`,
//! `cudaMallocHost`, `cuMemHostAlloc`, `hipHostMalloc`, `hipHostRegister`,
//! PyTorch's `pin_memory()`) as well as by `cudaMalloc`; and oneAPI's
//! `OUT_OF_RESOURCES` at a launch whose kernel declares work-group local
//! memory is that memory's per-work-group limit. The rule: the failing
//! call decides. When the message, the innermost frames of its traceback,
//! or the writer's line that says the call failed names such a call, the
//! finding's [`fact::MEMORY`] states that memory and [`fact::CALL`] the
//! call; a finding that already states its memory keeps it.
//!
//! Read once per finding after its traceback and nearby lines are
//! attached (the scanner calls [`settle`] as it hands findings out).

use crate::constant_regex;
use crate::record::{fact, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

/// [`fact::MEMORY`] of an allocation that page-locks (pins) host RAM.
pub const PINNED_HOST: &str = "pinned host";
/// [`fact::MEMORY`] of a kernel's per-work-group local (shared) memory.
pub const WORK_GROUP_LOCAL: &str = "work-group local";

/// The calls that allocate or register page-locked host memory.
fn pinning_call() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r"\b(cudaHostRegister|cudaHostAlloc|cudaMallocHost|cuMemHostAlloc|cuMemHostRegister(?:_v2)?|cuMemAllocHost(?:_v2)?|hipHostRegister|hipHostMalloc|hipHostAlloc|hipMallocHost|pin_memory)\b",
        )
    })
}

/// A writer's line that says the call failed: the call, then within the
/// same clause `returns`, `failed`, `error` or `out of memory`.
fn failed_after() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r"(?i)^[^.;]{0,60}?\b(?:return(?:s|ed)?|fail(?:s|ed)?|error|out of memory)\b",
        )
    })
}

/// Work-group local memory in SYCL and OpenCL kernels.
fn local_memory() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r"\b(?:work_group_static|local_accessor|group_local_memory(?:_for_overwrite)?|__local)\b",
        )
    })
}

/// The pinning call the finding shows failing, if any.
fn pinning_call_of(f: &Finding) -> Option<String> {
    if let Some(c) = pinning_call().captures(&f.text) {
        return Some(c[1].to_string());
    }
    // The innermost frames: the call the exception came out of.
    if let Some(tb) = &f.traceback {
        for frame in tb.frames.iter().rev().take(3) {
            let code = frame.code.as_deref().unwrap_or("");
            for text in [frame.function.as_str(), code] {
                if let Some(c) = pinning_call().captures(text) {
                    return Some(c[1].to_string());
                }
            }
        }
    }
    // The writer's words: `hipHostRegister returns 2`.
    f.nearby.lines().find_map(|line| {
        pinning_call().captures_iter(line).find_map(|c| {
            let m = c.get(1)?;
            failed_after()
                .is_match(&line[m.end()..])
                .then(|| m.as_str().to_string())
        })
    })
}

/// States the memory the failed call asked for (see the module's rule).
pub fn settle(f: &mut Finding) {
    if f.facts.contains_key(fact::MEMORY) {
        return;
    }
    match f.kind {
        Kind::CudaRuntimeOom | Kind::GenericOom => {
            if let Some(call) = pinning_call_of(f) {
                f.facts.insert(fact::MEMORY.into(), PINNED_HOST.into());
                f.facts.entry(fact::CALL.into()).or_insert(call);
            }
        }
        Kind::GpuRuntimeError => {
            let out_of_resources = f
                .facts
                .get(fact::ERROR_NAME)
                .is_some_and(|n| n.contains("OUT_OF_RESOURCES"));
            if out_of_resources
                && (local_memory().is_match(&f.nearby) || local_memory().is_match(&f.text))
            {
                f.facts.insert(fact::MEMORY.into(), WORK_GROUP_LOCAL.into());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Frame, Traceback};

    fn finding(kind: Kind, text: &str, nearby: &str) -> Finding {
        let mut f = Finding::new(kind, "t", 1, text.to_string());
        f.nearby = nearby.to_string();
        f
    }

    #[test]
    fn a_failed_host_register_is_pinned_host_memory() {
        // A posted report: the writer's line names the call, the error name follows.
        let mut f = finding(
            Kind::GenericOom,
            "hipErrorOutOfMemory",
            "On MI-25, hipMalloc is OK, but I see hipHostRegister returns 2 which by definition appears to be:",
        );
        settle(&mut f);
        assert_eq!(f.facts[fact::MEMORY], PINNED_HOST);
        assert_eq!(f.facts[fact::CALL], "hipHostRegister");
    }

    #[test]
    fn pin_memory_in_the_innermost_frame_is_pinned_host_memory() {
        let mut f = finding(
            Kind::CudaRuntimeOom,
            "RuntimeError: CUDA error: out of memory",
            "",
        );
        f.traceback = Some(Traceback {
            frames: vec![Frame {
                file: "/usr/lib/python3/dist-packages/torch/utils/data/_utils/pin_memory.py".into(),
                line: 58,
                function: "pin_memory".into(),
                code: Some("return data.pin_memory(device)".into()),
            }],
            omitted_frames: 0,
            chained: Vec::new(),
        });
        settle(&mut f);
        assert_eq!(f.facts[fact::MEMORY], PINNED_HOST);
        assert_eq!(f.facts[fact::CALL], "pin_memory");
    }

    #[test]
    fn a_pinning_word_elsewhere_does_not_decide() {
        // A setting the writer lists is not the call that failed.
        let mut f = finding(
            Kind::CudaRuntimeOom,
            "RuntimeError: CUDA error: out of memory",
            "train_loader = DataLoader(ds, batch_size=64, pin_memory=True)",
        );
        settle(&mut f);
        assert!(!f.facts.contains_key(fact::MEMORY));
    }

    #[test]
    fn out_of_resources_with_work_group_local_memory() {
        let mut f = finding(
            Kind::GpuRuntimeError,
            "what():  level_zero backend failed with error: 40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)",
            "`syclex::work_group_static<char[64000]> lsm;`",
        );
        f.facts.insert(
            fact::ERROR_NAME.into(),
            "UR_RESULT_ERROR_OUT_OF_RESOURCES".into(),
        );
        settle(&mut f);
        assert_eq!(f.facts[fact::MEMORY], WORK_GROUP_LOCAL);
        // Without the kernel's local memory in sight it stays unsaid.
        let mut g = finding(Kind::GpuRuntimeError, &f.text.clone(), "");
        g.facts.insert(
            fact::ERROR_NAME.into(),
            "UR_RESULT_ERROR_OUT_OF_RESOURCES".into(),
        );
        settle(&mut g);
        assert!(!g.facts.contains_key(fact::MEMORY));
    }
}
