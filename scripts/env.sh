# Sourced by the other scripts: puts the project's pinned tools first on PATH.
TOOLS="${AIRLOCK_TOOLS:-$HOME/.cache/airlock/tools}"
export PATH="$TOOLS/bin:$PATH"
