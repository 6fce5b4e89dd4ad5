#!/usr/bin/env bash
# Set up (first time), build and run Airlock on http://127.0.0.1:3000 with a SQLite file
# in ./data and the demo policy (copied to ./data/policy.toml on the first start). The first start creates an administrator and prints its
# password once. Stop with Ctrl-C.
#
# The server is built in the dev profile (dependencies optimised): the same compilation
# scripts/test.sh uses, so running the tests afterwards reuses it. For a deployment build
# use `scripts/build.sh --release` and run target/release/airlock.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
source scripts/lib.sh
bash scripts/build.sh
# Plain http on loopback: cookies cannot be Secure here (documented in the README).
export AIRLOCK_COOKIE_SECURE="${AIRLOCK_COOKIE_SECURE:-false}"
export AIRLOCK_SITE_ROOT="${AIRLOCK_SITE_ROOT:-target/site}"
# The policy in force lives in ./data: changes made on the Policy page (or with `airlock
# policy apply`) are written there, not over the shipped demo policy. The first start
# copies the demo policy.
if [ -z "${AIRLOCK_POLICY_FILE:-}" ]; then
  mkdir -p data
  [ -f data/policy.toml ] || cp policies/demo.toml data/policy.toml
  export AIRLOCK_POLICY_FILE=data/policy.toml
fi
BIND="${AIRLOCK_BIND:-127.0.0.1:3000}"
export AIRLOCK_BIND="$BIND"
bin=target/debug/airlock
"$bin" serve &
SERVER=$!
trap 'kill -TERM "$SERVER" 2>/dev/null || true' INT TERM
# Once the server answers, a scripted demo agent (signed requests over the real API)
# sends a session so the queue has calls to review. AIRLOCK_DEMO_AGENT=false skips it.
if [ "${AIRLOCK_DEMO_AGENT:-true}" = true ]; then
  (
    wait_ready "http://$BIND" 600 || exit 0
    printf '\n\033[1mAirlock is ready:\033[0m http://%s (sign in as admin with the password printed above on the first start)\n\n' "$BIND" >&2
    "$bin" demo-agent --url "http://$BIND" --wait 600 || true
  ) &
fi
wait "$SERVER"
