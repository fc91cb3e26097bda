// A minimal HTTP/1.1 client over one libcurl easy handle: keep-alive
// (the connection is reused across requests), no proxy (traffic goes only
// to the address in the URL), no signals (CURLOPT_NOSIGNAL), a total
// timeout per request. A request that fails or times out leaves no
// connection behind (libcurl closes it), so a late answer can never be read
// as the answer to the next request.
//
// A POST is sent at most once. libcurl by itself resends a request whose
// kept-alive connection died before any reply byte arrived, on a fresh
// connection; that is wrong for a put or a txn, which the dead connection's
// server may already have applied (etcd killed right after applying it).
// Here the body is handed over by a read callback that cannot rewind, so
// such a resend fails instead (kOther).
//
// Transport errors are classified for honest operation outcomes:
//   kRefused  no connection could be established and no byte of the POST
//             body had been handed to one (request never delivered), e.g.
//             connection refused (an empty POST body never counts as
//             undelivered)
//   kTimeout  the request's time ran out (it may or may not have arrived)
//   kOther    anything else (reset, empty reply, a connection that died
//             after the body was sent and a reconnect that was refused,
//             ...; may have arrived)
// A GET (side-effect free here) may still be resent by libcurl; a refused
// reconnect after it is kRefused.
//
// Thread-safety: one HttpSession per thread (a libcurl easy handle must not
// be used concurrently). Construction initialises libcurl once per process.
#pragma once

#include <string>
#include <string_view>

namespace faultline::targets::etcd {

enum class Transport { kOk, kRefused, kTimeout, kOther };

struct HttpReply {
  Transport transport = Transport::kOther;
  std::string error;  // curl's description when transport != kOk
  long status = 0;    // HTTP status when transport == kOk
  std::string body;
};

class HttpSession {
 public:
  HttpSession();
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  // POSTs `body` as application/json. `timeout_ms` bounds the whole request,
  // connection included.
  HttpReply Post(const std::string& url, std::string_view body,
                 long timeout_ms);
  HttpReply Get(const std::string& url, long timeout_ms);

  // False if libcurl could not create a handle (every request then fails
  // with kRefused: nothing was sent).
  bool valid() const { return handle_ != nullptr; }

 private:
  HttpReply Perform(const std::string& url, const std::string_view* body,
                    long timeout_ms);
  void* handle_ = nullptr;   // CURL*
  void* headers_ = nullptr;  // curl_slist*
};

}  // namespace faultline::targets::etcd
