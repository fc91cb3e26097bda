// What the benchmarks read about their own process: peak resident set and
// CPU time. Shared by the benchmarks that print memory and CPU figures.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace faultline::bench {

// A "Vm...:" field of /proc/self/status, in bytes; 0 if unknown.
inline std::uint64_t StatusBytes(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  std::uint64_t kb = 0;
  std::size_t len = std::strlen(field);
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, field, len) == 0) {
      kb = std::strtoull(line + len, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return kb * 1024;
}

// Peak resident set of this process so far (VmHWM), in bytes; 0 if unknown.
inline std::uint64_t PeakRssBytes() { return StatusBytes("VmHWM:"); }

// Resident set of this process now (VmRSS), in bytes; 0 if unknown.
inline std::uint64_t CurrentRssBytes() { return StatusBytes("VmRSS:"); }

// CPU time (user + system, all threads) of this process so far: on a
// shared machine the wall time overstates the work.
inline double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

}  // namespace faultline::bench
