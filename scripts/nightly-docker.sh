#!/usr/bin/env bash
# The nightly job's Docker rehearsal: for each target (default all four:
# raftkv etcd redis zookeeper), on a PRIVATE docker engine of its own
# (tests/lib_docker.sh: own socket, data root and exec root,
# --iptables=false, no default bridge), it
#   1. builds the target's node image from this machine's files, without a
#      registry (docker/build-images.sh TARGET),
#   2. starts three containers faultline-n1..n3 on a user network
#      ($FAULTLINE_DOCKER_SUBNET, default 10.77.76.0/24),
#   3. runs `faultline run configs/docker/TARGET.yaml --cluster docker`
#      (partitions, pauses and kills, seed $FAULTLINE_DOCKER_SEED, default 7,
#      whose first three steps draw all three kinds), and requires: exit 0
#      and verdict valid, results.json valid against the schema, every kind
#      applied and every start with its stop, iptables and process entries
#      for the containers in the ledger and the ledger closed, and nothing
#      of the run left in the containers (no DROP rule, faultline chain or
#      NFQUEUE rule, no target process, work directory or libfaketime file),
#   4. removes the containers, network, image and engine (by its pid).
# It prints one line per target (result, image build, run and total
# seconds, ok operations, faults) and exits 0 only when every target passed,
# 1 otherwise, 254 when it cannot start (not root, a missing tool or build).
#
#   sudo scripts/nightly-docker.sh [TARGET...]
#
# Environment: FAULTLINE_BIN (default: scripts/build.sh builds
# faultline, raftkv and faultline-netdelay into $FAULTLINE_BUILD_DIR or
# build/, and that faultline is used), FAULTLINE_NIGHTLY_STORE (default
# ./nightly-store; runs go to STORE/docker/), FAULTLINE_DOCKER_TIME_LIMIT
# (seconds per run, default the configs' 60), FAULTLINE_DOCKER_SEED,
# FAULTLINE_DOCKER_SUBNET.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "$(id -u)" -ne 0 ]; then
  echo "nightly-docker: run as root (a docker engine, iptables)" >&2
  exit 254
fi
for tool in dockerd docker python3; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "nightly-docker: '$tool' is missing (scripts/install-deps.sh)" >&2
    exit 254
  fi
done
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(raftkv etcd redis zookeeper)
for t in "${targets[@]}"; do
  if [ ! -f "$root/configs/docker/$t.yaml" ]; then
    echo "nightly-docker: no target '$t' (raftkv, etcd, redis, zookeeper)" >&2
    exit 254
  fi
done
if [ -z "${FAULTLINE_BIN:-}" ]; then
  FAULTLINE_BUILD_TARGETS="faultline raftkv faultline-netdelay" \
    bash "$root/scripts/build.sh" >&2
  FAULTLINE_BIN="${FAULTLINE_BUILD_DIR:-$root/build}/faultline"
fi
bin="$FAULTLINE_BIN"
build="$(dirname "$bin")"
if [ ! -x "$bin" ]; then
  echo "nightly-docker: no faultline at $bin" >&2
  exit 254
fi
store="${FAULTLINE_NIGHTLY_STORE:-$PWD/nightly-store}/docker"
seed="${FAULTLINE_DOCKER_SEED:-7}"
subnet="${FAULTLINE_DOCKER_SUBNET:-10.77.76.0/24}"
limit=()
[ -z "${FAULTLINE_DOCKER_TIME_LIMIT:-}" ] || limit=(--time-limit "$FAULTLINE_DOCKER_TIME_LIMIT")
mkdir -p "$store"
work="$(mktemp -d /tmp/faultline-nightly-docker.XXXXXX)"
index="$work/active"
mkdir -p "$index"

# shellcheck source=../tests/lib_docker.sh
source "$root/tests/lib_docker.sh"

run_pid=""
finish() {
  local rc=$?
  if [ -n "$run_pid" ]; then
    # SIGTERM: the run heals and stops (a background job of a script may
    # have SIGINT ignored).
    kill -TERM "$run_pid" 2>/dev/null || true
    wait "$run_pid" 2>/dev/null || true
  fi
  "$bin" heal --all --index-dir "$index" >/dev/null 2>&1 || true
  docker_engine_stop
  rm -rf "$work"
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The processes each target leaves running in a container while it runs
# (ps comm, at most 15 characters).
procs_of() {
  case "$1" in
    raftkv) echo raftkv faultline-netde ;;
    etcd) echo etcd faultline-netde ;;
    redis) echo redis-server redis-sentinel faultline-netde ;;
    zookeeper) echo java faultline-netde ;;
  esac
}

# check_run TARGET RUN_DIR OUT: the checks of step 3 but the exit code;
# prints the reason and returns 1 on the first that fails.
check_run() {
  local t="$1" run="$2" out="$3" kind starts stops
  [ -f "$run/results.json" ] || { echo "no results.json"; return 1; }
  local verdict
  verdict=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['valid'])" "$run/results.json")
  [ "$verdict" = valid ] || { echo "verdict $verdict"; return 1; }
  python3 - "$root/docs/results.schema.json" "$run/results.json" <<'PY' || { echo "results.json does not match docs/results.schema.json"; return 1; }
import json, sys
try:
    import jsonschema
except ImportError:
    sys.exit(0)  # python3-jsonschema missing: the e2e tests insist on it
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
PY
  for kind in partition pause kill; do
    starts=$(grep -c "\"type\":\"info\",\"f\":\"start-$kind\"" "$run/history.jsonl" || true)
    stops=$(grep -c "\"type\":\"info\",\"f\":\"stop-$kind\"" "$run/history.jsonl" || true)
    [ "$starts" -ge 1 ] || { echo "no $kind fault was applied"; return 1; }
    [ "$starts" = "$stops" ] || { echo "$kind: $starts starts, $stops stops"; return 1; }
  done
  grep -q '"kind":"iptables".*"container":"faultline-n' "$run/ledger.jsonl" ||
    { echo "no iptables entry for a container in the ledger"; return 1; }
  grep -q '"kind":"process".*"container":"faultline-n' "$run/ledger.jsonl" ||
    { echo "no process entry for a container in the ledger"; return 1; }
  grep -q '"kind":"closed"' "$run/ledger.jsonl" ||
    { echo "the run did not close its ledger"; return 1; }
  # shellcheck disable=SC2046
  docker_nodes_clean "after the run" 3 $(procs_of "$t") 2>&1 | tail -n 5
  [ "${PIPESTATUS[0]}" -eq 0 ] || return 1
  return 0
}

status=0
passed=0
for t in "${targets[@]}"; do
  t0=$(date +%s)
  result="FAIL"
  why=""
  ok_ops=0
  faults=0
  t_image=$t0
  t_run=$t0
  if ! docker_engine_start "$work/$t" 2>"$work/$t.err"; then
    why="engine: $(tail -n 1 "$work/$t.err")"
  elif ! "$root/docker/build-images.sh" --build "$build" --prefix "faultline-nightly-$$" "$t" \
      >"$work/$t.image" 2>&1; then
    why="image: $(tail -n 1 "$work/$t.image")"
  else
    docker_image_made "faultline-nightly-$$/$t:host"
    t_image=$(date +%s)
    if ! docker_nodes_start "faultline-nightly-$$/$t:host" "faultline-nightly-$$" \
        "$subnet" 3 2>"$work/$t.err"; then
      why="containers: $(tail -n 1 "$work/$t.err")"
    else
      out="$store/$t-$(date -u +%Y%m%dT%H%M%SZ).txt"
      set +e
      "$bin" run "$root/configs/docker/$t.yaml" --cluster docker --seed "$seed" \
        --store "$store" --index-dir "$index" ${limit[@]+"${limit[@]}"} >"$out" 2>&1 &
      run_pid=$!
      wait "$run_pid"
      rc=$?
      run_pid=""
      set -e
      t_run=$(date +%s)
      run="$(readlink -f "$store/docker-$t/latest" || true)"
      if [ -f "$run/history.jsonl" ]; then
        ok_ops=$(grep -c '"type":"ok"' "$run/history.jsonl" || true)
        faults=$(grep -c '"type":"info","f":"start-' "$run/history.jsonl" || true)
      fi
      if [ "$rc" -ne 0 ]; then
        why="faultline run exited $rc (output: $out)"
      elif ! why=$(check_run "$t" "$run" "$out"); then
        why="$why (run: $run)"
      else
        result="ok"
        why="run: $run"
      fi
    fi
  fi
  docker_engine_stop
  if [ "$result" = ok ]; then passed=$((passed + 1)); else status=1; fi
  line=$(printf '%-9s %-4s image %3d s, run %3d s, total %3d s; %d ok ops, %d faults; %s' \
    "$t" "$result" "$((t_image - t0))" "$((t_run - t_image))" "$(( $(date +%s) - t0 ))" \
    "$ok_ops" "$faults" "$why")
  echo "nightly-docker: $line"
done
echo "nightly-docker: $passed of ${#targets[@]} targets valid and healed; store $store"
exit "$status"
