#!/usr/bin/env bash
# The Redis + Sentinel target end to end (root; redis-server and
# redis-sentinel; network namespaces on 10.77.47.0/24):
#  1. configs/known/redis-sentinel-lost-writes.yaml, shortened: the primary
#     is isolated, Sentinel promotes a replica (the observer sees a new
#     primary in a higher config epoch), the register checker finds the
#     acknowledged writes the old primary took alone (invalid), and
#     leader-per-term is valid (two primaries, but in different epochs).
#  2. configs/known/redis-lock-unfenced.yaml, shortened: invalid (resource
#     corrupted by a holder stalling past the TTL).
#  3. configs/known/redis-lock-fenced.yaml, shortened: valid.
# Nothing is left behind. About 90-110 s.
source "$(dirname "$0")/lib.sh"
require_root
require_tool redis-server
require_tool redis-sentinel
setup_workdir
E2E_SUBNET=10.77.47.0/24

# 1. Lost writes: a 22 s run, partition of the primary after 5 s for 12 s.
cfg=$(local_copy "$FAULTLINE_SOURCE_DIR/configs/known/redis-sentinel-lost-writes.yaml" 22 's#^recovery: .*#recovery: 3#')
# failover_timeout 2 s: when the two sentinels of the majority split their
# votes, Sentinel retries after 2 x failover_timeout (12 s with the
# config's 6 s, longer than this short partition).
sed -i -e 's#^  interval: .*#  interval: 5#' -e 's#^  duration: .*#  duration: 12#' \
    -e 's#^  failover_timeout_ms: .*#  failover_timeout_ms: 2000#' \
    -e 's#^  op_timeout_ms: .*#  op_timeout_ms: 1000\n  observe_ms: 500#' "$cfg"
# Whether and when the sentinels fail over is their own decision (a vote
# among them, retried after 2 x failover_timeout when split); a run whose
# history shows no failover inside the partition (seen twice in some 15
# runs) is repeated with the next seed, at most three seeds. Every check
# below holds for the run that showed the failover.
failover_seed=""
for seed in 7 8 9; do
  run_config "$cfg" "$seed"
  if python3 - "$RUN/history.jsonl" <<'PY'
import json, sys
writes = 0
leaders = {}   # node -> set of (term, leader) it reported
parts = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["process"] == "nemesis":
        parts += e["type"] == "invoke" and e.get("f") == "start-partition"
        continue
    if e["f"] == "write" and e["type"] == "ok":
        writes += 1
    if e["f"] == "observe" and e["type"] == "ok":
        v = e["value"]
        # term and leader are null while a node's sentinel is mid-failover
        if v["term"] is not None:
            leaders.setdefault(e["node"], set()).add((v["term"], v["leader"]))
print(f"ok writes {writes}, observations {dict((k, sorted(v)) for k, v in leaders.items())}")
assert writes >= 100, writes
assert set(leaders) == {"n1", "n2", "n3"}, leaders
# The majority's sentinels moved to a new primary in a higher epoch.
assert any(t > 0 and l != "n1" for s in leaders.values() for t, l in s), leaders
PY
  then
    failover_seed=$seed
    break
  fi
  echo "lost-writes seed $seed: no failover in the history, trying the next seed"
done
[ -n "$failover_seed" ] || fail "lost-writes: the history does not show the failover (seeds 7 to 9)"
[ "$VERDICT" = invalid ] || { cat "$WORK/out.txt"; fail "lost-writes: verdict $VERDICT, expected invalid"; }
[ "$RC" -eq 0 ] || fail "lost-writes: exit $RC although the expected anomaly was found"
# Two primaries at once, but in different config epochs: one leader per term.
lpt=$(json_get "$RUN/results.json" "[c['valid'] for c in j['checkers'] if c['checker']=='leader-per-term'][0]")
[ "$lpt" = valid ] || fail "lost-writes: leader-per-term says $lpt: $(checker_summary leader-per-term)"
echo "PASS: redis-sentinel-lost-writes invalid: $(checker_summary linearizable 2>/dev/null || true)"

# 2. Unfenced lock: invalid, the resource corrupted.
run_config "$(local_copy "$FAULTLINE_SOURCE_DIR/configs/known/redis-lock-unfenced.yaml" 15 's#^recovery: .*#recovery: 3#')" 1
[ "$VERDICT" = invalid ] || { cat "$WORK/out.txt"; fail "redis-lock-unfenced: verdict $VERDICT, expected invalid"; }
[ "$RC" -eq 0 ] || fail "redis-lock-unfenced: exit $RC although the expected anomaly was found"
checker_summary mutex-fencing | grep -q corrupted || fail "redis-lock-unfenced: the verdict does not say the resource was corrupted"
echo "PASS: redis-lock-unfenced invalid"

# 3. Fenced lock: valid, with holds and rejected stale writes.
run_config "$(local_copy "$FAULTLINE_SOURCE_DIR/configs/known/redis-lock-fenced.yaml" 15 's#^recovery: .*#recovery: 3#')" 1
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "redis-lock-fenced: verdict $VERDICT, expected valid"; }
[ "$RC" -eq 0 ] || fail "redis-lock-fenced: exit $RC"
python3 - "$RUN/history.jsonl" <<'PY' || fail "redis-lock-fenced: the history lacks holds or rejected writes"
import json, sys
acq = rejected = 0
tokens = []
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("f") == "acquire" and e["type"] == "ok":
        acq += 1
        tokens.append(e["value"])
    if e.get("f") == "resource-write" and e["type"] == "fail":
        rejected += e.get("error") == "fenced"
print(f"acquires ok {acq}, stale writes rejected {rejected}")
assert acq >= 10 and rejected >= 1
assert len(set(tokens)) == len(tokens)
PY
echo "PASS: redis-lock-fenced valid"

# Nothing of these runs is left behind.
for run in "$STORE"/*/latest; do
  id=$(ledger_values "$run/ledger.jsonl" netns name | sed -n 1p | cut -d- -f2)
  [ -n "$id" ] || fail "$run: the ledger records no namespace"
  [ -z "$(leftovers_for_run "$id")" ] || fail "resources remain: $(leftovers_for_run "$id")"
done
[ -z "$(ls -A "$INDEX")" ] || fail "a run is still listed as active"
echo "PASS: redis + sentinel end to end"
