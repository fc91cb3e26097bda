#include "nemesis/disk/control.h"

#include <charconv>
#include <vector>

#include "nemesis/disk/write_cache.h"

namespace faultline::nemesis::disk {

namespace {

using harness::Fail;
using harness::Result;

constexpr const char* kUsage =
    "expected one of: drop, torn SEED, flip SEED N, fsync-error N, "
    "disk-full on|off, latency MS, sync, heal, status";

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' ||
                               line[i] == '\r' || line[i] == '\n')) {
      ++i;
    }
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' &&
           line[j] != '\r' && line[j] != '\n') {
      ++j;
    }
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

bool ParseNumber(std::string_view word, std::uint64_t& out) {
  if (word.empty() || word.front() < '0' || word.front() > '9') return false;
  const char* end = word.data() + word.size();
  auto [ptr, ec] = std::from_chars(word.data(), end, out);
  return ec == std::errc() && ptr == end;
}

void AppendString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  out += '"';
}

// A JSON object built field by field: {"ok":...,...}.
class Answer {
 public:
  explicit Answer(bool ok) { out_ = ok ? "{\"ok\":true" : "{\"ok\":false"; }
  Answer& Str(std::string_view key, std::string_view value) {
    Key(key);
    AppendString(out_, value);
    return *this;
  }
  Answer& Num(std::string_view key, std::uint64_t value) {
    Key(key);
    out_ += std::to_string(value);
    return *this;
  }
  Answer& Bool(std::string_view key, bool value) {
    Key(key);
    out_ += value ? "true" : "false";
    return *this;
  }
  Answer& Raw(std::string_view key, std::string_view json) {
    Key(key);
    out_ += json;
    return *this;
  }
  std::string Done() { return out_ + "}"; }

 private:
  void Key(std::string_view key) {
    out_ += ',';
    AppendString(out_, key);
    out_ += ':';
  }
  std::string out_;
};

}  // namespace

const char* ControlOpName(ControlOp op) {
  switch (op) {
    case ControlOp::kDrop:
      return "drop";
    case ControlOp::kTorn:
      return "torn";
    case ControlOp::kFlip:
      return "flip";
    case ControlOp::kFsyncError:
      return "fsync-error";
    case ControlOp::kDiskFull:
      return "disk-full";
    case ControlOp::kLatency:
      return "latency";
    case ControlOp::kSync:
      return "sync";
    case ControlOp::kStatus:
      return "status";
    case ControlOp::kHeal:
      return "heal";
  }
  return "?";
}

Result<ControlCommand> ParseControlLine(std::string_view line) {
  const std::vector<std::string_view> w = Words(line);
  if (w.empty()) return Fail(std::string("empty command; ") + kUsage);
  const std::string_view name = w[0];
  const std::size_t args = w.size() - 1;
  ControlCommand c;
  auto wrong = [&](const std::string& form) {
    return Fail(std::string(name) + ": expected " + form);
  };
  if (name == "drop" || name == "sync" || name == "status" || name == "heal") {
    c.op = name == "drop"   ? ControlOp::kDrop
           : name == "sync" ? ControlOp::kSync
           : name == "heal" ? ControlOp::kHeal
                            : ControlOp::kStatus;
    if (args != 0) {
      return Fail(std::string(name) + " takes no argument, got " +
                  std::to_string(args));
    }
    return c;
  }
  if (name == "torn") {
    c.op = ControlOp::kTorn;
    if (args != 1 || !ParseNumber(w[1], c.seed)) {
      return wrong("torn SEED (a decimal number)");
    }
    return c;
  }
  if (name == "flip") {
    c.op = ControlOp::kFlip;
    if (args != 2 || !ParseNumber(w[1], c.seed) ||
        !ParseNumber(w[2], c.count) || c.count == 0 || c.count > kMaxFlipBits) {
      return wrong("flip SEED N (decimal numbers, 1 <= N <= " +
                   std::to_string(kMaxFlipBits) + ")");
    }
    return c;
  }
  if (name == "fsync-error") {
    c.op = ControlOp::kFsyncError;
    if (args != 1 || !ParseNumber(w[1], c.count)) {
      return wrong("fsync-error N (a decimal number, 0 cancels)");
    }
    return c;
  }
  if (name == "disk-full") {
    c.op = ControlOp::kDiskFull;
    if (args != 1 || (w[1] != "on" && w[1] != "off")) {
      return wrong("disk-full on|off");
    }
    c.on = w[1] == "on";
    return c;
  }
  if (name == "latency") {
    c.op = ControlOp::kLatency;
    if (args != 1 || !ParseNumber(w[1], c.ms) || c.ms > kMaxLatencyMs) {
      return wrong("latency MS (milliseconds, 0.." +
                   std::to_string(kMaxLatencyMs) + ")");
    }
    return c;
  }
  return Fail("unknown command '" + std::string(name) + "'; " + kUsage);
}

std::string FormatCrashAnswer(const CrashReport& r) {
  Answer a(true);
  a.Str("op", r.op)
      .Num("files", r.files)
      .Num("dropped_writes", r.dropped_writes)
      .Num("dropped_bytes", r.dropped_bytes)
      .Num("kept_writes", r.kept_writes)
      .Num("kept_bytes", r.kept_bytes)
      .Num("cut_writes", r.cut_writes)
      .Num("flipped_bits", r.flipped_bits);
  if (r.op == "flip") {
    std::string flips = "[";
    for (const FlipSite& f : r.flips) {
      if (flips.size() > 1) flips += ',';
      flips += "{\"file\":" + std::to_string(f.file) +
               ",\"offset\":" + std::to_string(f.offset) +
               ",\"bit\":" + std::to_string(f.bit) + "}";
    }
    a.Raw("flips", flips + "]");
  }
  a.Num("errors", r.errors);
  if (r.errors > 0) a.Str("first_error", r.first_error);
  return a.Done();
}

std::string FormatStatusAnswer(const CacheStatus& s) {
  return Answer(true)
      .Str("op", "status")
      .Num("files", s.files)
      .Num("held_writes", s.held_writes)
      .Num("held_bytes", s.held_bytes)
      .Num("sync_errors_pending", s.sync_errors_pending)
      .Bool("disk_full", s.disk_full)
      .Num("latency_ms", s.latency_ms)
      .Num("syncs", s.syncs)
      .Num("failed_syncs", s.failed_syncs)
      .Num("written_back_writes", s.written_back_writes)
      .Num("written_back_bytes", s.written_back_bytes)
      .Num("evicted_writes", s.evicted_writes)
      .Num("lost_writes", s.lost_writes)
      .Num("lost_bytes", s.lost_bytes)
      .Done();
}

std::string FormatErrorAnswer(std::string_view message) {
  return Answer(false).Str("error", message).Done();
}

std::string WithNumber(std::string answer, std::string_view key,
                       std::uint64_t value) {
  if (answer.empty() || answer.back() != '}') return answer;
  answer.pop_back();
  answer += ',';
  AppendString(answer, key);
  answer += ':' + std::to_string(value) + '}';
  return answer;
}

std::string WithString(std::string answer, std::string_view key,
                       std::string_view value) {
  if (answer.empty() || answer.back() != '}') return answer;
  answer.pop_back();
  answer += ',';
  AppendString(answer, key);
  answer += ':';
  AppendString(answer, value);
  answer += '}';
  return answer;
}

std::string RunControl(WriteCache& cache, const ControlCommand& c) {
  const char* op = ControlOpName(c.op);
  switch (c.op) {
    case ControlOp::kDrop:
      return FormatCrashAnswer(cache.DropAll());
    case ControlOp::kTorn:
      return FormatCrashAnswer(cache.Torn(c.seed));
    case ControlOp::kFlip:
      return FormatCrashAnswer(cache.FlipBits(c.seed, c.count));
    case ControlOp::kFsyncError:
      cache.FailNextSyncs(c.count);
      return Answer(true)
          .Str("op", op)
          .Num("sync_errors_pending", c.count)
          .Done();
    case ControlOp::kDiskFull:
      cache.SetDiskFull(c.on);
      return Answer(true).Str("op", op).Bool("disk_full", c.on).Done();
    case ControlOp::kLatency:
      cache.SetLatency(std::chrono::milliseconds(c.ms));
      return Answer(true).Str("op", op).Num("latency_ms", c.ms).Done();
    case ControlOp::kSync: {
      auto synced = cache.SyncAll();
      if (!synced) {
        return Answer(false).Str("op", op).Str("error", synced.error()).Done();
      }
      return Answer(true).Str("op", op).Done();
    }
    case ControlOp::kStatus:
      return FormatStatusAnswer(cache.Status());
    case ControlOp::kHeal:
      cache.FailNextSyncs(0);
      cache.SetDiskFull(false);
      cache.SetLatency(std::chrono::milliseconds(0));
      return Answer(true)
          .Str("op", op)
          .Num("sync_errors_pending", 0)
          .Bool("disk_full", false)
          .Num("latency_ms", 0)
          .Done();
  }
  return FormatErrorAnswer("unknown command");
}

std::string RunControlLine(WriteCache& cache, std::string_view line) {
  auto command = ParseControlLine(line);
  if (!command) return FormatErrorAnswer(command.error());
  return RunControl(cache, *command);
}

}  // namespace faultline::nemesis::disk
