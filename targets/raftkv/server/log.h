// Logging for the raftkv server: one line per event on stderr,
//   2026-11-30T07:35:43.123Z n1 INFO role=leader term=5 leader=1
// The node id and level threshold are set once at startup (SetLogNode,
// SetLogLevel). Thread-safety: each call writes one line with one write(2);
// the settings are meant to be set before anything logs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace faultline::raftkv::server {

enum class LogLevel : std::uint8_t { kDebug, kInfo, kWarn, kError };

// Parses "debug", "info", "warn" (and "error").
std::optional<LogLevel> ParseLogLevel(const std::string& s);

void SetLogNode(std::uint64_t id);
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

// printf-style; the line gets timestamp, node and level prefixes and a
// trailing newline.
void Logf(LogLevel level, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

}  // namespace faultline::raftkv::server

#define RAFTKV_LOG(level, ...)                               \
  do {                                                       \
    if (::faultline::raftkv::server::LogEnabled(level))      \
      ::faultline::raftkv::server::Logf(level, __VA_ARGS__); \
  } while (0)
#define RAFTKV_DEBUG(...) \
  RAFTKV_LOG(::faultline::raftkv::server::LogLevel::kDebug, __VA_ARGS__)
#define RAFTKV_INFO(...) \
  RAFTKV_LOG(::faultline::raftkv::server::LogLevel::kInfo, __VA_ARGS__)
#define RAFTKV_WARN(...) \
  RAFTKV_LOG(::faultline::raftkv::server::LogLevel::kWarn, __VA_ARGS__)
#define RAFTKV_ERROR(...) \
  RAFTKV_LOG(::faultline::raftkv::server::LogLevel::kError, __VA_ARGS__)
