#!/usr/bin/env bash
# Bad input gets a clear error (file:line:column), exit code 254, and
# nothing is started or created.
source "$(dirname "$0")/lib.sh"
setup_workdir

expect_254() {  # expect_254 PATTERN CMD...
  local pattern="$1"; shift
  set +e
  "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  set -e
  [ "$rc" -eq 254 ] || { cat "$WORK/err"; fail "'$*' exited $rc, expected 254"; }
  grep -qE -- "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "'$*': message does not match $pattern"; }
}

cat >"$WORK/typo.yaml" <<YAML
name: typo
cluster:
  nodes: 3
  nodez: 5
YAML
expect_254 "typo.yaml:4:3: .*nodez" "$FAULTLINE_BIN" validate "$WORK/typo.yaml"
grep -q "did you mean .nodes" "$WORK/err" || fail "no did-you-mean for nodez"

cat >"$WORK/type.yaml" <<YAML
name: type
cluster: {nodes: five}
YAML
expect_254 "type.yaml:2:[0-9]+: " "$FAULTLINE_BIN" validate "$WORK/type.yaml"

cat >"$WORK/one.yaml" <<YAML
name: one-node
cluster: {nodes: 1}
nemesis: {faults: [partition], partitions: [halves]}
YAML
netns_before=$(ip netns list 2>/dev/null | wc -l)
expect_254 "one.yaml:[0-9]+:[0-9]+: " "$FAULTLINE_BIN" run "$WORK/one.yaml" --store "$STORE" --index-dir "$INDEX"
[ -z "$(ls -A "$STORE")" ] || fail "a rejected config created files in the store"
[ "$(ip netns list 2>/dev/null | wc -l)" -eq "$netns_before" ] || fail "a rejected config created a namespace"
expect_254 "--nodes" "$FAULTLINE_BIN" run "$FAULTLINE_SOURCE_DIR/configs/etcd-quick.yaml" --nodes 0 --store "$STORE"

printf '{"index":0,"process":0,"type":"ok","f":"read","value":1}\n' >"$WORK/h.jsonl"
expect_254 "h.jsonl:1" "$FAULTLINE_BIN" check --model register "$WORK/h.jsonl"
printf '{"index":0,"process":0,"type":"invoke","f":"read",\n' >"$WORK/bad.jsonl"
printf '{"index":0,"process":0,"type":"invoke","f":"read","value":null}\n{"index":1,"process":0,"type":"bogus","f":"read","value":null}\n' >"$WORK/bad.jsonl"
expect_254 "bad.jsonl:2:" "$FAULTLINE_BIN" check --model register "$WORK/bad.jsonl"
expect_254 "" "$FAULTLINE_BIN" check --model no-such-model "$WORK/h.jsonl"
expect_254 "" "$FAULTLINE_BIN" run
expect_254 "no history" "$FAULTLINE_BIN" analyze "$WORK"
# Usage errors of the global flags and of --format, before or after the
# subcommand; bare `faultline` is not one (it prints the help, exit 0).
expect_254 "--color: .*sometimes" "$FAULTLINE_BIN" --color sometimes list
expect_254 "--color: .*sometimes" "$FAULTLINE_BIN" list --color sometimes
expect_254 "--no-such-flag" "$FAULTLINE_BIN" list --no-such-flag
expect_254 "--format: .*csv" "$FAULTLINE_BIN" check --model register --format csv "$WORK/h.jsonl"
expect_254 "bogus" "$FAULTLINE_BIN" bogus
"$FAULTLINE_BIN" >"$WORK/out" 2>"$WORK/err" || fail "bare faultline exited $?, expected 0 (it prints the help)"
grep -q "^Usage: faultline" "$WORK/out" || fail "bare faultline printed no usage"
# validate --json keeps the exit code and puts the located error in JSON.
set +e
"$FAULTLINE_BIN" validate --json "$WORK/typo.yaml" >"$WORK/out" 2>"$WORK/err"
rc=$?
set -e
[ "$rc" -eq 254 ] || fail "validate --json of a bad config exited $rc, expected 254"
json_get "$WORK/out" "[(e['line'], e['column']) for e in j['configs'][0]['errors']]" | grep -qF "(4, 3)" \
  || fail "validate --json does not give line 4, column 3"
echo "PASS: every bad input exited 254 with a located message"
