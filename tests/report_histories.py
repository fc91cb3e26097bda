#!/usr/bin/env python3
"""Writes fixed register histories (history.jsonl) for the report tests.

usage: report_histories.py KIND OUT
  valid    ~2,000 ops on 3 keys with partitions and a kill, linearizable
  invalid  a stale read whose value is an injected-script payload, during
           a partition that cuts its node off from the majority
  lock     holds of one lock: an overlap that fencing made harmless (the
           store rejects the paused holder's stale token) and a token
           granted twice
  election three nodes' observations: n1 and n3 both lead term 5
  big      100,000 ops (10 workers on their own keys), linearizable

Deterministic: the same KIND always gives the same bytes.
"""
import json
import random
import sys

PAYLOAD = ("</script><script>document.title='PWNED'</script>"
           "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">")


def emit(out, events):
    for i, e in enumerate(events):
        d = {"index": i}
        d.update(e)
        out.write(json.dumps(d, separators=(",", ":")) + "\n")


def nemesis(t, f, value):
    return {"type": "info", "process": "nemesis", "f": f, "value": value,
            "time": t}


def sequential_keys(ops, workers, seed, faults):
    """Worker w owns key k<w>: writes unique values and reads them back,
    so every key's history is sequential and linearizable; workers run
    concurrently (each on its own clock, merged by time). Every 40th read
    is an info (timeout): the worker continues as a fresh process."""
    rng = random.Random(seed)
    timed = []  # (time, order, event)
    next_proc = workers
    per_worker = ops // workers
    for w in range(workers):
        t = 1_000_000 + rng.randint(0, 500_000)
        proc = w
        last = None
        key = "k%d" % w
        node = "n%d" % (w % 3 + 1)
        for i in range(per_worker):
            n = i * workers + w
            t += rng.randint(20_000, 300_000)
            if n % 3 == 0:
                v = n + 1
                timed.append((t, len(timed), {
                    "type": "invoke", "process": proc, "f": "write",
                    "key": key, "value": v, "time": t, "node": node}))
                t += rng.randint(200_000, 3_000_000)
                timed.append((t, len(timed), {
                    "type": "ok", "process": proc, "f": "write", "key": key,
                    "value": v, "time": t, "node": node}))
                last = v
                continue
            timed.append((t, len(timed), {
                "type": "invoke", "process": proc, "f": "read", "key": key,
                "value": None, "time": t, "node": node}))
            t += rng.randint(200_000, 3_000_000)
            if i % 40 == 1:
                timed.append((t, len(timed), {
                    "type": "info", "process": proc, "f": "read", "key": key,
                    "value": None, "time": t, "node": node,
                    "error": "timeout"}))
                proc = next_proc
                next_proc += 1
            elif i % 29 == 2:
                timed.append((t, len(timed), {
                    "type": "fail", "process": proc, "f": "read", "key": key,
                    "value": None, "time": t, "node": node,
                    "error": "connection-refused"}))
            else:
                timed.append((t, len(timed), {
                    "type": "ok", "process": proc, "f": "read", "key": key,
                    "value": last, "time": t, "node": node}))
    for ft, f, v in faults:
        timed.append((ft, len(timed), {"type": "invoke", "process": "nemesis",
                                       "f": f, "value": None, "time": ft}))
        timed.append((ft + 1000, len(timed), nemesis(ft + 1000, f, v)))
    timed.sort(key=lambda x: (x[0], x[1]))
    return [e for _, _, e in timed]


def faults_every(span_ns, period_ns, length_ns):
    out = []
    t = period_ns
    i = 0
    while t + length_ns < span_ns:
        kind = ["partition", "kill", "pause"][i % 3]
        out.append((t, "start-" + kind, {"kind": kind, "nodes": ["n%d" % (i % 3 + 1)]}))
        out.append((t + length_ns, "stop-" + kind, {"kind": kind}))
        t += period_ns
        i += 1
    return out


def invalid():
    ms = 1_000_000
    return [
        {"type": "invoke", "process": 0, "f": "write", "key": "k0", "value": 1,
         "time": 1 * ms, "node": "n1"},
        {"type": "ok", "process": 0, "f": "write", "key": "k0", "value": 1,
         "time": 9 * ms, "node": "n1"},
        {"type": "invoke", "process": "nemesis", "f": "start-partition",
         "value": {"selector": "leader"}, "time": 12 * ms},
        nemesis(14 * ms, "start-partition",
                {"kind": "partition", "components": [["n1"], ["n2", "n3"]]}),
        {"type": "invoke", "process": 1, "f": "write", "key": "k0",
         "value": PAYLOAD, "time": 20 * ms, "node": "n2"},
        {"type": "ok", "process": 1, "f": "write", "key": "k0",
         "value": PAYLOAD, "time": 31 * ms, "node": "n2"},
        {"type": "invoke", "process": 2, "f": "read", "key": "k0",
         "value": None, "time": 40 * ms, "node": "n1"},
        {"type": "ok", "process": 2, "f": "read", "key": "k0", "value": 1,
         "time": 44 * ms, "node": "n1"},
        {"type": "invoke", "process": "nemesis", "f": "stop-partition",
         "value": None, "time": 60 * ms},
        nemesis(61 * ms, "stop-partition", {"kind": "partition"}),
        {"type": "invoke", "process": 1, "f": "read", "key": "k0",
         "value": None, "time": 70 * ms, "node": "n2"},
        {"type": "ok", "process": 1, "f": "read", "key": "k0",
         "value": PAYLOAD, "time": 72 * ms, "node": "n2"},
    ]


def lock():
    s = 1_000_000_000

    def op(p, node, f, key, t0, t1, ok_value, inv_value=None, typ="ok",
           error=None, extra=None):
        inv = {"type": "invoke", "process": p, "f": f, "key": key,
               "value": inv_value, "time": int(t0 * s), "node": node}
        if extra:
            inv.update(extra)
        done = {"type": typ, "process": p, "f": f, "key": key,
                "value": ok_value, "time": int(t1 * s), "node": node}
        if error:
            done["error"] = error
        return [(t0, inv), (t1, done)]

    fenced = {"fenced": True, "lock": "l"}
    timed = []
    # p0 on n1 holds token 1, is paused, and writes with it after p1 took
    # token 2: the store rejects it (harmless overlap).
    timed += op(0, "n1", "acquire", "l", 1.00, 1.05, 1)
    timed += op(0, "n1", "resource-write", "r", 1.10, 1.15, None, [1, "a"],
                extra=fenced)
    timed += op(1, "n2", "acquire", "l", 1.95, 2.00, 2)
    timed += op(1, "n2", "resource-write", "r", 2.05, 2.10, None, [2, "b"],
                extra=fenced)
    timed += op(0, "n1", "resource-write", "r", 2.30, 2.32, None, [1, "c"],
                typ="fail", error="fenced", extra=fenced)
    timed += op(1, "n2", "release", "l", 2.50, 2.52, None)
    timed += op(0, "n1", "release", "l", 2.60, 2.62, None)
    # p2 and p3 are both granted token 3: unsafe.
    timed += op(2, "n3", "acquire", "l", 3.00, 3.05, 3)
    timed += op(2, "n3", "release", "l", 3.50, 3.52, None)
    timed += op(3, "n2", "acquire", "l", 4.00, 4.05, 3)
    timed += op(3, "n2", "release", "l", 4.50, 4.52, None)
    timed.append((1.50, {"type": "invoke", "process": "nemesis",
                         "f": "start-pause", "value": None,
                         "time": int(1.50 * s)}))
    timed.append((1.501, nemesis(int(1.501 * s), "start-pause",
                                 {"kind": "pause", "nodes": ["n1"]})))
    timed.append((2.25, {"type": "invoke", "process": "nemesis",
                         "f": "stop-pause", "value": None,
                         "time": int(2.25 * s)}))
    timed.append((2.251, nemesis(int(2.251 * s), "stop-pause",
                                 {"kind": "pause"})))
    timed.sort(key=lambda x: x[0])
    return [e for _, e in timed]


def election():
    s = 1_000_000_000
    ev = []
    obs = [  # (time, node, role, term, leader)
        (0.50, "n1", "leader", 4, "n1"), (0.55, "n2", "follower", 4, "n1"),
        (1.00, "n1", "leader", 5, "n1"), (1.10, "n2", "follower", 5, "n1"),
        (1.60, "n3", "leader", 5, "n3"), (2.00, "n1", "leader", 5, "n1"),
        (2.50, "n3", "leader", 5, "n3"), (3.00, "n2", "leader", 6, "n2"),
        (3.40, "n1", "follower", 6, "n2"), (3.50, "n3", "follower", 6, "n2"),
        (4.00, "n2", "leader", 6, "n2"),
    ]
    procs = {"n1": 10, "n2": 11, "n3": 12}
    for t, node, role, term, leader in obs:
        p = procs[node]
        ev.append({"type": "invoke", "process": p, "f": "observe",
                   "value": None, "time": int(t * s), "node": node})
        ev.append({"type": "ok", "process": p, "f": "observe",
                   "value": {"role": role, "term": term, "leader": leader},
                   "time": int((t + 0.002) * s), "node": node})
    return ev


def main():
    kind, path = sys.argv[1], sys.argv[2]
    with open(path, "w") as out:
        if kind == "valid":
            events = sequential_keys(2000, 6, 1, faults_every(
                550 * 1_000_000, 140 * 1_000_000, 50 * 1_000_000))
        elif kind == "invalid":
            events = invalid()
        elif kind == "lock":
            events = lock()
        elif kind == "election":
            events = election()
        elif kind == "big":
            events = sequential_keys(100_000, 10, 2, faults_every(
                17_000 * 1_000_000, 2_500 * 1_000_000, 800 * 1_000_000))
        else:
            sys.exit("unknown kind " + kind)
        emit(out, events)


if __name__ == "__main__":
    main()
