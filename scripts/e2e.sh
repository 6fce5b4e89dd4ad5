#!/usr/bin/env bash
# Browser tests: build (debug), start a real server on a free loopback port with a fresh
# SQLite file and known test users, run the Playwright specs in Debian Chromium, stop.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
source scripts/lib.sh
bash scripts/build.sh
work="$(mktemp -d)"
port="$(free_port)"
export AIRLOCK_DATABASE_URL="sqlite://$work/airlock.db"
export AIRLOCK_KEY_FILE="$work/airlock.key"
# Its own copy of the demo policy: the policy spec changes it from the page, which writes
# the file (the repository's copy stays as it is).
cp policies/demo.toml "$work/policy.toml"
export AIRLOCK_POLICY_FILE="$work/policy.toml"
export AIRLOCK_BIND="127.0.0.1:$port"
export AIRLOCK_COOKIE_SECURE=false
export AIRLOCK_SITE_ROOT=target/site
export AIRLOCK_LOGIN_BURST_PER_ACCOUNT=100
export AIRLOCK_LOGIN_BURST_PER_ADDRESS=1000
export AIRLOCK_E2E_PASSWORD="e2e password 0123456789"
bin=target/debug/airlock
for u in admin reviewer oncall auditor; do
  echo "$AIRLOCK_E2E_PASSWORD" | "$bin" user add "e2e-$u" --role "$u" --password-stdin >/dev/null
done
# A reviewer whose language the i18n spec changes (the others stay in English).
echo "$AIRLOCK_E2E_PASSWORD" | "$bin" user add e2e-linguist --role reviewer --password-stdin >/dev/null
# The agent the specs sign requests as (end2end/tests/agent.ts).
export AIRLOCK_E2E_AGENT=e2e-agent
AIRLOCK_E2E_AGENT_SECRET="$("$bin" agent add "$AIRLOCK_E2E_AGENT" | grep '^whsec_')"
export AIRLOCK_E2E_AGENT_SECRET
"$bin" serve >"$work/server.log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
wait_ready "http://127.0.0.1:$port" || { cat "$work/server.log"; exit 1; }
export AIRLOCK_BASE_URL="http://127.0.0.1:$port"
mkdir -p end2end/screenshots
if ! (cd end2end && npx playwright test "$@"); then
  echo "---- server log ----"; tail -n 100 "$work/server.log"; exit 1
fi
