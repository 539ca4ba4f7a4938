#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from every fixtures/*.log (the snapshot
# target: from tests/snapshots/*.pickle). Run before fuzzing;
# corpora are generated, never committed (see .gitignore).
#   fuzz/seed.sh            # all targets
#   fuzz/seed.sh scan       # one target
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(decode_str scan scan_chunked snapshot)
count=0
for target in "${targets[@]}"; do
  mkdir -p "$here/corpus/$target"
  if [ "$target" = snapshot ]; then
    # The generated memory snapshots (tests/snapshots/make_fixtures.py).
    for snap in "$root"/tests/snapshots/*.pickle; do
      cp "$snap" "$here/corpus/$target/$(basename "$snap")"
      count=$((count + 1))
    done
    continue
  fi
  for log in "$root"/fixtures/*.log; do
    name=$(basename "$log" .log)
    if [ "$target" = scan_chunked ]; then
      # Byte 0 says 4 chunk sizes follow (1, 7, 64 and 256 bytes per read).
      { printf '\004\000\006\077\377'; cat "$log"; } >"$here/corpus/$target/$name"
    else
      cp "$log" "$here/corpus/$target/$name"
    fi
    count=$((count + 1))
  done
done
echo "seeded $count files into $here/corpus/{${targets[*]}}"
