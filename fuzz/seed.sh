#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from every fixtures/*.log (the snapshot
# target: from tests/snapshots/*.pickle; the archive target: small tar and
# zip archives of fixtures). Run before fuzzing;
# corpora are generated, never committed (see .gitignore).
#   fuzz/seed.sh            # all targets
#   fuzz/seed.sh scan       # one target
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(decode_str scan scan_chunked snapshot archive)
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
  if [ "$target" = archive ]; then
    # Small tar (plain and gzip) and zip archives of a few fixtures, made with
    # Python's standard library (max_len is 16 KiB: a few small logs each).
    python3 - "$root/fixtures" "$here/corpus/$target" <<'PY'
import io, os, sys, tarfile, zipfile, gzip
src, out = sys.argv[1], sys.argv[2]
logs = sorted(f for f in os.listdir(src) if f.endswith(".log") and os.path.getsize(os.path.join(src, f)) < 3000)
for i in range(0, min(len(logs), 24), 3):
    group = logs[i:i + 3]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name in group:
            t.add(os.path.join(src, name), arcname="job/" + name)
    open(os.path.join(out, f"tar{i}"), "wb").write(buf.getvalue())
    open(os.path.join(out, f"targz{i}"), "wb").write(gzip.compress(buf.getvalue()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in group:
            z.write(os.path.join(src, name), "job/" + name)
    open(os.path.join(out, f"zip{i}"), "wb").write(buf.getvalue())
PY
    count=$((count + $(ls "$here/corpus/$target" | wc -l)))
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
