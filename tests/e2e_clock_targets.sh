#!/usr/bin/env bash
# Clock faults on the targets that take them, seen from inside the targets'
# processes (subnets 10.77.82.0/24 .. 10.77.84.0/24):
#  1. strobe on raftkv: while it is active, a process started with the
#     chosen member's own environment (read from /proc) sees its clock flip
#     between +1 h and real time (both seen while the fault lasts); the stop-strobe event lists alternating
#     flips; the heal leaves "+0 x1"; report.html's clock chart holds the
#     node's +1 h steps, rebuilt from history.jsonl.
#  2. Redis (clock +1 h on every node): redis-server and redis-sentinel run
#     with the faketime shim preloaded before libfaketime, start, and
#     answer TIME about 3600 s ahead; after the heal TIME is real again.
#  3. ZooKeeper (one standalone server, clock +1 h): a znode created while
#     the fault is active has an mtime about 3600 s ahead (the server that
#     leads stamps it with its clock); one written after the heal is real
#     again. One server, not three: under libfaketime the JVMs start several
#     times slower (every wall-clock read opens the node's file, under
#     libfaketime's lock), and three of them on a loaded 2-core machine
#     missed the 60 s health deadline.
# After each run: no faketime file and no /dev/shm leftover of its pids.
# Needs root, python3, libfaketime, raftkv and the shim next to faultline,
# redis-server/redis-sentinel/redis-cli, and java with the zookeeper package.
# About 1.5-2 minutes.
source "$(dirname "$0")/lib.sh"
require_root
require_tool python3
require_tool redis-server
require_tool redis-cli
require_tool java
LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[ -r "$LIB" ] || fail "this test needs libfaketime ($LIB; apt-get install libfaketime)"
[ -f /usr/share/java/zookeeper.jar ] || fail "this test needs the zookeeper package (scripts/install-deps.sh)"
bindir="$(dirname "$FAULTLINE_BIN")"
[ -x "$bindir/raftkv" ] || fail "this test needs the raftkv server next to faultline; build it (scripts/build.sh)"
SHIM="$bindir/libfaultline-faketime-shim.so"
[ -r "$SHIM" ] || fail "this test needs $SHIM; build the faultline-faketime-shim target"
ZKCP=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar
setup_workdir
RUN_SEED=3
interrupt_run_on_exit

# pids_of RUN COMM: pids of the run's processes named COMM, from the ledger.
pids_of() {
  local p
  for p in $(ledger_values "$1/ledger.jsonl" process pid); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] && echo "$p"
  done
  return 0
}

finish_any_verdict() {  # waits for the background run; it must give a verdict (0 or 1)
  set +e; wait "$pid"; rc=$?; set -e
  pid=""
  [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || { cat "$WORK/out.txt"; fail "the run exited $rc"; }
  echo "  verdict: $(json_get "$run/results.json" "j['valid']") (exit $rc)"
}

no_leftovers() {  # no_leftovers FTDIR PIDS...
  local dir="$1"; shift
  [ ! -e "$dir" ] || fail "faketime directory $dir left behind"
  for p in "$@"; do
    [ ! -e "/dev/shm/faketime_shm_$p" ] || fail "/dev/shm/faketime_shm_$p left behind"
    [ ! -e "/dev/shm/sem.faketime_sem_$p" ] || fail "/dev/shm/sem.faketime_sem_$p left behind"
  done
}

# ---- 1: strobe on raftkv ---------------------------------------------------
cat >"$WORK/strobe.yaml" <<YAML
name: e2e-strobe
time_limit: 14
recovery: 1
cluster: {nodes: 3, subnet: 10.77.82.0/24}
target: {name: raftkv}
workload: {name: register, keys: 4, concurrency: 3, rate: 30, op_timeout_ms: 3000}
nemesis: {faults: [strobe], interval: 1, duration: 10, targets: [one], clock_strobe_delta_ms: 3600000, clock_strobe_period_ms: 300}
YAML
run_bg "$WORK/strobe.yaml" e2e-strobe
await_history "$pid" "$run" '"type":"info","f":"start-strobe"' "the strobe"
node=$("$PY" -c "import json,sys; print(json.loads(sys.argv[1])['nodes'][0])" "$(event_value "$run" start-strobe)")
ftdir=$(ledger_values "$run/ledger.jsonl" faketime name)
file="$ftdir/$node.faketime"
target_pid=""
for p in $(pids_of "$run" raftkv); do
  tr '\0' '\n' <"/proc/$p/environ" | grep -qx "FAKETIME_TIMESTAMP_FILE=$file" && target_pid=$p
done
[ -n "$target_pid" ] || fail "no raftkv process reads $file"
grep -q libfaketime "/proc/$target_pid/maps" || fail "libfaketime is not mapped into raftkv $target_pid"
# The member's own environment, for a probe that reads the clock 25 times
# over 2.5 s or more (the strobe flips every 0.3 s; under load the probe may
# outlast the 10 s fault, so "real" readings are not all flips): `date`
# under that environment against `date` without it.
mapfile -t envs < <(tr '\0' '\n' <"/proc/$target_pid/environ" | grep -E '^(LD_PRELOAD|FAKETIME[A-Z_]*)=')
ups=0; downs=0
for _ in $(seq 1 25); do
  fake=$(env "${envs[@]}" date +%s); off=$((fake - $(date +%s)))
  if [ "$off" -ge 3590 ] && [ "$off" -le 3610 ]; then ups=$((ups + 1))
  elif [ "$off" -ge -10 ] && [ "$off" -le 10 ]; then downs=$((downs + 1)); fi
  sleep 0.1
done
echo "strobe +1 h / 0 every 300 ms on $node: a probe with its environment read +1 h $ups times, real $downs times (of 25)"
[ "$ups" -ge 2 ] && [ "$downs" -ge 2 ] || fail "the probe did not see the clock flip (up $ups, real $downs)"
await_history "$pid" "$run" '"type":"info","f":"stop-strobe"' "the strobe heal"
[ "$(cat "$file")" = "+0 x1" ] || fail "after the heal the file says '$(cat "$file")', expected +0 x1"
"$PY" - "$(event_value "$run" stop-strobe)" "$node" <<'PY' || fail "stop-strobe does not record alternating flips"
import json, sys
v = json.loads(sys.argv[1]); node = sys.argv[2]
flips = v["flips"]
assert v["healed"] == [node] and abs(v["offset_ms"][node]) < 1, v
assert len(flips) >= 15, len(flips)          # 10 s / 0.3 s = 34 due
for k, f in enumerate(flips):
    assert f["up"] == (k % 2 == 0), (k, f)
    assert abs(f["clock_ms"] - (3600000 if f["up"] else 0)) < 5, (k, f)
    assert k == 0 or f["at_ms"] >= flips[k - 1]["at_ms"], (k, f)
print("  %d flips recorded, up and back" % len(flips))
PY
pids=$(pids_of "$run" raftkv)
finish_any_verdict
no_leftovers "$ftdir" $pids
"$PY" - "$run/report.html" "$node" <<'PY' || fail "report.html does not draw the strobe's offsets"
import json, re, sys
html = open(sys.argv[1]).read()
m = re.search(r'<script type="application/json" id="faultline-data">(.*?)</script>', html, re.S)
d = json.loads(m.group(1))
c = d["clocks"]
i = c["nodes"].index(sys.argv[2])
ys = [p[1] for p in c["series"][i]]
ups = sum(1 for y in ys if abs(y - 3600000) < 5)
assert ups >= 5 and ys[-1] == 0 and ys[0] == 0, ys
assert 'id="clocks"' in html
print("  report.html: %d points for %s, %d of them at +1 h" % (len(ys), sys.argv[2], ups))
PY
echo "PASS: strobe flipped $node's clock and healed; the report draws it"

# ---- 2: Redis, clock +1 h on every node -------------------------------------
cat >"$WORK/redis.yaml" <<YAML
name: e2e-clock-redis
time_limit: 14
recovery: 2
cluster: {nodes: 3, subnet: 10.77.83.0/24}
target: {name: redis, down_after_ms: 2000, failover_timeout_ms: 6000}
workload: {name: register, keys: 4, concurrency: 3, rate: 30, op_timeout_ms: 2000}
nemesis: {faults: [clock], interval: 2, duration: 8, targets: [all], clock_offset_ms: 3600000}
YAML
run_bg "$WORK/redis.yaml" e2e-clock-redis
await_history "$pid" "$run" '"type":"info","f":"start-clock"' "the clock step"
ftdir=$(ledger_values "$run/ledger.jsonl" faketime name)
rpids=$(pids_of "$run" redis-server)
[ "$(wc -w <<<"$rpids")" -eq 3 ] || fail "expected 3 redis-server processes, found: $rpids"
# Redis rewrites its environment block for its process title, so
# /proc/PID/environ is blank: the mapped libraries show the preload.
for p in $rpids $(pids_of "$run" redis-sentinel); do
  grep -q faultline-faketime-shim "/proc/$p/maps" || fail "the shim is not mapped into redis $p"
  grep -q libfaketimeMT "/proc/$p/maps" || fail "libfaketime is not mapped into redis $p"
done
for ip in 10.77.83.1 10.77.83.2 10.77.83.3; do
  t=$(redis-cli -h "$ip" -p 6379 TIME | head -1)
  real=$(date +%s)
  echo "  redis $ip: TIME is $((t - real)) s ahead"
  [ $((t - real)) -ge 3590 ] && [ $((t - real)) -le 3610 ] || fail "redis $ip TIME is $((t - real)) s ahead, expected ~3600"
done
await_history "$pid" "$run" '"type":"info","f":"stop-clock"' "the clock heal"
t=$(redis-cli -h 10.77.83.1 -p 6379 TIME | head -1)
[ $((t - $(date +%s))) -le 5 ] && [ $((t - $(date +%s))) -ge -5 ] || fail "after the heal redis TIME is still $((t - $(date +%s))) s off"
finish_any_verdict
no_leftovers "$ftdir" $rpids
echo "PASS: redis-server started under libfaketime with the shim and its TIME moved +1 h and back"

# ---- 3: ZooKeeper, clock +1 h on every node ---------------------------------
cat >"$WORK/zk.yaml" <<YAML
name: e2e-clock-zookeeper
time_limit: 46
recovery: 2
cluster: {nodes: 1, subnet: 10.77.84.0/24}
target: {name: zookeeper, tick_ms: 500, init_limit: 40, sync_limit: 10}
workload: {name: register, keys: 4, concurrency: 3, rate: 20, op_timeout_ms: 3000}
# One fault, 6 s to 26 s (each zkCli call below starts a JVM: a few
# seconds), and no second before the 46 s limit: the write after the heal
# lands on real clocks while the server still runs.
nemesis: {faults: [clock], interval: 6, duration: 20, targets: [all], clock_offset_ms: 3600000}
YAML
run_bg "$WORK/zk.yaml" e2e-clock-zookeeper
await_history "$pid" "$run" '"type":"info","f":"start-clock"' "the clock step"
ftdir=$(ledger_values "$run/ledger.jsonl" faketime name)
zpids=$(pids_of "$run" java)
[ "$(wc -w <<<"$zpids")" -eq 1 ] || fail "expected 1 ZooKeeper JVM, found: $zpids"
zk() {  # zk COMMAND ARGS...: one zkCli command against node 1
  timeout 120 java -cp "$ZKCP" org.apache.zookeeper.ZooKeeperMain \
    -server 10.77.84.1:2181 "$@" 2>&1
}
# mtime_ahead: the probe znode's mtime minus now, in s.
mtime_ahead() {
  local line
  line=$(zk stat /faultline-clock-probe | grep '^mtime = ') || { echo "no mtime"; return 1; }
  echo $(( $(date -d "${line#mtime = }" +%s) - $(date +%s) ))
}
zk create /faultline-clock-probe during >/dev/null
ahead=$(mtime_ahead)
echo "  zookeeper: a znode written during the fault has an mtime $ahead s ahead"
[ "$ahead" -ge 3500 ] && [ "$ahead" -le 3610 ] || fail "the znode mtime is $ahead s ahead, expected ~3600"
await_history "$pid" "$run" '"type":"info","f":"stop-clock"' "the clock heal"
zk set /faultline-clock-probe after >/dev/null
ahead=$(mtime_ahead)
echo "  zookeeper: after the heal the mtime is $ahead s ahead"
[ "$ahead" -ge -120 ] && [ "$ahead" -le 5 ] || fail "after the heal the znode mtime is $ahead s ahead, expected ~0"
finish_any_verdict
no_leftovers "$ftdir" $zpids
echo "PASS: ZooKeeper stamped a znode +1 h during the clock fault and real time after"
