#!/usr/bin/env python3
"""Tiny RESP client for the raftkv end-to-end test (tests/e2e_raftkv_local.sh)
and for quick load measurements by hand. Python 3 standard library only.

Subcommands (ADDR is host:port of a node's client port):
  call ADDR ARG...            one command; prints the reply (+OK, -ERR .., :n, $v, nil)
  status ADDR                 prints STATUS
  await-leader SECS ADDR...   waits until every reachable node names the same
                              leader (which reports role:leader); prints its id
  writes SECS N PREFIX OUT ADDR...
                              SET PREFIX-i = i for i < N, at whichever node leads
                              (following -NOTLEADER); appends each acknowledged
                              "key value" line to OUT; exits 1 if not all done
  check SECS FILE ADDR...     every "key value" of FILE reads back (GET) from
                              every ADDR; retries -NOLEADER/-TIMEOUT until SECS
  isolated-write MODE ADDR LEADER_PID FOLLOWER_PID...
                              SIGSTOPs the followers, then at once sends a SET to
                              the leader at ADDR (connected beforehand) and prints
                              its reply. MODE timeout: just wait for the reply.
                              MODE shutdown: once the write is in the leader's log
                              (STATUS last_index grew), SIGTERM the leader.
                              Resuming the followers is the caller's job.
  bench SECS CLIENTS ADDR...  CLIENTS concurrent writers (threads, one
                              connection each, one request in flight) for SECS;
                              prints throughput and latency percentiles
Only loopback addresses are used by the test.
"""
import os
import signal
import socket
import sys
import threading
import time


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a.encode() if isinstance(a, str) else a
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class Conn:
    def __init__(self, addr, timeout=2.0):
        host, port = addr.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        self.s.close()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self._line()
        t, rest = line[:1], line[1:].decode()
        if t == b"+":
            return "+" + rest
        if t == b"-":
            return "-" + rest
        if t == b":":
            return ":" + rest
        if t == b"$":
            n = int(rest)
            return "nil" if n < 0 else "$" + self._exact(n).decode()
        if t == b"*":
            return "*" + rest + "".join("\n" + self.reply() for _ in range(int(rest)))
        raise ValueError("bad reply line %r" % line)

    def call(self, *args):
        self.s.sendall(encode(args))
        return self.reply()


def status(addr):
    c = Conn(addr, timeout=1.0)
    try:
        text = c.call("STATUS")[1:]
    finally:
        c.close()
    return dict(l.split(":", 1) for l in text.split("\r\n") if ":" in l)


def try_status(addr):
    try:
        return status(addr)
    except (OSError, ValueError, ConnectionError):
        return None


def await_leader(secs, addrs):
    end = time.time() + secs
    while time.time() < end:
        sts = [try_status(a) for a in addrs]
        up = [s for s in sts if s is not None]
        leaders = {s["leader"] for s in up}
        if up and len(leaders) == 1 and "0" not in leaders:
            lid = leaders.pop()
            if any(s["id"] == lid and s["role"] == "leader" for s in up):
                return lid
        time.sleep(0.01)
    return None


class Router:
    """Sends writes to the leader, following redirects."""

    def __init__(self, addrs):
        self.addrs = list(addrs)
        self.target = self.addrs[0]
        self.conn = None

    def call(self, deadline, *args):
        i = 0
        while time.time() < deadline:
            try:
                if self.conn is None:
                    self.conn = Conn(self.target, timeout=6.0)
                r = self.conn.call(*args)
            except (OSError, ConnectionError):
                self.conn = None
                i += 1
                self.target = self.addrs[i % len(self.addrs)]
                time.sleep(0.02)
                continue
            if r.startswith("-NOTLEADER"):
                self.conn.close()
                self.conn = None
                self.target = r.split()[2]
                continue
            if r.startswith("-NOLEADER"):
                time.sleep(0.02)
                continue
            return r
        return None


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "call":
        c = Conn(args[0])
        print(c.call(*args[1:]))
    elif cmd == "status":
        for k, v in status(args[0]).items():
            print("%s:%s" % (k, v))
    elif cmd == "await-leader":
        lid = await_leader(float(args[0]), args[1:])
        if lid is None:
            print("no leader", file=sys.stderr)
            sys.exit(1)
        print(lid)
    elif cmd == "writes":
        secs, n, prefix, out = float(args[0]), int(args[1]), args[2], args[3]
        r = Router(args[4:])
        deadline = time.time() + secs
        done = 0
        with open(out, "a") as f:
            for i in range(n):
                key, val = "%s-%d" % (prefix, i), str(i)
                rep = r.call(deadline, "SET", key, val)
                if rep == "+OK":
                    f.write("%s %s\n" % (key, val))
                    f.flush()
                    done += 1
                elif rep is None:
                    break
                # -TIMEOUT / -ERR: unknown or failed; not acknowledged
        print(done)
        sys.exit(0 if done == n else 1)
    elif cmd == "check":
        secs, path, addrs = float(args[0]), args[1], args[2:]
        want = [l.split() for l in open(path) if l.strip()]
        deadline = time.time() + secs
        bad = 0
        for addr in addrs:
            c = Conn(addr, timeout=6.0)
            for key, val in want:
                while True:
                    rep = c.call("GET", key)
                    if rep.startswith("-NOLEADER") or rep.startswith("-TIMEOUT"):
                        if time.time() < deadline:
                            time.sleep(0.02)
                            continue
                    break
                if rep != "$" + val:
                    print("%s: GET %s = %s, acknowledged %s" % (addr, key, rep, val),
                          file=sys.stderr)
                    bad += 1
            c.close()
        print("%d keys checked on %d nodes, %d wrong" % (len(want), len(addrs), bad))
        sys.exit(1 if bad else 0)
    elif cmd == "isolated-write":
        mode, addr, leader_pid = args[0], args[1], int(args[2])
        c, st = Conn(addr, timeout=10.0), Conn(addr, timeout=2.0)
        field = lambda k: dict(l.split(":", 1) for l in
                               st.call("STATUS")[1:].split("\r\n") if ":" in l)[k]
        before = int(field("last_index"))
        for pid in args[3:]:
            os.kill(int(pid), signal.SIGSTOP)
        c.s.sendall(encode(["SET", "iso-" + mode, "1"]))
        if mode == "shutdown":
            end = time.time() + 5
            while time.time() < end and field("role") == "leader":
                if int(field("last_index")) > before:
                    os.kill(leader_pid, signal.SIGTERM)
                    break
                time.sleep(0.002)
        print(c.reply())
    elif cmd == "bench":
        secs, clients, addrs = float(args[0]), int(args[1]), args[2:]
        lid = await_leader(10, addrs)
        leader = [a for a in addrs if try_status(a)["id"] == lid][0]
        lat, errors, lock = [], [0], threading.Lock()
        stop = time.time() + secs

        def worker(w):
            c = Conn(leader, timeout=10)
            mine, i = [], 0
            while time.time() < stop:
                t0 = time.perf_counter()
                rep = c.call("SET", "b%d-%d" % (w, i), "x" * 16)
                dt = time.perf_counter() - t0
                if rep == "+OK":
                    mine.append(dt)
                else:
                    with lock:
                        errors[0] += 1
                i += 1
            with lock:
                lat.extend(mine)
        ts = [threading.Thread(target=worker, args=(w,)) for w in range(clients)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        lat.sort()
        p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else 0
        print("clients=%d writes/s=%.0f p50=%.2fms p99=%.2fms errors=%d" %
              (clients, len(lat) / secs, p(0.5), p(0.99), errors[0]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
