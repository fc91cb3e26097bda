// The control protocol of the lazy file system: one command per
// line, written by the controller to the daemon's control file or socket,
// one answer line back, a JSON object. Pure: parsing and formatting here,
// and RunControl applies a command to a WriteCache; the daemon (not written
// yet) does the I/O.
//
// Commands (words separated by spaces or tabs; numbers decimal):
//   drop               forget every unsynced write (DropAll)
//   torn SEED          keep a random prefix of each file's (Torn)
//   flip SEED N        flip N bits of unsynced data, write it back (FlipBits)
//   fsync-error N      the next N syncs fail with EIO (0 cancels)
//   disk-full on|off   growing writes fail with ENOSPC
//   latency MS         delay per operation, 0..kMaxLatencyMs
//   sync               write everything back and fsync (SyncAll)
//   heal               fsync-error 0, disk-full off and latency 0 at once
//   status             settings and counters
// Answers, without the trailing newline, e.g.
//   {"ok":true,"op":"drop","files":1,"dropped_writes":3,"dropped_bytes":4096,...}
//   {"ok":false,"error":"torn: expected torn SEED (a decimal number)"}
//
// Thread-safety: the functions keep no state; RunControl is as safe as
// WriteCache.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "harness/interfaces/result.h"

namespace faultline::nemesis::disk {

class WriteCache;
struct CrashReport;
struct CacheStatus;

inline constexpr std::uint64_t kMaxLatencyMs = 600000;  // 10 minutes
inline constexpr std::uint64_t kMaxFlipBits = 1u << 20;

enum class ControlOp {
  kDrop,
  kTorn,
  kFlip,
  kFsyncError,
  kDiskFull,
  kLatency,
  kSync,
  kStatus,
  kHeal,
};

struct ControlCommand {
  ControlOp op = ControlOp::kStatus;
  std::uint64_t seed = 0;   // torn, flip
  std::uint64_t count = 0;  // flip: bits; fsync-error: syncs
  bool on = false;          // disk-full
  std::uint64_t ms = 0;     // latency
};

// The command word as written above ("fsync-error" for kFsyncError).
const char* ControlOpName(ControlOp op);

// Parses one line (a trailing "\r\n" or "\n" and surrounding blanks are
// ignored). The error says what was expected.
harness::Result<ControlCommand> ParseControlLine(std::string_view line);

// Answer lines.
std::string FormatCrashAnswer(const CrashReport& report);
std::string FormatStatusAnswer(const CacheStatus& status);
std::string FormatErrorAnswer(std::string_view message);
// `answer` (an object line from above) with `"key":value` added at its end;
// the daemon adds the namespace journal's counts this way.
std::string WithNumber(std::string answer, std::string_view key,
                       std::uint64_t value);
std::string WithString(std::string answer, std::string_view key,
                       std::string_view value);

// Applies `command` to `cache` and returns the answer line.
std::string RunControl(WriteCache& cache, const ControlCommand& command);
// Parses and applies `line`; a parse error gives an error answer.
std::string RunControlLine(WriteCache& cache, std::string_view line);

}  // namespace faultline::nemesis::disk
