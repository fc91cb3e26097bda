#!/usr/bin/env bash
# The docker transport end to end: a private docker engine (own socket, data
# root and exec root, --iptables=false so the host's FORWARD policy stays as
# it is), a node image built here without any registry
# (docker/build-base-image.sh host), three containers faultline-n1..n3 on a
# user network in 10.77.75.0/24, and a full `faultline run --cluster docker`
# raftkv register test with partitions (iptables in the containers), pauses,
# kills, delays (faultline-netdelay copied into the containers; its log
# counts the packets it held) and clock faults (while one is active, `date`
# run in the container with raftkv's own libfaketime environment reads the
# +1 h clock) that must be valid. Then a run whose controller is SIGKILLed
# during a partition and a delay is healed by `faultline heal` from its
# ledger alone (rules, raftkv and netdelay processes and work directories in
# the containers), and a stopped container is refused before anything
# starts. Everything it made
# (containers, network, image, engine data, the engine itself) is removed on
# exit.
# Needs: root, docker.io (dockerd, docker), python3, libfaketime, the raftkv
# and faultline-netdelay binaries next to faultline. Installs nothing.
source "$(dirname "$0")/lib.sh"
require_root
require_tool dockerd
require_tool docker
require_tool python3
RAFTKV="$(dirname "$FAULTLINE_BIN")/raftkv"  # copied into the nodes by the run
[ -x "$RAFTKV" ] || fail "no raftkv binary at $RAFTKV (build the 'raftkv' target)"
NETDELAY="$(dirname "$FAULTLINE_BIN")/faultline-netdelay"
[ -x "$NETDELAY" ] || fail "no faultline-netdelay at $NETDELAY (needs libnetfilter-queue-dev)"
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[ -r "$FAKETIME_LIB" ] || fail "this test needs libfaketime ($FAKETIME_LIB; apt-get install libfaketime)"

t0=$(date +%s)
WORK="$(mktemp -d /tmp/faultline-e2e-docker.XXXXXX)"
STORE="$WORK/store"
INDEX="$WORK/active"
mkdir -p "$STORE" "$INDEX"
SOCK="/run/faultline-e2e-docker-$$.sock"
EXEC_ROOT="/run/faultline-e2e-docker-$$"
PIDFILE="/run/faultline-e2e-docker-$$.pid"
DATA_ROOT="$WORK/engine"
export DOCKER_HOST="unix://$SOCK"
NET="faultline-e2e-$$"
IMAGE="faultline-e2e/node:$$"
SUBNET="10.77.75.0/24"
DOCKERD_PID=""
pid=""

cleanup() {
  local rc=$?
  if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  "$FAULTLINE_BIN" heal --all --index-dir "$INDEX" >/dev/null 2>&1 || true
  if [ -n "$DOCKERD_PID" ]; then
    if [ "$rc" -ne 0 ]; then
      for n in 1 2 3; do
        echo "== faultline-n$n: raftkv log" >&2
        docker exec "faultline-n$n" sh -c 'tail -n 20 /tmp/faultline-*/n*/raftkv.log' >&2 2>/dev/null || true
      done
      tail -n 20 "$WORK/dockerd.log" >&2 || true
    fi
    docker rm -f faultline-n1 faultline-n2 faultline-n3 >/dev/null 2>&1 || true
    docker network rm "$NET" >/dev/null 2>&1 || true
    docker rmi -f "$IMAGE" >/dev/null 2>&1 || true
    kill -TERM "$DOCKERD_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$DOCKERD_PID" 2>/dev/null || true
    wait "$DOCKERD_PID" 2>/dev/null || true
  fi
  # Mounts the engine left under its roots (overlay layers, netns files).
  for m in $(awk -v a="$DATA_ROOT" -v b="$EXEC_ROOT" \
               'index($2, a) == 1 || index($2, b) == 1 {print $2}' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  rm -rf "$WORK" "$EXEC_ROOT" "$SOCK" "$PIDFILE"
  exit "$rc"
}
trap cleanup EXIT

# --- a private engine ------------------------------------------------------
forward_before=$(iptables -S FORWARD | head -n 1)
dockerd --host "$DOCKER_HOST" --data-root "$DATA_ROOT" --exec-root "$EXEC_ROOT" \
  --pidfile "$PIDFILE" --iptables=false --ip-masq=false --bridge=none \
  >"$WORK/dockerd.log" 2>&1 &
DOCKERD_PID=$!
for _ in $(seq 1 300); do
  docker version >/dev/null 2>&1 && break
  kill -0 "$DOCKERD_PID" 2>/dev/null || { cat "$WORK/dockerd.log" >&2; fail "dockerd exited"; }
  sleep 0.1
done
docker version >/dev/null 2>&1 || fail "dockerd did not answer on $SOCK within 30 s"
[ "$(iptables -S FORWARD | head -n 1)" = "$forward_before" ] \
  || fail "dockerd changed the host FORWARD policy: $(iptables -S FORWARD | head -n 1)"
t_engine=$(date +%s)

# --- image, network, containers -------------------------------------------
# faultline copies the controller's raftkv and faultline-netdelay into the
# containers at setup; the image gets the libraries they load (libstdc++,
# libnetfilter_queue, ...) by carrying this build's copies too, and
# libfaketime at the path the clock fault preloads.
"$FAULTLINE_SOURCE_DIR/docker/build-base-image.sh" --tag "$IMAGE" host \
  "$RAFTKV=/usr/local/bin/raftkv" "$NETDELAY=/usr/local/bin/faultline-netdelay" \
  "$FAKETIME_LIB=$FAKETIME_LIB" >/dev/null || fail "building the node image failed"
t_image=$(date +%s)
docker network create --subnet "$SUBNET" "$NET" >/dev/null
for n in 1 2 3; do
  docker run -d --init --name "faultline-n$n" --hostname "n$n" --network "$NET" \
    --cap-add NET_ADMIN "$IMAGE" >/dev/null || fail "docker run faultline-n$n failed"
done
for n in 1 2 3; do
  [ "$(docker inspect --format '{{.State.Running}}' "faultline-n$n")" = true ] \
    || fail "faultline-n$n is not running"
done

# --- a full test over docker, with every fault kind ------------------------
# Seed 54 draws all five kinds in the first five steps
# (nemesis/schedule/schedule.h is deterministic per seed).
cat >"$WORK/docker.yaml" <<YAML
name: docker-register
time_limit: 25
recovery: 5
cluster: {nodes: 3, network: $NET}
target: {name: raftkv}
workload: {name: register, keys: 4, concurrency: 6, rate: 100}
nemesis: {faults: [partition, pause, kill, delay, clock], interval: 0.5, duration: 2.5, partitions: [one, leader, halves], delay_ms: 200, clock_offset_ms: 3600000}
YAML
"$FAULTLINE_BIN" run "$WORK/docker.yaml" --cluster docker --seed 54 \
  --store "$STORE" --index-dir "$INDEX" >"$WORK/run.txt" 2>&1 &
pid=$!
run="$STORE/docker-register/latest"
# While the clock fault is active: raftkv in the skewed container runs with
# libfaketime mapped, and `date` under its environment reads +1 h.
await_history "$pid" "$run" '"type":"info","f":"start-clock"' "the clock fault"
cnode=$(python3 -c "import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get('f')=='start-clock' and e.get('type')=='info': print(e['value']['nodes'][0]); break" "$run/history.jsonl")
c="faultline-$cnode"
rpid=$(docker exec "$c" ps -eo pid=,comm= | awk '$2 == "raftkv" {print $1; exit}')
[ -n "$rpid" ] || fail "no raftkv in $c during the clock fault"
docker exec "$c" grep -q libfaketime "/proc/$rpid/maps" || fail "libfaketime is not mapped into raftkv in $c"
envs=()
while IFS= read -r kv; do envs+=(-e "$kv"); done < <(docker exec "$c" cat "/proc/$rpid/environ" |
  tr '\0' '\n' | grep -E '^(LD_PRELOAD|FAKETIME[A-Z_]*)=')
[ "${#envs[@]}" -ge 4 ] || fail "raftkv in $c has no libfaketime environment"
off=$(( $(docker exec "${envs[@]}" "$c" date +%s) - $(date +%s) ))
[ "$off" -ge 3590 ] && [ "$off" -le 3610 ] || fail "date in $c under raftkv's environment is $off s off, expected +3600"
echo "clock +1 h on $cnode: date in the container reads ${off} s ahead"
set +e
wait "$pid"
rc=$?
set -e
pid=""
[ "$rc" -eq 0 ] || { tail -n 40 "$WORK/run.txt" >&2; fail "faultline run over docker exited $rc, expected 0 (valid)"; }
verdict=$(json_get "$run/results.json" "j['valid']")
[ "$verdict" = valid ] || fail "verdict is $verdict, expected valid"
validate_results "$run/results.json"
ok_ops=$(grep -c '"type":"ok"' "$run/history.jsonl" || true)
[ "$ok_ops" -ge 100 ] || fail "only $ok_ops ok operations"
parts=$(grep -c '"type":"info","f":"start-partition"' "$run/history.jsonl" || true)
[ "$parts" -ge 1 ] || fail "no partition was applied"
faults=$(grep -c '"type":"info","f":"start-' "$run/history.jsonl" || true)
for kind in partition pause kill delay clock; do
  [ "$(grep -c "\"type\":\"info\",\"f\":\"start-$kind\"" "$run/history.jsonl")" = \
    "$(grep -c "\"type\":\"info\",\"f\":\"stop-$kind\"" "$run/history.jsonl")" ] ||
    fail "$kind: not every start has its stop"
  grep -q "\"type\":\"info\",\"f\":\"start-$kind\"" "$run/history.jsonl" || fail "no $kind fault was applied"
done
# The delay ran in the containers: each delayed node's daemon held packets
# (its log, fetched from the container when it stopped).
for node in $(python3 -c "import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get('f')=='start-delay' and e.get('type')=='info': print(' '.join(e['value']['nodes']))" "$run/history.jsonl" | tr ' ' '\n' | sort -u); do
  held=$(sed -n 's/.*exiting; \([0-9]*\) packets delayed.*/\1/p' "$run/netdelay-$node.log" 2>/dev/null | tail -n 1)
  [ "${held:-0}" -gt 0 ] || fail "faultline-netdelay in faultline-$node delayed no packet"
  echo "delay on $node: $held packets held"
done
grep -q '"kind":"process".*"container":"faultline-n' "$run/ledger.jsonl" \
  || fail "no process entry for a container in the ledger"
# The partitions were real: the ledger holds iptables entries that name a
# container (kind docker), and the run healed and closed them.
grep -q '"kind":"iptables".*"container":"faultline-n' "$run/ledger.jsonl" \
  || fail "no iptables entry for a container in the ledger"
grep -q '"kind":"closed"' "$run/ledger.jsonl" \
  || { grep -i -A5 -E 'problem|warn|error' "$WORK/run.txt" >&2; fail "the run did not close its ledger"; }
# Nothing of the run is left in the containers.
check_clean() {
  local n procs drops chains
  for n in 1 2 3; do
    drops=$(docker exec "faultline-n$n" iptables -S | grep -c DROP || true)
    [ "$drops" -eq 0 ] || fail "$1: faultline-n$n still has $drops DROP rules"
    chains=$(docker exec "faultline-n$n" iptables -S | grep -c -- '^-N faultline\|NFQUEUE' || true)
    [ "$chains" -eq 0 ] || fail "$1: faultline-n$n still has $chains faultline chains or NFQUEUE rules"
    procs=$(docker exec "faultline-n$n" ps -eo stat=,comm= | awk '($2 == "raftkv" || $2 == "faultline-netde") && $1 !~ /^Z/' | wc -l)
    [ "$procs" -eq 0 ] || fail "$1: faultline-n$n still runs raftkv or faultline-netdelay"
    if docker exec "faultline-n$n" sh -c 'ls -d /tmp/faultline-* 2>/dev/null'; then
      fail "$1: faultline-n$n still has a run's work directory"
    fi
    # libfaketime's files of a process it ran in (a raftkv the kill fault
    # SIGKILLed leaves them): the run's teardown removes those of dead pids
    # in each container's own /dev/shm.
    if docker exec "faultline-n$n" sh -c 'ls /dev/shm | grep faketime'; then
      fail "$1: faultline-n$n still has libfaketime files in /dev/shm"
    fi
  done
}
check_clean "after the run"
[ -s "$run/nodes/n1/raftkv.log" ] || fail "n1's raftkv log was not collected"
t_run=$(date +%s)

# --- SIGKILLed controller, then `faultline heal` ----------------------------
sed -e 's/^name: .*/name: docker-sigkill/' -e 's/^time_limit: .*/time_limit: 600/' \
  -e 's/^nemesis: .*/nemesis: {faults: [{together: [partition, delay]}], interval: 1, duration: 600, partitions: [halves], targets: [one]}/' \
  "$WORK/docker.yaml" >"$WORK/long.yaml"
"$FAULTLINE_BIN" run "$WORK/long.yaml" --cluster docker --store "$STORE" \
  --index-dir "$INDEX" >"$WORK/out.txt" 2>&1 &
pid=$!
krun="$STORE/docker-sigkill/latest"
await_history "$pid" "$krun" '"type":"info","f":"start-delay"' "the partition and delay"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=""
# Before healing, the leftovers are real (so the checks below can fail).
drops=0
queued=0
daemons=0
for n in 1 2 3; do
  d=$(docker exec "faultline-n$n" iptables -S | grep -c DROP || true)
  drops=$((drops + d))
  d=$(docker exec "faultline-n$n" iptables -S | grep -c NFQUEUE || true)
  queued=$((queued + d))
  d=$(docker exec "faultline-n$n" ps -eo comm= | grep -c faultline-netde || true)
  daemons=$((daemons + d))
done
[ "$drops" -ge 1 ] || fail "no DROP rule in the containers before heal"
[ "$queued" -ge 1 ] && [ "$daemons" -ge 1 ] ||
  fail "no delay in the containers before heal ($queued NFQUEUE rules, $daemons daemons)"
procs=$(docker exec faultline-n1 ps -eo comm= | grep -c raftkv || true)
[ "$procs" -ge 1 ] || fail "no raftkv running in faultline-n1 before heal"
"$FAULTLINE_BIN" heal "$krun" >"$WORK/heal.txt" 2>&1 \
  || { cat "$WORK/heal.txt" >&2; fail "faultline heal exited non-zero"; }
check_clean "after heal"
t_heal=$(date +%s)

# --- docker failures are errors, not answers -------------------------------
docker stop -t 1 faultline-n3 >/dev/null
set +e
"$FAULTLINE_BIN" run "$WORK/docker.yaml" --cluster docker --time-limit 5 \
  --store "$STORE" --index-dir "$INDEX" >"$WORK/stopped.txt" 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "a run with a stopped container exited 0"
grep -q "faultline-n3 is not running" "$WORK/stopped.txt" \
  || { cat "$WORK/stopped.txt" >&2; fail "the stopped container was not named"; }

echo "e2e_docker: ok (engine $((t_engine - t0)) s, image $((t_image - t_engine)) s," \
  "run $((t_run - t_image)) s: $ok_ops ok ops, $faults faults ($parts partitions);" \
  "sigkill+heal $((t_heal - t_run)) s; total $(( $(date +%s) - t0 )) s)"
