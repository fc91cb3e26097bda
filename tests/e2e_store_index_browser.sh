#!/usr/bin/env bash
# The store index (store/index.html) in a real browser (headless Chromium):
# `faultline report --index` over a hand-made store of four runs, then the
# page is loaded with filters and a sort in its URL fragment, and the DOM
# after the page's script ran must hide exactly the runs the filter excludes
# and order the rest as asked. Also checks the new columns (seed, target,
# faultline version, operations, faults) and that a test name holding
# markup stays text. Needs chromium (Debian package `chromium`;
# scripts/install-deps.sh) and python3; not root.
source "$(dirname "$0")/lib.sh"
require_tool python3
source "$(dirname "$0")/lib_browser.sh"
setup_workdir

# run TEST RUN VERDICT TARGET SEED OK TOTAL_FAIL FAULTS
run() {
  local dir="$STORE/$1/$2"
  mkdir -p "$dir"
  local faults="" i
  for ((i = 0; i < $8; i++)); do faults+="${faults:+,}{\"f\":\"partition\"}"; done
  cat >"$dir/results.json" <<JSON
{"schema":"faultline.results/1","name":"$1","valid":"$3","seed":$5,
 "target":{"name":"$4","version":"$4 1.0"},
 "faultline":{"version":"9.8.7","commit":"abc"},
 "phases":[{"name":"workload","seconds":10}],
 "checkers":[{"checker":"stats","valid":"$3","summary":"s",
   "details":{"ops":{"ok":$6,"fail":$7,"info":0},"faults":[$faults]}}]}
JSON
  : >"$dir/history.jsonl"
}
run etcd-a 20261201T100000.000Z valid etcd 11 900 100 2
run etcd-b 20261201T110000.000Z invalid etcd 12 50 0 1
run redis-c 20261201T120000.000Z invalid redis 13 7000 0 3
run '<img src=x onerror=alert(1)>' 20261201T130000.000Z invalid etcd 14 300 0 0

"$FAULTLINE_BIN" report --index "$STORE" >"$WORK/index.txt" 2>&1 || { cat "$WORK/index.txt"; fail "report --index failed"; }
[ -s "$STORE/index.html" ] || fail "no store index written"

# page URL: the DOM after the page's script ran.
page() { chrome --virtual-time-budget=3000 --dump-dom "$1"; }

# rows DOM: "name|hidden" for every run row, in page order.
rows() {
  "$PY" - "$1" <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.rows = []; self.cell = None; self.row = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and a.get("class") == "run":
            self.row = ["hidden" in a, []]
        elif tag == "td" and self.row is not None:
            self.cell = []
    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.row[1].append("".join(self.cell)); self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row); self.row = None
    def handle_data(self, d):
        if self.cell is not None: self.cell.append(d)
p = P(); p.feed(open(sys.argv[1]).read())
for hidden, cells in p.rows:
    print("%s|%s|%s" % (cells[0], "hidden" if hidden else "shown", cells[6]))
PY
}

# Default view: every run shown, newest first, the script ran.
page "file://$STORE/index.html" >"$WORK/all.html"
grep -q 'data-ready="yes"' "$WORK/all.html" || { cat "$WORK/chromium.err"; fail "the index's script did not run"; }
rows "$WORK/all.html" >"$WORK/all.txt"
cat "$WORK/all.txt"
diff <(cut -d'|' -f1,2 "$WORK/all.txt") - <<'EOF2' || fail "default view: wrong rows or order"
<img src=x onerror=alert(1)>|shown
redis-c|shown
etcd-b|shown
etcd-a|shown
EOF2
grep -q '900 ok of 1,000' "$WORK/all.txt" || fail "operations column missing"
grep -q '<img src=x' "$STORE/index.html" && fail "a test name became markup"
for text in '>9.8.7<' '>13<' 'etcd 1.0'; do
  grep -q "$text" "$WORK/all.html" || fail "index lacks $text"
done

# Filtered and sorted from the fragment: invalid etcd runs, most ops first
# (hidden rows keep their sorted place).
page "file://$STORE/index.html#verdict=invalid&target=etcd&sort=-ops" >"$WORK/f.html"
rows "$WORK/f.html" >"$WORK/f.txt"
cat "$WORK/f.txt"
diff <(cut -d'|' -f1,2 "$WORK/f.txt") - <<'EOF2' || fail "filtered view: wrong rows or order"
redis-c|hidden
etcd-a|hidden
<img src=x onerror=alert(1)>|shown
etcd-b|shown
EOF2
grep -q 'showing 2 of 4' "$WORK/f.html" || fail "filtered view does not say how many runs it shows"

# Free text and an ascending numeric sort.
page "file://$STORE/index.html#q=ETCD&sort=faults" >"$WORK/q.html"
rows "$WORK/q.html" >"$WORK/q.txt"
diff <(grep shown "$WORK/q.txt" | cut -d'|' -f1) - <<'EOF2' || { cat "$WORK/q.txt"; fail "text filter or faults sort wrong"; }
<img src=x onerror=alert(1)>
etcd-b
etcd-a
EOF2
echo "PASS: store index sorts and filters in a real browser"
