#!/usr/bin/env python3
"""A scripted exec-protocol client for exec_client_test.cpp.

Usage: fake_client.py MODE. Modes:
  good         a correct protocol-1 client over an in-memory register and
               lock table; a read of key "env:NAME" answers os.environ[NAME]
               (null when unset); key "fail-me" answers fail, "info-me" info;
               f status answers ok {"role": "leader", "term": 3,
               "leader": "n1"}
  crash        answers the hello, then writes "boom" to stderr and exits 3
               on the first invoke
  garbage      answers every invoke with a line that is not JSON
  wrong-id     answers every invoke with the id plus one
  slow         answers the hello, then never answers an invoke
  no-value     answers ok without "value" (invalid for read and acquire)
  bad-token    answers acquire with a string token
  hello-v2     answers the hello with protocol 2
  hello-silent never answers the hello
  close-stdout answers the hello, then closes stdout and keeps running
  txn-short    answers every txn ok with its micro-op list minus the last
               (invalid), every other f as good does
  answer-env   answers every invoke ok with the JSON value in
               $FAULTLINE_TEST_ANSWER
In mode good, f txn runs the micro-ops [f, k, v] in order on in-memory
lists (hello workload list-append: "append", and "r" reads the list, [] when
absent) or registers (rw-register: "w", and "r" reads null when absent); a
txn whose first micro-op's key is -1 answers fail "conflict", -2 info.
The collection workloads (hello workload set, counter or bank) run on an
in-memory set, counter or bank: add, read, transfer (fail "insufficient
funds" when the source has less than the amount). The bank's accounts come
from the hello ("accounts", "total"; total/accounts each, the remainder on
"0"); at the hello the fake logs "bank hello A T env A' T'" to stderr, the
hello's and $FAULTLINE_ACCOUNTS / $FAULTLINE_TOTAL.
"""
import json
import os
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "good"


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


hello = sys.stdin.readline()
if not hello:
    sys.exit(0)
if mode == "hello-silent":
    time.sleep(3600)
hello_msg = json.loads(hello)
workload = hello_msg.get("workload")
bank = {}
if workload == "bank":
    accounts, total = hello_msg.get("accounts"), hello_msg.get("total")
    sys.stderr.write("bank hello %s %s env %s %s\n" % (
        accounts, total, os.environ.get("FAULTLINE_ACCOUNTS"),
        os.environ.get("FAULTLINE_TOTAL")))
    sys.stderr.flush()
    for a in range(accounts):
        bank[str(a)] = total // accounts + (total % accounts if a == 0 else 0)
send({"type": "hello", "protocol": 2 if mode == "hello-v2" else 1})
if mode == "close-stdout":
    sys.stdout.close()
    os.close(1)
    time.sleep(3600)

register = {}
elements = []  # the set workload's set
counter = 0
txn_state = {}  # txn key -> list (list-append) or value (rw-register)
locks = {}  # name -> token
next_token = 100

for line in sys.stdin:
    op = json.loads(line)
    i, f, key, value = op["id"], op["f"], op.get("key"), op.get("value")
    if mode == "crash":
        sys.stderr.write("boom\n")
        sys.stderr.flush()
        sys.exit(3)
    if mode == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
        continue
    if mode == "wrong-id":
        send({"type": "ok", "id": i + 1, "value": None})
        continue
    if mode == "slow":
        time.sleep(3600)
    if mode == "no-value":
        send({"type": "ok", "id": i})
        continue
    if mode == "answer-env":
        send({"type": "ok", "id": i,
              "value": json.loads(os.environ["FAULTLINE_TEST_ANSWER"])})
        continue
    if workload in ("set", "counter", "bank") and f != "status":
        if f == "read":
            got = {"set": elements, "counter": counter, "bank": bank}[workload]
            send({"type": "ok", "id": i, "value": got})
        elif f == "add" and workload == "set":
            elements.append(value)
            send({"type": "ok", "id": i, "value": value})
        elif f == "add":
            counter += value
            send({"type": "ok", "id": i, "value": value})
        elif f == "transfer":
            src, dst = str(value["from"]), str(value["to"])
            if bank[src] < value["amount"]:
                send({"type": "fail", "id": i, "error": "insufficient funds"})
                continue
            bank[src] -= value["amount"]
            bank[dst] += value["amount"]
            send({"type": "ok", "id": i, "value": value})
        else:
            send({"type": "fail", "id": i, "error": "unsupported f"})
        continue
    if mode == "bad-token" and f == "acquire":
        send({"type": "ok", "id": i, "value": "abc"})
        continue
    if f == "txn":
        if value[0][1] == -1:
            send({"type": "fail", "id": i, "error": "conflict"})
            continue
        if value[0][1] == -2:
            send({"type": "info", "id": i, "error": "commit unknown"})
            continue
        out = []
        for mf, mk, mv in value:
            if mf == "r":
                got = txn_state.get(mk)
                if workload == "list-append" and got is None:
                    got = []
                out.append([mf, mk, list(got) if isinstance(got, list) else got])
            elif mf == "append":
                txn_state.setdefault(mk, []).append(mv)
                out.append([mf, mk, mv])
            else:
                txn_state[mk] = mv
                out.append([mf, mk, mv])
        if mode == "txn-short":
            out = out[:-1]
        send({"type": "ok", "id": i, "value": out})
        continue
    if key == "fail-me":
        send({"type": "fail", "id": i, "error": "refused"})
        continue
    if key == "info-me":
        send({"type": "info", "id": i, "error": "unsure"})
        continue
    k = json.dumps(key)
    if f == "status":
        send({"type": "ok", "id": i,
              "value": {"role": "leader", "term": 3, "leader": "n1"}})
    elif f == "read":
        if isinstance(key, str) and key.startswith("env:"):
            send({"type": "ok", "id": i, "value": os.environ.get(key[4:])})
        else:
            send({"type": "ok", "id": i, "value": register.get(k)})
    elif f == "write":
        register[k] = value
        send({"type": "ok", "id": i})
    elif f == "cas":
        old, new = value
        if register.get(k) == old:
            register[k] = new
            send({"type": "ok", "id": i})
        else:
            send({"type": "fail", "id": i, "error": "mismatch"})
    elif f == "acquire":
        if k in locks:
            send({"type": "fail", "id": i, "error": "held"})
        else:
            next_token += 1
            locks[k] = next_token
            sys.stderr.write("acquired %s ttl %s\n" % (k, value))
            send({"type": "ok", "id": i, "value": next_token})
    elif f in ("renew", "release"):
        if locks.get(k) != value:
            send({"type": "fail", "id": i, "error": "not-held"})
        else:
            if f == "release":
                del locks[k]
            send({"type": "ok", "id": i})
    else:
        send({"type": "fail", "id": i, "error": "unknown f " + str(f)})
