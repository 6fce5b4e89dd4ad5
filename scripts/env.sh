# Sourced by the other scripts: puts the project's pinned tools first on PATH.
TOOLS="${AIRLOCK_TOOLS:-$HOME/.cache/airlock/tools}"
export PATH="$TOOLS/bin:$PATH"
# Set only when rustup's wasm32 target was unavailable and setup built the Debian toolchain.
if [ -s "$TOOLS/toolchain" ]; then export RUSTUP_TOOLCHAIN="$(cat "$TOOLS/toolchain")"; fi
