#!/usr/bin/env bash
# The election workload and the etcd lock recipe end to end (root: network
# namespaces on 10.77.51.0/24; raftkv next to faultline; etcd-server).
#  1. configs/raftkv-election.yaml, 15 s: valid; mutex-fencing and
#     leader-per-term valid; the history has won campaigns with int tokens,
#     renews before writes, fenced resource writes carrying the campaign's
#     token, resigns, and no write after a failed renew of the same term.
#  2. configs/known/etcd-lock-pause-fenced.yaml, 20 s: valid; acquires got
#     distinct int tokens (etcd create revisions) that grow with real-time
#     order, and every release answered.
# About 60-80 s.
source "$(dirname "$0")/lib.sh"
require_root
require_tool etcd
require_raftkv
setup_workdir
E2E_SUBNET=10.77.51.0/24

# 1. raftkv election.
run_config "$(local_copy "$FAULTLINE_SOURCE_DIR/configs/raftkv-election.yaml" 15)" 1
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "raftkv-election: verdict $VERDICT, expected valid"; }
[ "$RC" -eq 0 ] || fail "raftkv-election: exit $RC"
[ "$(checker_verdict mutex-fencing)" = valid ] || fail "raftkv-election: mutex-fencing not valid"
[ "$(checker_verdict leader-per-term)" = valid ] || fail "raftkv-election: leader-per-term missing or not valid"
python3 - "$RUN/history.jsonl" <<'PY' || fail "raftkv-election: the history lacks the expected events"
import json, sys
won = renews = writes = resigns = 0
token = {}      # process -> token of its current term
deposed = set() # processes whose renew failed in the current term
last_f = {}     # process -> f of its previous invoke
for line in open(sys.argv[1]):
    e = json.loads(line)
    p = e["process"]
    if p == "nemesis" or e["f"] == "observe":
        continue
    assert e["f"] in ("campaign", "renew", "resource-write", "resign"), e
    if e["type"] == "invoke":
        if e["f"] == "campaign":
            deposed.discard(p)
        if e["f"] == "resource-write":
            assert last_f.get(p) == "renew", ("a write not right after a renew", e)
            assert p not in deposed, ("a deposed leader wrote", e)
            assert e["fenced"] is True and e["value"][0] == token[p], e
            assert e["lock"] == "election0" and e["key"] == "election0-resource", e
            writes += 1
        if e["f"] in ("renew", "resign"):
            assert e["value"] == token[p], e
        last_f[p] = e["f"]
        continue
    if e["f"] == "campaign" and e["type"] == "ok":
        assert isinstance(e["value"], int), e
        token[p] = e["value"]
        won += 1
    if e["f"] == "renew":
        renews += 1
        if e["type"] == "fail":
            deposed.add(p)
    if e["f"] == "resign" and e["type"] == "ok":
        resigns += 1
print(f"campaigns won {won}, renews {renews}, writes {writes}, resigns ok {resigns}")
assert won >= 5 and writes >= 10 and resigns >= 3
PY
echo "PASS: raftkv-election valid: $(json_get "$RUN/results.json" "[c['summary'] for c in j['checkers'] if c['checker']=='leader-per-term'][0]")"

# 2. etcd lock recipe, fenced, holders pausing past the lease.
run_config "$(local_copy "$FAULTLINE_SOURCE_DIR/configs/known/etcd-lock-pause-fenced.yaml" 20)" 1
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "etcd-lock-pause-fenced: verdict $VERDICT, expected valid"; }
[ "$RC" -eq 0 ] || fail "etcd-lock-pause-fenced: exit $RC"
python3 - "$RUN/history.jsonl" <<'PY' || fail "etcd-lock: the history lacks the expected events"
import json, sys
acq = []          # (invoke time, ok time, token)
pending = {}
releases = {"ok": 0, "fail": 0, "info": 0}
for line in open(sys.argv[1]):
    e = json.loads(line)
    p = e["process"]
    if p == "nemesis":
        continue
    if e["f"] == "acquire":
        if e["type"] == "invoke":
            pending[p] = e["time"]
        elif e["type"] == "ok":
            assert isinstance(e["value"], int) and e["value"] > 0, e
            acq.append((pending[p], e["time"], e["value"]))
    if e["f"] == "release" and e["type"] != "invoke":
        releases[e["type"]] += 1
tokens = [t for _, _, t in acq]
assert len(set(tokens)) == len(tokens), "duplicate tokens"
for a in acq:
    for b in acq:
        if a[1] < b[0]:
            assert a[2] < b[2], ("token order", a, b)
print(f"acquires ok {len(acq)}, tokens {min(tokens)}..{max(tokens)}, releases {releases}")
assert len(acq) >= 5 and releases["ok"] >= 3
PY
echo "PASS: etcd-lock-pause-fenced valid: $(json_get "$RUN/results.json" "[c['summary'] for c in j['checkers'] if c['checker']=='mutex-fencing'][0]")"

for run in "$STORE"/*/latest; do
  id=$(ledger_values "$run/ledger.jsonl" netns name | sed -n 1p | cut -d- -f2)
  [ -n "$id" ] || fail "$run: the ledger records no namespace"
  [ -z "$(leftovers_for_run "$id")" ] || fail "resources remain: $(leftovers_for_run "$id")"
done
[ -z "$(ls -A "$INDEX")" ] || fail "a run is still listed as active"
echo "PASS: election workload and etcd lock recipe end to end"
