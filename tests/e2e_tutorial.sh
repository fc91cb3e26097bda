#!/usr/bin/env bash
# docs/your-system.md, followed as a reader would (root; the Debian package
# redis-server):
#  1. every code block marked `<!-- file: PATH -->` is byte-identical to
#     PATH in the repository, and every file of examples/tutorial/ has one;
#  2. the extracted files are copied into a fresh directory and every shell
#     block marked `<!-- run: exit=N -->` runs there, in order, with
#     `faultline` being this build (plus the test's own active-run index)
#     and must exit N;
#  3. the verdicts the tutorial promises: redis-tutorial valid (with
#     pauses, kills and successful operations in its history);
#     redis-tutorial-no-aof, redis-tutorial-buggy and
#     redis-tutorial-replicas invalid, each found by the linearizable
#     checker; nothing of the runs is left behind.
# Network namespaces on 10.77.97.0/24 and 10.77.98.0/24 (the tutorial's
# configs). About 2.5 minutes (four 30 s runs).
source "$(dirname "$0")/lib.sh"
require_root
require_tool redis-server
setup_workdir
DOC="$FAULTLINE_SOURCE_DIR/docs/your-system.md"
DIR="$WORK/tutorial"
mkdir -p "$DIR" "$WORK/blocks"

# 1. Extract the marked blocks: files into $WORK/blocks/<path>, run blocks
# into $WORK/blocks/run-NN.sh with their expected exit code in run-NN.exit.
"$PY" - "$DOC" "$WORK/blocks" <<'PYEOF'
import os, re, sys
doc, out = sys.argv[1], sys.argv[2]
lines = open(doc, encoding="utf-8").read().split("\n")
marker = re.compile(r"^<!-- (file: (\S+)|run: exit=(\d+)) -->$")
runs = files = 0
i = 0
while i < len(lines):
    m = marker.match(lines[i])
    i += 1
    if not m:
        continue
    if i >= len(lines) or not lines[i].startswith("```"):
        sys.exit("%s:%d: a marker must be followed by a code block" % (doc, i))
    start = i + 1
    end = start
    while end < len(lines) and lines[end] != "```":
        end += 1
    if end == len(lines):
        sys.exit("%s:%d: unclosed code block" % (doc, i))
    text = "\n".join(lines[start:end]) + "\n"
    if m.group(2):
        path = os.path.join(out, "files", m.group(2))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w", encoding="utf-8").write(text)
        files += 1
    else:
        runs += 1
        open(os.path.join(out, "run-%02d.sh" % runs), "w").write(text)
        open(os.path.join(out, "run-%02d.exit" % runs), "w").write(m.group(3))
    i = end + 1
print("extracted %d files and %d run blocks" % (files, runs))
if files < 2 or runs < 4:
    sys.exit("expected at least 2 file blocks and 4 run blocks")
PYEOF

for f in $(cd "$WORK/blocks/files" && find . -type f | sort); do
  cmp -s "$WORK/blocks/files/$f" "$FAULTLINE_SOURCE_DIR/$f" ||
    fail "the block of $f in docs/your-system.md differs from $f: $(diff "$WORK/blocks/files/$f" "$FAULTLINE_SOURCE_DIR/$f" | head -5)"
done
for f in "$FAULTLINE_SOURCE_DIR"/examples/tutorial/*; do
  rel="examples/tutorial/$(basename "$f")"
  [ -f "$WORK/blocks/files/$rel" ] || fail "$rel has no code block in docs/your-system.md"
  cp "$f" "$DIR/"
done
echo "PASS: the tutorial's code blocks are examples/tutorial/"

# 2. The run blocks, in the tutorial's directory. Debian's python3 first on
# PATH, as on the fresh machine the tutorial is written for (a pyenv shim
# would slow every client start).
export PATH="/usr/bin:$PATH"
faultline() {
  if [ "${1:-}" = run ]; then
    "$FAULTLINE_BIN" "$@" --index-dir "$INDEX"
  else
    "$FAULTLINE_BIN" "$@"
  fi
}
export -f faultline
export FAULTLINE_BIN INDEX
for block in "$WORK"/blocks/run-*.sh; do
  want=$(cat "${block%.sh}.exit")
  set +e
  (cd "$DIR" && bash -euo pipefail "$block") >"$WORK/out.txt" 2>&1
  rc=$?
  set -e
  if [ "$rc" -ne "$want" ]; then
    cat "$WORK/out.txt"
    fail "$(basename "$block") exited $rc, the tutorial says $want: $(head -c 300 "$block")"
  fi
  echo "PASS: $(head -1 "$block") ... exit $rc"
done

# 3. The verdicts the tutorial promises, from the stored runs.
verdict_of() {
  RUN=$(readlink -f "$DIR/store/$1/latest")
  [ -f "$RUN/results.json" ] || fail "$1: no results.json in $DIR/store/$1/latest"
  validate_results "$RUN/results.json"
  VERDICT=$(json_get "$RUN/results.json" "j['valid']")
}
verdict_of redis-tutorial
[ "$VERDICT" = valid ] || fail "redis-tutorial: $VERDICT, the tutorial says valid"
"$PY" - "$RUN/history.jsonl" <<'PYEOF' || fail "redis-tutorial: the history lacks faults or successful operations"
import json, sys
faults, ok = set(), {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["process"] == "nemesis":
        faults.add(e.get("f"))
    elif e["type"] == "ok":
        ok[e["f"]] = ok.get(e["f"], 0) + 1
print("faults %s, ok %s" % (sorted(f for f in faults if f), ok))
assert "start-pause" in faults and "start-kill" in faults, faults
assert all(ok.get(f, 0) >= 20 for f in ("read", "write", "cas")), ok
PYEOF
for name in redis-tutorial-no-aof redis-tutorial-buggy redis-tutorial-replicas; do
  verdict_of "$name"
  [ "$VERDICT" = invalid ] || fail "$name: $VERDICT, the tutorial says invalid"
  [ "$(checker_verdict linearizable)" = invalid ] ||
    fail "$name: the linearizable checker says $(checker_verdict linearizable)"
done
echo "PASS: the verdicts are those the tutorial shows"

# Nothing of these runs is left behind.
for run in "$DIR"/store/*/latest; do
  id=$(ledger_values "$run/ledger.jsonl" netns name | sed -n 1p | cut -d- -f2)
  [ -n "$id" ] || fail "$run: the ledger records no namespace"
  [ -z "$(leftovers_for_run "$id")" ] || fail "resources remain: $(leftovers_for_run "$id")"
done
[ -z "$(ls -A "$INDEX")" ] || fail "a run is still listed as active"
echo "PASS: docs/your-system.md end to end"
