#include "nemesis/disk/write_cache.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <tuple>
#include <utility>

namespace faultline::nemesis::disk {

namespace {

// A uniform integer in [0, bound), bound > 0, by rejection: the same on
// every standard library (std::uniform_int_distribution is not).
std::uint64_t Below(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
  for (;;) {
    const std::uint64_t r = rng();
    if (r >= threshold) return r % bound;
  }
}

void NoteError(CrashReport& report, const IoError& error) {
  if (report.errors++ == 0) report.first_error = error.message;
}

}  // namespace

WriteCache::WriteCache(Backing& backing, CacheOptions options)
    : backing_(backing), options_(options) {}

IoResult<WriteCache::File*> WriteCache::HeldFile(FileId file) {
  auto it = files_.find(file);
  if (it != files_.end()) return &it->second;
  auto size = backing_.Size(file);
  if (!size) return size.failure();
  File& f = files_[file];
  f.size = *size;
  return &f;
}

void WriteCache::Hold(File& f, Op op) {
  op.seq = next_seq_++;
  op.held_at = options_.clock();
  if (op.truncate) {
    f.size = op.offset;
  } else {
    f.size = std::max<std::uint64_t>(f.size, op.offset + op.data.size());
  }
  held_bytes_ += op.data.size();
  ++held_writes_;
  f.ops.push_back(std::move(op));
}

IoStatus WriteCache::WriteBack(FileId file, const Op& op) {
  return op.truncate ? backing_.Truncate(file, op.offset)
                     : backing_.Pwrite(file, op.offset, op.data);
}

void WriteCache::PopFront(File& f) {
  held_bytes_ -= f.ops.front().data.size();
  --held_writes_;
  f.ops.pop_front();
}

IoStatus WriteCache::WriteBackAll(FileId file, File& f) {
  while (!f.ops.empty()) {
    const Op& op = f.ops.front();
    auto written = WriteBack(file, op);
    if (!written) {
      Lose(f);
      Forget(file);
      return written;
    }
    ++counters_.written_back_writes;
    counters_.written_back_bytes += op.data.size();
    PopFront(f);
  }
  Forget(file);
  return IoOk();
}

void WriteCache::Lose(File& f) {
  for (const Op& op : f.ops) {
    ++counters_.lost_writes;
    counters_.lost_bytes += op.data.size();
    held_bytes_ -= op.data.size();
    --held_writes_;
  }
  f.ops.clear();
}

void WriteCache::Forget(FileId file) {
  auto it = files_.find(file);
  if (it != files_.end() && it->second.ops.empty()) files_.erase(it);
}

void WriteCache::Discard(FileId file) {
  std::lock_guard lock(mu_);
  auto it = files_.find(file);
  if (it == files_.end()) return;
  for (const Op& op : it->second.ops) {
    held_bytes_ -= op.data.size();
    --held_writes_;
  }
  files_.erase(it);
  writeback_errors_.erase(file);
}

void WriteCache::Evict() {
  WriteBackOldest([this](const Op&) {
    return held_bytes_ > options_.max_held_bytes ||
           held_writes_ > options_.max_held_writes;
  });
}

std::uint64_t WriteCache::WriteBackOldest(
    const std::function<bool(const Op&)>& more) {
  std::uint64_t n = 0;
  while (!files_.empty()) {
    auto oldest = files_.begin();
    for (auto it = files_.begin(); it != files_.end(); ++it) {
      if (it->second.ops.front().seq < oldest->second.ops.front().seq) {
        oldest = it;
      }
    }
    File& f = oldest->second;
    const Op& op = f.ops.front();
    if (!more(op)) break;
    ++n;
    ++counters_.evicted_writes;
    auto written = WriteBack(oldest->first, op);
    if (written) {
      ++counters_.written_back_writes;
      counters_.written_back_bytes += op.data.size();
    } else {
      ++counters_.lost_writes;
      counters_.lost_bytes += op.data.size();
      writeback_errors_.emplace(oldest->first, written.error());
    }
    PopFront(f);
    if (f.ops.empty()) files_.erase(oldest);
  }
  return n;
}

std::uint64_t WriteCache::WriteBackOlderThan(std::chrono::milliseconds age) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto cutoff = options_.clock() - age;
  return WriteBackOldest(
      [cutoff](const Op& op) { return op.held_at <= cutoff; });
}

IoStatus WriteCache::Write(FileId file, std::uint64_t offset,
                           std::string_view data, bool durable) {
  std::lock_guard lock(mu_);
  if (data.empty()) return IoOk();
  if (disk_full_) {
    auto it = files_.find(file);
    std::uint64_t size = 0;
    if (it != files_.end()) {
      size = it->second.size;
    } else {
      auto backing_size = backing_.Size(file);
      if (!backing_size) return backing_size.failure();
      size = *backing_size;
    }
    if (offset + data.size() > size) {
      return IoFail(ENOSPC,
                    "disk full (injected): the write would grow "
                    "file " +
                        std::to_string(file));
    }
  }
  if (!durable) {
    auto f = HeldFile(file);
    if (!f) return f.failure();
    Hold(**f, Op{0, false, offset, std::string(data), {}});
    Evict();
    return IoOk();
  }
  // A durable write: the file's held writes first, then this one, then
  // fsync, as one sync.
  ++counters_.syncs;
  auto it = files_.find(file);
  if (fail_syncs_ > 0) {
    --fail_syncs_;
    ++counters_.failed_syncs;
    if (it != files_.end()) Lose(it->second);
    Forget(file);
    writeback_errors_.erase(file);
    counters_.lost_writes += 1;
    counters_.lost_bytes += data.size();
    return IoFail(EIO, "injected fsync error (durable write to file " +
                           std::to_string(file) + ")");
  }
  if (it != files_.end()) {
    auto flushed = WriteBackAll(file, it->second);
    if (!flushed) {
      ++counters_.failed_syncs;
      return flushed;
    }
  }
  auto written = backing_.Pwrite(file, offset, data);
  if (!written) {
    ++counters_.failed_syncs;
    return written;
  }
  ++counters_.written_back_writes;
  counters_.written_back_bytes += data.size();
  return SyncLocked(file, nullptr, /*injectable=*/false);
}

IoStatus WriteCache::SyncLocked(FileId file, File* f, bool injectable) {
  if (injectable && fail_syncs_ > 0) {
    --fail_syncs_;
    ++counters_.failed_syncs;
    if (f != nullptr) Lose(*f);
    Forget(file);
    writeback_errors_.erase(file);
    return IoFail(EIO, "injected fsync error on file " + std::to_string(file));
  }
  if (f != nullptr) {
    auto flushed = WriteBackAll(file, *f);
    if (!flushed) {
      ++counters_.failed_syncs;
      return flushed;
    }
  }
  auto synced = backing_.Fsync(file);
  if (!synced) {
    ++counters_.failed_syncs;
    return synced;
  }
  auto pending = writeback_errors_.find(file);
  if (pending != writeback_errors_.end()) {
    std::string message = "an earlier write-back of file " +
                          std::to_string(file) + " failed: " + pending->second;
    writeback_errors_.erase(pending);
    ++counters_.failed_syncs;
    return IoFail(EIO, std::move(message));
  }
  return IoOk();
}

IoResult<std::string> WriteCache::Read(FileId file, std::uint64_t offset,
                                       std::size_t len) {
  std::lock_guard lock(mu_);
  auto backing_size = backing_.Size(file);
  if (!backing_size) return backing_size.failure();
  const std::uint64_t base = *backing_size;
  auto it = files_.find(file);
  const std::uint64_t size = it != files_.end() ? it->second.size : base;
  if (offset >= size || len == 0) return std::string();
  const std::uint64_t end =
      offset + std::min<std::uint64_t>(len, size - offset);
  std::string out(end - offset, '\0');
  if (offset < base) {
    auto got = backing_.Pread(file, offset, out.data(),
                              std::min<std::uint64_t>(end, base) - offset);
    if (!got) return got.failure();
  }
  if (it == files_.end()) return out;
  // Replay the held ops over [offset, end). Bytes at or past `cur` (the
  // size so far) are zero in `out` throughout.
  std::uint64_t cur = base;
  for (const Op& op : it->second.ops) {
    if (op.truncate) {
      const std::uint64_t lo = std::max(op.offset, offset);
      const std::uint64_t hi = std::min(cur, end);
      if (lo < hi) std::memset(out.data() + (lo - offset), 0, hi - lo);
      cur = op.offset;
      continue;
    }
    const std::uint64_t op_end = op.offset + op.data.size();
    const std::uint64_t lo = std::max(op.offset, offset);
    const std::uint64_t hi = std::min(op_end, end);
    if (lo < hi) {
      std::memcpy(out.data() + (lo - offset), op.data.data() + (lo - op.offset),
                  hi - lo);
    }
    cur = std::max(cur, op_end);
  }
  return out;
}

IoResult<std::uint64_t> WriteCache::Size(FileId file) {
  std::lock_guard lock(mu_);
  auto it = files_.find(file);
  if (it != files_.end()) return it->second.size;
  return backing_.Size(file);
}

IoStatus WriteCache::Truncate(FileId file, std::uint64_t size) {
  std::lock_guard lock(mu_);
  auto f = HeldFile(file);
  if (!f) return f.failure();
  Hold(**f, Op{0, true, size, {}, {}});
  Evict();
  return IoOk();
}

IoStatus WriteCache::Sync(FileId file) {
  std::lock_guard lock(mu_);
  ++counters_.syncs;
  auto it = files_.find(file);
  return SyncLocked(file, it != files_.end() ? &it->second : nullptr,
                    /*injectable=*/true);
}

IoStatus WriteCache::SyncAll() {
  std::lock_guard lock(mu_);
  std::vector<FileId> ids;
  for (const auto& [id, f] : files_) ids.push_back(id);
  for (const auto& [id, message] : writeback_errors_) {
    if (!files_.count(id)) ids.push_back(id);
  }
  IoStatus first = IoOk();
  for (FileId id : ids) {
    auto it = files_.find(id);
    auto synced =
        SyncLocked(id, it != files_.end() ? &it->second : nullptr, false);
    if (!synced && first.ok()) first = synced;
  }
  return first;
}

void WriteCache::ForgetAll() {
  files_.clear();
  writeback_errors_.clear();
  held_bytes_ = 0;
  held_writes_ = 0;
}

CrashReport WriteCache::DropAll() {
  std::lock_guard lock(mu_);
  CrashReport report;
  report.op = "drop";
  for (const auto& [id, f] : files_) {
    ++report.files;
    for (const Op& op : f.ops) {
      ++report.dropped_writes;
      report.dropped_bytes += op.data.size();
    }
  }
  ForgetAll();
  return report;
}

CrashReport WriteCache::Torn(std::uint64_t seed) {
  std::lock_guard lock(mu_);
  std::mt19937_64 rng(seed);
  CrashReport report;
  report.op = "torn";
  for (const auto& [id, f] : files_) {
    ++report.files;
    const std::size_t n = f.ops.size();
    const std::size_t keep = Below(rng, n + 1);
    for (std::size_t i = 0; i < n; ++i) {
      const Op& op = f.ops[i];
      if (i < keep) {
        auto written = WriteBack(id, op);
        if (!written) NoteError(report, written.failure());
        ++report.kept_writes;
        report.kept_bytes += op.data.size();
        continue;
      }
      std::uint64_t cut = 0;
      if (i == keep && !op.truncate && op.data.size() >= 2) {
        cut = Below(rng, op.data.size());
      }
      if (cut > 0) {
        auto written = backing_.Pwrite(
            id, op.offset, std::string_view(op.data).substr(0, cut));
        if (!written) NoteError(report, written.failure());
        ++report.cut_writes;
        report.kept_bytes += cut;
      } else {
        ++report.dropped_writes;
      }
      report.dropped_bytes += op.data.size() - cut;
    }
  }
  ForgetAll();
  return report;
}

CrashReport WriteCache::FlipBits(std::uint64_t seed, std::uint64_t n) {
  std::lock_guard lock(mu_);
  std::mt19937_64 rng(seed);
  CrashReport report;
  report.op = "flip";
  const std::uint64_t total_bits = held_bytes_ * 8;
  const std::uint64_t m = std::min(n, total_bits);
  // Floyd's sampling of m distinct bit indexes in [0, total_bits).
  std::set<std::uint64_t> chosen;
  for (std::uint64_t j = total_bits - m; j < total_bits; ++j) {
    const std::uint64_t t = Below(rng, j + 1);
    if (!chosen.insert(t).second) chosen.insert(j);
  }
  // Bit index i lies in the held data in (file, op, byte) order.
  auto next = chosen.begin();
  std::uint64_t base = 0;
  for (auto& [id, f] : files_) {
    for (Op& op : f.ops) {
      const std::uint64_t bits = op.data.size() * 8;
      for (; next != chosen.end() && *next < base + bits; ++next) {
        const std::uint64_t byte = (*next - base) / 8;
        const int bit = static_cast<int>((*next - base) % 8);
        op.data[byte] = static_cast<char>(op.data[byte] ^ (1 << bit));
        report.flips.push_back(FlipSite{id, op.offset + byte, bit});
      }
      base += bits;
    }
  }
  report.flipped_bits = report.flips.size();
  std::sort(report.flips.begin(), report.flips.end(),
            [](const FlipSite& a, const FlipSite& b) {
              return std::tie(a.file, a.offset, a.bit) <
                     std::tie(b.file, b.offset, b.bit);
            });
  for (const auto& [id, f] : files_) {
    ++report.files;
    for (const Op& op : f.ops) {
      auto written = WriteBack(id, op);
      if (!written) NoteError(report, written.failure());
      ++report.kept_writes;
      report.kept_bytes += op.data.size();
    }
  }
  ForgetAll();
  return report;
}

void WriteCache::FailNextSyncs(std::uint64_t n) {
  std::lock_guard lock(mu_);
  fail_syncs_ = n;
}

void WriteCache::SetDiskFull(bool on) {
  std::lock_guard lock(mu_);
  disk_full_ = on;
}

void WriteCache::SetLatency(std::chrono::milliseconds latency) {
  std::lock_guard lock(mu_);
  latency_ = latency;
}

std::chrono::milliseconds WriteCache::Latency() const {
  std::lock_guard lock(mu_);
  return latency_;
}

std::size_t WriteCache::HeldWrites(FileId file) const {
  std::lock_guard lock(mu_);
  auto it = files_.find(file);
  return it == files_.end() ? 0 : it->second.ops.size();
}

CacheStatus WriteCache::Status() const {
  std::lock_guard lock(mu_);
  CacheStatus s = counters_;
  s.files = files_.size();
  s.held_writes = held_writes_;
  s.held_bytes = held_bytes_;
  s.sync_errors_pending = fail_syncs_;
  s.disk_full = disk_full_;
  s.latency_ms = static_cast<std::uint64_t>(latency_.count());
  return s;
}

}  // namespace faultline::nemesis::disk
