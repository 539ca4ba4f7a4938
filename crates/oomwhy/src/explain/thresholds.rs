//! Every threshold a verdict uses, with its reason. docs/verdicts.md,
//! "Verdicts and their thresholds", states them in words;
//! `verdicts_page_states_every_threshold` below checks that it still does.
//!
//! Shares are written as divisors (`x >= total / OTHERS_CARD_DIVISOR`) so
//! that the integer arithmetic is the same as everywhere it is used.

use crate::units::{GIB, MIB, TIB};

/// Other processes matter when they hold at least a tenth of the card...
pub(super) const OTHERS_CARD_DIVISOR: u64 = 10;
/// ...and at least this much: a few small processes are normal.
pub(super) const OTHERS_MIN: u64 = 512 * MIB;
/// Or when they hold at least the shortfall and this much: then they alone
/// explain the failure.
pub(super) const OTHERS_DECISIVE_MIN: u64 = 256 * MIB;

/// Memory outside PyTorch (total − free − reserved, no process list) or
/// outside this process (total − free − this process − listed processes) is
/// blamed from this much, a CUDA context and libraries take less...
pub(super) const OUTSIDE_MIN: u64 = GIB;
/// ...and from a tenth of the card.
pub(super) const OUTSIDE_CARD_DIVISOR: u64 = 10;

/// A card of at most this much is taken for a desktop card (laptop and
/// desktop GeForce/Radeon cards; data-centre cards have 16 GiB or more)...
pub(super) const SMALL_CARD_MAX: u64 = 8 * GIB;
/// ...whose CUDA context (0.3–1 GiB with cuDNN and cuBLAS loaded) and
/// display (the desktop compositor, Windows WDDM, browsers: up to about
/// 1 GiB) together take up to this much outside PyTorch's allocator. Up to
/// it, no other process is blamed: the card is small for the workload.
pub(super) const DESKTOP_OVERHEAD_MAX: u64 = 2 * GIB;
/// A CUDA context with cuBLAS and cuDNN loaded typically takes 0.3–0.6 GiB:
/// up to this much outside PyTorch is said to be the context (and the
/// display); above it, part may be another program's, so the verdict says
/// so instead of ruling it out.
pub(super) const CONTEXT_TYPICAL_MAX: u64 = 640 * MIB;

/// An inference engine's static memory fraction (SGLang's
/// --mem-fraction-static) from this percentage is already high: raising it
/// further is not offered, and the activations need the rest.
pub(super) const MEM_FRACTION_HIGH_PERCENT: u64 = 90;

/// The smallest difference between two printed sizes that counts as
/// evidence. A size printed in GiB with two decimals is off by up to
/// 5.12 MiB, so a difference of two such figures by up to 10.24 MiB; CUDA
/// maps memory in 2 MiB pages and PyTorch rounds small tensors up to 2 MiB
/// and 1–10 MiB ones to 20 MiB blocks. 32 MiB is above all of that together.
pub(super) const NOISE_MIN: u64 = 32 * MIB;

/// Free memory "exceeds" the request only by at least a twentieth (5 %) of
/// the request (and [`NOISE_MIN`]): one allocation of nearly all free memory
/// also needs the driver's page tables and a contiguous virtual range, so a
/// request a few percent under "free" can fail on a full card.
pub(super) const FREE_EXCESS_DIVISOR: u64 = 20;

/// One request of at least this share of the device or the limit (a
/// half) is itself what must get smaller: whatever else is freed, one
/// buffer that large leaves little for the rest of the work.
pub(super) const ONE_REQUEST_SHARE_DIVISOR: u64 = 2;
/// Where neither the device's size nor its free memory is stated, one
/// request of at least this much is itself what must get smaller: half of
/// an 8 GiB card, a sixth of a 24 GiB one, larger than any one tensor a
/// model's weights are stored in.
pub(super) const ONE_REQUEST_LARGE: u64 = 4 * GIB;

/// Reserved-but-unallocated memory below this is ordinary rounding slack,
/// not fragmentation.
pub(super) const FRAGMENTATION_MIN: u64 = 64 * MIB;
/// Fragmentation is claimed only when the unused reserve is at least a
/// twentieth (5 %) of what PyTorch reserved: 1–2 % is the slack every
/// caching allocator carries.
pub(super) const FRAGMENTATION_MAIN_DIVISOR: u64 = 20;
/// Requests up to this size come from the small pool's 2 MiB segments; free
/// space inside large segments cannot serve them, so fragmentation of the
/// reserve cannot be what refused them.
pub(super) const SMALL_POOL_REQUEST_MAX: u64 = 2 * MIB;

/// "Does not fit" is claimed only when what this process holds plus the
/// request is at least half the card; below that the numbers contradict it.
pub(super) const FITS_CARD_DIVISOR: u64 = 2;
/// Without a request size: at least this much unused...
pub(super) const FRAGMENTATION_NO_REQUEST_MIN: u64 = GIB;
/// ...and a fifth (20 %) of what PyTorch reserved.
pub(super) const FRAGMENTATION_NO_REQUEST_DIVISOR: u64 = 5;

/// CUDA-graph private pools matter from this much, whatever the request.
pub(super) const GRAPH_POOLS_MIN: u64 = GIB;
/// An out-of-memory killer's victim that held less than this (own plus
/// shared pages) is not what filled the machine.
pub(super) const SMALL_VICTIM_MAX: u64 = 64 * MIB;
/// An out-of-memory killer's victim whose printed score (its share of RAM
/// plus swap in thousandths) is below this (a tenth) is not what filled the
/// machine either: the largest process the killer could pick held less.
pub(super) const SMALL_VICTIM_SCORE_MAX: u64 = 100;

/// Windows' CPU allocator refusing a request below this: so small a request
/// fails only when the commit limit (RAM plus the page file) is already used
/// up, so the request's size is not what to change.
pub(super) const COMMIT_LIMIT_SMALL_REQUEST_MAX: u64 = 512 * MIB;

/// A specific cause outranks "does not fit" (when both cover the shortfall)
/// only when it holds at least this share of the card (a tenth).
pub(super) const SPECIFIC_CARD_DIVISOR: u64 = 10;

/// CUDA-graph pools that could have served the request are blamed only from
/// this size: a few MiB parked in pools explain no failure.
pub(super) const GRAPH_POOLS_REQUEST_MIN: u64 = 256 * MIB;

/// A CUDA context alone is about 0.3–1 GiB; this much outside PyTorch's
/// allocator in this process means another library holds memory.
pub(super) const NON_PYTORCH_MIN: u64 = 3 * GIB / 2;

/// On a card of at most `SMALL_CARD_MAX`, the allocator's unused cache plus
/// free memory makes fragmentation the lead only when it covers the request
/// with half of it to spare (this many halves of the request): below, what
/// covers the request is as likely the slack every caching allocator
/// carries, and on a small card live tensors and memory outside the
/// allocator fill the rest, so a smaller batch is the surer lever.
pub(super) const SMALL_CARD_CACHE_COVER_HALVES: u64 = 3;

/// One host (CPU) tensor of this size or more is implausible: it is more
/// than the largest desktop takes (256 GB on current consumer boards), and
/// on the servers that have more, one tensor that large is almost always a
/// wrong shape. The request, not the machine, is then what to look at.
pub(super) const HOST_REQUEST_IMPLAUSIBLE: u64 = 256 * GIB;

/// Beyond this no machine has the RAM for one tensor (4 TiB).
pub(super) const HOST_REQUEST_IMPOSSIBLE: u64 = 4 * TIB;

/// On Apple MPS, Metal memory outside PyTorch's allocator ("other
/// allocations") is the cause, ahead of the limit, when it is at least this
/// many times what PyTorch's allocator holds and at least `OUTSIDE_MIN`:
/// four fifths of the process's memory is then out of reach of a smaller
/// batch, and what grows is the graph and buffer caches, not the tensors.
pub(super) const MPS_OTHER_DOMINATES_RATIO: u64 = 4;

/// Live tensors fill the card when they hold this many tenths of it (70 %).
pub(super) const TENSORS_DOMINATE_TENTHS: u64 = 7;

/// The most memory any accelerator has: 288 GB of HBM (NVIDIA B300, AMD
/// MI355X). One request above it fits no device, whatever else the message
/// states or lacks: its size was computed wrong.
pub(super) const LARGEST_GPU_MEMORY: u64 = 288_000_000_000;
/// Above this (NVIDIA B200 and AMD MI300X, 192 GB) only the few largest
/// accelerators (256–288 GB) could hold one request at all, and then it
/// would fill nearly the whole device: read as a wrong size as well.
pub(super) const NEARLY_LARGEST_GPU_MEMORY: u64 = 192_000_000_000;

/// Memory grows when allocated memory rises by more than a twentieth (5 %)
/// at each of the last OOMs...
pub(super) const GROWTH_STEP_DIVISOR: u64 = 20;
/// ...and by this much in all: batches of different sizes vary less.
pub(super) const GROWTH_MIN: u64 = 256 * MIB;

/// A last progress counter up to this: it failed at the first step.
pub(super) const FAILS_AT_START_MAX_STEP: u64 = 1;
/// A last progress counter from this: it failed after many good steps.
pub(super) const LATE_FAILURE_MIN_STEP: u64 = 100;

/// A kernel that crashed while running (`unspecified launch failure`)
/// after a progress counter of at least this (steps, iterations or epochs)
/// ran the same kernels that many times without fault: a kernel bug that
/// fails every time is less likely than the driver or the hardware, whose
/// Xid is then read first.
pub(super) const KERNEL_CRASH_LONG_RUN_MIN: u64 = 50;

/// An NCCL error at a collective numbered up to this (c10d's SeqNum counts
/// from one) came from one of the process group's first collectives: the
/// ranks could not set up their connection, no rank crashed mid-training.
pub(super) const FIRST_COLLECTIVES_MAX_SEQ: u64 = 2;

/// An MMU fault below this address (the first 4 KiB page) is a null
/// pointer, or a field read at a small offset from one.
pub(super) const NULL_PAGE_END: u64 = 0x1000;

/// Telemetry in a paste rules out heat when every GPU temperature it states
/// is at most this (°C): GeForce cards slow down from about 83–87 °C and
/// shut down well above.
pub(super) const COOL_GPU_MAX_C: u64 = 80;
/// ...and an overloaded power supply when every power draw it states is at
/// most this (W): what the PCIe slot alone supplies.
pub(super) const LOW_POWER_DRAW_MAX_W: u64 = 75;

/// PaddlePaddle's own allocation at least this many times the memory left
/// free: its own work fills what it could see, so less work is advised
/// before looking for other processes.
pub(super) const PADDLE_OWN_WORK_RATIO: u64 = 4;

/// `cudaMalloc retries` from which the allocator is said to have been
/// flushing its cache repeatedly.
pub(super) const MANY_RETRIES: u64 = 10;

/// Most memory this process holds beyond PyTorch's reserved memory (CUDA
/// context, cuBLAS/cuDNN workspaces) for an nvidia-smi row to be taken as it.
pub(super) const OWN_OVERHEAD: u64 = 3 * GIB;

#[cfg(test)]
mod tests {
    /// docs/verdicts.md states each threshold in words; these are its
    /// phrases. (The crate is `crates/oomwhy`, so the repository root
    /// is four levels above this file.)
    #[test]
    fn verdicts_page_states_every_threshold() {
        let page = include_str!("../../../../docs/verdicts.md");
        let section = page
            .split("\n## Verdicts and their thresholds\n")
            .nth(1)
            .expect("docs/verdicts.md has a `## Verdicts and their thresholds` section");
        let phrase = |s: &str| assert!(section.contains(s), "docs/verdicts.md lacks {s:?}");
        use super::*;
        assert_eq!((OTHERS_CARD_DIVISOR, OTHERS_MIN), (10, 512 * MIB));
        phrase("≥ 10 % of the card and ≥ 512 MiB");
        assert_eq!(OTHERS_DECISIVE_MIN, 256 * MIB);
        phrase("or ≥ 256 MiB and at least the shortfall");
        assert_eq!((OUTSIDE_MIN, OUTSIDE_CARD_DIVISOR), (GIB, 10));
        phrase("≥ 1 GiB, ≥ 10 % of the card");
        assert_eq!((SMALL_CARD_MAX, DESKTOP_OVERHEAD_MAX), (8 * GIB, 2 * GIB));
        phrase("a card of ≤ 8 GiB with ≤ 2 GiB outside PyTorch");
        assert_eq!(CONTEXT_TYPICAL_MAX, 640 * MIB);
        phrase("above 640 MiB");
        assert_eq!(MEM_FRACTION_HIGH_PERCENT, 90);
        phrase("--mem-fraction-static of 0.9 or more");
        assert_eq!(
            (FRAGMENTATION_MIN, FRAGMENTATION_MAIN_DIVISOR),
            (64 * MIB, 20)
        );
        phrase("reserved-but-unallocated ≥ 64 MiB");
        phrase("≥ 5 % of reserved");
        assert_eq!(SMALL_POOL_REQUEST_MAX, 2 * MIB);
        phrase("never for requests of 2 MiB or less");
        assert_eq!(NOISE_MIN, 32 * MIB);
        phrase("by ≥ 32 MiB");
        assert_eq!(FREE_EXCESS_DIVISOR, 20);
        assert_eq!(FITS_CARD_DIVISOR, 2);
        phrase("at least half the card");
        phrase("≥ 32 MiB and ≥ 5 % of the request");
        assert_eq!(GRAPH_POOLS_MIN, GIB);
        assert_eq!(GRAPH_POOLS_REQUEST_MIN, 256 * MIB);
        phrase("private pools hold ≥ 1 GiB, or ≥ the request and\n  ≥ 256 MiB");
        assert_eq!(SMALL_VICTIM_MAX, 64 * MIB);
        phrase("victim held < 64 MiB (anon-rss + shmem-rss)");
        assert_eq!(SMALL_VICTIM_SCORE_MAX, 100);
        phrase("a score below 100 (under a tenth)");
        assert_eq!(COMMIT_LIMIT_SMALL_REQUEST_MAX, 512 * MIB);
        phrase("refusing a request below 512 MiB");
        assert_eq!(SPECIFIC_CARD_DIVISOR, 10);
        phrase("a specific cause that holds ≥ 10 % of the card comes first");
        assert_eq!(NON_PYTORCH_MIN, 3 * GIB / 2);
        phrase("≥ 1.5 GiB outside PyTorch's");
        assert_eq!(TENSORS_DOMINATE_TENTHS, 7);
        phrase("fill ≥ 70 % of the card");
        assert_eq!(LARGEST_GPU_MEMORY, 288_000_000_000);
        phrase("> 288 GB (268.2 GiB) when the card's size is not given");
        assert_eq!(NEARLY_LARGEST_GPU_MEMORY, 192_000_000_000);
        phrase("> 192 GB (178.8 GiB)");
        assert_eq!((GROWTH_STEP_DIVISOR, GROWTH_MIN), (20, 256 * MIB));
        phrase("(by ≥ 5 % each, ≥ 256 MiB in all)");
        assert_eq!((FAILS_AT_START_MAX_STEP, LATE_FAILURE_MIN_STEP), (1, 100));
        phrase("progress counter before the crash is 0 or 1");
        phrase("it is ≥ 100");
        assert_eq!((ONE_REQUEST_SHARE_DIVISOR, ONE_REQUEST_LARGE), (2, 4 * GIB));
        phrase("of at least half the device\n  or the limit, or of at least 4 GiB");
        assert_eq!(KERNEL_CRASH_LONG_RUN_MIN, 50);
        phrase("last progress counter of ≥ 50 (steps, iterations or epochs)");
        assert_eq!(FIRST_COLLECTIVES_MAX_SEQ, 2);
        phrase("An NCCL error at SeqNum ≤ 2");
        assert_eq!(NULL_PAGE_END, 0x1000);
        phrase("an MMU fault address below 0x1000");
        assert_eq!((COOL_GPU_MAX_C, LOW_POWER_DRAW_MAX_W), (80, 75));
        phrase("every stated GPU temperature ≤ 80 °C");
        phrase("every stated power draw ≤ 75 W");
        assert_eq!(
            (HOST_REQUEST_IMPLAUSIBLE, HOST_REQUEST_IMPOSSIBLE),
            (256 * GIB, 4 * TIB)
        );
        phrase("one host tensor of ≥ 256 GiB");
        phrase("≥ 4 TiB");
        assert_eq!(SMALL_CARD_CACHE_COVER_HALVES, 3);
        phrase("on a card of ≤ 8 GiB only when they cover ≥ 1.5 times the request");
        assert_eq!(MPS_OTHER_DOMINATES_RATIO, 4);
        phrase("other allocations are ≥ 4 times MPS allocated and ≥ 1 GiB");
        assert_eq!(PADDLE_OWN_WORK_RATIO, 4);
        phrase("at least 4 times the free memory");
    }
}
