#include "targets/raftkv/storage/storage.h"

#include <algorithm>
#include <span>
#include <utility>

#include "targets/raftkv/storage/snapshot_file.h"
#include "targets/raftkv/storage/wal.h"

namespace faultline::raftkv::storage {
namespace {

using raft::Index;
using raft::Term;

inline Term TermOf(const raft::Entry& e) { return e.term; }
inline Term TermOf(Term t) { return t; }

// A contiguous log [start, next()) of T: entries while replaying, terms
// while running. The same rules serve replay and the live storage, so what
// Open rebuilds is what the writer believed.
template <class T>
struct Log {
  Index start = 1;
  std::vector<T> items;

  Index next() const { return start + items.size(); }
  void Reset(Index s) {
    items.clear();
    start = s;
  }
  // Voids entries >= i. False if i would leave a gap.
  bool TruncateFrom(Index i) {
    if (i > next()) return false;
    if (i <= start) {
      Reset(i);
    } else {
      items.resize(i - start);
    }
    return true;
  }
  // Raft's rule for a durable snapshot at (index, term): keep what follows
  // index if the log holds (index, term) (or starts after index), else
  // discard the log. Keeps() decides, Apply() carries out the decision.
  bool Keeps(Index index, Term term) const {
    if (index < start) return true;
    return index < next() && TermOf(items[index - start]) == term;
  }
  void Apply(Index index, bool kept) {
    if (kept && index < start) return;
    if (!kept || index >= next()) {
      Reset(index + 1);
      return;
    }
    items.erase(items.begin(),
                items.begin() + static_cast<std::ptrdiff_t>(index - start + 1));
    start = index + 1;
  }
};

struct Segment {
  std::uint64_t seq = 0;
  Index first = 0;
  std::string path;
  Index max_index = 0;     // highest entry index written in it
  std::uint64_t size = 0;  // valid bytes (after recovery)
};

}  // namespace

struct DiskStorage::Impl {
  Env* env = nullptr;
  std::string dir;
  Options options;

  std::vector<Segment> segments;  // seq order; back() is being appended
  std::unique_ptr<WritableFile> file;
  std::uint64_t file_size = 0;
  bool dirty = false;  // appended since the last Sync

  std::optional<raft::HardState> hs;
  Index snap_index = 0;
  Term snap_term = 0;
  Log<Term> log;
  std::string broken;  // first write error; later calls fail

  std::string Fail(std::string err) {
    broken = err;
    return err;
  }

  std::string SyncIfDirty() {
    if (!dirty) return "";
    if (std::string err = file->Sync(); !err.empty()) return err;
    dirty = false;
    return "";
  }

  // Starts segment `seq` at index `first` with `header` records (a batch
  // without its commit; may be empty) plus the current hard state, all
  // durable (file and directory entry) on return.
  std::string StartSegment(std::uint64_t seq, Index first, std::string header,
                           std::uint32_t header_records) {
    if (file) {
      if (std::string err = SyncIfDirty(); !err.empty()) return err;
      if (std::string err = file->Close(); !err.empty()) return err;
      file.reset();
    }
    Segment seg;
    seg.seq = seq;
    seg.first = first;
    seg.path = dir + "/" + wal::SegmentName(seq, first);
    if (std::string err = env->NewAppendableFile(seg.path, &file);
        !err.empty()) {
      return err;
    }
    if (hs) {
      wal::AppendHardState(&header, *hs);
      ++header_records;
    }
    if (header_records > 0) {
      wal::AppendCommit(&header, header_records);
      if (std::string err = file->Append(header); !err.empty()) return err;
      if (std::string err = file->Sync(); !err.empty()) return err;
    }
    file_size = header.size();
    dirty = false;
    segments.push_back(std::move(seg));
    return env->SyncDir(dir);
  }

  std::string Roll(std::string header, std::uint32_t header_records) {
    return StartSegment(segments.back().seq + 1, log.next(), std::move(header),
                        header_records);
  }

  std::string Recover(Recovered* out);
};

namespace {

std::string SegmentError(const Segment& s, const std::string& err) {
  return "wal " + s.path + ": " + err;
}

}  // namespace

// Rebuilds the state from the snapshot file and the segments, cutting a
// torn tail. Fills `out` and the live state.
std::string DiskStorage::Impl::Recover(Recovered* out) {
  std::vector<std::string> names;
  if (std::string err = env->ListDir(dir, &names); !err.empty()) return err;
  for (const auto& name : names) {
    Segment seg;
    if (wal::ParseSegmentName(name, &seg.seq, &seg.first)) {
      seg.path = dir + "/" + name;
      segments.push_back(std::move(seg));
    } else if (name == kSnapshotTmpFile) {
      // An interrupted SaveSnapshot; the previous snapshot stands.
      if (std::string err = env->Remove(dir + "/" + name); !err.empty()) {
        return err;
      }
    }
  }
  std::sort(segments.begin(), segments.end(),
            [](const Segment& a, const Segment& b) { return a.seq < b.seq; });

  if (std::string err = ReadSnapshotFile(env, dir, &out->snapshot);
      !err.empty()) {
    return err;
  }
  const Index s_index = out->snapshot ? out->snapshot->meta.index : 0;
  const Term s_term = out->snapshot ? out->snapshot->meta.term : 0;

  Log<raft::Entry> replay;
  std::optional<std::pair<Index, Term>> last_mark;
  std::uint64_t cut_at = 0;  // last segment: valid bytes, if it needs a cut
  bool cut = false;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    Segment& seg = segments[i];
    const bool is_last = i + 1 == segments.size();
    std::string bytes;
    if (std::string err = env->ReadFile(seg.path, &bytes); !err.empty()) {
      return err;
    }
    wal::SegmentScan scan;
    if (std::string err = wal::ScanSegment(bytes, is_last, &scan);
        !err.empty()) {
      return SegmentError(seg, err);
    }
    if (i == 0) {
      replay.Reset(seg.first);
    } else if (seg.first != replay.next()) {
      // Allowed only where earlier segments are wholly covered by the
      // snapshot (a deletion by SaveSnapshot that did not fully persist).
      if (seg.first > s_index + 1) {
        return SegmentError(seg, "starts at index " +
                                     std::to_string(seg.first) +
                                     " but the log before it ends at " +
                                     std::to_string(replay.next() - 1));
      }
      replay.Reset(seg.first);
    }
    for (auto& r : scan.records) {
      switch (r.type) {
        case wal::RecordType::kEntry:
          if (r.entry.index != replay.next()) {
            return SegmentError(
                seg, "entry " + std::to_string(r.entry.index) + " where " +
                         std::to_string(replay.next()) + " was expected");
          }
          seg.max_index = std::max(seg.max_index, r.entry.index);
          replay.items.push_back(std::move(r.entry));
          break;
        case wal::RecordType::kHardState:
          out->hard_state = r.hard_state;
          hs = r.hard_state;
          break;
        case wal::RecordType::kTruncate:
          if (!replay.TruncateFrom(r.index)) {
            return SegmentError(seg, "truncation from " +
                                         std::to_string(r.index) +
                                         " beyond the end of the log");
          }
          break;
        case wal::RecordType::kSnapshot:
          if (r.index > s_index || (r.index == s_index && r.term != s_term)) {
            return SegmentError(seg, "records a snapshot at (" +
                                         std::to_string(r.index) + ", " +
                                         std::to_string(r.term) +
                                         ") newer than the snapshot file's (" +
                                         std::to_string(s_index) + ", " +
                                         std::to_string(s_term) + ")");
          }
          replay.Apply(r.index, r.kept);
          last_mark = {r.index, r.term};
          break;
        case wal::RecordType::kCommit:
          break;  // never reported by ScanSegment
      }
    }
    seg.size = scan.valid_bytes;
    if (scan.valid_bytes < bytes.size()) {
      cut = true;
      cut_at = scan.valid_bytes;
      out->torn_records = scan.cut_records;
    }
  }
  // The snapshot file may be newer than every mark (a crash before the
  // mark was written): apply its rule now. Idempotent otherwise.
  const Index replay_next = replay.next();  // before the rule, for a new mark
  const bool end_kept = !out->snapshot || replay.Keeps(s_index, s_term);
  if (out->snapshot) replay.Apply(s_index, end_kept);
  if (replay.start != s_index + 1) {
    return "log starts at index " + std::to_string(replay.start) +
           " but the snapshot ends at " + std::to_string(s_index);
  }
  // Everything checks out: only now modify the disk.
  if (cut) {
    if (std::string err = env->Truncate(segments.back().path, cut_at);
        !err.empty()) {
      return err;
    }
  }
  snap_index = s_index;
  snap_term = s_term;
  log.Reset(replay.start);
  log.items.reserve(replay.items.size());
  for (const auto& e : replay.items) log.items.push_back(e.term);
  out->entries = std::move(replay.items);

  if (segments.empty()) return StartSegment(1, log.next(), "", 0);
  if (std::string err = env->NewAppendableFile(segments.back().path, &file);
      !err.empty()) {
    return err;
  }
  file_size = segments.back().size;
  // A SaveSnapshot interrupted before its mark: finish it, so the records
  // written from now on follow the mark, as the rule applied above assumes.
  if (out->snapshot &&
      last_mark != std::optional<std::pair<Index, Term>>({s_index, s_term})) {
    std::string header;
    wal::AppendSnapshotMark(&header, s_index, s_term, end_kept);
    return StartSegment(segments.back().seq + 1, replay_next, std::move(header),
                        1);
  }
  return "";
}

std::unique_ptr<DiskStorage> DiskStorage::Open(const std::string& dir, Env* env,
                                               Recovered* out,
                                               std::string* error) {
  return Open(dir, env, Options{}, out, error);
}

std::unique_ptr<DiskStorage> DiskStorage::Open(const std::string& dir, Env* env,
                                               const Options& options,
                                               Recovered* out,
                                               std::string* error) {
  *out = Recovered{};
  auto impl = std::make_unique<Impl>();
  impl->env = env;
  impl->dir = dir;
  impl->options = options;
  std::string err = env->CreateDir(dir);
  if (err.empty()) err = impl->Recover(out);
  if (!err.empty()) {
    *error = err;
    *out = Recovered{};
    return nullptr;
  }
  return std::unique_ptr<DiskStorage>(new DiskStorage(std::move(impl)));
}

DiskStorage::DiskStorage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DiskStorage::~DiskStorage() {
  if (impl_->file) impl_->file->Close();
}

raft::Index DiskStorage::SnapshotIndex() const { return impl_->snap_index; }
raft::Index DiskStorage::LastIndex() const { return impl_->log.next() - 1; }

std::string DiskStorage::Save(const std::optional<raft::HardState>& hs,
                              const std::vector<raft::Entry>& all_entries,
                              bool sync) {
  Impl& s = *impl_;
  if (!s.broken.empty()) return "storage failed earlier: " + s.broken;
  std::span<const raft::Entry> entries(all_entries);
  if (!entries.empty()) {
    for (std::size_t i = 1; i < entries.size(); ++i) {
      if (entries[i].index != entries.front().index + i) {
        return "save: entry indexes are not consecutive at " +
               std::to_string(entries[i].index);
      }
    }
    // Entries the snapshot covers are dropped (Raft trims them too).
    if (entries.front().index <= s.snap_index) {
      entries = entries.subspan(std::min<std::size_t>(
          entries.size(), s.snap_index - entries.front().index + 1));
    }
  }
  if (!entries.empty() && entries.front().index > s.log.next()) {
    return "save: entries start at " + std::to_string(entries.front().index) +
           ", after the log's end " + std::to_string(s.log.next() - 1);
  }
  if (entries.empty() && !hs) {
    if (sync) {
      if (std::string err = s.SyncIfDirty(); !err.empty()) return s.Fail(err);
    }
    return "";
  }
  if (s.file_size >= s.options.segment_bytes) {
    if (std::string err = s.Roll("", 0); !err.empty()) return s.Fail(err);
  }

  std::string buf;
  std::size_t estimate = 64;
  for (const auto& e : entries) estimate += 32 + e.data.size();
  buf.reserve(estimate);
  std::uint32_t records = 0;
  if (!entries.empty() && entries.front().index < s.log.next()) {
    wal::AppendTruncate(&buf, entries.front().index);
    ++records;
  }
  for (const auto& e : entries) {
    wal::AppendEntry(&buf, e);
    ++records;
  }
  if (hs) {
    wal::AppendHardState(&buf, *hs);
    ++records;
  }
  wal::AppendCommit(&buf, records);
  if (std::string err = s.file->Append(buf); !err.empty()) return s.Fail(err);
  s.file_size += buf.size();
  s.dirty = true;

  if (!entries.empty()) {
    s.log.TruncateFrom(entries.front().index);
    for (const auto& e : entries) s.log.items.push_back(e.term);
    Segment& seg = s.segments.back();
    seg.max_index = std::max(seg.max_index, entries.back().index);
  }
  if (hs) s.hs = *hs;
  if (sync) {
    if (std::string err = s.SyncIfDirty(); !err.empty()) return s.Fail(err);
  }
  return "";
}

std::string DiskStorage::SaveSnapshot(const raft::Snapshot& snap) {
  Impl& s = *impl_;
  if (!s.broken.empty()) return "storage failed earlier: " + s.broken;
  const Index index = snap.meta.index;
  const Term term = snap.meta.term;
  if (index < s.snap_index) {
    return "save snapshot: index " + std::to_string(index) +
           " is older than the stored snapshot's " +
           std::to_string(s.snap_index);
  }
  // Earlier calls first: the snapshot must not become durable before them.
  if (std::string err = s.SyncIfDirty(); !err.empty()) return s.Fail(err);
  bool renamed = false;
  if (std::string err = WriteSnapshotFile(s.env, s.dir, snap, &renamed);
      !err.empty()) {
    return renamed ? s.Fail(err) : err;
  }
  std::string header;
  const bool kept = s.log.Keeps(index, term);
  wal::AppendSnapshotMark(&header, index, term, kept);
  if (std::string err = s.Roll(std::move(header), 1); !err.empty()) {
    return s.Fail(err);
  }
  s.log.Apply(index, kept);
  s.snap_index = index;
  s.snap_term = term;

  // Segments (oldest first) holding nothing after the snapshot.
  bool removed = false;
  while (s.segments.size() > 1 && s.segments.front().max_index <= index) {
    if (std::string err = s.env->Remove(s.segments.front().path);
        !err.empty()) {
      return err;  // harmless leftover; the next SaveSnapshot retries
    }
    s.segments.erase(s.segments.begin());
    removed = true;
  }
  if (removed) return s.env->SyncDir(s.dir);
  return "";
}

}  // namespace faultline::raftkv::storage
