#!/usr/bin/env python3
"""Prints raftkv's own view of who leads, as the process target's status
command expects (docs/targets/process.md): one JSON object with role, term,
leader_id, commit and last_index. Usage: status.py IP PORT. Exits 1 when the
node does not answer within a second."""
import json
import socket
import sys


def main():
    ip, port = sys.argv[1], int(sys.argv[2])
    with socket.create_connection((ip, port), timeout=1.0) as s:
        s.settimeout(1.0)
        s.sendall(b"*1\r\n$6\r\nSTATUS\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if data.startswith(b"$"):
                head, _, rest = data.partition(b"\r\n")
                if len(rest) >= int(head[1:]) + 2:
                    break
            elif data.endswith(b"\r\n"):
                break
    if not data.startswith(b"$"):
        sys.exit(1)
    body = data.partition(b"\r\n")[2].decode(errors="replace")
    fields = {}
    for line in body.splitlines():
        key, sep, value = line.strip().partition(":")
        if sep:
            fields[key] = value
    out = {"role": fields.get("role", "")}
    for key in ("term", "commit", "last_index"):
        if fields.get(key, "").lstrip("-").isdigit():
            out[key] = int(fields[key])
    leader = fields.get("leader", "0")
    if leader.isdigit() and int(leader) > 0:
        out["leader_id"] = int(leader)
    print(json.dumps(out))


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError, IndexError):
        sys.exit(1)
