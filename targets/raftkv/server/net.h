// Socket helpers for the raftkv server: non-blocking TCP listen/connect on
// IPv4/IPv6 literals or names (resolved with getaddrinfo, so call at
// startup or for numeric hosts only), socket options. Expected failures are
// returned as -1 with *error set. Thread-safety: stateless.
#pragma once

#include <string>

namespace faultline::raftkv::server {

// A non-blocking listening socket bound to host:port (SO_REUSEADDR).
int ListenTcp(const std::string& host, int port, std::string* error);

// Starts a non-blocking connect. Returns the fd (connection in progress or
// established) or -1. Completion: poll for POLLOUT, then ConnectResult().
int ConnectTcp(const std::string& host, int port, std::string* error);

// After POLLOUT on a connecting socket: 0 if connected, else the errno.
int ConnectResult(int fd);

// Accepts one connection as non-blocking; -1 if none (EAGAIN) or on error.
int AcceptTcp(int listen_fd);

void SetNoDelay(int fd);
// Keepalive probing and a user timeout so a silently dead peer (partition)
// is detected within about `timeout_ms`.
void SetDeadPeerTimeout(int fd, int timeout_ms);

// Closes fd if >= 0 and sets it to -1.
void CloseFd(int* fd);

}  // namespace faultline::raftkv::server
