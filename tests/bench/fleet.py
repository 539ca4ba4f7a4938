"""Fleet-summary speed, side by side in one run: the same generated tree of
logs summarised by

* `oomwhy --summary --format json FILE...` (one process),
* `oomwhy.summarize(paths)` (the Python API, in process),
* `oomwhy.ray.summarize(folder)` on a local Ray instance (Ray Data; the
  start of Ray is timed apart),

checking that the three summaries are equal. The command is started once
(through the wheel's console script unless OOMWHY_BIN names a binary). Run it with the interpreter of
an environment where the package is installed with its `ray` extra:

    v/bin/python tests/bench/fleet.py

Environment: OOMWHY_FLEET_FILES (default 1000 logs), OOMWHY_FLEET_LINES
(ordinary lines before each log's crash, default 2000), OOMWHY_BENCH_RUNS
(timed runs per tool, best reported, default 3), OOMWHY_BIN (the command;
default: the one installed beside this interpreter). The tree is generated
once, from the repository's fixtures, under target/bench-data/.
"""

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FILES = int(os.environ.get("OOMWHY_FLEET_FILES", "1000"))
LINES = int(os.environ.get("OOMWHY_FLEET_LINES", "2000"))
RUNS = int(os.environ.get("OOMWHY_BENCH_RUNS", "3"))
COMMAND = os.environ.get("OOMWHY_BIN") or str(Path(sys.executable).parent / "oomwhy")


def generate(root: Path) -> list:
    """FILES logs: LINES lines of training output, then a fixture's text
    (every seventh log ends well, with no crash). Seeded: the same every time."""
    done = root / ".complete"
    if done.exists():
        return sorted(root.glob("*/*.log"))
    fixtures = sorted((REPO / "fixtures").glob("*.log"))
    rng = random.Random(1)
    for i in range(FILES):
        folder = root / f"day-{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            f"2026-11-{1 + i % 28:02d}T10:{s // 60 % 60:02d}:{s % 60:02d} [rank{rng.randrange(8)}] "
            f"step {s} loss {rng.random():.4f} lr 3.0e-4 tokens/s {rng.randrange(90000, 120000)}\n"
            for s in range(LINES)
        ]
        body = b"" if i % 7 == 6 else fixtures[i % len(fixtures)].read_bytes()
        (folder / f"job-{i:05d}.log").write_bytes("".join(lines).encode() + body)
    done.write_text("")
    return sorted(root.glob("*/*.log"))


def best(fn):
    times, result = [], None
    for _ in range(RUNS):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    import oomwhy

    root = REPO / "target" / "bench-data" / f"fleet-{FILES}x{LINES}"
    paths = generate(root)
    names = [str(p) for p in paths]
    mib = sum(p.stat().st_size for p in paths) / 2**20
    rows = []

    def command():
        out = subprocess.run(
            [COMMAND, "--summary", "--format", "json", *names],
            capture_output=True, text=True, timeout=600,
        )
        return json.loads(out.stdout)

    seconds, by_command = best(command)
    rows.append(("`oomwhy --summary --format json FILE...`", seconds))
    seconds, by_api = best(lambda: oomwhy.summarize(names))
    rows.append(("`oomwhy.summarize(paths)` (Python API)", seconds))

    import ray
    import oomwhy.ray

    start = time.perf_counter()
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    ray_start = time.perf_counter() - start
    seconds, by_ray = best(lambda: oomwhy.ray.summarize(str(root), file_extensions=["log"]))
    ray.shutdown()
    rows.append((f"`oomwhy.ray.summarize(folder)` (local Ray, {os.cpu_count()} CPUs)", seconds))

    assert by_command == by_api == by_ray, "the summaries differ"
    print(f"{len(paths)} logs, {mib:.1f} MiB, {by_command['findings']} findings; "
          f"best of {RUNS}; Ray started in {ray_start:.1f} s (not included)\n")
    print("| tool | seconds | logs/s | MiB/s |")
    print("| --- | ---: | ---: | ---: |")
    for tool, seconds in rows:
        print(f"| {tool} | {seconds:.3f} | {len(paths) / seconds:.0f} | {mib / seconds:.0f} |")


if __name__ == "__main__":
    main()
