//! Turns a record into an explanation: derived numbers, verdicts with the
//! reasoning spelled out, fixes that fit the message's era, and the meaning of
//! every field as the user's PyTorch version uses it.
//!
//! Each kind is explained by its own [`Explain`] implementation in the
//! module named like its detector; [`explainer`] maps every kind to it.
//! Every threshold a verdict uses is a named constant in `thresholds.rs`
//! (stated in README.md "Verdicts and their thresholds"). Diagnostics pasted
//! alongside (nvidia-smi, `torch.cuda.memory_summary()`, within 500 lines of
//! the error; see `diagnostics.rs`) are weighed in `pasted.rs`: they
//! stand in for a missing process list, back `fragmentation`, and add their
//! peaks and retries to the main verdict's detail.

mod catalogue;
mod cluster;
mod common;
mod cuda;
mod cudnn;
mod cupy;
mod disguised;
pub mod docs;
mod driver_log;
mod fixes;
mod generic;
mod gpu_crash;
mod gpu_lost;
mod grammar;
mod host;
mod inference;
mod jvm;
mod levers;
mod limits;
mod mps;
mod nccl;
mod pasted;
mod platform;
pub(crate) mod setting;
mod signal;
mod snapshot;
mod stack;
mod status;
mod tensorflow;
mod tf_warning;
mod thresholds;
mod toolchain;
mod torch;
mod windows;
mod xid;
mod xla;

use crate::i18n::Said;
use crate::record::{Diagnosis, Finding, Fix, Kind, Verdict};
use common::{context_verdicts, tolerance};
use thresholds::{GROWTH_MIN, GROWTH_STEP_DIVISOR, OUTSIDE_CARD_DIVISOR, OUTSIDE_MIN};

pub use common::FieldRow;
pub(crate) use fixes::title_zh as fix_title_zh;

/// Every verdict code the explainer can give (see [`docs`]); a code is never
/// removed or renamed, only retired with a note in its explanation.
pub use docs::{Code, VERDICT_CODES};

/// How one kind of finding is explained. Each kind has its own implementation
/// in the module named like its detector (`detect/nccl.rs` → `explain/nccl.rs`).
trait Explain: Sync {
    /// A one-line statement of what happened, in both languages.
    fn headline(&self, f: &Finding) -> Said;

    /// The stated and derived numbers, each with what it means here.
    fn field_rows(&self, _f: &Finding) -> Vec<FieldRow> {
        Vec::new()
    }

    /// Conclusions, most important first; `d` holds the derived numbers.
    fn verdicts(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Verdict>);

    /// Fixes, most effective first; `d.verdicts` is filled.
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>);
}

/// The explanation of each kind. No wildcard arm: a new kind does not compile
/// until its explanation exists.
fn explainer(kind: Kind) -> &'static dyn Explain {
    match kind {
        Kind::TorchAllocatorOom => &torch::TorchAllocatorOom,
        Kind::CudaRuntimeOom => &cuda::CudaRuntimeOom,
        Kind::IllegalMemoryAccess => &cuda::IllegalMemoryAccess,
        Kind::WindowsFailFast => &windows::WindowsFailFast,
        Kind::MpsOom => &mps::MpsOom,
        Kind::HostOom => &host::HostOom,
        Kind::HostOomKilled => &host::HostOomKilled,
        Kind::TfOom => &tensorflow::TfOom,
        Kind::XlaOom => &xla::XlaOom,
        Kind::CupyOom => &cupy::CupyOom,
        Kind::KvCacheOom => &inference::KvCacheOom,
        Kind::LibraryAllocFailed => &disguised::LibraryAllocFailed,
        Kind::NcclOom => &nccl::NcclOom,
        Kind::AllocatorAssert => &disguised::AllocatorAssert,
        Kind::DeviceNotReady => &disguised::DeviceNotReady,
        Kind::DeviceSideAssert => &gpu_crash::DeviceSideAssert,
        Kind::MisalignedAddress => &gpu_crash::MisalignedAddress,
        Kind::LaunchFailure => &gpu_crash::LaunchFailure,
        Kind::NoKernelImage => &gpu_crash::NoKernelImage,
        Kind::NcclError => &nccl::NcclError,
        Kind::NcclTimeout => &nccl::NcclTimeout,
        Kind::ProcessGroupAborted => &nccl::ProcessGroupAborted,
        Kind::ChildFailed => &nccl::ChildFailed,
        Kind::Xid => &xid::Xid,
        Kind::WindowsAccessViolation => &windows::WindowsAccessViolation,
        Kind::WindowsPagingFile => &windows::WindowsPagingFile,
        Kind::GenericOom => &generic::GenericOom,
        Kind::FatalSignal => &signal::FatalSignal,
        Kind::MemorySnapshot => &snapshot::MemorySnapshot,
        Kind::TfAllocatorWarning => &tf_warning::TfAllocatorWarning,
        Kind::TritonOutOfResources => &toolchain::TritonOutOfResources,
        Kind::CudnnNotSupported => &cudnn::CudnnNotSupported,
        Kind::GpuFallenOffBus => &gpu_lost::GpuFallenOffBus,
        Kind::PtxasAllocFailure => &toolchain::PtxasAllocFailure,
        Kind::GpuRuntimeError => &status::GpuRuntimeError,
    }
}

/// The explanation of one finding: its kind's, except where the text
/// shows a resource the kind's explainer does not cover (a stream
/// executor's pinned host memory, read by the generic grammar).
fn explainer_of(f: &Finding) -> &'static dyn Explain {
    if f.kind == Kind::GenericOom && xla::pinned_host_alloc(f) {
        return &xla::PinnedHostAlloc;
    }
    // The failing call pins host memory (detect/memory_kind.rs).
    if matches!(f.kind, Kind::GenericOom | Kind::CudaRuntimeOom)
        && f.facts.get(crate::record::fact::MEMORY).map(String::as_str)
            == Some(crate::detect::memory_kind::PINNED_HOST)
    {
        return &host::PinnedHostCall;
    }
    explainer(f.kind)
}

/// Every family's fixes (the catalogue, see `catalogue.rs`): a new family's
/// `FIXES` goes here with its arm in [`explainer`].
pub(crate) const ALL_FIXES: &[&[catalogue::FixSpec]] = &[
    common::FIXES,
    cuda::FIXES,
    cudnn::FIXES,
    cupy::FIXES,
    disguised::FIXES,
    driver_log::FIXES,
    generic::FIXES,
    gpu_crash::FIXES,
    gpu_lost::FIXES,
    host::FIXES,
    cluster::FIXES,
    jvm::FIXES,
    inference::FIXES,
    levers::FIXES,
    limits::FIXES,
    mps::FIXES,
    nccl::FIXES,
    signal::FIXES,
    snapshot::FIXES,
    stack::FIXES,
    status::FIXES,
    tensorflow::FIXES,
    tf_warning::FIXES,
    toolchain::FIXES,
    torch::FIXES,
    windows::FIXES,
    xid::FIXES,
    xla::FIXES,
];

/// What PyTorch reserved but no tensor used, and what that means at the
/// failure; `None` for a memory snapshot, whose own sections state the
/// holes block by block (and one without an OOM has no failure to speak of).
pub fn reserved_gap(f: &Finding) -> Option<Said> {
    if f.kind == Kind::MemorySnapshot {
        return None;
    }
    torch::reserved_gap(f)
}

/// A one-line statement of what happened.
pub fn headline(f: &Finding) -> String {
    headline_said(f).en
}

/// The headline in both languages; the Chinese is empty where the family
/// has not written it next to its English yet.
pub fn headline_said(f: &Finding) -> Said {
    if let Some(headline) = grammar::headline(f) {
        return headline;
    }
    explainer_of(f).headline(f)
}

/// Rows for the stated and derived numbers, in reading order.
pub fn field_rows(f: &Finding) -> Vec<FieldRow> {
    if let Some(rows) = grammar::field_rows(f) {
        return rows;
    }
    explainer_of(f).field_rows(f)
}

/// Fills in `diagnosis` and `explain` for every finding. Findings are
/// explained together because repeated OOMs say more than one alone.
pub fn explain_all(findings: &mut [Finding]) {
    for i in 0..findings.len() {
        let growth = memory_growth(&findings[..i], &findings[i]);
        let finding = &mut findings[i];
        finding.diagnosis = diagnose(finding, growth);
        finding.explain = explain_codes(finding);
        answer(finding);
    }
}

/// Writes the headline and the meaning of every number into the record,
/// so that JSON and Python carry what the text shows. Needs the derived
/// numbers of the diagnosis.
pub(crate) fn answer(finding: &mut Finding) {
    let headline = headline_said(finding);
    finding.diagnosis.headline = headline.en;
    finding.diagnosis.headline_zh = (!headline.zh.is_empty()).then_some(headline.zh);
    finding.diagnosis.fields = field_rows(finding);
}

/// Explains `finding` as [`explain_all`] would if `earlier` were the findings
/// before it, for findings that arrive one at a time. Only earlier findings
/// of the same kind, device and rank matter (the last few are enough).
pub fn explain_after(earlier: &[Finding], finding: &mut Finding) {
    let growth = memory_growth(earlier, finding);
    finding.diagnosis = diagnose(finding, growth);
    finding.explain = explain_codes(finding);
    answer(finding);
}

/// Explains one finding on its own.
pub fn explain(finding: &mut Finding) {
    explain_all(std::slice::from_mut(finding));
}

/// Growth across repeated OOMs of the same device/rank: at least two earlier
/// OOMs and allocated memory rising at each (by ≥ 5 % and ≥ 256 MiB overall).
/// Two OOMs alone can differ because batches differ; three rising ones
/// point at something that accumulates.
fn memory_growth(earlier: &[Finding], current: &Finding) -> Option<(u64, u64)> {
    let now = current.sizes.allocated_bytes?;
    let mut previous = earlier
        .iter()
        .rev()
        .filter(|e| {
            e.kind == current.kind
                && e.device == current.device
                && e.first_rank == current.first_rank
        })
        .filter_map(|e| e.sizes.allocated_bytes);
    let last = previous.next()?;
    let before_last = previous.next()?;
    // Saturating: a log can state sizes as large as u64::MAX.
    let rising = |a: u64, b: u64| b > a.saturating_add(a / GROWTH_STEP_DIVISOR);
    (rising(before_last, last) && rising(last, now) && now - before_last >= GROWTH_MIN)
        .then_some((before_last, now))
}

/// True when a message that lists processes is cut before the parts that
/// tell which of them is this process: its own line (`Including non-PyTorch
/// memory, this process has ...`) and PyTorch's figures. Whether a listed
/// process is this one is then a guess, said with "probably".
pub(super) fn cut_in_process_list(f: &Finding) -> bool {
    f.truncated
        && !f.processes.is_empty()
        && f.sizes.process_in_use_bytes.is_none()
        && f.sizes.allocated_bytes.is_none()
        && f.sizes.reserved_bytes.is_none()
}

/// The only process a cut message lists, when it holds all the memory in
/// use on the device but what is blamed as outside (`OUTSIDE_MIN` and a
/// tenth of the card): this process, which had just asked for more, then
/// holds next to nothing unless it is that process (listed under its host
/// PID in a container). Said with "probably": the part that would tell is cut.
fn only_process_is_probably_this_one(f: &Finding) -> Option<u32> {
    let [only] = f.processes.as_slice() else {
        return None;
    };
    let (total, free) = (f.sizes.total_bytes?, f.sizes.free_bytes?);
    let unlisted = total.checked_sub(free)?.saturating_sub(only.in_use_bytes);
    let accounted = unlisted < OUTSIDE_MIN || unlisted < total / OUTSIDE_CARD_DIVISOR;
    (cut_in_process_list(f) && accounted).then_some(only.pid)
}

fn diagnose(f: &Finding, growth: Option<(u64, u64)>) -> Diagnosis {
    let s = &f.sizes;
    let mut d = Diagnosis::default();
    let unallocated = s.reserved_unallocated_bytes.or(s.cached_bytes);
    d.reserved_bytes = s
        .reserved_bytes
        .or_else(|| s.allocated_bytes?.checked_add(unallocated?));
    d.reserved_unallocated_bytes =
        unallocated.or_else(|| d.reserved_bytes?.checked_sub(s.allocated_bytes?));
    let process = torch::measured_process_bytes(f);
    if let (Some(process), Some(reserved)) = (process, d.reserved_bytes) {
        d.non_pytorch_bytes = Some(process.saturating_sub(reserved));
    }
    if !f.processes.is_empty() {
        if process.is_none() {
            // In a container the own process is listed under its host PID:
            // the item that is at least what PyTorch reserved, and closest to it.
            d.probable_self_pid = match d.reserved_bytes {
                Some(reserved) => f
                    .processes
                    .iter()
                    .filter(|p| {
                        p.in_use_bytes.saturating_add(tolerance(p.in_use_bytes)) >= reserved
                    })
                    .min_by_key(|p| p.in_use_bytes)
                    .map(|p| p.pid),
                None => only_process_is_probably_this_one(f),
            };
        }
        let others: u64 = f
            .processes
            .iter()
            .filter(|p| Some(p.pid) != d.probable_self_pid)
            .map(|p| p.in_use_bytes)
            .fold(0u64, u64::saturating_add);
        d.other_processes_bytes = Some(others);
    }
    if let (Some(requested), Some(free)) = (s.requested_bytes, s.free_bytes) {
        d.shortfall_bytes = i64::try_from(i128::from(requested) - i128::from(free)).ok();
    }
    if let (Some(total), Some(free), Some(reserved)) =
        (s.total_bytes, s.free_bytes, d.reserved_bytes)
    {
        d.outside_allocator_bytes =
            i64::try_from(i128::from(total) - i128::from(free) - i128::from(reserved)).ok();
    }
    d.request_range = torch::request_range(f);
    d.verdicts = verdicts(f, &d, growth);
    d.fixes = fixes(f, &d);
    d
}

fn verdicts(f: &Finding, d: &Diagnosis, growth: Option<(u64, u64)>) -> Vec<Verdict> {
    let mut out = Vec::new();
    explainer_of(f).verdicts(f, d, &mut out);
    // A vendor's or platform's limit leads whatever the family found.
    limits::lead_verdict(f, &mut out);
    if let Some(note) = pasted::summary_note(f) {
        // The peaks and retries belong to the main memory verdict.
        const MAIN: &[Code] = &[
            Code::CapacityExhausted,
            Code::Fragmentation,
            Code::OtherProcesses,
            Code::MemoryOutsidePytorch,
            Code::MemoryOutsideProcess,
        ];
        let main = MAIN
            .iter()
            .find_map(|code| out.iter().position(|v| v.code == code.as_str()))
            .or((!out.is_empty()).then_some(0));
        if let Some(i) = main {
            let v = &mut out[i];
            v.detail = format!("{} {}", v.detail, note.en);
            // A verdict not yet written in both languages keeps its
            // catalogue Chinese, which has no room for the note.
            if let Some(zh) = &mut v.zh {
                zh.text = Said {
                    en: String::new(),
                    zh: std::mem::take(&mut zh.text),
                }
                .then(note)
                .zh;
            }
        }
    }
    context_verdicts(f, growth, &mut out);
    if f.kind != Kind::MemorySnapshot {
        // A joined snapshot's evidence first: it sees the blocks, the message only totals.
        out.splice(0..0, snapshot::joined_verdicts(f));
    }
    out
}

/// Builds the fix list for a finding whose verdicts are already in `d`.
///
/// A fix whose catalogue entry says it cannot apply to what the finding
/// ran in is withheld: the catalogue's predicates hold whatever a family
/// offers. (A test checks that no family relies on this.)
fn fixes(f: &Finding, d: &Diagnosis) -> Vec<Fix> {
    let setting = setting::Setting::of(f);
    let mut out = offered_fixes(f, d);
    out.retain(|fix| {
        fixes::spec(&fix.id).is_none_or(|spec| spec.contradiction(&setting).is_none())
    });
    out
}

/// The fixes the finding's family offers, before the catalogue's check.
pub(crate) fn offered_fixes(f: &Finding, d: &Diagnosis) -> Vec<Fix> {
    let mut out: Vec<Fix> = Vec::new();
    explainer_of(f).fixes(f, d, &mut out);
    limits::lead_fix(f, &mut out);
    common::prompt_cache_lead(f, &mut out);
    common::tensorrt_build_lead(f, &mut out);
    if f.kind != Kind::MemorySnapshot {
        out = snapshot::joined_fixes(f, d, out);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|fix| seen.insert(fix.title.clone()));
    // A fix that repeats what the paste shows was done is not offered.
    let shown = common::shown(f);
    out.retain(|fix| fixes::spec(&fix.id).is_none_or(|spec| !spec.pointless(&shown)));
    // A fix that what the paste states rules out as the first one (the
    // platform does not allow it, the job fitted before) goes after the
    // others; the order among the rest is kept.
    let not_first = |fix: &Fix| fixes::spec(&fix.id).is_some_and(|spec| spec.not_first(&shown));
    if out.iter().any(|fix| !not_first(fix)) {
        let (mut first, later): (Vec<Fix>, Vec<Fix>) =
            out.into_iter().partition(|fix| !not_first(fix));
        first.extend(later);
        out = first;
    }
    out
}

/// Codes for `oomwhy explain`: the kind first, then each verdict.
fn explain_codes(f: &Finding) -> Vec<String> {
    let mut codes = vec![f.kind.slug().to_string()];
    for v in &f.diagnosis.verdicts {
        if !codes.contains(&v.code) {
            codes.push(v.code.clone());
        }
    }
    codes
}

#[cfg(test)]
mod tests;

/// Helpers the explainers' tests share.
#[cfg(test)]
pub(crate) mod test_support {
    /// Every input among the fixtures and the real pastes of `fixtures/wild`
    /// (not the goldens beside them), with its path, for tests over all of them.
    pub(crate) fn fixture_pastes() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut out = Vec::new();
        for dir in [root.clone(), root.join("wild")] {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for path in entries.flatten().map(|e| e.path()) {
                let name = path.to_string_lossy().into_owned();
                let input = match path.extension().and_then(|e| e.to_str()) {
                    Some("log") => true,
                    // Beside the fixtures, .txt files are oomwhy's goldens.
                    Some("txt") => dir != root,
                    _ => false,
                };
                if input && !name.ends_with(".zh.txt") {
                    if let Ok(bytes) = std::fs::read(&path) {
                        out.push((name, String::from_utf8_lossy(&bytes).into_owned()));
                    }
                }
            }
        }
        out
    }

    /// The fix ids of the first finding in `text`, in order.
    pub(crate) fn fix_ids(text: &str) -> Vec<String> {
        crate::decode_str(text)[0]
            .diagnosis
            .fixes
            .iter()
            .map(|x| x.id.clone())
            .collect()
    }
}
