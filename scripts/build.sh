#!/usr/bin/env bash
# Build the server and the browser app with plain cargo, wasm-bindgen and wasm-opt (no
# cargo-leptos; `cargo leptos watch` still works for live reloading while developing).
#
#   scripts/build.sh            # server in the dev profile: the same compilation
#                               # `cargo test` uses, so tests reuse it
#   scripts/build.sh --release  # optimised server for deployment
#   scripts/build.sh --site     # only the browser assets
#
# The browser app is always built in the size-optimised `wasm-release` profile, so the
# tests exercise exactly the bundle users get. Assets land in target/site/pkg under
# content-hashed names (airlock.<hash>.js|wasm|css, listed in hash.txt), each with a
# precompressed .gz and .br beside it, served with long immutable caching.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
log() { printf '\033[1mbuild:\033[0m %s\n' "$*" >&2; }

mode="${1:-}"
case "$mode" in
  ""|--release|--site) ;;
  *) echo "usage: scripts/build.sh [--release|--site]" >&2; exit 2 ;;
esac

if [ "$mode" != --site ]; then
  if [ "$mode" = --release ]; then
    log "server (release)"
    cargo build --locked -p server --bin airlock --release
  else
    log "server (dev profile)"
    cargo build --locked -p server --bin airlock
  fi
fi

log "browser app (wasm32, wasm-release profile)"
cargo build --locked -p hydrate --lib --target wasm32-unknown-unknown --profile wasm-release
wasm_in=target/wasm32-unknown-unknown/wasm-release/hydrate.wasm
# Up to date (same wasm, stylesheet and assets, by content: cargo may hand back an older
# artifact with an old mtime): nothing to redo.
stamp=$( { sha256sum "$wasm_in" style/main.css
            if [ -d app/public ]; then find app/public -type f -exec sha256sum {} + | sort; fi
          } | sha256sum | cut -c1-64)
# The browser bundle's budget (gzip -9 bytes): a build over it fails, so growth is a
# decision, not an accident (docs/dashboard-performance.md).
WASM_BUDGET_GZIP=350000
report() {
  local wasm raw gz br
  wasm=$(ls target/site/pkg/airlock.*.wasm)
  raw=$(stat -c %s "$wasm"); gz=$(stat -c %s "$wasm.gz"); br=$(stat -c %s "$wasm.br")
  log "$1: release wasm $raw bytes, $gz bytes gzip -9, $br bytes brotli ($wasm)"
  if [ "$gz" -gt "$WASM_BUDGET_GZIP" ]; then
    echo "build: the browser bundle is $gz bytes gzip, over its budget of $WASM_BUDGET_GZIP" >&2
    exit 1
  fi
}
if [ -f target/site/pkg/stamp ] && [ "$(cat target/site/pkg/stamp)" = "$stamp" ]; then
  report "browser assets up to date"
  exit 0
fi
stage="target/site.new"
rm -rf "$stage"
mkdir -p "$stage/pkg"
wasm-bindgen --target web --no-typescript --out-dir "$stage/pkg" --out-name airlock \
  "$wasm_in"
# The features rustc enables by default for wasm32; wasm-opt must accept them.
wasm-opt -Oz --strip-debug --strip-producers \
  --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue \
  "$stage/pkg/airlock_bg.wasm" -o "$stage/pkg/airlock.wasm"
rm "$stage/pkg/airlock_bg.wasm"
cp style/main.css "$stage/pkg/airlock.css"
if [ -d app/public ]; then cp -R app/public/. "$stage/"; fi

# Content-hashed names (the format leptos' HydrationScripts and HashedStylesheet read).
: > "$stage/pkg/hash.txt"
for ext in js wasm css; do
  h=$(sha256sum "$stage/pkg/airlock.$ext" | cut -c1-16)
  mv "$stage/pkg/airlock.$ext" "$stage/pkg/airlock.$h.$ext"
  echo "$ext: $h" >> "$stage/pkg/hash.txt"
done
# How the views were compiled; the server checks it matches its own build.
case " $RUSTFLAGS " in *" --cfg erase_components "*) echo "views: erased" ;; *) echo "views: typed" ;; esac >> "$stage/pkg/hash.txt"
# Precompressed copies (Node's zlib: gzip -9 and brotli quality 11), picked by the server
# from the request's Accept-Encoding.
node -e '
  const fs = require("fs"), zlib = require("zlib"), dir = process.argv[1];
  for (const f of fs.readdirSync(dir).filter(f => /\.(js|wasm|css)$/.test(f))) {
    const raw = fs.readFileSync(`${dir}/${f}`);
    fs.writeFileSync(`${dir}/${f}.gz`, zlib.gzipSync(raw, { level: 9 }));
    fs.writeFileSync(`${dir}/${f}.br`, zlib.brotliCompressSync(raw, { params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length } }));
  }' "$stage/pkg"
echo "$stamp" > "$stage/pkg/stamp"
rm -rf target/site
mv "$stage" target/site
report "browser assets built"
