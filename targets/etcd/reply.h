// How a gateway request ended, for the etcd clients' outcomes: whether it
// got a usable answer, and in a few words why not. Internal to
// targets/etcd/.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "targets/etcd/gateway.h"
#include "targets/etcd/http.h"

namespace faultline::targets::etcd {

// An HTTP 200 answer (its body may still not parse).
inline bool Answered(const HttpReply& r) {
  return r.transport == Transport::kOk && r.status == 200;
}

// "connection-refused", "timeout", "transport: <curl>" or
// "http <status>: <gateway error>".
inline std::string WhyUnanswered(const HttpReply& r) {
  switch (r.transport) {
    case Transport::kRefused:
      return "connection-refused";
    case Transport::kTimeout:
      return "timeout";
    case Transport::kOther:
      return "transport: " + r.error;
    case Transport::kOk:
      break;
  }
  return "http " + std::to_string(r.status) + ": " + ErrorSummary(r.body);
}

}  // namespace faultline::targets::etcd
