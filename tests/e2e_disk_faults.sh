#!/usr/bin/env bash
# The disk faults on real raftkv nodes, through faultline-lazyfs mounted over
# every node's data directory (docs/disk-faults.md):
#  1. configs/known/raftkv-log-not-synced.yaml (no fsync of the log): power
#     loss of a majority loses acknowledged writes, so the run is invalid
#     (up to 3 seeds, 20 s each); what the disks held is kept in <run>/disk,
#     and no mount is left;
#  2. its control (the log fsynced) stays valid, and keeps no disk/;
#  3. a controller SIGKILLed while a power loss is in force leaves the
#     mounts and their daemons; `faultline heal` removes them and every
#     namespace, process and the scratch directory;
#  4. a process target whose data is not in {dir}/data is refused (254).
source "$(dirname "$0")/lib.sh"
require_root
require_raftkv
[ -c /dev/fuse ] || fail "needs /dev/fuse (FUSE)"
LAZYFS="$(dirname "$FAULTLINE_BIN")/faultline-lazyfs"
[ -x "$LAZYFS" ] || fail "needs $LAZYFS (built when libfuse3-dev is installed)"
setup_workdir

# Mount points of faultline-lazyfs under a path.
lazyfs_mounts_under() {
  awk -v p="$1" '$3 == "fuse.faultline-lazyfs" && index($2, p) == 1 {print $2}' /proc/self/mounts
}

known="$FAULTLINE_SOURCE_DIR/configs/known"
found=""
for seed in 1 2 3; do
  run_config "$known/raftkv-log-not-synced.yaml" "$seed" --time-limit 20
  echo "raftkv-log-not-synced seed $seed: $VERDICT (exit $RC)"
  if [ "$VERDICT" = invalid ]; then found=$seed; break; fi
done
[ -n "$found" ] || { cat "$WORK/out.txt"; fail "log-not-synced: no seed of 1..3 lost a write"; }
[ "$RC" -eq 0 ] || fail "log-not-synced: exit $RC although the expected anomaly was found"
grep -q '"f":"start-power-loss"' "$RUN/history.jsonl" || fail "no power loss in the history"
# Each power loss says what it dropped on each node.
dropped=$(event_value "$RUN" start-power-loss | "$PY" -c "import json,sys
v=json.load(sys.stdin); print(sum(n['dropped_writes'] for n in v['disk'].values()))")
[ "$dropped" -gt 0 ] || fail "the first power loss dropped nothing"
for n in n1 n2 n3; do
  [ -d "$RUN/disk/$n" ] || fail "the run is invalid but $RUN/disk/$n was not kept"
  # Synced before it was kept: the node's log is there, not only its name.
  [ -n "$(find "$RUN/disk/$n" -type f -size +0 -print -quit)" ] ||
    fail "$RUN/disk/$n holds no data"
done
[ -z "$(lazyfs_mounts_under "$(ledger_values "$RUN/ledger.jsonl" dir name)")" ] ||
  fail "a lazy file system is still mounted"
all_healed "$RUN" mount || fail "mount entries not all marked healed"
echo "PASS: log-not-synced invalid (seed $found), disks kept in $RUN/disk"

run_config "$known/raftkv-log-not-synced-control.yaml" 1 --time-limit 15
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "control: $VERDICT, expected valid"; }
[ "$RC" -eq 0 ] || fail "control: exit $RC"
[ ! -e "$RUN/disk" ] || fail "a valid run kept $RUN/disk"
all_healed "$RUN" mount || fail "control: mount entries not all marked healed"
echo "PASS: log-not-synced-control valid"

# 3. SIGKILL during a power loss.
cat >"$WORK/long.yaml" <<YAML
name: disk-sigkill
time_limit: 600
cluster: {nodes: 3, subnet: 10.77.147.0/24}
target: {name: raftkv}
workload: {name: register, keys: 2, concurrency: 3, rate: 50}
nemesis: {faults: [power-loss], interval: 1, duration: 600, targets: [majority]}
YAML
"$FAULTLINE_BIN" run "$WORK/long.yaml" --store "$STORE" --index-dir "$INDEX" \
  >"$WORK/out.txt" 2>&1 &
pid=$!
run="$STORE/disk-sigkill/latest"
await_history "$pid" "$run" '"type":"info","f":"start-power-loss"' "the power loss"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
scratch=$(ledger_values "$run/ledger.jsonl" dir name)
mapfile -t mounts < <(ledger_values "$run/ledger.jsonl" mount name)
mapfile -t namespaces < <(ledger_values "$run/ledger.jsonl" netns name)
mapfile -t pids < <(ledger_values "$run/ledger.jsonl" process pid)
[ "${#mounts[@]}" -eq 3 ] || fail "expected 3 mount entries, got ${#mounts[@]}"
[ "$(lazyfs_mounts_under "$scratch" | wc -l)" -eq 3 ] ||
  fail "expected 3 lazy file systems mounted before heal"
grep -q '"kind":"disk"' "$run/ledger.jsonl" || fail "the power loss is not in the ledger"
"$FAULTLINE_BIN" heal "$run" >"$WORK/heal.txt" || { cat "$WORK/heal.txt"; fail "heal failed"; }
[ -z "$(lazyfs_mounts_under "$scratch")" ] || fail "mounts remain: $(lazyfs_mounts_under "$scratch")"
for p in "${pids[@]}"; do
  state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$p/stat" 2>/dev/null || echo gone)
  [ "$state" = gone ] || [ "$state" = Z ] || fail "process $p ($(cat /proc/$p/comm)) remains"
done
for ns in "${namespaces[@]}"; do
  grep -qF "$ns" <<<"$(ip netns list)" && fail "namespace $ns remains"
done
[ -e "$scratch" ] && fail "scratch directory $scratch remains"
"$FAULTLINE_BIN" heal "$run" >/dev/null || fail "second heal failed"
echo "PASS: heal after SIGKILL removed ${#mounts[@]} mounts, ${#pids[@]} processes, ${#namespaces[@]} namespaces"

# 4. The data outside the mount.
cat >"$WORK/outside.yaml" <<'YAML'
name: disk-outside
cluster: {nodes: 3}
target:
  name: process
  ports: {client: 7000}
  client: {protocol: exec, command: [my-client, "{ip}"]}
  processes:
    - {name: db, argv: [mydb, --data, /var/lib/mydb]}
nemesis: {faults: [power-loss], targets: [one]}
YAML
set +e
"$FAULTLINE_BIN" validate "$WORK/outside.yaml" >"$WORK/v.txt" 2>&1
vrc=$?
set -e
[ "$vrc" -eq 254 ] || { cat "$WORK/v.txt"; fail "validate exited $vrc, expected 254"; }
grep -q "outside.yaml:[0-9]*:[0-9]*" "$WORK/v.txt" || { cat "$WORK/v.txt"; fail "no file:line:column"; }
grep -q "{dir}/data" "$WORK/v.txt" || fail "the error does not name {dir}/data"
echo "PASS: data outside the mount refused"
