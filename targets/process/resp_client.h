// The `resp` client of `target: process` (docs/targets/process-resp.md): a
// register and lock client for any server that speaks the Redis protocol
// (RESP2, over targets/raftkv/resp_conn.h), with the command sent for each
// operation taken from the config, so Redis-compatible systems need no code.
//
// Commands are argv templates per operation name (register: read write cas;
// lock: acquire renew release). Placeholders, expanded per operation:
//   {key}    the key (a string as is, an integer in decimal, null as "_")
//   {value}  write: the value as JSON text (integers in decimal)
//   {old}    cas: the expected value as JSON text ("null" when absent)
//   {new}    cas: the new value as JSON text
//   {ttl}    acquire: the op's TTL in ms (lock_ttl_ms when it gives none);
//            renew: the TTL of this client's last acquire of that lock
//   {owner}  acquire: a fresh owner id; renew/release: that acquire's owner
//   {token}  renew/release: the token (the op's value)
// "{{" and "}}" become "{" and "}"; any other text in braces is sent as is
// (so a template whose node placeholders the target already expanded, with
// or without its escapes undone, gives the same command).
//
// Outcomes (f's value is the history value; see the doc for the full table):
//   read     bulk or status -> ok with the value parsed from JSON text (text
//            that is not JSON stays a string), integer -> ok, nil -> ok null;
//            a timeout -> info; anything else -> fail (a read has no effect).
//   write    a status or integer reply -> ok.
//   cas      :1 or +OK -> ok, :0 -> fail "mismatch".
//   acquire  an integer token > 0 -> ok with the token; :0, nil or an error
//            saying the lock is held (-LOCKED) -> fail "held".
//   renew    :1 or +OK -> ok; :0, nil or -NOTOWNER -> fail "not-held".
//   release  as renew. Both fail "not-held" without sending anything when
//            this client holds no token of that lock or the op's token is
//            not the one of its last acquire.
// For every update: nothing sent (could not connect, no primary found) or
// an error reply that means the command did not run (RespNoEffect) -> fail;
// a timeout, the connection lost after sending, any other reply -> info.
//
// Routes: "node" talks to host:port only. "sentinel" asks the sentinels in
// order `SENTINEL get-master-addr-by-name <master>`, connects to the answer
// and uses it only once `ROLE` says master; the connection is kept until an
// error says the node is no longer a writable primary (-READONLY,
// -NOREPLICAS, -MASTERDOWN, -LOADING), a timeout or a connection error.
// Then, within the same deadline, an operation that surely had no effect
// (nothing sent, or one of those errors) is retried once on a freshly
// discovered primary. Every operation is bounded by op_timeout_ms.
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
// The free functions are pure and thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/interfaces/client.h"
#include "targets/raftkv/resp_conn.h"

namespace faultline::targets::process {

struct RespClientOptions {
  std::string host;  // the worker's own node
  int port = 0;
  std::string route = "node";  // "node" | "sentinel"
  // "ip:port" of every node's sentinel, own node first (route sentinel).
  std::vector<std::string> sentinels;
  std::string master = "mymaster";  // sentinel master name
  // f -> argv template; an f with no entry is fail "unsupported-op".
  std::map<std::string, std::vector<std::string>> commands;
  long op_timeout_ms = 2000;
  long lock_ttl_ms = 1000;  // acquire's TTL when the op gives none
};

// Never fails: a bad route or sentinel address shows up as fail outcomes
// (nothing sent) when operations run.
std::unique_ptr<harness::Client> MakeRespClient(RespClientOptions options);

// The placeholders allowed in resp commands (for the config validator):
// key value old new ttl token owner.
const std::vector<std::string>& RespPlaceholders();

// Default commands for a workload ("register" or "lock"; {} for others):
//   read     GET r/{key}
//   write    SET r/{key} {value}
//   cas      EVAL (GET; SET when equal, "null" matching an absent key;
//            1 or 0) 1 r/{key} {old} {new}
//   acquire  EVAL (SET lock:{key} {owner} NX PX {ttl}, then INCR
//            lock:{key}:token in the same script; the token or 0)
//   renew    EVAL (PEXPIRE lock:{key} {ttl} if it holds {owner}; 1 or 0)
//   release  EVAL (DEL lock:{key} if it holds {owner}; 1 or 0)
// Plain Lua without "#!lua" flags, so Redis 6, Redis 7 and their forks
// accept it.
std::map<std::string, std::vector<std::string>> DefaultRespCommands(
    const std::string& workload);

// --- pure pieces, exposed for tests --------------------------------------

// Expands one argv template (see the header comment) with `values`
// (placeholder name -> text). A known placeholder missing from `values`
// expands to "".
std::vector<std::string> ExpandRespCommand(
    const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& values);

// {key}'s text: a string as is, an integer in decimal, null "_"; "" for any
// other shape (unsupported).
std::string RespKeyText(const checkers::Value& key);

// True when an error reply with this first word means the command did not
// run: Redis's refusals before running a command (redis::NoEffect: READONLY
// NOREPLICAS OOM MASTERDOWN LOADING BUSY NOSCRIPT WRONGTYPE NOAUTH ERR) and
// raftkv's (NOTLEADER NOLEADER LOCKED NOTOWNER).
bool RespNoEffect(std::string_view code);

// The outcome of operation `f` (read write cas acquire renew release) whose
// call gave `r`; `arg` is the op's value (kept on fail and info).
harness::Completion RespOutcome(const std::string& f,
                                const raftkv::CallResult& r,
                                const checkers::Value& arg);

}  // namespace faultline::targets::process
