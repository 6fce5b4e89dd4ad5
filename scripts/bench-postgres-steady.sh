#!/usr/bin/env bash
# Open-loop latency at 1,000 calls/s on PostgreSQL in a steady state: a fresh database
# airlock_steady with 100,000 calls stored through the signed API and 40 s of rest, then
# one 15 s run per argument, each once the audit search index has caught up and after two
# seconds' rest.
#   scripts/bench-postgres-steady.sh run run held run held
# `run` measures as is; `held` takes the search indexer's advisory lock for the run (the
# indexer skips its rounds), to see what indexing costs the tail. AIRLOCK_BIN_DIR=DIR uses
# the binaries in DIR instead of building.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
source scripts/lib.sh
bench_binaries
ADMIN="${AIRLOCK_BENCH_POSTGRES:-postgres://postgres@127.0.0.1:5432/postgres}"
URL="${ADMIN%/*}/airlock_steady"
psql "$ADMIN" -qc 'DROP DATABASE IF EXISTS airlock_steady WITH (FORCE)' -c 'CREATE DATABASE airlock_steady' 2>/dev/null
WORK="$(mktemp -d)"
trap 'kill "${PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
PORT="$(free_port)"
bench_server_env "$WORK" "$PORT" "$WORK/site"
export AIRLOCK_DATABASE_URL="$URL"
"$BIN/airlock" serve >"$WORK/server.log" 2>&1 &
PID=$!
wait_ready "http://127.0.0.1:$PORT" 300
SECRET="$("$BIN/airlock" agent add load | tail -n1)"
load() { "$BIN/airlock-load" --agent load --secret "$SECRET" --url "http://127.0.0.1:$PORT" "$@"; }
load --mix realistic --concurrency 64 --total 100000 --seconds 100000 >/dev/null
# A steady state: the prefill's data pages reach the disk first (the kernel writes dirty
# pages back after 30 s; a run during that writeback measures the burst, not the rate).
sleep 40
# Events not yet searchable (0 with a build whose index is not in the database).
lag() { psql "$URL" -tAc 'SELECT (SELECT max(seq) FROM audit_events) - (SELECT coalesce(max(seq), 0) FROM search_events)' 2>/dev/null || echo 0; }
for how in "${@:-run run run}"; do
  until [ "$(lag)" -le 0 ]; do sleep 1; done
  if [ "$how" = held ]; then # the indexer's lock key (audit::index::INDEX_LOCK)
    (psql "$URL" -qc 'SELECT pg_advisory_lock(27419013024145778), pg_sleep(20)' >/dev/null &)
  fi
  sleep 2
  load --mix realistic --rate 1000 --seconds 15 --server-pid "$PID" | python3 -c \
    'import json, sys; r = json.load(sys.stdin); print(sys.argv[1], {k: r[k] for k in r if k.startswith(("p50", "p99", "failed"))})' "$how"
done
