#!/usr/bin/env bash
# target: process takes the faults that act on the node's network and
# clock, not only kills and pauses (docs/targets/process.md, "Faults"):
# raftkv described in YAML (configs/process/raftkv-register.yaml), the
# Python exec client, 12 s of loss, delay and clock faults together on one
# node, in steps of 3 s
# (subnet 10.77.139.0/24). While the clock fault is active every raftkv
# server runs with libfaketime preloaded and its node's faketime file says
# +1 h, and `date` run with its environment reads the clock 1 h ahead;
# at the end the run is valid, each of the three faults started and
# stopped, the ledger marks the loss rules, the delay and the faketime
# files healed, and no faketime file is left.
# Needs root, python3, libfaketime, and raftkv and faultline-netdelay next
# to faultline. About 20 s.
source "$(dirname "$0")/lib.sh"
require_root
require_tool python3
require_raftkv
LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[ -r "$LIB" ] || fail "this test needs libfaketime ($LIB; apt-get install libfaketime)"
[ -x "$(dirname "$FAULTLINE_BIN")/faultline-netdelay" ] ||
  fail "this test needs faultline-netdelay next to faultline (libnetfilter-queue-dev; scripts/build.sh)"
setup_workdir
interrupt_run_on_exit
SRC="$FAULTLINE_SOURCE_DIR"

E2E_SUBNET=10.77.139.0/24
cfg=$(local_copy "$SRC/configs/process/raftkv-register.yaml" 12 \
  "s#^name: .*#name: process-net-clock#" \
  "s#\[python3, #[$PY, #g" \
  "s#{config_dir}/../../examples#$SRC/examples#" \
  "s#command: \[$PY, ../../examples#command: [$PY, $SRC/examples#" \
  "s#^  faults: .*#  faults: [{together: [loss, delay, clock]}]\n  clock_offset_ms: 3600000\n  loss_probability: 0.3\n  delay_ms: 50#" \
  "s#^  interval: .*#  interval: 1#" "s#^  targets: .*#  targets: [one]#" \
  "/^  partitions: /d")
grep -q "together: \[loss, delay, clock\]" "$cfg" || fail "could not set the faults"
"$FAULTLINE_BIN" validate "$cfg" >/dev/null || { "$FAULTLINE_BIN" validate "$cfg"; fail "the config does not load"; }
run_bg "$cfg" process-net-clock
await_history "$pid" "$run" '"type":"info","f":"start-clock"' "the clock step"
node=$("$PY" -c "import json,sys; print(json.loads(sys.argv[1])['nodes'][0])" "$(event_value "$run" start-clock)")
ftdir=$(ledger_values "$run/ledger.jsonl" faketime name)
[ -n "$ftdir" ] || fail "no faketime ledger entry"
grep -q '^+3600\.' "$ftdir/$node.faketime" || fail "faketime file of $node says '$(cat "$ftdir/$node.faketime")', expected +3600..."
n=0
for p in $(ledger_values "$run/ledger.jsonl" process pid); do
  [ "$(cat "/proc/$p/comm" 2>/dev/null)" = raftkv ] || continue
  tr '\0' '\n' <"/proc/$p/environ" | grep -q "^LD_PRELOAD=.*libfaketime" || fail "raftkv $p runs without libfaketime preloaded"
  tr '\0' '\n' <"/proc/$p/environ" | grep -q "^FAKETIME_TIMESTAMP_FILE=$ftdir/" || fail "raftkv $p has no faketime file"
  n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "expected 3 raftkv servers under libfaketime, found $n"
# What a program started with the skewed node's server environment (its
# LD_PRELOAD, shim included, and FAKETIME_* variables, read from /proc)
# reads: clock_gettime (date) must be about 1 h ahead.
for p in $(ledger_values "$run/ledger.jsonl" process pid); do
  [ "$(cat "/proc/$p/comm" 2>/dev/null)" = raftkv ] || continue
  tr '\0' '\n' <"/proc/$p/environ" | grep -q "^FAKETIME_TIMESTAMP_FILE=$ftdir/$node.faketime\$" || continue
  mapfile -t vars < <(tr '\0' '\n' <"/proc/$p/environ" | grep "^LD_PRELOAD=\|^FAKETIME")
  skew=$(( $(env "${vars[@]}" date +%s) - $(date +%s) ))
  echo "clock +1 h on $node: a program under raftkv $p's environment reads ${skew} s ahead"
  [ "$skew" -ge 3590 ] && [ "$skew" -le 3610 ] || fail "the faked clock is ${skew} s ahead, expected ~3600 (is libfaketime's clock_gettime reached?)"
  checked=1
done
[ -n "${checked:-}" ] || fail "no raftkv server uses $node's faketime file"
finish
for f in loss delay clock; do
  grep -q "\"f\":\"start-$f\"" "$run/history.jsonl" || fail "no $f fault ran"
  grep -q "\"f\":\"stop-$f\"" "$run/history.jsonl" || fail "the $f fault was not stopped"
done
[ "$("$PY" -c "import json; print(json.load(open('$run/results.json'))['valid'])")" = valid ] || fail "the run is not valid"
all_healed "$run" iptables || fail "ledger: the loss or delay rules are not marked healed"
all_healed "$run" faketime || fail "ledger: the faketime entry is not marked healed"
[ ! -e "$ftdir" ] || fail "faketime directory $ftdir left behind"
echo "PASS: loss, delay and clock (+1 h under libfaketime) on target process, all healed"
