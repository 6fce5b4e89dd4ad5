#!/usr/bin/env bash
# Time the first hour as a newcomer on this machine: a fresh clone with an empty cargo
# registry, tool cache and npm cache (Rust, Node and the system packages as found). Runs
# scripts/run.sh until its printed administrator password signs in, stops it, then runs
# scripts/test.sh. Prints both durations. Needs about 15 GB of free disk.
#   scripts/measure-cold-start.sh [GIT-REPO-OR-DIR]
set -euo pipefail
SRC="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
W="$(mktemp -d /tmp/airlock-cold.XXXXXX)"
git clone -q "$SRC" "$W/airlock"
# Empty caches: cargo's registry (rustup's toolchain stays), the project's tools, npm's.
export CARGO_HOME="$W/cargo" AIRLOCK_TOOLS="$W/tools" npm_config_cache="$W/npm"
export PATH="$HOME/.cargo/bin:$PATH"
cd "$W/airlock"
source scripts/lib.sh
PORT="$(free_port)"
BASE="http://127.0.0.1:$PORT"
start=$(date +%s)
setsid env AIRLOCK_BIND="127.0.0.1:$PORT" AIRLOCK_DEMO_AGENT=false scripts/run.sh >"$W/run.log" 2>&1 &
RUN=$!
trap 'kill -- -"$RUN" 2>/dev/null || true' EXIT
until curl -fsS -o /dev/null "$BASE/login" 2>/dev/null; do
  kill -0 "$RUN" 2>/dev/null || { tail -40 "$W/run.log"; echo "run.sh ended early" >&2; exit 1; }
  sleep 1
done
PASSWORD="$(sed -n 's/^ *password: //p' "$W/run.log" | head -1)"
code="$(sign_in "$BASE" "$W/jar" admin "$PASSWORD")"
signed_in=$(( $(date +%s) - start ))
case "$code" in 200|303) ;; *) echo "sign-in answered $code" >&2; exit 1 ;; esac
curl -fsS -b "$W/jar" "$BASE/queue" | grep -q "Queue" || { echo "queue page not reached" >&2; exit 1; }
kill -- -"$RUN"; wait "$RUN" 2>/dev/null || true
echo "run.sh: ${signed_in}s to a working sign-in" >&2
start=$(date +%s)
scripts/test.sh >"$W/test.log" 2>&1 || { tail -60 "$W/test.log"; echo "test.sh failed" >&2; exit 1; }
echo "test.sh after run.sh: $(( $(date +%s) - start ))s" >&2
echo "logs: $W/run.log $W/test.log (rm -rf $W when done)" >&2
