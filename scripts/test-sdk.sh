#!/usr/bin/env bash
# The Python SDK's tests (sdk/python/tests) against a real server started from the built
# binary (target/debug/airlock, or AIRLOCK_BIN). They run in a virtualenv under
# $AIRLOCK_TOOLS/py with pinned pytest and the SDK installed from ./sdk/python; it is made
# once and a second run only checks it (the SDK is reinstalled when its sources change).
# Network: PyPI, only while installing. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTEST_VERSION=9.2.0

TOOLS="${AIRLOCK_TOOLS:-$HOME/.cache/airlock/tools}"
VENV="$TOOLS/py"
log() { printf '\033[1mtest-sdk:\033[0m %s\n' "$*" >&2; }
pip() { "$VENV/bin/python" -m pip --quiet --disable-pip-version-check "$@"; }

if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  log "the SDK needs Python 3.10 or newer; python3 is $(python3 --version 2>&1)"; exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  log "creating the virtualenv $VENV"
  mkdir -p "$TOOLS"
  rm -rf "$VENV.new"
  # Built aside and moved into place, so an interrupted run leaves no half-made venv.
  if ! python3 -m venv "$VENV.new" 2>/dev/null; then
    # Debian's python3 ships venv separately.
    log "installing Debian's python3-venv"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get install -y --no-install-recommends python3-venv >/dev/null 2>&1 ||
      { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y --no-install-recommends python3-venv >/dev/null; }
    rm -rf "$VENV.new"
    python3 -m venv "$VENV.new" || { log "python3 -m venv failed"; exit 1; }
  fi
  mv "$VENV.new" "$VENV"
fi
if [ "$("$VENV/bin/python" -m pytest --version 2>/dev/null)" != "pytest $PYTEST_VERSION" ]; then
  log "installing pytest $PYTEST_VERSION"
  pip install "pytest==$PYTEST_VERSION"
fi
# What the installed SDK was built from, to reinstall only after a change.
sdk_sources="$(cd sdk/python && find pyproject.toml README.md src -type f \
  ! -path '*/__pycache__/*' ! -path '*.egg-info/*' -print0 | sort -z | xargs -0 sha256sum | sha256sum)"
stamp="$VENV/airlock-client.sources"
if [ "$(cat "$stamp" 2>/dev/null)" != "$sdk_sources" ]; then
  log "installing sdk/python"
  # From a copy, so the build leaves nothing (build/, *.egg-info) in the source tree.
  copy="$(mktemp -d)"
  trap 'rm -rf "$copy"' EXIT
  cp -R sdk/python/pyproject.toml sdk/python/README.md sdk/python/src "$copy/"
  pip install --force-reinstall --no-deps "$copy"
  printf '%s\n' "$sdk_sources" > "$stamp"
fi

export AIRLOCK_BIN="${AIRLOCK_BIN:-$PWD/target/debug/airlock}"
if [ ! -x "$AIRLOCK_BIN" ]; then
  log "no server binary at $AIRLOCK_BIN: run scripts/build.sh first (or set AIRLOCK_BIN)"; exit 1
fi
cd sdk/python
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
