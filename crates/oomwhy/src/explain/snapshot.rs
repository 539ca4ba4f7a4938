//! Memory snapshots: verdicts and fixes from the snapshot's segments and
//! trace (`record::SnapshotReport`, written by `crate::snapshot`), not from
//! message text. A snapshot finding is explained by [`MemorySnapshot`]; a
//! log's OOM message joined with a snapshot (`snapshot::join`) gets the
//! snapshot's verdicts and fixes first, from [`joined_verdicts`] and
//! [`joined_fixes`], since the snapshot sees the blocks and the message
//! only totals.

use super::catalogue::{Cost, FixSpec};
use super::common::{fix, verdict};
use super::docs::Code;
use super::setting::{since, Framework};
use super::Explain;
use crate::i18n::Said;
use crate::record::{DeviceState, Diagnosis, Finding, Fix, Site, SnapshotReport, Verdict};
use crate::units::format_size as fmt;
use crate::{say, say_parts};

/// Explains `Kind::MemorySnapshot` findings.
pub(super) struct MemorySnapshot;

impl Explain for MemorySnapshot {
    fn headline(&self, f: &Finding) -> Said {
        match f.snapshot.as_deref().and_then(|r| r.oom.as_ref()) {
            Some(o) => say!(
                en: "PyTorch could not allocate {size} on GPU {device} (from a memory snapshot)",
                zh: "PyTorch 无法在 GPU {device} 上分配 {size}（来自显存快照）",
                size = fmt(o.allocation_bytes),
                device = o.device
            ),
            None => say!(
                en: "PyTorch memory snapshot: the memory state, no OOM recorded",
                zh: "PyTorch 显存快照：拍下时的显存状态，没有记录 OOM"
            ),
        }
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        if let Some(r) = f.snapshot.as_deref() {
            snapshot_verdicts(r, out);
        }
    }
    fn fixes(&self, f: &Finding, d: &Diagnosis, out: &mut Vec<Fix>) {
        if let Some(r) = f.snapshot.as_deref() {
            snapshot_fixes(r, d, out);
        }
    }
}

/// The verdicts of the snapshot a log finding was joined with, to go before
/// the message's own; none for a finding without one.
pub(super) fn joined_verdicts(f: &Finding) -> Vec<Verdict> {
    let mut out = Vec::new();
    if let Some(r) = f.snapshot.as_deref() {
        snapshot_verdicts(r, &mut out);
    }
    out
}

/// Puts the fixes of the snapshot a log finding was joined with before the
/// message's own `fixes`. A message fix with a title the snapshot already
/// gave, or naming the same allocator option, is dropped.
pub(super) fn joined_fixes(f: &Finding, d: &Diagnosis, fixes: Vec<Fix>) -> Vec<Fix> {
    let Some(r) = f.snapshot.as_deref() else {
        return fixes;
    };
    let mut out = Vec::new();
    snapshot_fixes(r, d, &mut out);
    // The same allocator option under another title is the same fix.
    let option = |x: &Fix| {
        ["expandable_segments:True"]
            .into_iter()
            .find(|o| x.how.contains(o))
    };
    let options: Vec<&str> = out.iter().filter_map(option).collect();
    for x in fixes {
        if option(&x).is_some_and(|o| options.contains(&o)) {
            continue;
        }
        if !out.iter().any(|y| y.title == x.title) {
            out.push(x);
        }
    }
    out
}

/// The device the OOM happened on.
fn oom_device(r: &SnapshotReport) -> Option<&DeviceState> {
    let o = r.oom.as_ref()?;
    r.devices.iter().find(|d| d.device == o.device)
}

/// The allocation site holding the most live memory of `d`, when its
/// location is known (a site without stacks reads `(no stack recorded)`).
fn named_top_site(d: &DeviceState) -> Option<&Site> {
    d.top_sites.first().filter(|s| !s.location.starts_with('('))
}

/// `1 block`, `2 blocks`; `1 个块`, `2 个块`.
fn blocks(n: u64) -> Said {
    if n == 1 {
        say!(en: "{n} block", zh: "{n} 个块", n = n)
    } else {
        say!(en: "{n} blocks", zh: "{n} 个块", n = n)
    }
}

/// Conclusions from the report alone: why the `oom` event's request did not
/// fit, or why there is no `oom` event.
fn snapshot_verdicts(r: &SnapshotReport, out: &mut Vec<Verdict>) {
    let Some(o) = &r.oom else {
        let why = r.missing_oom.clone().unwrap_or_default();
        let why = Said {
            zh: crate::snapshot::analyze::missing_oom_zh(&why),
            en: why,
        };
        out.push(verdict(
            Code::SnapshotNoOomEvent,
            say!(en: "This snapshot holds no OOM event", zh: "这个快照里没有 OOM 事件"),
            why.then(say!(
                en: "The summary below is the memory state when the snapshot was taken, not at a failure.",
                zh: "下面的汇总是拍快照时的显存状态，不是失败那一刻的。"
            )),
        ));
        return;
    };
    let free = o.device_free_bytes.unwrap_or(0);
    let size = o.request_bytes;
    let fits = |b: u64| b >= size;
    let mut explained = false;
    if fits(o.largest_other_stream_hole_bytes) {
        explained = true;
        out.push(verdict(
            Code::SnapshotOtherStream,
            say!(
                en: "A big enough free block exists, but on another stream",
                zh: "有足够大的空闲块，但属于另一个 stream"
            ),
            say!(
                en: "The request of {size} came from stream {stream}; a free block of {hole} of the same pool type belongs to another stream. The caching allocator only reuses a block on the stream it was allocated on.",
                zh: "这次 {size} 的申请来自 stream {stream}；同一池类型里有一块 {hole} 的空闲块，但属于另一个 stream。缓存分配器只在分配某个块的那个 stream 上复用它。",
                size = fmt(size),
                stream = o.stream,
                hole = fmt(o.largest_other_stream_hole_bytes)
            ),
        ));
    }
    if fits(o.largest_private_pool_hole_bytes) {
        explained = true;
        out.push(verdict(
            Code::SnapshotPrivatePool,
            say!(
                en: "Free memory is held by a private pool (CUDA graphs)",
                zh: "空闲显存在私有池（CUDA graph）里"
            ),
            say!(
                en: "A free block of {hole} sits in a private memory pool (a CUDA graph's or a torch.cuda.MemPool's). Ordinary allocations cannot use it; private pools keep their memory until the graph or pool is released.",
                zh: "一块 {hole} 的空闲块在私有内存池里（CUDA graph 的池或 torch.cuda.MemPool）。普通分配用不上它；私有池会一直留着自己的显存，直到 graph 或池被释放。",
                hole = fmt(o.largest_private_pool_hole_bytes)
            ),
        ));
    }
    if fits(o.largest_oversize_hole_bytes) {
        explained = true;
        let setting = match r.max_split_size_bytes {
            Some(limit) => say!(
                en: "with max_split_size {limit}",
                zh: " max_split_size 设为 {limit} 时",
                limit = fmt(limit)
            ),
            None => say!(en: "with max_split_size set", zh: "设了 max_split_size 后"),
        };
        out.push(verdict(
            Code::SnapshotOversizeRule,
            say!(
                en: "A big enough free block exists, but the max_split_size rule refuses it",
                zh: "有足够大的空闲块，但 max_split_size 规则不让用"
            ),
            say_parts!(
                en: "A free block of {hole} on the right stream could hold the request of {size}, but {setting} the allocator does not split blocks at or above that size for smaller requests, and does not hand a larger request a block 20 MiB or more bigger than it.",
                zh: "stream 对得上的一块 {hole} 空闲块本可以放下这次 {size} 的申请，但{setting}，分配器不会为更小的申请拆分达到这个大小的块，也不会把比申请大 20 MiB 以上的块交给更大的申请。",
                hole = Said::same(fmt(o.largest_oversize_hole_bytes)),
                size = Said::same(fmt(size)),
                setting = setting
            ),
        ));
    }
    if fits(o.pending_free_bytes) {
        explained = true;
        out.push(verdict(
            Code::SnapshotPendingFree,
            say!(
                en: "Freed memory was still waiting for other streams",
                zh: "释放的显存还在等其他 stream"
            ),
            say!(
                en: "{pending} of blocks of this pool type were freed by their tensors but are not reusable yet: they were used on other streams (record_stream) and the allocator waits for those streams' events before reusing them.",
                zh: "这个池类型里有 {pending} 的块已被张量释放，但还不能复用：它们在其他 stream 上用过（record_stream），分配器要等那些 stream 上的事件完成才会复用。",
                pending = fmt(o.pending_free_bytes)
            ),
        ));
    }
    let class_free = o.usable_class_free_bytes;
    if o.largest_usable_hole_bytes < size && fits(class_free.saturating_add(free)) {
        explained = true;
        out.push(verdict(
            Code::SnapshotFragmentation,
            say!(
                en: "Fragmentation: enough free memory, but no hole big enough",
                zh: "碎片化：空闲显存够，却没有一个足够大的空洞"
            ),
            say!(
                en: "The request needed {size} in one piece. Free holes the allocator could use held {class_free} together, and CUDA had {free} free, yet the largest usable hole was only {largest}: the free space is scattered between live blocks in partly used segments, which the allocator cannot release or merge.",
                zh: "这次申请需要一整块 {size}。分配器能用的空闲空洞加起来有 {class_free}，CUDA 还空闲 {free}，但最大的可用空洞只有 {largest}：空闲空间夹在部分占用的段里的活块之间，分配器既不能归还，也不能合并。",
                size = fmt(size),
                class_free = fmt(class_free),
                free = fmt(free),
                largest = fmt(o.largest_usable_hole_bytes)
            ),
        ));
    }
    if !explained {
        let dev = oom_device(r);
        out.push(verdict(
            Code::SnapshotShortage,
            say!(
                en: "Not enough memory: live tensors fill the GPU",
                zh: "显存不够：活着的张量占满了 GPU"
            ),
            say!(
                en: "Live tensors hold {allocated} of the {reserved} PyTorch reserved; free holes of the right kind held {class_free} and CUDA had {free} free, less than the request of {size} even if every hole were merged. Less memory must be in use when this allocation happens.",
                zh: "PyTorch 预留的 {reserved} 里，活着的张量占了 {allocated}；类型合适的空闲空洞共 {class_free}，CUDA 空闲 {free}，就算把所有空洞合起来，也不到这次申请的 {size}。这次分配发生时，必须有更少的显存在用。",
                allocated = fmt(dev.map_or(0, |d| d.allocated_bytes)),
                reserved = fmt(dev.map_or(0, |d| d.reserved_bytes)),
                class_free = fmt(class_free),
                free = fmt(free),
                size = fmt(size)
            ),
        ));
    }
}

/// Fixes for the snapshot verdicts in `d.verdicts`, with the report's figures.
fn snapshot_fixes(r: &SnapshotReport, d: &Diagnosis, out: &mut Vec<Fix>) {
    let has = |code: Code| d.verdicts.iter().any(|v| v.code == code.as_str());
    if has(Code::SnapshotNoOomEvent) {
        out.push(fix(
            &RECORD_AT_THE_OOM,
            say!(
                en: "Before training: torch.cuda.memory._record_memory_history(max_entries=100000). Then dump at the failure with an OOM observer: torch._C._cuda_attach_out_of_memory_observer(lambda device, alloc, device_alloc, device_free: torch.cuda.memory._dump_snapshot(\"oom_snapshot.pickle\")), or in an `except torch.OutOfMemoryError:` block.",
                zh: "训练开始前调用 torch.cuda.memory._record_memory_history(max_entries=100000)。然后用 OOM 观察者在失败时保存快照：torch._C._cuda_attach_out_of_memory_observer(lambda device, alloc, device_alloc, device_free: torch.cuda.memory._dump_snapshot(\"oom_snapshot.pickle\"))，或者在 `except torch.OutOfMemoryError:` 块里保存。"
            ),
        ));
        // The largest holder over every device: without an OOM no device is the one.
        if let Some((device, top)) = r
            .devices
            .iter()
            .filter_map(|d| named_top_site(d).map(|s| (d.device, s)))
            .max_by_key(|(_, s)| s.bytes)
        {
            out.push(fix(
                &LOOK_AT_THE_LARGEST_HOLDER,
                say_parts!(
                    en: "{size} of live tensors on device {device} were allocated at {location} ({blocks}).",
                    zh: "设备 {device} 上有 {size} 的活张量是在 {location} 分配的（{blocks}）。",
                    size = Said::same(fmt(top.bytes)),
                    device = Said::same(device),
                    location = Said::same(&top.location),
                    blocks = blocks(top.blocks)
                ),
            ));
        }
    }
    if has(Code::SnapshotOtherStream) {
        out.push(fix(
            &ONE_STREAM,
            say!(
                en: "Create tensors used on a side stream on that stream (with torch.cuda.stream(s):), free side-stream tensors earlier, or call torch.cuda.empty_cache() after a side-stream phase so its cached segments return to CUDA.",
                zh: "在侧 stream 上用的张量就在那个 stream 上创建（with torch.cuda.stream(s):），更早释放侧 stream 上的张量，或者在侧 stream 阶段结束后调用 torch.cuda.empty_cache()，让它缓存的段还给 CUDA。"
            ),
        ));
    }
    if has(Code::SnapshotPrivatePool) {
        out.push(fix(
            &GRAPH_POOLS,
            say!(
                en: "Capture graphs into one shared pool (torch.cuda.graph(g, pool=first_graph.pool())), delete graphs you no longer replay, or capture fewer shapes (torch.compile mode=\"reduce-overhead\" captures one graph per shape).",
                zh: "把多个 graph 捕获到同一个共享池里（torch.cuda.graph(g, pool=first_graph.pool())），删掉不再重放的 graph，或者少捕获几种形状（torch.compile 的 mode=\"reduce-overhead\" 每种形状捕获一个 graph）。"
            ),
        ));
    }
    if has(Code::SnapshotOversizeRule) {
        out.push(fix(
            &REVISIT_MAX_SPLIT,
            say!(
                en: "Raise max_split_size_mb in PYTORCH_CUDA_ALLOC_CONF above the blocks your big tensors need, or drop it and use expandable_segments:True instead.",
                zh: "把 PYTORCH_CUDA_ALLOC_CONF 里的 max_split_size_mb 调到大于大张量需要的块，或者去掉它，改用 expandable_segments:True。"
            ),
        ));
    }
    if has(Code::SnapshotPendingFree) {
        out.push(fix(
            &SYNC_SIDE_STREAMS,
            say!(
                en: "Make the current stream wait for the side streams (torch.cuda.current_stream().wait_stream(s)) or synchronise before the allocation; avoid tensor.record_stream on large tensors.",
                zh: "让当前 stream 等待侧 stream（torch.cuda.current_stream().wait_stream(s)），或在分配前同步；不要对大张量用 tensor.record_stream。"
            ),
        ));
    }
    if has(Code::SnapshotFragmentation) {
        out.push(fix(
            &EXPANDABLE_SEGMENTS,
            say!(
                en: "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch ≥ 2.1): segments grow in place instead of leaving holes between them.",
                zh: "设 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True（PyTorch ≥ 2.1）：段可以原地变大，不会在段之间留下空洞。"
            ),
        ));
        out.push(fix(
            &LONG_LIVED_FIRST,
            say!(
                en: "Create buffers that live the whole run (weights, optimizer state, KV caches) before the first step, and reuse preallocated buffers for large temporary tensors, so short-lived tensors do not split the big segments.",
                zh: "在第一步之前就创建整个运行期间都要用的缓冲区（权重、优化器状态、KV cache），大的临时张量复用预先分配好的缓冲区，这样短命的张量就不会把大段切碎。"
            ),
        ));
    }
    if has(Code::SnapshotShortage) {
        if let Some(top) = oom_device(r).and_then(named_top_site) {
            out.push(fix(
                &SHRINK_THE_LARGEST_HOLDER,
                say_parts!(
                    en: "{size} of live tensors ({blocks}) were allocated at {location}: free them earlier, keep them on the CPU, or make them smaller.",
                    zh: "{size} 的活张量（{blocks}）是在 {location} 分配的：更早释放它们、把它们留在 CPU 上，或者把它们变小。",
                    size = Said::same(fmt(top.bytes)),
                    blocks = blocks(top.blocks),
                    location = Said::same(&top.location)
                ),
            ));
        }
        out.push(fix(
            &SMALLER_BATCH,
            say!(
                en: "Halve the batch (keep the effective batch with gradient accumulation), enable gradient checkpointing, or run under torch.autocast with bfloat16.",
                zh: "把 batch 减半（用梯度累积保持等效 batch），打开梯度检查点，或在 torch.autocast 下用 bfloat16 运行。"
            ),
        ));
    }
}

// The ids are the ones these fixes had when ids were made from the English
// title; they stay.

/// A snapshot that holds the failure, via the OOM observer.
const RECORD_AT_THE_OOM: FixSpec = FixSpec::new(
    "record-a-snapshot-at-the-oom",
    "Record a snapshot at the OOM",
    "在 OOM 时记录快照",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Look)
.sources(&["PyTorch documentation: Understanding CUDA Memory Usage (torch.cuda.memory._record_memory_history, _dump_snapshot)"]);

const LOOK_AT_THE_LARGEST_HOLDER: FixSpec = FixSpec::new(
    "look-first-at-the-largest-holder-of-live-memory",
    "Look first at the largest holder of live memory",
    "先看占着最多活显存的地方",
)
.cost(Cost::Look);

const ONE_STREAM: FixSpec = FixSpec::new(
    "allocate-on-one-stream-or-hand-memory-over-explicitly",
    "Allocate on one stream, or hand memory over explicitly",
    "在同一个 stream 上分配，或显式交接显存",
)
.frameworks(&[Framework::PyTorch])
.sources(&[
    "PyTorch documentation: CUDA semantics, CUDA streams (torch.cuda.stream, Tensor.record_stream)",
]);

const GRAPH_POOLS: FixSpec = FixSpec::new(
    "share-or-release-cuda-graph-pools",
    "Share or release CUDA-graph pools",
    "共享或释放 CUDA graph 的池",
)
.frameworks(&[Framework::PyTorch])
.sources(&["PyTorch documentation: CUDA semantics, CUDA Graphs, Graph memory management (torch.cuda.graph pool=)"]);

const REVISIT_MAX_SPLIT: FixSpec = FixSpec::new(
    "revisit-max-split-size-mb",
    "Revisit max_split_size_mb",
    "重新考虑 max_split_size_mb",
)
.frameworks(&[Framework::PyTorch])
.torch_since(since::MAX_SPLIT)
.sources(&[
    "PyTorch documentation: CUDA semantics, Optimizing memory usage with PYTORCH_CUDA_ALLOC_CONF",
]);

const SYNC_SIDE_STREAMS: FixSpec = FixSpec::new(
    "synchronise-side-streams-before-the-big-allocation",
    "Synchronise side streams before the big allocation",
    "大分配之前先同步侧 stream",
)
.frameworks(&[Framework::PyTorch])
.sources(&["PyTorch documentation: torch.Tensor.record_stream, torch.cuda.Stream.wait_stream"]);

/// The snapshot's form of the advice (`torch::EXPANDABLE_SEGMENTS` is the
/// message's, with the variable its release reads).
const EXPANDABLE_SEGMENTS: FixSpec = FixSpec::new(
    "use-expandable-segments",
    "Use expandable segments",
    "使用 expandable segments",
)
.frameworks(&[Framework::PyTorch])
.torch_since(since::EXPANDABLE_SEGMENTS)
.sources(&[
    "PyTorch documentation: CUDA semantics, Optimizing memory usage with PYTORCH_CUDA_ALLOC_CONF",
])
.applied_when(&["expandable_segments:true"]);

const LONG_LIVED_FIRST: FixSpec = FixSpec::new(
    "allocate-long-lived-and-large-tensors-first",
    "Allocate long-lived and large tensors first",
    "先分配长期存在的大张量",
);

const SHRINK_THE_LARGEST_HOLDER: FixSpec = FixSpec::new(
    "shrink-the-largest-holder-of-live-memory",
    "Shrink the largest holder of live memory",
    "缩小占着最多活显存的地方",
);

const SMALLER_BATCH: FixSpec = FixSpec::new(
    "reduce-the-batch-size-or-the-activations-kept",
    "Reduce the batch size or the activations kept",
    "减小 batch size 或保留的激活值",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Quality);

/// Every fix this family offers.
pub(super) const FIXES: &[FixSpec] = &[
    RECORD_AT_THE_OOM,
    LOOK_AT_THE_LARGEST_HOLDER,
    ONE_STREAM,
    GRAPH_POOLS,
    REVISIT_MAX_SPLIT,
    SYNC_SIDE_STREAMS,
    EXPANDABLE_SEGMENTS,
    LONG_LIVED_FIRST,
    SHRINK_THE_LARGEST_HOLDER,
    SMALLER_BATCH,
];

#[cfg(test)]
mod tests {
    use crate::record::Finding;
    use std::path::Path;

    /// The finding of a generated scenario (`tests/snapshots/`), unexplained.
    fn scenario(name: &str) -> Finding {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/snapshots")
            .join(name);
        let file = std::fs::File::open(&path).unwrap();
        let mut findings = crate::scan(file, name).unwrap().findings;
        assert_eq!(findings.len(), 1, "{name}");
        findings.remove(0)
    }

    fn codes(mut f: Finding) -> Vec<String> {
        crate::explain::explain(&mut f);
        f.diagnosis.verdicts.into_iter().map(|v| v.code).collect()
    }

    /// A hole on another stream explains the OOM from exactly the request's
    /// size up: one byte less could not have held it.
    #[test]
    fn another_streams_hole_counts_from_the_requests_size() {
        let base = scenario("shortage_v2_10.pickle");
        let with_hole = |hole_less: u64| {
            let mut f = base.clone();
            let o = f
                .snapshot
                .as_mut()
                .and_then(|r| r.oom.as_mut())
                .expect("the scenario holds an OOM");
            o.largest_other_stream_hole_bytes = o.request_bytes - hole_less;
            codes(f)
        };
        assert_eq!(with_hole(0), ["snapshot_other_stream"]);
        assert_eq!(with_hole(1), ["snapshot_shortage"]);
    }

    /// The oversize rule names the recorded `max_split_size`, and says it was
    /// set when the snapshot does not record its value.
    #[test]
    fn oversize_rule_without_a_recorded_limit() {
        let explained = |limit_known: bool| {
            let mut f = scenario("oversize_rule_v2_5.pickle");
            if !limit_known {
                if let Some(r) = f.snapshot.as_mut() {
                    r.max_split_size_bytes = None;
                }
            }
            crate::explain::explain(&mut f);
            let v = f.diagnosis.verdicts.remove(0);
            assert_eq!(v.code, "snapshot_oversize_rule");
            (v.detail, v.zh.unwrap().text)
        };
        let (en, zh) = explained(true);
        assert!(
            en.contains("but with max_split_size 64.00 MiB the allocator"),
            "{en}"
        );
        assert!(
            zh.contains("但 max_split_size 设为 64.00 MiB 时，分配器"),
            "{zh}"
        );
        let (en, zh) = explained(false);
        assert!(
            en.contains("but with max_split_size set the allocator"),
            "{en}"
        );
        assert!(zh.contains("但设了 max_split_size 后，分配器"), "{zh}");
    }
}
