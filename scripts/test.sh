#!/usr/bin/env bash
# The whole test suite: set-up, unit and integration tests (policy engine, server through
# real HTTP and SQLite), the integration tests again on PostgreSQL, the Python SDK against
# the real server, the browser tests (with the JavaScript example client), then the policy
# CLI on the demo policy. Exits non-zero on the first failure.
#
# PostgreSQL: AIRLOCK_TEST_POSTGRES (default postgres://postgres@127.0.0.1:5432/test, a
# database the tests may create others from). In CI it must answer; elsewhere, when
# nothing listens there, that part is skipped with the reason printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --e2e
source scripts/env.sh
echo "== unit and integration tests" >&2
cargo test --locked -p policy -p app -p server
export AIRLOCK_TEST_POSTGRES="${AIRLOCK_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test}"
pg_hostport="$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(p.hostname or "127.0.0.1", p.port or 5432)' "$AIRLOCK_TEST_POSTGRES")"
if [ "${CI:-}" = true ] || (exec 3<>"/dev/tcp/${pg_hostport% *}/${pg_hostport#* }") 2>/dev/null; then
  echo "== integration tests on PostgreSQL (${pg_hostport/ /:})" >&2
  cargo test --locked -p server --test it
else
  echo "== SKIPPED integration tests on PostgreSQL: nothing answers at ${pg_hostport/ /:} (set AIRLOCK_TEST_POSTGRES)" >&2
fi
echo "== Python SDK against the real server (pytest)" >&2
bash scripts/test-sdk.sh
echo "== end-to-end tests (Chromium)" >&2
bash scripts/e2e.sh
echo "== policy CLI on the shipped demo policy" >&2
target/debug/airlock policy check policies/demo.toml
target/debug/airlock policy test policies/demo.toml policies/demo.cases.toml >/dev/null
echo "== all tests passed" >&2
