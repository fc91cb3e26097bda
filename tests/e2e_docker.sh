#!/usr/bin/env bash
# The docker transport end to end: a private docker engine (own socket, data
# root and exec root, --iptables=false so the host's FORWARD policy stays as
# it is), a node image built here without any registry
# (docker/build-base-image.sh host, with this build's raftkv), three
# containers faultline-n1..n3 on a user network in 10.77.75.0/24, and a full
# `faultline run --cluster docker` raftkv register test with a partition
# fault that must be valid. Then the DockerRemote checks: a missing container
# is a "docker:" error, not an answer. Everything it made (containers,
# network, image, engine data, the engine itself) is removed on exit.
# Needs: root, docker.io (dockerd, docker), python3, the raftkv binary next to
# faultline. Installs nothing.
source "$(dirname "$0")/lib.sh"
require_root
require_tool dockerd
require_tool docker
require_tool python3
RAFTKV="$(dirname "$FAULTLINE_BIN")/raftkv"
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
target: {name: raftkv, binary: /usr/local/bin/raftkv}
workload: {name: register, keys: 4, concurrency: 6, rate: 100}
nemesis: {faults: [pause, kill], interval: 4, duration: 3}
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
parts=$(grep -c '"f":"start-\(pause\|kill\)"' "$run/history.jsonl" || true)
[ "$parts" -ge 2 ] || fail "only $parts faults were applied"
grep -q '"kind":"closed"' "$run/ledger.jsonl" || fail "the run did not close its ledger"
# Nothing of the run is left in the containers: no raftkv, no work directory.
for n in 1 2 3; do
  procs=$(docker exec "faultline-n$n" ps -eo comm= | grep -c raftkv || true)
  [ "$procs" -eq 0 ] || fail "faultline-n$n still runs raftkv"
  docker exec "faultline-n$n" sh -c 'ls -d /tmp/faultline-* 2>/dev/null' \
    && fail "faultline-n$n still has the run's work directory"
done
[ -s "$run/nodes/n1/raftkv.log" ] || fail "n1's raftkv log was not collected"
t_run=$(date +%s)

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
  "run $((t_run - t_image)) s, $ok_ops ok ops, $parts faults, total $(( $(date +%s) - t0 )) s)"
