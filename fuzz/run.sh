#!/usr/bin/env bash
# Runs one fuzz target for a while on the stable toolchain.
#   fuzz/run.sh TARGET SECONDS [more libFuzzer flags]
# Targets: decode_str, scan, scan_chunked, snapshot, archive. Seeds the corpus first if empty.
# cargo-fuzz needs nightly-only rustc flags; RUSTC_BOOTSTRAP=1 lets the stable
# compiler accept them. `--sanitizer none`: the crate forbids unsafe code, so
# AddressSanitizer would mostly slow the search; panics (overflow checks are on),
# timeouts (-timeout) and memory blow-ups (-rss_limit_mb, -malloc_limit_mb)
# are what it looks for.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${1:?usage: fuzz/run.sh TARGET SECONDS [libFuzzer flags]}
secs=${2:?usage: fuzz/run.sh TARGET SECONDS [libFuzzer flags]}
shift 2
cd "$here"
if [ -z "$(ls -A "corpus/$target" 2>/dev/null)" ]; then
  ./seed.sh "$target"
fi
mkdir -p "artifacts/$target"
RUSTC_BOOTSTRAP=1 exec cargo fuzz run --sanitizer none "$target" "corpus/$target" -- \
  -max_total_time="$secs" -dict="$here/oomwhy.dict" -timeout=10 \
  -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=16384 -print_final_stats=1 "$@"
