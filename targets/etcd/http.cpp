#include "targets/etcd/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace faultline::targets::etcd {
namespace {

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::size_t AppendBody(char* data, std::size_t size, std::size_t nmemb,
                       void* user) {
  static_cast<std::string*>(user)->append(data, size * nmemb);
  return size * nmemb;
}

// The body of one POST as libcurl reads it (ReadBody). `offset` > 0 once any
// of it was handed over to be sent.
struct Upload {
  std::string_view body;
  std::size_t offset = 0;
};

std::size_t ReadBody(char* buffer, std::size_t size, std::size_t nitems,
                     void* user) {
  auto* up = static_cast<Upload*>(user);
  const std::size_t n = std::min(size * nitems, up->body.size() - up->offset);
  if (n > 0) std::memcpy(buffer, up->body.data() + up->offset, n);
  up->offset += n;
  return n;
}

// libcurl asks to rewind the body only to resend it on a fresh connection
// after the kept one died with the request unanswered: refused, so that
// transfer fails (CURLE_SEND_FAIL_REWIND) instead of applying a put twice.
int NoRewind(void* /*user*/, curl_off_t /*offset*/, int /*origin*/) {
  return CURL_SEEKFUNC_FAIL;
}

}  // namespace

HttpSession::HttpSession() {
  GlobalInitOnce();
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return;
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_PROXY, "");
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
  curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, NoRewind);
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue
  handle_ = curl;
  headers_ = headers;
}

HttpSession::~HttpSession() {
  if (handle_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(handle_));
  if (headers_ != nullptr)
    curl_slist_free_all(static_cast<curl_slist*>(headers_));
}

HttpReply HttpSession::Post(const std::string& url, std::string_view body,
                            long timeout_ms) {
  return Perform(url, &body, timeout_ms);
}

HttpReply HttpSession::Get(const std::string& url, long timeout_ms) {
  return Perform(url, nullptr, timeout_ms);
}

HttpReply HttpSession::Perform(const std::string& url,
                               const std::string_view* body, long timeout_ms) {
  HttpReply reply;
  if (handle_ == nullptr) {
    reply.transport = Transport::kRefused;
    reply.error = "curl_easy_init failed";
    return reply;
  }
  CURL* curl = static_cast<CURL*>(handle_);
  Upload upload;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
  if (body != nullptr) {
    // Through ReadBody, not CURLOPT_POSTFIELDS: libcurl rewinds POSTFIELDS
    // by itself, and would resend them.
    upload.body = *body;
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(body->size()));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER,
                     static_cast<curl_slist*>(headers_));
  } else {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  }
  CURLcode code = curl_easy_perform(curl);
  // Whether the server may have the whole request: some of the body was
  // handed over (an empty body: the headers alone are the request, and
  // whether they went out is not known, so assume they did).
  const bool maybe_sent =
      body != nullptr && (upload.offset > 0 || body->empty());
  switch (code) {
    case CURLE_OK:
      reply.transport = Transport::kOk;
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
      return reply;
    case CURLE_COULDNT_CONNECT:
      // A kept connection can die after the request went out on it (the
      // member was killed before answering); libcurl then reconnects, and
      // reports only the refused reconnect.
      if (maybe_sent) {
        reply.transport = Transport::kOther;
        reply.error = std::string(
                          "connection lost after the request was "
                          "sent; reconnect: ") +
                      curl_easy_strerror(code);
        return reply;
      }
      reply.transport = Transport::kRefused;
      break;
    case CURLE_SEND_FAIL_REWIND:  // NoRewind refused a resend
      reply.transport = Transport::kOther;
      reply.error =
          "connection lost after the request was sent (not sent again)";
      return reply;
    case CURLE_OPERATION_TIMEDOUT:
      reply.transport = Transport::kTimeout;
      break;
    default:
      reply.transport = Transport::kOther;
      break;
  }
  reply.error = curl_easy_strerror(code);
  return reply;
}

}  // namespace faultline::targets::etcd
