#!/usr/bin/env bash
# MariaDB Galera through the `process` target, end to end (root, Debian
# packages mariadb-server, galera-4, python3-pymysql, rsync; network
# namespaces on 10.77.62.0/24).
#  1. configs/known/galera-stale-read.yaml (wsrep_sync_wait=0, a node's
#     peer packets delayed 1 s), 30 s: invalid (a stale read) within 2
#     seeds, the run exits 0 (expect: invalid), and `faultline check` on the
#     stored history agrees.
#  2. configs/known/galera-stale-read-control.yaml (wsrep_sync_wait=1), 30 s:
#     valid, with reads, writes and compare-and-sets that succeeded.
# After each run nothing may be left: no namespace or link of the run, no
# mariadbd of it. About 100-150 s.
source "$(dirname "$0")/lib.sh"
require_root
require_tool mariadbd
require_tool mariadb-install-db
[ -f /usr/lib/galera/libgalera_smm.so ] || fail "this test needs the galera-4 package"
/usr/bin/python3 -c "import pymysql" 2>/dev/null || fail "this test needs python3-pymysql"
[ -x "$(dirname "$FAULTLINE_BIN")/faultline-netdelay" ] || fail "this test needs faultline-netdelay next to faultline"
setup_workdir
E2E_SUBNET=10.77.62.0/24
CLIENT="$FAULTLINE_SOURCE_DIR/examples/galera/client.py"

# galera_copy CONFIG: a 30 s copy on the test's subnet whose client command
# names the client by its absolute path (the copy lives in $WORK).
galera_copy() {
  local out
  out=$(local_copy "$1" 30 "s#\.\./\.\./examples/galera/client\.py#$CLIENT#")
  grep -q -- "$CLIENT" "$out" || fail "could not point $1 at $CLIENT"
  echo "$out"
}

# run_galera CONFIG SEED: run_config, then nothing of the run may be left.
run_galera() {
  local name id
  name=$(basename "$1" .yaml)
  run_config "$1" "$2"
  echo "$name seed $2: $VERDICT (exit $RC)"
  id=$(sed -n 's/.* I faultline .*: run \([0-9a-f]*\) of .*/\1/p' "$WORK/out.txt" | head -1)
  [ -n "$id" ] || fail "$name: no run id in the output"
  [ -z "$(leftovers_for_run "$id")" ] || fail "$name: run $id left namespaces or links"
  if pgrep -f "mariadbd .*faultline-$id/" >/dev/null; then
    fail "$name: a mariadbd of run $id is still running"
  fi
}

# 1. Stale reads with wsrep_sync_wait=0.
found=no
for seed in 1 2; do
  run_galera "$(galera_copy "$FAULTLINE_SOURCE_DIR/configs/known/galera-stale-read.yaml")" "$seed"
  if [ "$VERDICT" = invalid ]; then found=yes; break; fi
done
[ "$found" = yes ] || { cat "$WORK/out.txt"; fail "no stale read found in 2 runs of galera-stale-read"; }
[ "$RC" -eq 0 ] || fail "the expected anomaly was found but the run exited $RC"
set +e
"$FAULTLINE_BIN" check --model cas-register "$RUN/history.jsonl" >"$WORK/check.txt"
crc=$?
set -e
[ "$crc" -eq 1 ] || { cat "$WORK/check.txt"; fail "check exited $crc, expected 1 (invalid)"; }
grep -q "read" "$WORK/check.txt" || fail "check's explanation does not name a read"

# 2. The control, wsrep_sync_wait=1: linearizable.
run_galera "$(galera_copy "$FAULTLINE_SOURCE_DIR/configs/known/galera-stale-read-control.yaml")" 1
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "galera-stale-read-control: $VERDICT, expected valid"; }
[ "$RC" -eq 0 ] || fail "galera-stale-read-control: exit $RC"
"$PY" - "$RUN/history.jsonl" <<'PY' || fail "galera-stale-read-control: the history lacks successful operations"
import json, sys
ok = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["type"] == "ok" and e["process"] != "nemesis":
        ok[e["f"]] = ok.get(e["f"], 0) + 1
print("ok ops:", ok)
assert ok.get("read", 0) > 10 and ok.get("write", 0) > 10 and ok.get("cas", 0) > 0
PY

echo "PASS: Galera stale reads found with wsrep_sync_wait=0, none with 1"
