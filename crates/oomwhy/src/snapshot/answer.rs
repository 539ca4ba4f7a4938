//! From an analysed snapshot to a finding: verdicts, fixes, the join with
//! the log's OOM message, and the text sections the renderers print.

use super::analyze::{missing_oom_zh, Outcome};
use crate::i18n::Said;
use crate::record::{Category, Chinese, Diagnosis, Finding, Fix, Kind, SnapshotReport, Verdict};
use crate::say;
use crate::units::format_size as fmt;

/// A verdict, its title and detail in both languages.
fn verdict(code: &str, title: Said, detail: Said) -> Verdict {
    Verdict {
        code: code.into(),
        title: title.en,
        detail: detail.en,
        zh: Some(Chinese {
            title: title.zh,
            text: detail.zh,
        }),
    }
}

/// A fix with its stable id (the one it had when ids were made from the
/// English title), its title and how to apply it, in both languages.
fn fix(id: &str, title: Said, how: Said) -> Fix {
    Fix {
        id: id.into(),
        title: title.en,
        how: how.en,
        zh: Some(Chinese {
            title: title.zh,
            text: how.zh,
        }),
    }
}

/// The snapshot's finding: an OOM finding per `oom` event, or a memory-state finding.
pub(super) fn finding(o: Outcome, input: &str) -> Finding {
    let r = o.report;
    let mut f = Finding::new(Kind::MemorySnapshot, input, 1, String::new());
    f.version_hint = Some(format!("PyTorch {}", r.era));
    if let Some(oom) = &r.oom {
        f.category = Category::Oom;
        f.device = u32::try_from(oom.device).ok();
        let dev = r.devices.iter().find(|d| d.device == oom.device);
        f.text = format!(
            "PyTorch memory snapshot: `oom` event on device {}: a request of {} (a {} segment) on stream {} failed; CUDA reported {} free.",
            oom.device,
            fmt(oom.request_bytes),
            fmt(oom.allocation_bytes),
            oom.stream,
            oom.device_free_bytes.map_or("no figure".into(), fmt),
        );
        let s = &mut f.sizes;
        s.requested_bytes = Some(oom.allocation_bytes);
        s.free_bytes = oom.device_free_bytes;
        if let Some(d) = dev {
            s.allocated_bytes = Some(d.allocated_bytes);
            s.reserved_bytes = Some(d.reserved_bytes);
            s.reserved_unallocated_bytes = Some(d.reserved_bytes.saturating_sub(d.allocated_bytes));
            s.extra.insert(
                "free_in_segments_bytes".into(),
                Some(d.free_in_segments_bytes),
            );
        }
        s.extra
            .insert("request_rounded_bytes".into(), Some(oom.request_bytes));
        s.extra.insert(
            "largest_usable_hole_bytes".into(),
            Some(oom.largest_usable_hole_bytes),
        );
        if o.unmatched > 0 {
            f.notes.push(format!(
                "{} of the {} trace events after the OOM did not match the recorded blocks; the state shown is after the OOM, not at it.",
                o.unmatched, oom.events_after
            ));
        }
    } else {
        f.category = Category::MemoryState;
        let reserved: u64 = r.devices.iter().map(|d| d.reserved_bytes).sum();
        let allocated: u64 = r.devices.iter().map(|d| d.allocated_bytes).sum();
        f.text = format!(
            "PyTorch memory snapshot without an `oom` event: {} on {}, {} reserved, {} in live tensors.",
            count(r.devices.iter().map(|d| d.segments).sum::<u64>(), "segment"),
            count(r.devices.len() as u64, "device"),
            fmt(reserved),
            fmt(allocated),
        );
        if let [only] = r.devices.as_slice() {
            f.device = u32::try_from(only.device).ok();
        }
        f.sizes.reserved_bytes = Some(reserved);
        f.sizes.allocated_bytes = Some(allocated);
    }
    f.snapshot = Some(Box::new(r));
    let (verdicts, fixes) = conclusions(&f);
    f.diagnosis = Diagnosis {
        verdicts,
        fixes,
        ..Diagnosis::default()
    };
    f.explain = codes(&f);
    f
}

/// `1 block`, `2 blocks`.
fn count(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn codes(f: &Finding) -> Vec<String> {
    let mut codes = vec![f.kind.slug().to_string()];
    for v in &f.diagnosis.verdicts {
        if !codes.contains(&v.code) {
            codes.push(v.code.clone());
        }
    }
    codes
}

/// How to get a snapshot that holds the OOM.
fn record_fix() -> Fix {
    fix(
        "record-a-snapshot-at-the-oom",
        say!(en: "Record a snapshot at the OOM", zh: "在 OOM 时记录快照"),
        say!(
            en: "Before training: torch.cuda.memory._record_memory_history(max_entries=100000). Then dump at the failure with an OOM observer: torch._C._cuda_attach_out_of_memory_observer(lambda device, alloc, device_alloc, device_free: torch.cuda.memory._dump_snapshot(\"oom_snapshot.pickle\")), or in an `except torch.OutOfMemoryError:` block.",
            zh: "训练开始前调用 torch.cuda.memory._record_memory_history(max_entries=100000)。然后用 OOM 观察者在失败时保存快照：torch._C._cuda_attach_out_of_memory_observer(lambda device, alloc, device_alloc, device_free: torch.cuda.memory._dump_snapshot(\"oom_snapshot.pickle\"))，或者在 `except torch.OutOfMemoryError:` 块里保存。"
        ),
    )
}

/// Verdicts and fixes of a snapshot finding (from its report alone).
fn conclusions(f: &Finding) -> (Vec<Verdict>, Vec<Fix>) {
    let mut verdicts = Vec::new();
    let mut fixes = Vec::new();
    let Some(r) = f.snapshot.as_deref() else {
        return (verdicts, fixes);
    };
    let Some(o) = &r.oom else {
        let why = r.missing_oom.clone().unwrap_or_default();
        let why = Said {
            zh: missing_oom_zh(&why),
            en: why,
        };
        verdicts.push(verdict(
            "snapshot_no_oom_event",
            say!(en: "This snapshot holds no OOM event", zh: "这个快照里没有 OOM 事件"),
            why.then(say!(
                en: "The summary below is the memory state when the snapshot was taken, not at a failure.",
                zh: "下面的汇总是拍快照时的显存状态，不是失败那一刻的。"
            )),
        ));
        fixes.push(record_fix());
        if let Some((device, top)) = r
            .devices
            .iter()
            .flat_map(|d| d.top_sites.first().map(|s| (d.device, s)))
            .filter(|(_, s)| !s.location.starts_with('('))
            .max_by_key(|(_, s)| s.bytes)
        {
            let how = if top.blocks == 1 {
                say!(
                    en: "{size} of live tensors on device {device} were allocated at {location} ({n} block).",
                    zh: "设备 {device} 上有 {size} 的活张量是在 {location} 分配的（{n} 个块）。",
                    size = fmt(top.bytes),
                    device = device,
                    location = &top.location,
                    n = top.blocks
                )
            } else {
                say!(
                    en: "{size} of live tensors on device {device} were allocated at {location} ({n} blocks).",
                    zh: "设备 {device} 上有 {size} 的活张量是在 {location} 分配的（{n} 个块）。",
                    size = fmt(top.bytes),
                    device = device,
                    location = &top.location,
                    n = top.blocks
                )
            };
            fixes.push(fix(
                "look-first-at-the-largest-holder-of-live-memory",
                say!(
                    en: "Look first at the largest holder of live memory",
                    zh: "先看占着最多活显存的地方"
                ),
                how,
            ));
        }
        return (verdicts, fixes);
    };
    let dev = r.devices.iter().find(|d| d.device == o.device);
    let free = o.device_free_bytes.unwrap_or(0);
    let size = o.request_bytes;
    let stated = |b: u64| b >= size;
    let mut explained = false;
    if stated(o.largest_other_stream_hole_bytes) {
        explained = true;
        verdicts.push(verdict(
            "snapshot_other_stream",
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
        fixes.push(fix(
            "allocate-on-one-stream-or-hand-memory-over-explicitly",
            say!(
                en: "Allocate on one stream, or hand memory over explicitly",
                zh: "在同一个 stream 上分配，或显式交接显存"
            ),
            say!(
                en: "Create tensors used on a side stream on that stream (with torch.cuda.stream(s):), free side-stream tensors earlier, or call torch.cuda.empty_cache() after a side-stream phase so its cached segments return to CUDA.",
                zh: "在侧 stream 上用的张量就在那个 stream 上创建（with torch.cuda.stream(s):），更早释放侧 stream 上的张量，或者在侧 stream 阶段结束后调用 torch.cuda.empty_cache()，让它缓存的段还给 CUDA。"
            ),
        ));
    }
    if stated(o.largest_private_pool_hole_bytes) {
        explained = true;
        verdicts.push(verdict(
            "snapshot_private_pool",
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
        fixes.push(fix(
            "share-or-release-cuda-graph-pools",
            say!(en: "Share or release CUDA-graph pools", zh: "共享或释放 CUDA graph 的池"),
            say!(
                en: "Capture graphs into one shared pool (torch.cuda.graph(g, pool=first_graph.pool())), delete graphs you no longer replay, or capture fewer shapes (torch.compile mode=\"reduce-overhead\" captures one graph per shape).",
                zh: "把多个 graph 捕获到同一个共享池里（torch.cuda.graph(g, pool=first_graph.pool())），删掉不再重放的 graph，或者少捕获几种形状（torch.compile 的 mode=\"reduce-overhead\" 每种形状捕获一个 graph）。"
            ),
        ));
    }
    if stated(o.largest_oversize_hole_bytes) {
        explained = true;
        let detail = match r.max_split_size_bytes {
            Some(limit) => say!(
                en: "A free block of {hole} on the right stream could hold the request of {size}, but with max_split_size {limit} the allocator does not split blocks at or above that size for smaller requests, and does not hand a larger request a block 20 MiB or more bigger than it.",
                zh: "stream 对得上的一块 {hole} 空闲块本可以放下这次 {size} 的申请，但 max_split_size 设为 {limit} 时，分配器不会为更小的申请拆分达到这个大小的块，也不会把比申请大 20 MiB 以上的块交给更大的申请。",
                hole = fmt(o.largest_oversize_hole_bytes),
                size = fmt(size),
                limit = fmt(limit)
            ),
            None => say!(
                en: "A free block of {hole} on the right stream could hold the request of {size}, but with max_split_size max_split_size the allocator does not split blocks at or above that size for smaller requests, and does not hand a larger request a block 20 MiB or more bigger than it.",
                zh: "stream 对得上的一块 {hole} 空闲块本可以放下这次 {size} 的申请，但设了 max_split_size 后，分配器不会为更小的申请拆分达到这个大小的块，也不会把比申请大 20 MiB 以上的块交给更大的申请。",
                hole = fmt(o.largest_oversize_hole_bytes),
                size = fmt(size)
            ),
        };
        verdicts.push(verdict(
            "snapshot_oversize_rule",
            say!(
                en: "A big enough free block exists, but the max_split_size rule refuses it",
                zh: "有足够大的空闲块，但 max_split_size 规则不让用"
            ),
            detail,
        ));
        fixes.push(fix(
            "revisit-max-split-size-mb",
            say!(en: "Revisit max_split_size_mb", zh: "重新考虑 max_split_size_mb"),
            say!(
                en: "Raise max_split_size_mb in PYTORCH_CUDA_ALLOC_CONF above the blocks your big tensors need, or drop it and use expandable_segments:True instead.",
                zh: "把 PYTORCH_CUDA_ALLOC_CONF 里的 max_split_size_mb 调到大于大张量需要的块，或者去掉它，改用 expandable_segments:True。"
            ),
        ));
    }
    if stated(o.pending_free_bytes) {
        explained = true;
        verdicts.push(verdict(
            "snapshot_pending_free",
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
        fixes.push(fix(
            "synchronise-side-streams-before-the-big-allocation",
            say!(
                en: "Synchronise side streams before the big allocation",
                zh: "大分配之前先同步侧 stream"
            ),
            say!(
                en: "Make the current stream wait for the side streams (torch.cuda.current_stream().wait_stream(s)) or synchronise before the allocation; avoid tensor.record_stream on large tensors.",
                zh: "让当前 stream 等待侧 stream（torch.cuda.current_stream().wait_stream(s)），或在分配前同步；不要对大张量用 tensor.record_stream。"
            ),
        ));
    }
    let class_free = o.usable_class_free_bytes;
    if o.largest_usable_hole_bytes < size && class_free.saturating_add(free) >= size {
        explained = true;
        verdicts.push(verdict(
            "snapshot_fragmentation",
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
        fixes.push(fix(
            "use-expandable-segments",
            say!(en: "Use expandable segments", zh: "使用 expandable segments"),
            say!(
                en: "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch ≥ 2.1): segments grow in place instead of leaving holes between them.",
                zh: "设 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True（PyTorch ≥ 2.1）：段可以原地变大，不会在段之间留下空洞。"
            ),
        ));
        fixes.push(fix(
            "allocate-long-lived-and-large-tensors-first",
            say!(
                en: "Allocate long-lived and large tensors first",
                zh: "先分配长期存在的大张量"
            ),
            say!(
                en: "Create buffers that live the whole run (weights, optimizer state, KV caches) before the first step, and reuse preallocated buffers for large temporary tensors, so short-lived tensors do not split the big segments.",
                zh: "在第一步之前就创建整个运行期间都要用的缓冲区（权重、优化器状态、KV cache），大的临时张量复用预先分配好的缓冲区，这样短命的张量就不会把大段切碎。"
            ),
        ));
    }
    if !explained {
        let allocated = dev.map_or(0, |d| d.allocated_bytes);
        let reserved = dev.map_or(0, |d| d.reserved_bytes);
        verdicts.push(verdict(
            "snapshot_shortage",
            say!(
                en: "Not enough memory: live tensors fill the GPU",
                zh: "显存不够：活着的张量占满了 GPU"
            ),
            say!(
                en: "Live tensors hold {allocated} of the {reserved} PyTorch reserved; free holes of the right kind held {class_free} and CUDA had {free} free, less than the request of {size} even if every hole were merged. Less memory must be in use when this allocation happens.",
                zh: "PyTorch 预留的 {reserved} 里，活着的张量占了 {allocated}；类型合适的空闲空洞共 {class_free}，CUDA 空闲 {free}，就算把所有空洞合起来，也不到这次申请的 {size}。这次分配发生时，必须有更少的显存在用。",
                allocated = fmt(allocated),
                reserved = fmt(reserved),
                class_free = fmt(class_free),
                free = fmt(free),
                size = fmt(size)
            ),
        ));
        if let Some(top) = dev
            .and_then(|d| d.top_sites.first())
            .filter(|s| !s.location.starts_with('('))
        {
            let how = if top.blocks == 1 {
                say!(
                    en: "{size} of live tensors ({n} block) were allocated at {location}: free them earlier, keep them on the CPU, or make them smaller.",
                    zh: "{size} 的活张量（{n} 个块）是在 {location} 分配的：更早释放它们、把它们留在 CPU 上，或者把它们变小。",
                    size = fmt(top.bytes),
                    n = top.blocks,
                    location = &top.location
                )
            } else {
                say!(
                    en: "{size} of live tensors ({n} blocks) were allocated at {location}: free them earlier, keep them on the CPU, or make them smaller.",
                    zh: "{size} 的活张量（{n} 个块）是在 {location} 分配的：更早释放它们、把它们留在 CPU 上，或者把它们变小。",
                    size = fmt(top.bytes),
                    n = top.blocks,
                    location = &top.location
                )
            };
            fixes.push(fix(
                "shrink-the-largest-holder-of-live-memory",
                say!(
                    en: "Shrink the largest holder of live memory",
                    zh: "缩小占着最多活显存的地方"
                ),
                how,
            ));
        }
        fixes.push(fix(
            "reduce-the-batch-size-or-the-activations-kept",
            say!(
                en: "Reduce the batch size or the activations kept",
                zh: "减小 batch size 或保留的激活值"
            ),
            say!(
                en: "Halve the batch (keep the effective batch with gradient accumulation), enable gradient checkpointing, or run under torch.autocast with bfloat16.",
                zh: "把 batch 减半（用梯度累积保持等效 batch），打开梯度检查点，或在 torch.autocast 下用 bfloat16 运行。"
            ),
        ));
    }
    (verdicts, fixes)
}

/// The headline of a snapshot finding, in both languages.
pub(crate) fn headline(f: &Finding) -> crate::i18n::Said {
    match f.snapshot.as_deref().and_then(|r| r.oom.as_ref()) {
        Some(o) => crate::say!(
            en: "PyTorch could not allocate {size} on GPU {device} (from a memory snapshot)",
            zh: "PyTorch 无法在 GPU {device} 上分配 {size}（来自显存快照）",
            size = fmt(o.allocation_bytes),
            device = o.device
        ),
        None => crate::say!(
            en: "PyTorch memory snapshot: the memory state, no OOM recorded",
            zh: "PyTorch 显存快照：拍下时的显存状态，没有记录 OOM"
        ),
    }
}

/// Puts back the snapshot's own diagnosis after the log explainer ran over
/// every finding, and adds the snapshot's evidence to log findings it joined.
pub fn after_explain(findings: &mut [Finding]) {
    for f in findings.iter_mut() {
        if f.snapshot.is_none() {
            continue;
        }
        let (mut verdicts, mut fixes) = conclusions(f);
        if f.kind == Kind::MemorySnapshot {
            // The answer the explainer wrote (headline, fields) stays.
            let answer = std::mem::take(&mut f.diagnosis);
            f.diagnosis = Diagnosis {
                headline: answer.headline,
                headline_zh: answer.headline_zh,
                fields: answer.fields,
                verdicts,
                fixes,
                ..Diagnosis::default()
            };
        } else {
            if let Some(check) = cross_check(f) {
                f.notes.push(check);
            }
            // The snapshot's evidence first: it sees the blocks, the message only totals.
            verdicts.extend(std::mem::take(&mut f.diagnosis.verdicts));
            let mut seen: Vec<String> = fixes.iter().map(|x| x.title.clone()).collect();
            // The same allocator option under another title is the same fix.
            let option = |x: &Fix| {
                ["expandable_segments:True"]
                    .into_iter()
                    .find(|o| x.how.contains(o))
            };
            let options: Vec<&str> = fixes.iter().filter_map(option).collect();
            for x in std::mem::take(&mut f.diagnosis.fixes) {
                if option(&x).is_some_and(|o| options.contains(&o)) {
                    continue;
                }
                if !seen.contains(&x.title) {
                    seen.push(x.title.clone());
                    fixes.push(x);
                }
            }
            f.diagnosis.verdicts = verdicts;
            f.diagnosis.fixes = fixes;
        }
        f.explain = codes(f);
    }
}

/// Compares the message's totals with the snapshot's, for a joined finding.
fn cross_check(f: &Finding) -> Option<String> {
    let r = f.snapshot.as_deref()?;
    let o = r.oom.as_ref()?;
    let d = r.devices.iter().find(|d| d.device == o.device)?;
    let snap_gap = d.reserved_bytes.saturating_sub(d.allocated_bytes);
    let said = f
        .sizes
        .reserved_unallocated_bytes
        .or(f.sizes.cached_bytes)
        .or_else(|| {
            f.sizes
                .reserved_bytes?
                .checked_sub(f.sizes.allocated_bytes?)
        })?;
    let tolerance = (said / 200).max(1 << 20);
    let mut detail = format!(
        "The message's reserved-but-unallocated {} {} the snapshot's free space in segments ({} in holes, {} pending, largest usable hole {}).",
        fmt(said),
        if said.abs_diff(snap_gap) <= tolerance { "matches" } else { "differs from" },
        fmt(d.free_in_segments_bytes),
        fmt(d.pending_free_bytes),
        fmt(o.largest_usable_hole_bytes),
    );
    if let (Some(total), Some(free)) = (f.sizes.total_bytes, f.sizes.free_bytes) {
        let outside = total.saturating_sub(free).saturating_sub(d.reserved_bytes);
        detail.push_str(&format!(
            " Of the {} the message gives as capacity, {} are used outside PyTorch's allocator (CUDA context, libraries, other processes), which the snapshot cannot see.",
            fmt(total),
            fmt(outside)
        ));
    }
    let input = f
        .facts
        .get("snapshot")
        .map_or("the snapshot", String::as_str);
    Some(format!("Joined with the `oom` event of {input}. {detail}"))
}

/// The rank a per-rank snapshot's file name states (`oom_rank-3.pickle`).
fn rank_of(name: &str) -> Option<u32> {
    let lower = name.to_ascii_lowercase();
    let at = lower.rfind("rank")?;
    let digits: String = lower[at + 4..]
        .trim_start_matches(['-', '_'])
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Attaches each snapshot's OOM to the log's OOM message it records (same
/// device, "Tried to allocate" equal to the snapshot's segment size, same
/// rank when the file name states one) and drops the joined snapshot
/// findings; ids are renumbered.
pub fn join(findings: &mut Vec<Finding>) {
    let mut joined = vec![false; findings.len()];
    for s in 0..findings.len() {
        let Some(oom) = findings[s]
            .snapshot
            .as_deref()
            .and_then(|r| r.oom.as_ref())
            .filter(|_| findings[s].kind == Kind::MemorySnapshot)
        else {
            continue;
        };
        let (device, size) = (u32::try_from(oom.device).ok(), oom.allocation_bytes);
        let rank = rank_of(&findings[s].source.input);
        let target = findings.iter().enumerate().position(|(i, f)| {
            !joined[i]
                && f.kind == Kind::TorchAllocatorOom
                && f.snapshot.is_none()
                && (f.device.is_none() || f.device == device)
                && f.sizes
                    .requested_bytes
                    .is_some_and(|r| r.abs_diff(size) <= (size / 200).max(1024))
                && match (rank, f.first_rank) {
                    (Some(a), Some(_)) => f.first_rank == Some(a) || f.ranks.contains(&a),
                    _ => true,
                }
        });
        if let Some(t) = target {
            joined[s] = true;
            joined[t] = true;
            let input = findings[s].source.input.clone();
            let report = findings[s].snapshot.take();
            findings[t].snapshot = report;
            findings[t].facts.insert("snapshot".into(), input);
            // Mark for removal.
            findings[s].id = 0;
        }
    }
    if findings.iter().all(|f| f.id != 0) {
        return;
    }
    let mut map = std::collections::HashMap::new();
    let mut next = 0;
    findings.retain(|f| f.id != 0 || f.snapshot.is_some());
    for f in findings.iter_mut() {
        next += 1;
        map.insert(f.id, next);
        f.id = next;
    }
    for f in findings.iter_mut() {
        f.consequence_of = f.consequence_of.and_then(|c| map.get(&c).copied());
    }
}

/// Text sections of a snapshot report: (heading, lines).
pub fn text_sections(r: &SnapshotReport) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let layout = if r.layout == "segment_list" {
        "a bare segment list from torch.cuda.memory_snapshot()"
    } else {
        "torch.cuda.memory._snapshot()/_dump_snapshot()"
    };
    let mut about = vec![
        format!("format: {layout}, pickle protocol {}", r.pickle_protocol),
        format!("era: PyTorch {} ({})", r.era, r.era_evidence.join("; ")),
    ];
    if let Some(conf) = &r.alloc_conf {
        let conf = if conf.is_empty() { "(empty)" } else { conf };
        about.push(format!("PYTORCH_CUDA_ALLOC_CONF: {conf}"));
    }
    if let Some(o) = &r.oom {
        about.push(match o.state.as_str() {
            "at_oom" if o.events_after == 0 => {
                "state: at the OOM (the dump came right after it, e.g. from an OOM observer)"
                    .to_string()
            }
            "at_oom" => format!(
                "state: at the OOM ({} later events change no block)",
                o.events_after
            ),
            "rewound" => format!(
                "state: rewound to the OOM (the dump came {} events later; they were undone)",
                o.events_after
            ),
            _ => format!(
                "state: after the OOM ({} later events could not all be undone)",
                o.events_after
            ),
        });
    }
    out.push(("Memory snapshot".to_string(), about));
    if let Some(o) = &r.oom {
        let rows = [
            (
                "request",
                o.request_bytes,
                format!(
                    "rounded to 512 bytes; {} pool; the segment to cudaMalloc is {}",
                    o.pool,
                    fmt(o.allocation_bytes)
                ),
            ),
            (
                "largest usable hole",
                o.largest_usable_hole_bytes,
                format!(
                    "same pool type, stream {}, default pool, max_split_size rules",
                    o.stream
                ),
            ),
            (
                "usable holes together",
                o.usable_class_free_bytes,
                "free blocks of that kind, all together".to_string(),
            ),
            (
                "free on the device",
                o.device_free_bytes.unwrap_or(0),
                "what CUDA reported free at the failure".to_string(),
            ),
            (
                "hole on other streams",
                o.largest_other_stream_hole_bytes,
                "largest; not reusable by this stream".to_string(),
            ),
            (
                "hole in private pools",
                o.largest_private_pool_hole_bytes,
                "largest; CUDA graphs / MemPool only".to_string(),
            ),
            (
                "hole refused as oversize",
                o.largest_oversize_hole_bytes,
                "largest; max_split_size rules".to_string(),
            ),
            (
                "pending frees",
                o.pending_free_bytes,
                "freed, waiting for other streams".to_string(),
            ),
        ];
        let mut lines = Vec::new();
        for (label, value, meaning) in rows {
            if value == 0
                && !matches!(
                    label,
                    "request" | "largest usable hole" | "free on the device"
                )
            {
                continue;
            }
            lines.push(format!("{label:<24} {:>11}  {meaning}", fmt(value)));
        }
        let verdict = if o.largest_usable_hole_bytes >= o.request_bytes {
            "a usable hole was big enough: the state is not the one at the failure"
        } else {
            "no usable hole was big enough"
        };
        lines.push(format!("→ {verdict}"));
        if !o.stack.is_empty() {
            lines.push(format!("failed allocation at: {}", o.stack.join(" ← ")));
        }
        out.push((format!("Request vs free space (GPU {})", o.device), lines));
    }
    for d in &r.devices {
        let mut lines = vec![format!(
            "{} reserved in {}{}; {} in live tensors ({} requested); {} free in holes (largest {}){}{}",
            fmt(d.reserved_bytes),
            count(d.segments, "segment"),
            if d.expandable_segments > 0 { format!(" ({} expandable)", d.expandable_segments) } else { String::new() },
            fmt(d.allocated_bytes),
            fmt(d.tensor_bytes),
            fmt(d.free_in_segments_bytes),
            fmt(d.largest_hole_bytes),
            if d.pending_free_bytes > 0 { format!("; {} pending free", fmt(d.pending_free_bytes)) } else { String::new() },
            if d.private_pool_bytes > 0 { format!("; {} in private pools", fmt(d.private_pool_bytes)) } else { String::new() },
        )];
        for s in &d.top_sites {
            lines.push(format!(
                "{:>11}  {:>12}  {}",
                fmt(s.bytes),
                count(s.blocks, "block"),
                s.location
            ));
        }
        out.push((
            format!("Live memory by allocation site (GPU {})", d.device),
            lines,
        ));
    }
    out
}
