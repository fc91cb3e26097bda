#!/usr/bin/env bash
# raftkv, faultline's own Raft server, under partitions, pauses and kills on
# 3 nodes: every read mode (readindex, lease, follower-lease) must come out
# valid. A short run per mode (configs/raftkv-quick.yaml with the mode
# swapped in), about 25 s each.
source "$(dirname "$0")/lib.sh"
require_root
require_raftkv
setup_workdir

for mode in readindex lease follower-lease; do
  cfg="$WORK/raftkv-$mode.yaml"
  sed -e "s/^name: raftkv-quick\$/name: raftkv-quick-$mode/" \
      -e "s/^  read_mode: readindex\$/  read_mode: $mode/" \
      "$FAULTLINE_SOURCE_DIR/configs/raftkv-quick.yaml" >"$cfg"
  grep -q "^  read_mode: $mode\$" "$cfg" || fail "could not set read_mode $mode in the quick config"
  set +e
  "$FAULTLINE_BIN" run "$cfg" --store "$STORE" --index-dir "$INDEX" --seed 11 \
    --time-limit 15 >"$WORK/out-$mode.txt" 2>&1
  rc=$?
  set -e
  cat "$WORK/out-$mode.txt"
  run=$(readlink -f "$STORE/raftkv-quick-$mode/latest")
  [ -f "$run/results.json" ] || fail "$mode: no results.json"
  validate_results "$run/results.json"
  verdict=$(json_get "$run/results.json" "j['valid']")
  [ "$verdict" = valid ] || fail "$mode: verdict $verdict, expected valid"
  [ "$rc" -eq 0 ] || fail "$mode: run exited $rc"
  # The run really exercised the cluster: successful reads and writes, and
  # the faults were applied.
  ok_reads=$(grep -c '"type":"ok","f":"read"' "$run/history.jsonl" || true)
  [ "$ok_reads" -gt 50 ] || fail "$mode: only $ok_reads successful reads"
  grep -q '"f":"start-' "$run/history.jsonl" || fail "$mode: no fault was applied"
  for n in n1 n2 n3; do
    [ -s "$run/nodes/$n/raftkv.log" ] || fail "$mode: no raftkv.log for $n"
    grep -q "read-mode=$mode" "$run/nodes/$n/raftkv.log" || fail "$mode: $n did not run in read mode $mode"
  done
  # Every raftkv process the run started is gone.
  for pid in $(ledger_values "$run/ledger.jsonl" process pid); do
    if kill -0 "$pid" 2>/dev/null && grep -q raftkv "/proc/$pid/cmdline" 2>/dev/null; then
      fail "$mode: raftkv pid $pid outlived its run"
    fi
  done
  echo "PASS: $mode valid"
done
echo "PASS: every read mode valid under faults"
