#!/usr/bin/env bash
# The collection workloads end to end (docs/collections.md): set, bank and
# counter on real 3-node raftkv clusters under partitions and kills
# (configs/raftkv-{set,bank,counter}.yaml, subnets 10.77.179.0/24 ..
# 10.77.181.0/24), shortened to 13 s each. Every run must be valid (exit
# 0), its own checker valid, with ok reads and ok adds / transfers in the
# history.
source "$(dirname "$0")/lib.sh"
require_root
require_raftkv
setup_workdir
configs="$FAULTLINE_SOURCE_DIR/configs"

# count_ok F: the ok completions of operation F in $RUN/history.jsonl.
count_ok() {
  "$PY" -c "import json,sys
n=0
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get('type')=='ok' and e.get('f')==sys.argv[2]: n+=1
print(n)" "$RUN/history.jsonl" "$1"
}

for spec in set:add bank:transfer counter:add; do
  w=${spec%%:*}
  update=${spec##*:}
  run_config "$configs/raftkv-$w.yaml" 7 --time-limit 13
  [ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "$w: $VERDICT, expected valid"; }
  [ "$RC" -eq 0 ] || { cat "$WORK/out.txt"; fail "$w: exit $RC"; }
  [ "$(checker_verdict "$w")" = valid ] || fail "$w: the $w checker said $(checker_summary "$w")"
  reads=$(count_ok read)
  updates=$(count_ok "$update")
  echo "$w: valid; $reads ok reads, $updates ok ${update}s; $(checker_summary "$w")"
  [ "$reads" -gt 0 ] || fail "$w: no ok read"
  [ "$updates" -gt 0 ] || fail "$w: no ok $update"
done
echo "PASS e2e_collections"
