//! What a snapshot says about an OOM: the state at the failure (rewound when
//! the dump came later), the holes that could and could not serve the
//! request under the caching allocator's rules, and who holds the memory.

use super::model::{Action, BlockState, Event, Frame, Layout, Snapshot};
use crate::record::{DeviceState, OomAnalysis, Site, SnapshotReport};
use crate::units::MIB;
use std::collections::HashMap;

/// Requests up to this size go to the small pool (`kSmallSize`).
const SMALL_SIZE: u64 = MIB;
/// Segment size of the small pool (`kSmallBuffer`).
const SMALL_BUFFER: u64 = 2 * MIB;
/// Smallest large-pool segment (`kLargeBuffer`), also the oversize rounding limit.
const LARGE_BUFFER: u64 = 20 * MIB;
/// Requests below this get a `kLargeBuffer` segment (`kMinLargeAlloc`).
const MIN_LARGE_ALLOC: u64 = 10 * MIB;
/// Large segments are rounded to this (`kRoundLarge`).
const ROUND_LARGE: u64 = 2 * MIB;
/// How many allocation sites to list per device.
const TOP_SITES: usize = 5;
/// Frames of a site's stack kept in the report.
const SITE_FRAMES: usize = 4;

/// The size of the segment the allocator asks CUDA for to serve `size`
/// (`get_allocation_size`); this is what "Tried to allocate" prints.
pub fn allocation_size(size: u64) -> u64 {
    if size <= SMALL_SIZE {
        SMALL_BUFFER
    } else if size < MIN_LARGE_ALLOC {
        LARGE_BUFFER
    } else {
        size.div_ceil(ROUND_LARGE).saturating_mul(ROUND_LARGE)
    }
}

/// Describes the era of a snapshot from the keys it holds.
pub fn era(s: &Snapshot) -> (String, Vec<String>) {
    let k = &s.keys;
    let mut evidence = Vec::new();
    let has_events = s.traces.iter().any(|t| !t.is_empty());
    let era = if k.user_metadata {
        evidence.push("trace events carry `user_metadata`".into());
        "≥2.10"
    } else if k.compile_context {
        evidence.push("trace events carry `compile_context`, not `user_metadata`".into());
        "2.8–2.9"
    } else if k.external_annotations {
        evidence.push("`external_annotations` present".into());
        if has_events {
            evidence.push("trace events without `compile_context`".into());
            "2.5–2.7"
        } else {
            evidence.push("no trace events to narrow it further".into());
            "≥2.5"
        }
    } else if k.allocator_settings {
        evidence.push("`allocator_settings` present, no `external_annotations`".into());
        "2.3–2.4"
    } else if k.time_us {
        evidence.push("trace events carry `time_us`, no `allocator_settings`".into());
        "2.2"
    } else if k.history {
        evidence.push("blocks carry `history`, not `frames`".into());
        "2.0"
    } else if k.block_frames || k.block_address {
        evidence.push("blocks carry `frames` and `address`".into());
        if s.layout == Layout::SegmentList {
            evidence.push("a bare segment list has no trace to narrow it further".into());
            "≥2.1"
        } else if has_events {
            evidence.push("trace events without `time_us`".into());
            "2.1"
        } else {
            evidence.push("no trace events to narrow it further".into());
            "≥2.1"
        }
    } else {
        evidence.push("no version-specific key present".into());
        "unknown"
    };
    if k.segment_map {
        evidence.push("`segment_map`/`segment_unmap` events (expandable segments)".into());
    }
    (era.to_string(), evidence)
}

/// Source files of native frames (the interpreter, C++ libraries, CUDA).
const NATIVE_EXTENSIONS: &[&str] = &[
    ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh", ".S",
];

/// A frame of PyTorch itself or of native code: not where the user allocated.
fn internal(f: &Frame) -> bool {
    let file = f.filename.replace('\\', "/");
    file == "??"
        || file.is_empty()
        || file.contains("/torch/")
        || file.starts_with("torch/")
        || NATIVE_EXTENSIONS.iter().any(|ext| file.ends_with(ext))
        || f.name.contains("::")
        || file.contains("/site-packages/torch")
        || file.contains("/dist-packages/torch")
}

fn describe(f: &Frame) -> String {
    format!("{}:{} in {}", f.filename, f.line, f.name)
}

/// The user frames of a stack, innermost first.
fn user_frames(frames: &[Frame]) -> Vec<String> {
    frames
        .iter()
        .filter(|f| !internal(f))
        .take(SITE_FRAMES)
        .map(describe)
        .collect()
}

/// Where a block was allocated, for grouping.
fn site_of(s: &Snapshot, frames: Option<u32>) -> (String, Vec<String>) {
    let Some(list) = frames.and_then(|i| s.frames.get(i as usize)) else {
        return ("(no stack recorded)".into(), Vec::new());
    };
    if list.is_empty() {
        return ("(no stack recorded)".into(), Vec::new());
    }
    let user = user_frames(list);
    match user.first() {
        Some(first) => (first.clone(), user),
        None => (
            "(only PyTorch-internal or C++ frames)".into(),
            list.iter().take(SITE_FRAMES).map(describe).collect(),
        ),
    }
}

/// A working copy of the allocator's state, for rewinding.
#[derive(Debug, Clone)]
struct Seg {
    device: i64,
    address: u64,
    size: u64,
    stream: i64,
    large: bool,
    private: bool,
    expandable: bool,
    blocks: Vec<Blk>,
}

#[derive(Debug, Clone)]
struct Blk {
    address: u64,
    size: u64,
    requested: u64,
    state: BlockState,
    frames: Option<u32>,
}

fn state_of(s: &Snapshot) -> Vec<Seg> {
    s.segments
        .iter()
        .map(|g| Seg {
            device: g.device,
            address: g.address,
            size: g.total_size,
            stream: g.stream,
            large: g.large,
            private: g.pool.is_some_and(|p| p != (0, 0)),
            expandable: g.expandable,
            blocks: g
                .blocks
                .iter()
                .map(|b| Blk {
                    address: b.address,
                    size: b.size,
                    requested: b.requested_size,
                    state: b.state,
                    frames: b.frames,
                })
                .collect(),
        })
        .collect()
}

fn seg_index(segs: &[Seg], device: i64, addr: u64) -> Option<usize> {
    segs.iter().position(|g| {
        g.device == device && addr >= g.address && addr < g.address.saturating_add(g.size)
    })
}

/// Marks `[addr, addr+size)` with `state`, splitting the block that holds
/// it; merges free neighbours afterwards. False when nothing holds it.
fn carve(seg: &mut Seg, addr: u64, size: u64, state: BlockState) -> bool {
    let Some(i) = seg.blocks.iter().position(|b| {
        addr >= b.address && addr.saturating_add(size) <= b.address.saturating_add(b.size)
    }) else {
        return false;
    };
    let b = seg.blocks[i].clone();
    let mut parts = Vec::new();
    if addr > b.address {
        parts.push(Blk {
            size: addr - b.address,
            ..b.clone()
        });
    }
    parts.push(Blk {
        address: addr,
        size,
        requested: size,
        state,
        frames: None,
    });
    let end = addr + size;
    let b_end = b.address + b.size;
    if b_end > end {
        parts.push(Blk {
            address: end,
            size: b_end - end,
            ..b
        });
    }
    seg.blocks.splice(i..=i, parts);
    merge_free(seg);
    true
}

fn merge_free(seg: &mut Seg) {
    let mut out: Vec<Blk> = Vec::with_capacity(seg.blocks.len());
    for b in seg.blocks.drain(..) {
        match out.last_mut() {
            Some(last)
                if last.state == BlockState::Inactive
                    && b.state == BlockState::Inactive
                    && last.address.saturating_add(last.size) == b.address =>
            {
                last.size += b.size;
                last.requested = 0;
                last.frames = None;
            }
            _ => out.push(b),
        }
    }
    seg.blocks = out;
}

/// Undoes the events after the OOM, newest first. Returns how many could
/// not be matched to the state (then the rewound state is approximate).
fn rewind(segs: &mut Vec<Seg>, device: i64, after: &[Event]) -> u64 {
    let mut unmatched = 0;
    for e in after.iter().rev() {
        let ok = match e.action {
            Action::Alloc => seg_index(segs, device, e.addr).is_some_and(|i| {
                let seg = &mut segs[i];
                match seg.blocks.iter_mut().find(|b| b.address == e.addr) {
                    Some(b) => {
                        b.state = BlockState::Inactive;
                        b.frames = None;
                        merge_free(seg);
                        true
                    }
                    None => false,
                }
            }),
            // Before the free completed the block was still in use (pending).
            Action::FreeCompleted => seg_index(segs, device, e.addr)
                .is_some_and(|i| carve(&mut segs[i], e.addr, e.size, BlockState::PendingFree)),
            Action::FreeRequested => seg_index(segs, device, e.addr).is_some_and(|i| {
                match segs[i].blocks.iter_mut().find(|b| b.address == e.addr) {
                    Some(b) => {
                        b.state = BlockState::Allocated;
                        true
                    }
                    None => false,
                }
            }),
            Action::SegmentAlloc | Action::SegmentMap => {
                match seg_index(segs, device, e.addr) {
                    Some(i) if segs[i].address == e.addr && segs[i].size <= e.size => {
                        segs.remove(i);
                        true
                    }
                    // An expandable segment grew by this mapping: shrink it back.
                    Some(i) => {
                        let seg = &mut segs[i];
                        let end = e.addr.saturating_add(e.size);
                        seg.blocks
                            .retain(|b| b.address < e.addr || b.address >= end);
                        if let Some(last) = seg.blocks.last_mut() {
                            let last_end = last.address.saturating_add(last.size);
                            if last_end > e.addr && last.state == BlockState::Inactive {
                                last.size = e.addr.saturating_sub(last.address);
                            }
                        }
                        seg.size = seg.size.saturating_sub(e.size);
                        true
                    }
                    None => false,
                }
            }
            Action::SegmentFree | Action::SegmentUnmap => {
                let grown = segs.iter_mut().find(|g| {
                    g.device == device && g.expandable && g.address.saturating_add(g.size) == e.addr
                });
                if let Some(g) = grown.filter(|_| e.action == Action::SegmentUnmap) {
                    g.size = g.size.saturating_add(e.size);
                    g.blocks.push(Blk {
                        address: e.addr,
                        size: e.size,
                        requested: 0,
                        state: BlockState::Inactive,
                        frames: None,
                    });
                    merge_free(g);
                } else {
                    segs.push(Seg {
                        device,
                        address: e.addr,
                        size: e.size,
                        stream: e.stream,
                        large: e.size != SMALL_BUFFER,
                        private: false,
                        expandable: e.action == Action::SegmentUnmap,
                        blocks: vec![Blk {
                            address: e.addr,
                            size: e.size,
                            requested: 0,
                            state: BlockState::Inactive,
                            frames: None,
                        }],
                    });
                }
                true
            }
            Action::Snapshot | Action::Oom | Action::Other => true,
        };
        if !ok {
            unmatched += 1;
        }
    }
    unmatched
}

fn device_state(s: &Snapshot, segs: &[Seg], device: i64) -> DeviceState {
    let mut d = DeviceState {
        device,
        segments: 0,
        expandable_segments: 0,
        reserved_bytes: 0,
        allocated_bytes: 0,
        tensor_bytes: 0,
        pending_free_bytes: 0,
        free_in_segments_bytes: 0,
        largest_hole_bytes: 0,
        private_pool_bytes: 0,
        trace_events: usize::try_from(device)
            .ok()
            .and_then(|i| s.traces.get(i))
            .map_or(0, |t| t.len() as u64),
        top_sites: Vec::new(),
    };
    let mut sites: HashMap<String, (u64, u64, Vec<String>)> = HashMap::new();
    for g in segs.iter().filter(|g| g.device == device) {
        d.segments += 1;
        d.expandable_segments += u64::from(g.expandable);
        d.reserved_bytes = d.reserved_bytes.saturating_add(g.size);
        if g.private {
            d.private_pool_bytes = d.private_pool_bytes.saturating_add(g.size);
        }
        for b in &g.blocks {
            match b.state {
                BlockState::Allocated => {
                    d.allocated_bytes = d.allocated_bytes.saturating_add(b.size);
                    d.tensor_bytes = d.tensor_bytes.saturating_add(b.requested);
                    let (location, stack) = site_of(s, b.frames);
                    let entry = sites.entry(location).or_insert((0, 0, stack));
                    entry.0 = entry.0.saturating_add(b.size);
                    entry.1 += 1;
                }
                BlockState::PendingFree => {
                    d.pending_free_bytes = d.pending_free_bytes.saturating_add(b.size)
                }
                BlockState::Inactive => {
                    d.free_in_segments_bytes = d.free_in_segments_bytes.saturating_add(b.size);
                    d.largest_hole_bytes = d.largest_hole_bytes.max(b.size);
                }
            }
        }
    }
    let mut sites: Vec<Site> = sites
        .into_iter()
        .map(|(location, (bytes, blocks, stack))| Site {
            location,
            bytes,
            blocks,
            stack,
        })
        .collect();
    sites.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| a.location.cmp(&b.location))
    });
    sites.truncate(TOP_SITES);
    d.top_sites = sites;
    d
}

/// The devices a snapshot knows of, in order.
fn devices(s: &Snapshot) -> Vec<i64> {
    let mut out: Vec<i64> = s.segments.iter().map(|g| g.device).collect();
    for (i, t) in s.traces.iter().enumerate() {
        if !t.is_empty() {
            out.push(i as i64);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Why a snapshot holds no `oom` event, and how to get one.
fn missing_oom(s: &Snapshot) -> String {
    let events: usize = s.traces.iter().map(Vec::len).sum();
    let only_snapshot_markers = events > 0
        && s.traces
            .iter()
            .flatten()
            .all(|e| e.action == Action::Snapshot);
    if s.layout == Layout::SegmentList {
        "This is the bare segment list of torch.cuda.memory_snapshot(): it has no trace, so it cannot hold an `oom` event.".into()
    } else if only_snapshot_markers && events <= s.traces.len() {
        "The trace holds only the `snapshot` marker: history was recorded with a one-entry ring buffer (`trace_alloc_max_entries=1`, the legacy API's default), so the `oom` event, if there was one, was overwritten.".into()
    } else if events == 0 {
        "The trace is empty: history was off or recorded with enabled='state' (state only, no events), or nothing was allocated while it was on.".into()
    } else {
        format!("The trace holds {events} events but no `oom`: no allocation failed while history was recorded, or the `oom` event was left out (skip_actions=['oom']) or pushed out of the ring buffer (max_entries).")
    }
}

/// The Chinese of a reason [`missing_oom`] wrote (the report keeps the
/// English); the English itself for a text it did not write.
pub(crate) fn missing_oom_zh(en: &str) -> String {
    if en.starts_with("This is the bare segment list") {
        "这是 torch.cuda.memory_snapshot() 返回的单纯段列表：它没有 trace，所以不可能包含 `oom` 事件。".into()
    } else if en.starts_with("The trace holds only the `snapshot` marker") {
        "trace 里只有 `snapshot` 标记：记录历史时用的是只有一个条目的环形缓冲区（`trace_alloc_max_entries=1`，旧 API 的默认值），所以即使有过 `oom` 事件，也已经被覆盖了。".into()
    } else if en.starts_with("The trace is empty") {
        "trace 是空的：历史记录没有打开，或者是用 enabled='state' 记录的（只记状态，不记事件），或者记录期间什么都没有分配。".into()
    } else if let Some(events) = en
        .strip_prefix("The trace holds ")
        .filter(|_| en.contains(" events but no `oom`"))
        .and_then(|rest| rest.split(' ').next())
    {
        format!("trace 里有 {events} 个事件，但没有 `oom`：记录历史期间没有分配失败，或者 `oom` 事件被排除了（skip_actions=['oom']），或者被挤出了环形缓冲区（max_entries）。")
    } else {
        en.to_string()
    }
}

/// The request's view of every hole on its device.
fn analyze_oom(
    s: &Snapshot,
    segs: &[Seg],
    device: i64,
    oom: &Event,
    max_split: Option<u64>,
) -> OomAnalysis {
    let size = oom.size;
    let large = size > SMALL_SIZE;
    let device_free = oom.device_free.unwrap_or(0);
    let mut a = OomAnalysis {
        device,
        request_bytes: size,
        allocation_bytes: allocation_size(size),
        pool: if large { "large" } else { "small" }.into(),
        stream: oom.stream,
        device_free_bytes: oom.device_free,
        event_index: 0,
        events_after: 0,
        state: "at_oom".into(),
        largest_usable_hole_bytes: 0,
        usable_class_free_bytes: 0,
        largest_other_stream_hole_bytes: 0,
        largest_private_pool_hole_bytes: 0,
        largest_oversize_hole_bytes: 0,
        pending_free_bytes: 0,
        stack: oom
            .frames
            .and_then(|i| s.frames.get(i as usize))
            .map(|f| user_frames(f))
            .unwrap_or_default(),
    };
    for g in segs
        .iter()
        .filter(|g| g.device == device && g.large == large)
    {
        let last = g.blocks.len().saturating_sub(1);
        for (i, b) in g.blocks.iter().enumerate() {
            if b.state == BlockState::PendingFree {
                a.pending_free_bytes = a.pending_free_bytes.saturating_add(b.size);
                continue;
            }
            if b.state != BlockState::Inactive {
                continue;
            }
            if g.private {
                a.largest_private_pool_hole_bytes = a.largest_private_pool_hole_bytes.max(b.size);
            } else if g.stream != oom.stream {
                a.largest_other_stream_hole_bytes = a.largest_other_stream_hole_bytes.max(b.size);
            } else {
                // An expandable segment's free tail can grow into free device memory.
                let effective = if g.expandable && i == last {
                    b.size.saturating_add(device_free)
                } else {
                    b.size
                };
                let oversize = max_split.is_some_and(|m| {
                    (size < m && b.size >= m)
                        || (size >= m && b.size >= size.saturating_add(LARGE_BUFFER))
                });
                if oversize {
                    a.largest_oversize_hole_bytes = a.largest_oversize_hole_bytes.max(b.size);
                } else {
                    a.usable_class_free_bytes = a.usable_class_free_bytes.saturating_add(b.size);
                    a.largest_usable_hole_bytes = a.largest_usable_hole_bytes.max(effective);
                }
            }
        }
    }
    a
}

/// One analysis per OOM event (the last on each device), or one summary.
pub struct Outcome {
    /// The report.
    pub report: SnapshotReport,
    /// Trace events of the OOM's device that could not be undone.
    pub unmatched: u64,
}

/// Analyses a snapshot: one outcome per device with an `oom` event, or a
/// single memory-state summary when there is none.
pub fn analyze(s: &Snapshot) -> Vec<Outcome> {
    let (era, era_evidence) = era(s);
    let settings = s.settings.clone().unwrap_or_default();
    let base = SnapshotReport {
        layout: match s.layout {
            Layout::Dict => "dict",
            Layout::SegmentList => "segment_list",
        }
        .into(),
        era,
        era_evidence,
        pickle_protocol: s.protocol,
        alloc_conf: settings.conf.clone(),
        max_split_size_bytes: settings.max_split_size,
        expandable_segments: settings.expandable_segments,
        devices: Vec::new(),
        oom: None,
        missing_oom: None,
    };
    let current = state_of(s);
    let all_devices = devices(s);
    let mut out = Vec::new();
    for (dev, trace) in s.traces.iter().enumerate() {
        let Some(k) = trace.iter().rposition(|e| e.action == Action::Oom) else {
            continue;
        };
        let device = dev as i64;
        let after = &trace[k + 1..];
        let mut segs = current.clone();
        let unmatched = rewind(&mut segs, device, after);
        let mut oom = analyze_oom(s, &segs, device, &trace[k], settings.max_split_size);
        oom.event_index = k as u64;
        oom.events_after = after.len() as u64;
        let significant = after
            .iter()
            .any(|e| !matches!(e.action, Action::Snapshot | Action::Oom | Action::Other));
        oom.state = if !significant {
            "at_oom"
        } else if unmatched == 0 {
            "rewound"
        } else {
            "after_oom"
        }
        .into();
        let mut report = base.clone();
        report.devices = all_devices
            .iter()
            .map(|&d| {
                if d == device {
                    device_state(s, &segs, d)
                } else {
                    device_state(s, &current, d)
                }
            })
            .collect();
        report.oom = Some(oom);
        out.push(Outcome { report, unmatched });
    }
    if out.is_empty() {
        let mut report = base;
        report.devices = all_devices
            .iter()
            .map(|&d| device_state(s, &current, d))
            .collect();
        report.missing_oom = Some(missing_oom(s));
        out.push(Outcome {
            report,
            unmatched: 0,
        });
    }
    out
}
