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
// rw-register); see the Python client's docstring for the details.
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
  constructor(host, port, lockTtlMs, listReads) {
    this.host = host; this.port = port; this.lockTtlMs = lockTtlMs;
    this.listReads = listReads;  // txn: an absent key reads [] (not null)
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
  async update(cmd, expect, deadline, txn) {
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
      client = new Client(host, port, 1000, workload === 'list-append');
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
