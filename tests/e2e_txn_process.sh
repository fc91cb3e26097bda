#!/usr/bin/env bash
# Transactions through target process and the exec protocol
# (docs/exec-protocol.md, "Transactions"): a 12 s copy of
# configs/process-raftkv-list-append.yaml (raftkv described in YAML, under
# partitions, pauses and kills) once with the Python reference client and
# once with the Node.js one (skipped, saying so, when `node` is missing).
# Each run must be valid and exit 0, its history must hold ok transactions
# with appends and with reads that saw a non-empty list, and `faultline
# check --model list-append` on the stored history must agree. Then one
# 6 s collection run per client (configs/process-raftkv-bank.yaml with the
# Python client, configs/process-raftkv-counter.yaml with the Node.js one):
# valid, with ok updates and ok reads, and a fault injected.
# Needs root, python3 and raftkv next to faultline. Subnet 10.77.178.0/24.
# About 25 s per client, and 10 s per collection run.
source "$(dirname "$0")/lib.sh"
require_root
require_tool python3
require_raftkv
setup_workdir
SRC="$FAULTLINE_SOURCE_DIR"
E2E_SUBNET=10.77.178.0/24

# txn_copy CLIENT_COMMAND: the config's copy in $WORK with that client
# command (a YAML flow list) and {config_dir} pointing at the repository's
# configs (the status command lives there).
txn_copy() {
  local out
  out=$(local_copy "$SRC/configs/process-raftkv-list-append.yaml" 12 \
    "s#^    command: \[python3, \.\./examples/clients/python/raftkv_client\.py\]#    command: $1#" \
    "s#^  system: raftkv#  system: raftkv\n  config_dir: $SRC/configs#" \
    "s#\[python3, #[$PY, #g")
  grep -qF -- "command: $1" "$out" || fail "could not set the client command of the copy"
  echo "$out"
}

# check_run LABEL: the run in $RUN is valid with ok appends and reads.
check_run() {
  [ "$RC" -eq 0 ] || { cat "$WORK/out.txt"; fail "$1: exit $RC"; }
  [ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "$1: $VERDICT, expected valid"; }
  [ "$(checker_verdict list-append)" = valid ] || fail "$1: the list-append checker did not say valid"
  "$PY" - "$RUN/history.jsonl" "$1" <<'PY' || fail "$1: the history lacks ok transactions"
import json, sys
ok = appends = reads = nonempty = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["process"] == "nemesis" or e["f"] != "txn" or e["type"] != "ok":
        continue
    ok += 1
    for f, k, v in e["value"]:
        if f == "append":
            appends += 1
        elif f == "r":
            assert isinstance(v, list), "a read of %r is %r, not a list" % (k, v)
            reads += 1
            nonempty += 1 if v else 0
print("%s: %d ok txns, %d appends, %d reads (%d non-empty)" % (
    sys.argv[2], ok, appends, reads, nonempty))
assert ok > 50 and appends > 50 and nonempty > 20
PY
  "$FAULTLINE_BIN" check --model list-append "$RUN/history.jsonl" >"$WORK/check.txt" 2>&1 ||
    { cat "$WORK/check.txt"; fail "$1: faultline check of the history did not exit 0"; }
  grep -q '"f":"start-' "$RUN/history.jsonl" || fail "$1: no fault was injected"
}

run_config "$(txn_copy "[$PY, $SRC/examples/clients/python/raftkv_client.py]")" 1
check_run python
echo "PASS: list-append through the Python reference client"

if command -v node >/dev/null 2>&1; then
  run_config "$(txn_copy "[node, $SRC/examples/clients/node/raftkv_client.js]")" 2
  check_run node
  echo "PASS: list-append through the Node.js reference client"
else
  echo "SKIP: no 'node' (Debian package nodejs): the Node.js client was not run"
fi

# collection_run CONFIG CLIENT_COMMAND LABEL UPDATE: a 6 s copy of CONFIG
# with that client, seed 1; valid, with ok UPDATE operations and ok reads.
collection_run() {
  local cfg
  cfg=$(local_copy "$SRC/configs/$1" 6 \
    "s#^    command: \[[a-z0-9]*, \.\./examples/clients/.*\]#    command: $2#" \
    "s#^  system: raftkv#  system: raftkv\n  config_dir: $SRC/configs#" \
    "s#\[python3, #[$PY, #g")
  grep -qF -- "command: $2" "$cfg" || fail "could not set the client command of $1"
  run_config "$cfg" 1
  [ "$RC" -eq 0 ] && [ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "$3: exit $RC, $VERDICT"; }
  "$PY" - "$RUN/history.jsonl" "$3" "$4" <<'PY' || fail "$3: too few ok operations"
import collections, json, sys
ok = collections.Counter()
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["process"] != "nemesis" and e["type"] == "ok":
        ok[e["f"]] += 1
print("%s: %d ok %ss, %d ok reads" % (sys.argv[2], ok[sys.argv[3]], sys.argv[3], ok["read"]))
assert ok[sys.argv[3]] > 50 and ok["read"] > 10
PY
  grep -q '"f":"start-' "$RUN/history.jsonl" || fail "$3: no fault was injected"
}

collection_run process-raftkv-bank.yaml "[$PY, $SRC/examples/clients/python/raftkv_client.py]" "python bank" transfer
echo "PASS: bank through the Python reference client"
if command -v node >/dev/null 2>&1; then
  collection_run process-raftkv-counter.yaml "[node, $SRC/examples/clients/node/raftkv_client.js]" "node counter" add
  echo "PASS: counter through the Node.js reference client"
fi
