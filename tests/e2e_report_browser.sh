#!/usr/bin/env bash
# report.html in a real browser (headless Chromium): a valid, an invalid
# (stale read), a lock, an election and a 100,000-op report, each generated
# by `faultline report` from a fixed history in a hand-made run directory.
# Checks the verdict, the violation in its context (the kind, the sentence,
# each op's node, times in seconds, the fault in force shaded), the holders
# chart of the lock run (a token granted twice marked, the overlap fencing
# made harmless not red), the election run's leaders per term (the term with
# two leaders marked), the timeline and chart SVGs, that the injected-script
# value is shown as text and never runs, that no request leaves the page,
# and how long the 100k-op report takes to render. Saves screenshots as artifacts in
# $FAULTLINE_ARTIFACT_DIR (default: report-artifacts/ next to the binary).
# Needs chromium (Debian package `chromium`; scripts/install-deps.sh) and
# python3; not root.
source "$(dirname "$0")/lib.sh"
require_tool python3
source "$(dirname "$0")/lib_browser.sh"
setup_workdir
ART="${FAULTLINE_ARTIFACT_DIR:-$(dirname "$FAULTLINE_BIN")/report-artifacts}"
mkdir -p "$ART"
GEN="$FAULTLINE_SOURCE_DIR/tests/report_histories.py"

# make_run NAME KIND [WORKLOAD]: a run directory with config.yaml (workload
# register unless WORKLOAD) and a fixed history.
make_run() {
  local dir="$STORE/$1/20260101T000000.000Z" size="keys: 10"
  [ "${3:-register}" = register ] || size="locks: 1"
  mkdir -p "$dir/nodes/n1"
  cat >"$dir/config.yaml" <<EOF
name: $1
time_limit: 20
cluster:
  nodes: 3
target:
  name: etcd
workload:
  name: ${3:-register}
  $size
  concurrency: 10
EOF
  python3 "$GEN" "$2" "$dir/history.jsonl"
  echo "node log of n1 <b>not markup</b>" >"$dir/nodes/n1/etcd.log"
  echo "$dir"
}

valid=$(make_run report-valid valid)
invalid=$(make_run report-invalid invalid)
big=$(make_run report-big big)
lock=$(make_run report-lock lock lock)
election=$(make_run report-election election election)

set +e
"$FAULTLINE_BIN" report "$valid" >"$WORK/valid.txt" 2>&1; rc_valid=$?
"$FAULTLINE_BIN" report "$invalid" >"$WORK/invalid.txt" 2>&1; rc_invalid=$?
t0=$(date +%s%N)
"$FAULTLINE_BIN" report "$big" >"$WORK/big.txt" 2>&1; rc_big=$?
t1=$(date +%s%N)
"$FAULTLINE_BIN" report "$lock" >"$WORK/lock.txt" 2>&1; rc_lock=$?
"$FAULTLINE_BIN" report "$election" >"$WORK/election.txt" 2>&1; rc_election=$?
set -e
cat "$WORK/valid.txt" "$WORK/invalid.txt" "$WORK/big.txt" "$WORK/lock.txt" "$WORK/election.txt"
[ "$rc_lock" -eq 1 ] || fail "report of the lock run exited $rc_lock, expected 1"
[ "$rc_election" -eq 1 ] || fail "report of the election run exited $rc_election, expected 1"
# The terminal leads with what was unsafe.
grep -q 'mutex-fencing  *invalid  *unsafe: fencing token 3 of "l" was granted twice' "$WORK/lock.txt" \
  || fail "lock: the terminal does not lead with the duplicate token"
grep -q 'leader-per-term  *invalid  *unsafe: two leaders in term 5: n1' "$WORK/election.txt" \
  || fail "election: the terminal does not lead with the two leaders of term 5"
[ "$rc_valid" -eq 0 ] || fail "report of the valid run exited $rc_valid"
[ "$rc_invalid" -eq 1 ] || fail "report of the invalid run exited $rc_invalid, expected 1"
[ "$rc_big" -eq 0 ] || fail "report of the 100k-op run exited $rc_big"
echo "faultline report (check + reports) of 100,000 ops: $(( (t1 - t0) / 1000000 )) ms," \
  "report.html $(stat -c %s "$big/report.html") bytes"
for d in "$valid" "$invalid" "$big" "$lock" "$election"; do
  validate_results "$d/results.json"
  [ -s "$d/junit.xml" ] || fail "$d: no junit.xml"
  [ -s "$d/report.html" ] || fail "$d: no report.html"
done
[ -s "$STORE/index.html" ] || fail "no store index"
grep -q 'report-invalid/20260101T000000.000Z/report.html' "$STORE/index.html" \
  || fail "the store index does not link the invalid run's report"

# Nothing in the pages points off the machine (the SVG namespace name is not
# a request).
for d in "$valid" "$invalid" "$big" "$lock" "$election"; do
  if grep -oE '(https?|wss?|ftp)://[^"'"'"' )<]*' "$d/report.html" | grep -v '^http://www.w3.org/2000/svg$' >"$WORK/urls.txt"; then
    cat "$WORK/urls.txt"
    fail "$d/report.html names a network URL"
  fi
done
# (A network URL, or a protocol-relative one in a link; the index's script
# has // comments.)
grep -qE '(https?|wss?|ftp)://|(src|href|action)="//' "$STORE/index.html" && fail "store index names a URL"

# dump NAME DIR: the DOM after the page's script ran, and a net log.
dump() {
  chrome --virtual-time-budget=5000 --log-net-log="$WORK/$1.netlog.json" \
    --dump-dom "file://$2/report.html" >"$WORK/$1.dom.html"
  [ -s "$WORK/$1.dom.html" ] || { cat "$WORK/chromium.err"; fail "$1: chromium dumped no DOM"; }
}
dump valid "$valid"
dump invalid "$invalid"
dump lock "$lock"
dump election "$election"

# section DOM ID: the HTML of <section id="ID"> in a dumped DOM.
section() {
  python3 - "$1" "$2" <<'EOF2'
import sys
s = open(sys.argv[1]).read()
i = s.find('<section id="%s"' % sys.argv[2])
if i < 0:
    sys.exit("no section " + sys.argv[2])
print(s[i:s.find("</section>", i)])
EOF2
}

# The valid report.
dom="$WORK/valid.dom.html"
grep -q 'id="verdict" class="verdict valid">valid<' "$dom" || fail "valid: verdict not shown"
grep -q 'data-rendered="yes"' "$dom" || fail "valid: the script did not finish drawing"
for chart in timeline latency throughput; do
  grep -q "<svg[^>]*class=\"$chart\"" "$dom" || fail "valid: no $chart SVG"
done
grep -q 'class="fault"' "$dom" || fail "valid: no fault window shaded"
grep -q 'class="fault-label"' "$dom" || fail "valid: fault windows not labelled"
grep -q '<section id="violation" hidden' "$dom" || fail "valid: a violation section is shown"

# The invalid report: the violation is drawn, the payload is text.
dom="$WORK/invalid.dom.html"
grep -q 'id="verdict" class="verdict invalid">invalid<' "$dom" || fail "invalid: verdict not shown"
grep -q '<section id="violation">' "$dom" || fail "invalid: violation section hidden"
grep -q '<svg[^>]*class="violation"' "$dom" || fail "invalid: no violation SVG"
grep -q 'class="vop rejected"' "$dom" || fail "invalid: the rejected read is not drawn"
grep -q 'key "k0"' "$dom" || fail "invalid: the key is not named"
grep -q '<title>PWNED' "$dom" && fail "invalid: the injected script ran (title changed)"
grep -q 'data-pwned="1"' "$dom" && fail "invalid: the injected onerror handler ran"
grep -q '<img' "$dom" && fail "invalid: the injected <img> became an element"
grep -qF "&lt;/script&gt;&lt;script&gt;document.title='PWNED'&lt;/script&gt;&lt;img src=x" "$dom" \
  || fail "invalid: the payload is not shown as text"
grep -q '<title>report-invalid — invalid — faultline</title>' "$dom" || fail "invalid: title changed"
# The violation in its context: the kind, the sentence, the node that
# served each op, times in seconds since start, and the partition in force
# shaded behind the ops.
section "$dom" violation >"$WORK/violation.html"
v="$WORK/violation.html"
grep -q '<p class="vkind">Stale read on key "k0" at 0\.044 s</p>' "$v" || fail "invalid: the panel does not name the kind"
grep -q '<p class="vcontext">n1, cut off from the majority since 0\.01 s, served 1 at 0\.04 s; ' "$v" \
  || fail "invalid: the panel does not lead with the context sentence"
grep -q 'class="vlabel"[^>]*>n1: read → 1<' "$v" || fail "invalid: the stale read's node is not shown"
grep -q 'class="vlabel"[^>]*>n2: write ' "$v" || fail "invalid: the overwriting write's node is not shown"
grep -q 'class="vlabel"[^>]*>n1: write 1<' "$v" || fail "invalid: the write of the stale value is not shown"
grep -q 'class="vtime">0\.040 s – 0\.044 s · served the stale value · during partition<' "$v" \
  || fail "invalid: the stale read's times in seconds are not shown"
grep -q 'newest write acknowledged before the read' "$v" || fail "invalid: the overwrite is not named"
grep -q '<rect[^>]*class="fault vfault"><title>partition: n1 cut off from the majority' "$v" \
  || fail "invalid: the partition in force is not shaded in the violation panel"
grep -q 'event [0-9]' <(grep -o 'class="vtime">[^<]*' "$v") && fail "invalid: the panel gives event indices for times"

# The lock run: a token granted twice is marked on the holders chart; the
# overlap that fencing made harmless is drawn, not red, and worded as safe.
dom="$WORK/lock.dom.html"
grep -q 'data-rendered="yes"' "$dom" || fail "lock: the script did not finish drawing"
section "$dom" holds-section >"$WORK/holds.html"
h="$WORK/holds.html"
[ "$(grep -o '<circle[^>]*class="token-mark duplicate"' "$h" | wc -l)" -eq 2 ] \
  || fail "lock: the two holds of token 3 are not both marked"
[ "$(grep -o 'class="hold bad-token"' "$h" | wc -l)" -eq 2 ] || fail "lock: the bars of token 3 are not outlined"
grep -q '<rect[^>]*fill="#7f8c8d"[^>]*class="overlap harmless"><title>two holders of "l": 2\.00 s – 2\.50 s' "$h" \
  || fail "lock: the harmless overlap is not drawn (grey)"
grep -q 'harmless: the store rejected p0.s stale token 1' "$h" || fail "lock: the harmless overlap does not say why"
grep -q 'class="overlap unsafe"' "$h" && fail "lock: the harmless overlap is drawn as unsafe (red)"
grep -q '<pre class="explanation">unsafe: fencing token 3 of "l" was granted twice: to p2 at 3\.050 s and to p3 at 4\.050 s' "$dom" \
  || fail "lock: the explanation does not lead with what was unsafe"
grep -q 'safe: overlap of p0 and p1 on "l" from 2\.000 s to 2\.500 s was harmless: the store rejected p0.s stale token 1' "$dom" \
  || fail "lock: the harmless overlap is not worded as safe"

# The election run: the leaders per term, the term with two leaders marked.
dom="$WORK/election.dom.html"
grep -q 'data-rendered="yes"' "$dom" || fail "election: the script did not finish drawing"
section "$dom" leaders-section >"$WORK/leaders.html"
l="$WORK/leaders.html"
grep -q '<tr class="conflict-term"><td>term 5</td><td>n1, n3</td>' "$l" || fail "election: term 5 is not marked with n1 and n3"
[ "$(grep -o 'class="conflict-term"' "$l" | wc -l)" -eq 1 ] || fail "election: another term is marked too"
grep -q '<tr><td>term 6</td><td>n2</td>' "$l" || fail "election: term 6 is not listed with its one leader"
[ "$(grep -o 'class="lead conflict-term"' "$l" | wc -l)" -ge 2 ] || fail "election: the bars of term 5 are not marked"
grep -q '<pre class="explanation">unsafe: two leaders in term 5: n1' "$dom" \
  || fail "election: the explanation does not lead with what was unsafe"

# page_requests NETLOG: the URLs the page itself asked for (Chromium's own
# background requests carry initiator "not an origin"; all of them fail
# anyway, since every host resolves to nothing), except the page's own file.
page_requests() {
  python3 - "$1" <<'EOF2'
import json, sys
log = json.load(open(sys.argv[1]))
start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
for e in log["events"]:
    p = e.get("params", {})
    if e["type"] != start or "url" not in p:
        continue  # the end of a job carries only its error
    if p.get("initiator") == "not an origin":
        continue
    if not p.get("url", "").startswith("file://"):
        print(p.get("url"))
EOF2
}
# The detector sees a request a page makes (positive control).
chrome --virtual-time-budget=2000 --log-net-log="$WORK/control.netlog.json" --dump-dom \
  "data:text/html,<img src='http://control.invalid/x.png'>" >/dev/null
page_requests "$WORK/control.netlog.json" | grep -q 'control.invalid' \
  || fail "the net-log check does not see a page's request"
# No request left the reports.
for n in valid invalid lock election; do
  page_requests "$WORK/$n.netlog.json" >"$WORK/$n.requests"
  [ ! -s "$WORK/$n.requests" ] || { cat "$WORK/$n.requests"; fail "$n: the page made requests"; }
done

# Screenshots as artifacts.
chrome --window-size=1400,2200 --virtual-time-budget=5000 \
  --screenshot="$ART/report-invalid.png" "file://$invalid/report.html" >/dev/null
[ -s "$ART/report-invalid.png" ] || fail "no screenshot"
cp "$invalid/report.html" "$ART/report-invalid.html"
for n in lock election; do
  d=$lock; [ "$n" = election ] && d=$election
  chrome --window-size=1400,2200 --virtual-time-budget=5000 \
    --screenshot="$ART/report-$n.png" "file://$d/report.html" >/dev/null
  [ -s "$ART/report-$n.png" ] || fail "no screenshot of the $n report"
  cp "$d/report.html" "$ART/report-$n.html"
done

# The 100,000-op report: opens and renders in a few seconds.
t0=$(date +%s%N)
chrome --dump-dom "file://$big/report.html" >"$WORK/big.dom.html"
t1=$(date +%s%N)
wall_ms=$(( (t1 - t0) / 1000000 ))
grep -q 'data-rendered="yes"' "$WORK/big.dom.html" || fail "big: the script did not finish drawing"
render_ms=$(grep -oE 'data-render-ms="[0-9]+"' "$WORK/big.dom.html" | grep -oE '[0-9]+')
nodes=$(grep -oE '<(rect|circle|polyline)' "$WORK/big.dom.html" | wc -l)
echo "100,000-op report: rendered in ${render_ms} ms after navigation start" \
  "(browser start to DOM dump: ${wall_ms} ms), ${nodes} chart elements"
[ "$nodes" -lt 30000 ] || fail "big: $nodes chart elements; the charts must aggregate"
[ "$render_ms" -lt 5000 ] || fail "big: rendering took ${render_ms} ms (limit 5000)"
chrome --window-size=1400,2200 --screenshot="$ART/report-100k.png" \
  "file://$big/report.html" >/dev/null
echo "artifacts: $ART"
echo "PASS: reports render offline, the payload stays text, the 100k-op report renders in ${render_ms} ms"
