#!/usr/bin/env bash
# Transactions on etcd end to end (docs/targets/etcd.md, "Transactions"):
#  1. configs/known/etcd-txn-serializable-read.yaml: list-append with
#     serializable reads while the leader is isolated; the list-append
#     checker finds strict serializability violated, with a cycle;
#  2. configs/known/etcd-txn-all-faults.yaml: linearizable reads under every
#     fault etcd takes; valid, with ok transactions that read non-empty lists
#     and appended, and aborted ones recorded as fail "conflict";
#  3. rw-register on configs/etcd-list-append.yaml's cluster: valid.
# One seed each, shortened runs (the pair's rates over 10 seeds are in
# docs/transactions.md; `faultline suite` runs more).
source "$(dirname "$0")/lib.sh"
require_root
require_tool etcd
setup_workdir
known="$FAULTLINE_SOURCE_DIR/configs/known"

la() {  # la EXPR: EXPR over the list-append checker's entry of $RUN
  json_get "$RUN/results.json" "[c for c in j['checkers'] if c['checker']=='list-append'][0]$1"
}

# 1. Serializable reads: invalid.
run_config "$known/etcd-txn-serializable-read.yaml" 1 --time-limit 20
[ "$VERDICT" = invalid ] || { cat "$WORK/out.txt"; fail "serializable reads: $VERDICT, expected invalid"; }
[ "$RC" -eq 0 ] || fail "serializable reads: exit $RC although the expected anomaly was found"
types=$(la "['details']['anomaly_types']")
echo "etcd serializable-read anomalies: $types"
[ "$(la "['details']['cycles'].__len__()")" -gt 0 ] || fail "no cycle reported"
echo "PASS: serializable reads invalid ($types)"

# 2. Every fault, linearizable reads: valid.
run_config "$known/etcd-txn-all-faults.yaml" 1 --time-limit 20
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "all faults: $VERDICT, expected valid"; }
[ "$RC" -eq 0 ] || fail "all faults: exit $RC"
"$PY" - "$RUN/history.jsonl" <<'PY' || fail "all faults: the history lacks the transactions it should have"
import json, sys
reads = appends = conflicts = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["process"] == "nemesis" or e.get("f") != "txn":
        continue
    if e["type"] == "ok":
        for f, k, v in e["value"]:
            if f == "r" and isinstance(v, list) and v:
                reads += 1
            if f == "append":
                appends += 1
    if e["type"] == "fail" and e.get("error") == "conflict":
        conflicts += 1
print("ok non-empty reads %d, ok appends %d, conflicts %d" % (reads, appends, conflicts))
sys.exit(0 if reads > 50 and appends > 50 else 1)
PY
grep -q '"process":"nemesis","type":"info","f":"start-' "$RUN/history.jsonl" ||
  fail "all faults: no fault was injected"
echo "PASS: all faults valid ($(la "['details']['transactions']") transactions)"

# 3. rw-register.
sed -e 's/^name: etcd-list-append/name: etcd-rw-register/' \
  -e 's/name: list-append/name: rw-register/' \
  "$FAULTLINE_SOURCE_DIR/configs/etcd-list-append.yaml" >"$WORK/rw.yaml"
run_config "$WORK/rw.yaml" 1 --time-limit 10
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "rw-register: $VERDICT, expected valid"; }
[ "$(json_get "$RUN/results.json" "[c for c in j['checkers'] if c['checker']=='rw-register'][0]['details']['transactions']")" -gt 100 ] ||
  fail "rw-register: too few transactions"
echo "PASS: rw-register valid"

# Nothing of any run outlives it (power loss mounted lazyfs on every node).
for run in "$STORE"/*/latest; do
  id=$(ledger_values "$run/ledger.jsonl" netns name | sed -n 1p | cut -d- -f2)
  [ -n "$id" ] || fail "$run: the ledger records no namespace"
  [ -z "$(leftovers_for_run "$id")" ] || fail "resources remain: $(leftovers_for_run "$id")"
done
echo PASS
