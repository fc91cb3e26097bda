#!/usr/bin/env bash
# faultline suite: runs each config, compares the verdict with its `expect`,
# prints expected versus actual and a per-config tally, exits 0 only when
# every run matched. Real raftkv clusters in namespaces (root needed).
source "$(dirname "$0")/lib.sh"
require_root
setup_workdir

# write_config FILE NAME SUBNET EXPECT: a 3-node raftkv run of a few seconds
# without faults (so its verdict is valid); EXPECT "" leaves `expect` out.
write_config() {
  {
    echo "name: $2"
    echo "time_limit: 3"
    echo "recovery: 1"
    [ -n "$4" ] && echo "expect: $4"
    echo "store: $STORE"
    echo "cluster: {nodes: 3, subnet: $3}"
    echo "target: {name: raftkv}"
    echo "workload: {name: register, keys: 2, concurrency: 3, rate: 100}"
    echo "nemesis: {faults: []}"
  } >"$1"
}

mkdir -p "$WORK/suite" "$WORK/bad"
write_config "$WORK/suite/a-valid.yaml" suite-valid 10.77.60.0/24 valid
write_config "$WORK/suite/b-wrong.yaml" suite-wrong 10.77.61.0/24 invalid
write_config "$WORK/bad/no-expect.yaml" suite-no-expect 10.77.60.0/24 ""

# 1. A config without `expect` is bad input: exit 254, nothing started.
set +e
out="$("$FAULTLINE_BIN" suite "$WORK/suite" "$WORK/bad" --index-dir "$INDEX" 2>&1)"
rc=$?
set -e
[ "$rc" -eq 254 ] || fail "no-expect config: exit $rc, want 254: $out"
grep -q "no-expect.yaml: no \`expect:\`" <<<"$out" || fail "error does not name the file: $out"
[ -z "$(ls -A "$STORE")" ] || fail "bad input started runs: $(ls "$STORE")"

# 2. One config as expected (two runs), one not: exit 1, tally per config.
set +e
out="$("$FAULTLINE_BIN" suite "$WORK/suite" --runs 2 --seed 5 \
  --json "$WORK/suite.json" --index-dir "$INDEX" 2>&1)"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "suite with a mismatch: exit $rc, want 1: $out"
grep -Eq "^suite-valid +valid +2/2 +2 +0 +0 +0 " <<<"$out" ||
  fail "suite-valid row missing or wrong: $out"
grep -Eq "^suite-wrong +invalid +0/2 +2 +0 +0 +0 .*not as expected" <<<"$out" ||
  fail "suite-wrong row missing or wrong: $out"
grep -q "suite-wrong #1 (seed 5): expected invalid, got valid: NOT as expected" <<<"$out" ||
  fail "per-run line missing: $out"
grep -q "suite-valid #2 (seed 6): expected valid, got valid: as expected" <<<"$out" ||
  fail "second run does not use the next seed: $out"
[ "$(json_get "$WORK/suite.json" "j['schema']")" = "faultline.suite/1" ] || fail "json schema"
[ "$(json_get "$WORK/suite.json" "[c['matched'] for c in j['configs']]")" = "[2, 0]" ] ||
  fail "json tally: $(cat "$WORK/suite.json")"
for d in $(json_get "$WORK/suite.json" "' '.join(d for c in j['configs'] for d in c['run_dirs'])"); do
  [ -f "$d/results.json" ] || fail "run dir $d has no results.json"
done

# 3. Only the config that matches: exit 0.
"$FAULTLINE_BIN" suite "$WORK/suite/a-valid.yaml" --index-dir "$INDEX" >"$WORK/out3" 2>&1 ||
  fail "all-matched suite did not exit 0: $(cat "$WORK/out3")"
grep -q "suite: 1 config, 1 run, 1 as expected" "$WORK/out3" || fail "summary line: $(cat "$WORK/out3")"
echo "PASS"
