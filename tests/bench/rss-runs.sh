#!/usr/bin/env bash
# Runs the release binary many times on the benchmark's 256 MiB log and
# reports the largest peak RSS of all runs, not a typical one: memory must
# stay bounded on every run. When run as root, every COLD-th run starts
# with the page cache dropped, so first-read runs are measured too.
#   tests/bench/rss-runs.sh [RUNS] [COLD]      # defaults: 200 runs, every 10th cold
# Generate the log first with `cargo bench --bench scan`.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-200}
cold=${2:-10}
log=target/bench-data/train-256MiB.log
[ -f "$log" ] || { echo "no $log: run 'cargo bench --bench scan' first" >&2; exit 2; }
cargo build --release --quiet
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
max=0 sum=0 cold_runs=0
for i in $(seq 1 "$runs"); do
  if [ $((i % cold)) -eq 1 ] && [ -w /proc/sys/vm/drop_caches ]; then
    sync && echo 1 >/proc/sys/vm/drop_caches
    cold_runs=$((cold_runs + 1))
  fi
  /usr/bin/time -f "%M" -o "$tmp" target/release/oomwhy --format json "$log" >/dev/null || [ $? -le 1 ]
  kib=$(tail -1 "$tmp")
  sum=$((sum + kib))
  [ "$kib" -gt "$max" ] && max=$kib
done
echo "$runs runs ($cold_runs with the page cache dropped): peak RSS mean $((sum / runs / 1024)) MiB, largest $((max / 1024)) MiB"
