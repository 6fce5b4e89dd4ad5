#!/usr/bin/env bash
# Install what building and testing Airlock needs, pinned, into ~/.cache/airlock/tools.
# Idempotent: a second run only checks versions (about a second).
# Network: crates.io, npm and Debian's apt only. Prints nothing secret.
#
#   scripts/setup.sh            # build tools (wasm32 target, wasm-bindgen, wasm-opt)
#   scripts/setup.sh --e2e      # also Chromium and the end-to-end test packages
set -euo pipefail

WASM_BINDGEN_VERSION=0.2.130  # must equal the wasm-bindgen crate pinned in Cargo.toml
BINARYEN_VERSION=132.0.0      # Debian's wasm-opt (108) breaks the release wasm
MCP_FS_VERSION=2026.8.31      # the MCP server the mcp-proxy tests run behind the proxy

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="${AIRLOCK_TOOLS:-$HOME/.cache/airlock/tools}"
mkdir -p "$TOOLS/bin"
log() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }
have_version() { [ -x "$1" ] && "$1" --version 2>/dev/null | grep -q "$2"; }

# 1. Rust wasm32 target: rustup's where it can be had; otherwise a toolchain built from
#    Debian's rustc-web packages (scripts/wasm-toolchain-debian.sh), which scripts then
#    select through RUSTUP_TOOLCHAIN (recorded in $TOOLS/toolchain, read by env.sh).
if [ ! -s "$TOOLS/toolchain" ] && ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  if ! timeout 300 rustup target add wasm32-unknown-unknown; then
    log "rustup could not add the target; building the Debian toolchain instead"
    bash "$ROOT/scripts/wasm-toolchain-debian.sh" > "$TOOLS/toolchain.new"
    mv "$TOOLS/toolchain.new" "$TOOLS/toolchain"
  fi
fi
if [ -s "$TOOLS/toolchain" ]; then export RUSTUP_TOOLCHAIN="$(cat "$TOOLS/toolchain")"; fi

# 2. wasm-bindgen CLI (not --locked: its lockfile pins a crate version the registry lacks).
if ! have_version "$TOOLS/bin/wasm-bindgen" "$WASM_BINDGEN_VERSION"; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 2-3 minutes, once)"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --root "$TOOLS" --quiet
fi

# 3. wasm-opt from npm's binaryen.
if ! have_version "$TOOLS/npm/node_modules/.bin/wasm-opt" "${BINARYEN_VERSION%%.*}"; then
  log "installing binaryen $BINARYEN_VERSION (wasm-opt)"
  mkdir -p "$TOOLS/npm"
  npm install --silent --no-audit --no-fund --prefix "$TOOLS/npm" "binaryen@$BINARYEN_VERSION" >/dev/null
fi
ln -sf "$TOOLS/npm/node_modules/.bin/wasm-opt" "$TOOLS/bin/wasm-opt"

if [ "${1:-}" = "--e2e" ]; then
  # 4. Chromium from Debian, and the pinned Playwright test runner (no browser download).
  if ! command -v chromium >/dev/null 2>&1; then
    log "installing Debian chromium"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || {
      $SUDO apt-get update >/dev/null && $SUDO apt-get install -y --no-install-recommends chromium >/dev/null; }
  fi
  # A font with Chinese glyphs, so the 简体中文 pages render (and their screenshots show
  # them) on a machine that has none.
  if ! fc-list :lang=zh 2>/dev/null | grep -q .; then
    log "installing a Chinese font (fonts-wqy-microhei)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get install -y --no-install-recommends fonts-wqy-microhei >/dev/null 2>&1 || {
      $SUDO apt-get update >/dev/null && $SUDO apt-get install -y --no-install-recommends fonts-wqy-microhei >/dev/null; }
  fi
  # 5. A real MCP server (stdio) for the tests of `airlock mcp-proxy`.
  fs_pkg="$TOOLS/npm/node_modules/@modelcontextprotocol/server-filesystem/package.json"
  if ! grep -q "\"version\": \"$MCP_FS_VERSION\"" "$fs_pkg" 2>/dev/null; then
    log "installing @modelcontextprotocol/server-filesystem $MCP_FS_VERSION (for the MCP proxy tests)"
    mkdir -p "$TOOLS/npm"
    npm install --silent --no-audit --no-fund --prefix "$TOOLS/npm" \
      "@modelcontextprotocol/server-filesystem@$MCP_FS_VERSION" >/dev/null
  fi
  if [ ! -f "$ROOT/end2end/node_modules/.package-lock.json" ] ||
     [ "$ROOT/end2end/package-lock.json" -nt "$ROOT/end2end/node_modules/.package-lock.json" ]; then
    log "installing end-to-end test packages"
    (cd "$ROOT/end2end" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --silent --no-audit --no-fund >/dev/null)
  fi
fi
log "tools ready in $TOOLS"
