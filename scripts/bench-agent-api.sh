#!/usr/bin/env bash
# The agent API's figures (docs/performance.md), both generators, on a database that
# already holds PREFILL calls:
#   scripts/bench-agent-api.sh [SECONDS] [PREFILL] [RUNS]      (defaults: 10 1000000 3)
# The database is filled once (the realistic mix, one call in seven held, through the
# signed API; the search index caught up), then each run starts a release server on a
# copy of it and measures, in this order:
#   1. wrk -t2 -c64 replaying pre-signed unique requests of the realistic mix
#      (scripts/wrk-replay.lua): requests/s, p50/p99, the server's CPU time per call, over
#      the run and until the search index has caught up on its calls;
#   2. the project's generator, open loop at a steady 2,000 calls/s (once the search index
#      has caught up on the wrk run): p50/p99;
#   3. the project's generator, closed loop, 64 in flight, 20,000 calls, the server under
#      strace (pwrite64 only): WAL bytes and database growth per call;
#   4. the FastAPI + pydantic gateway (scripts/bench/fastapi_gateway.py) under the same
#      wrk command: requests/s and the ratio.
# Prints a line per run and the table with ranges. AIRLOCK_BIN_DIR=DIR uses the binaries
# in DIR instead of building.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh
source scripts/lib.sh
SECONDS_PER_RUN="${1:-10}"
PREFILL="${2:-1000000}"
RUNS="${3:-3}"
for tool in wrk strace sqlite3; do
  command -v "$tool" >/dev/null || { echo "installing $tool" >&2; apt-get install -y "$tool" >/dev/null; }
done
bench_binaries
WORK="$(mktemp -d)"
trap 'kill "${PID:-}" "${TRACE:-}" "${GPID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
load() { "$BIN/airlock-load" --url "http://127.0.0.1:$PORT" --agent load --secret "$SECRET" "$@"; }
serve() { "$BIN/airlock" serve >>"$DIR/server.log" 2>&1 & PID=$!; wait_ready "http://127.0.0.1:$PORT" 300; }
stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; }
checkpoint() { sqlite3 "$DIR/bench.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null; }

# The prefilled database, made once.
DIR="$WORK/template"; mkdir -p "$DIR"; PORT="$(free_port)"
bench_server_env "$DIR" "$PORT" "$DIR/site"
SECRET="$("$BIN/airlock" agent add load | tail -n1)"
serve
if [ "$PREFILL" -gt 0 ]; then
  echo "# storing $PREFILL calls first" >&2
  load --mix realistic --concurrency 64 --total "$PREFILL" --seconds 100000 >/dev/null
  # The runs measure new calls only.
  wait_indexed "$DIR"
fi
stop; checkpoint
echo "# database: $(stat -c %s "$DIR/bench.db") bytes, $(sqlite3 "$DIR/bench.db" 'SELECT count(*) FROM tool_calls') calls" >&2

ROWS="$WORK/rows.tsv"
for run in $(seq "$RUNS"); do
  DIR="$WORK/run"; rm -rf "$DIR"; cp -r "$WORK/template" "$DIR"; PORT="$(free_port)"
  # The copy's dirty pages are written back now, not during the measurement.
  sync
  bench_server_env "$DIR" "$PORT" "$DIR/site"
  serve
  # 1. wrk, fresh requests signed just before (timestamps are accepted for five minutes).
  load --emit "$DIR/requests.tsv" --total $((SECONDS_PER_RUN * 40000)) --mix realistic
  # The file (about 90 MB) on disk now: the kernel would write it back half a minute
  # later, in the middle of the open loop, and the server's fsyncs would wait behind it.
  sync
  before=$(sqlite3 "$DIR/bench.db" 'SELECT max(rowid) FROM tool_calls'); cpu0=$(cpu_ticks "$PID")
  wrk -t2 -c64 -d"${SECONDS_PER_RUN}s" --latency -s scripts/wrk-replay.lua "http://127.0.0.1:$PORT" -- \
    "$DIR/requests.tsv" load 2 >"$DIR/wrk.txt"
  after=$(sqlite3 "$DIR/bench.db" 'SELECT max(rowid) FROM tool_calls'); cpu1=$(cpu_ticks "$PID")
  # 2. open loop at a steady 2,000/s: once the search index has caught up on the wrk run
  #    (an event behind per call of that run), so that the loop measures the steady state.
  started=$(date +%s.%N)
  wait_indexed "$DIR"
  lag=$(python3 -c "import time; print(round(time.time() - $started, 1))"); cpu2=$(cpu_ticks "$PID")
  load --mix realistic --rate 2000 --seconds "$SECONDS_PER_RUN" --server-pid "$PID" >"$DIR/open.json"
  stop; checkpoint
  # 3. bytes written per call, the server under strace (only pwrite64 stops it).
  size0=$(stat -c %s "$DIR/bench.db")
  strace --seccomp-bpf -f -qq -e trace=pwrite64 -e signal=none -o "$DIR/trace" \
    "$BIN/airlock" serve >>"$DIR/server.log" 2>&1 &
  TRACE=$!
  wait_ready "http://127.0.0.1:$PORT" 300
  PID=$(pgrep -P "$TRACE" | head -1)
  sleep 1
  offset=$(stat -c %s "$DIR/trace")
  load --mix realistic --concurrency 64 --total 20000 --seconds 600 >"$DIR/closed.json"
  wal_fds=$( (ls -l /proc/"$PID"/fd 2>/dev/null || true) | awk '/bench.db-wal$/ {print $9}' | tr '\n' ' ')
  kill "$PID"; wait "$TRACE" 2>/dev/null || true; checkpoint
  size1=$(stat -c %s "$DIR/bench.db")
  # 4. the FastAPI + pydantic gateway, same wrk command, same kind of requests.
  start_gateway "$DIR/gateway.db"
  load --emit "$DIR/gateway.tsv" --total $((SECONDS_PER_RUN * 10000)) --mix realistic
  sync
  wrk -t2 -c64 -d"${SECONDS_PER_RUN}s" --latency -s scripts/wrk-replay.lua "http://127.0.0.1:$GPORT" -- \
    "$DIR/gateway.tsv" load 2 >"$DIR/gateway.txt"
  stop_gateway
  python3 - "$DIR" "$before" "$after" "$cpu0" "$cpu1" "$(getconf CLK_TCK)" "$SECONDS_PER_RUN" \
    "$size0" "$size1" "$offset" "$wal_fds" "$cpu2" "$lag" >>"$ROWS" <<'PY'
import json, re, sys
d = sys.argv[1]
before, after, cpu0, cpu1, tck, secs, size0, size1, offset = (int(x or 0) for x in sys.argv[2:11])
fds = set(sys.argv[11].split())
cpu2, lag = int(sys.argv[12]), float(sys.argv[13])
def wrk(path):
    t = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
    def ms(p):
        v, unit = re.search(rf"{p}%\s+([\d.]+)(us|ms|s)", t).groups()
        return float(v) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
    return rps, ms(50), ms(99)
rps, p50, p99 = wrk(f"{d}/wrk.txt")
calls = after - before
cpu_us = (cpu1 - cpu0) / tck / calls * 1e6 if calls else 0
# The same calls' CPU once the search index has caught up on them (its work follows a
# moment behind, and may still be going on when wrk stops).
cpu_indexed = (cpu2 - cpu0) / tck / calls * 1e6 if calls else 0
openl = json.load(open(f"{d}/open.json"))
closed = json.load(open(f"{d}/closed.json"))
wal = 0
with open(f"{d}/trace") as f:
    f.seek(offset)
    for line in f:
        m = re.search(r"pwrite64\((\d+),.*= (\d+)$", line)
        if m and m.group(1) in fds:
            wal += int(m.group(2))
n = closed["ok"]
grps, _, _ = wrk(f"{d}/gateway.txt")
print("\t".join(str(x) for x in [round(rps), round(p50, 2), round(p99, 2), round(cpu_us), openl["p50_ms"],
      openl["p99_ms"], openl["failed"], round(wal / n), round((size1 - size0) / n), round(grps), round(rps / grps, 1),
      round(cpu_indexed), lag]))
PY
  echo "# run $run: $(tail -n1 "$ROWS")" >&2
done
python3 - "$ROWS" "$PREFILL" "$(stat -c %s "$WORK/template/bench.db")" <<'PY'
import sys
rows = [list(map(float, l.split("\t"))) for l in open(sys.argv[1]) if l.strip()]
def rng(i, fmt="{:,.0f}"):
    lo, hi = min(r[i] for r in rows), max(r[i] for r in rows)
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}–{fmt.format(hi)}"
print(f"{len(rows)} runs on a database holding {int(sys.argv[2]):,} calls ({int(sys.argv[3]):,} bytes) before each")
print("| measure | figure | target |\n|---|---|---|")
print(f"| wrk, 64 connections, requests/s | {rng(0)} | ≥ 15,000 |")
print(f"| wrk p50 / p99, ms | {rng(1, '{:.1f}')} / {rng(2, '{:.1f}')} | |")
print(f"| server CPU per call (wrk run), µs | {rng(3)} | ≤ 60 |")
print(f"| the same until the search index caught up, µs (seconds it took after wrk) | {rng(11)} ({rng(12, '{:.1f}')}) | |")
print(f"| own generator, open loop 2,000/s: p50 / p99, ms (failed) | {rng(4, '{:.1f}')} / {rng(5, '{:.1f}')} ({rng(6)}) | p99 ≤ 5 |")
print(f"| WAL written per call, bytes | {rng(7)} | ≤ 4,096 |")
print(f"| database growth per call, bytes | {rng(8)} | ≤ 800 |")
print(f"| FastAPI + pydantic gateway (wrk, same requests), requests/s | {rng(9)} | |")
print(f"| Airlock / gateway | {rng(10, '{:.1f}')}× | |")
PY
