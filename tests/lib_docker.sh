# shellcheck shell=bash
# Helpers for runs against Docker containers on a PRIVATE docker engine
# (sourced, not run), shared by tests/e2e_docker.sh and
# scripts/nightly-docker.sh. Needs root, docker.io (dockerd, docker).
#
#   docker_engine_start DIR     starts dockerd with its own socket, exec root
#                               and pid file under /run and its data root in
#                               DIR/engine, --iptables=false --ip-masq=false
#                               --bridge=none (the host's firewall, FORWARD
#                               policy and other tests' bridges are left
#                               alone); exports DOCKER_HOST; sets DOCKERD_PID.
#                               Returns non-zero (with the reason on stderr)
#                               when it does not answer within 30 s or
#                               changes the host's FORWARD policy.
#   docker_nodes_start IMAGE NET SUBNET N
#                               a user network NET on SUBNET and N running
#                               containers faultline-n1..N of IMAGE on it
#                               (--init reaps killed daemons, NET_ADMIN for
#                               iptables). Non-zero when one is not running.
#   docker_nodes_clean LABEL N PROC...
#                               non-zero (naming what, with LABEL) when a
#                               container still has a DROP rule, a faultline
#                               chain or NFQUEUE rule, a live process whose
#                               name (ps comm, 15 chars) is one of PROC, a
#                               /tmp/faultline-* work directory or a
#                               libfaketime file in /dev/shm.
#   docker_engine_stop          removes the containers, networks and images
#                               made through these helpers, stops the engine
#                               by its pid (TERM, then KILL after 10 s),
#                               unmounts what it left under its roots and
#                               removes them. Idempotent; never fails.
# Every docker command goes to $DOCKER_HOST: no other engine is touched.

DOCKERD_PID=""
_docker_nets=()
_docker_images=()
_docker_containers=()
_docker_dir=""
_docker_run=""

docker_engine_start() {
  _docker_dir="$1"
  _docker_run="/run/faultline-docker-$$-$RANDOM"
  mkdir -p "$_docker_dir"
  export DOCKER_HOST="unix://$_docker_run.sock"
  local forward_before
  forward_before=$(iptables -S FORWARD | head -n 1)
  dockerd --host "$DOCKER_HOST" --data-root "$_docker_dir/engine" \
    --exec-root "$_docker_run" --pidfile "$_docker_run.pid" \
    --iptables=false --ip-masq=false --bridge=none \
    >"$_docker_dir/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  local _
  for _ in $(seq 1 300); do
    docker version >/dev/null 2>&1 && break
    if ! kill -0 "$DOCKERD_PID" 2>/dev/null; then
      tail -n 20 "$_docker_dir/dockerd.log" >&2
      echo "dockerd exited" >&2
      return 1
    fi
    sleep 0.1
  done
  if ! docker version >/dev/null 2>&1; then
    echo "dockerd did not answer on $DOCKER_HOST within 30 s" >&2
    return 1
  fi
  if [ "$(iptables -S FORWARD | head -n 1)" != "$forward_before" ]; then
    echo "dockerd changed the host FORWARD policy: $(iptables -S FORWARD | head -n 1)" >&2
    return 1
  fi
}

# docker_image_made TAG: the image is removed by docker_engine_stop.
docker_image_made() {
  _docker_images+=("$1")
}

docker_nodes_start() {
  local image="$1" net="$2" subnet="$3" count="$4" n
  docker network create --subnet "$subnet" "$net" >/dev/null || return 1
  _docker_nets+=("$net")
  for n in $(seq 1 "$count"); do
    _docker_containers+=("faultline-n$n")
    docker run -d --init --name "faultline-n$n" --hostname "n$n" \
      --network "$net" --cap-add NET_ADMIN "$image" >/dev/null || {
      echo "docker run faultline-n$n failed" >&2
      return 1
    }
  done
  for n in $(seq 1 "$count"); do
    if [ "$(docker inspect --format '{{.State.Running}}' "faultline-n$n")" != true ]; then
      echo "faultline-n$n is not running" >&2
      return 1
    fi
  done
}

docker_nodes_clean() {
  local label="$1" count="$2" n drops chains procs
  shift 2
  local names=" $* "
  for n in $(seq 1 "$count"); do
    drops=$(docker exec "faultline-n$n" iptables -S | grep -c DROP || true)
    if [ "$drops" -ne 0 ]; then
      echo "$label: faultline-n$n still has $drops DROP rules" >&2
      return 1
    fi
    chains=$(docker exec "faultline-n$n" iptables -S | grep -c -- '^-N faultline\|NFQUEUE' || true)
    if [ "$chains" -ne 0 ]; then
      echo "$label: faultline-n$n still has $chains faultline chains or NFQUEUE rules" >&2
      return 1
    fi
    procs=$(docker exec "faultline-n$n" ps -eo stat=,comm= |
      awk -v names="$names" '$1 !~ /^Z/ && index(names, " " $2 " ") > 0' | wc -l)
    if [ "$procs" -ne 0 ]; then
      echo "$label: faultline-n$n still runs one of:$names" >&2
      docker exec "faultline-n$n" ps -eo pid=,stat=,comm= >&2 || true
      return 1
    fi
    if docker exec "faultline-n$n" sh -c 'ls -d /tmp/faultline-* 2>/dev/null' >&2; then
      echo "$label: faultline-n$n still has a run's work directory" >&2
      return 1
    fi
    # libfaketime's files of a process it ran in (a SIGKILLed daemon leaves
    # them): the run's teardown removes those of dead pids.
    if docker exec "faultline-n$n" sh -c 'ls /dev/shm | grep faketime' >&2; then
      echo "$label: faultline-n$n still has libfaketime files in /dev/shm" >&2
      return 1
    fi
  done
}

docker_engine_stop() {
  [ -n "$_docker_run" ] || return 0
  if [ -n "$DOCKERD_PID" ]; then
    local c i
    for c in ${_docker_containers[@]+"${_docker_containers[@]}"}; do
      docker rm -f "$c" >/dev/null 2>&1 || true
    done
    for c in ${_docker_nets[@]+"${_docker_nets[@]}"}; do
      docker network rm "$c" >/dev/null 2>&1 || true
    done
    for i in ${_docker_images[@]+"${_docker_images[@]}"}; do
      docker rmi -f "$i" >/dev/null 2>&1 || true
    done
    kill -TERM "$DOCKERD_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$DOCKERD_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$DOCKERD_PID" 2>/dev/null || true
    wait "$DOCKERD_PID" 2>/dev/null || true
  fi
  # Mounts the engine left under its roots (overlay layers, netns files).
  local m
  for m in $(awk -v a="$_docker_dir/engine" -v b="$_docker_run" \
    'index($2, a) == 1 || index($2, b) == 1 {print $2}' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  rm -rf "$_docker_dir/engine" "$_docker_run" "$_docker_run.sock" "$_docker_run.pid"
  DOCKERD_PID=""
  _docker_run=""
  _docker_nets=()
  _docker_images=()
  _docker_containers=()
}
