// The value an exec client's ok answer gives an operation
// (docs/exec-protocol.md, "Invoke and answer" and the vocabularies), or why
// the answer is invalid. Pure: no I/O; ExecClient calls it for every ok
// answer and records an invalid one as a misbehaviour (info).
//
// By f (whatever the workload, unless it says otherwise):
//   status    value required, an object; recorded as is.
//   acquire   value required, an integer (the token).
//   txn       value required: the micro-op list sent, as long and in the
//             same order, each [f, k, v] with the f and k sent, the v sent
//             for every micro-op but a read ("r"), whose v is any JSON.
//   read      value required. register (and any workload without a read
//             shape below): any JSON. set: a list whose elements are
//             integers or strings. counter: an integer. bank: an object
//             whose every field is one of the account names "0" ..
//             "accounts-1", at most once, with an integer balance. A read
//             that leaves an account out is accepted: the bank checker
//             reports it (missing-account) as the system's doing.
//   add       (set, counter) value required and equal to the value sent
//             (the element, the increment).
//   transfer  (bank) value required: an object with the sent "from", "to"
//             and "amount" and no other field, in any order.
//   others    (write, cas, renew, release) value ignored; the invocation's
//             value is recorded.
// The recorded value is the answer's value for status, acquire, txn and
// read, and the invocation's for the others (an echo equals it anyway).
#pragma once

#include <string>

#include "checkers/value.h"
#include "harness/interfaces/client.h"
#include "harness/interfaces/result.h"

namespace faultline::targets::process {

// `workload` is the client's ("register", "set", "bank", ...); `accounts`
// the bank's number of accounts (used for bank reads only). `value` is the
// answer's "value" field, nullptr when absent. The error says what is
// wrong, e.g. "ok to a read without \"value\"".
harness::Result<checkers::Value> OkAnswerValue(const std::string& workload,
                                               int accounts,
                                               const harness::Operation& op,
                                               const checkers::Value* value);

}  // namespace faultline::targets::process
