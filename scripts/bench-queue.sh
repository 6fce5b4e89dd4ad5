#!/usr/bin/env bash
# Measure the queue page with many held calls: a release server on a fresh SQLite file is
# filled with N held calls (default 50,000) through the signed agent API, then a signed-in
# reviewer requests the queue page (server-rendered, as a browser's first load) and its
# API, several orders and pages. Prints per request kind the median and slowest of
# `curl`'s total time on loopback (the server's time plus well under a millisecond).
#   scripts/bench-queue.sh [HELD] [REPEATS]
# PROFILE=dev measures the dev-profile server that scripts/run.sh starts (default: release).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh
source scripts/lib.sh
HELD="${1:-50000}"
REPEATS="${2:-20}"
if [ "${PROFILE:-release}" = dev ]; then
  cargo build --locked -p server -p airlock-load >&2
  BIN="$ROOT/target/debug"
else
  cargo build --release --locked -p server -p airlock-load >&2
  BIN="$ROOT/target/release"
fi
WORK="$(mktemp -d)"
trap 'kill "${PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
PORT="$(free_port)"
bench_server_env "$WORK" "$PORT" "${AIRLOCK_SITE_ROOT:-$ROOT/target/site}"
SECRET="$("$BIN/airlock" agent add load | tail -n1)"
echo "bench password 0123456789" | "$BIN/airlock" user add bench --role reviewer --password-stdin >/dev/null
"$BIN/airlock" serve >"$WORK/server.log" 2>&1 &
PID=$!
wait_ready "http://127.0.0.1:$PORT"
echo "# holding $HELD calls" >&2
"$BIN/airlock-load" --url "http://127.0.0.1:$PORT" --agent load --secret "$SECRET" --mix held \
  --total "$HELD" --seconds 3600 --concurrency 64 >&2
BASE="http://127.0.0.1:$PORT"
[ "$(sign_in "$BASE" "$WORK/jar" bench "bench password 0123456789")" = 200 ] || { echo "sign-in failed" >&2; exit 1; }
measure() {
  local name="$1" path="$2" times=()
  curl -fsS -b "$WORK/jar" -o "$WORK/body" "$BASE$path"   # warm the page cache once
  for _ in $(seq "$REPEATS"); do
    times+=("$(curl -fsS -b "$WORK/jar" -o /dev/null -w '%{time_total}' "$BASE$path")")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v n="$name" -v p="$path" -v b="$(wc -c <"$WORK/body")" \
    '{t[NR]=$1} END {printf "{\"request\":\"%s\",\"path\":\"%s\",\"median_ms\":%.1f,\"max_ms\":%.1f,\"bytes\":%d}\n", n, p, t[int((NR+1)/2)]*1000, t[NR]*1000, b}'
}
measure "queue page (SSR, oldest first)" "/queue"
measure "queue page, highest risk first" "/queue?sort=risk"
measure "queue page, expiring soonest" "/queue?sort=expiry"
measure "queue page, filtered by tool" "/queue?tool=write_file"
measure "queue page, last page" "/queue?page=999999"
measure "queue API (JSON)" "/api/queue"
curl -fsS -b "$WORK/jar" "$BASE/queue" | grep -o '[0-9,]* calls are waiting' | head -1 | sed 's/^/# page says: /' >&2
