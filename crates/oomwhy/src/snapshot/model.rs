//! The snapshot as PyTorch wrote it, decoded from the pickle into typed
//! records. Every field is optional in the input (eras differ, and a hostile
//! file can omit anything); what is missing gets a neutral default and, where
//! it matters, a note.

use super::pickle::{Pickle, Value};
use super::SnapshotError;
use std::collections::HashMap;

/// One stack frame as the allocator recorded it (innermost first in a list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Source file, `??` for a C++ frame without debug information.
    pub filename: String,
    /// Line in that file (0 when unknown).
    pub line: i64,
    /// Function name (C++ frames carry the full signature).
    pub name: String,
}

/// What state a block is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    /// In a live tensor.
    Allocated,
    /// Freed by its tensor, but another stream may still use it (`record_stream`).
    PendingFree,
    /// Free space inside a segment.
    Inactive,
}

/// A block: a piece of a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Device address (computed from the segment's address before ≈2.1).
    pub address: u64,
    /// Size in bytes, a multiple of 512.
    pub size: u64,
    /// What the tensor asked for, before rounding.
    pub requested_size: u64,
    /// State.
    pub state: BlockState,
    /// Index into [`Snapshot::frames`] of the allocation's stack, if recorded.
    pub frames: Option<u32>,
}

/// A segment: one cudaMalloc (or one expandable mapping).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Device index.
    pub device: i64,
    /// Device address.
    pub address: u64,
    /// Size in bytes.
    pub total_size: u64,
    /// The stream the segment belongs to (blocks are only reused on it).
    pub stream: i64,
    /// `segment_type == "large"`.
    pub large: bool,
    /// `segment_pool_id`: (0, 0) for the default pools, another pair for a
    /// private pool (CUDA graphs, `torch.cuda.MemPool`); `None` before ≈2.1.
    pub pool: Option<(i64, i64)>,
    /// `is_expandable` (expandable segments).
    pub expandable: bool,
    /// Blocks in address order.
    pub blocks: Vec<Block>,
}

/// The action of a trace event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A block was handed to a tensor.
    Alloc,
    /// A tensor freed its block (it may still wait for other streams).
    FreeRequested,
    /// The block became reusable.
    FreeCompleted,
    /// cudaMalloc of a new segment.
    SegmentAlloc,
    /// cudaFree of a segment.
    SegmentFree,
    /// Expandable segments: memory mapped into a segment.
    SegmentMap,
    /// Expandable segments: memory unmapped from a segment.
    SegmentUnmap,
    /// The moment a snapshot was taken.
    Snapshot,
    /// An allocation failed: the OOM.
    Oom,
    /// An action this version does not know.
    Other,
}

/// One trace event. Kept small: a long run records millions (`time_us`,
/// `compile_context` and `user_metadata` are read as era evidence only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// What happened.
    pub action: Action,
    /// Address (0 for `oom`, which has `device_free` instead).
    pub addr: u64,
    /// Size in bytes (for `oom`: the request rounded to 512 bytes).
    pub size: u64,
    /// Stream.
    pub stream: i64,
    /// `device_free` of an `oom` event: what CUDA reported free.
    pub device_free: Option<u64>,
    /// Index into [`Snapshot::frames`], kept for `oom` events only.
    pub frames: Option<u32>,
}

/// `allocator_settings` (≈2.3 and later).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// `PYTORCH_CUDA_ALLOC_CONF` as the allocator last parsed it.
    pub conf: Option<String>,
    /// `max_split_size` in bytes; `None` when unlimited (PyTorch stores −1 or `SIZE_MAX`).
    pub max_split_size: Option<u64>,
    /// `expandable_segments`.
    pub expandable_segments: Option<bool>,
    /// `garbage_collection_threshold`.
    pub gc_threshold: Option<f64>,
}

/// How the pickle was laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The dict of `torch.cuda.memory._snapshot()` / `_dump_snapshot()`.
    Dict,
    /// The bare segment list of `torch.cuda.memory_snapshot()`.
    SegmentList,
}

/// Which optional keys the file holds: the era evidence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keys {
    /// Blocks carry `history` (≈2.0).
    pub history: bool,
    /// Blocks carry `frames` (≈2.1+).
    pub block_frames: bool,
    /// Blocks carry `address` (≈2.1+).
    pub block_address: bool,
    /// Segments carry `segment_pool_id`.
    pub pool_id: bool,
    /// Segments carry `is_expandable`.
    pub is_expandable: bool,
    /// Trace events carry `time_us` (≈2.2+).
    pub time_us: bool,
    /// The dict has `allocator_settings` (≈2.3+).
    pub allocator_settings: bool,
    /// The dict has `external_annotations` (≈2.5+).
    pub external_annotations: bool,
    /// Trace events carry `compile_context` (≈2.8+).
    pub compile_context: bool,
    /// Trace events carry `user_metadata` (≈2.10+).
    pub user_metadata: bool,
    /// Trace events use `segment_map`/`segment_unmap` (expandable segments).
    pub segment_map: bool,
}

/// A decoded snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Dict or bare segment list.
    pub layout: Layout,
    /// Segments, in file order.
    pub segments: Vec<Segment>,
    /// `device_traces`: one list per device index (empty for a bare list).
    pub traces: Vec<Vec<Event>>,
    /// `allocator_settings`, if present.
    pub settings: Option<Settings>,
    /// Optional keys seen.
    pub keys: Keys,
    /// Every distinct frame list, shared by index.
    pub frames: Vec<Vec<Frame>>,
    /// The pickle protocol.
    pub protocol: u8,
}

/// What makes a dict a snapshot: at least one of these keys.
const SNAPSHOT_KEYS: &[&str] = &["segments", "device_traces"];

/// Converts a decoded pickle into a snapshot, or says why it is none.
pub fn from_pickle(p: &Pickle) -> Result<Snapshot, SnapshotError> {
    let root = p.root();
    let mut b = Builder {
        p,
        frame_ids: HashMap::new(),
        snap: Snapshot {
            layout: Layout::Dict,
            segments: Vec::new(),
            traces: Vec::new(),
            settings: None,
            keys: Keys::default(),
            frames: Vec::new(),
            protocol: p.protocol,
        },
    };
    match root {
        Value::Dict(_) => {
            if !SNAPSHOT_KEYS.iter().any(|k| p.get(root, k).is_some()) {
                return Err(SnapshotError::NotASnapshot(
                    "a dict without `segments` or `device_traces`".into(),
                ));
            }
            if let Some(segments) = p.get(root, "segments") {
                let items = p.seq(segments).ok_or_else(|| {
                    SnapshotError::NotASnapshot(format!(
                        "`segments` is a {}, not a list",
                        Pickle::type_name(segments)
                    ))
                })?;
                for s in items {
                    b.segment(s)?;
                }
            }
            if let Some(traces) = p.get(root, "device_traces") {
                for t in p.seq(traces).into_iter().flatten() {
                    let events = p.seq(t);
                    let mut out = Vec::with_capacity(events.as_ref().map_or(0, |e| e.len()));
                    for e in events.into_iter().flatten() {
                        if let Some(ev) = b.event(e) {
                            out.push(ev);
                        }
                    }
                    b.snap.traces.push(out);
                }
            }
            if let Some(s) = p.get(root, "allocator_settings") {
                b.snap.keys.allocator_settings = true;
                b.snap.settings = Some(b.settings(s));
            }
            b.snap.keys.external_annotations = p.get(root, "external_annotations").is_some();
        }
        Value::List(_) => {
            let items: Vec<Value> = p.seq(root).into_iter().flatten().collect();
            // A bare list is a snapshot only if its items look like segments.
            let looks = items
                .iter()
                .all(|&s| p.get(s, "total_size").is_some() && p.get(s, "blocks").is_some());
            if items.is_empty() || !looks {
                return Err(SnapshotError::NotASnapshot(
                    "a list whose items are not allocator segments".into(),
                ));
            }
            b.snap.layout = Layout::SegmentList;
            for s in items {
                b.segment(s)?;
            }
        }
        other => {
            return Err(SnapshotError::NotASnapshot(format!(
                "a {} at the top level",
                Pickle::type_name(other)
            )))
        }
    }
    Ok(b.snap)
}

struct Builder<'p> {
    p: &'p Pickle,
    /// Frame lists already converted, by their pickle identity.
    frame_ids: HashMap<Value, u32>,
    snap: Snapshot,
}

impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Only containers are used as keys: identity is the variant and index.
        std::mem::discriminant(self).hash(state);
        match self {
            Value::List(i) | Value::Tuple(i) | Value::Set(i) | Value::Dict(i) => i.hash(state),
            Value::Str(i) | Value::Bytes(i) | Value::Long(i) => i.hash(state),
            Value::Int(i) => i.hash(state),
            Value::Bool(b) | Value::Huge(b) => b.hash(state),
            Value::Float(x) => x.to_bits().hash(state),
            Value::None => {}
        }
    }
}
impl Eq for Value {}

impl Builder<'_> {
    fn uint(&self, d: Value, key: &str) -> u64 {
        self.p
            .get(d, key)
            .and_then(|v| self.p.int(v))
            .map(|i| u64::try_from(i.max(0)).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }

    fn sint(&self, d: Value, key: &str) -> Option<i64> {
        let i = self.p.int(self.p.get(d, key)?)?;
        // Streams are pointers stored as int64 (or uint64): keep the bits.
        Some(i as i64)
    }

    fn text(&self, d: Value, key: &str) -> Option<&str> {
        self.p.str(self.p.get(d, key)?)
    }

    /// Converts a frame list once, however many places share it.
    fn frames(&mut self, list: Option<Value>) -> Option<u32> {
        let list = list?;
        let items = self.p.seq(list)?;
        if let Some(&id) = self.frame_ids.get(&list) {
            return Some(id);
        }
        let frames: Vec<Frame> = items
            .filter(|f| self.p.dict(*f).is_some())
            .map(|f| Frame {
                filename: self.text(f, "filename").unwrap_or("??").to_string(),
                line: self.sint(f, "line").unwrap_or(0),
                name: self.text(f, "name").unwrap_or("").to_string(),
            })
            .collect();
        let id = self.snap.frames.len() as u32;
        self.snap.frames.push(frames);
        self.frame_ids.insert(list, id);
        Some(id)
    }

    fn segment(&mut self, s: Value) -> Result<(), SnapshotError> {
        let p = self.p;
        if p.dict(s).is_none() {
            return Err(SnapshotError::NotASnapshot(format!(
                "a segment is a {}, not a dict",
                Pickle::type_name(s)
            )));
        }
        let address = self.uint(s, "address");
        let pool = p.get(s, "segment_pool_id").and_then(|v| {
            let items: Vec<Value> = p.seq(v)?.collect();
            match items[..] {
                [a, b] => Some((p.int(a)? as i64, p.int(b)? as i64)),
                _ => None,
            }
        });
        self.snap.keys.pool_id |= p.get(s, "segment_pool_id").is_some();
        self.snap.keys.is_expandable |= p.get(s, "is_expandable").is_some();
        let mut seg = Segment {
            device: self.sint(s, "device").unwrap_or(0),
            address,
            total_size: self.uint(s, "total_size"),
            stream: self.sint(s, "stream").unwrap_or(0),
            large: self.text(s, "segment_type") != Some("small"),
            pool,
            expandable: p
                .get(s, "is_expandable")
                .and_then(|v| p.int(v))
                .is_some_and(|i| i != 0),
            blocks: Vec::new(),
        };
        let blocks = p
            .get(s, "blocks")
            .and_then(|b| p.seq(b))
            .into_iter()
            .flatten();
        // Before ≈2.1 blocks had no address: they follow each other from the segment's.
        let mut next = address;
        for bv in blocks {
            if p.dict(bv).is_none() {
                continue;
            }
            let size = self.uint(bv, "size");
            let has_address = p.get(bv, "address").is_some();
            self.snap.keys.block_address |= has_address;
            let block_address = if has_address {
                self.uint(bv, "address")
            } else {
                next
            };
            next = block_address.saturating_add(size);
            let state = match self.text(bv, "state") {
                Some("active_allocated") => BlockState::Allocated,
                Some("active_pending_free") | Some("active_awaiting_free") => {
                    BlockState::PendingFree
                }
                _ => BlockState::Inactive,
            };
            let frames = if let Some(f) = p.get(bv, "frames") {
                self.snap.keys.block_frames = true;
                self.frames(Some(f))
            } else if let Some(h) = p.get(bv, "history") {
                // ≈2.0: history is newest first; PyTorch's viewer reads history[0].
                self.snap.keys.history = true;
                let last = p.seq(h).and_then(|mut items| items.next());
                let f = last.and_then(|e| p.get(e, "frames"));
                self.frames(f)
            } else {
                None
            };
            let requested = match p.get(bv, "requested_size") {
                Some(v) => p.int(v).map(|i| i.max(0) as u64).unwrap_or(size),
                None => size,
            };
            seg.blocks.push(Block {
                address: block_address,
                size,
                requested_size: requested,
                state,
                frames,
            });
        }
        if seg.total_size == 0 {
            seg.total_size = seg
                .blocks
                .iter()
                .map(|b| b.size)
                .fold(0, u64::saturating_add);
        }
        self.snap.segments.push(seg);
        Ok(())
    }

    fn event(&mut self, e: Value) -> Option<Event> {
        let p = self.p;
        p.dict(e)?;
        let action = match self.text(e, "action")? {
            "alloc" => Action::Alloc,
            "free_requested" => Action::FreeRequested,
            "free_completed" => Action::FreeCompleted,
            "segment_alloc" => Action::SegmentAlloc,
            "segment_free" => Action::SegmentFree,
            "segment_map" => Action::SegmentMap,
            "segment_unmap" => Action::SegmentUnmap,
            "snapshot" => Action::Snapshot,
            "oom" => Action::Oom,
            _ => Action::Other,
        };
        let keys = &mut self.snap.keys;
        keys.time_us |= p.get(e, "time_us").is_some();
        keys.compile_context |= p.get(e, "compile_context").is_some();
        keys.user_metadata |= p.get(e, "user_metadata").is_some();
        keys.segment_map |= matches!(action, Action::SegmentMap | Action::SegmentUnmap);
        let frames = if action == Action::Oom {
            self.frames(p.get(e, "frames"))
        } else {
            None
        };
        Some(Event {
            action,
            addr: self.uint(e, "addr"),
            size: self.uint(e, "size"),
            stream: self.sint(e, "stream").unwrap_or(0),
            device_free: p
                .get(e, "device_free")
                .and_then(|v| p.int(v))
                .map(|i| u64::try_from(i.max(0)).unwrap_or(u64::MAX)),
            frames,
        })
    }

    fn settings(&self, s: Value) -> Settings {
        let p = self.p;
        let max_split = p.get(s, "max_split_size").and_then(|v| p.int(v));
        Settings {
            conf: self.text(s, "PYTORCH_CUDA_ALLOC_CONF").map(str::to_string),
            // −1 and SIZE_MAX both mean "no limit".
            max_split_size: max_split
                .filter(|&m| m > 0 && m < i128::from(u64::MAX))
                .map(|m| m as u64),
            expandable_segments: p
                .get(s, "expandable_segments")
                .and_then(|v| p.int(v))
                .map(|i| i != 0),
            gc_threshold: p
                .get(s, "garbage_collection_threshold")
                .and_then(|v| p.float(v)),
        }
    }
}
