#include "targets/zookeeper/zk_config.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace faultline::targets::zookeeper {
namespace {

std::string Trim(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(0, s.find_first_not_of(ws));
  const auto end = s.find_last_not_of(ws);
  s.erase(end == std::string::npos ? 0 : end + 1);
  return s;
}

}  // namespace

std::string RenderZooCfg(const ZooCfg& cfg) {
  std::ostringstream o;
  o << "# Written by faultline; one file per node.\n";
  o << "tickTime=" << cfg.tick_ms << "\n";
  o << "initLimit=" << cfg.init_limit << "\n";
  o << "syncLimit=" << cfg.sync_limit << "\n";
  o << "dataDir=" << cfg.data_dir << "\n";
  o << "clientPort=" << kClientPort << "\n";
  o << "clientPortAddress=" << cfg.client_ip << "\n";
  // Every client comes from the controller's one address.
  o << "maxClientCnxns=0\n";
  o << "4lw.commands.whitelist=srvr,mntr\n";
  o << "admin.enableServer=false\n";
  o << "autopurge.purgeInterval=0\n";
  if (cfg.server_ips.size() > 1) {
    for (std::size_t i = 0; i < cfg.server_ips.size(); ++i) {
      o << "server." << i + 1 << "=" << cfg.server_ips[i] << ":" << kQuorumPort
        << ":" << kElectionPort << "\n";
    }
  }
  return o.str();
}

std::vector<std::string> JavaCommand(const std::string& java,
                                     const std::string& classpath,
                                     const std::string& cfg_path,
                                     const std::string& log_dir,
                                     bool force_sync) {
  // A small heap and the C1 compiler only: faster start, less CPU on a
  // machine shared with the rest of the run.
  std::vector<std::string> argv = {
      java,
      "-Xmx256m",
      "-Xms32m",
      "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1",
      "-Djava.net.preferIPv4Stack=true",
      "-Dzookeeper.log.dir=" + log_dir,
      "-Dorg.slf4j.simpleLogger.showDateTime=true",
      "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSS",
      "-cp",
      classpath,
      "org.apache.zookeeper.server.quorum.QuorumPeerMain",
      cfg_path};
  if (!force_sync) {
    argv.insert(argv.end() - 4, "-Dzookeeper.forceSync=no");
  }
  return argv;
}

std::optional<SrvrInfo> ParseSrvr(const std::string& text) {
  SrvrInfo info;
  if (text.find("not currently serving requests") != std::string::npos) {
    return info;
  }
  bool saw_mode = false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = Trim(line.substr(0, colon));
    const std::string value = Trim(line.substr(colon + 1));
    if (name == "Mode") {
      info.mode = value;
      saw_mode = true;
    } else if (name == "Zxid") {
      std::string hex = value;
      if (hex.rfind("0x", 0) == 0 || hex.rfind("0X", 0) == 0) {
        hex = hex.substr(2);
      }
      std::uint64_t z = 0;
      auto [p, ec] =
          std::from_chars(hex.data(), hex.data() + hex.size(), z, 16);
      if (ec == std::errc() && p == hex.data() + hex.size() && !hex.empty()) {
        info.zxid = z;
      }
    }
  }
  if (!saw_mode) return std::nullopt;
  info.serving = true;
  return info;
}

int ClampSessionTimeout(int requested_ms, int tick_ms) {
  return std::clamp(requested_ms, 2 * tick_ms, 20 * tick_ms);
}

long long SequenceOf(const std::string& name) {
  // ZooKeeper appends a 10-digit, zero-padded counter.
  if (name.size() < 10) return -1;
  const std::string digits = name.substr(name.size() - 10);
  long long v = 0;
  auto [p, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || p != digits.data() + digits.size() || v < 0) {
    return -1;
  }
  return v;
}

std::optional<std::string> LockPredecessor(
    const std::vector<std::string>& children, const std::string& own) {
  const long long mine = SequenceOf(own);
  if (mine < 0) return std::nullopt;
  bool found = false;
  std::string best;
  long long best_seq = -1;
  for (const std::string& c : children) {
    if (c == own) {
      found = true;
      continue;
    }
    const long long s = SequenceOf(c);
    if (s >= 0 && s < mine && s > best_seq) {
      best_seq = s;
      best = c;
    }
  }
  if (!found) return std::nullopt;
  return best;
}

}  // namespace faultline::targets::zookeeper
