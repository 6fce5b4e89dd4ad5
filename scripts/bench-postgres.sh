#!/usr/bin/env bash
# The agent API on PostgreSQL: one instance, then two on the same database, measured by
# wrk (Debian package) replaying pre-signed unique proposals of the realistic mix (one call
# in seven held), and by the project's generator in open loop at 1,000 calls/s.
#   scripts/bench-postgres.sh [SECONDS] [PREFILL]     (defaults 10 and 100000)
# AIRLOCK_BENCH_POSTGRES: the server to use (default postgres://postgres@127.0.0.1:5432/postgres);
# the database airlock_bench is dropped and created there. AIRLOCK_BIN_DIR=DIR uses the
# binaries in DIR instead of building. Prints one line per measurement with the calls per
# second, latencies and CPU per call of the Airlock processes and of PostgreSQL's.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh
source scripts/lib.sh
SECONDS_PER_RUN="${1:-10}"
PREFILL="${2:-100000}"
ADMIN="${AIRLOCK_BENCH_POSTGRES:-postgres://postgres@127.0.0.1:5432/postgres}"
URL="${ADMIN%/*}/airlock_bench"
command -v wrk >/dev/null || { echo "installing wrk" >&2; apt-get install -y wrk >/dev/null; }
bench_binaries
psql "$ADMIN" -qc 'DROP DATABASE IF EXISTS airlock_bench WITH (FORCE)' -c 'CREATE DATABASE airlock_bench'
WORK="$(mktemp -d)"
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
instance() { # PORT: start an instance on the shared database; sets PID
  local port="$1"
  mkdir -p "$WORK/$port"
  [ -f "$WORK/bench.key" ] && cp "$WORK/bench.key" "$WORK/$port/bench.key"
  bench_server_env "$WORK/$port" "$port" "$WORK/site"
  export AIRLOCK_DATABASE_URL="$URL" AIRLOCK_KEY_FILE="$WORK/$port/bench.key"
  "$BIN/airlock" serve >"$WORK/$port/server.log" 2>&1 &
  PID=$!
  PIDS+=("$PID")
  wait_ready "http://127.0.0.1:$port" 300
  [ -f "$WORK/bench.key" ] || cp "$WORK/$port/bench.key" "$WORK/bench.key"
}
postgres_ticks() { # CPU of every PostgreSQL process (user + system), in clock ticks
  local t=0
  for p in $(pgrep -x postgres); do t=$((t + $(cpu_ticks "$p" 2>/dev/null || echo 0))); done
  echo "$t"
}
stored() { psql "$URL" -tAc 'SELECT coalesce(max(rowid), 0) FROM tool_calls'; }
A="$(free_port)"
instance "$A"; PID_A=$PID
SECRET="$(AIRLOCK_DATABASE_URL="$URL" AIRLOCK_KEY_FILE="$WORK/bench.key" "$BIN/airlock" agent add load | tail -n1)"
load() { "$BIN/airlock-load" --agent load --secret "$SECRET" "$@"; }
if [ "$PREFILL" -gt 0 ]; then
  echo "# storing $PREFILL calls first" >&2
  load --url "http://127.0.0.1:$A" --mix realistic --concurrency 64 --total "$PREFILL" --seconds 100000 >/dev/null
fi
report() { # NAME CALLS CPU_AIRLOCK CPU_POSTGRES WRK_FILES...
  python3 - "$@" "$(getconf CLK_TCK)" "$SECONDS_PER_RUN" <<'PY'
import re, sys
name, calls, cpu_a, cpu_p, *files, tck, secs = sys.argv[1:]
calls, cpu_a, cpu_p, tck, secs = int(calls), int(cpu_a), int(cpu_p), int(tck), int(secs)
def p99(path):
    v, unit = re.search(r"99%\s+([\d.]+)(us|ms|s)", open(path).read()).groups()
    return float(v) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
lat = max(p99(f) for f in files)
per = lambda t: t / tck / calls * 1e6 if calls else 0
print(f"{name}: {calls / secs:,.0f} calls/s stored, wrk p99 {lat:.1f} ms, "
      f"CPU per call: Airlock {per(cpu_a):.0f} µs, PostgreSQL {per(cpu_p):.0f} µs")
PY
}
wrk_run() { # OUT PORT CONNECTIONS REQUESTS
  wrk -t1 -c"$3" -d"${SECONDS_PER_RUN}s" --latency -s scripts/wrk-replay.lua "http://127.0.0.1:$2" -- \
    "$4" load 1 >"$1"
}
indexed() { psql "$URL" -tAc 'SELECT (SELECT coalesce(max(seq), 0) FROM audit_events) - (SELECT coalesce(max(seq), 0) FROM search_events)'; }
settle() { # The audit search index (in the database) follows the chain a moment behind:
  # each run starts once it has caught up, so a run measures its own load, not the
  # indexing of the one before (the time it took is printed).
  local t0=$SECONDS
  until [ "$(indexed)" -le 0 ] || [ $((SECONDS - t0)) -gt 300 ]; do sleep 1; done
  echo "# search index caught up in $((SECONDS - t0)) s" >&2
}
settle
echo "# database before: $(stored) calls" >&2
# 1. One instance, wrk with 64 connections.
load --url "http://127.0.0.1:$A" --emit "$WORK/one.tsv" --total $((SECONDS_PER_RUN * 20000)) --mix realistic
sync # the request file on disk before the run (see bench-agent-api.sh)
b=$(stored); ca=$(cpu_ticks "$PID_A"); cp=$(postgres_ticks)
wrk_run "$WORK/one.txt" "$A" 64 "$WORK/one.tsv"
report "one instance, wrk -c64" $(( $(stored) - b )) $(( $(cpu_ticks "$PID_A") - ca )) $(( $(postgres_ticks) - cp )) "$WORK/one.txt"
# 2. One instance, open loop at 1,000/s.
settle
load --url "http://127.0.0.1:$A" --mix realistic --rate 1000 --seconds "$SECONDS_PER_RUN" --server-pid "$PID_A" \
  | python3 -c 'import json, sys; r = json.load(sys.stdin); print("one instance, open loop 1,000/s:", {k: r[k] for k in r if k.startswith(("p50", "p99", "failed", "calls_per"))})'
# 3. Two instances, wrk with 32 connections to each at once.
B="$(free_port)"
instance "$B"; PID_B=$PID
load --url "http://127.0.0.1:$A" --emit "$WORK/a.tsv" --total $((SECONDS_PER_RUN * 20000)) --mix realistic
load --url "http://127.0.0.1:$B" --emit "$WORK/b.tsv" --total $((SECONDS_PER_RUN * 20000)) --mix realistic
sync
settle
b=$(stored); ca=$(( $(cpu_ticks "$PID_A") + $(cpu_ticks "$PID_B") )); cp=$(postgres_ticks)
wrk_run "$WORK/a.txt" "$A" 32 "$WORK/a.tsv" & W=$!
wrk_run "$WORK/b.txt" "$B" 32 "$WORK/b.tsv"
wait "$W"
report "two instances, wrk -c32 each" $(( $(stored) - b )) $(( $(cpu_ticks "$PID_A") + $(cpu_ticks "$PID_B") - ca )) \
  $(( $(postgres_ticks) - cp )) "$WORK/a.txt" "$WORK/b.txt"
for port in "$A" "$B"; do # how the batches went: commands per commit, batches that read back another's writes
  curl -fsS "http://127.0.0.1:$port/metrics" | awk -v p="$port" '
    /^airlock_ledger_batch_size_sum/ {s=$2} /^airlock_ledger_batch_size_count/ {c=$2} /^airlock_ledger_refreshes_total/ {r=$2}
    END {printf "instance :%s: %d batches, %.1f commands per batch, %d read back another instance'"'"'s writes\n", p, c, (c ? s / c : 0), r}' >&2
done
echo "# database after: $(stored) calls" >&2
