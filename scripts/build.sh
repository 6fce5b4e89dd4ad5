#!/usr/bin/env bash
# Build server and browser app with cargo-leptos; with --release also report the size of
# the optimised wasm (raw and gzip -9).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
if [ "${1:-}" = "--release" ]; then
  cargo leptos build --release
  wasm=target/site/pkg/airlock.wasm
  raw=$(stat -c %s "$wasm"); gz=$(gzip -9c "$wasm" | wc -c)
  echo "build: release wasm $raw bytes, $gz bytes gzip -9" >&2
else
  cargo leptos build
fi
