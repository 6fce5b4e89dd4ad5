#!/usr/bin/env bash
# Two Airlock instances on one PostgreSQL database, on ports 3000 and 3001 (nothing in
# front of them): what one records, the other shows live, decides and answers. Stop with
# Ctrl-C.
#   AIRLOCK_DATABASE_URL  the shared database (default postgres://postgres@127.0.0.1:5432/airlock,
#                         created with psql when missing)
#   AIRLOCK_CLUSTER_PORTS the two ports (default "3000 3001")
# Each instance keeps its own directory (data/cluster/PORT); both use the same
# server key (data/cluster/airlock.key: agents' secrets are sealed with it) and policy file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
source scripts/lib.sh
bash scripts/build.sh
URL="${AIRLOCK_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/airlock}"
read -r PORT_A PORT_B <<<"${AIRLOCK_CLUSTER_PORTS:-3000 3001}"
if command -v psql >/dev/null; then
  NAME="${URL##*/}"; NAME="${NAME%%\?*}"
  ADMIN="${URL%/*}/postgres"
  if ! psql "$ADMIN" -tAc "SELECT 1 FROM pg_database WHERE datname = '$NAME'" | grep -q 1; then
    psql "$ADMIN" -qc "CREATE DATABASE \"$NAME\"" && echo "created database $NAME" >&2
  fi
fi
mkdir -p data/cluster
[ -f data/policy.toml ] || cp policies/demo.toml data/policy.toml
export AIRLOCK_DATABASE_URL="$URL" AIRLOCK_POLICY_FILE="${AIRLOCK_POLICY_FILE:-data/policy.toml}" \
       AIRLOCK_COOKIE_SECURE="${AIRLOCK_COOKIE_SECURE:-false}" AIRLOCK_SITE_ROOT="${AIRLOCK_SITE_ROOT:-target/site}"
PIDS=()
trap 'kill -TERM "${PIDS[@]}" 2>/dev/null || true' INT TERM EXIT
for port in "$PORT_A" "$PORT_B"; do
  mkdir -p "data/cluster/$port"
  # The first instance creates the key (and, on an empty database, the first admin).
  [ -f data/cluster/airlock.key ] && cp data/cluster/airlock.key "data/cluster/$port/airlock.key"
  AIRLOCK_BIND="127.0.0.1:$port" AIRLOCK_KEY_FILE="data/cluster/$port/airlock.key" target/debug/airlock serve &
  PIDS+=("$!")
  wait_ready "http://127.0.0.1:$port" 600 || { echo "the instance on port $port did not start" >&2; exit 1; }
  [ -f data/cluster/airlock.key ] || cp "data/cluster/$port/airlock.key" data/cluster/airlock.key
done
printf '\n\033[1mTwo instances on one database:\033[0m http://127.0.0.1:%s and http://127.0.0.1:%s\n\n' "$PORT_A" "$PORT_B" >&2
wait -n "${PIDS[@]}"
