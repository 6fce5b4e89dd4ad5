#!/usr/bin/env bash
# What one call costs the disk: bytes written to the WAL (pwrite64 under strace) and the
# database's growth per call, for N calls of the demo mix on a fresh database.
#   scripts/measure-write-per-call.sh [N] [BIN_DIR]
# BIN_DIR holds `airlock` and `airlock-load` (default: target/release, built if missing).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh
source scripts/lib.sh
N="${1:-20000}"
AIRLOCK_BIN_DIR="${2:-${AIRLOCK_BIN_DIR:-}}" bench_binaries
command -v strace >/dev/null || { echo "strace is needed (apt-get install strace)" >&2; exit 1; }
WORK="$(mktemp -d)"
trap 'kill "${PID:-}" "${TRACE:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
PORT="$(free_port)"
bench_server_env "$WORK" "$PORT" "$WORK/site"
SECRET="$("$BIN/airlock" agent add load | tail -n1)"
# The server runs under strace from the start: with --seccomp-bpf only pwrite64 stops it,
# so the tracing barely slows the server (and so barely changes its batch sizes).
strace --seccomp-bpf -f -qq -e trace=pwrite64 -e signal=none -o "$WORK/trace" \
  "$BIN/airlock" serve >"$WORK/server.log" 2>&1 &
TRACE=$!
wait_ready "http://127.0.0.1:$PORT"
PID=$(pgrep -P "$TRACE" | head -1)
sqlite3 "$WORK/bench.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
before=$(stat -c %s "$WORK/bench.db")
sleep 1
offset=$(stat -c %s "$WORK/trace")
"$BIN/airlock-load" --url "http://127.0.0.1:$PORT" --agent load --secret "$SECRET" \
  --concurrency 64 --total "$N" --seconds 600 >"$WORK/load.json"
cat "$WORK/load.json" >&2
WAL_FDS=$( (ls -l /proc/"$PID"/fd 2>/dev/null || true) | awk '/bench.db-wal$/ {print $9}' | tr '\n' ' ')
kill "$PID"; wait "$TRACE" 2>/dev/null || true
sqlite3 "$WORK/bench.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
after=$(stat -c %s "$WORK/bench.db")
calls=$(sqlite3 "$WORK/bench.db" 'SELECT count(*) FROM tool_calls')
python3 - "$calls" "$before" "$after" "$WORK/trace" "$WAL_FDS" "$offset" <<'PY'
import re, sys
calls, before, after = map(int, sys.argv[1:4])
fds = set(sys.argv[5].split())
wal = 0
f = open(sys.argv[4])
f.seek(int(sys.argv[6]))
for line in f:
    m = re.search(r"pwrite64\((\d+),.*= (\d+)$", line)
    if m and m.group(1) in fds:
        wal += int(m.group(2))
print(f"calls stored: {calls}")
print(f"WAL written: {wal} bytes, {wal / calls:.0f} bytes per call")
print(f"database: {before} -> {after} bytes, {(after - before) / calls:.0f} bytes per call")
PY
