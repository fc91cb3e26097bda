#!/usr/bin/env bash
# ZooKeeper transactions end to end (root, Debian packages zookeeper and
# libzookeeper-mt-dev, Java 17; network namespaces on 10.77.170.0/24):
# configs/zookeeper-list-append.yaml (sync, getData with versions, one
# multi per transaction; partitions and kills) for 20 s of workload:
#  - the verdict is valid and a fault was injected;
#  - ok transactions both read and appended, one ok transaction did both,
#    and some read returned a non-empty list;
#  - nothing of the run is left (namespaces, links, servers).
# The known pair (configs/known/zookeeper-txn-*.yaml) is measured in its
# configs, not here. About 40-55 s.
source "$(dirname "$0")/lib.sh"
require_root
require_tool java
[ -f /usr/share/java/zookeeper.jar ] || fail "this test needs the zookeeper package (scripts/install-deps.sh)"
setup_workdir
E2E_SUBNET=10.77.170.0/24

cfg=$(local_copy "$FAULTLINE_SOURCE_DIR/configs/zookeeper-list-append.yaml" 20 \
  's/^recovery: .*/recovery: 3/' 's/^  interval: .*/  interval: 4/')
run_config "$cfg" 1
echo "zookeeper-list-append seed 1: $VERDICT (exit $RC)"
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "zookeeper-list-append: $VERDICT, expected valid"; }
[ "$RC" -eq 0 ] || fail "zookeeper-list-append: exit $RC"
[ "$(checker_verdict list-append)" = valid ] || fail "the list-append checker did not say valid"
grep -q '"f":"start-kill"\|"f":"start-partition"' "$RUN/history.jsonl" ||
  fail "no fault was injected in the run"

check_txn_history "$RUN/history.jsonl" 20

id=$(sed -n 's/.* I faultline .*: run \([0-9a-f]*\) of .*/\1/p' "$WORK/out.txt" | head -1)
[ -n "$id" ] || fail "no run id in the output"
[ -z "$(leftovers_for_run "$id")" ] || fail "run $id left namespaces or links"
if pgrep -f "QuorumPeerMain .*faultline-$id/" >/dev/null; then
  fail "a ZooKeeper server of run $id is still running"
fi
echo "PASS: zookeeper list-append transactions valid under faults"
