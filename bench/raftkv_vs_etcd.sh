#!/usr/bin/env bash
# raftkv versus etcd, measured on this machine. Needs root, iproute2, etcd
# (Debian etcd-server; etcdctl from etcd-client), redis-benchmark (Debian
# redis-tools; optional), and a build with benchmarks (build/raftkv,
# build/bench/kv_load).
#
#   bench/raftkv_vs_etcd.sh [SECONDS_PER_POINT]      (default 5)
#
# 1. Writes: a 3-node raftkv cluster (10.79.0.0/24) and a 3-node etcd
#    cluster (10.79.1.0/24), each node in its own network namespace on a
#    private bridge, data on disk (/var/tmp) with fsync on (both defaults).
#    The same closed-loop load at concurrency 1, 8, 32, 64: faultline's own
#    clients (kv_load: RESP for raftkv, the v3 JSON gateway for etcd) sending
#    SET/put to the leader, and redis-benchmark (SET) against raftkv's leader.
# 2. follower-lease reads: GETs spread over the followers of a 3-node and a
#    5-node raftkv cluster in read_mode follower-lease, concurrency 32.
# 3. Startup: seconds from launching 5 raftkv nodes to the first
#    acknowledged SET.
# Everything it creates (namespaces, veths, bridges, an iptables rule if the
# host's FORWARD policy needs one, processes, data) is removed on exit.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FAULTLINE_BUILD_DIR:-$root/build}"
secs="${1:-5}"
RAFTKV="$build/raftkv"
KVLOAD="$build/bench/kv_load"

die() { echo "raftkv_vs_etcd: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (network namespaces)"
[ -x "$RAFTKV" ] || die "$RAFTKV missing; build with scripts/build.sh"
[ -x "$KVLOAD" ] || die "$KVLOAD missing; configure with -DFAULTLINE_BENCH=ON and build kv_load"
command -v ip >/dev/null || die "needs ip (iproute2)"
command -v etcd >/dev/null || die "needs etcd (Debian package etcd-server)"
command -v etcdctl >/dev/null || die "needs etcdctl (Debian package etcd-client)"
have_rb=1
command -v redis-benchmark >/dev/null || have_rb=0
command -v redis-cli >/dev/null || die "needs redis-cli (Debian package redis-tools)"

DATA="$(mktemp -d /var/tmp/faultline-bench.XXXXXX)"  # on disk: fsync is real
PIDS=()
NETNS=()
BRIDGES=()
FWD_RULES=()

cleanup() {
  set +e
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  sleep 0.5
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  for n in "${NETNS[@]}"; do ip netns del "$n" 2>/dev/null; done
  for b in "${BRIDGES[@]}"; do ip link del "$b" 2>/dev/null; done
  for b in "${FWD_RULES[@]}"; do iptables -D FORWARD -i "$b" -o "$b" -j ACCEPT 2>/dev/null; done
  rm -rf "$DATA"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# net NAME PREFIX COUNT: bridge flbr-NAME at PREFIX.254, namespaces
# flbench-NAME-<i> at PREFIX.<i>.
net() {
  local name="$1" prefix="$2" count="$3" br="flbr-$1" i ns
  ip link add "$br" type bridge
  BRIDGES+=("$br")
  ip addr add "$prefix.254/24" dev "$br"
  ip link set "$br" up
  if [ "$(iptables -S FORWARD 2>/dev/null | head -1)" != "-P FORWARD ACCEPT" ]; then
    iptables -I FORWARD -i "$br" -o "$br" -j ACCEPT
    FWD_RULES+=("$br")
  fi
  for i in $(seq 1 "$count"); do
    ns="flbench-$name-$i"
    ip netns add "$ns"
    NETNS+=("$ns")
    ip link add "flbv-$name$i" type veth peer name eth0 netns "$ns"
    ip link set "flbv-$name$i" master "$br" up
    ip -n "$ns" addr add "$prefix.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
}

# stop_all: ends every started process (between phases).
stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  PIDS=()
}

# raftkv_up NAME PREFIX COUNT MODE: starts COUNT raftkv nodes.
raftkv_up() {
  local name="$1" prefix="$2" count="$3" mode="$4" peers="" i
  for i in $(seq 1 "$count"); do
    peers+="${peers:+,}$i=$prefix.$i:7001/6379"
  done
  for i in $(seq 1 "$count"); do
    rm -rf "$DATA/$name-$i"
    ip netns exec "flbench-$name-$i" "$RAFTKV" --id "$i" --peers "$peers" \
      --listen "$prefix.$i:6379" --data-dir "$DATA/$name-$i" \
      --read-mode "$mode" >"$DATA/$name-$i.log" 2>&1 &
    PIDS+=($!)
  done
}

# raftkv_leader PREFIX COUNT: prints the leader's address once one serves a
# SET (waits up to 20 s).
raftkv_leader() {
  local prefix="$1" count="$2" i
  for _ in $(seq 1 2000); do
    for i in $(seq 1 "$count"); do
      if [ "$(redis-cli -h "$prefix.$i" -p 6379 SET bench:up 1 2>/dev/null)" = OK ]; then
        echo "$prefix.$i"
        return 0
      fi
    done
    sleep 0.01
  done
  return 1
}

etcd_up() {
  local prefix="$1" count="$2" cluster="" i
  for i in $(seq 1 "$count"); do
    cluster+="${cluster:+,}e$i=http://$prefix.$i:2380"
  done
  for i in $(seq 1 "$count"); do
    ip netns exec "flbench-et-$i" etcd --name "e$i" --data-dir "$DATA/etcd-$i" \
      --listen-client-urls "http://$prefix.$i:2379" \
      --advertise-client-urls "http://$prefix.$i:2379" \
      --listen-peer-urls "http://$prefix.$i:2380" \
      --initial-advertise-peer-urls "http://$prefix.$i:2380" \
      --initial-cluster "$cluster" --initial-cluster-state new \
      --initial-cluster-token faultline-bench >"$DATA/etcd-$i.log" 2>&1 &
    PIDS+=($!)
  done
}

etcd_leader() {
  local prefix="$1" count="$2" eps="" i
  for i in $(seq 1 "$count"); do eps+="${eps:+,}http://$prefix.$i:2379"; done
  for _ in $(seq 1 200); do
    local out
    out=$(ETCDCTL_API=3 etcdctl --endpoints "$eps" endpoint status -w json 2>/dev/null || true)
    local leader
    leader=$(python3 -c "import json,sys
try: j=json.loads(sys.argv[1])
except ValueError: sys.exit(0)
for e in j:
    s=e['Status']
    if s['leader']==s['header']['member_id']: print(e['Endpoint'].split('//')[1].split(':')[0])" "$out")
    if [ -n "$leader" ]; then echo "$leader"; return 0; fi
    sleep 0.1
  done
  return 1
}

# kv LINE: "ops p50 p99" from a kv_load output line.
kv() { sed -E 's/ops_per_s=([0-9.]+) p50_ms=([0-9.]+) p99_ms=([0-9.]+).*/\1 \2 \3/'; }

echo "raftkv vs etcd, $(nproc) cores, ${secs} s per point, data on $(df --output=source "$DATA" | tail -1) (fsync on)"
net rk 10.79.0 5
net et 10.79.1 3

declare -A R_OPS R_P50 R_P99 E_OPS E_P50 E_P99 B_OPS B_P50 B_P99
levels=(1 8 32 64)

# --- 1a. raftkv writes ---------------------------------------------------
raftkv_up rk 10.79.0 3 readindex
leader=$(raftkv_leader 10.79.0 3) || die "raftkv did not elect a leader"
for c in "${levels[@]}"; do
  read -r o p50 p99 < <("$KVLOAD" --target raftkv --addr "$leader:6379" \
    --threads "$c" --seconds "$secs" --op write | kv)
  R_OPS[$c]=$o; R_P50[$c]=$p50; R_P99[$c]=$p99
  if [ "$have_rb" -eq 1 ]; then
    n=$(( c == 1 ? 2000 : 20000 ))
    line=$(redis-benchmark -h "$leader" -p 6379 -t set -c "$c" -n "$n" -r 1000 --csv 2>/dev/null | tail -1)
    # "SET","rps","avg","min","p50","p95","p99","max"
    B_OPS[$c]=$(echo "$line" | cut -d, -f2 | tr -d '"' | cut -d. -f1)
    B_P50[$c]=$(echo "$line" | cut -d, -f5 | tr -d '"')
    B_P99[$c]=$(echo "$line" | cut -d, -f7 | tr -d '"')
  fi
done
stop_all

# --- 1b. etcd writes -----------------------------------------------------
etcd_up 10.79.1 3
eleader=$(etcd_leader 10.79.1 3) || die "etcd did not elect a leader"
for c in "${levels[@]}"; do
  read -r o p50 p99 < <("$KVLOAD" --target etcd --addr "$eleader:2379" \
    --threads "$c" --seconds "$secs" --op write | kv)
  E_OPS[$c]=$o; E_P50[$c]=$p50; E_P99[$c]=$p99
done
stop_all

echo
echo "Writes (3 nodes, fsync on, to the leader): ops/s, p50 / p99 latency in ms"
printf "%-5s | %-26s | %-26s | %-26s\n" conc "raftkv (faultline client)" "raftkv (redis-benchmark)" "etcd (faultline client)"
printf -- "------+----------------------------+----------------------------+---------------------------\n"
for c in "${levels[@]}"; do
  rb="n/a (no redis-benchmark)"
  [ "$have_rb" -eq 1 ] && rb=$(printf "%6s  %6s / %6s" "${B_OPS[$c]}" "${B_P50[$c]}" "${B_P99[$c]}")
  printf "%-5s | %6s  %6s / %6s     | %-26s | %6s  %6s / %6s\n" "$c" \
    "${R_OPS[$c]}" "${R_P50[$c]}" "${R_P99[$c]}" "$rb" \
    "${E_OPS[$c]}" "${E_P50[$c]}" "${E_P99[$c]}"
done

# --- 2. follower-lease reads over followers -------------------------------
echo
echo "follower-lease reads spread over the followers, concurrency 32 (faultline client)"
for n in 3 5; do
  raftkv_up rk 10.79.0 "$n" follower-lease
  leader=$(raftkv_leader 10.79.0 "$n") || die "raftkv ($n nodes) did not elect a leader"
  followers=""
  for i in $(seq 1 "$n"); do
    [ "10.79.0.$i" = "$leader" ] || followers+="${followers:+,}10.79.0.$i:6379"
  done
  sleep 1  # let the followers take their read leases
  read -r o p50 p99 < <("$KVLOAD" --target raftkv --addr "$followers" \
    --threads 32 --seconds "$secs" --op read | kv)
  printf "  %d nodes (%d followers): %6s ops/s  p50 %s ms  p99 %s ms\n" "$n" $((n - 1)) "$o" "$p50" "$p99"
  stop_all
done

# --- 3. startup ------------------------------------------------------------
t0=$(date +%s.%N)
raftkv_up rk 10.79.0 5 readindex
raftkv_leader 10.79.0 5 >/dev/null || die "5-node raftkv did not serve"
t1=$(date +%s.%N)
stop_all
echo
python3 -c "import sys; print('5-node raftkv cluster serving (first acknowledged SET) %.2f s after start' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$t1"
