#!/usr/bin/env bash
# The reference exec clients (examples/clients/python/raftkv_client.py and
# examples/clients/node/raftkv_client.js) speak exec protocol 1
# (docs/exec-protocol.md) to a real 3-node raftkv on loopback
# (127.0.0.31..33): hello; write through every node (followers redirect to
# the leader), read back, cas ok and mismatch, values of every JSON type;
# acquire / renew / release with a second client holding off; f: status
# from every node names one leader; fail when the node is unreachable; exit
# when stdin closes.
# Needs: python3, node (nodejs), the raftkv binary next to faultline.
source "$(dirname "$0")/lib.sh"
require_tool python3
command -v node >/dev/null 2>&1 ||
  fail "this test needs 'node' (Debian package nodejs) for the Node.js reference client"
require_raftkv
RAFTKV="$(dirname "$FAULTLINE_BIN")/raftkv"
RK="$FAULTLINE_SOURCE_DIR/targets/raftkv/server/raftkv_client.py"
PY_CLIENT="$FAULTLINE_SOURCE_DIR/examples/clients/python/raftkv_client.py"
NODE_CLIENT="$FAULTLINE_SOURCE_DIR/examples/clients/node/raftkv_client.js"

WORK="$(mktemp -d /tmp/exec-ref-e2e.XXXXXX)"
PIDS=()
cleanup() {
  local rc=$?
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$rc" -ne 0 ]; then
    for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 20 "$f"; }; done
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

PEER_PORT=27301
CLIENT_PORT=26591
ip() { echo "127.0.0.$((30 + $1))"; }
PEERS="1=$(ip 1):$PEER_PORT/$CLIENT_PORT,2=$(ip 2):$PEER_PORT/$CLIENT_PORT,3=$(ip 3):$PEER_PORT/$CLIENT_PORT"
for i in 1 2 3; do
  "$RAFTKV" --id "$i" --peers "$PEERS" --listen "$(ip "$i"):$CLIENT_PORT" \
    --data-dir "$WORK/n$i" --request-timeout-ms 1500 2>>"$WORK/raftkv-n$i.log" &
  PIDS+=($!)
done
"$PY" "$RK" await-leader 15 "$(ip 1):$CLIENT_PORT" "$(ip 2):$CLIENT_PORT" \
  "$(ip 3):$CLIENT_PORT" >/dev/null || fail "no raftkv leader within 15 s"

# drive LABEL ARGV...: runs the scenario against one reference client.
drive() {
  "$PY" - "$WORK" "$CLIENT_PORT" "$@" <<'PYEOF'
import json, os, select, subprocess, sys, time

work, port, label, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
ips = ["127.0.0.31", "127.0.0.32", "127.0.0.33"]
errors = []


class Client:
    def __init__(self, ip, port, node):
        env = dict(os.environ, FAULTLINE_PROTOCOL="1", FAULTLINE_NODE=node,
                   FAULTLINE_NODE_IP=ip, FAULTLINE_PORT_CLIENT=str(port),
                   FAULTLINE_OP_TIMEOUT_MS="3000")
        self.log = open(os.path.join(work, "%s-%s.log" % (label, node)), "ab")
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.log,
                                  env=env)
        self.id = 0
        hello = self.exchange({"type": "hello", "protocol": 1,
                               "workload": "register", "node": node})
        if hello != {"type": "hello", "protocol": 1}:
            sys.exit("%s: bad hello answer %r" % (label, hello))

    def exchange(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        r, _, _ = select.select([self.p.stdout], [], [], 10)
        if not r:
            sys.exit("%s: no answer to %r within 10 s" % (label, msg))
        line = self.p.stdout.readline()
        if not line.endswith(b"\n"):
            sys.exit("%s: client ended: %r" % (label, line))
        return json.loads(line)

    def op(self, f, key, value=None, timeout_ms=3000):
        self.id += 1
        a = self.exchange({"type": "invoke", "id": self.id, "f": f,
                           "key": key, "value": value,
                           "timeout_ms": timeout_ms})
        if a.get("id") != self.id or a.get("type") not in ("ok", "fail", "info"):
            sys.exit("%s: invalid answer %r" % (label, a))
        return a

    def close(self):
        self.p.stdin.close()
        try:
            rc = self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            sys.exit("%s: client did not exit when stdin closed" % label)
        if rc != 0:
            sys.exit("%s: client exited %d after stdin closed" % (label, rc))


def expect(what, answer, type_, **fields):
    ok = answer.get("type") == type_ and all(
        answer.get(k) == v for k, v in fields.items())
    if not ok:
        errors.append("%s: %s: got %r, expected %s %r" % (label, what, answer,
                                                         type_, fields))


clients = [Client(ip, port, "n%d" % (i + 1)) for i, ip in enumerate(ips)]
# Writes through every node: followers answer NOTLEADER, the client follows.
for i, c in enumerate(clients):
    key = "%s-w%d" % (label, i)
    expect("write via n%d" % (i + 1), c.op("write", key, 100 + i), "ok")
    expect("read via n%d" % (i + 1), c.op("read", key), "ok", value=100 + i)
c = clients[0]
k = label + "-cas"
expect("read absent", c.op("read", k), "ok", value=None)
expect("cas from null", c.op("cas", k, [None, 1]), "fail")
expect("write", c.op("write", k, 17), "ok")
expect("cas", c.op("cas", k, [17, 18]), "ok")
expect("cas mismatch", c.op("cas", k, [17, 19]), "fail", error="mismatch")
expect("read after cas", clients[2].op("read", k), "ok", value=18)
expect("integer key", c.op("write", 7, "seven"), "ok")
expect("integer key read", clients[1].op("read", 7), "ok", value="seven")
for v in ["text \"quoted\" é", 2.5, True, [1, None, "x"], {"a": {"b": [1]}}, None]:
    expect("write %r" % (v,), c.op("write", k, v), "ok")
    expect("read %r" % (v,), clients[1].op("read", k), "ok", value=v)
expect("unknown f", c.op("frobnicate", k), "fail")

# f: status: each node's own view; exactly one says leader, and every node
# names that one (its 1-based id) in the same term.
views = [cl.op("status", None) for cl in clients]
for i, v in enumerate(views):
    val = v.get("value") if isinstance(v.get("value"), dict) else {}
    if v.get("type") != "ok" or val.get("role") not in ("leader", "follower"):
        errors.append("%s: status via n%d: %r" % (label, i + 1, v))
leaders = [i + 1 for i, v in enumerate(views)
           if isinstance(v.get("value"), dict) and v["value"].get("role") == "leader"]
if len(leaders) == 1:
    for i, v in enumerate(views):
        val = v.get("value") or {}
        if val.get("leader_id") != leaders[0] or not isinstance(val.get("term"), int):
            errors.append("%s: n%d's status %r does not name leader n%d with a term"
                          % (label, i + 1, v, leaders[0]))
else:
    errors.append("%s: %d nodes say leader: %r" % (label, len(leaders), views))

# Locks: two clients on different nodes.
lock = label + "-lock"
a = clients[0].op("acquire", lock, 5000)
expect("acquire", a, "ok")
token = a.get("value")
if not isinstance(token, int) or isinstance(token, bool):
    errors.append("%s: acquire token %r is not an integer" % (label, token))
expect("acquire while held", clients[1].op("acquire", lock, 5000), "fail")
expect("renew", clients[0].op("renew", lock, token), "ok")
expect("renew by a non-holder", clients[1].op("renew", lock, token), "fail")
expect("release", clients[0].op("release", lock, token), "ok")
r = clients[0].op("renew", lock, token)
expect("renew after release", r, "fail")
if not str(r.get("error", "")).startswith("not-held"):
    errors.append("%s: renew after release error %r" % (label, r.get("error")))
b = clients[1].op("acquire", lock, 5000)
expect("acquire after release", b, "ok")
if isinstance(b.get("value"), int) and isinstance(token, int) and b["value"] <= token:
    errors.append("%s: token did not grow: %r then %r" % (label, token, b["value"]))
expect("release b", clients[1].op("release", lock, b.get("value")), "ok")
for cl in clients:
    cl.close()

# Nothing listens on 127.0.0.39: the connection is never made.
down = Client("127.0.0.39", port, "n9")
expect("write to a node that is down", down.op("write", k, 1, 1000), "fail")
expect("read from a node that is down", down.op("read", k, None, 1000), "fail")
expect("status of a node that is down", down.op("status", None, None, 1000), "fail")
down.close()

if errors:
    sys.exit("\n".join(errors))
print("%s: all checks passed" % label)
PYEOF
}

# The clients read their node from FAULTLINE_NODE_IP / FAULTLINE_PORT_CLIENT.
drive python "$PY" "$PY_CLIENT" || fail "the Python reference client failed"
drive node node "$NODE_CLIENT" || fail "the Node.js reference client failed"
echo "PASS: both reference clients speak exec protocol 1 to raftkv"
