# Sourced by the other scripts: puts the project's pinned tools first on PATH.
TOOLS="${AIRLOCK_TOOLS:-$HOME/.cache/airlock/tools}"
export PATH="$TOOLS/bin:$PATH"
# Set only when rustup's wasm32 target was unavailable and setup built the Debian toolchain.
if [ -s "$TOOLS/toolchain" ]; then export RUSTUP_TOOLCHAIN="$(cat "$TOOLS/toolchain")"; fi
# Leptos type-erases component views: a fifth less wasm and less to compile. Server and
# browser app must agree (hydration), so every build through these scripts sets it; the
# server refuses browser assets built the other way (web::assets::check_site).
export RUSTFLAGS="${RUSTFLAGS:---cfg erase_components}"
