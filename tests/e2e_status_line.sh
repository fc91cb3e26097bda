#!/usr/bin/env bash
# The live status line under a pseudo-terminal (raftkv, 3 netns nodes,
# subnet 10.77.96.0/24). stdout and stderr are the same terminal, as for a
# person running faultline: the status line is drawn on stdout with
# "\r\033[K", log lines go to stderr. Checks:
#  1. no log line is ever glued to the end of the status text: every log
#     line starts at the beginning of a terminal line (after a newline, or
#     after the "\r\033[K" that cleared the status);
#  2. the status shows the fault in force: every node is paused from 2 s to
#     the time limit (4 s), so "fault: pause n1,n2,n3 since";
#  3. at the time limit the clients' operations are still waiting on the
#     paused nodes, so the status says "waiting for N outstanding
#     operations" (N >= 1) before the heal lets them finish;
#  4. without a terminal no status line is drawn at all, and the wait at
#     the time limit is logged once instead.
# Needs root, python3, raftkv next to faultline.
source "$(dirname "$0")/lib.sh"
require_root
require_tool python3
require_raftkv
setup_workdir

cat >"$WORK/status-line.yaml" <<YAML
name: status-line
time_limit: 4
recovery: 0
expect: valid
cluster:
  nodes: 3
  subnet: 10.77.96.0/24
target:
  name: raftkv
  read_mode: readindex
workload:
  name: register
  keys: 2
  concurrency: 4
  rate: 200
  mix: {read: 50, write: 50}
  op_timeout_ms: 3000
nemesis:
  faults: [pause]
  interval: 2
  duration: 10
  targets: [all]
checker:
  timeout: 30
YAML

# Runs faultline on a 200-column pseudo-terminal; the raw bytes it wrote go
# to $WORK/tty.bin, its exit code to $WORK/tty.rc.
"$PY" - "$WORK" "$FAULTLINE_BIN" run "$WORK/status-line.yaml" --store "$STORE" \
  --index-dir "$INDEX" --seed 3 <<'PYEOF'
import fcntl, os, pty, struct, sys, termios
work, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    os.execv(argv[0], argv)
out = b""
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:  # EIO: the child closed the terminal
        break
    if not data:
        break
    out += data
_, status = os.waitpid(pid, 0)
open(os.path.join(work, "tty.bin"), "wb").write(out)
open(os.path.join(work, "tty.rc"), "w").write(str(os.waitstatus_to_exitcode(status)))
PYEOF
rc=$(cat "$WORK/tty.rc")
[ "$rc" -eq 0 ] || { tr '\r' '\n' <"$WORK/tty.bin" | tail -40; fail "the run exited $rc, expected 0"; }

"$PY" - "$WORK/tty.bin" <<'PYEOF'
import re, sys
raw = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
def fail(msg):
    print(raw.replace("\r", "\\r\n").replace("\x1b", "ESC")[-6000:])
    sys.exit("FAIL: " + msg)
# A log line: optional colour code, HH:MM:SS, a level letter.
logs = list(re.finditer(r"(?:\x1b\[[0-9;]*m)?\d\d:\d\d:\d\d [TDIWEC]\b", raw))
if len(logs) < 4:
    fail("only %d log lines on the terminal" % len(logs))
statuses = [m.start() for m in re.finditer(r"\r\x1b\[K", raw)]
if not statuses:
    fail("no status line was drawn")
for m in logs:
    before = raw[max(0, m.start() - 3):m.start()]
    if not (m.start() == 0 or before.endswith("\n") or before.endswith("\x1b[K")):
        line_start = raw.rfind("\n", 0, m.start()) + 1
        fail("a log line is glued to the end of %r" % raw[line_start:m.end()])
if not re.search(r"fault: pause n1,n2,n3 since \d+\.\d s", raw):
    fail("the status never showed the pause in force")
w = re.search(r"time limit reached, waiting for (\d+) outstanding operations?", raw)
if not w or int(w.group(1)) < 1:
    fail("no 'waiting for N outstanding operations' after the time limit")
print("%d log lines, %d status draws, none glued; waited for %s operations"
      % (len(logs), len(statuses), w.group(1)))
PYEOF

# Not a terminal: no status line is drawn on stdout at all.
run_config "$WORK/status-line.yaml" 3
[ "$RC" -eq 0 ] || { cat "$WORK/out.txt"; fail "the run without a terminal exited $RC"; }
if grep -q $'\033\[K' "$WORK/out.txt"; then fail "a status line was drawn without a terminal"; fi
grep -q "waiting for [0-9]* outstanding operation" "$WORK/out.txt" ||
  fail "without a terminal the wait for outstanding operations is not logged"
echo PASS
