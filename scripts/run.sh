#!/usr/bin/env bash
# Set up (first time), build (release) and run Airlock on http://127.0.0.1:3000 with a
# SQLite file in ./data and the demo policy. The first start creates an administrator
# and prints its password once. Stop with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
bash scripts/build.sh --release
# Plain http on loopback: cookies cannot be Secure here (documented in the README).
export AIRLOCK_COOKIE_SECURE="${AIRLOCK_COOKIE_SECURE:-false}"
export AIRLOCK_SITE_ROOT="${AIRLOCK_SITE_ROOT:-target/site}"
exec target/release/airlock serve
