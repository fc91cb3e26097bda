#!/usr/bin/env bash
# A short partitioned run against a real 3-node etcd cluster must be valid,
# with many ok operations and every fault applied and healed; `analyze` on
# the stored run must give the same verdict; nothing may remain afterwards.
source "$(dirname "$0")/lib.sh"
require_root
require_tool etcd
setup_workdir

set +e
"$FAULTLINE_BIN" run "$FAULTLINE_SOURCE_DIR/configs/etcd-quick.yaml" \
  --store "$STORE" --index-dir "$INDEX" --seed 11 >"$WORK/out.txt" 2>&1
rc=$?
set -e
cat "$WORK/out.txt"
[ "$rc" -eq 0 ] || fail "run exited $rc, expected 0 (valid)"

run="$STORE/etcd-quick/latest"
[ -f "$run/history.jsonl" ] || fail "no history stored"
[ -f "$run/results.json" ] || fail "no results.json stored"
validate_results "$run/results.json"
[ "$(json_get "$run/results.json" "j['valid']")" = valid ] || fail "results.json is not valid"
python3 -c "import sys, xml.dom.minidom as m
s=m.parse(sys.argv[1]).getElementsByTagName('testsuite')[0]
sys.exit(0 if s.getAttribute('failures')=='0' and s.getAttribute('errors')=='0' and int(s.getAttribute('tests'))>=2 else 1)" \
  "$run/junit.xml" || fail "junit.xml is missing, malformed or not passing"
# The run's own report, and the store index that lists it.
grep -q 'id="verdict"\|class="verdict' "$run/report.html" || fail "report.html is missing or has no verdict"
# (the SVG namespace name is an identifier, not a request)
urls=$(grep -oi "https\?://[^\"' )]*" "$run/report.html" | grep -v '^http://www.w3.org/' || true)
[ -z "$urls" ] || fail "report.html refers to network addresses: $urls"
[ -f "$STORE/index.html" ] || fail "the store index was not written"
grep -q "etcd-quick/$(basename "$(readlink -f "$run")")" "$STORE/index.html" || fail "the store index does not link the run"
grep -q "report: .*report.html" "$WORK/out.txt" || fail "the run did not print its report path"
ok=$(grep -c '"type":"ok"' "$run/history.jsonl")
[ "$ok" -ge 500 ] || fail "only $ok ok operations"
starts=$(grep -c '"process":"nemesis","type":"info","f":"start-partition"' "$run/history.jsonl" || true)
stops=$(grep -c '"process":"nemesis","type":"info","f":"stop-partition"' "$run/history.jsonl" || true)
[ "$starts" -ge 1 ] || fail "no partition was applied"
[ "$starts" -eq "$stops" ] || fail "$starts partitions started but $stops healed"
grep -q '"error"' <(grep start-partition "$run/history.jsonl") && fail "a partition failed to apply"
for n in n1 n2 n3; do
  [ -s "$run/nodes/$n/etcd.log" ] || fail "no etcd log collected for $n"
done

set +e
"$FAULTLINE_BIN" analyze "$run" >"$WORK/analyze.txt" 2>&1
arc=$?
set -e
cat "$WORK/analyze.txt"
[ "$arc" -eq "$rc" ] || fail "analyze exited $arc, run exited $rc"
validate_results "$run/results.json"

id=$(ledger_values "$run/ledger.jsonl" netns name | sed -n 1p | cut -d- -f2)
[ -n "$id" ] || fail "the ledger records no namespace"
[ -z "$(leftovers_for_run "$id")" ] || fail "resources remain: $(leftovers_for_run "$id")"
echo "PASS: $ok ok operations, $starts partitions applied and healed"
