#!/usr/bin/env bash
# The agent API measured by an independent generator: wrk (Debian package) replaying
# pre-signed unique proposals (scripts/wrk-replay.lua) of the realistic mix (one call in
# seven held for review) against a release server on a SQLite file.
#   scripts/bench-wrk.sh [SECONDS] [PREFILL]
# PREFILL: calls stored before the measured run (e.g. 1000000). AIRLOCK_BIN_DIR=DIR uses
# the binaries in DIR instead of building. Prints wrk's report, then the calls stored by
# the run, their rate, the server's CPU time per call and how it splits between threads
# (the async workers, and the SQLite connections' worker threads: the ledger's is the
# busiest of those). COMPARE=fastapi then runs the same kind of requests against
# scripts/bench/fastapi_gateway.py (FastAPI + pydantic, SQLite WAL FULL, uvicorn with 2
# workers; installed into a venv under ~/.cache/airlock) and prints the ratio.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh
source scripts/lib.sh
SECONDS_PER_RUN="${1:-10}"
PREFILL="${2:-0}"
command -v wrk >/dev/null || { echo "installing wrk" >&2; apt-get install -y wrk >/dev/null; }
bench_binaries
start_bench_server
load() { "$BIN/airlock-load" --url "http://127.0.0.1:$PORT" --agent load --secret "$SECRET" "$@"; }
if [ "$PREFILL" -gt 0 ]; then
  echo "# storing $PREFILL calls first" >&2
  load --mix realistic --concurrency 64 --total "$PREFILL" --seconds 100000 >/dev/null
fi
stored() { sqlite3 "$WORK/bench.db" 'SELECT coalesce(max(rowid), 0) FROM tool_calls' 2>/dev/null || echo 0; }
# Enough fresh requests for 40,000 calls/s, signed just before the run (timestamps are
# accepted for five minutes).
N=$((SECONDS_PER_RUN * 40000))
load --emit "$WORK/requests.tsv" --total "$N" --mix realistic
# On disk before the run (the kernel would write it back during it; see bench-agent-api.sh).
sync
before_calls=$(stored); before_cpu=$(cpu_ticks "$PID"); thread_counters "$PID" >"$WORK/threads.0"
wrk -t2 -c64 -d"${SECONDS_PER_RUN}s" --latency -s scripts/wrk-replay.lua "http://127.0.0.1:$PORT" -- \
  "$WORK/requests.tsv" load 2 | tee "$WORK/wrk.txt"
after_calls=$(stored); after_cpu=$(cpu_ticks "$PID"); thread_counters "$PID" >"$WORK/threads.1"
python3 - "$before_calls" "$after_calls" "$before_cpu" "$after_cpu" "$(getconf CLK_TCK)" "$SECONDS_PER_RUN" \
  "$(stat -c %s "$WORK/bench.db")" <<'PY'
import sys
b, a, cb, ca, tck, secs, size = (int(x or 0) for x in sys.argv[1:])
calls = a - b
print(f"calls stored in the run: {calls} ({calls / secs:.0f}/s over {secs} s); database before the run: {b} calls")
if calls:
    print(f"server CPU per call: {(ca - cb) / tck / calls * 1e6:.0f} µs")
print(f"database file: {size} bytes")
PY
if [ "$after_calls" -gt "$before_calls" ]; then
  thread_report "$WORK/threads.0" "$WORK/threads.1" $((after_calls - before_calls))
fi
if [ "${COMPARE:-}" = "fastapi" ]; then
  airlock_rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk.txt")
  start_gateway "$WORK/gateway.db"
  load --emit "$WORK/gateway.tsv" --total "$N" --mix realistic
  sync
  echo "# the FastAPI + pydantic gateway, same kind of requests" >&2
  wrk -t2 -c64 -d"${SECONDS_PER_RUN}s" --latency -s scripts/wrk-replay.lua "http://127.0.0.1:$GPORT" -- \
    "$WORK/gateway.tsv" load 2 | tee "$WORK/gateway.txt"
  stop_gateway
  stored_g=$(sqlite3 "$WORK/gateway.db" 'SELECT count(*) FROM calls')
  gateway_rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/gateway.txt")
  python3 -c "import sys; a, g, n = map(float, sys.argv[1:]); print(f'gateway stored {n:.0f} calls; Airlock / FastAPI gateway: {a:.0f} / {g:.0f} requests/s = {a / g:.1f}x')" \
    "$airlock_rps" "$gateway_rps" "$stored_g"
fi
