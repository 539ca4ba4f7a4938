//! Long-form explanations, one Markdown file per code, compiled into the
//! binary (the `rustc --explain` model). `oomwhy explain CODE` prints them.

use crate::error::Error;

macro_rules! explanations {
    (kinds: [$($kind:literal),* $(,)?], verdicts: [$($verdict:literal),* $(,)?] $(,)?) => {
        /// Every code with its Markdown text, in documentation order: the
        /// kinds, then the verdicts.
        pub static EXPLANATIONS: &[(&str, &str)] = &[
            $(($kind, include_str!(concat!("../explanations/", $kind, ".md"))),)*
            $(($verdict, include_str!(concat!("../explanations/", $verdict, ".md"))),)*
        ];

        /// Every verdict code the explainer can emit.
        pub const VERDICT_CODES: &[&str] = &[$($verdict),*];
    };
}

// The one list of codes. Kinds must match `record::Kind` (tests/codes.rs).
explanations! {
    kinds: [
        "torch_allocator_oom",
        "cuda_runtime_oom",
        "illegal_memory_access",
        "windows_fail_fast",
        "mps_oom",
        "host_oom",
        "host_oom_killed",
        "tf_oom",
        "xla_oom",
        "cupy_oom",
        "kv_cache_oom",
        "library_alloc_failed",
        "nccl_oom",
        "allocator_assert",
        "device_not_ready",
        "device_side_assert",
        "misaligned_address",
        "launch_failure",
        "no_kernel_image",
        "nccl_error",
        "nccl_timeout",
        "process_group_aborted",
        "child_failed",
        "xid",
        "windows_access_violation",
        "windows_paging_file",
        "generic_oom",
        "memory_snapshot",
    ],
    verdicts: [
        "inconsistent_numbers",
        "request_exceeds_capacity",
        "memory_limit",
        "free_exceeds_request",
        "other_processes",
        "memory_outside_pytorch",
        "fragmentation",
        "cuda_graph_pools",
        "non_pytorch_memory",
        "capacity_exhausted",
        "memory_growth",
        "fails_at_start",
        "late_failure",
        "outside_allocator_oom",
        "async_error_location",
        "native_fail_fast",
        "mps_high_watermark",
        "unified_memory_exhausted",
        "host_ram_exhausted",
        "host_memory_limit",
        "killed_by_sigkill",
        "xla_preallocation",
        "xla_host_memory_limit",
        "kv_cache_too_small",
        "masked_oom",
        "index_out_of_range",
        "device_assert",
        "kernel_fault",
        "arch_mismatch",
        "collateral_timeout",
        "collateral_failure",
        "collective_timeout",
        "nccl_failure",
        "launcher_report",
        "xid_error",
        "hardware_fault",
        "native_access_violation",
        "paging_file_too_small",
        "allocation_failed",
        "shared_memory_limit",
        "snapshot_fragmentation",
        "snapshot_shortage",
        "snapshot_other_stream",
        "snapshot_private_pool",
        "snapshot_pending_free",
        "snapshot_oversize_rule",
        "snapshot_no_oom_event",
    ],
}

/// The title of an explanation: its first line without `# code: `.
pub fn title(text: &str) -> &str {
    let first = text.lines().next().unwrap_or("");
    let first = first.trim_start_matches('#').trim();
    first.split_once(": ").map_or(first, |(_, title)| title)
}

/// Every code with its one-line title.
pub fn list() -> Vec<(&'static str, &'static str)> {
    EXPLANATIONS
        .iter()
        .map(|(code, text)| (*code, title(text)))
        .collect()
}

/// Finds the explanation for a code typed by a user: case, `-` vs `_`,
/// spaces and an `oomwhy explain` prefix do not matter, and a unique
/// prefix is enough (`frag` finds `fragmentation`).
pub fn lookup(code: &str) -> Result<(&'static str, &'static str), Error> {
    let wanted: String = code
        .trim()
        .trim_start_matches("oomwhy explain")
        .trim()
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c == '-' || c == ' ' { '_' } else { c })
        .collect();
    if let Some(hit) = EXPLANATIONS.iter().find(|(c, _)| *c == wanted) {
        return Ok(*hit);
    }
    let prefixed: Vec<_> = EXPLANATIONS
        .iter()
        .filter(|(c, _)| !wanted.is_empty() && c.starts_with(&wanted))
        .collect();
    match prefixed.as_slice() {
        [one] => Ok(**one),
        _ => Err(Error::UnknownCode {
            code: code.to_string(),
            valid: EXPLANATIONS.iter().map(|(c, _)| *c).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_explanation_follows_the_template() {
        for (code, text) in EXPLANATIONS {
            assert!(
                text.starts_with(&format!("# {code}: ")),
                "{code}: title line"
            );
            for section in [
                "## Example",
                "## Why it happens",
                "## How to fix it",
                "## Read more",
            ] {
                assert!(text.contains(section), "{code}: missing {section}");
            }
        }
    }

    #[test]
    fn lookup_is_forgiving() {
        assert_eq!(lookup("fragmentation").unwrap().0, "fragmentation");
        assert_eq!(lookup("Fragmentation").unwrap().0, "fragmentation");
        assert_eq!(lookup("frag").unwrap().0, "fragmentation");
        assert_eq!(
            lookup("torch-allocator-oom").unwrap().0,
            "torch_allocator_oom"
        );
        assert_eq!(
            lookup("oomwhy explain memory_limit").unwrap().0,
            "memory_limit"
        );
        assert!(lookup("nonsense").is_err());
        assert!(lookup("").is_err());
        // "memory_" is ambiguous.
        assert!(lookup("memory_").is_err());
    }

    #[test]
    fn codes_are_unique() {
        let mut codes: Vec<_> = EXPLANATIONS.iter().map(|(c, _)| *c).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), EXPLANATIONS.len());
    }
}
