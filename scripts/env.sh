# Sourced by the other scripts: puts the project's pinned tools first on PATH.
TOOLS="${AIRLOCK_TOOLS:-$HOME/.cache/airlock/tools}"
export PATH="$TOOLS/bin:$PATH"
# Set only when rustup's wasm32 target was unavailable and setup built the Debian toolchain.
if [ -s "$TOOLS/toolchain" ]; then export RUSTUP_TOOLCHAIN="$(cat "$TOOLS/toolchain")"; fi
# Leptos type-erases component views: a fifth less wasm and less to compile. Server and
# browser app must agree (hydration), so every build through these scripts sets it; the
# server refuses browser assets built the other way (web::assets::check_site).
export RUSTFLAGS="${RUSTFLAGS:---cfg erase_components}"
# SQLite without its memory statistics: with them, every allocation SQLite makes takes one
# mutex shared by all its connections (the ledger's, the search index's, the readers') and
# updates counters nothing here reads (docs/performance.md, "SQLite's allocations").
export LIBSQLITE3_FLAGS="${LIBSQLITE3_FLAGS:--DSQLITE_DEFAULT_MEMSTATUS=0}"
