#!/usr/bin/env bash
# Benchmark the auditor's desk (docs/audit-performance.md): a release build fills a
# database with EVENTS realistic audit events across 1,000 sessions (one of about 10,000
# events), builds the search index, and measures search, the big session's timeline and
# a JSONL export in the server's own functions; then the `airlock audit export` command
# exports everything as CSV and as JSON Lines, each timed with its peak memory.
#   scripts/bench-audit.sh [EVENTS] [DIR]
# DIR keeps the database for a second run (default: a temporary directory, removed).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh
source scripts/lib.sh
EVENTS="${1:-1000000}"
if [ -n "${2:-}" ]; then
  DIR="$2"; mkdir -p "$DIR"
else
  DIR="$(mktemp -d)"; trap 'rm -rf "$DIR"' EXIT
fi
bench_binaries
echo "== audit-bench --events $EVENTS ($DIR)" >&2
"$BIN/audit-bench" --dir "$DIR" --events "$EVENTS"
for FORMAT in csv jsonl; do
echo "== airlock audit export --format $FORMAT (everything)" >&2
AIRLOCK_DATABASE_URL="sqlite://$DIR/airlock.db" AIRLOCK_KEY_FILE="$DIR/bench.key" \
AIRLOCK_POLICY_FILE="$ROOT/policies/demo.toml" AIRLOCK_LOG_LEVEL=warn \
python3 - "$BIN/airlock" "$FORMAT" <<'PY'
import resource, subprocess, sys, time
t = time.time()
p = subprocess.Popen([sys.argv[1], "audit", "export", "--format", sys.argv[2]], stdout=subprocess.PIPE)
lines = size = 0
while chunk := p.stdout.read(1 << 20):
    lines += chunk.count(b"\n")
    size += len(chunk)
assert p.wait() == 0
s = time.time() - t
rows = lines - (1 if sys.argv[2] == "csv" else 0)  # the CSV header
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f'{{"cli_export_{sys.argv[2]}": {{"rows": {rows}, "bytes": {size}, "seconds": {s:.2f}, "rows_per_s": {rows / s:.0f}, "peak_rss_kib": {peak}}}}}')
PY
done
