//! From an analysed snapshot to a finding: verdicts, fixes, the join with
//! the log's OOM message, and the text sections the renderers print.

use super::analyze::Outcome;
use crate::record::{Category, Diagnosis, Finding, Fix, Kind, SnapshotReport, Verdict};
use crate::units::format_size as fmt;

fn verdict(code: &str, title: &str, detail: String) -> Verdict {
    Verdict {
        code: code.into(),
        title: title.into(),
        detail,
        zh: None,
    }
}

fn fix(title: &str, how: &str) -> Fix {
    Fix::english(title, how)
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
const RECORD_HOW: &str = "Before training: torch.cuda.memory._record_memory_history(max_entries=100000). Then dump at the failure with an OOM observer: torch._C._cuda_attach_out_of_memory_observer(lambda device, alloc, device_alloc, device_free: torch.cuda.memory._dump_snapshot(\"oom_snapshot.pickle\")), or in an `except torch.OutOfMemoryError:` block.";

/// Verdicts and fixes of a snapshot finding (from its report alone).
fn conclusions(f: &Finding) -> (Vec<Verdict>, Vec<Fix>) {
    let mut verdicts = Vec::new();
    let mut fixes = Vec::new();
    let Some(r) = f.snapshot.as_deref() else {
        return (verdicts, fixes);
    };
    let Some(o) = &r.oom else {
        let why = r.missing_oom.clone().unwrap_or_default();
        verdicts.push(verdict(
            "snapshot_no_oom_event",
            "This snapshot holds no OOM event",
            format!("{why} The summary below is the memory state when the snapshot was taken, not at a failure."),
        ));
        fixes.push(fix("Record a snapshot at the OOM", RECORD_HOW));
        if let Some(top) = r
            .devices
            .iter()
            .flat_map(|d| d.top_sites.first().map(|s| (d.device, s)))
            .filter(|(_, s)| !s.location.starts_with('('))
            .max_by_key(|(_, s)| s.bytes)
        {
            fixes.push(fix(
                "Look first at the largest holder of live memory",
                &format!(
                    "{} of live tensors on device {} were allocated at {} ({}).",
                    fmt(top.1.bytes),
                    top.0,
                    top.1.location,
                    count(top.1.blocks, "block")
                ),
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
            "A big enough free block exists, but on another stream",
            format!(
                "The request of {} came from stream {}; a free block of {} of the same pool type belongs to another stream. The caching allocator only reuses a block on the stream it was allocated on.",
                fmt(size), o.stream, fmt(o.largest_other_stream_hole_bytes)
            ),
        ));
        fixes.push(fix(
            "Allocate on one stream, or hand memory over explicitly",
            "Create tensors used on a side stream on that stream (with torch.cuda.stream(s):), free side-stream tensors earlier, or call torch.cuda.empty_cache() after a side-stream phase so its cached segments return to CUDA.",
        ));
    }
    if stated(o.largest_private_pool_hole_bytes) {
        explained = true;
        verdicts.push(verdict(
            "snapshot_private_pool",
            "Free memory is held by a private pool (CUDA graphs)",
            format!(
                "A free block of {} sits in a private memory pool (a CUDA graph's or a torch.cuda.MemPool's). Ordinary allocations cannot use it; private pools keep their memory until the graph or pool is released.",
                fmt(o.largest_private_pool_hole_bytes)
            ),
        ));
        fixes.push(fix(
            "Share or release CUDA-graph pools",
            "Capture graphs into one shared pool (torch.cuda.graph(g, pool=first_graph.pool())), delete graphs you no longer replay, or capture fewer shapes (torch.compile mode=\"reduce-overhead\" captures one graph per shape).",
        ));
    }
    if stated(o.largest_oversize_hole_bytes) {
        explained = true;
        let limit = r.max_split_size_bytes.map_or("max_split_size".into(), fmt);
        verdicts.push(verdict(
            "snapshot_oversize_rule",
            "A big enough free block exists, but the max_split_size rule refuses it",
            format!(
                "A free block of {} on the right stream could hold the request of {}, but with max_split_size {limit} the allocator does not split blocks at or above that size for smaller requests, and does not hand a larger request a block 20 MiB or more bigger than it.",
                fmt(o.largest_oversize_hole_bytes), fmt(size)
            ),
        ));
        fixes.push(fix(
            "Revisit max_split_size_mb",
            "Raise max_split_size_mb in PYTORCH_CUDA_ALLOC_CONF above the blocks your big tensors need, or drop it and use expandable_segments:True instead.",
        ));
    }
    if stated(o.pending_free_bytes) {
        explained = true;
        verdicts.push(verdict(
            "snapshot_pending_free",
            "Freed memory was still waiting for other streams",
            format!(
                "{} of blocks of this pool type were freed by their tensors but are not reusable yet: they were used on other streams (record_stream) and the allocator waits for those streams' events before reusing them.",
                fmt(o.pending_free_bytes)
            ),
        ));
        fixes.push(fix(
            "Synchronise side streams before the big allocation",
            "Make the current stream wait for the side streams (torch.cuda.current_stream().wait_stream(s)) or synchronise before the allocation; avoid tensor.record_stream on large tensors.",
        ));
    }
    let class_free = o.usable_class_free_bytes;
    if o.largest_usable_hole_bytes < size && class_free.saturating_add(free) >= size {
        explained = true;
        verdicts.push(verdict(
            "snapshot_fragmentation",
            "Fragmentation: enough free memory, but no hole big enough",
            format!(
                "The request needed {} in one piece. Free holes the allocator could use held {} together, and CUDA had {} free, yet the largest usable hole was only {}: the free space is scattered between live blocks in partly used segments, which the allocator cannot release or merge.",
                fmt(size), fmt(class_free), fmt(free), fmt(o.largest_usable_hole_bytes)
            ),
        ));
        fixes.push(fix(
            "Use expandable segments",
            "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch ≥ 2.1): segments grow in place instead of leaving holes between them.",
        ));
        fixes.push(fix(
            "Allocate long-lived and large tensors first",
            "Create buffers that live the whole run (weights, optimizer state, KV caches) before the first step, and reuse preallocated buffers for large temporary tensors, so short-lived tensors do not split the big segments.",
        ));
    }
    if !explained {
        let allocated = dev.map_or(0, |d| d.allocated_bytes);
        let reserved = dev.map_or(0, |d| d.reserved_bytes);
        verdicts.push(verdict(
            "snapshot_shortage",
            "Not enough memory: live tensors fill the GPU",
            format!(
                "Live tensors hold {} of the {} PyTorch reserved; free holes of the right kind held {} and CUDA had {} free, less than the request of {} even if every hole were merged. Less memory must be in use when this allocation happens.",
                fmt(allocated), fmt(reserved), fmt(class_free), fmt(free), fmt(size)
            ),
        ));
        if let Some(top) = dev
            .and_then(|d| d.top_sites.first())
            .filter(|s| !s.location.starts_with('('))
        {
            fixes.push(fix(
                "Shrink the largest holder of live memory",
                &format!(
                    "{} of live tensors ({}) were allocated at {}: free them earlier, keep them on the CPU, or make them smaller.",
                    fmt(top.bytes),
                    count(top.blocks, "block"),
                    top.location
                ),
            ));
        }
        fixes.push(fix(
            "Reduce the batch size or the activations kept",
            "Halve the batch (keep the effective batch with gradient accumulation), enable gradient checkpointing, or run under torch.autocast with bfloat16.",
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
            f.diagnosis = Diagnosis {
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
