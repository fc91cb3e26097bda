#!/usr/bin/env bash
# `faultline --version` prints the CMake project version and the git commit
# the binary was built from, and every result faultline writes records the
# same two next to the target's version: results.json (`faultline`),
# junit.xml (property `faultline`) and report.html (the run's facts). The
# results come from `faultline analyze` of a hand-made run directory, so no
# cluster is needed (and no root). About 1 s.
source "$(dirname "$0")/lib.sh"
setup_workdir

out=$("$FAULTLINE_BIN" --version) || fail "faultline --version exited non-zero"
echo "$out"
[[ "$out" =~ ^faultline\ ([0-9]+\.[0-9]+\.[0-9]+)\ \(commit\ ([0-9a-f]{12}|unknown)\)$ ]] \
  || fail "--version printed '$out', expected 'faultline X.Y.Z (commit HASH)'"
version="${BASH_REMATCH[1]}" commit="${BASH_REMATCH[2]}"
want=$(sed -n 's/^project(faultline VERSION \([0-9.]*\) .*/\1/p' "$FAULTLINE_SOURCE_DIR/CMakeLists.txt")
[ "$version" = "$want" ] || fail "--version says $version, CMakeLists.txt says $want"
if git -C "$FAULTLINE_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1; then
  # Built from this checkout: a commit, and one the repository knows.
  [ "$commit" != unknown ] || fail "built in a git checkout, yet the commit is unknown"
  git -C "$FAULTLINE_SOURCE_DIR" cat-file -e "$commit^{commit}" 2>/dev/null \
    || fail "commit $commit is not in $FAULTLINE_SOURCE_DIR"
fi

run="$WORK/store/version/20260101T000000.000Z"
mkdir -p "$run"
cp "$FAULTLINE_SOURCE_DIR/configs/raftkv-quick.yaml" "$run/config.yaml"
cat >"$run/history.jsonl" <<'JSONL'
{"index":0,"time":1000,"process":0,"type":"invoke","f":"write","key":"k0","value":1}
{"index":1,"time":2000,"process":0,"type":"ok","f":"write","key":"k0","value":1}
{"index":2,"time":3000,"process":1,"type":"invoke","f":"read","key":"k0","value":null}
{"index":3,"time":4000,"process":1,"type":"ok","f":"read","key":"k0","value":1}
JSONL
set +e
"$FAULTLINE_BIN" analyze "$run" >"$WORK/analyze.txt" 2>&1
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat "$WORK/analyze.txt"; fail "analyze of a valid hand-made run exited $rc"; }
validate_results "$run/results.json"
[ "$(json_get "$run/results.json" "j['faultline']['version']")" = "$version" ] || fail "results.json does not record version $version"
[ "$(json_get "$run/results.json" "j['faultline']['commit']")" = "$commit" ] || fail "results.json does not record commit $commit"
grep -qF "<property name=\"faultline\" value=\"$version (commit $commit)\"/>" "$run/junit.xml" \
  || fail "junit.xml does not record faultline $version (commit $commit)"
grep -qF "<tr><th>faultline</th><td>$version (commit $commit)</td></tr>" "$run/report.html" \
  || fail "report.html does not record faultline $version (commit $commit)"
echo "PASS: --version is '$out'; results.json, junit.xml and report.html record it"
