# Shared helpers for the end-to-end tests (sourced, not run).
# Each test runs the real faultline binary against real etcd members in real
# network namespaces; it needs root and the etcd-server package, and says so.
set -euo pipefail

FAULTLINE_BIN="${FAULTLINE_BIN:?FAULTLINE_BIN must point at the faultline binary}"
FAULTLINE_SOURCE_DIR="${FAULTLINE_SOURCE_DIR:?FAULTLINE_SOURCE_DIR must be set}"

# Debian's python3 starts in ~0.03 s; a pyenv shim first on PATH takes 0.3 s
# to seconds per call, which adds up over a test and can outlast a fault.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

require_root() {
  [ "$(id -u)" -eq 0 ] || fail "this test needs root (network namespaces, iptables)"
}

require_tool() {
  command -v "$1" >/dev/null 2>&1 || fail "this test needs '$1' (run scripts/install-deps.sh)"
}

# The raftkv server the runs start: built next to faultline.
require_raftkv() {
  local raftkv
  raftkv="$(dirname "$FAULTLINE_BIN")/raftkv"
  [ -x "$raftkv" ] || fail "this test needs the raftkv server next to faultline ($raftkv); build it (scripts/build.sh)"
}

# A private store and active-run index per test, healed and removed on exit.
setup_workdir() {
  WORK="$(mktemp -d /tmp/faultline-e2e.XXXXXX)"
  STORE="$WORK/store"
  INDEX="$WORK/active"
  mkdir -p "$STORE" "$INDEX"
  trap 'cleanup_workdir' EXIT
}

# cleanup_workdir [RC]: heals what the test's runs left, removes the work
# dir and exits with RC (default: the status of the last command).
cleanup_workdir() {
  local rc=$?
  [ $# -eq 0 ] || rc=$1
  # Whatever a failed test left behind is healed from the ledgers.
  "$FAULTLINE_BIN" heal --all --index-dir "$INDEX" >/dev/null 2>&1 || true
  rm -rf "$WORK"
  exit $rc
}

# json_get FILE EXPR: evaluates a Python expression on the parsed JSON `j`.
json_get() {
  "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

# Names of network namespaces, links and processes that carry a run id.
leftovers_for_run() {
  local id="$1"
  { ip netns list 2>/dev/null | grep -F -- "$id" || true
    ip -o link show 2>/dev/null | grep -F -- "$id" || true; }
}

# ledger_values LEDGER KIND FIELD: the FIELD of every ledger entry of KIND,
# one per line (a torn last line is skipped, as heal does).
ledger_values() {
  "$PY" -c "import json,sys
for l in open(sys.argv[1]):
    try: e=json.loads(l)
    except ValueError: continue
    if e.get('kind')==sys.argv[2]: print(e[sys.argv[3]])" "$1" "$2" "$3"
}

# validate_results FILE: FILE must satisfy docs/results.schema.json.
# Uses Debian's python3 (python3-jsonschema) or any python3 with jsonschema.
validate_results() {
  local py
  for py in /usr/bin/python3 python3; do
    if "$py" -c "import jsonschema" 2>/dev/null; then
      "$py" -c "import json,sys,jsonschema
s=json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(s)
jsonschema.validate(json.load(open(sys.argv[2])), s)" \
        "$FAULTLINE_SOURCE_DIR/docs/results.schema.json" "$1" \
        || fail "$1 does not match docs/results.schema.json"
      return 0
    fi
  done
  fail "validating results.json needs python3-jsonschema (scripts/install-deps.sh)"
}

# await_history PID RUN PATTERN WHAT: waits (at most 60 s) until RUN's
# history.jsonl has a line matching PATTERN, while the faultline process PID
# still runs; fails naming WHAT otherwise.
await_history() {
  local pid="$1" run="$2" pattern="$3" what="$4"
  for _ in $(seq 1 600); do
    grep -q -- "$pattern" "$run/history.jsonl" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$WORK/out.txt"; fail "run ended before $what"; }
    sleep 0.1
  done
  fail "no $what within 60 s"
}

# local_copy CONFIG TIME [SED_EXPR...]: a copy of CONFIG in $WORK on the
# test's own subnet $E2E_SUBNET with time_limit TIME (and the extra sed
# expressions applied); prints its path.
local_copy() {
  local cfg="$1" time="$2" out e
  shift 2
  : "${E2E_SUBNET:?set E2E_SUBNET to the subnet of the test before local_copy}"
  out="$WORK/$(basename "$cfg")"
  local args=(-e "s#^  subnet: .*#  subnet: $E2E_SUBNET#"
              -e "s#^time_limit: .*#time_limit: $time#")
  for e in "$@"; do args+=(-e "$e"); done
  sed "${args[@]}" "$cfg" >"$out"
  grep -q "subnet: $E2E_SUBNET" "$out" || fail "could not set the subnet of $cfg"
  echo "$out"
}

# run_config CONFIG SEED [ARGS...]: runs `faultline run CONFIG` with the
# test's store and index (output in $WORK/out.txt); sets RC (exit code), RUN
# (the run directory) and VERDICT (results.json's `valid`), after checking
# results.json against the schema.
run_config() {
  local cfg="$1" seed="$2" name
  shift 2
  name=$(sed -n 's/^name: *//p' "$cfg" | head -1)
  [ -n "$name" ] || fail "$cfg has no name"
  set +e
  "$FAULTLINE_BIN" run "$cfg" --store "$STORE" --index-dir "$INDEX" \
    --seed "$seed" "$@" >"$WORK/out.txt" 2>&1
  RC=$?
  set -e
  RUN=$(readlink -f "$STORE/$name/latest" || true)  # none when refused
  [ -f "$RUN/results.json" ] || { cat "$WORK/out.txt"; fail "$name: no results.json"; }
  validate_results "$RUN/results.json"
  VERDICT=$(json_get "$RUN/results.json" "j['valid']")
}

# checker_verdict NAME / checker_summary NAME: the validity / summary of
# checker NAME in $RUN/results.json.
checker_verdict() {
  json_get "$RUN/results.json" "[c['valid'] for c in j['checkers'] if c['checker']=='$1'][0]"
}
checker_summary() {
  json_get "$RUN/results.json" "[c['summary'] for c in j['checkers'] if c['checker']=='$1'][0]"
}

# event_value RUN F [N]: the value (JSON) of RUN's N-th (default 1st) info
# event F in history.jsonl.
event_value() {
  "$PY" -c "import json,sys
n=int(sys.argv[3]) if len(sys.argv)>3 else 1
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get('f')==sys.argv[2] and e.get('type')=='info':
        n-=1
        if n==0: print(json.dumps(e['value'])); break" "$1/history.jsonl" "$2" ${3:-}
}

# Background runs, for tests that look at a run while it is going:
#   run_bg CONFIG NAME   starts `faultline run CONFIG` with the test's store
#                        and index and seed $RUN_SEED (default 1); sets `pid`
#                        and `run` (the run's `latest` link).
#   finish               waits for it; it must exit 0 (valid).
#   interrupt_run_on_exit  sets the EXIT trap: a run still going when the
#                        test ends is interrupted (SIGINT: it heals and
#                        stops), then cleanup_workdir.
# After setup_workdir.
pid=""
run_bg() {
  "$FAULTLINE_BIN" run "$1" --store "$STORE" --index-dir "$INDEX" \
    --seed "${RUN_SEED:-1}" >"$WORK/out.txt" 2>&1 &
  pid=$!
  run="$STORE/$2/latest"
}

finish() {
  local rc
  set +e; wait "$pid"; rc=$?; set -e
  pid=""
  [ "$rc" -eq 0 ] || { cat "$WORK/out.txt"; fail "the run exited $rc (not valid)"; }
}

interrupt_run_on_exit() {
  # Under set -e, a failing kill or wait (the run exits 130 on SIGINT) would
  # end the trap before the cleanup: both are allowed to fail, and the
  # test's own exit status is handed to cleanup_workdir.
  trap 'keep=$?; if [ -n "$pid" ]; then kill -INT "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; cleanup_workdir "$keep"' EXIT
}

# all_healed RUN KIND: true when RUN's ledger has entries of KIND and every
# one of them is marked healed.
all_healed() {
  "$PY" - "$1/ledger.jsonl" "$2" <<'PYEOF'
import json, sys
es = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
healed = {e["ref"] for e in es if e["kind"] == "healed"}
mine = [e["seq"] for e in es if e["kind"] == sys.argv[2]]
assert mine and all(s in healed for s in mine), (sys.argv[2], mine, healed)
PYEOF
}

# process_raftkv_target RAFTKV: the `target:` block of a config that runs
# raftkv (the program RAFTKV on the nodes) through target process on remote
# (ssh, docker) nodes: examples/raftkv/status.py uploaded into each node's
# {dir} through `files` (braces doubled: the content is a template) and run
# there as the status command, the Python exec client on the controller.
process_raftkv_target() {
  cat <<YAML
target:
  name: process
  system: raftkv
  ports: {client: 6379, peer: 7001}
  lists:
    raft: {each: "{id}={ip}:{port:peer}/{port:client}"}
  files:
    - path: "{dir}/status.py"
      content: |
$(sed -e 's/{/{{/g' -e 's/}/}}/g' -e 's/^/        /' "$FAULTLINE_SOURCE_DIR/examples/raftkv/status.py")
  processes:
    - name: server
      argv: [$1, --id, "{id}", --peers, "{list:raft}",
             --listen, "{ip}:{port:client}", --data-dir, "{data}"]
      ready: {tcp: client}
      ready_timeout: 10s
      stop_grace: 2s
      faults: [pause, kill, clock]
  status:
    command: [python3, "{dir}/status.py", "{ip}", "{port:client}"]
    timeout: 3s
  client:
    protocol: exec
    command: [$PY, $FAULTLINE_SOURCE_DIR/examples/clients/python/raftkv_client.py]
YAML
}

# check_txn_history HISTORY MIN_OK: fails unless the list-append history has
# more than MIN_OK ok transactions, some with reads, some with appends, some
# with both, and a read that returned a non-empty list; prints the counts.
check_txn_history() {
  "$PY" - "$1" "$2" <<'PY' || fail "the history lacks ok transactions that read and append, or a non-empty read"
import json, sys
ok = reads = appends = both = nonempty = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("f") != "txn" or e["type"] != "ok":
        continue
    ok += 1
    fs = {m[0] for m in e["value"]}
    reads += "r" in fs
    appends += "append" in fs
    both += fs == {"r", "append"}
    nonempty += any(m[0] == "r" and isinstance(m[2], list) and m[2] for m in e["value"])
print("ok txns:", ok, "with reads:", reads, "with appends:", appends,
      "with both:", both, "with a non-empty read:", nonempty)
assert ok > int(sys.argv[2]) and reads > 0 and appends > 0 and both > 0 and nonempty > 0
PY
}
