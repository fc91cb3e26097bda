#!/usr/bin/env python3
"""faultline exec client (protocol 1) for raftkv, over RESP2. Stdlib only.

Usage: raftkv_client.py [HOST PORT]
HOST and PORT default to $FAULTLINE_NODE_IP and $FAULTLINE_PORT_CLIENT.
Speaks docs/exec-protocol.md on stdin/stdout; diagnostics go to stderr.

Semantics mirror faultline's built-in client (targets/raftkv/raftkv_client.h):
  read     GET r/<key> on this client's node. Bulk -> ok value (JSON text
           decoded; other text as a string), nil -> ok null. A timeout is
           info "timeout"; any other failure is fail (a read has no effect).
  write    SET r/<key> <value as compact JSON>.
  cas      CAS r/<key> <old> <new>: :1 -> ok, :0 -> fail "mismatch".
           A -NOTLEADER <id> <host:port> reply is followed once, to the
           named leader (that connection is kept for later redirects).
           fail (certainly no effect): could not connect, -NOTLEADER after
           the redirect, -NOLEADER, -LOCKED, -ERR, -NOTOWNER, -FENCED,
           -WRONGTYPE. info (maybe an effect): timeout, connection lost
           after sending, -TIMEOUT, -SHUTDOWN, any other reply.
  acquire  LOCK <name> <owner> <ttl>, value = ttl ms: :token -> ok token;
           -LOCKED -> fail. A fresh owner id per acquire.
  renew    RENEW <name> <owner> <token> <ttl>: +OK -> ok; -NOTOWNER ->
           fail "not-held: ...".
  release  UNLOCK <name> <owner> <token>: as renew.
  status   STATUS on this client's node -> ok {role, term, leader_id,
           commit, last_index} (the fields its reply has); fail when the
           node does not answer. Answered for target.status.client.
  txn      (list-append and rw-register workloads) TXN with one triple per
           micro-op, in order: ["append", k, v] -> APPEND t/<k> v,
           ["w", k, v] -> W t/<k> v (v an integer or string, sent as its
           text), ["r", k, null] -> R t/<k> -. The reply is an array with
           one element per micro-op: +OK for APPEND and W; for R a list of
           bulk strings, a bulk string or nil. ok value = the micro-ops with
           every read filled in: a list (each element an integer when its
           text is one, as written, else a string), a string or integer,
           and nil as [] (workload list-append) or null (rw-register).
           Errors as for write and cas, with the redirect; a reply of
           another shape is info "unexpected reply". A malformed txn (not
           a non-empty list of [f, k, v], a key that is not an integer or
           string, another f, a v that is not an integer or string) is
           fail, nothing sent.
  The collection workloads (set, bank, counter; docs/collections.md), with
  the redirect and the fail/info rules of write, reads included:
  add      (set) TXN APPEND c/set v (v an integer or string): [+OK] -> ok
           with the element. (counter) INCRBY c/counter n: :total -> ok
           with the increment n.
  read     (set) TXN R c/set - -> ok with the list (nil: []); (counter)
           TXN R c/counter - -> ok with the integer (nil: 0); (bank) one
           TXN R b/0 - R b/1 - ... -> ok {"0": balance, ...}, an absent
           account left out (the checker reports it), a balance that is not
           an integer info "unexpected reply".
  transfer (bank) XFER b/<from> b/<to> amount: :1 -> ok with the transfer,
           :0 -> fail "insufficient funds", -ERR -> fail.
  Before its first bank operation the client creates the accounts with
  MSETNX b/0 x0 b/1 x1 ... (total/accounts each, the remainder on b/0):
  one log entry that sets every key only when none exists, so whichever
  MSETNX applies first creates them all and every later one changes
  nothing (:0). Until an MSETNX got :1 or :0 back, the operation is fail
  "bank init: ..." and is not sent; the next operation tries again. The
  accounts and total come from the hello (else $FAULTLINE_ACCOUNTS and
  $FAULTLINE_TOTAL).
  Keys: null -> "r/_", a string or integer as is; a cas from null is fail
  (raftkv's CAS never matches an absent key), as is an unknown f. The
  workload comes from the hello (else $FAULTLINE_WORKLOAD).
"""
import json
import os
import random
import select
import socket
import sys
import time

PROTOCOL = 1
NO_EFFECT = {"NOTLEADER", "NOLEADER", "LOCKED", "ERR", "NOTOWNER", "FENCED",
             "WRONGTYPE"}


def log(msg):
    sys.stderr.write("raftkv_client.py: %s\n" % msg)
    sys.stderr.flush()


def encode(value):
    """A register value as raftkv stores it: its compact JSON text."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def decode(text):
    try:
        return json.loads(text)
    except ValueError:
        return text  # written by someone else: keep it as a string


INT64 = (-2 ** 63, 2 ** 63 - 1)


def decode_element(text):
    """A list element or register value read by TXN R: an integer when the
    text is one exactly as Python writes it (no sign but '-', no leading
    zeros, within int64), else the text."""
    try:
        v = int(text)
    except ValueError:
        return text
    if str(v) == text and INT64[0] <= v <= INT64[1]:
        return v
    return text


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def txn_key_for(key):
    if isinstance(key, str):
        return "t/" + key
    if is_int(key):
        return "t/%d" % key
    return ""


def txn_command(txn):
    """(TXN argv, "") for a txn value, or (None, error)."""
    if not isinstance(txn, list) or not txn:
        return None, "txn value must be a non-empty list of [f, k, v]"
    cmd = ["TXN"]
    for m in txn:
        if not isinstance(m, list) or len(m) != 3 or not isinstance(m[0], str):
            return None, "txn micro-op must be [f, k, v]: " + encode(m)
        f, k, v = m
        key = txn_key_for(k)
        if not key:
            return None, "unsupported txn key " + encode(k)
        if f == "r":
            cmd += ["R", key, "-"]
            continue
        if f not in ("append", "w"):
            return None, "unsupported txn micro-op " + encode(m)
        if is_int(v):
            arg = "%d" % v
        elif isinstance(v, str):
            arg = v
        else:
            return None, "txn value must be an integer or string: " + encode(m)
        cmd += ["W" if f == "w" else "APPEND", key, arg]
    return cmd, ""


def txn_result(txn, reply, list_reads):
    """The micro-ops with their reads filled in from TXN's reply, or None
    when the reply does not have the shape TXN answers with."""
    if reply.kind != "array" or len(reply.value) != len(txn):
        return None
    out = []
    for m, e in zip(txn, reply.value):
        if m[0] != "r":
            if e.kind != "simple" or e.value != "OK":
                return None
            out.append(m)
            continue
        if e.kind == "nil":
            read = [] if list_reads else None
        elif e.kind == "bulk":
            read = decode_element(e.value)
        elif e.kind == "array":
            if any(x.kind != "bulk" for x in e.value):
                return None
            read = [decode_element(x.value) for x in e.value]
        else:
            return None
        out.append([m[0], m[1], read])
    return out


SET_KEY = "c/set"
COUNTER_KEY = "c/counter"


def account_key(a):
    return "b/%d" % a


def stored_int(e):
    """A canonical decimal int64 stored by the server, or None."""
    if e.kind != "bulk":
        return None
    v = decode_element(e.value)
    return v if is_int(v) else None


def collection_result(expect, r, value, accounts):
    """(type, value, error) for a reply to a collection command that is not
    an error, or None when the reply does not have the expected shape."""
    if expect == "integer":  # INCRBY: the new total
        return ("ok", value, "") if r.kind == "int" else None
    if expect == "init":  # MSETNX: created (1) or already there (0)
        if r.kind == "int" and r.value in (0, 1):
            return "ok", None, ""
        return None
    if expect == "transfer":  # XFER
        if r.kind == "int" and r.value == 1:
            return "ok", value, ""
        if r.kind == "int" and r.value == 0:
            return "fail", None, "insufficient funds"
        return None
    if expect == "appended":  # TXN APPEND: [+OK]
        if (r.kind == "array" and len(r.value) == 1 and
                r.value[0].kind == "simple" and r.value[0].value == "OK"):
            return "ok", value, ""
        return None
    if r.kind != "array":
        return None
    if expect == "set-read":
        if len(r.value) != 1:
            return None
        e = r.value[0]
        if e.kind == "nil":
            return "ok", [], ""
        if e.kind != "array" or any(x.kind != "bulk" for x in e.value):
            return None
        return "ok", [decode_element(x.value) for x in e.value], ""
    if expect == "counter-read":
        if len(r.value) != 1:
            return None
        if r.value[0].kind == "nil":
            return "ok", 0, ""
        n = stored_int(r.value[0])
        return None if n is None else ("ok", n, "")
    if expect == "bank-read":
        if len(r.value) != accounts:
            return None
        balances = {}
        for a, e in enumerate(r.value):
            if e.kind == "nil":
                continue  # missing: the checker says so
            n = stored_int(e)
            if n is None:
                return None
            balances[str(a)] = n
        return "ok", balances, ""
    return None


COLLECTION_EXPECTS = {"integer", "init", "transfer", "appended", "set-read",
                      "counter-read", "bank-read"}


def shorten(s):
    return s if len(s) <= 80 else s[:77] + "..."


class CallError(Exception):
    """kind: connect (nothing sent) | timeout | closed | io | protocol."""

    def __init__(self, kind, detail, sent):
        Exception.__init__(self, "%s: %s" % (kind, detail))
        self.kind, self.detail, self.sent = kind, detail, sent


class Reply(object):
    def __init__(self, kind, value):
        self.kind, self.value = kind, value  # simple|error|int|bulk|nil|array


class RespConn(object):
    """One RESP2 connection; every call bounded by a deadline. Closed after
    any failure, so a late reply is never read as a later answer."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.sock = None
        self.buf = b""

    def close(self):
        if self.sock is not None:
            self.sock.close()
        self.sock, self.buf = None, b""

    def _idle_ok(self):
        r, _, _ = select.select([self.sock], [], [], 0)
        return not r  # readable while idle: closed by the peer, or junk

    def call(self, args, deadline):
        if self.sock is not None and not self._idle_ok():
            self.close()
        if self.sock is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CallError("connect", "deadline passed", False)
            try:
                self.sock = socket.create_connection((self.host, self.port),
                                                     timeout=left)
            except OSError as e:
                self.close()
                raise CallError("connect", "%s:%d: %s" % (self.host,
                                self.port, e), False)
        out = b"*%d\r\n" % len(args)
        for a in args:
            b = a.encode("utf-8")
            out += b"$%d\r\n%s\r\n" % (len(b), b)
        try:
            self._settimeout(deadline)
            self.sock.sendall(out)
            return self._read_reply(deadline)
        except CallError:
            self.close()
            raise
        except socket.timeout:
            self.close()
            raise CallError("timeout", "no reply in time", True)
        except OSError as e:
            self.close()
            raise CallError("io", str(e), True)

    def _settimeout(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout()
        self.sock.settimeout(left)

    def _line(self, deadline):
        while b"\r\n" not in self.buf:
            self._settimeout(deadline)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise CallError("closed", "connection closed", True)
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n, deadline):
        while len(self.buf) < n + 2:
            self._settimeout(deadline)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise CallError("closed", "connection closed", True)
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _read_reply(self, deadline):
        line = self._line(deadline)
        if not line:
            raise CallError("protocol", "empty reply line", True)
        t, rest = line[:1], line[1:].decode("utf-8", "replace")
        try:
            if t == b"+":
                return Reply("simple", rest)
            if t == b"-":
                return Reply("error", rest)
            if t == b":":
                return Reply("int", int(rest))
            if t == b"$":
                n = int(rest)
                if n < 0:
                    return Reply("nil", None)
                return Reply("bulk", self._exact(n, deadline).decode(
                    "utf-8", "replace"))
            if t == b"*":
                n = int(rest)
                if n < 0:
                    return Reply("nil", None)
                return Reply("array",
                             [self._read_reply(deadline) for _ in range(n)])
        except ValueError:
            pass
        raise CallError("protocol", "bad reply %r" % line[:40], True)


def code_of(error):
    return error.split(" ", 1)[0]


def redirect_target(error):
    """(host, port) from 'NOTLEADER <id> <host:port>', or None."""
    parts = error.split(" ")
    if len(parts) < 3:
        return None
    host, sep, port = parts[2].rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host, int(port)


class Client(object):
    def __init__(self, host, port, lock_ttl_ms, workload="", accounts=5,
                 total=100):
        self.host, self.port = host, port
        self.lock_ttl_ms = lock_ttl_ms
        self.workload = workload
        # txn: an absent key reads [] (not null)
        self.list_reads = workload == "list-append"
        self.accounts, self.total = max(1, accounts), total
        self.bank_ready = False  # an MSETNX of the accounts got a reply
        self.own = RespConn(host, port)
        self.leader = None
        self.owner = "c%016x" % random.getrandbits(64)
        self.acquisitions = 0
        self.held = {}  # lock name -> (owner, ttl)

    @staticmethod
    def key_for(key):
        if key is None:
            return "r/_"
        if isinstance(key, bool):
            return ""
        if isinstance(key, str):
            return "r/" + key
        if isinstance(key, int):
            return "r/%d" % key
        return ""

    def invoke(self, f, key, value, timeout_ms):
        deadline = time.monotonic() + timeout_ms / 1000.0
        if self.workload in ("set", "counter", "bank") and f != "status":
            return self.collection_op(f, value, deadline)
        if f == "read":
            return self.read(key, deadline)
        if f == "status":
            return self.status(deadline)
        if f in ("acquire", "renew", "release"):
            return self.lock_op(f, key, value, deadline)
        if f == "txn":
            cmd, error = txn_command(value)
            if cmd is None:
                return "fail", None, error
            return self.update(cmd, "txn", deadline, txn=value)
        k = self.key_for(key)
        if not k:
            return "fail", None, "unsupported key " + encode(key)
        if f == "write":
            return self.update(["SET", k, encode(value)], "ok", deadline)
        if f == "cas":
            if not isinstance(value, list) or len(value) != 2:
                return "fail", None, "cas value must be [expected, new]"
            if value[0] is None:
                return "fail", None, "cas from null is not supported by raftkv"
            return self.update(["CAS", k, encode(value[0]), encode(value[1])],
                               "cas", deadline)
        return "fail", None, "unsupported-op " + str(f)

    def read(self, key, deadline):
        k = self.key_for(key)
        if not k:
            return "fail", None, "unsupported key " + encode(key)
        try:
            r = self.own.call(["GET", k], deadline)
        except CallError as e:
            if e.kind == "timeout":
                return "info", None, "timeout"
            return "fail", None, str(e)
        if r.kind == "nil":
            return "ok", None, ""
        if r.kind == "bulk":
            return "ok", decode(r.value), ""
        if r.kind == "error":
            if code_of(r.value) == "TIMEOUT":
                return "info", None, "timeout"
            return "fail", None, shorten(r.value)
        self.own.close()  # out of step with the server: start afresh
        return "fail", None, "unexpected reply to GET"

    def status(self, deadline):
        try:
            r = self.own.call(["STATUS"], deadline)
        except CallError as e:
            return "fail", None, str(e)
        if r.kind != "bulk":
            self.own.close()
            return "fail", None, "unexpected reply to STATUS"
        fields = {}
        for line in r.value.splitlines():
            name, sep, text = line.strip().partition(":")
            if sep:
                fields[name] = text
        out = {"role": fields.get("role", "")}
        for name in ("term", "commit", "last_index"):
            if fields.get(name, "").lstrip("-").isdigit():
                out[name] = int(fields[name])
        leader = fields.get("leader", "0")
        if leader.isdigit() and int(leader) > 0:
            out["leader_id"] = int(leader)
        return "ok", out, ""

    def lock_op(self, f, key, value, deadline):
        if isinstance(key, str):
            name = key
        elif isinstance(key, int) and not isinstance(key, bool):
            name = str(key)
        else:
            name = ""
        if not name or any(c in name for c in " \r\n"):
            return "fail", None, "unsupported lock name " + encode(key)
        if f == "acquire":
            ttl = self.lock_ttl_ms
            if isinstance(value, int) and not isinstance(value, bool):
                ttl = value
            if ttl <= 0:
                return "fail", None, "ttl must be > 0"
            # A fresh owner per acquisition: raftkv gives an owner that
            # acquires again its old token back.
            self.acquisitions += 1
            owner = "%s-%d" % (self.owner, self.acquisitions)
            self.held[name] = (owner, ttl)
            return self.update(["LOCK", name, owner, str(ttl)], "token",
                               deadline)
        if name not in self.held:
            return "fail", None, "not-held: this client never acquired " + name
        if not isinstance(value, int) or isinstance(value, bool):
            return "fail", None, f + " needs the token"
        owner, ttl = self.held[name]
        if f == "renew":
            cmd = ["RENEW", name, owner, str(value), str(ttl)]
        else:
            cmd = ["UNLOCK", name, owner, str(value)]
        t, v, err = self.update(cmd, "ok", deadline)
        if t == "fail" and code_of(err) == "NOTOWNER":
            err = "not-held: " + err
        return t, v, err

    def collection_op(self, f, value, deadline):
        w = self.workload
        if w == "set" and f == "add":
            if is_int(value):
                element = "%d" % value
            elif isinstance(value, str):
                element = value
            else:
                return "fail", None, "set element must be an integer or string"
            return self.update(["TXN", "APPEND", SET_KEY, element], "appended",
                               deadline, value=value)
        if w == "set" and f == "read":
            return self.update(["TXN", "R", SET_KEY, "-"], "set-read",
                               deadline)
        if w == "counter" and f == "add":
            if not is_int(value):
                return "fail", None, "counter add needs an integer"
            return self.update(["INCRBY", COUNTER_KEY, "%d" % value],
                               "integer", deadline, value=value)
        if w == "counter" and f == "read":
            return self.update(["TXN", "R", COUNTER_KEY, "-"], "counter-read",
                               deadline)
        if w != "bank" or f not in ("transfer", "read"):
            return "fail", None, "unsupported-op " + str(f)
        if f == "transfer":
            fields = value if isinstance(value, dict) else {}
            a, b, n = fields.get("from"), fields.get("to"), fields.get("amount")
            if not (is_int(a) and is_int(b) and is_int(n)):
                return ("fail", None, 'transfer needs {"from": int, "to": '
                        'int, "amount": int}')
            cmd = ["XFER", account_key(a), account_key(b), "%d" % n]
        else:
            cmd = ["TXN"]
            for a in range(self.accounts):
                cmd += ["R", account_key(a), "-"]
        if not self.bank_ready:
            init = ["MSETNX"]
            each = self.total // self.accounts
            for a in range(self.accounts):
                extra = self.total % self.accounts if a == 0 else 0
                init += [account_key(a), "%d" % (each + extra)]
            t, _, err = self.update(init, "init", deadline)
            if t != "ok":  # the operation itself was not sent
                return "fail", None, "bank init: " + err
            self.bank_ready = True
        return self.update(cmd, "bank-read" if f == "read" else "transfer",
                           deadline, value=value)

    def update(self, cmd, expect, deadline, txn=None, value=None):
        conn = self.own
        for attempt in range(2):
            try:
                r = conn.call(cmd, deadline)
            except CallError as e:
                if e.kind == "connect" or not e.sent:
                    return "fail", None, "connect: " + e.detail
                if e.kind == "timeout":
                    return "info", None, "timeout"
                return "info", None, str(e)
            if r.kind == "error":
                code = code_of(r.value)
                if code == "NOTLEADER" and attempt == 0:
                    target = redirect_target(r.value)
                    if target is None or target == (self.host, self.port):
                        return "fail", None, shorten(r.value)
                    if self.leader is None or (self.leader.host,
                                               self.leader.port) != target:
                        if self.leader is not None:
                            self.leader.close()
                        self.leader = RespConn(*target)
                    conn = self.leader
                    continue
                if code in NO_EFFECT:
                    return "fail", None, shorten(r.value)
                if code == "TIMEOUT":
                    return "info", None, "timeout"
                return "info", None, shorten(r.value)
            if expect == "ok" and r.kind == "simple" and r.value == "OK":
                return "ok", None, ""
            if expect == "token" and r.kind == "int":
                return "ok", r.value, ""
            if expect == "cas" and r.kind == "int" and r.value in (0, 1):
                if r.value == 1:
                    return "ok", None, ""
                return "fail", None, "mismatch"
            if expect == "txn":
                filled = txn_result(txn, r, self.list_reads)
                if filled is not None:
                    return "ok", filled, ""
            if expect in COLLECTION_EXPECTS:
                out = collection_result(expect, r, value, self.accounts)
                if out is not None:
                    return out
            conn.close()  # out of step with the server: start afresh
            return "info", None, "unexpected reply"
        return "fail", None, "redirected twice"  # not reached


def send(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def main():
    if len(sys.argv) == 3:
        host, port = sys.argv[1], int(sys.argv[2])
    elif len(sys.argv) == 1:
        host = os.environ.get("FAULTLINE_NODE_IP", "127.0.0.1")
        port = int(os.environ.get("FAULTLINE_PORT_CLIENT", "6379"))
    else:
        log("usage: raftkv_client.py [HOST PORT]")
        return 2
    default_timeout = int(os.environ.get("FAULTLINE_OP_TIMEOUT_MS", "2000"))
    hello = sys.stdin.readline()
    if not hello:
        return 0
    msg = json.loads(hello)
    if msg.get("type") != "hello":
        log("expected a hello, got %r" % hello[:200])
        return 1
    send({"type": "hello", "protocol": PROTOCOL})
    workload = msg.get("workload") or os.environ.get("FAULTLINE_WORKLOAD", "")
    accounts, total = msg.get("accounts"), msg.get("total")
    if not is_int(accounts):
        accounts = int(os.environ.get("FAULTLINE_ACCOUNTS", "5"))
    if not is_int(total):
        total = int(os.environ.get("FAULTLINE_TOTAL", "100"))
    client = Client(host, port, lock_ttl_ms=1000, workload=workload,
                    accounts=accounts, total=total)
    for line in sys.stdin:
        if not line.strip():
            continue
        op = json.loads(line)
        if op.get("type") != "invoke":
            continue  # later protocol versions may add messages
        i = op["id"]
        timeout_ms = op.get("timeout_ms") or default_timeout
        try:
            t, v, err = client.invoke(op.get("f"), op.get("key"),
                                      op.get("value"), timeout_ms)
        except Exception as e:  # unexpected: the request may have been sent
            log("op %d: %r" % (i, e))
            t, v, err = ("fail" if op.get("f") == "read" else "info",
                         None, "exception: %s" % e)
        answer = {"type": t, "id": i}
        if t == "ok":
            answer["value"] = v
        elif err:
            answer["error"] = err
        send(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
