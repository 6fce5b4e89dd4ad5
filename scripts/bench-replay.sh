#!/usr/bin/env bash
# Benchmark policy replay (docs/performance.md): a release server records SEED calls of the
# realistic mix (one in seven held) through the signed agent API; the recorded rows are
# then copied, each copy an hour later (in arrival order), until the database holds CALLS calls; then
# `airlock policy replay` re-judges all of them twice: under the policy in force (nothing
# changes) and under a proposal that lets writes through without a person. Prints the
# replay's own figures and the process's wall time, CPU time and peak memory.
#   scripts/bench-replay.sh [CALLS] [SEED]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh
source scripts/lib.sh
CALLS="${1:-1000000}"
SEED="${2:-20000}"
bench_binaries
start_bench_server
echo "== recording $SEED calls through the agent API" >&2
"$BIN/airlock-load" --url "http://127.0.0.1:$PORT" --agent load --secret "$SECRET" --mix realistic \
  --total "$SEED" --seconds 3600 --concurrency 64 >&2
kill "$PID"; wait "$PID" 2>/dev/null || true
DB="$WORK/bench.db"
echo "== copying them up to $CALLS calls" >&2
python3 - "$DB" "$CALLS" <<'PY'
import sqlite3, sys
db, want = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(db)
cols = [r[1] for r in c.execute("PRAGMA table_info(tool_calls)")]
have = c.execute("SELECT count(*) FROM tool_calls").fetchone()[0]
seed = have
copies = -(-want // seed) - 1
# Arrival order is time order: the seed moves back by one hour per copy, and each copy
# comes an hour after the one before, the last at the seed's own time.
at = [col for col in cols if col.endswith("_at_ms")]
c.execute(f"UPDATE tool_calls SET {', '.join(f'{a} = {a} - {copies} * 3600000' for a in at)}")
k = 1
while have < want:
    n = min(seed, want - have)
    exprs = []
    for col in cols:
        if col == "id":
            exprs.append(f"id || '_{k}'")
        elif col.endswith("_at_ms"):
            exprs.append(f"{col} + {k} * 3600000")
        else:
            exprs.append(col)
    c.execute(f"INSERT INTO tool_calls ({','.join(cols)}) SELECT {','.join(exprs)} FROM tool_calls "
              f"WHERE rowid <= {n} ORDER BY rowid")
    c.commit()
    have += n
    k += 1
print(f"# {have} calls, {k - 1} copies of {seed}", file=sys.stderr)
PY
# Compact the file after the copies (as a long-running database would be).
python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("VACUUM")' "$DB"
printf '# database: %s MB\n' "$(( $(stat -c %s "$DB") / 1048576 ))" >&2
python3 - "$ROOT/policies/demo.toml" "$WORK/proposed.toml" <<'PY'
import sys
src = open(sys.argv[1]).read()
ask = 'risk = "medium"\ndestructive = true\napproval = "ask"\ngrantable = true'
assert ask in src
open(sys.argv[2], "w").write(src.replace(ask, ask.replace('"ask"', '"auto"'), 1))
PY
for proposal in "$ROOT/policies/demo.toml" "$WORK/proposed.toml"; do
  echo "== airlock policy replay $(basename "$proposal") --since 30d" >&2
  /usr/bin/time -f '# wall %e s, CPU %U s user + %S s system, peak RSS %M KB' \
    "$BIN/airlock" policy replay "$proposal" --since 30d --json >"$WORK/report.json"
  python3 - "$WORK/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(json.dumps({k: r[k] for k in ("replayed", "changed", "reasons_changed", "shifts", "elapsed_ms")}))
PY
done
