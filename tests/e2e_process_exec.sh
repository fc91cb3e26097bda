#!/usr/bin/env bash
# target: process with exec clients, end to end (docs/targets/process.md):
#  a. raftkv described in YAML, driven by the Python reference client, under
#     pauses and kills of the leader, which the client itself names
#     (status: {client: true}): valid, every fault healed and aimed at a
#     known leader, node, client and status client logs collected;
#  b. a client that crashes on every operation, and one that answers with
#     garbage: the run stops early naming the command, is unknown (exit 2),
#     and quotes what the client did;
#  c. bad input: an unknown placeholder and an undeclared ready port are
#     config errors at file:line:column (exit 254, nothing started); a server
#     that exits at once fails the setup naming the node and quoting its log;
#  d. a controller SIGKILLed while a process is paused: `faultline heal`
#     resumes and stops it from the ledger; nothing of the run is left;
#  e. `faultline client-test` passes an honest client (status included)
#     and fails a crashing one.
# Needs root, python3 and raftkv next to faultline. Subnets 10.77.130-133.
source "$(dirname "$0")/lib.sh"
require_root
require_tool python3
require_raftkv
setup_workdir
SRC="$FAULTLINE_SOURCE_DIR"
FAKE="$SRC/targets/process/testdata/fake_client.py"
# local_copy, with Debian's python3 ($PY, tests/lib.sh) for every command.
pcopy() {
  local out
  out=$(local_copy "$@")
  sed -i "s#\[python3, #[$PY, #g" "$out"
  echo "$out"
}

# --- a: raftkv through process + exec ----------------------------------------
E2E_SUBNET=10.77.130.0/24
# The copy lives in $WORK: the clients run from the config's directory, and
# {config_dir} points at the repository's configs through target.config_dir.
# Who leads comes from the exec client itself (status: {client: true}, an
# operation f: status), and every fault is aimed at the leader.
cfg=$(pcopy "$SRC/configs/process/raftkv-register.yaml" 20 \
  "s#^  faults: .*#  faults: [kill, pause]#" \
  "s#^  targets: .*#  targets: [leader]#" \
  "s#^  status:\$#  status: {client: true}#" \
  "/^    command: \[python3, \"{config_dir}.*status.py/d" "/^    timeout: 3s/d" \
  "s#^  system: raftkv#  system: raftkv\n  config_dir: $SRC/configs/process#" \
  "s#command: \[python3, ../../examples#command: [python3, $SRC/examples#")
grep -q "status: {client: true}" "$cfg" || fail "(a) could not set status.client"
! grep -q "status.py" "$cfg" || fail "(a) the status command is still there"
run_config "$cfg" 1
[ "$RC" -eq 0 ] || { cat "$WORK/out.txt"; fail "(a) raftkv through process exited $RC"; }
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "(a) not valid"; }
[ "$(checker_verdict linearizable)" = valid ] || fail "(a) linearizable not valid"
grep -q '"f":"start-kill"' "$RUN/history.jsonl" || { grep '"f":"st' "$RUN/history.jsonl"; fail "(a) no kill fault ran"; }
grep -q '"f":"start-pause"' "$RUN/history.jsonl" || fail "(a) no pause fault ran"
all_healed "$RUN" stop || fail "(a) a pause was not healed"
[ -s "$RUN/nodes/n1/server.log" ] || fail "(a) node log server.log not collected"
ls "$RUN/clients/"*.log >/dev/null 2>&1 || fail "(a) client logs not collected"
# Every fault found the leader through f: status.
grep -q '"selector":"leader","nodes":\["n[123]"\],"leader_known":true' "$RUN/faultline.log" ||
  { grep 'fault: start' "$RUN/faultline.log"; fail "(a) no fault found the leader through the status client"; }
! grep -q '"leader_known":false' "$RUN/faultline.log" || fail "(a) a fault did not know the leader"
ls "$RUN/clients/"n*-status.log >/dev/null 2>&1 || fail "(a) status client logs not collected"

# --- b: misbehaving clients stop the run -------------------------------------
E2E_SUBNET=10.77.131.0/24
for mode in crash garbage; do
  cfg=$(pcopy "$SRC/configs/process/raftkv-register.yaml" 30 \
    "s#^name: .*#name: bad-client-$mode#" \
    "s#^    command: \[python3, ../../examples/clients/python/raftkv_client.py\]#    command: [$PY, $FAKE, $mode]#" \
    "s#{config_dir}/../../examples#$SRC/examples#" \
    "s#^  faults: .*#  faults: []#")
  grep -q "fake_client.py, $mode" "$cfg" || fail "(b) could not set the client"
  start=$(date +%s)
  run_config "$cfg" 1
  took=$(( $(date +%s) - start ))
  [ "$RC" -eq 2 ] || { cat "$WORK/out.txt"; fail "(b) $mode: exit $RC, expected 2 (unknown)"; }
  [ "$took" -lt 25 ] || fail "(b) $mode: the run did not stop early ($took s)"
  grep -q "misbehaved [0-9]* times in a row" "$WORK/out.txt" || { cat "$WORK/out.txt"; fail "(b) $mode: no message"; }
  grep -q "fake_client.py $mode" "$WORK/out.txt" || fail "(b) $mode: the message does not name the command"
  summary=$(checker_summary run)
  grep -q "stopped early" <<<"$summary" || fail "(b) $mode: no run verdict saying it stopped"
done
grep -q "boom\|exited" "$STORE/bad-client-crash/latest/results.json" "$STORE/bad-client-crash/latest/faultline.log" \
  || fail "(b) the crash is not quoted"
grep -q "invalid answer" "$STORE/bad-client-garbage/latest/faultline.log" \
  || fail "(b) the garbage answer is not quoted"

# --- c: bad input ----------------------------------------------------------------
E2E_SUBNET=10.77.132.0/24
bad=$(pcopy "$SRC/configs/process/raftkv-register.yaml" 10 "s#^name: .*#name: bad-placeholder#" \
  's#--data-dir, "{data}"\]#--data-dir, "{datadir}"]#')
set +e; "$FAULTLINE_BIN" run "$bad" --store "$STORE" --index-dir "$INDEX" >"$WORK/bad.txt" 2>&1; rc=$?; set -e
[ "$rc" -eq 254 ] || { cat "$WORK/bad.txt"; fail "(c) unknown placeholder: exit $rc, expected 254"; }
line=$(grep -n '{datadir}' "$bad" | cut -d: -f1)
grep -q "$(basename "$bad"):$line:[0-9]*: .*placeholder {datadir} is unknown" "$WORK/bad.txt" \
  || { cat "$WORK/bad.txt"; fail "(c) the error does not name file:line:column and the placeholder"; }
[ ! -e "$STORE/bad-placeholder" ] || fail "(c) a bad config started a run"
bad=$(pcopy "$SRC/configs/process/raftkv-register.yaml" 10 's#ready: {tcp: client}#ready: {tcp: 7777}#')
set +e; "$FAULTLINE_BIN" validate "$bad" >"$WORK/bad.txt" 2>&1; rc=$?; set -e
[ "$rc" -eq 254 ] || fail "(c) undeclared port: exit $rc"
grep -q "port \`7777\` is not one of target.ports" "$WORK/bad.txt" || { cat "$WORK/bad.txt"; fail "(c) undeclared port message"; }
# A server that exits at once: setup fails naming the node and its log.
cat >"$WORK/exits.yaml" <<YAML
name: process-exits
time_limit: 10
cluster: {nodes: 3, subnet: 10.77.132.0/24}
target:
  name: process
  ports: {client: 6379}
  processes:
    - name: server
      argv: [sh, -c, "echo cannot bind {ip}:{port:client} >&2; exit 3"]
      ready: {tcp: client}
  client: {protocol: exec, command: [$PY, $FAKE, good]}
workload: {name: register, keys: 2, concurrency: 2}
nemesis: {faults: []}
YAML
set +e; "$FAULTLINE_BIN" run "$WORK/exits.yaml" --store "$STORE" --index-dir "$INDEX" >"$WORK/exits.txt" 2>&1; rc=$?; set -e
[ "$rc" -eq 255 ] || { cat "$WORK/exits.txt"; fail "(c) exiting server: exit $rc, expected 255 (setup failed)"; }
grep -q "n[123]: server is not running\|n[123]: server exited" "$WORK/exits.txt" || { cat "$WORK/exits.txt"; fail "(c) the node is not named"; }
grep -q "cannot bind 10.77.132.[0-9]*:6379" "$WORK/exits.txt" || fail "(c) the log tail is not quoted"
grep -q '"kind":"netns"' "$STORE/process-exits/latest/ledger.jsonl" || fail "(c) no ledger"
all_healed "$STORE/process-exits/latest" netns || fail "(c) namespaces left after the failed setup"

# --- d: SIGKILL while paused, then heal -----------------------------------------
E2E_SUBNET=10.77.133.0/24
cfg=$(pcopy "$SRC/configs/process/raftkv-register.yaml" 600 \
  "s#^name: .*#name: process-sigkill#" \
  "s#{config_dir}/../../examples#$SRC/examples#" \
  "s#command: \[python3, ../../examples#command: [python3, $SRC/examples#" \
  "s#^  faults: .*#  faults: [pause]#" "s#^  duration: .*#  duration: 600#" \
  "s#^  interval: .*#  interval: 1#" "s#^  targets: .*#  targets: [one]#")
"$FAULTLINE_BIN" run "$cfg" --store "$STORE" --index-dir "$INDEX" --seed 1 >"$WORK/out.txt" 2>&1 &
pid=$!
run="$STORE/process-sigkill/latest"
await_history "$pid" "$run" '"type":"info","f":"start-pause"' "the pause"
mapfile -t pids < <(ledger_values "$run/ledger.jsonl" process pid)
mapfile -t stopped < <(ledger_values "$run/ledger.jsonl" stop pid)
[ "${#stopped[@]}" -ge 1 ] || fail "(d) no stop entry in the ledger"
state=$(sed -E 's/.*\) (.).*/\1/' "/proc/${stopped[0]}/stat")
[ "$state" = T ] || fail "(d) the paused server is not stopped (state $state)"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
"$FAULTLINE_BIN" heal "$run" >"$WORK/heal.txt" 2>&1 || { cat "$WORK/heal.txt"; fail "(d) heal exited $?"; }
for p in "${pids[@]}"; do
  st=$(sed -E 's/.*\) (.).*/\1/' "/proc/$p/stat" 2>/dev/null || echo gone)
  [ "$st" = gone ] || [ "$st" = Z ] || fail "(d) process $p survived heal (state $st)"
done
all_healed "$run" netns || fail "(d) namespaces left"
# --- e: faultline client-test -------------------------------------------------
# The fake client keeps an honest register in memory (no server needed); the
# crashing one fails the check, naming what it did.
# With status: {client: true} it also asks f: status.
for mode in good crash; do
  sed -e "s#^    command: \[python3, ../../examples/clients/python/raftkv_client.py\]#    command: [$PY, $FAKE, $mode]#" \
    -e "s#^  status:\$#  status: {client: true}#" -e "/status.py/d" -e "/^    timeout: 3s/d" \
    "$SRC/configs/process/raftkv-register.yaml" >"$WORK/ct-$mode.yaml"
  set +e; "$FAULTLINE_BIN" client-test "$WORK/ct-$mode.yaml" --address 127.0.0.1 >"$WORK/ct.txt" 2>&1; rc=$?; set -e
  if [ "$mode" = good ]; then
    [ "$rc" -eq 0 ] || { cat "$WORK/ct.txt"; fail "(e) client-test of an honest client exited $rc"; }
    grep -q "10 of 10 checks passed" "$WORK/ct.txt" || { cat "$WORK/ct.txt"; fail "(e) not every check ran"; }
    grep -q 'PASS    status answers ok' "$WORK/ct.txt" || fail "(e) the status check did not run"
  else
    [ "$rc" -eq 1 ] || { cat "$WORK/ct.txt"; fail "(e) client-test of a crashing client exited $rc, expected 1"; }
    grep -q "FAIL" "$WORK/ct.txt" || fail "(e) no FAIL line"
  fi
done
echo "PASS"
