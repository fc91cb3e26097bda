#!/usr/bin/env bash
# raftkv end to end on loopback (no root, no namespaces): a 3-node cluster on
# 127.0.0.21..23 elects a leader, takes writes, loses its leader to SIGKILL,
# elects another, keeps every acknowledged write, re-admits the killed node
# (which catches up through a snapshot), and stops cleanly on SIGTERM (exit 0). Then a 5-node
# cluster on 127.0.0.21..25 is timed from launch to serving.
# Needs: python3, the raftkv binary in the build root (next to faultline).
# RAFTKV_BENCH=1 also measures write throughput at a few concurrencies.
source "$(dirname "$0")/lib.sh"
require_tool python3

RAFTKV="$(dirname "$FAULTLINE_BIN")/raftkv"
[ -x "$RAFTKV" ] || fail "no raftkv binary at $RAFTKV (build the 'raftkv' target)"
CLIENT="$FAULTLINE_SOURCE_DIR/targets/raftkv/server/raftkv_client.py"
[ -f "$CLIENT" ] || fail "missing $CLIENT"
rk() { python3 "$CLIENT" "$@"; }

WORK="$(mktemp -d /tmp/raftkv-e2e.XXXXXX)"
declare -A PIDS=()
cleanup() {
  local rc=$?
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$rc" -ne 0 ]; then
    for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 30 "$f"; }; done
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
# A command that fails outside a `|| fail` still says where (set -e alone
# exits silently).
trap 'echo "FAIL: line $LINENO: a command exited $?" >&2' ERR

PEER_PORT=27101
CLIENT_PORT=26391
ip() { echo "127.0.0.$((20 + $1))"; }
addr() { echo "$(ip "$1"):$CLIENT_PORT"; }
addrs() { local i; for i in "$@"; do addr "$i"; done; }
peers() {  # peers N: the --peers list of an N-node cluster
  local i out=""
  for i in $(seq 1 "$1"); do out+="${out:+,}$i=$(ip "$i"):$PEER_PORT/$CLIENT_PORT"; done
  echo "$out"
}
# Snapshots every 50 entries, so the restarted node is sent a snapshot.
start() {  # start CLUSTER N ID
  "$RAFTKV" --id "$3" --peers "$(peers "$2")" --listen "$(addr "$3")" \
    --data-dir "$WORK/$1/n$3" --request-timeout-ms 1500 --snapshot-entries 50 \
    2>>"$WORK/$1-n$3.log" &
  PIDS[$1-$3]=$!
}
now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }
stop_all() {  # stop_all CLUSTER IDS...: SIGTERM, expect exit 0
  local c=$1 i rc
  shift
  for i in "$@"; do kill -TERM "${PIDS[$c-$i]}" 2>/dev/null || true; done  # maybe gone
  for i in "$@"; do
    set +e; wait "${PIDS[$c-$i]}"; rc=$?; set -e
    unset "PIDS[$c-$i]"
    [ "$rc" -eq 0 ] || fail "node $i of $c exited $rc after SIGTERM, expected 0"
    grep -q "stopped cleanly" "$WORK/$c-n$i.log" || fail "node $i of $c did not log a clean stop"
  done
}

# --- 3 nodes: elect, write, kill the leader, keep every acknowledged write.
t0=$(now)
for i in 1 2 3; do start c3 3 "$i"; done
leader=$(rk await-leader 10 $(addrs 1 2 3)) || fail "no leader within 10 s"
[ "$(rk writes 5 1 probe "$WORK/probe.txt" $(addrs 1 2 3))" = 1 ] || fail "first write failed"
echo "3-node cluster serving (leader $leader, a write acknowledged) after $(elapsed "$t0" "$(now)") s"

ACKED="$WORK/acked.txt"
rk writes 30 200 a "$ACKED" $(addrs 1 2 3) >/dev/null || fail "writes before the kill did not all succeed"
others=$(for i in 1 2 3; do [ "$i" = "$leader" ] || echo "$i"; done)
follower=$(echo "$others" | head -1)
[ "$(rk call "$(addr "$follower")" SET x 1 | cut -d' ' -f1-2)" = "-NOTLEADER $leader" ] ||
  fail "a follower did not redirect a write to the leader"

kill -KILL "${PIDS[c3-$leader]}"
set +e; { wait "${PIDS[c3-$leader]}"; } 2>/dev/null; set -e
unset "PIDS[c3-$leader]"
t1=$(now)
new_leader=$(rk await-leader 10 $(addrs $others)) || fail "no new leader within 10 s of killing $leader"
[ "$new_leader" != "$leader" ] || fail "the killed node $leader is still named leader"
echo "new leader $new_leader after $(elapsed "$t1" "$(now)") s"
rk writes 30 200 b "$ACKED" $(addrs $others) >/dev/null || fail "writes after the kill did not all succeed"
rk check 10 "$ACKED" $(addrs $others) || fail "acknowledged writes are missing after the leader was killed"

# --- the killed node restarts from its data directory and catches up.
start c3 3 "$leader"
rk check 15 "$ACKED" "$(addr "$leader")" || fail "the restarted node $leader did not catch up"
grep -q "recovered term=" "$WORK/c3-n$leader.log" || fail "the restarted node did not log what it recovered"
grep -q "restored snapshot at index" "$WORK/c3-n$leader.log" ||
  fail "the restarted node caught up without the snapshot it should have been sent"
for i in 1 2 3; do
  grep -Eq "INFO role=(leader|follower) term=[0-9]+ leader=" "$WORK/c3-n$i.log" ||
    fail "node $i logged no role/term change"
done
echo "3-node scenario passed: $(wc -l <"$ACKED") acknowledged writes survived"

# --- an isolated leader: an undecided write answers -TIMEOUT; on SIGTERM a
# pending write answers -SHUTDOWN and the node exits 0. If the leader steps
# down (CheckQuorum) before the write arrives it answers -NOLEADER, which
# says nothing about the case under test: resume and try again (3 times).
isolated_write() {  # isolated_write MODE: sets LEADER, STOPPED and the reply R
  LEADER=$(rk await-leader 10 $(addrs 1 2 3)) || fail "no leader"
  STOPPED=$(for i in 1 2 3; do [ "$i" = "$LEADER" ] || echo "$i"; done)
  rk writes 5 1 "pre-$1" "$WORK/pre.txt" "$(addr "$LEADER")" >/dev/null || true
  R=$(rk isolated-write "$1" "$(addr "$LEADER")" "${PIDS[c3-$LEADER]}" \
    $(for i in $STOPPED; do echo "${PIDS[c3-$i]}"; done))
}
resume() { local i; for i in $STOPPED; do kill -CONT "${PIDS[c3-$i]}"; done; }
for attempt in 1 2 3; do
  isolated_write timeout
  resume
  [ "${R%% *}" = "-NOLEADER" ] || break
done
[ "$R" = "-TIMEOUT outcome unknown" ] || fail "an isolated leader answered '$R', expected -TIMEOUT outcome unknown"
for attempt in 1 2 3; do
  isolated_write shutdown
  [ "${R%% *}" = "-NOLEADER" ] || break
  resume
done
[ "$R" = "-SHUTDOWN" ] || fail "a pending write answered '$R' on SIGTERM, expected -SHUTDOWN"
stop_all c3 "$LEADER"
resume
stop_all c3 $STOPPED
echo "timeouts and shutdown answered as documented"

# --- 5 nodes: time from launch to serving.
t0=$(now)
for i in 1 2 3 4 5; do start c5 5 "$i"; done
leader=$(rk await-leader 10 $(addrs 1 2 3 4 5)) || fail "5 nodes: no leader within 10 s"
[ "$(rk writes 5 1 probe "$WORK/probe5.txt" $(addrs 1 2 3 4 5))" = 1 ] || fail "5 nodes: first write failed"
echo "5-node cluster serving (leader $leader, a write acknowledged) after $(elapsed "$t0" "$(now)") s"
if [ "${RAFTKV_BENCH:-0}" = 1 ]; then
  for c in 1 8 32; do rk bench 3 "$c" $(addrs 1 2 3 4 5); done
fi
stop_all c5 1 2 3 4 5
echo "PASS"
