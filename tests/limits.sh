#!/usr/bin/env bash
# Measures the release binary on adversarial inputs: peak RSS and
# wall time for each, checked against limits. Every input is streamed from a
# generator into stdin; nothing is written to disk.
#   tests/limits.sh            # all cases (about 2-4 minutes on 2 cores)
#   tests/limits.sh --quick    # the same cases at 1/16 of the size
# Peak RSS comes from /usr/bin/time (GNU time) when installed, else from
# polling /proc/PID/status (VmHWM) while the binary runs.
set -euo pipefail
cd "$(dirname "$0")/.."

scale=1
[ "${1:-}" = --quick ] && scale=16

cargo build --release --quiet
bin=$PWD/target/release/oomwhy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

SEED='RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)'
CRASH='RuntimeError: CUDA error: an illegal memory access was encountered'
NEAR='    if "CUDA out of memory. Tried to allocate" in str(e):
warning: out of memory. Tried nothing
grep '"'"'error: out of memory'"'"' in logs
no illegal memory access here, cudaErrorIllegalAddressX
step 3221226505 loss 0.1 id=-1073740791
Traceback (most recent call last) was printed above
CUDA failure 7000 of 0xC00004090'

# run NAME: stdin -> oomwhy --format json; sets rss_kib, secs, findings, rc.
run() {
  local start end
  start=$(date +%s.%N)
  if [ -x /usr/bin/time ]; then
    set +e
    /usr/bin/time -f '%M' -o "$tmp/rss" "$bin" --format json >"$tmp/out" 2>"$tmp/err"
    rc=$?
    set -e
    rss_kib=$(tail -1 "$tmp/rss")
  else
    "$bin" --format json <&0 >"$tmp/out" 2>"$tmp/err" &
    local pid=$! peak=0 now
    while kill -0 "$pid" 2>/dev/null; do
      now=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
      [ "${now:-0}" -gt "$peak" ] && peak=$now
      sleep 0.05
    done
    set +e; wait "$pid"; rc=$?; set -e
    rss_kib=$peak
  fi
  end=$(date +%s.%N)
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}')
  findings=$(grep -E '^    "findings": [0-9]+' "$tmp/out" | grep -oE '[0-9]+' || echo '?')
}

failed=0
# check NAME WANT_FINDINGS MAX_RSS_MIB MAX_SECS: reports the last run.
check() {
  local name=$1 want=$2 max_mib=$3 max_secs=$4 verdict=ok
  [ "$findings" = "$want" ] || verdict="FAIL (findings $findings, want $want)"
  [ "$rss_kib" -lt $((max_mib * 1024)) ] || verdict="FAIL (RSS over $max_mib MiB)"
  awk -v s="$secs" -v m="$max_secs" 'BEGIN {exit !(s < m)}' || verdict="FAIL (over $max_secs s)"
  [ "$verdict" = ok ] || { failed=1; cat "$tmp/err" >&2; }
  printf '%-44s findings %-3s peak RSS %5d MiB  %6s s  %s\n' "$name" "$findings" $((rss_kib / 1024)) "$secs" "$verdict"
}

GIB=1073741824
len=$((2 * GIB / scale))
run < <(printf '%s\n' "$SEED"; head -c "$len" /dev/zero | tr '\0' 'x'; printf '\n%s\n' "$CRASH")
check "line of $((len >> 20)) MiB without newline" 2 64 300

len=$((2 * GIB / scale))
run < <(awk 'BEGIN { for (i = 0; ; i++) printf "CUDA error: out of memory %d ", i }' 2>/dev/null |
  head -c "$len"; echo)
check "line of $((len >> 20)) MiB of distinct messages" $((len >> 20)) 128 600

len=$((GIB / scale))
run < <(yes "$NEAR" | head -c "$len")
check "$((len >> 20)) MiB of near-miss lines" 0 64 10

n=$((1000000 / scale))
run < <(yes "$SEED" | head -n "$n")
check "message repeated $n times" 1 64 600

n=$((100000 / scale))
run < <(echo 'Traceback (most recent call last):'; seq 0 $((n - 1)) | sed 's/.*/  File "model.py", line &, in forward/'; echo "$SEED")
check "traceback of $n frames" 1 64 120

n=$((1000000 / scale))
run < <(seq 0 $((n - 1)) | sed 's/.*/[rank&]: Traceback (most recent call last):/'; echo "[rank1]: $SEED")
check "$n ranks with open tracebacks" 1 64 300

exit $failed
