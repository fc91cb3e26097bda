#!/usr/bin/env node
// faultline exec client (protocol 1) for raftkv, over RESP2. Node.js
// built-ins only (net, readline).
//
// Usage: node raftkv_client.js [HOST PORT]
// HOST and PORT default to $FAULTLINE_NODE_IP and $FAULTLINE_PORT_CLIENT.
// Speaks docs/exec-protocol.md on stdin/stdout; diagnostics go to stderr.
// The semantics are those of faultline's built-in raftkv client
// (targets/raftkv/raftkv_client.h) and of ../python/raftkv_client.py:
// keys "r/<key>", values as compact JSON text, one NOTLEADER redirect, fail
// only for replies that guarantee no effect, info otherwise; locks with
// LOCK/RENEW/UNLOCK and a fresh owner id per acquire; f status (for
// target.status.client) sends STATUS to this client's node and answers its
// role, term, leader_id, commit and last_index. f txn (list-append and
// rw-register workloads) sends one TXN with a triple per micro-op (APPEND
// t/<k> v, W t/<k> v, R t/<k> -) and answers the micro-ops with every read
// filled in from the reply (nil as [] for list-append, null for
// rw-register); see the Python client's docstring for the details. The
// collection workloads (set, bank, counter; docs/collections.md) work as
// in the Python client: a set add is TXN APPEND c/set v and a read TXN R
// c/set -; a counter add INCRBY c/counter n and a read TXN R c/counter -;
// the bank's accounts b/0.. are created once with MSETNX (total/accounts
// each, the remainder on b/0; the accounts and total from the hello) before
// the first bank operation, a transfer is XFER (:0 is fail "insufficient
// funds") and a read one TXN R b/0 - R b/1 - ....
'use strict';

const net = require('net');
const readline = require('readline');
const crypto = require('crypto');

const PROTOCOL = 1;
const NO_EFFECT = new Set(['NOTLEADER', 'NOLEADER', 'LOCKED', 'ERR',
  'NOTOWNER', 'FENCED', 'WRONGTYPE']);

function log(msg) { process.stderr.write(`raftkv_client.js: ${msg}\n`); }
const encode = (v) => JSON.stringify(v);  // compact JSON text
function decode(text) {
  try { return JSON.parse(text); } catch (e) { return text; }
}
const shorten = (s) => (s.length <= 80 ? s : s.slice(0, 77) + '...');
const codeOf = (error) => error.split(' ')[0];
const isInt = (v) => typeof v === 'number' && Number.isInteger(v);

// A list element or register value read by TXN R: an integer when the text
// is one as written (no '+', no leading zeros, not "-0") and exactly
// representable (a safe integer), else the text.
function decodeElement(text) {
  if (!/^-?(0|[1-9]\d*)$/.test(text) || text === '-0') return text;
  const v = Number(text);
  return Number.isSafeInteger(v) ? v : text;
}

function txnKeyFor(key) {
  if (typeof key === 'string') return 't/' + key;
  if (isInt(key)) return 't/' + String(key);
  return '';
}

// [TXN argv, ''] for a txn value, or [null, error].
function txnCommand(txn) {
  if (!Array.isArray(txn) || txn.length === 0) {
    return [null, 'txn value must be a non-empty list of [f, k, v]'];
  }
  const cmd = ['TXN'];
  for (const m of txn) {
    if (!Array.isArray(m) || m.length !== 3 || typeof m[0] !== 'string') {
      return [null, 'txn micro-op must be [f, k, v]: ' + encode(m)];
    }
    const [f, k, v] = m;
    const key = txnKeyFor(k);
    if (!key) return [null, 'unsupported txn key ' + encode(k)];
    if (f === 'r') {
      cmd.push('R', key, '-');
      continue;
    }
    if (f !== 'append' && f !== 'w') {
      return [null, 'unsupported txn micro-op ' + encode(m)];
    }
    let arg;
    if (isInt(v)) arg = String(v);
    else if (typeof v === 'string') arg = v;
    else return [null, 'txn value must be an integer or string: ' + encode(m)];
    cmd.push(f === 'w' ? 'W' : 'APPEND', key, arg);
  }
  return [cmd, ''];
}

// The micro-ops with their reads filled in from TXN's reply, or null when
// the reply does not have the shape TXN answers with.
function txnResult(txn, reply, listReads) {
  if (reply.kind !== 'array' || reply.value.length !== txn.length) return null;
  const out = [];
  for (let i = 0; i < txn.length; i++) {
    const m = txn[i];
    const e = reply.value[i];
    if (m[0] !== 'r') {
      if (e.kind !== 'simple' || e.value !== 'OK') return null;
      out.push(m);
      continue;
    }
    let read;
    if (e.kind === 'nil') {
      read = listReads ? [] : null;
    } else if (e.kind === 'bulk') {
      read = decodeElement(e.value);
    } else if (e.kind === 'array') {
      if (e.value.some((x) => x.kind !== 'bulk')) return null;
      read = e.value.map((x) => decodeElement(x.value));
    } else {
      return null;
    }
    out.push([m[0], m[1], read]);
  }
  return out;
}

const SET_KEY = 'c/set';
const COUNTER_KEY = 'c/counter';
const accountKey = (a) => 'b/' + String(a);
const COLLECTION_EXPECTS = new Set(['integer', 'init', 'transfer', 'appended',
  'set-read', 'counter-read', 'bank-read']);

// A canonical decimal integer stored by the server, or null.
function storedInt(e) {
  if (e.kind !== 'bulk') return null;
  const v = decodeElement(e.value);
  return isInt(v) ? v : null;
}

// [type, value, error] for a reply to a collection command that is not an
// error, or null when the reply does not have the expected shape.
function collectionResult(expect, r, value, accounts) {
  const isIntReply = r.kind === 'int';
  if (expect === 'integer') return isIntReply ? ['ok', value, ''] : null;
  if (expect === 'init') {
    return isIntReply && (r.value === 0 || r.value === 1) ? ['ok', null, ''] : null;
  }
  if (expect === 'transfer') {
    if (isIntReply && r.value === 1) return ['ok', value, ''];
    if (isIntReply && r.value === 0) return ['fail', null, 'insufficient funds'];
    return null;
  }
  if (expect === 'appended') {
    const ok = r.kind === 'array' && r.value.length === 1 &&
      r.value[0].kind === 'simple' && r.value[0].value === 'OK';
    return ok ? ['ok', value, ''] : null;
  }
  if (r.kind !== 'array') return null;
  if (expect === 'set-read') {
    if (r.value.length !== 1) return null;
    const e = r.value[0];
    if (e.kind === 'nil') return ['ok', [], ''];
    if (e.kind !== 'array' || e.value.some((x) => x.kind !== 'bulk')) return null;
    return ['ok', e.value.map((x) => decodeElement(x.value)), ''];
  }
  if (expect === 'counter-read') {
    if (r.value.length !== 1) return null;
    if (r.value[0].kind === 'nil') return ['ok', 0, ''];
    const n = storedInt(r.value[0]);
    return n === null ? null : ['ok', n, ''];
  }
  if (expect === 'bank-read') {
    if (r.value.length !== accounts) return null;
    const balances = {};
    for (let a = 0; a < r.value.length; a++) {
      if (r.value[a].kind === 'nil') continue;  // missing: the checker says so
      const n = storedInt(r.value[a]);
      if (n === null) return null;
      balances[String(a)] = n;
    }
    return ['ok', balances, ''];
  }
  return null;
}

class CallError extends Error {
  // kind: connect (nothing sent) | timeout | closed | io | protocol
  constructor(kind, detail, sent) {
    super(`${kind}: ${detail}`);
    this.kind = kind; this.detail = detail; this.sent = sent;
  }
}

// Parses one RESP2 reply from buf at offset; returns [reply, next] or null
// when more bytes are needed. Throws CallError on bad input.
function parseReply(buf, at) {
  const eol = buf.indexOf('\r\n', at);
  if (eol < 0) return null;
  const t = String.fromCharCode(buf[at]);
  const rest = buf.toString('utf8', at + 1, eol);
  const next = eol + 2;
  if (t === '+') return [{ kind: 'simple', value: rest }, next];
  if (t === '-') return [{ kind: 'error', value: rest }, next];
  if (t === ':' || t === '$' || t === '*') {
    if (!/^-?\d+$/.test(rest)) throw new CallError('protocol', 'bad reply', true);
    const n = parseInt(rest, 10);
    if (t === ':') return [{ kind: 'int', value: n }, next];
    if (n < 0) return [{ kind: 'nil', value: null }, next];
    if (t === '$') {
      if (buf.length < next + n + 2) return null;
      return [{ kind: 'bulk', value: buf.toString('utf8', next, next + n) },
        next + n + 2];
    }
    const items = [];
    let pos = next;
    for (let i = 0; i < n; i++) {
      const r = parseReply(buf, pos);
      if (r === null) return null;
      items.push(r[0]); pos = r[1];
    }
    return [{ kind: 'array', value: items }, pos];
  }
  throw new CallError('protocol', `bad reply type ${JSON.stringify(t)}`, true);
}

// One RESP2 connection; every call bounded by a deadline (ms since epoch of
// performance.now()). Closed after any failure.
class RespConn {
  constructor(host, port) {
    this.host = host; this.port = port;
    this.sock = null; this.buf = Buffer.alloc(0); this.waiter = null;
    this.broken = false;
  }
  close() {
    if (this.sock) this.sock.destroy();
    this.sock = null; this.buf = Buffer.alloc(0); this.broken = false;
  }
  connect(deadline) {
    return new Promise((resolve, reject) => {
      const left = deadline - Date.now();
      if (left <= 0) return reject(new CallError('connect', 'deadline passed', false));
      const sock = net.createConnection({ host: this.host, port: this.port });
      const timer = setTimeout(() => {
        sock.destroy();
        reject(new CallError('connect', `${this.host}:${this.port}: timeout`, false));
      }, left);
      sock.once('connect', () => {
        clearTimeout(timer);
        sock.removeAllListeners('error');
        sock.setNoDelay(true);
        sock.on('data', (d) => {
          this.buf = Buffer.concat([this.buf, d]);
          if (this.waiter) this.waiter();
          else this.broken = true;  // bytes while idle: out of step
        });
        const gone = () => {
          this.broken = true;
          if (this.waiter) this.waiter(true);
        };
        sock.on('end', gone); sock.on('close', gone);
        sock.on('error', gone);
        this.sock = sock;
        resolve();
      });
      sock.once('error', (e) => {
        clearTimeout(timer);
        sock.destroy();
        reject(new CallError('connect', `${this.host}:${this.port}: ${e.message}`, false));
      });
    });
  }
  async call(args, deadline) {
    if (this.sock && this.broken) this.close();
    if (!this.sock) await this.connect(deadline);
    const parts = [`*${args.length}\r\n`];
    for (const a of args) parts.push(`$${Buffer.byteLength(a)}\r\n${a}\r\n`);
    try {
      this.sock.write(parts.join(''));
      return await new Promise((resolve, reject) => {
        const left = deadline - Date.now();
        const timer = setTimeout(() => {
          this.waiter = null;
          reject(new CallError('timeout', 'no reply in time', true));
        }, Math.max(left, 0));
        this.waiter = (closed) => {
          let r;
          try {
            r = parseReply(this.buf, 0);
          } catch (e) {
            clearTimeout(timer); this.waiter = null; reject(e); return;
          }
          if (r !== null) {
            clearTimeout(timer); this.waiter = null;
            this.buf = this.buf.subarray(r[1]);
            resolve(r[0]);
          } else if (closed) {
            clearTimeout(timer); this.waiter = null;
            reject(new CallError('closed', 'connection closed', true));
          }
        };
        this.waiter(this.broken);
      });
    } catch (e) {
      this.close();
      throw e;
    }
  }
}

function redirectTarget(error) {
  const parts = error.split(' ');
  if (parts.length < 3) return null;
  const i = parts[2].lastIndexOf(':');
  if (i <= 0 || !/^\d+$/.test(parts[2].slice(i + 1))) return null;
  return { host: parts[2].slice(0, i), port: parseInt(parts[2].slice(i + 1), 10) };
}

class Client {
  constructor(host, port, lockTtlMs, workload, accounts, total) {
    this.host = host; this.port = port; this.lockTtlMs = lockTtlMs;
    this.workload = workload;
    this.listReads = workload === 'list-append';  // txn: absent reads []
    this.accounts = Math.max(1, accounts); this.total = total;
    this.bankReady = false;  // an MSETNX of the accounts got a reply
    this.own = new RespConn(host, port); this.leader = null;
    this.owner = 'c' + crypto.randomBytes(8).toString('hex');
    this.acquisitions = 0;
    this.held = new Map();  // lock name -> {owner, ttl}
  }
  static keyFor(key) {
    if (key === null || key === undefined) return 'r/_';
    if (typeof key === 'string') return 'r/' + key;
    if (isInt(key)) return 'r/' + String(key);
    return '';
  }
  async invoke(f, key, value, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    if (['set', 'counter', 'bank'].includes(this.workload) && f !== 'status') {
      return this.collectionOp(f, value, deadline);
    }
    if (f === 'read') return this.read(key, deadline);
    if (f === 'status') return this.status(deadline);
    if (f === 'acquire' || f === 'renew' || f === 'release') {
      return this.lockOp(f, key, value, deadline);
    }
    if (f === 'txn') {
      const [cmd, error] = txnCommand(value);
      if (cmd === null) return ['fail', null, error];
      return this.update(cmd, 'txn', deadline, value);
    }
    const k = Client.keyFor(key);
    if (!k) return ['fail', null, 'unsupported key ' + encode(key)];
    if (f === 'write') return this.update(['SET', k, encode(value)], 'ok', deadline);
    if (f === 'cas') {
      if (!Array.isArray(value) || value.length !== 2) {
        return ['fail', null, 'cas value must be [expected, new]'];
      }
      if (value[0] === null) {
        return ['fail', null, 'cas from null is not supported by raftkv'];
      }
      return this.update(['CAS', k, encode(value[0]), encode(value[1])], 'cas',
        deadline);
    }
    return ['fail', null, 'unsupported-op ' + String(f)];
  }
  async read(key, deadline) {
    const k = Client.keyFor(key);
    if (!k) return ['fail', null, 'unsupported key ' + encode(key)];
    let r;
    try {
      r = await this.own.call(['GET', k], deadline);
    } catch (e) {
      if (e.kind === 'timeout') return ['info', null, 'timeout'];
      return ['fail', null, e.message];
    }
    if (r.kind === 'nil') return ['ok', null, ''];
    if (r.kind === 'bulk') return ['ok', decode(r.value), ''];
    if (r.kind === 'error') {
      if (codeOf(r.value) === 'TIMEOUT') return ['info', null, 'timeout'];
      return ['fail', null, shorten(r.value)];
    }
    this.own.close();  // out of step with the server: start afresh
    return ['fail', null, 'unexpected reply to GET'];
  }
  async status(deadline) {
    let r;
    try {
      r = await this.own.call(['STATUS'], deadline);
    } catch (e) {
      return ['fail', null, e.message];
    }
    if (r.kind !== 'bulk') {
      this.own.close();
      return ['fail', null, 'unexpected reply to STATUS'];
    }
    const fields = {};
    for (const line of r.value.split(/\r?\n/)) {
      const at = line.indexOf(':');
      if (at > 0) fields[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    }
    const out = {role: fields.role || ''};
    for (const name of ['term', 'commit', 'last_index']) {
      if (/^-?\d+$/.test(fields[name] || '')) out[name] = Number(fields[name]);
    }
    if (/^\d+$/.test(fields.leader || '') && Number(fields.leader) > 0) {
      out.leader_id = Number(fields.leader);
    }
    return ['ok', out, ''];
  }
  async lockOp(f, key, value, deadline) {
    let name = '';
    if (typeof key === 'string') name = key;
    else if (isInt(key)) name = String(key);
    if (!name || /[ \r\n]/.test(name)) {
      return ['fail', null, 'unsupported lock name ' + encode(key)];
    }
    if (f === 'acquire') {
      const ttl = isInt(value) ? value : this.lockTtlMs;
      if (ttl <= 0) return ['fail', null, 'ttl must be > 0'];
      // A fresh owner per acquisition: raftkv gives an owner that acquires
      // again its old token back.
      const owner = `${this.owner}-${++this.acquisitions}`;
      this.held.set(name, { owner, ttl });
      return this.update(['LOCK', name, owner, String(ttl)], 'token', deadline);
    }
    const held = this.held.get(name);
    if (!held) return ['fail', null, 'not-held: this client never acquired ' + name];
    if (!isInt(value)) return ['fail', null, f + ' needs the token'];
    const cmd = f === 'renew'
      ? ['RENEW', name, held.owner, String(value), String(held.ttl)]
      : ['UNLOCK', name, held.owner, String(value)];
    const [t, v, err] = await this.update(cmd, 'ok', deadline);
    if (t === 'fail' && codeOf(err) === 'NOTOWNER') return [t, v, 'not-held: ' + err];
    return [t, v, err];
  }
  async collectionOp(f, value, deadline) {
    const w = this.workload;
    if (w === 'set' && f === 'add') {
      let element;
      if (isInt(value)) element = String(value);
      else if (typeof value === 'string') element = value;
      else return ['fail', null, 'set element must be an integer or string'];
      return this.update(['TXN', 'APPEND', SET_KEY, element], 'appended',
        deadline, null, value);
    }
    if (w === 'set' && f === 'read') {
      return this.update(['TXN', 'R', SET_KEY, '-'], 'set-read', deadline);
    }
    if (w === 'counter' && f === 'add') {
      if (!isInt(value)) return ['fail', null, 'counter add needs an integer'];
      return this.update(['INCRBY', COUNTER_KEY, String(value)], 'integer',
        deadline, null, value);
    }
    if (w === 'counter' && f === 'read') {
      return this.update(['TXN', 'R', COUNTER_KEY, '-'], 'counter-read', deadline);
    }
    if (w !== 'bank' || (f !== 'transfer' && f !== 'read')) {
      return ['fail', null, 'unsupported-op ' + String(f)];
    }
    let cmd;
    if (f === 'transfer') {
      const t = value !== null && typeof value === 'object' ? value : {};
      if (!isInt(t.from) || !isInt(t.to) || !isInt(t.amount)) {
        return ['fail', null, 'transfer needs {"from": int, "to": int, "amount": int}'];
      }
      cmd = ['XFER', accountKey(t.from), accountKey(t.to), String(t.amount)];
    } else {
      cmd = ['TXN'];
      for (let a = 0; a < this.accounts; a++) cmd.push('R', accountKey(a), '-');
    }
    if (!this.bankReady) {
      const init = ['MSETNX'];
      const each = Math.floor(this.total / this.accounts);
      for (let a = 0; a < this.accounts; a++) {
        const extra = a === 0 ? this.total % this.accounts : 0;
        init.push(accountKey(a), String(each + extra));
      }
      const [t, , err] = await this.update(init, 'init', deadline);
      // The operation itself was not sent, whatever became of the MSETNX.
      if (t !== 'ok') return ['fail', null, 'bank init: ' + err];
      this.bankReady = true;
    }
    return this.update(cmd, f === 'read' ? 'bank-read' : 'transfer', deadline,
      null, value);
  }
  async update(cmd, expect, deadline, txn, value) {
    let conn = this.own;
    for (let attempt = 0; attempt < 2; attempt++) {
      let r;
      try {
        r = await conn.call(cmd, deadline);
      } catch (e) {
        if (!(e instanceof CallError)) throw e;
        if (e.kind === 'connect' || !e.sent) return ['fail', null, 'connect: ' + e.detail];
        if (e.kind === 'timeout') return ['info', null, 'timeout'];
        return ['info', null, e.message];
      }
      if (r.kind === 'error') {
        const code = codeOf(r.value);
        if (code === 'NOTLEADER' && attempt === 0) {
          const target = redirectTarget(r.value);
          if (target === null ||
              (target.host === this.host && target.port === this.port)) {
            return ['fail', null, shorten(r.value)];
          }
          if (!this.leader || this.leader.host !== target.host ||
              this.leader.port !== target.port) {
            if (this.leader) this.leader.close();
            this.leader = new RespConn(target.host, target.port);
          }
          conn = this.leader;
          continue;
        }
        if (NO_EFFECT.has(code)) return ['fail', null, shorten(r.value)];
        if (code === 'TIMEOUT') return ['info', null, 'timeout'];
        return ['info', null, shorten(r.value)];
      }
      if (expect === 'ok' && r.kind === 'simple' && r.value === 'OK') return ['ok', null, ''];
      if (expect === 'token' && r.kind === 'int') return ['ok', r.value, ''];
      if (expect === 'cas' && r.kind === 'int' && (r.value === 0 || r.value === 1)) {
        return r.value === 1 ? ['ok', null, ''] : ['fail', null, 'mismatch'];
      }
      if (expect === 'txn') {
        const filled = txnResult(txn, r, this.listReads);
        if (filled !== null) return ['ok', filled, ''];
      }
      if (COLLECTION_EXPECTS.has(expect)) {
        const out = collectionResult(expect, r, value, this.accounts);
        if (out !== null) return out;
      }
      conn.close();  // out of step with the server: start afresh
      return ['info', null, 'unexpected reply'];
    }
    return ['fail', null, 'redirected twice'];  // not reached
  }
}

function send(obj) { process.stdout.write(JSON.stringify(obj) + '\n'); }

async function main() {
  let host; let port;
  const args = process.argv.slice(2);
  if (args.length === 2) {
    host = args[0]; port = parseInt(args[1], 10);
  } else if (args.length === 0) {
    host = process.env.FAULTLINE_NODE_IP || '127.0.0.1';
    port = parseInt(process.env.FAULTLINE_PORT_CLIENT || '6379', 10);
  } else {
    log('usage: raftkv_client.js [HOST PORT]');
    process.exit(2);
  }
  const defaultTimeout = parseInt(process.env.FAULTLINE_OP_TIMEOUT_MS || '2000', 10);
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  let client = null;
  // One message at a time, in order: faultline sends the next invoke only
  // after our answer, but queue anyway.
  for await (const line of rl) {
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    if (msg.type === 'hello') {
      send({ type: 'hello', protocol: PROTOCOL });
      const workload = msg.workload || process.env.FAULTLINE_WORKLOAD || '';
      const accounts = isInt(msg.accounts) ? msg.accounts
        : parseInt(process.env.FAULTLINE_ACCOUNTS || '5', 10);
      const total = isInt(msg.total) ? msg.total
        : parseInt(process.env.FAULTLINE_TOTAL || '100', 10);
      client = new Client(host, port, 1000, workload, accounts, total);
      continue;
    }
    if (msg.type !== 'invoke' || client === null) continue;
    let t; let v; let err;
    try {
      [t, v, err] = await client.invoke(msg.f, msg.key === undefined ? null : msg.key,
        msg.value === undefined ? null : msg.value, msg.timeout_ms || defaultTimeout);
    } catch (e) {  // unexpected: the request may have been sent
      log(`op ${msg.id}: ${e.stack || e}`);
      [t, v, err] = [msg.f === 'read' ? 'fail' : 'info', null, `exception: ${e.message}`];
    }
    const answer = { type: t, id: msg.id };
    if (t === 'ok') answer.value = v === undefined ? null : v;
    else if (err) answer.error = err;
    send(answer);
  }
  if (client) {
    client.own.close();
    if (client.leader) client.leader.close();
  }
}

main().catch((e) => { log(e.stack || String(e)); process.exit(1); });
