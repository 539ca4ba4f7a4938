#!/usr/bin/env python3
"""Writes the memory-snapshot fixtures of tests/snapshots/ (standard library only).

A small simulation of PyTorch's CUDA caching allocator produces each scenario:
requests rounded up to 512 bytes, a small pool (requests up to 1 MiB, 2 MiB
segments) and a large pool (20 MiB segments below 10 MiB, else rounded up to
2 MiB), best fit per (stream, private pool), block splitting, the
max_split_size rules, release of every fully free cached segment before an
OOM, and the `oom` trace event with `device_free`. The state is then written
in the dict layout of the PyTorch release being imitated, with the pickle
protocol given per scenario.

    python3 tests/snapshots/make_fixtures.py      # rewrites tests/snapshots/*.pickle
    python3 tests/snapshots/make_fixtures.py --big /tmp/big.pickle 100
        # a snapshot of about 100 MB (fragmentation at the end) for measuring
        # speed and memory; never committed
"""

import os
import pickle

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
SMALL_SIZE, SMALL_BUFFER, LARGE_BUFFER, MIN_LARGE_ALLOC, ROUND_LARGE = MIB, 2 * MIB, 20 * MIB, 10 * MIB, 2 * MIB
HERE = os.path.dirname(os.path.abspath(__file__))

# Frames, innermost first, as the allocator records them. C++ frames come
# first when stacks="all".
CPP = [
    {"name": "torch::unwind::unwind()", "filename": "??", "line": 0},
    {"name": "torch::CapturedTraceback::gather(bool, bool, bool)", "filename": "??", "line": 0},
]


def stack(*frames, cpp=True, torch_root="/opt/conda/lib/python3.11/site-packages/torch"):
    """A stack from (file, line, name) tuples, innermost first, with torch's own frame on top."""
    py = [{"filename": f"{torch_root}/nn/modules/linear.py", "line": 125, "name": "forward"}]
    py += [{"filename": f, "line": l, "name": n} for f, l, n in frames]
    return (CPP if cpp else []) + py


class OutOfMemory(Exception):
    pass


class Allocator:
    def __init__(self, device=0, capacity=8 * GIB, outside=0, max_split=None, expandable=False,
                 base=0x7F0000000000, max_entries=None, record=True):
        self.device, self.capacity, self.outside = device, capacity, outside
        self.max_split, self.expandable = max_split, expandable
        self.segments = []  # dicts: address, size, stream, large, pool, expandable, blocks, frames
        self.trace = []
        self.next_addr = base + device * (1 << 40)
        self.max_entries, self.record = max_entries, record
        self.clock = 1_700_000_000_000_000

    # -- the trace, a ring buffer of max_entries --------------------------------
    def event(self, action, addr, size, stream, frames=None, device_free=None):
        if not self.record:
            return
        self.clock += 137
        e = {"action": action, "size": size, "stream": stream, "time_us": self.clock, "frames": frames or []}
        if action == "oom":
            e["device_free"] = device_free
        else:
            e["addr"] = addr
        self.trace.append(e)
        if self.max_entries is not None and len(self.trace) > self.max_entries:
            del self.trace[0]

    def reserved(self):
        return sum(s["size"] for s in self.segments)

    def device_free(self):
        return self.capacity - self.outside - self.reserved()

    @staticmethod
    def round(size):
        return max(512, (size + 511) // 512 * 512)

    @staticmethod
    def allocation_size(size):
        if size <= SMALL_SIZE:
            return SMALL_BUFFER
        if size < MIN_LARGE_ALLOC:
            return LARGE_BUFFER
        return (size + ROUND_LARGE - 1) // ROUND_LARGE * ROUND_LARGE

    def _free_blocks(self, large, stream, pool):
        for s in self.segments:
            if s["large"] == large and s["stream"] == stream and s["pool"] == pool:
                for i, b in enumerate(s["blocks"]):
                    if b["state"] == "inactive":
                        yield s, i, b

    def _best_fit(self, size, large, stream, pool):
        fits = [c for c in self._free_blocks(large, stream, pool) if c[2]["size"] >= size]
        if not fits:
            return None
        s, i, b = min(fits, key=lambda c: (c[2]["size"], c[2]["address"]))
        m = self.max_split
        if m is not None and ((size < m and b["size"] >= m) or (size >= m and b["size"] >= size + LARGE_BUFFER)):
            return None
        return s, i

    def _release_cached(self):
        for s in list(self.segments):
            if all(b["state"] == "inactive" for b in s["blocks"]):
                self.segments.remove(s)
                self.event("segment_unmap" if s["expandable"] else "segment_free", s["address"], s["size"], s["stream"])

    def _new_segment(self, size, large, stream, pool, frames):
        seg_size = self.allocation_size(size)
        if self.expandable and large:
            # Expandable segments: grow the stream's segment by mapping more pages.
            for s in self.segments:
                if s["expandable"] and s["stream"] == stream and s["pool"] == pool and s["large"]:
                    last = s["blocks"][-1]
                    grow = size - (last["size"] if last["state"] == "inactive" else 0)
                    grow = (grow + ROUND_LARGE - 1) // ROUND_LARGE * ROUND_LARGE
                    if grow > self.device_free():
                        return None
                    addr = s["address"] + s["size"]
                    self.event("segment_map", addr, grow, stream)
                    s["size"] += grow
                    if last["state"] == "inactive":
                        last["size"] += grow
                    else:
                        s["blocks"].append({"address": addr, "size": grow, "requested": 0, "state": "inactive", "frames": []})
                    return s, len(s["blocks"]) - 1
        if seg_size > self.device_free():
            return None
        addr = self.next_addr
        self.next_addr += seg_size + 64 * MIB
        seg = {"address": addr, "size": seg_size, "stream": stream, "large": large, "pool": pool,
               "expandable": self.expandable and large, "frames": frames,
               "blocks": [{"address": addr, "size": seg_size, "requested": 0, "state": "inactive", "frames": []}]}
        self.segments.append(seg)
        self.event("segment_map" if seg["expandable"] else "segment_alloc", addr, seg_size, stream, frames)
        return seg, 0

    def malloc(self, nbytes, frames, stream=0, pool=(0, 0)):
        size = self.round(nbytes)
        large = size > SMALL_SIZE
        found = self._best_fit(size, large, stream, pool) or self._new_segment(size, large, stream, pool, frames)
        if found is None:
            self._release_cached()
            found = self._new_segment(size, large, stream, pool, frames)
        if found is None:
            self.event("oom", 0, size, stream, frames, device_free=self.device_free())
            raise OutOfMemory(size)
        seg, i = found
        b = seg["blocks"][i]
        rest = b["size"] - size
        split = rest >= 512 if not large else ((self.max_split is None or size < self.max_split) and rest > SMALL_SIZE)
        if seg["expandable"] and rest > 0:
            split = True
        if split:
            seg["blocks"].insert(i + 1, {"address": b["address"] + size, "size": rest, "requested": 0, "state": "inactive", "frames": []})
            b["size"] = size
        b.update(requested=nbytes, state="active_allocated", frames=frames)
        self.event("alloc", b["address"], b["size"], stream, frames)
        return b

    def free(self, b, frames=None, pending=False):
        seg = next(s for s in self.segments if b in s["blocks"])
        self.event("free_requested", b["address"], b["size"], seg["stream"], frames)
        if pending:  # used on another stream (record_stream): waits for its event
            b["state"] = "active_pending_free"
            return
        self.event("free_completed", b["address"], b["size"], seg["stream"], frames)
        b.update(state="inactive", frames=[], requested=0)
        merged = []
        for x in seg["blocks"]:
            if merged and merged[-1]["state"] == "inactive" and x["state"] == "inactive":
                merged[-1]["size"] += x["size"]
            else:
                merged.append(x)
        seg["blocks"] = merged

    def mark_snapshot(self):
        self.event("snapshot", 0, self.reserved(), 0)


def segment_dict(s, device, era):
    blocks = []
    for b in s["blocks"]:
        d = {"size": b["size"], "requested_size": b["requested"] if b["state"] != "inactive" else b["size"], "state": b["state"]}
        if era == "2.0":
            if b["state"] != "inactive" and b["frames"]:
                d["history"] = [{"addr": b["address"], "real_size": b["requested"], "frames": b["frames"]}]
        else:
            d = {"address": b["address"], **d, "frames": b["frames"]}
        blocks.append(d)
    seg = {
        "device": device, "address": s["address"], "total_size": s["size"],
        "allocated_size": sum(b["size"] for b in s["blocks"] if b["state"] == "active_allocated"),
        "active_size": sum(b["size"] for b in s["blocks"] if b["state"] != "inactive"),
        "requested_size": sum(b["requested"] for b in s["blocks"] if b["state"] != "inactive"),
        "stream": s["stream"], "segment_type": "large" if s["large"] else "small",
    }
    if era != "2.0":
        seg.update(segment_pool_id=s["pool"], is_expandable=s["expandable"], frames=s["frames"])
    seg["blocks"] = blocks
    return seg


ERAS = ["2.0", "2.1", "2.2", "2.3", "2.5", "2.8", "2.10"]


def event_dict(e, era):
    keep = ["action", "device_free" if e["action"] == "oom" else "addr", "size", "stream"]
    if ERAS.index(era) >= ERAS.index("2.2"):
        keep.append("time_us")
    d = {k: e[k] for k in keep}
    if ERAS.index(era) >= ERAS.index("2.8"):
        d["compile_context"] = "N/A"
    if ERAS.index(era) >= ERAS.index("2.10"):
        d["user_metadata"] = ""
    if e["frames"]:
        d["frames"] = e["frames"]
    return d


def snapshot(allocators, era, bare=False):
    """The snapshot of one or more devices (one Allocator per device index)."""
    segments = [segment_dict(s, a.device, era) for a in allocators for s in a.segments]
    if bare:
        return segments
    out = {"segments": segments, "device_traces": [[event_dict(e, era) for e in a.trace] for a in allocators]}
    if ERAS.index(era) >= ERAS.index("2.3"):
        a = allocators[0]
        conf = ",".join(p for p in [
            "expandable_segments:True" if a.expandable else "",
            f"max_split_size_mb:{a.max_split // MIB}" if a.max_split else ""] if p)
        out["allocator_settings"] = {
            "PYTORCH_CUDA_ALLOC_CONF": conf, "max_split_size": a.max_split or -1,
            "garbage_collection_threshold": 0.0, "expandable_segments": a.expandable,
            "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
            "pinned_use_cuda_host_register": False,
            "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)},
        }
    if ERAS.index(era) >= ERAS.index("2.5"):
        out["external_annotations"] = []
    return out


def write(name, obj, protocol):
    with open(os.path.join(HERE, name + ".pickle"), "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


def expect_oom(fn):
    try:
        fn()
    except OutOfMemory:
        return
    raise AssertionError("the scenario did not run out of memory")


TRAIN = "/home/user/project/train.py"
MODEL = "/home/user/project/model.py"


def fragmentation():
    a = Allocator(capacity=2 * GIB, outside=300 * MIB)
    at_act = stack((MODEL, 57, "forward"), (TRAIN, 88, "<module>"))
    at_w = stack((MODEL, 12, "__init__"), (TRAIN, 20, "<module>"))
    weights = a.malloc(300 * MIB, at_w)
    bigs = [a.malloc(400 * MIB, at_act) for _ in range(3)]
    for big in bigs:
        a.free(big)  # cached: the next tensors split them
    parts = [a.malloc(38 * MIB, at_act) for _ in range(30)]
    keep = []
    for i, p in enumerate(parts):
        if i % 2:
            a.free(p)
        else:
            keep.append(p)
    expect_oom(lambda: a.malloc(260 * MIB, stack((MODEL, 61, "forward"), (TRAIN, 88, "<module>"))))
    return a, weights, keep


def scenarios():
    # 1. Fragmentation, ≈2.1, protocol 4.
    a, _, _ = fragmentation()
    write("fragmentation_v2_1", snapshot([a], "2.1"), 4)

    # 2. Dumped later: the same OOM, then the script caught it, freed tensors
    #    and went on; the snapshot came afterwards (≈2.2, protocol 4).
    a, weights, keep = fragmentation()
    for p in keep[:4]:
        a.free(p)
    a.malloc(30 * MIB, stack((TRAIN, 95, "<module>")))
    write("dumped_after_oom_v2_2", snapshot([a], "2.2"), 4)

    # 3. Shortage, ≥2.10, protocol 5: live tensors fill the card.
    a = Allocator(capacity=4 * GIB, outside=400 * MIB)
    for i in range(6):
        a.malloc(500 * MIB, stack((MODEL, 40 + i % 2, "forward"), (TRAIN, 71, "train_step")))
    a.malloc(200 * KIB, stack((TRAIN, 66, "train_step")))
    expect_oom(lambda: a.malloc(1 * GIB, stack((MODEL, 44, "forward"), (TRAIN, 71, "train_step"))))
    write("shortage_v2_10", snapshot([a], "2.10"), 5)

    # 4. Held on another stream, ≈2.2, protocol 2.
    a = Allocator(capacity=2 * GIB, outside=200 * MIB)
    side = stack(("/home/user/project/prefetch.py", 30, "run"))
    seg = a.malloc(700 * MIB, side, stream=94_000_000_000)
    a.free(seg)
    small = a.malloc(50 * MIB, side, stream=94_000_000_000)
    a.malloc(900 * MIB, stack((TRAIN, 50, "step")))
    expect_oom(lambda: a.malloc(400 * MIB, stack((TRAIN, 52, "step"))))
    write("other_stream_v2_2", snapshot([a], "2.2"), 2)

    # 5. Held by a private pool (CUDA graph), ≈2.3, protocol 3.
    a = Allocator(capacity=2 * GIB, outside=200 * MIB)
    g = a.malloc(800 * MIB, stack((TRAIN, 30, "capture")), pool=(1, 0))
    a.free(g)
    a.malloc(100 * MIB, stack((TRAIN, 31, "capture")), pool=(1, 0))
    a.malloc(800 * MIB, stack((TRAIN, 40, "eval_step")))
    expect_oom(lambda: a.malloc(300 * MIB, stack((TRAIN, 41, "eval_step"))))
    write("private_pool_v2_3", snapshot([a], "2.3"), 3)

    # 6. Expandable segments (segment_map events), ≈2.5, protocol 4.
    a = Allocator(capacity=3 * GIB, outside=300 * MIB, expandable=True)
    for i in range(4):
        a.malloc(512 * MIB, stack((MODEL, 80, "forward"), (TRAIN, 99, "<module>")))
    expect_oom(lambda: a.malloc(1 * GIB, stack((MODEL, 82, "forward"), (TRAIN, 99, "<module>"))))
    write("expandable_v2_5", snapshot([a], "2.5"), 4)

    # 7. Pending cross-stream frees, ≈2.8 (compile_context), protocol 4.
    a = Allocator(capacity=2 * GIB, outside=200 * MIB)
    big = a.malloc(1200 * MIB, stack((TRAIN, 60, "all_gather")))
    a.malloc(100 * MIB, stack((TRAIN, 61, "all_gather")))
    a.free(big, pending=True)
    expect_oom(lambda: a.malloc(600 * MIB, stack((TRAIN, 70, "step"))))
    write("pending_free_v2_8", snapshot([a], "2.8"), 4)

    # 8. The oversize rule, ≈2.5, protocol 5. Under max_split_size a block at
    #    or above the limit is never split, so a split one comes from before the
    #    limit was set at run time (torch.cuda.memory._set_allocator_settings).
    a = Allocator(capacity=2 * GIB, outside=200 * MIB)
    big = a.malloc(1000 * MIB, stack((TRAIN, 10, "load")))
    a.free(big)
    a.malloc(100 * MIB, stack((TRAIN, 11, "load")))  # splits the cached 1000 MiB block
    a.max_split = 64 * MIB
    expect_oom(lambda: a.malloc(850 * MIB, stack((TRAIN, 15, "step"))))
    write("oversize_rule_v2_5", snapshot([a], "2.5"), 5)

    # 9. The `oom` event pushed out of the ring buffer (max_entries=40), ≈2.2.
    a = Allocator(capacity=1 * GIB, outside=100 * MIB, max_entries=40)
    t = a.malloc(800 * MIB, stack((TRAIN, 5, "<module>")))
    expect_oom(lambda: a.malloc(300 * MIB, stack((TRAIN, 6, "<module>"))))
    for _ in range(30):
        a.free(a.malloc(4 * MIB, stack((TRAIN, 9, "<module>"))))
    write("oom_event_lost_v2_2", snapshot([a], "2.2"), 4)

    # 10. ≈2.0 history layout with max_entries=1 (the legacy API): only the marker survives.
    a = Allocator(capacity=1 * GIB, outside=100 * MIB, max_entries=1)
    a.malloc(600 * MIB, stack((TRAIN, 5, "<module>"), cpp=False))
    expect_oom(lambda: a.malloc(400 * MIB, stack((TRAIN, 6, "<module>"), cpp=False)))
    a.mark_snapshot()
    write("legacy_one_entry_v2_0", snapshot([a], "2.0"), 2)

    # 11. ≈2.0 history layout with the oom event kept, protocol 2.
    a = Allocator(capacity=1 * GIB, outside=100 * MIB)
    a.malloc(600 * MIB, stack((TRAIN, 5, "<module>"), cpp=False))
    expect_oom(lambda: a.malloc(400 * MIB, stack((TRAIN, 6, "<module>"), cpp=False)))
    write("history_oom_v2_0", snapshot([a], "2.0"), 2)

    # 12. Two devices, the OOM on device 1, ≈2.3, protocol 4.
    a0 = Allocator(device=0, capacity=2 * GIB, outside=200 * MIB)
    a1 = Allocator(device=1, capacity=2 * GIB, outside=200 * MIB)
    a0.malloc(1 * GIB, stack((TRAIN, 20, "shard0")))
    a1.malloc(1500 * MIB, stack((TRAIN, 21, "shard1")))
    expect_oom(lambda: a1.malloc(500 * MIB, stack((TRAIN, 22, "shard1"))))
    write("two_devices_v2_3", snapshot([a0, a1], "2.3"), 4)

    # 13. No stacks recorded (context=None), ≈2.5, protocol 4.
    a = Allocator(capacity=1 * GIB, outside=100 * MIB)
    a.malloc(700 * MIB, [])
    expect_oom(lambda: a.malloc(300 * MIB, []))
    write("no_stacks_v2_5", snapshot([a], "2.5"), 4)

    # 14. Windows paths, ≥2.10, protocol 4.
    root = "C:\\Users\\dev\\miniconda3\\envs\\ml\\Lib\\site-packages\\torch"
    win = lambda line: stack(("C:\\Users\\dev\\project\\train.py", line, "<module>"), cpp=False, torch_root=root)
    a = Allocator(capacity=1 * GIB, outside=300 * MIB)
    a.malloc(600 * MIB, win(14))
    expect_oom(lambda: a.malloc(200 * MIB, win(15)))
    write("windows_paths_v2_10", snapshot([a], "2.10"), 4)

    # 15. A bare segment list (torch.cuda.memory_snapshot()), protocol 4.
    a = Allocator(capacity=1 * GIB)
    a.malloc(100 * MIB, stack((TRAIN, 5, "<module>")))
    a.malloc(300 * KIB, stack((TRAIN, 6, "<module>")))
    write("bare_segment_list", snapshot([a], "2.5", bare=True), 4)

    # 16. Empty: recorded with enabled="state" on an idle process, ≈2.5, protocol 4.
    a = Allocator(capacity=1 * GIB, record=False)
    write("empty_v2_5", snapshot([a], "2.5"), 4)


def big(path, megabytes):
    """A long training run: many alloc/free events with per-event stacks, then the fragmentation OOM."""
    a = Allocator(capacity=80 * GIB, outside=1 * GIB)
    sites = [stack((MODEL, 100 + i, "forward"), (TRAIN, 200 + i % 7, "train_step")) for i in range(64)]
    live = []
    target = megabytes * MIB
    step, estimate = 0, None
    while True:
        for i in range(2000):
            site = sites[(step + i) % len(sites)]
            # Each event gets its own list of (shared) frame dicts, as PyTorch writes them.
            live.append(a.malloc((1 + (step * 7 + i * 13) % 4096) * 4 * KIB, list(site)))
            if len(live) > 300:
                a.free(live.pop((i * 31) % len(live)), list(site))
        step += 1
        if estimate is None:
            # Bytes per event, measured once, tells how many events the size needs.
            per_event = len(pickle.dumps(snapshot([a], "2.5"), protocol=4)) / len(a.trace)
            estimate = int(target / per_event)
        if len(a.trace) >= estimate:
            break
    try:
        a.malloc(60 * GIB, sites[0])
    except OutOfMemory:
        pass
    data = pickle.dumps(snapshot([a], "2.5"), protocol=4)
    with open(path, "wb") as f:
        f.write(data)
    print(f"{path}: {len(data)} bytes, {len(a.trace)} events, {len(a.segments)} segments")


if __name__ == "__main__":
    import sys
    if len(sys.argv) == 4 and sys.argv[1] == "--big":
        big(sys.argv[2], int(sys.argv[3]))
    else:
        scenarios()
