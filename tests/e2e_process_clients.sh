#!/usr/bin/env bash
# target: process with the clients that need no code: resp
# (docs/targets/process-resp.md) and etcd. Redis + Sentinel and etcd
# described in YAML, no adapter.
#  a. the Sentinel lost-writes anomaly (configs/process/redis-sentinel-lost-
#     writes.yaml: the primary isolated long enough for a failover) is
#     found: invalid, a lost write named;
#  b. its control (no faults) is valid;
#  c. etcd with the etcd v3 client under partitions, pauses and kills is
#     valid (configs/process/etcd-register.yaml).
# One seed each (longer campaigns: faultline suite). Needs root,
# redis-server, redis-sentinel and etcd. Subnets 10.77.136-138.
source "$(dirname "$0")/lib.sh"
require_root
require_tool redis-server
require_tool redis-sentinel
require_tool etcd
setup_workdir
SRC="$FAULTLINE_SOURCE_DIR"

E2E_SUBNET=10.77.136.0/24
cfg=$(local_copy "$SRC/configs/process/redis-sentinel-lost-writes.yaml" 60)
run_config "$cfg" 1
[ "$VERDICT" = invalid ] || { cat "$WORK/out.txt"; fail "(a) lost writes: verdict $VERDICT, expected invalid"; }
[ "$RC" -eq 0 ] || fail "(a) exit $RC, expected 0 (expect: invalid met)"
summary=$(checker_summary linearizable)
grep -q "lost write\|stale read" <<<"$summary" || fail "(a) the explanation names no lost write or stale read: $summary"
grep -q '"f":"start-partition"' "$RUN/history.jsonl" || fail "(a) no partition ran"
[ -s "$RUN/nodes/n1/redis.log" ] || [ -n "$(ls "$RUN/nodes/n1/")" ] || fail "(a) no node logs collected"

E2E_SUBNET=10.77.137.0/24
cfg=$(local_copy "$SRC/configs/process/redis-sentinel-lost-writes-control.yaml" 20)
run_config "$cfg" 1
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "(b) control: verdict $VERDICT, expected valid"; }
[ "$RC" -eq 0 ] || fail "(b) exit $RC"

E2E_SUBNET=10.77.138.0/24
cfg=$(local_copy "$SRC/configs/process/etcd-register.yaml" 15)
run_config "$cfg" 1
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "(c) etcd: verdict $VERDICT, expected valid"; }
json_get "$RUN/results.json" "j['target']['version']" >"$WORK/version.txt"
grep -q "etcd Version" "$WORK/version.txt" || fail "(c) the version is not etcd's: $(cat "$WORK/version.txt")"
echo "PASS"
