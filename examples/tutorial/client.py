#!/usr/bin/env python3
"""faultline exec client (docs/exec-protocol.md) for registers in Redis.

Usage: client.py HOST PORT. read is GET, write SET, cas a Lua script; values
are stored as JSON text. One connection per operation.
"""
import json
import socket
import sys

CAS = """local v = redis.call('GET', KEYS[1])
if v == ARGV[1] or (v == false and ARGV[1] == 'null') then
  redis.call('SET', KEYS[1], ARGV[2])
  return 1
end
return 0"""


def call(addr, timeout_s, *args):
    """One command: ("ok", reply) or ("fail" / "info", why)."""
    try:
        sock = socket.create_connection(addr, timeout=timeout_s)
    except OSError as e:  # refused, unreachable: nothing was sent
        return "fail", "connect: %s" % e
    request = b"*%d\r\n" % len(args)
    for a in map(str.encode, map(str, args)):
        request += b"$%d\r\n%s\r\n" % (len(a), a)
    try:  # from here on the command may have reached Redis
        sock.sendall(request)
        reply = sock.makefile("rb")
        line = reply.readline().decode()
        if line[:1] == "$":
            n = int(line[1:])
            data = reply.read(n + 2) if n >= 0 else b"\r\n"
            if len(data) == max(n, 0) + 2:
                return "ok", data[:-2].decode() if n >= 0 else None
        elif line[:1] in ("+", ":"):
            return "ok", line[1:].strip()
        elif line[:1] == "-":  # Redis refused the command: it did nothing
            return "fail", line[1:].strip()
        return "info", "connection lost or unexpected reply"
    except socket.timeout:
        return "info", "timeout"
    except (OSError, ValueError) as e:
        return "info", str(e)
    finally:
        sock.close()


def invoke(addr, op):
    f, key, value = op["f"], "r/%s" % op["key"], op["value"]
    timeout_s = op["timeout_ms"] / 2000  # once to connect, once for the reply
    if f == "read":
        outcome, reply = call(addr, timeout_s, "GET", key)
        if outcome == "ok" and reply is not None:
            reply = json.loads(reply)
    elif f == "write":
        outcome, reply = call(addr, timeout_s, "SET", key, json.dumps(value))
    elif f == "cas":
        old, new = json.dumps(value[0]), json.dumps(value[1])
        outcome, reply = call(addr, timeout_s, "EVAL", CAS, 1, key, old, new)
        if outcome == "ok" and reply == "0":
            outcome, reply = "fail", "mismatch"
    else:
        outcome, reply = "fail", "unsupported f"
    if outcome == "ok":
        return {"type": "ok", "value": reply}  # the value matters for reads
    return {"type": outcome, "error": reply}


def main():
    addr = (sys.argv[1], int(sys.argv[2]))
    for line in sys.stdin:  # ends when faultline closes stdin
        msg = json.loads(line)
        if msg["type"] == "hello":
            answer = {"type": "hello", "protocol": 1}
        elif msg["type"] == "invoke":
            answer = dict(invoke(addr, msg), id=msg["id"])
        else:
            continue
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


main()
