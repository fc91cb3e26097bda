// raftkv: one node of faultline's own Raft key-value and lock server.
// Usage: docs/targets/raftkv.md ("Running it"), or raftkv --help.
// Exit codes: 0 clean stop (SIGTERM/SIGINT), 1 runtime failure (cannot
// bind, damaged data directory, failed fsync), 2 bad flags or config file.
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "targets/raftkv/server/flags.h"
#include "targets/raftkv/server/log.h"
#include "targets/raftkv/server/server.h"

namespace {

void OnSignal(int) { faultline::raftkv::server::Server::RequestStop(); }

}  // namespace

int main(int argc, char** argv) {
  namespace srv = faultline::raftkv::server;
  std::vector<std::string> args(argv + 1, argv + argc);
  srv::FlagsResult f = srv::ParseFlags(args);
  if (f.help) {
    std::fputs(srv::Usage().c_str(), stdout);
    return 0;
  }
  if (!f.ok) {
    std::fprintf(stderr, "raftkv: %s\n", f.error.c_str());
    return 2;
  }
  srv::SetLogNode(f.options.id);
  srv::SetLogLevel(f.options.log_level);

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  srv::Server server(std::move(f.options));
  if (std::string err = server.Start(); !err.empty()) {
    RAFTKV_ERROR("cannot start: %s", err.c_str());
    return 1;
  }
  return server.Run();
}
