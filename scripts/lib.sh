# Sourced by the other scripts: what several of them need.

# A free TCP port on loopback.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Wait until BASE/readyz answers (TRIES × 0.1 s, default 10 s); fails if it never does.
wait_ready() {
  local base="$1" tries="${2:-100}"
  for _ in $(seq "$tries"); do
    curl -fsS "$base/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  curl -fsS "$base/readyz" >/dev/null
}

# The settings of a benchmark server: a fresh SQLite file and key in WORK, loopback PORT,
# the demo policy, browser assets from SITE, and no per-agent limits (one agent is the
# whole load).
bench_server_env() {
  local work="$1" port="$2" site="$3"
  export AIRLOCK_DATABASE_URL="sqlite://$work/bench.db" AIRLOCK_KEY_FILE="$work/bench.key" \
         AIRLOCK_BIND="127.0.0.1:$port" AIRLOCK_LOG_LEVEL=warn AIRLOCK_COOKIE_SECURE=false \
         AIRLOCK_SITE_ROOT="$site" AIRLOCK_POLICY_FILE="$PWD/policies/demo.toml" \
         AIRLOCK_AGENT_RATE_PER_SECOND=0 AIRLOCK_MAX_PENDING_PER_AGENT=0
}

# Sign in as a browser does (the form's CSRF token, then the credentials), keeping the
# session cookie in JAR. Prints the HTTP status of the sign-in (200 or 303 when it worked).
sign_in() {
  local base="$1" jar="$2" user="$3" password="$4" token
  token="$(curl -fsS -c "$jar" "$base/login" | grep -o 'name="csrf_token" value="[^"]*"' | head -1 | sed 's/.*value="//;s/"$//')"
  curl -sS -b "$jar" -c "$jar" -o /dev/null -w '%{http_code}' -H "Origin: $base" \
    --data-urlencode "username=$user" --data-urlencode "password=$password" \
    --data-urlencode "csrf_token=$token" "$base/login"
}

# The benchmark binaries: those in AIRLOCK_BIN_DIR (to compare builds), else a fresh
# release build. Sets BIN.
bench_binaries() {
  BIN="${AIRLOCK_BIN_DIR:-}"
  if [ -z "$BIN" ]; then
    cargo build --release --locked -p server -p airlock-load >&2
    BIN="$PWD/target/release"
  fi
}

# A benchmark server from $BIN on a fresh database, removed on exit. Sets WORK, PORT,
# SECRET (the `load` agent's) and PID.
start_bench_server() {
  WORK="$(mktemp -d)"
  trap 'kill "${PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
  PORT="$(free_port)"
  bench_server_env "$WORK" "$PORT" "$WORK/site"
  SECRET="$("$BIN/airlock" agent add load | tail -n1)"
  "$BIN/airlock" serve >"$WORK/server.log" 2>&1 &
  PID=$!
  wait_ready "http://127.0.0.1:$PORT"
}

# Wait until the search index beside DIR/bench.db holds every event of its chain, looking
# every STEP seconds (default 1) for at most TRIES looks (default 600); fails after that.
wait_indexed() {
  local dir="$1" step="${2:-1}" tries="${3:-600}" chain done_to
  for _ in $(seq "$tries"); do
    chain=$(sqlite3 "$dir/bench.db" 'SELECT coalesce(max(seq), 0) FROM audit_events')
    done_to=$(sqlite3 "$dir/bench-search.db" 'SELECT coalesce(max(seq), 0) FROM search_events' 2>/dev/null || echo 0)
    [ "$done_to" -ge "$chain" ] && return 0
    sleep "$step"
  done
  echo "the search index in $dir did not catch up with its chain" >&2
  return 1
}

# The server's CPU time so far (user + system), in clock ticks (getconf CLK_TCK).
cpu_ticks() {
  awk '{print $14 + $15}' "/proc/$1/stat"
}

# One line per thread of process $1: id, name, CPU time so far (clock ticks), voluntary and
# involuntary context switches. Two of these around a run give each thread's share.
thread_counters() {
  local t
  for t in /proc/"$1"/task/*; do
    printf '%s %s %s %s\n' "${t##*/}" "$(tr ' ' _ <"$t/comm")" "$(awk '{print $14 + $15}' "$t/stat")" \
      "$(awk '/^voluntary_ctxt_switches/ {v = $2} /^nonvoluntary_ctxt_switches/ {n = $2} END {print v, n}' "$t/status")"
  done 2>/dev/null
}

# Per stored call, from two `thread_counters` files and the calls stored in between: each
# thread's CPU time (µs) and context switches, busiest first; threads under 0.5 µs summed.
thread_report() {
  python3 - "$1" "$2" "$3" "$(getconf CLK_TCK)" <<'PY'
import sys
before, after, calls, tck = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
read = lambda p: {l.split()[0]: l.split() for l in open(p) if len(l.split()) == 5}
b, a = read(before), read(after)
rows = []
for tid, (_, name, cpu, vol, invol) in a.items():
    _, _, cpu0, vol0, invol0 = b.get(tid, (tid, name, 0, 0, 0))
    rows.append((
        (int(cpu) - int(cpu0)) / tck / calls * 1e6, name, tid,
        (int(vol) - int(vol0)) / calls, (int(invol) - int(invol0)) / calls,
    ))
rows.sort(reverse=True)
print("per stored call, by thread: CPU µs, voluntary / involuntary context switches")
rest = [0.0, 0.0, 0.0, 0]
for us, name, tid, vol, invol in rows:
    if us < 0.5:
        rest = [rest[0] + us, rest[1] + vol, rest[2] + invol, rest[3] + 1]
        continue
    print(f"  {name:<16} {tid:>8}  {us:6.1f}  {vol:.2f} / {invol:.2f}")
print(f"  {rest[3]} other threads     {rest[0]:6.1f}  {rest[1]:.2f} / {rest[2]:.2f}")
PY
}

# The FastAPI + pydantic gateway (scripts/bench/fastapi_gateway.py, comparison only) on a
# free loopback port, checking signatures with SECRET and committing to DB; its venv is
# made once under ~/.cache/airlock. Sets GPORT and GPID; stop it with stop_gateway.
start_gateway() {
  local db="$1" venv="${XDG_CACHE_HOME:-$HOME/.cache}/airlock/bench-venv"
  [ -x "$venv/bin/uvicorn" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q fastapi uvicorn; }
  GPORT="$(free_port)"
  (cd scripts/bench && GATEWAY_SECRET="$SECRET" GATEWAY_DB="$db" \
    "$venv/bin/uvicorn" fastapi_gateway:app --host 127.0.0.1 --port "$GPORT" --workers 2 --log-level warning \
    >"$db.log" 2>&1) &
  GPID=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$GPORT/docs" && break; sleep 0.1; done
}

stop_gateway() {
  kill "$GPID" 2>/dev/null || true
  pkill -f "fastapi_gateway:app --host 127.0.0.1 --port $GPORT" || true
}
