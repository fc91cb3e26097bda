#include "targets/raftkv/server/log.h"

#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace faultline::raftkv::server {
namespace {

std::uint64_t g_node = 0;
LogLevel g_level = LogLevel::kInfo;

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kError:
      return "ERROR";
  }
  return "?";
}

}  // namespace

std::optional<LogLevel> ParseLogLevel(const std::string& s) {
  if (s == "debug") return LogLevel::kDebug;
  if (s == "info") return LogLevel::kInfo;
  if (s == "warn") return LogLevel::kWarn;
  if (s == "error") return LogLevel::kError;
  return std::nullopt;
}

void SetLogNode(std::uint64_t id) { g_node = id; }
void SetLogLevel(LogLevel level) { g_level = level; }
bool LogEnabled(LogLevel level) { return level >= g_level; }

void Logf(LogLevel level, const char* fmt, ...) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm utc{};
  gmtime_r(&ts.tv_sec, &utc);
  char line[4096];
  int n = std::snprintf(
      line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ n%llu %s ",
      utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
      utc.tm_sec, ts.tv_nsec / 1000000, static_cast<unsigned long long>(g_node),
      LevelName(level));
  va_list ap;
  va_start(ap, fmt);
  int m = std::vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
  va_end(ap);
  std::size_t len = static_cast<std::size_t>(n) +
                    std::min<std::size_t>(m < 0 ? 0 : m, sizeof line - n - 2);
  line[len++] = '\n';
  ssize_t ignored = ::write(STDERR_FILENO, line, len);
  (void)ignored;
}

}  // namespace faultline::raftkv::server
