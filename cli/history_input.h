// Reading a history file for `faultline check`: as a stream, within the
// memory limit.
//
// The file is mapped read-only and handed to the format's streaming reader
// (checkers/history_io.h StreamHistory), which reads one event at a time and
// never reads ahead: a malformed file is refused at its first bad line
// without the rest being read. Pages of the text the reader is done with
// are given back to the kernel as it goes, so the text costs a window of
// the file, not the file. Every kCheckEvery events (and every
// kCheckBytes of text) the memory the process holds is compared with the
// limit: past it, reading stops and the caller reports unknown.
//
// --memory-limit counts everything the process holds (MemoryBound::held,
// the resident set by default): the events read, the text's pages, and
// then the checker's structures (the checker is handed the same meter).
//
// Thread-safety: one HistoryText, MemoryBound and reading per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "checkers/history_io.h"
#include "harness/interfaces/result.h"

namespace faultline::cli {

// The bytes this process holds now: its resident set (/proc/self/statm),
// file pages mapped in included; 0 when it cannot be read.
std::uint64_t ResidentBytes();

// --memory-limit as `faultline check` applies it.
struct MemoryBound {
  std::uint64_t limit_bytes = 0;  // 0: no limit
  // What the process holds, in bytes (a test may pass its own count).
  std::function<std::uint64_t()> held = ResidentBytes;

  bool limited() const { return limit_bytes > 0; }
};

// A history file's text: mapped read-only when it is a regular non-empty
// file (the kernel pages it in as the reader walks it), else read into
// memory as harness::ReadFile does (pipes, /proc files, directories, empty
// files), with ReadFile's error message when it cannot be opened.
class HistoryText {
 public:
  HistoryText() = default;
  HistoryText(const HistoryText&) = delete;
  HistoryText& operator=(const HistoryText&) = delete;
  ~HistoryText() { Release(); }

  // "" on success, else the error ("cannot read PATH: why").
  std::string Open(const std::string& path);
  std::string_view view() const;
  // Gives back the mapped pages wholly before `offset` (a later read of
  // them pages them in again from the file). No-op for a text in memory.
  void DropBefore(std::size_t offset);
  // Frees the text (the checker holds what it needs).
  void Release();

 private:
  void* map_ = nullptr;
  std::size_t size_ = 0;
  std::size_t dropped_ = 0;  // pages before this were given back
  std::string owned_;
};

// How a reading went.
struct InputResult {
  // The reader's result: warnings, and the error when !read.ok. The
  // history when read by ReadHistoryInput.
  checkers::ReadResult read;
  bool over_memory = false;      // stopped at the memory limit
  std::uint64_t held_bytes = 0;  // MemoryBound::held() when it stopped / at
                                 // the end (0 when not limited)
  std::size_t events = 0;        // events read
  std::int64_t last_line = 0;    // the line of the last event read
};

inline constexpr std::size_t kCheckEvery = 4096;
inline constexpr std::size_t kCheckBytes = std::size_t{16} << 20;

// Streams the events of `text` in `format` to `sink` (EventSink's contract;
// returning false stops the reading, as the memory limit does), giving
// back the pages read and checking `bound` as it goes.
InputResult StreamHistoryInput(HistoryText& text,
                               checkers::HistoryFormat format,
                               const checkers::EventSink& sink,
                               const MemoryBound& bound);

// StreamHistoryInput into a History (in result.read.history; reserved as
// it goes from the bytes per event read so far, and the capacity not yet
// written is not resident), then for EDN the jepsen.independent split
// (SplitJepsenTuples, TupleKeys::kAuto): the same events, warnings and
// errors as checkers::ParseHistory.
InputResult ReadHistoryInput(HistoryText& text, checkers::HistoryFormat format,
                             const MemoryBound& bound);

// A run's own history.jsonl, read back after its workload for the checks
// and reports of `faultline run` (the run keeps no copy of its events):
// ReadHistoryInput of JSONL without a memory limit, the text freed before
// it returns. The history, or why it cannot be used ("PATH: line L, column
// C: why"): a reader's warning is an error too, since the controller wrote
// every line whole (a cut last line or a blank line means the file is not
// what it wrote).
harness::Result<checkers::History> ReadWrittenHistory(const std::string& path);

}  // namespace faultline::cli
