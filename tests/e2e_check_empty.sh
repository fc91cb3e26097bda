#!/usr/bin/env bash
# "Nothing was tested" never passes: `faultline check` of a file without a
# client operation exits 2 (unknown) and says nothing was checked, for every
# model and checker; text that is not a Porcupine log, read with
# --format porcupine, is bad input (254) with its line and column. Needs no
# root and starts nothing.
source "$(dirname "$0")/lib.sh"
WORK="$(mktemp -d /tmp/faultline-e2e-check.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

expect_rc() {  # expect_rc RC PATTERN CMD...: exit code RC, PATTERN in out+err
  local want="$1" pattern="$2"; shift 2
  set +e
  "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  set -e
  [ "$rc" -eq "$want" ] || { cat "$WORK/out" "$WORK/err"; fail "'$*' exited $rc, expected $want"; }
  # grep reads the files itself: `cat | grep -q` under pipefail fails when
  # grep stops at its first match and cat gets SIGPIPE.
  grep -qE -- "$pattern" "$WORK/out" "$WORK/err" ||
    { cat "$WORK/out" "$WORK/err"; fail "'$*': output does not match $pattern"; }
}

: >"$WORK/empty.jsonl"
printf '\n\n   \n\t\n' >"$WORK/blank.jsonl"
printf '%s\n' '{"index":0,"type":"invoke","process":"nemesis","f":"start-partition","value":null}' \
  '{"index":1,"type":"info","process":"nemesis","f":"start-partition","value":null}' >"$WORK/faults-only.jsonl"

for model in cas-register register kv mutex-fencing leader-per-term; do
  for f in empty blank; do
    expect_rc 2 "unknown" "$FAULTLINE_BIN" check -m "$model" "$WORK/$f.jsonl"
    expect_rc 2 '"valid":"unknown"' "$FAULTLINE_BIN" check -m "$model" --json "$WORK/$f.jsonl"
  done
done
expect_rc 2 "no client operation in the history \(0 event\(s\)\), so nothing was checked" \
  "$FAULTLINE_BIN" check -m cas-register "$WORK/empty.jsonl"
expect_rc 2 "nothing was checked" "$FAULTLINE_BIN" check -m cas-register "$WORK/blank.jsonl"
expect_rc 2 "\(2 event\(s\)\), so nothing was checked" \
  "$FAULTLINE_BIN" check -m cas-register "$WORK/faults-only.jsonl"
expect_rc 2 "nothing was checked" "$FAULTLINE_BIN" check -m register --format edn "$WORK/empty.jsonl"

# --format porcupine: empty or blank is an empty history (unknown); prose
# such as the README, or a JSONL history, is not a Porcupine log (254).
expect_rc 2 "nothing was checked" "$FAULTLINE_BIN" check -m cas-register --format porcupine "$WORK/empty.jsonl"
expect_rc 2 "nothing was checked" "$FAULTLINE_BIN" check -m cas-register --format porcupine "$WORK/blank.jsonl"
printf '\n# Notes\n\nSome prose, not a log.\n| a | b |\n' >"$WORK/prose.md"
expect_rc 254 "prose.md:2:1: error: no history event in 3 non-blank line\(s\)" \
  "$FAULTLINE_BIN" check -m cas-register --format porcupine "$WORK/prose.md"
grep -q "jepsen.util" "$WORK/err" || fail "the porcupine error does not say what was expected"
grep -q -- "--format jsonl" "$WORK/err" || fail "the porcupine error does not suggest --format jsonl"
expect_rc 254 "faults-only.jsonl:1:[0-9]+: error: .*looks like JSON: a faultline history needs --format jsonl" \
  "$FAULTLINE_BIN" check -m cas-register --format porcupine "$WORK/faults-only.jsonl"
# The README, whatever it holds, is not a Porcupine log.
readme="$FAULTLINE_SOURCE_DIR/README.md"
for model in cas-register kv mutex-fencing leader-per-term; do
  expect_rc 254 "README.md:[0-9]+:[0-9]+: error: " \
    "$FAULTLINE_BIN" check -m "$model" --format porcupine "$readme"
done

# A history with one operation is still checked (and valid).
printf '%s\n' '{"index":0,"type":"invoke","process":0,"f":"write","value":1}' \
  '{"index":1,"type":"ok","process":0,"f":"write","value":1}' >"$WORK/one.jsonl"
expect_rc 0 "valid" "$FAULTLINE_BIN" check -m cas-register "$WORK/one.jsonl"
echo "PASS: e2e_check_empty"
