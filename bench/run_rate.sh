#!/usr/bin/env bash
# The run path at scale: how much of the raw rate of a client load a
# `faultline run` keeps, and what the controller spends on it. Needs root,
# iproute2, redis-cli (Debian redis-tools) and a build with benchmarks
# (build/faultline, build/raftkv, build/bench/kv_load).
#
#   bench/run_rate.sh [SECONDS] [CONCURRENCY]        (default 20 10)
#
# (a) raw: a 3-node raftkv cluster in network namespaces on a private
#     bridge (10.77.198.0/24, the controller side at .254, as the netns
#     provider builds it), raftkv started with the argv faultline's raftkv
#     target uses (its defaults, readindex reads, data on tmpfs under
#     /dev/shm, where a run's work directory is), and kv_load's closed
#     loop: CONCURRENCY threads, thread i on node i mod 3, writes of unique values over 8 keys, one op outstanding per thread.
# (b) faultline: `faultline run` of a raftkv register config on
#     10.77.199.0/24 with the same nodes, concurrency, write-only mix over 8
#     keys, rate 0 (as fast as the workers go), no faults, for SECONDS.
# Prints both rates (ok operations per second of the workload; the raw one
# as the mean of a load before and one after the faultline run), their
# ratio (goal: >= 0.9), the controller's CPU (user and system seconds, and
# the share of one core) over the workload phase, its resident set at the
# end of the workload, and its peak resident set over the whole run (the
# check phase included). Everything it creates is removed on exit.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FAULTLINE_BUILD_DIR:-$root/build}"
secs="${1:-20}"
conc="${2:-10}"
FAULTLINE="$build/faultline"
RAFTKV="$build/raftkv"
KVLOAD="$build/bench/kv_load"
RAW_PREFIX=10.77.198
RUN_SUBNET=10.77.199.0/24

die() { echo "run_rate: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (network namespaces)"
for b in "$FAULTLINE" "$RAFTKV" "$KVLOAD"; do
  [ -x "$b" ] || die "$b missing; configure with -DFAULTLINE_BENCH=ON and build faultline raftkv kv_load"
done
command -v ip >/dev/null || die "needs ip (iproute2)"
command -v redis-cli >/dev/null || die "needs redis-cli (Debian package redis-tools)"

# Node data on tmpfs, where the netns provider puts a run's work directory.
DATA="$(mktemp -d /dev/shm/faultline-rate.XXXXXX)"
# The run's store on disk, as a real store is: the history is written there.
STORE="$(mktemp -d /var/tmp/faultline-rate-store.XXXXXX)"
PIDS=()
NETNS=()
BR=flbr-rate
FWD=0

cleanup() {
  set +e
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  for n in "${NETNS[@]}"; do ip netns del "$n" 2>/dev/null; done
  ip link del "$BR" 2>/dev/null
  [ "$FWD" = 1 ] && iptables -D FORWARD -i "$BR" -o "$BR" -j ACCEPT 2>/dev/null
  rm -rf "$DATA" "$STORE"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- (a) raw -----------------------------------------------------------------
ip link add "$BR" type bridge
ip addr add "$RAW_PREFIX.254/24" dev "$BR"
ip link set "$BR" up
if [ "$(iptables -S FORWARD 2>/dev/null | head -1)" != "-P FORWARD ACCEPT" ]; then
  iptables -I FORWARD -i "$BR" -o "$BR" -j ACCEPT
  FWD=1
fi
peers=""
for i in 1 2 3; do peers+="${peers:+,}$i=$RAW_PREFIX.$i:7001/6379"; done
for i in 1 2 3; do
  ns="flrate-$i"
  ip netns add "$ns"
  NETNS+=("$ns")
  ip link add "flrv$i" type veth peer name eth0 netns "$ns"
  ip link set "flrv$i" master "$BR" up
  ip -n "$ns" addr add "$RAW_PREFIX.$i/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip netns exec "$ns" "$RAFTKV" --id "$i" --peers "$peers" \
    --listen "$RAW_PREFIX.$i:6379" --data-dir "$DATA/raw-$i" \
    --read-mode readindex --heartbeat-ms 50 --election-ms 500 \
    --follower-lease-ms 300 --lease-drift-bound 0.001 \
    --snapshot-entries 10000 --unsafe none >"$DATA/raw-$i.log" 2>&1 &
  PIDS+=($!)
done
up=0
for _ in $(seq 1 2000); do
  for i in 1 2 3; do
    if [ "$(redis-cli -h "$RAW_PREFIX.$i" -p 6379 SET bench:up 1 2>/dev/null)" = OK ]; then
      up=1
      break 2
    fi
  done
  sleep 0.01
done
[ "$up" = 1 ] || die "the raw raftkv cluster elected no leader in 20 s"
addrs="$RAW_PREFIX.1,$RAW_PREFIX.2,$RAW_PREFIX.3"
# raw_load N: kv_load's run number N; sets raw_N (ops/s) and raw_cpu_N.
raw_load() {
  local line
  line=$(/usr/bin/time -f "%U %S" -o "$DATA/raw_time.txt" "$KVLOAD" \
    --target raftkv --addr "$addrs" --threads "$conc" --seconds "$secs" \
    --op write --keys 8)
  echo "raw $1:     $line"
  printf -v "raw_$1" '%s' "$(sed -n 's/.*ops_per_s=\([0-9.]*\).*/\1/p' <<<"$line")"
  printf -v "raw_cpu_$1" '%s' "$(tail -1 "$DATA/raw_time.txt")"
}
# The raw load runs before and after the faultline run (the raw cluster
# idles meanwhile): on a shared machine the mean of the two is the fairer
# raw rate.
raw_load 1

# --- (b) through faultline ---------------------------------------------------
RAW_PIDS=("${PIDS[@]}")
cat >"$DATA/rate.yaml" <<EOF
name: bench-run-rate
time_limit: $secs
recovery: 0
store: $STORE
cluster: {provider: netns, nodes: 3, subnet: $RUN_SUBNET}
target: {name: raftkv, read_mode: readindex}
workload:
  name: register
  keys: 8
  concurrency: $conc
  rate: 0
  mix: {read: 0, write: 1, cas: 0}
  op_timeout_ms: 2000
nemesis: {faults: []}
checker: {timeout: 60}
EOF
log="$DATA/run.log"
/usr/bin/time -v -o "$DATA/time.txt" "$FAULTLINE" run "$DATA/rate.yaml" \
  >"$DATA/run.out" 2>"$log" &
tpid=$!
PIDS+=("$tpid")
# The controller is /usr/bin/time's child.
fpid=""
for _ in $(seq 1 200); do
  fpid=$(pgrep -P "$tpid" || true)
  [ -n "$fpid" ] && break
  sleep 0.01
done
[ -n "$fpid" ] || die "faultline did not start"
ticks=$(getconf CLK_TCK)
# cpu: "user system" in seconds of the controller so far.
cpu() { awk -v t="$ticks" '{ sub(/^.*\) /, ""); print $12 / t, $13 / t }' "/proc/$fpid/stat"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$fpid/status"; }
# Marks: the workload starts after "healthy", ends at "workload done".
start_cpu="" end_cpu="" end_rss=""
while kill -0 "$fpid" 2>/dev/null; do
  if [ -z "$start_cpu" ] && grep -q "nodes healthy after" "$log"; then
    start_cpu=$(cpu) start_t=$(date +%s.%N)
  fi
  if [ -n "$start_cpu" ] && grep -q "workload done" "$log"; then
    end_cpu=$(cpu) end_t=$(date +%s.%N) end_rss=$(rss_kb)
    break
  fi
  sleep 0.05
done
wait "$tpid" || true
PIDS=("${RAW_PIDS[@]}")
raw_load 2
[ -n "$end_cpu" ] || { cat "$log" >&2; die "the run did not reach the end of its workload"; }
done_line=$(grep "workload done" "$log" | head -1)
# "workload done: N invocations (K ok, ...) in S s"
ok=$(sed -n 's/.*invocations (\([0-9]*\) ok.*/\1/p' <<<"$done_line")
wsecs=$(sed -n 's/.* in \([0-9.]*\) s, .*/\1/p' <<<"$done_line")
peak_kb=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$DATA/time.txt")
events=$(wc -l <"$STORE/bench-run-rate/latest/history.jsonl")
verdict=$(sed -n 's/^  "valid": *"\([a-z]*\)".*/\1/p' "$STORE/bench-run-rate/latest/results.json" | head -1)
echo "faultline: $done_line"
python3 - "$raw_1 $raw_2" "$raw_cpu_1" "$secs" "$ok" "$wsecs" "$start_cpu" "$end_cpu" "$start_t" "$end_t" \
  "$end_rss" "$peak_kb" "$events" "$verdict" <<'EOF'
import sys
raws = [float(x) for x in sys.argv[1].split()]
raw = sum(raws) / len(raws)
ru, rs = map(float, sys.argv[2].split())
raw_secs = float(sys.argv[3])
ok, wsecs = int(sys.argv[4]), float(sys.argv[5])
su, ss = map(float, sys.argv[6].split())
eu, es = map(float, sys.argv[7].split())
wall = float(sys.argv[9]) - float(sys.argv[8])
end_rss, peak, events, verdict = int(sys.argv[10]), int(sys.argv[11]), int(sys.argv[12]), sys.argv[13]
rate = ok / wsecs
user, sys_ = eu - su, es - ss
print(f"raw_ops_per_s={raw:.0f} (mean of {raws[0]:.0f} before and {raws[1]:.0f} after) faultline_ops_per_s={rate:.0f} ratio={rate / raw:.3f}")
print(f"raw_client_cpu_user_s={ru:.2f} raw_client_cpu_sys_s={rs:.2f} "
      f"core_share={(ru + rs) / raw_secs:.2f} (kv_load, {raw_secs:.0f} s)")
print(f"controller_cpu_user_s={user:.2f} controller_cpu_sys_s={sys_:.2f} "
      f"core_share={(user + sys_) / wall:.2f} (workload phase, {wall:.1f} s)")
print(f"rss_end_of_workload_mb={end_rss / 1024:.1f} peak_rss_mb={peak / 1024:.1f} "
      f"history_events={events} verdict={verdict}")
EOF
