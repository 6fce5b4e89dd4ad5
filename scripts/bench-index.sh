#!/usr/bin/env bash
# The search index's own cost: the server's CPU time per event while its background
# indexer builds the index of a chain from nothing, with no requests meanwhile.
#   scripts/bench-index.sh [CALLS] [ROUNDS]      (defaults: 200000 3)
# A database of CALLS calls of the realistic mix is stored once through the signed API.
# Each round starts a release server on a copy of it without its index file and counts
# the server's CPU time (user + system, /proc/PID/stat) from its start until the index
# holds every event of the chain. AIRLOCK_BIN_DIR=DIR uses the binaries in DIR instead of
# building; COMPARE_BIN_DIR=DIR2 alternates the rounds with DIR2's binaries, on the same
# database (A/B).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh
source scripts/lib.sh
CALLS="${1:-200000}"
ROUNDS="${2:-3}"
command -v sqlite3 >/dev/null || { echo "installing sqlite3" >&2; apt-get install -y sqlite3 >/dev/null; }
bench_binaries
BUILDS=("$BIN")
if [ -n "${COMPARE_BIN_DIR:-}" ]; then BUILDS+=("$COMPARE_BIN_DIR"); fi
WORK="$(mktemp -d)"
trap 'kill "${PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
serve() {
  "$1/airlock" serve >>"$DIR/server.log" 2>&1 &
  PID=$!
  wait_ready "http://127.0.0.1:$PORT" 300
}
stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; }

DIR="$WORK/template"; mkdir -p "$DIR"; PORT="$(free_port)"
bench_server_env "$DIR" "$PORT" "$DIR/site"
SECRET="$("$BIN/airlock" agent add load | tail -n1)"
serve "$BIN"
echo "# storing $CALLS calls" >&2
"$BIN/airlock-load" --url "http://127.0.0.1:$PORT" --agent load --secret "$SECRET" --mix realistic \
  --concurrency 64 --total "$CALLS" --seconds 100000 >/dev/null
stop
sqlite3 "$DIR/bench.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
events=$(sqlite3 "$DIR/bench.db" 'SELECT max(seq) FROM audit_events')
echo "# chain: $events events; database $(stat -c %s "$DIR/bench.db") bytes" >&2
for round in $(seq "$ROUNDS"); do
  for build in "${BUILDS[@]}"; do
    DIR="$WORK/run"; rm -rf "$DIR"; cp -r "$WORK/template" "$DIR"; rm -f "$DIR"/bench-search.db*
    sync
    PORT="$(free_port)"; bench_server_env "$DIR" "$PORT" "$DIR/site"
    serve "$build"
    # From the process's start: the indexer begins before the server answers, so CPU read at
    # ready would leave its first events out (start-up's own CPU is counted, a few ms).
    cpu0=0; t0=$(date +%s.%N)
    wait_indexed "$DIR" 0.2 6000
    cpu1=$(cpu_ticks "$PID"); t1=$(date +%s.%N)
    stop
    python3 -c "import sys; c0, c1, tck, n, t0, t1 = map(float, sys.argv[2:]); \
print(f'round {sys.argv[1]}: {(c1 - c0) / tck / n * 1e6:.1f} µs of CPU per event, {n / (t1 - t0):,.0f} events/s')" \
      "$round $build" "$cpu0" "$cpu1" "$(getconf CLK_TCK)" "$events" "$t0" "$t1"
  done
done
