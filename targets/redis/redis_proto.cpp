#include "targets/redis/redis_proto.h"

#include <charconv>

namespace faultline::targets::redis {

int SentinelQuorum(int nodes) { return nodes <= 1 ? 1 : nodes / 2 + 1; }

std::string RenderRedisConf(const harness::RedisSpec& spec,
                            const std::string& ip, const std::string& data_dir,
                            const std::string& primary_ip) {
  std::string c;
  c += "# written by faultline for one run; Sentinel may rewrite it\n";
  c += "port " + std::to_string(kRedisPort) + "\n";
  c += "bind " + ip + "\n";
  // Redis 7 refuses every non-loopback client of a password-less default
  // user unless protected mode is off.
  c += "protected-mode no\n";
  c += "daemonize no\n";
  c += "logfile \"\"\n";
  c += "dir " + data_dir + "\n";
  c += "save \"\"\n";
  c += std::string("appendonly ") + (spec.appendonly ? "yes" : "no") + "\n";
  // Matters only with appendonly: when the AOF is fsynced (always: before
  // each reply; everysec: by a background thread each second; no: never).
  c += "appendfsync " + spec.appendfsync + "\n";
  // Full syncs start at once instead of waiting 5 s for more replicas.
  c += "repl-diskless-sync yes\n";
  c += "repl-diskless-sync-delay 0\n";
  if (spec.min_replicas_to_write > 0) {
    c += "min-replicas-to-write " + std::to_string(spec.min_replicas_to_write) +
         "\n";
    c += "min-replicas-max-lag " + std::to_string(spec.min_replicas_max_lag_s) +
         "\n";
  }
  if (!primary_ip.empty()) {
    c += "replicaof " + primary_ip + " " + std::to_string(kRedisPort) + "\n";
  }
  return c;
}

std::string RenderSentinelConf(const harness::RedisSpec& spec,
                               const std::string& ip, const std::string& dir,
                               const std::string& primary_ip, int quorum) {
  const std::string m = kMasterName;
  std::string c;
  c += "# written by faultline for one run; Sentinel rewrites it\n";
  c += "port " + std::to_string(kSentinelPort) + "\n";
  c += "bind " + ip + "\n";
  c += "protected-mode no\n";
  c += "daemonize no\n";
  c += "logfile \"\"\n";
  c += "dir " + dir + "\n";
  c += "sentinel monitor " + m + " " + primary_ip + " " +
       std::to_string(kRedisPort) + " " + std::to_string(quorum) + "\n";
  c += "sentinel down-after-milliseconds " + m + " " +
       std::to_string(spec.down_after_ms) + "\n";
  c += "sentinel failover-timeout " + m + " " +
       std::to_string(spec.failover_timeout_ms) + "\n";
  c += "sentinel parallel-syncs " + m + " 1\n";
  return c;
}

std::map<std::string, std::string> ParseInfo(std::string_view text) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view()
                                         : text.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    out[std::string(line.substr(0, colon))] =
        std::string(line.substr(colon + 1));
  }
  return out;
}

namespace {

bool IsText(const resp::Value& v) {
  return v.kind == resp::Value::Kind::kBulk ||
         v.kind == resp::Value::Kind::kSimple;
}

std::optional<long long> ToInt(std::string_view s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

Role ParseRole(const resp::Value& reply) {
  Role r;
  if (reply.kind != resp::Value::Kind::kArray || reply.array.empty() ||
      !IsText(reply.array[0])) {
    return r;
  }
  const auto& a = reply.array;
  const std::string& role = a[0].str;
  if (role == "master") {
    if (a.size() >= 3 && a[2].kind == resp::Value::Kind::kArray) {
      r.replicas = static_cast<int>(a[2].array.size());
    }
    r.role = role;
  } else if (role == "slave") {
    if (a.size() < 4 || !IsText(a[1]) || !IsText(a[3])) return r;
    r.master_ip = a[1].str;
    if (a[2].kind == resp::Value::Kind::kInteger) {
      r.master_port = static_cast<int>(a[2].integer);
    } else if (IsText(a[2])) {
      r.master_port = static_cast<int>(ToInt(a[2].str).value_or(0));
    }
    r.link = a[3].str;
    r.role = role;
  } else if (role == "sentinel") {
    r.role = role;
  }
  return r;
}

std::map<std::string, std::string> ParsePairs(const resp::Value& reply) {
  std::map<std::string, std::string> out;
  if (reply.kind != resp::Value::Kind::kArray || reply.array.size() % 2 != 0) {
    return out;
  }
  for (std::size_t i = 0; i + 1 < reply.array.size(); i += 2) {
    const auto& k = reply.array[i];
    const auto& v = reply.array[i + 1];
    if (!IsText(k)) return {};
    if (IsText(v)) {
      out[k.str] = v.str;
    } else if (v.kind == resp::Value::Kind::kInteger) {
      out[k.str] = std::to_string(v.integer);
    }
  }
  return out;
}

std::optional<HostPort> ParseMasterAddr(const resp::Value& reply) {
  if (reply.kind != resp::Value::Kind::kArray || reply.array.size() != 2 ||
      !IsText(reply.array[0]) || !IsText(reply.array[1])) {
    return std::nullopt;
  }
  auto port = ToInt(reply.array[1].str);
  if (!port || *port <= 0 || *port > 65535 || reply.array[0].str.empty()) {
    return std::nullopt;
  }
  return HostPort{reply.array[0].str, static_cast<int>(*port)};
}

std::string NormalizeRole(const std::string& redis_role) {
  if (redis_role == "master") return "leader";
  if (redis_role == "slave") return "follower";
  return "";
}

std::string Field(const std::map<std::string, std::string>& m,
                  const std::string& field) {
  auto it = m.find(field);
  return it == m.end() ? "" : it->second;
}

long long FieldInt(const std::map<std::string, std::string>& m,
                   const std::string& field, long long fallback) {
  return ToInt(Field(m, field)).value_or(fallback);
}

std::string_view ErrorCode(std::string_view error) {
  return error.substr(0, error.find(' '));
}

bool NoEffect(std::string_view code) {
  return code == "READONLY" || code == "NOREPLICAS" || code == "OOM" ||
         code == "MASTERDOWN" || code == "LOADING" || code == "BUSY" ||
         code == "NOSCRIPT" || code == "WRONGTYPE" || code == "NOAUTH" ||
         code == "ERR";
}

bool Rediscover(std::string_view code) {
  return code == "READONLY" || code == "NOREPLICAS" || code == "MASTERDOWN" ||
         code == "LOADING";
}

// "#!lua" (Redis 7 script flags, none given): the script may write, so a
// read-only replica refuses it with -READONLY before it runs, and a primary
// short of min-replicas-to-write refuses it with -NOREPLICAS.
const char* const kReadScript =
    "#!lua\n"
    "return redis.call('GET', KEYS[1])\n";

const char* const kCasScript =
    "#!lua\n"
    "local v = redis.call('GET', KEYS[1])\n"
    "if (ARGV[3] == '1' and v == false) or (ARGV[3] ~= '1' and v == ARGV[1]) "
    "then\n"
    "  redis.call('SET', KEYS[1], ARGV[2])\n"
    "  return 1\n"
    "end\n"
    "return 0\n";

const char* const kRenewScript =
    "#!lua\n"
    "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
    "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
    "  return 1\n"
    "end\n"
    "return 0\n";

const char* const kReleaseScript =
    "#!lua\n"
    "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
    "  redis.call('DEL', KEYS[1])\n"
    "  return 1\n"
    "end\n"
    "return 0\n";

}  // namespace faultline::targets::redis
