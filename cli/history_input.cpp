#include "cli/history_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "harness/run/store.h"

namespace faultline::cli {

std::uint64_t ResidentBytes() {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  // "size resident shared text lib data dt", in pages.
  char* end = nullptr;
  std::strtoull(buf, &end, 10);
  const unsigned long long resident = std::strtoull(end, nullptr, 10);
  return static_cast<std::uint64_t>(resident) *
         static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string HistoryText::Open(const std::string& path) {
  Release();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "cannot read " + path + ": " + std::strerror(errno);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      ::close(fd);
      ::madvise(p, size, MADV_SEQUENTIAL);
      map_ = p;
      size_ = size;
      return {};
    }
  }
  ::close(fd);
  auto text = harness::ReadFile(path);
  if (!text.ok()) return text.error();
  owned_ = std::move(*text);
  return {};
}

std::string_view HistoryText::view() const {
  return map_ != nullptr
             ? std::string_view(static_cast<const char*>(map_), size_)
             : std::string_view(owned_);
}

void HistoryText::DropBefore(std::size_t offset) {
  if (map_ == nullptr) return;
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t end = std::min(offset, size_) / page * page;
  if (end <= dropped_) return;
  ::madvise(static_cast<char*>(map_) + dropped_, end - dropped_, MADV_DONTNEED);
  dropped_ = end;
}

void HistoryText::Release() {
  if (map_ != nullptr) ::munmap(map_, size_);
  map_ = nullptr;
  size_ = 0;
  dropped_ = 0;
  std::string().swap(owned_);
}

InputResult StreamHistoryInput(HistoryText& text,
                               checkers::HistoryFormat format,
                               const checkers::EventSink& sink,
                               const MemoryBound& bound) {
  InputResult out;
  std::size_t next_check = kCheckEvery;
  std::size_t next_bytes = kCheckBytes;
  out.read = checkers::StreamHistory(
      text.view(), format, [&](const checkers::Event& e, std::size_t read_to) {
        ++out.events;
        out.last_line = e.line;
        if (!sink(e, read_to)) return false;
        if (out.events < next_check && read_to < next_bytes) return true;
        next_check = out.events + kCheckEvery;
        next_bytes = read_to + kCheckBytes;
        text.DropBefore(read_to);
        if (!bound.limited()) return true;
        out.held_bytes = bound.held();
        if (out.held_bytes <= bound.limit_bytes) return true;
        out.over_memory = true;
        return false;
      });
  if (out.read.ok && !out.over_memory && bound.limited()) {
    out.held_bytes = bound.held();
    out.over_memory = out.held_bytes > bound.limit_bytes;
  }
  return out;
}

InputResult ReadHistoryInput(HistoryText& text, checkers::HistoryFormat format,
                             const MemoryBound& bound) {
  checkers::History history;
  const std::size_t size = text.view().size();
  InputResult out = StreamHistoryInput(
      text, format,
      [&](const checkers::Event& e, std::size_t read_to) {
        // Once a few events tell the bytes per event, room for the rest
        // (a tenth more; capacity never written is never resident).
        if (history.size() == 1024 && read_to > 0 && read_to < size) {
          const double per_event = static_cast<double>(read_to) / 1024.0;
          history.reserve(1024 + static_cast<std::size_t>(
                                     1.1 * static_cast<double>(size - read_to) /
                                     per_event));
        }
        history.push_back(e);
        return true;
      },
      bound);
  if (!out.read.ok || out.over_memory) return out;
  out.read.history = std::move(history);
  if (format == checkers::HistoryFormat::kJepsenEdn) {
    checkers::SplitJepsenTuples(out.read, checkers::TupleKeys::kAuto);
  }
  return out;
}

harness::Result<checkers::History> ReadWrittenHistory(const std::string& path) {
  HistoryText text;
  if (std::string err = text.Open(path); !err.empty())
    return harness::Fail(err);
  InputResult in =
      ReadHistoryInput(text, checkers::HistoryFormat::kJsonl, MemoryBound{});
  text.Release();
  if (!in.read.ok) {
    return harness::Fail(path + ": " + checkers::ToString(in.read.error));
  }
  if (!in.read.warnings.empty()) {
    return harness::Fail(path + ": " + in.read.warnings.front());
  }
  return std::move(in.read.history);
}

}  // namespace faultline::cli
