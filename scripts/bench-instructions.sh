#!/usr/bin/env bash
# The server's user-space instructions per call, counted by valgrind's callgrind: a figure
# that does not move with the VM's speed (wall-clock figures here swing by up to 2x
# within an hour), for comparing two builds function by function.
#   scripts/bench-instructions.sh [CALLS] [CONCURRENCY]        (defaults: 3000 16)
# A release server on a fresh SQLite file runs under callgrind with instrumentation off;
# 300 calls of the realistic mix warm it up, then instrumentation is on for CALLS more
# (airlock-load, closed loop). Prints the instructions per call, the functions with the
# most of them (self), and the project's own functions with everything they call. AIRLOCK_BIN_DIR=DIR uses the binaries in
# DIR instead of building; KEEP=1 keeps the callgrind file (callgrind_annotate).
# Limits: system calls and the kernel are not counted; valgrind runs one thread at a time
# and hides the CPU's SHA extensions, so SHA-256 shows its portable code (several times
# slower than on the hardware); batch sizes follow the timing, so totals of the same
# build differ by a few per cent between runs. Compare functions, not only totals.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh
source scripts/lib.sh
CALLS="${1:-3000}"
CONCURRENCY="${2:-16}"
command -v valgrind >/dev/null || { echo "installing valgrind" >&2; apt-get install -y valgrind >/dev/null; }
bench_binaries
WORK="$(mktemp -d)"
trap 'kill "${PID:-}" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
PORT="$(free_port)"
bench_server_env "$WORK" "$PORT" "$WORK/site"
SECRET="$("$BIN/airlock" agent add load | tail -n1)"
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/callgrind.out" \
  "$BIN/airlock" serve >"$WORK/server.log" 2>&1 &
PID=$!
wait_ready "http://127.0.0.1:$PORT" 1200
load() {
  "$BIN/airlock-load" --url "http://127.0.0.1:$PORT" --agent load --secret "$SECRET" --mix realistic \
    --concurrency "$CONCURRENCY" --seconds 100000 "$@"
}
load --total 300 >/dev/null
callgrind_control --instr=on "$PID" >/dev/null 2>&1
load --total "$CALLS" >"$WORK/load.json"
callgrind_control --instr=off "$PID" >/dev/null 2>&1
kill "$PID"; wait "$PID" 2>/dev/null || true
PID=
[ -n "${KEEP:-}" ] && echo "# callgrind file: $WORK/callgrind.out" >&2
annotate() { callgrind_annotate --inclusive="$1" "$WORK/callgrind.out" 2>/dev/null; }
python3 - "$CALLS" <(annotate no) <(annotate yes) <<'PY'
import re, sys
calls = int(sys.argv[1])
def rows(path):
    total, out = None, []
    for line in open(path):
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in m.group(2):
            total = ir
            continue
        # "file:function [object]" -> function; a recursive call's second entry ('2) skipped.
        name = m.group(2).split(" [")[0]
        name = name.split(":", 1)[1] if name.startswith(("???:", ".", "/")) else name
        if not re.search(r"'\d+$", name):
            out.append((ir, name))
    return total, out
total, own = rows(sys.argv[2])
_, incl = rows(sys.argv[3])
print(f"{calls} calls: {total / calls:,.0f} user-space instructions per call\n")
def table(title, items, n):
    print(f"| instructions per call | share | {title} |\n|---:|---:|---|")
    for ir, name in items[:n]:
        print(f"| {ir / calls:,.0f} | {ir / total * 100:.1f} % | `{name[:100]}` |")
    print()
table("function (self)", own, 25)
table("the project's functions (inclusive)", [r for r in incl if re.match(r"<?(server|policy|app)::", r[1])], 25)
PY
