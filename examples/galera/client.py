#!/usr/bin/python3
"""faultline exec client (protocol 1) for MariaDB + Galera: register, list-append, rw-register.

Usage: client.py [IP] [PORT] [--user U] [--password P] [--database D]
                 [--sync-wait N] [--isolation LEVEL]

IP and PORT default to $FAULTLINE_NODE_IP and $FAULTLINE_PORT_CLIENT. The
client speaks JSON lines: faultline's hello, then one invoke at a time, each
answered exactly once on stdout (stderr is free text). It exits when stdin
closes.

Registers live in one InnoDB table, `<database>.registers (k, v)`, created on
first use with IF NOT EXISTS (concurrent creation by several clients is
harmless). Keys and values are stored as their JSON text (any JSON key,
`null` included, is a row; integers compare as written). Every statement
runs alone in autocommit mode:
  read   SELECT v FROM registers WHERE k = key          -> ok value | null
  write  INSERT ... ON DUPLICATE KEY UPDATE v = value   -> ok
  cas    UPDATE registers SET v = new WHERE k = key AND v = old
         -> ok when one row matched, else fail "mismatch" (an absent key
            matches no row, so it is a mismatch too)
CLIENT_FOUND_ROWS is set so that a cas with old == new counts its matched
row (MySQL's affected-rows would be 0).

Transactions (the hello's workload list-append or rw-register; f "txn",
value a list of micro-ops [f, k, v] with integer keys) run all their
micro-ops in one SQL transaction, START TRANSACTION ... COMMIT, at the
session's isolation level (--isolation; default the server's, REPEATABLE
READ unless my.cnf says otherwise), in order, one statement each:
  list-append, table `<database>.lists (k BIGINT PRIMARY KEY, v TEXT)`, the
  list as its elements' decimal text joined by ",":
    ["append", k, v]  INSERT INTO lists (k, v) VALUES (k, 'v')
                      ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', 'v')
    ["r", k, null]    SELECT v FROM lists WHERE k = k -> the list, [] absent
  rw-register, table `<database>.rw_registers (k BIGINT PRIMARY KEY,
  v BIGINT)`:
    ["w", k, v]       INSERT ... ON DUPLICATE KEY UPDATE v = VALUES(v)
    ["r", k, null]    SELECT v FROM rw_registers WHERE k = k -> v, null absent
ok answers the micro-ops with every read filled in. A txn:
  - fail when nothing was sent (no connection), when the server answered an
    error to START TRANSACTION or to any micro-op's statement (the COMMIT
    was never sent; the connection is dropped, which rolls the transaction
    back), or when COMMIT answered 1213 (a deadlock victim or a write-set
    that failed Galera's certification: rolled back everywhere);
  - info after a socket timeout or a lost connection at any point after
    START TRANSACTION was sent, and for any other error of COMMIT (the
    commit may have happened);
  - a read-only txn (every micro-op "r") is fail on any error but a timeout.

Register outcomes: `fail` only when the operation certainly had no effect:
  - the connection (or the session setup) could not be made: nothing sent;
  - the server answered with an error that rolls the statement back
    (1213 deadlock / certification failure, 1205 lock wait timeout,
    1047 "WSREP has not yet prepared node" on a non-primary node, ...);
  - any error of a read (reads change nothing), except a timeout.
Everything else after the statement was sent (timeouts, lost connections,
unknown server errors of a write) is `info`: it may or may not have taken
effect. The connection is dropped after any error.

Per-operation timeouts: the budget is a little under the invoke's
timeout_ms (faultline kills a client that misses its deadline); the connect,
read and write socket timeouts are set from what is left of it.
"""

import argparse
import json
import os
import sys
import time

try:
    import pymysql
    from pymysql.constants import CLIENT
except ImportError:  # pragma: no cover - depends on the host
    sys.stderr.write("client.py: python3-pymysql is not installed for %s\n" %
                     sys.executable)
    sys.exit(3)

# Server error codes after which an autocommit statement certainly did not
# take effect.
DEFINITE_ERRORS = {
    1047,  # ER_UNKNOWN_COM_ERROR: WSREP has not yet prepared node (non-primary)
    1205,  # ER_LOCK_WAIT_TIMEOUT: the statement was rolled back
    1213,  # ER_LOCK_DEADLOCK: deadlock or Galera certification failure
    1146,  # ER_NO_SUCH_TABLE
    1049,  # ER_BAD_DB_ERROR
    1290,  # ER_OPTION_PREVENTS_STATEMENT (read only)
    1792,  # ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
    4047,  # ER_GALERA_REPLICATION_NOT_SUPPORTED
}
# Client-side codes: 2013 lost connection during query (also a socket
# timeout), 2006 server gone away (send failed).
CR_SERVER_GONE = 2006
CR_SERVER_LOST = 2013

ER_LOCK_DEADLOCK = 1213

ISOLATION = {
    "read-uncommitted": "READ UNCOMMITTED",
    "read-committed": "READ COMMITTED",
    "repeatable-read": "REPEATABLE READ",
    "serializable": "SERIALIZABLE",
}

MARGIN_S = 0.15  # answer this long before faultline's deadline
MIN_BUDGET_S = 0.1


def log(msg):
    sys.stderr.write("galera-client %s: %s\n" %
                     (os.environ.get("FAULTLINE_NODE", "?"), msg))
    sys.stderr.flush()


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def err_code(e):
    if isinstance(e, pymysql.err.MySQLError) and e.args:
        code = e.args[0]
        if isinstance(code, int):
            return code
    return None


def describe(e):
    code = err_code(e)
    if code is not None and len(e.args) > 1:
        return "%d: %s" % (code, e.args[1])
    return "%s: %s" % (type(e).__name__, e)


def encode(v):
    """The JSON text a key or value is stored as (canonical for numbers)."""
    return json.dumps(v, separators=(",", ":"), sort_keys=True)


def is_timeout(e):
    return "timed out" in str(e)


class NotSent(Exception):
    """The budget ran out before the next statement: it was not sent."""


class Client:
    """One MariaDB connection, opened lazily, dropped after any error."""

    def __init__(self, args):
        self.args = args
        self.conn = None
        self.schema_ready = False
        self.workload = "register"  # from the hello

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 - closing a broken socket
                pass
        self.conn = None

    def set_timeouts(self, remaining):
        t = max(MIN_BUDGET_S, remaining)
        # pymysql sets the socket timeout from these before every read/write.
        self.conn._read_timeout = t
        self.conn._write_timeout = t

    def connect(self, deadline):
        """Opens the connection and the session; raises on failure."""
        remaining = max(MIN_BUDGET_S, deadline - time.monotonic())
        self.conn = pymysql.connect(
            host=self.args.host,
            port=self.args.port,
            user=self.args.user,
            password=self.args.password,
            autocommit=True,
            connect_timeout=remaining,
            read_timeout=remaining,
            write_timeout=remaining,
            client_flag=CLIENT.FOUND_ROWS,
        )
        with self.conn.cursor() as c:
            if self.args.sync_wait is not None:
                self.set_timeouts(deadline - time.monotonic())
                c.execute("SET SESSION wsrep_sync_wait = %s",
                          (self.args.sync_wait,))
            if self.args.isolation is not None:
                self.set_timeouts(deadline - time.monotonic())
                c.execute("SET SESSION TRANSACTION ISOLATION LEVEL " +
                          ISOLATION[self.args.isolation])
            if not self.schema_ready:
                self.ensure_schema(c, deadline)

    def table(self):
        return {"list-append": "lists",
                "rw-register": "rw_registers"}.get(self.workload, "registers")

    def ensure_schema(self, c, deadline):
        db = self.args.database
        table = self.table()
        self.set_timeouts(deadline - time.monotonic())
        try:
            c.execute("SELECT 1 FROM `%s`.`%s` LIMIT 0" % (db, table))
            self.schema_ready = True
            return
        except pymysql.err.MySQLError as e:
            if err_code(e) not in (1049, 1146):
                raise
        # Several clients may get here at once: every statement is
        # idempotent, and Galera orders DDL cluster-wide (TOI).
        self.set_timeouts(deadline - time.monotonic())
        c.execute("CREATE DATABASE IF NOT EXISTS `%s`" % db)
        self.set_timeouts(deadline - time.monotonic())
        columns = {
            "registers": "k VARCHAR(191) NOT NULL PRIMARY KEY, v TEXT NOT NULL",
            "lists": "k BIGINT NOT NULL PRIMARY KEY, v TEXT NOT NULL",
            "rw_registers": "k BIGINT NOT NULL PRIMARY KEY, v BIGINT NOT NULL",
        }[table]
        c.execute("CREATE TABLE IF NOT EXISTS `%s`.`%s` (%s) ENGINE=InnoDB" %
                  (db, table, columns))
        self.schema_ready = True

    def run(self, f, key, value, deadline):
        db = self.args.database
        key = encode(key)
        self.set_timeouts(deadline - time.monotonic())
        with self.conn.cursor() as c:
            if f == "read":
                c.execute("SELECT v FROM `%s`.registers WHERE k = %%s" % db,
                          (key,))
                row = c.fetchone()
                return ("ok", None if row is None else json.loads(row[0]))
            if f == "write":
                c.execute(
                    "INSERT INTO `%s`.registers (k, v) VALUES (%%s, %%s) "
                    "ON DUPLICATE KEY UPDATE v = VALUES(v)" % db,
                    (key, encode(value)))
                return ("ok", None)
            if f == "cas":
                old, new = value
                n = c.execute(
                    "UPDATE `%s`.registers SET v = %%s WHERE k = %%s AND v = %%s"
                    % db, (encode(new), key, encode(old)))
                return ("ok", None) if n == 1 else ("fail", "mismatch")
        raise ValueError("unknown f %r" % f)

    def micro_op(self, c, m):
        """Runs one micro-op's statement; returns it, read filled in."""
        db, (f, k, v) = self.args.database, m
        if self.workload == "list-append":
            if f == "append":
                c.execute("INSERT INTO `%s`.lists (k, v) VALUES (%%s, %%s) "
                          "ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', %%s)"
                          % db, (k, str(v), str(v)))
                return m
            c.execute("SELECT v FROM `%s`.lists WHERE k = %%s" % db, (k,))
            row = c.fetchone()
            read = [] if row is None or row[0] == "" else [
                int(x) for x in row[0].split(",")]
            return [f, k, read]
        if f == "w":
            c.execute("INSERT INTO `%s`.rw_registers (k, v) VALUES (%%s, %%s) "
                      "ON DUPLICATE KEY UPDATE v = VALUES(v)" % db, (k, v))
            return m
        c.execute("SELECT v FROM `%s`.rw_registers WHERE k = %%s" % db, (k,))
        row = c.fetchone()
        return [f, k, None if row is None else int(row[0])]

    def txn(self, op_id, mops, deadline):
        """Runs one transaction; returns the answer object."""
        write = "append" if self.workload == "list-append" else "w"
        for m in mops if isinstance(mops, list) else [None]:
            if not (isinstance(m, list) and len(m) == 3 and
                    m[0] in ("r", write) and isinstance(m[1], int) and
                    not isinstance(m[1], bool) and
                    (m[0] == "r" or (isinstance(m[2], int) and
                                     not isinstance(m[2], bool)))):
                return {"type": "fail", "id": op_id,
                        "error": "unsupported micro-op %s" % json.dumps(m)}
        if not mops:
            return {"type": "fail", "id": op_id, "error": "empty txn"}
        read_only = all(m[0] == "r" for m in mops)
        stage = "begin"  # begin -> statements -> commit
        out = []

        def budget():
            left = deadline - time.monotonic()
            if left < MIN_BUDGET_S:
                raise NotSent("no time left before %s" % stage)
            self.set_timeouts(left)

        try:
            with self.conn.cursor() as c:
                budget()
                c.execute("START TRANSACTION")
                stage = "statements"
                for m in mops:
                    budget()
                    out.append(self.micro_op(c, m))
                stage = "commit"
                budget()
                c.execute("COMMIT")
        except NotSent as e:
            # COMMIT was not sent: dropping the connection rolls back.
            self.close()
            return {"type": "fail", "id": op_id, "error": str(e)}
        except Exception as e:  # noqa: BLE001 - classify every error
            self.close()  # an open transaction is rolled back with it
            code = err_code(e)
            msg = "%s: %s" % (stage, describe(e))
            if code == CR_SERVER_LOST and is_timeout(e):
                return {"type": "info", "id": op_id, "error": "timeout: " + msg}
            if read_only:
                return {"type": "fail", "id": op_id, "error": msg}
            # Server codes are 1000-1999 and 3000 up; 2000-2999 are the client
            # library's own (lost connection, server gone, ...).
            server_error = code is not None and (1000 <= code < 2000 or
                                                 code >= 3000)
            if stage != "commit" and server_error:
                return {"type": "fail", "id": op_id, "error": msg}
            if stage == "commit" and code == ER_LOCK_DEADLOCK:
                return {"type": "fail", "id": op_id, "error": msg}
            return {"type": "info", "id": op_id, "error": msg}
        return {"type": "ok", "id": op_id, "value": out}

    def invoke(self, op):
        """Runs one invoke; returns the answer object."""
        op_id = op.get("id")
        f = op.get("f")
        timeout_ms = op.get("timeout_ms") or self.args.op_timeout_ms
        start = time.monotonic()
        budget = max(MIN_BUDGET_S,
                     min(timeout_ms / 1000.0 * 0.9,
                         timeout_ms / 1000.0 - MARGIN_S))
        deadline = start + budget
        if f == "txn":
            if self.workload not in ("list-append", "rw-register"):
                return {"type": "fail", "id": op_id,
                        "error": "txn needs workload list-append or rw-register"}
            if self.conn is None:
                try:
                    self.connect(deadline)
                except Exception as e:  # noqa: BLE001 - nothing was sent
                    self.close()
                    return {"type": "fail", "id": op_id,
                            "error": "connect: " + describe(e)}
            return self.txn(op_id, op.get("value"), deadline)
        if f not in ("read", "write", "cas"):
            return {"type": "fail", "id": op_id, "error": "unknown f %r" % f}
        key = op.get("key")
        value = op.get("value")
        if f == "cas" and not (isinstance(value, list) and len(value) == 2):
            return {"type": "fail", "id": op_id, "error": "cas needs [old,new]"}

        if self.conn is None:
            try:
                self.connect(deadline)
            except Exception as e:  # noqa: BLE001 - nothing was sent
                self.close()
                return {"type": "fail", "id": op_id,
                        "error": "connect: " + describe(e)}
        try:
            kind, result = self.run(f, key, value, deadline)
        except Exception as e:  # noqa: BLE001 - classify every error
            self.close()
            code = err_code(e)
            msg = describe(e)
            if code == CR_SERVER_LOST and is_timeout(e):
                return {"type": "info", "id": op_id, "error": "timeout: " + msg}
            if f == "read":
                return {"type": "fail", "id": op_id, "error": msg}
            if code in DEFINITE_ERRORS:
                return {"type": "fail", "id": op_id, "error": msg}
            return {"type": "info", "id": op_id, "error": msg}
        if kind == "ok":
            return {"type": "ok", "id": op_id, "value": result}
        return {"type": "fail", "id": op_id, "error": result}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("host", nargs="?", default=os.environ.get("FAULTLINE_NODE_IP"))
    p.add_argument("port", nargs="?", type=int,
                   default=int(os.environ.get("FAULTLINE_PORT_CLIENT", "3306")))
    p.add_argument("--user", default="faultline")
    p.add_argument("--password", default="faultline")
    p.add_argument("--database", default="faultline")
    p.add_argument("--sync-wait", type=int, default=None,
                   help="session wsrep_sync_wait (default: the server's)")
    p.add_argument("--isolation", choices=sorted(ISOLATION), default=None,
                   help="session transaction isolation level for txn "
                        "(default: the server's)")
    args = p.parse_args(argv)
    if not args.host:
        p.error("no host: give IP or set FAULTLINE_NODE_IP")
    args.op_timeout_ms = int(os.environ.get("FAULTLINE_OP_TIMEOUT_MS", "2000"))
    return args


def main(argv):
    args = parse_args(argv)
    client = Client(args)
    hello_done = False
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            log("bad JSON line: %r" % line)
            continue
        t = msg.get("type")
        if t == "hello":
            if msg.get("protocol") != 1:
                log("unsupported protocol %r" % msg.get("protocol"))
                return 2
            client.workload = msg.get("workload") or os.environ.get(
                "FAULTLINE_WORKLOAD", "register")
            send({"type": "hello", "protocol": 1})
            hello_done = True
        elif t == "invoke":
            if not hello_done:
                log("invoke before hello")
            send(client.invoke(msg))
        else:
            log("ignored message type %r" % t)
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
