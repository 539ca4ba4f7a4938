#!/usr/bin/env bash
# Builds the static page into web/dist/: the library compiled to WebAssembly
# (crates/oomwhy-wasm, profile wasm-release) and the page's files from
# web/src/. Nothing is fetched at run time; open it with any static server:
#
#   web/build.sh && python3 -m http.server --directory web/dist 8000
#   # then http://localhost:8000/
#
# Fails if the module is over its size budget (1.5 MiB gzip'd).
set -euo pipefail
cd "$(dirname "$0")/.."

target=wasm32-unknown-unknown
if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$target"; then
  echo "web/build.sh: adding the Rust target $target"
  rustup target add "$target"
fi
cargo build --locked -p oomwhy-wasm --target "$target" --profile wasm-release

dist=web/dist
rm -rf "$dist"
mkdir -p "$dist"
cp web/src/index.html web/src/style.css web/src/app.js web/src/worker.js \
  web/src/oomwhy-wasm.js "$dist/"
cp "target/$target/wasm-release/oomwhy_wasm.wasm" "$dist/oomwhy.wasm"

raw=$(wc -c <"$dist/oomwhy.wasm")
gz=$(gzip -9 -c "$dist/oomwhy.wasm" | wc -c)
budget=$((3 * 1024 * 1024 / 2))
printf 'web/build.sh: %s/oomwhy.wasm is %s bytes (%s gzip -9; budget %s)\n' \
  "$dist" "$raw" "$gz" "$budget"
if [ "$gz" -gt "$budget" ]; then
  echo "web/build.sh: the module is over its size budget" >&2
  exit 1
fi
echo "web/build.sh: open it with: python3 -m http.server --directory $dist 8000"
