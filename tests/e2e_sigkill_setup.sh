#!/usr/bin/env bash
# A controller SIGKILLed at any point of setting up a raftkv run (subnet
# 10.77.104.0/24) leaves nothing that `faultline heal --all` cannot remove.
# Each round starts a run and kills it with SIGKILL as soon as its ledger
# shows a given step (the scratch directory, the bridge, the second node's
# veth, the first or last raftkv process, the first operation); the kill
# lands on that step or a few steps later. Then `faultline heal --all` must
# leave no namespace, bridge, veth, scratch directory or raftkv process of
# that run, and the run must no longer be listed as active. Needs root and
# raftkv. About 15 s.
source "$(dirname "$0")/lib.sh"
require_root
require_raftkv
setup_workdir
E2E_SUBNET=10.77.104.0/24
cfg=$(local_copy "$FAULTLINE_SOURCE_DIR/configs/raftkv-quick.yaml" 4)

# await_file PID FILE PATTERN: returns once FILE holds PATTERN (polled every
# 5 ms), 1 if the run PID ended first.
await_file() {
  local pid="$1" file="$2" pattern="$3"
  for _ in $(seq 1 6000); do
    grep -q -- "$pattern" "$file" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.005
  done
  fail "no '$pattern' in $file within 30 s"
}

# One round per kill point: FILE (ledger or history) and what it must show.
points=(
  'ledger "kind":"dir"'
  'ledger "kind":"bridge"'
  'ledger "name":"flv-[0-9a-f]*-2"'
  'ledger "kind":"process"'
  'ledger "kind":"process".*"node":"n3"'
  'history "type":"invoke"'
)
# (Not the teardown: its healed entries and "closed" are written within a
# few ms of each other, so a kill aimed at them mostly lands too late.)
round=0
for point in "${points[@]}"; do
  round=$((round + 1))
  file="${point%% *}" pattern="${point#* }"
  store="$WORK/store-$round"
  "$FAULTLINE_BIN" run "$cfg" --store "$store" --index-dir "$INDEX" --seed "$round" \
    >"$WORK/out.txt" 2>&1 &
  pid=$!
  # The run directory appears first; then its ledger.
  for _ in $(seq 1 3000); do
    run=$(ls -d "$store"/*/2* 2>/dev/null | head -n 1 || true)
    [ -n "$run" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.005
  done
  [ -n "$run" ] || { cat "$WORK/out.txt"; fail "round $round: no run directory"; }
  target="$run/ledger.jsonl"
  [ "$file" = history ] && target="$run/history.jsonl"
  await_file "$pid" "$target" "$pattern" \
    || { cat "$WORK/out.txt"; fail "round $round: the run ended before $file showed $pattern"; }
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  entries=$(grep -c . "$run/ledger.jsonl")
  id=$(ledger_values "$run/ledger.jsonl" dir name | sed -n 1p | sed 's#.*/faultline-##')
  [ -n "$id" ] || fail "round $round: no scratch directory in the ledger"
  # Before the heal the ledger must not be closed (the kill came first).
  grep -q '"kind":"closed"' "$run/ledger.jsonl" && fail "round $round: the run closed its ledger before the kill"
  "$FAULTLINE_BIN" heal --all --index-dir "$INDEX" >"$WORK/heal.txt" 2>&1 \
    || { cat "$WORK/heal.txt" >&2; fail "round $round: faultline heal exited non-zero"; }
  left="$(leftovers_for_run "$id")"
  [ -z "$left" ] || fail "round $round (killed at $pattern): left behind: $left"
  [ ! -e "/dev/shm/faultline-$id" ] || fail "round $round: /dev/shm/faultline-$id left behind"
  # A process of the run is one whose pid and start time the ledger holds.
  while read -r p start; do
    [ -r "/proc/$p/stat" ] || continue
    stat=$(sed -E 's/.*\) //' "/proc/$p/stat")  # fields 3.. of /proc/PID/stat
    # A zombie (Z) is dead; it waits only for init to reap it.
    [ "$(cut -d' ' -f20 <<<"$stat")" != "$start" ] || [ "${stat:0:1}" = Z ] \
      || fail "round $round: raftkv $p of the run is still running (state ${stat:0:1})"
  done < <(grep '"kind":"process"' "$run/ledger.jsonl" \
             | sed -E 's/.*"pid":([0-9]+).*"start_time":([0-9]+).*/\1 \2/')
  [ -z "$(ls -A "$INDEX")" ] || fail "round $round: the run is still listed as active"
  echo "round $round: killed once the $file showed $pattern ($entries ledger entries); healed, nothing left"
done
echo "PASS: SIGKILL at ${#points[@]} points of setup and run; heal left nothing"
