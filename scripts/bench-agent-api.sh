#!/usr/bin/env bash
# Measure the agent API on loopback: a release server on a fresh SQLite file (WAL,
# synchronous=FULL) and the load generator sending signed requests of the demo mix.
#   scripts/bench-agent-api.sh [SECONDS]
# AIRLOCK_BIN_DIR=DIR uses the `airlock` and `airlock-load` in DIR instead of building
# (to compare two builds with the same load generator).
# Prints the closed-loop throughput (64 and 128 requests in flight) and the open-loop
# latency at 2,000 req/s, with the server's and the generator's CPU time per call (JSON lines),
# then the same binaries under wrk (scripts/bench-wrk.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh
source scripts/lib.sh
SECONDS_PER_RUN="${1:-10}"
bench_binaries
start_bench_server
load() { "$BIN/airlock-load" --url "http://127.0.0.1:$PORT" --agent load --secret "$SECRET" --server-pid "$PID" "$@"; }
echo "# warm-up" >&2
load --seconds 2 --concurrency 32 >/dev/null
for c in 64 128; do
  echo "# closed loop, $c in flight" >&2
  load --seconds "$SECONDS_PER_RUN" --concurrency "$c"
done
echo "# open loop, 2000 req/s" >&2
load --seconds "$SECONDS_PER_RUN" --rate 2000
echo "# calls stored: $(sqlite3 "$WORK/bench.db" 'SELECT count(*) FROM tool_calls' 2>/dev/null || echo '?')" >&2
# The independent generator on the same binaries (scripts/bench-wrk.sh).
kill "$PID" 2>/dev/null || true
echo "# wrk replaying pre-signed unique requests" >&2
AIRLOCK_BIN_DIR="$BIN" bash scripts/bench-wrk.sh "$SECONDS_PER_RUN"
