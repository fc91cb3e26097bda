#!/usr/bin/env bash
# The docker transport end to end: a private docker engine (own socket, data
# root and exec root, --iptables=false so the host's FORWARD policy stays as
# it is), a node image built here without any registry
# (docker/build-base-image.sh host), three containers faultline-n1..n3 on a
# user network in 10.77.75.0/24, and a full `faultline run --cluster docker`
# raftkv register test with partitions (iptables in the containers), pauses
# and kills that must be valid. Then a run whose controller is SIGKILLed
# mid-partition is healed by `faultline heal` from its ledger alone (rules,
# raftkv processes and work directories in the containers), and a stopped
# container is refused before anything starts. Everything it made
# (containers, network, image, engine data, the engine itself) is removed on
# exit.
# Needs: root, docker.io (dockerd, docker), python3, the raftkv binary next to
# faultline. Installs nothing.
source "$(dirname "$0")/lib.sh"
require_root
require_tool dockerd
require_tool docker
require_tool python3
RAFTKV="$(dirname "$FAULTLINE_BIN")/raftkv"  # copied into the nodes by the run
[ -x "$RAFTKV" ] || fail "no raftkv binary at $RAFTKV (build the 'raftkv' target)"

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

cleanup() {
  local rc=$?
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
# faultline copies the controller's raftkv into the containers at setup; the
# image gets this build's raftkv too, which brings the shared libraries it
# loads (libstdc++) into the image.
"$FAULTLINE_SOURCE_DIR/docker/build-base-image.sh" --tag "$IMAGE" host \
  "$RAFTKV=/usr/local/bin/raftkv" >/dev/null || fail "building the node image failed"
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

# --- a full test over docker, with a partition ----------------------------
cat >"$WORK/docker.yaml" <<YAML
name: docker-register
time_limit: 25
recovery: 5
cluster: {nodes: 3, network: $NET}
target: {name: raftkv}
workload: {name: register, keys: 4, concurrency: 6, rate: 100}
nemesis: {faults: [partition, pause, kill], interval: 3, duration: 3, partitions: [one, leader, halves]}
YAML
set +e
"$FAULTLINE_BIN" run "$WORK/docker.yaml" --cluster docker --seed 7 \
  --store "$STORE" --index-dir "$INDEX" >"$WORK/run.txt" 2>&1
rc=$?
set -e
run="$STORE/docker-register/latest"
[ "$rc" -eq 0 ] || { tail -n 40 "$WORK/run.txt" >&2; fail "faultline run over docker exited $rc, expected 0 (valid)"; }
verdict=$(json_get "$run/results.json" "j['valid']")
[ "$verdict" = valid ] || fail "verdict is $verdict, expected valid"
validate_results "$run/results.json"
ok_ops=$(grep -c '"type":"ok"' "$run/history.jsonl" || true)
[ "$ok_ops" -ge 100 ] || fail "only $ok_ops ok operations"
parts=$(grep -c '"type":"info","f":"start-partition"' "$run/history.jsonl" || true)
[ "$parts" -ge 1 ] || fail "no partition was applied"
faults=$(grep -c '"type":"info","f":"start-' "$run/history.jsonl" || true)
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
    chains=$(docker exec "faultline-n$n" iptables -S | grep -c -- '^-N faultline' || true)
    [ "$chains" -eq 0 ] || fail "$1: faultline-n$n still has $chains faultline chains"
    procs=$(docker exec "faultline-n$n" ps -eo stat=,comm= | awk '$2 == "raftkv" && $1 !~ /^Z/' | wc -l)
    [ "$procs" -eq 0 ] || fail "$1: faultline-n$n still runs raftkv"
    if docker exec "faultline-n$n" sh -c 'ls -d /tmp/faultline-* 2>/dev/null'; then
      fail "$1: faultline-n$n still has a run's work directory"
    fi
  done
}
check_clean "after the run"
[ -s "$run/nodes/n1/raftkv.log" ] || fail "n1's raftkv log was not collected"
t_run=$(date +%s)

# --- SIGKILLed controller, then `faultline heal` ----------------------------
sed -e 's/^name: .*/name: docker-sigkill/' -e 's/^time_limit: .*/time_limit: 600/' \
  -e 's/^nemesis: .*/nemesis: {faults: [partition], interval: 1, duration: 600, partitions: [halves]}/' \
  "$WORK/docker.yaml" >"$WORK/long.yaml"
"$FAULTLINE_BIN" run "$WORK/long.yaml" --cluster docker --store "$STORE" \
  --index-dir "$INDEX" >"$WORK/out.txt" 2>&1 &
pid=$!
krun="$STORE/docker-sigkill/latest"
await_history "$pid" "$krun" '"type":"info","f":"start-partition"' "the partition"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
# Before healing, the leftovers are real (so the checks below can fail).
drops=0
for n in 1 2 3; do
  d=$(docker exec "faultline-n$n" iptables -S | grep -c DROP || true)
  drops=$((drops + d))
done
[ "$drops" -ge 1 ] || fail "no DROP rule in the containers before heal"
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
