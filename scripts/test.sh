#!/usr/bin/env bash
# The whole test suite: set-up, unit and integration tests (policy engine, server through
# real HTTP and SQLite), the Python SDK against the real server, the browser tests (with
# the JavaScript example client), then the policy CLI on the demo policy.
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --e2e
source scripts/env.sh
echo "== unit and integration tests" >&2
cargo test --locked -p policy -p app -p server
echo "== Python SDK against the real server (pytest)" >&2
bash scripts/test-sdk.sh
echo "== end-to-end tests (Chromium)" >&2
bash scripts/e2e.sh
echo "== policy CLI on the shipped demo policy" >&2
target/debug/airlock policy check policies/demo.toml
target/debug/airlock policy test policies/demo.toml policies/demo.cases.toml >/dev/null
echo "== all tests passed" >&2
