#!/usr/bin/env bash
# The whole test suite: set-up, unit and integration tests (policy engine, server through
# real HTTP and SQLite), then the browser tests. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --e2e
source scripts/env.sh
echo "== unit and integration tests" >&2
cargo test --locked -p policy -p app -p server
echo "== policy CLI on the shipped demo policy" >&2
cargo run --locked -q -p server --bin airlock -- policy check policies/demo.toml
cargo run --locked -q -p server --bin airlock -- policy test policies/demo.toml policies/demo.cases.toml >/dev/null
echo "== end-to-end tests (Chromium)" >&2
bash scripts/e2e.sh
