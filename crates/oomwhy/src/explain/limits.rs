//! Limits of a vendor's runtime or platform that refuse an allocation the
//! device's memory could hold: Intel's Level Zero limit on one allocation,
//! and an AMD APU's small BIOS carve-out. Whatever family explains the
//! finding, such a limit is the verdict that leads, and its own fix comes
//! first: a smaller batch is not what the message asks for.

use super::catalogue::{Cost, FixSpec};
use super::common::{fix, verdict, GIB};
use super::docs::Code;
use super::setting::Vendor;
use crate::record::{Category, Finding, Fix, Verdict};
use crate::say;
use crate::units::format_size as fmt;

/// Level Zero's largest single allocation (a device's `maxMemAllocSize`)
/// is just under 4 GiB on Intel GPUs unless relaxed limits are asked for,
/// so a request of 4 GiB is already refused.
pub(super) const LEVEL_ZERO_SINGLE_ALLOCATION: u64 = 4 * GIB;

/// A ROCm device this small is an APU's carve-out even when nothing else
/// says APU: every discrete GPU ROCm has supported has at least 2 GiB.
pub(super) const APU_CARVE_OUT_UNNAMED_MAX: u64 = GIB;

/// Where the paste names an APU (its carve-out, UMA, an integrated Radeon),
/// a device of up to this much is that carve-out: BIOS defaults are
/// 512 MiB to 4 GiB, and a larger carve-out is a choice someone made.
pub(super) const APU_CARVE_OUT_NAMED_MAX: u64 = 4 * GIB;

/// Words that show the GPU is an APU's integrated graphics: the carve-out
/// itself, and the integrated Radeon parts' names and LLVM targets.
const APU_WORDS: &[&str] = &[
    "carveout",
    "carve-out",
    "carve out",
    "UMA",
    "APU",
    "iGPU",
    "integrated GPU",
    "integrated graphics",
    "Radeon 660M",
    "Radeon 680M",
    "Radeon 760M",
    "Radeon 780M",
    "Radeon 880M",
    "Radeon 890M",
    "Radeon 8050S",
    "Radeon 8060S",
    "gfx90c",
    "gfx1035",
    "gfx1036",
    "gfx1103",
    "gfx1150",
    "gfx1151",
];

/// A limit below the device's memory that refused the allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PlatformLimit {
    /// Intel's Level Zero: one allocation of 4 GiB or more.
    LevelZeroSingleAllocation,
    /// An AMD APU: the GPU counts only the BIOS's frame-buffer carve-out.
    ApuCarveOut,
}

impl PlatformLimit {
    pub(super) fn of(f: &Finding) -> Option<PlatformLimit> {
        let s = &f.sizes;
        match Vendor::of(f) {
            Vendor::Intel => {
                // No request printed, but the writer states that 4 GiB or
                // more was free when the device's memory was refused: the
                // memory was not used up, and one allocation over the
                // limit is what refuses with room left.
                let Some(requested) = s.requested_bytes else {
                    let refused = matches!(f.category, Category::Oom | Category::LikelyOom);
                    return s
                        .free_bytes
                        .filter(|&free| refused && free >= LEVEL_ZERO_SINGLE_ALLOCATION)
                        .map(|_| PlatformLimit::LevelZeroSingleAllocation);
                };
                // The memory itself must have room: a request larger than
                // the card, or than what was left of it, is not the limit's.
                let fits_card = s.total_bytes.is_none_or(|total| {
                    requested <= total
                        && s.allocated_bytes
                            .is_none_or(|a| a.saturating_add(requested) <= total)
                });
                let fits_free = s.free_bytes.is_none_or(|free| requested <= free);
                // A per-process limit the message states (`8.27 GiB
                // allowed`) that the request crosses is that limit's.
                let held = s.reserved_bytes.or(s.allocated_bytes).unwrap_or(0);
                let fits_allowed = s
                    .allowed_bytes
                    .is_none_or(|allowed| held.saturating_add(requested) <= allowed);
                (requested >= LEVEL_ZERO_SINGLE_ALLOCATION
                    && fits_card
                    && fits_free
                    && fits_allowed)
                    .then_some(PlatformLimit::LevelZeroSingleAllocation)
            }
            Vendor::Amd => {
                let total = s.total_bytes?;
                let named = APU_WORDS.iter().any(|w| f.text.contains(w));
                let small = total <= APU_CARVE_OUT_UNNAMED_MAX
                    || (named && total <= APU_CARVE_OUT_NAMED_MAX);
                small.then_some(PlatformLimit::ApuCarveOut)
            }
            _ => None,
        }
    }

    fn verdict(self, f: &Finding) -> Verdict {
        let s = &f.sizes;
        match self {
            PlatformLimit::LevelZeroSingleAllocation => {
                let requested = fmt(s.requested_bytes.unwrap_or(LEVEL_ZERO_SINGLE_ALLOCATION));
                let card = match (s.requested_bytes, s.total_bytes, s.free_bytes) {
                    (None, _, Some(free)) => say!(
                        en: "The message states that {free} was still free when the allocation was refused: the memory was not used up, so unless a single tensor asked for more than that, what refused it is a limit on one allocation.",
                        zh: "报错里说，分配被拒绝时还有 {free} 空闲：显存并没有用完，所以除非单个张量要的比这还多，拒绝它的是对单次分配的限制。",
                        free = fmt(free)
                    ),
                    (_, Some(total), _) => say!(
                        en: "{requested} was asked for in one piece on a GPU of {total}: the card is large enough for it.",
                        zh: "在一块 {total} 的 GPU 上一次性申请了 {requested}：这块卡本身放得下。",
                        requested = requested,
                        total = fmt(total)
                    ),
                    _ => say!(
                        en: "{requested} was asked for in one piece.",
                        zh: "一次性申请了 {requested}。",
                        requested = requested
                    ),
                };
                verdict(
                    Code::PlatformLimit,
                    say!(
                        en: "Intel's GPU runtime refuses one allocation of 4 GiB or more",
                        zh: "Intel 的 GPU 运行时拒绝 4 GiB 及以上的单次分配"
                    ),
                    card.then(say!(
                        en: "Intel's Level Zero runtime limits a single allocation to the device's maxMemAllocSize, just under 4 GiB on most Intel GPUs, unless relaxed allocation limits are requested. A smaller batch helps only as far as it brings this one tensor under 4 GiB.",
                        zh: "Intel 的 Level Zero 运行时把单次分配限制在设备的 maxMemAllocSize 以内，在大多数 Intel GPU 上略低于 4 GiB，除非显式要求放宽分配限制。减小 batch 只有在让这一个张量降到 4 GiB 以下时才有用。"
                    )),
                )
            }
            PlatformLimit::ApuCarveOut => {
                let total = fmt(s.total_bytes.unwrap_or(APU_CARVE_OUT_UNNAMED_MAX));
                verdict(
                    Code::PlatformLimit,
                    say!(
                        en: "The GPU is an APU's integrated graphics and sees only its {total} carve-out",
                        zh: "这是 APU 的集成显卡，只看得到 BIOS 划给它的 {total}",
                        total = total.clone()
                    ),
                    say!(
                        en: "The device reports {total} in all. On an AMD APU (a processor with integrated Radeon graphics) that is the frame buffer the BIOS reserves from system RAM (512 MiB by default on many machines), not the machine's memory, and ROCm counts that carve-out as the GPU's memory. The workload is not too large for the machine; the carve-out is too small for it.",
                        zh: "设备报告总共只有 {total}。在 AMD APU（集成 Radeon 显卡的处理器）上，这是 BIOS 从系统内存里划给显卡的帧缓冲区（很多机器默认 512 MiB），不是整机的内存，而 ROCm 把这块划出来的内存当作 GPU 的全部显存。不是工作量对这台机器太大，而是划给显卡的这块太小。",
                        total = total
                    ),
                )
            }
        }
    }

    fn fix(self) -> Fix {
        match self {
            PlatformLimit::LevelZeroSingleAllocation => fix(
                &RELAXED_ALLOCATION_LIMITS,
                say!(
                    en: "Set UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 in the environment before the program starts: the oneAPI runtime's Level Zero adapter then allows one allocation beyond the device's maximum. Otherwise split the work so that no single tensor reaches 4 GiB (a smaller batch or chunked computation).",
                    zh: "在程序启动前设置环境变量 UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1：oneAPI 运行时的 Level Zero 适配器就会允许超过设备上限的单次分配。否则就把工作拆开，让任何一个张量都不到 4 GiB（更小的 batch 或分块计算）。"
                ),
            ),
            PlatformLimit::ApuCarveOut => fix(
                &RAISE_APU_CARVE_OUT,
                say!(
                    en: "Raise the GPU's share of RAM in the BIOS/UEFI setup (called UMA Frame Buffer Size, iGPU Memory or VRAM size; some laptops do not offer it), to a few GiB. Whether ROCm can also use GTT (system RAM mapped for the GPU) depends on the ROCm release and the kernel; the size in this message is what it counted.",
                    zh: "在 BIOS/UEFI 设置里调大划给显卡的内存（常叫 UMA Frame Buffer Size、iGPU Memory 或 VRAM size；有些笔记本不提供这个选项），调到几 GiB。ROCm 能否再用上 GTT（映射给 GPU 的系统内存）取决于 ROCm 版本和内核；这条报错里的大小就是它实际算进去的。"
                ),
            ),
        }
    }
}

/// Intel's Level Zero adapter, relaxed (oneAPI's Unified Runtime).
const RELAXED_ALLOCATION_LIMITS: FixSpec = FixSpec::new(
    "level-zero-relaxed-allocation-limits",
    "Allow single allocations over 4 GiB",
    "允许超过 4 GiB 的单次分配",
)
.vendors(&[Vendor::Intel])
.sources(&["oneAPI Unified Runtime: Level Zero adapter (UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS)"])
.applied_when(&["ur_l0_enable_relaxed_allocation_limits=1"]);

/// The BIOS's frame buffer for an APU's integrated graphics.
const RAISE_APU_CARVE_OUT: FixSpec = FixSpec::new(
    "raise-apu-memory-carve-out",
    "Give the integrated GPU more memory in the BIOS",
    "在 BIOS 里给集成显卡多分一些内存",
)
.vendors(&[Vendor::Amd])
.cost(Cost::Free);

/// This family's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[RELAXED_ALLOCATION_LIMITS, RAISE_APU_CARVE_OUT];

/// PyTorch's own fix for the Level Zero limit, where its family offers it.
const TORCH_RELAXED_ID: &str = "xpu-relaxed-allocation-limits";

/// Puts a platform limit's verdict first, whatever the family found:
/// on an APU even a request larger than the carve-out is the carve-out's.
pub(super) fn lead_verdict(f: &Finding, out: &mut Vec<Verdict>) {
    if let Some(limit) = PlatformLimit::of(f) {
        // The limit is why memory that was free could not be had: the
        // verdicts that find no reason in the numbers are answered by it.
        const ANSWERED: &[Code] = &[Code::FreeExceedsRequest, Code::NumbersInconclusive];
        out.retain(|v| !ANSWERED.iter().any(|c| v.code == c.as_str()));
        out.insert(0, limit.verdict(f));
    }
}

/// Puts the limit's fix first: the family's own copy where it has one.
pub(super) fn lead_fix(f: &Finding, out: &mut Vec<Fix>) {
    let Some(limit) = PlatformLimit::of(f) else {
        return;
    };
    let own = out.iter().position(|x| x.id == TORCH_RELAXED_ID);
    let first = match own {
        Some(i) if limit == PlatformLimit::LevelZeroSingleAllocation => out.remove(i),
        _ => limit.fix(),
    };
    out.retain(|x| x.id != first.id);
    out.insert(0, first);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::test_support::fix_ids;

    fn first(text: &str) -> Finding {
        crate::decode_str(text).remove(0)
    }

    /// An Intel GPU (an Axolotl fine-tune on PyTorch 2.7.0+xpu, stated in
    /// prose, fixtures/wild/1924.txt): 7.09 GiB asked of a 28.56 GiB GPU
    /// with nothing allocated. The limit is the verdict and its fix leads;
    /// no NVIDIA text.
    #[test]
    fn an_intel_request_over_4_gib_is_the_level_zero_limit() {
        let paste = include_str!("../../../../fixtures/wild/1924.txt");
        let f = first(paste);
        assert_eq!(f.diagnosis.verdicts[0].code, "platform_limit");
        assert_eq!(
            f.diagnosis.fixes[0].id,
            "level-zero-relaxed-allocation-limits"
        );
        for x in &f.diagnosis.fixes {
            assert!(!x.how.contains("Ampere"), "{}: {}", x.id, x.how);
        }
    }

    /// PyTorch's own XPU message (fixtures/wild/1173.txt, 8.11 GiB with
    /// 16.54 GiB free): PyTorch's copy of the fix leads, under the verdict.
    #[test]
    fn pytorch_s_own_xpu_fix_is_moved_first() {
        let f = first(include_str!("../../../../fixtures/wild/1173.txt"));
        assert_eq!(f.diagnosis.verdicts[0].code, "platform_limit");
        assert_eq!(f.diagnosis.fixes[0].id, TORCH_RELAXED_ID);
        assert_eq!(
            f.diagnosis
                .fixes
                .iter()
                .filter(|x| x.title == "Allow single allocations over 4 GiB")
                .count(),
            1
        );
    }

    /// The margin: 4 GiB exactly is refused, a byte less is not the limit's.
    /// A request that would not fit beside what is allocated is the card's.
    #[test]
    fn level_zero_margin_on_both_sides() {
        // PyTorch's XPU message form (intel-extension-for-pytorch issue
        // paste, fixtures/wild/1537.txt), its request varied.
        let paste = include_str!("../../../../fixtures/wild/1537.txt");
        assert_eq!(
            PlatformLimit::of(&first(paste)),
            Some(PlatformLimit::LevelZeroSingleAllocation)
        );
        let mut f = first(paste);
        f.sizes.requested_bytes = Some(LEVEL_ZERO_SINGLE_ALLOCATION - 1);
        assert_eq!(PlatformLimit::of(&f), None);
        f.sizes.requested_bytes = Some(LEVEL_ZERO_SINGLE_ALLOCATION);
        f.sizes.free_bytes = None;
        f.sizes.total_bytes = Some(10 * GIB);
        f.sizes.allocated_bytes = Some(6 * GIB);
        assert_eq!(
            PlatformLimit::of(&f),
            Some(PlatformLimit::LevelZeroSingleAllocation)
        );
        f.sizes.allocated_bytes = Some(6 * GIB + 1);
        assert_eq!(PlatformLimit::of(&f), None);
        // A stated per-process limit the request crosses is that limit's.
        f.sizes.allocated_bytes = Some(0);
        f.sizes.allowed_bytes = Some(LEVEL_ZERO_SINGLE_ALLOCATION);
        assert_eq!(
            PlatformLimit::of(&f),
            Some(PlatformLimit::LevelZeroSingleAllocation)
        );
        f.sizes.allowed_bytes = Some(LEVEL_ZERO_SINGLE_ALLOCATION - 1);
        assert_eq!(PlatformLimit::of(&f), None);
        // 10.10 GiB allocated + 4.00 GiB > 13.74 GiB (fixtures/wild/1451.txt).
        let full = first(include_str!("../../../../fixtures/wild/1451.txt"));
        assert_eq!(PlatformLimit::of(&full), None);
    }

    /// ROCm on an APU with the default 512 MiB carve-out (the stock MNIST
    /// example, fixtures/wild/1920.txt): the carve-out is the verdict and
    /// the BIOS setting the first fix, before any batch advice.
    #[test]
    fn an_apu_s_carve_out_leads() {
        let paste = include_str!("../../../../fixtures/wild/1920.txt");
        let f = first(paste);
        assert_eq!(f.diagnosis.verdicts[0].code, "platform_limit");
        assert_eq!(fix_ids(paste)[0], "raise-apu-memory-carve-out");
    }

    /// 1 GiB is a carve-out with no word for it; more needs the paste to
    /// name an APU, up to 4 GiB; a larger device is not a carve-out.
    #[test]
    fn apu_margins_on_both_sides() {
        let paste = include_str!("../../../../fixtures/wild/1920.txt");
        let mut f = first(paste);
        // Without the paste's prose: only the message's own line.
        f.text = "HIP out of memory.".into();
        f.sizes.total_bytes = Some(APU_CARVE_OUT_UNNAMED_MAX);
        assert_eq!(PlatformLimit::of(&f), Some(PlatformLimit::ApuCarveOut));
        f.sizes.total_bytes = Some(APU_CARVE_OUT_UNNAMED_MAX + 1);
        assert_eq!(PlatformLimit::of(&f), None);
        f.text = "HIP out of memory on an APU.".into();
        assert_eq!(PlatformLimit::of(&f), Some(PlatformLimit::ApuCarveOut));
        f.sizes.total_bytes = Some(APU_CARVE_OUT_NAMED_MAX);
        assert_eq!(PlatformLimit::of(&f), Some(PlatformLimit::ApuCarveOut));
        f.sizes.total_bytes = Some(APU_CARVE_OUT_NAMED_MAX + 1);
        assert_eq!(PlatformLimit::of(&f), None);
        // An NVIDIA card of 512 MiB is no APU.
        let nvidia = first("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 84.00 MiB. GPU 0 has a total capacity of 512.00 MiB of which 0 bytes is free. Of the allocated memory 103.83 MiB is allocated by PyTorch, and 22.17 MiB is reserved by PyTorch but unallocated.");
        assert_eq!(PlatformLimit::of(&nvidia), None);
    }
}
