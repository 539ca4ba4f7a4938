//! From an analysed snapshot to a finding, the join with the log's OOM
//! message, and the text sections the renderers print. The verdicts and
//! fixes are the explainer's (`explain/snapshot.rs`).

use super::analyze::Outcome;
use crate::i18n::Said;
use crate::record::{Category, Finding, Kind, Note, SnapshotReport};
use crate::units::format_size as fmt;

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
            let (unmatched, after) = (o.unmatched, oom.events_after);
            f.notes.push(
                crate::say!(
                    en: "{unmatched} of the {after} trace events after the OOM did not match the recorded blocks; the state shown is after the OOM, not at it.",
                    zh: "OOM 之后的 {after} 个 trace 事件里有 {unmatched} 个与记录的 block 对不上；显示的是 OOM 之后的状态，不是 OOM 当时的状态。",
                )
                .into(),
            );
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
    // Verdicts and fixes come from the explainer (`explain/snapshot.rs`).
    f.snapshot = Some(Box::new(r));
    f
}

/// `1 block`, `2 blocks`.
fn count(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Compares the message's totals with the snapshot's, for a joined finding.
fn cross_check(f: &Finding) -> Option<Note> {
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
    let (gap, holes, pending, hole) = (
        fmt(said),
        fmt(d.free_in_segments_bytes),
        fmt(d.pending_free_bytes),
        fmt(o.largest_usable_hole_bytes),
    );
    let compared = if said.abs_diff(snap_gap) <= tolerance {
        crate::say!(
            en: "The message's reserved-but-unallocated {gap} matches the snapshot's free space in segments ({holes} in holes, {pending} pending, largest usable hole {hole}).",
            zh: "报错里“已保留但未分配”的 {gap} 与快照中各段的空闲空间一致（空洞 {holes}，待释放 {pending}，可用的最大空洞 {hole}）。",
        )
    } else {
        crate::say!(
            en: "The message's reserved-but-unallocated {gap} differs from the snapshot's free space in segments ({holes} in holes, {pending} pending, largest usable hole {hole}).",
            zh: "报错里“已保留但未分配”的 {gap} 与快照中各段的空闲空间不一致（空洞 {holes}，待释放 {pending}，可用的最大空洞 {hole}）。",
        )
    };
    let outside = match (f.sizes.total_bytes, f.sizes.free_bytes) {
        (Some(total), Some(free)) => {
            let used_outside = fmt(total.saturating_sub(free).saturating_sub(d.reserved_bytes));
            let total = fmt(total);
            crate::say!(
                en: " Of the {total} the message gives as capacity, {used_outside} are used outside PyTorch's allocator (CUDA context, libraries, other processes), which the snapshot cannot see.",
                zh: "报错给出的总容量 {total} 中，有 {used_outside} 用在 PyTorch 分配器之外（CUDA context、库、其他进程），快照看不到这部分。",
            )
        }
        _ => Said::default(),
    };
    let input = match f.facts.get("snapshot") {
        Some(name) => Said::same(name),
        None => crate::say!(en: "the snapshot", zh: "快照"),
    };
    Some(
        crate::say_parts!(
            en: "Joined with the `oom` event of {input}. {compared}{outside}",
            zh: "已与 {input} 的 `oom` 事件对应起来。{compared}{outside}",
            input = input,
            compared = compared,
            outside = outside,
        )
        .into(),
    )
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
            if let Some(check) = cross_check(&findings[t]) {
                findings[t].notes.push(check);
            }
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
