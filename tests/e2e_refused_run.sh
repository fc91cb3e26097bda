#!/usr/bin/env bash
# A run refused because another run holds its subnet (10.77.121.0/24) exits
# 254, creates no run directory, leaves `store/<test>/latest` where it was,
# and its message names the run that holds the subnet and the command that
# heals it. Checked with a real raftkv run holding the subnet, for a second
# run of the same test (same store) and for the first run of another test
# (no store/<test>/ appears at all). Needs root and raftkv. About 10 s.
source "$(dirname "$0")/lib.sh"
require_root
require_raftkv
setup_workdir
interrupt_run_on_exit
E2E_SUBNET=10.77.121.0/24
cfg=$(local_copy "$FAULTLINE_SOURCE_DIR/configs/raftkv-quick.yaml" 600 \
  's#^name: .*#name: refused#' 's#^  faults: .*#  faults: [partition]#')
other="$WORK/other.yaml"
sed 's#^name: .*#name: refused-other#' "$cfg" >"$other"

# The holder: a run on the subnet, going.
run_bg "$cfg" refused
await_history "$pid" "$run" '"type":"ok"' "a first operation"
holder=$(readlink -f "$run")
before=$(ls "$STORE/refused")

# refuse CONFIG: runs CONFIG (same subnet) in the foreground; it must be
# refused with 254, naming the holder and its heal command.
refuse() {
  local rc
  set +e
  "$FAULTLINE_BIN" run "$1" --store "$STORE" --index-dir "$INDEX" --seed 9 \
    >"$WORK/refused.txt" 2>&1
  rc=$?
  set -e
  cat "$WORK/refused.txt"
  [ "$rc" -eq 254 ] || fail "$1: the refused run exited $rc, expected 254"
  grep -q "refused: cluster: netns cluster: subnet $E2E_SUBNET overlaps" "$WORK/refused.txt" \
    || fail "$1: the refusal does not say the subnet is in use"
  grep -qF "held by the run $holder " "$WORK/refused.txt" || fail "$1: the refusal does not name the holder $holder"
  grep -qF "\`faultline heal $holder\`" "$WORK/refused.txt" || fail "$1: the refusal does not give the holder's heal command"
  grep -q "no run directory was kept" "$WORK/refused.txt" || fail "$1: the refusal does not say nothing was kept"
}

refuse "$cfg"
[ "$(ls "$STORE/refused")" = "$before" ] || fail "the refused run left a directory: $(ls "$STORE/refused")"
[ "$(readlink -f "$STORE/refused/latest")" = "$holder" ] || fail "the refused run moved latest to $(readlink -f "$STORE/refused/latest")"
[ "$(ls "$INDEX" | wc -l)" -eq 1 ] || fail "the refused run is listed as active: $(ls "$INDEX")"

refuse "$other"
[ ! -e "$STORE/refused-other" ] || fail "the refused first run of a test left $(ls -R "$STORE/refused-other")"

# The holder itself was not disturbed: it still runs and ends as usual.
kill -0 "$pid" || fail "the holder stopped"
kill -INT "$pid"
set +e; wait "$pid"; rc=$?; set -e
pid=""
[ "$rc" -eq 130 ] || { cat "$WORK/out.txt"; fail "the holder exited $rc after SIGINT, expected 130"; }
[ "$(json_get "$holder/results.json" "j['valid']")" = valid ] || fail "the holder is not valid"
[ -z "$(ls -A "$INDEX")" ] || fail "a run is still listed as active"
echo "PASS: a refused run exits 254, keeps nothing, leaves latest, names the holder and its heal"
