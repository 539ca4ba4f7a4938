//! Long-form explanations, one Markdown file per code, compiled into the
//! binary (the `rustc --explain` model). `oomwhy explain CODE` prints them.

use crate::error::Error;

macro_rules! explanations {
    ($($code:ident = $slug:literal,)*) => {
        /// A verdict code: why a finding happened. Written into JSON as its
        /// slug ([`Code::as_str`]); `oomwhy explain SLUG` prints its page.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $(#[doc = concat!("`", $slug, "`")] $code,)*
        }

        impl Code {
            /// Every verdict code, in documentation order.
            pub const ALL: &'static [Code] = &[$(Code::$code),*];

            /// The stable slug of this code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$code => $slug,)*
                }
            }
        }

        /// Every verdict code the explainer can emit, as slugs.
        pub const VERDICT_CODES: &[&str] = &[$($slug),*];

    };
}

// The one list of verdict codes (the kinds are listed once, in `record::Kind`).
explanations! {
    InconsistentNumbers = "inconsistent_numbers",
    SystemMemoryFallback = "system_memory_fallback",
    RequestExceedsCapacity = "request_exceeds_capacity",
    MemoryLimit = "memory_limit",
    FreeExceedsRequest = "free_exceeds_request",
    OtherProcesses = "other_processes",
    MemoryOutsidePytorch = "memory_outside_pytorch",
    MemoryOutsideProcess = "memory_outside_process",
    Fragmentation = "fragmentation",
    CudaGraphPools = "cuda_graph_pools",
    NonPytorchMemory = "non_pytorch_memory",
    CapacityExhausted = "capacity_exhausted",
    NumbersInconclusive = "numbers_inconclusive",
    FiguresMissing = "figures_missing",
    MemoryGrowth = "memory_growth",
    FailsAtStart = "fails_at_start",
    LateFailure = "late_failure",
    OutsideAllocatorOom = "outside_allocator_oom",
    AsyncErrorLocation = "async_error_location",
    NativeFailFast = "native_fail_fast",
    MpsHighWatermark = "mps_high_watermark",
    UnifiedMemoryExhausted = "unified_memory_exhausted",
    HostRamExhausted = "host_ram_exhausted",
    HostMemoryLimit = "host_memory_limit",
    JvmLimit = "jvm_limit",
    KilledBySigkill = "killed_by_sigkill",
    XlaPreallocation = "xla_preallocation",
    XlaHostMemoryLimit = "xla_host_memory_limit",
    KvCacheTooSmall = "kv_cache_too_small",
    MaskedOom = "masked_oom",
    IndexOutOfRange = "index_out_of_range",
    DeviceAssert = "device_assert",
    KernelFault = "kernel_fault",
    ArchMismatch = "arch_mismatch",
    CollateralTimeout = "collateral_timeout",
    CollateralFailure = "collateral_failure",
    CollectiveTimeout = "collective_timeout",
    NcclFailure = "nccl_failure",
    LauncherReport = "launcher_report",
    XidError = "xid_error",
    HardwareFault = "hardware_fault",
    NativeAccessViolation = "native_access_violation",
    PagingFileTooSmall = "paging_file_too_small",
    AllocationFailed = "allocation_failed",
    SharedMemoryLimit = "shared_memory_limit",
    DevShmFull = "dev_shm_full",
    NativeCrash = "native_crash",
    SnapshotFragmentation = "snapshot_fragmentation",
    SnapshotShortage = "snapshot_shortage",
    SnapshotOtherStream = "snapshot_other_stream",
    SnapshotPrivatePool = "snapshot_private_pool",
    SnapshotPendingFree = "snapshot_pending_free",
    SnapshotOversizeRule = "snapshot_oversize_rule",
    SnapshotNoOomEvent = "snapshot_no_oom_event",
    GpuStatusCode = "gpu_status_code",
    PlatformLimit = "platform_limit",
}

// `ENGLISH_PAGES` and `CHINESE_PAGES`: every file in explanations/, split
// into its two languages by the crate's build.rs (`page_halves.rs`), so a
// page needs no line of its own (tests/integration/codes.rs and i18n.rs
// check that every code has a page, and that every page has its code).
include!(concat!(env!("OUT_DIR"), "/pages.rs"));

/// The page of `code` in `pages` (sorted by code).
fn page_in(pages: &'static [(&'static str, &'static str)], code: &str) -> Option<&'static str> {
    pages
        .binary_search_by(|(c, _)| (*c).cmp(code))
        .ok()
        .map(|i| pages[i].1)
}

/// Every code with its Markdown text, in documentation order: the kinds,
/// then the verdicts. A code without a page is left out (and fails
/// `every_code_has_an_explanation`).
pub static EXPLANATIONS: std::sync::LazyLock<Vec<(&str, &str)>> = std::sync::LazyLock::new(|| {
    crate::record::Kind::ALL
        .iter()
        .map(|kind| kind.slug())
        .chain(VERDICT_CODES.iter().copied())
        .filter_map(|code| page_in(ENGLISH_PAGES, code).map(|text| (code, text)))
        .collect()
});

/// The Chinese explanation page of a code: the part of
/// `explanations/<code>.md` after its `<!-- zh -->` line. Every page has
/// one (the build refuses a page without it); `None` for an unknown code.
pub fn chinese_page(code: &str) -> Option<&'static str> {
    page_in(CHINESE_PAGES, code)
}

/// The title of a code's Chinese page (`explain --list`, `--summary`), as
/// the English title is its English page's.
pub fn chinese_title(code: &str) -> Option<&'static str> {
    chinese_page(code).map(title)
}

/// Every Chinese page, by code.
pub fn chinese_pages() -> &'static [(&'static str, &'static str)] {
    CHINESE_PAGES
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
#[path = "page_halves.rs"]
mod page_halves;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_explanation_follows_the_template() {
        for (code, text) in EXPLANATIONS.iter() {
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

    /// Two codes with one title would read as one thing in `explain --list`.
    #[test]
    fn titles_are_unique() {
        let mut titles: Vec<_> = EXPLANATIONS.iter().map(|(_, text)| title(text)).collect();
        titles.sort_unstable();
        let before = titles.len();
        titles.dedup();
        assert_eq!(titles.len(), before, "two codes share a title");
    }

    #[test]
    fn codes_are_unique() {
        let mut codes: Vec<_> = EXPLANATIONS.iter().map(|(c, _)| *c).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), EXPLANATIONS.len());
    }

    #[test]
    fn a_page_splits_into_its_english_and_its_chinese() {
        use super::page_halves::halves;
        let page = "# x: Title\n\nWhy.\n\n<!-- zh -->\n\n# x: 标题\n\n为什么。\n";
        assert_eq!(
            halves(page).unwrap(),
            (
                "# x: Title\n\nWhy.\n".to_string(),
                "# x: 标题\n\n为什么。\n".to_string()
            )
        );
    }

    /// The build splits every page with `halves`, so a page it refuses
    /// fails the build.
    #[test]
    fn a_page_without_both_languages_is_refused() {
        use super::page_halves::halves;
        for page in [
            "# x: Title\n\nWhy.\n",
            "# x: Title\n\nWhy.\n\n<!-- zh -->\n",
            "# x: Title\n\nWhy.\n\n<!-- zh -->\n\n\n",
            "<!-- zh -->\n\n# x: 标题\n",
            "# x: Title\n<!-- zh -->\n# x: 标题\n<!-- zh -->\n# x: 标题\n",
        ] {
            assert!(halves(page).is_err(), "{page:?}");
        }
    }

    /// Every file in explanations/ is laid out one way (the English page,
    /// a blank line, `<!-- zh -->`, a blank line, the Chinese page), and
    /// the tables the build wrote are its two halves.
    #[test]
    fn every_page_file_holds_both_languages_in_one_layout() {
        use super::page_halves::{halves, CHINESE_FOLLOWS};
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/explanations");
        let mut seen = 0;
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let code = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let (english, chinese) = halves(&text).unwrap();
            assert_eq!(
                text,
                format!("{english}\n{CHINESE_FOLLOWS}\n\n{chinese}"),
                "{code}: not laid out as the English, a blank line, {CHINESE_FOLLOWS}, a blank line, the Chinese"
            );
            assert_eq!(
                page_in(ENGLISH_PAGES, &code),
                Some(english.as_str()),
                "{code}"
            );
            assert_eq!(chinese_page(&code), Some(chinese.as_str()), "{code}");
            seen += 1;
        }
        assert_eq!(seen, ENGLISH_PAGES.len());
        assert_eq!(seen, CHINESE_PAGES.len());
    }
}

#[cfg(test)]
mod example_tests {
    use super::*;

    /// The indented block under "## Example": the message the page explains.
    fn example(page: &str) -> String {
        let after = page.split("## Example").nth(1).unwrap_or("");
        let mut lines = Vec::new();
        for line in after.lines().skip_while(|l| l.trim().is_empty()) {
            match line.strip_prefix("    ") {
                Some(code) => lines.push(code.to_string()),
                None if line.trim().is_empty() && !lines.is_empty() => lines.push(String::new()),
                None => break,
            }
        }
        lines.join("\n")
    }

    /// Every page's example, run through oomwhy, produces that page's code.
    #[test]
    fn every_example_produces_its_code() {
        let mut wrong = Vec::new();
        for (code, page) in EXPLANATIONS.iter() {
            // A snapshot page's example is what oomwhy prints for a pickle,
            // not a message: tests/integration/snapshots.rs runs the generated snapshot
            // behind each of those codes.
            if code.starts_with("snapshot_") || *code == "memory_snapshot" {
                continue;
            }
            let text = example(page);
            let findings = crate::decode_str(&text);
            if !findings.iter().any(|f| f.explain.iter().any(|c| c == code)) {
                wrong.push(*code);
            }
        }
        assert!(
            wrong.is_empty(),
            "examples that do not produce their code: {wrong:?}"
        );
    }
}
