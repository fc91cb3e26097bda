#include "targets/raftkv/storage/wal.h"

#include <algorithm>
#include <cstdio>

#include "targets/raftkv/storage/crc32c.h"

namespace faultline::raftkv::storage::wal {

void PutU32(std::string* buf, std::uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  buf->append(b, 4);
}

void PutU64(std::string* buf, std::uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  buf->append(b, 8);
}

std::uint32_t GetU32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::uint64_t GetU64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

namespace {

// Reserves the header and writes the type; returns the record's start.
std::size_t Begin(std::string* buf, RecordType type) {
  std::size_t start = buf->size();
  buf->append(kHeaderSize, '\0');
  buf->push_back(static_cast<char>(type));
  return start;
}

// Fills in length and crc of the record that starts at `start`.
void Finish(std::string* buf, std::size_t start) {
  std::size_t len = buf->size() - start - kHeaderSize;
  std::uint32_t crc = crc32c::Value(buf->data() + start + kHeaderSize, len);
  std::string header;
  PutU32(&header, static_cast<std::uint32_t>(len));
  PutU32(&header, crc);
  buf->replace(start, kHeaderSize, header);
}

bool AllZero(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == 0; });
}

std::string At(std::size_t offset, const std::string& what) {
  return "offset " + std::to_string(offset) + ": " + what;
}

// Decodes type + payload (already checksummed). Returns "" or an error.
std::string Decode(std::string_view body, Record* r) {
  auto type = static_cast<RecordType>(static_cast<unsigned char>(body[0]));
  std::string_view p = body.substr(1);
  r->type = type;
  switch (type) {
    case RecordType::kEntry:
      if (p.size() < 17) return "short entry record";
      r->entry.term = GetU64(p.data());
      r->entry.index = GetU64(p.data() + 8);
      r->entry.type = static_cast<raft::EntryType>(p[16]);
      r->entry.data.assign(p.data() + 17, p.size() - 17);
      return "";
    case RecordType::kHardState:
      if (p.size() != 24) return "bad hard state record";
      r->hard_state.term = GetU64(p.data());
      r->hard_state.vote = GetU64(p.data() + 8);
      r->hard_state.commit = GetU64(p.data() + 16);
      return "";
    case RecordType::kTruncate:
      if (p.size() != 8) return "bad truncate record";
      r->index = GetU64(p.data());
      return "";
    case RecordType::kSnapshot:
      if (p.size() != 17 || static_cast<unsigned char>(p[16]) > 1) {
        return "bad snapshot record";
      }
      r->index = GetU64(p.data());
      r->term = GetU64(p.data() + 8);
      r->kept = p[16] == 1;
      return "";
    case RecordType::kCommit:
      if (p.size() != 4) return "bad commit record";
      r->index = GetU32(p.data());
      return "";
  }
  return "unknown record type " + std::to_string(static_cast<unsigned>(
                                      static_cast<unsigned char>(body[0])));
}

}  // namespace

void AppendEntry(std::string* buf, const raft::Entry& e) {
  std::size_t start = Begin(buf, RecordType::kEntry);
  PutU64(buf, e.term);
  PutU64(buf, e.index);
  buf->push_back(static_cast<char>(e.type));
  buf->append(e.data);
  Finish(buf, start);
}

void AppendHardState(std::string* buf, const raft::HardState& hs) {
  std::size_t start = Begin(buf, RecordType::kHardState);
  PutU64(buf, hs.term);
  PutU64(buf, hs.vote);
  PutU64(buf, hs.commit);
  Finish(buf, start);
}

void AppendTruncate(std::string* buf, raft::Index from) {
  std::size_t start = Begin(buf, RecordType::kTruncate);
  PutU64(buf, from);
  Finish(buf, start);
}

void AppendSnapshotMark(std::string* buf, raft::Index index, raft::Term term,
                        bool kept) {
  std::size_t start = Begin(buf, RecordType::kSnapshot);
  PutU64(buf, index);
  PutU64(buf, term);
  buf->push_back(kept ? 1 : 0);
  Finish(buf, start);
}

void AppendCommit(std::string* buf, std::uint32_t records) {
  std::size_t start = Begin(buf, RecordType::kCommit);
  PutU32(buf, records);
  Finish(buf, start);
}

std::string ScanSegment(std::string_view data, bool is_last, SegmentScan* out) {
  *out = SegmentScan{};
  std::vector<Record> pending;  // the open batch
  std::size_t pos = 0;
  while (pos < data.size()) {
    std::size_t remaining = data.size() - pos;
    std::string bad;
    bool may_be_tail = false;  // nothing valid can hide behind it
    std::uint32_t len = 0;
    if (remaining < kHeaderSize + 1) {
      bad = "short record header";
      may_be_tail = true;
    } else {
      len = GetU32(data.data() + pos);
      std::uint32_t crc = GetU32(data.data() + pos + 4);
      if (len == 0 || len > kMaxRecordLength) {
        bad = "bad record length " + std::to_string(len);
        may_be_tail =
            len > remaining - kHeaderSize || AllZero(data.substr(pos));
      } else if (len > remaining - kHeaderSize) {
        bad = "record runs past the end";
        may_be_tail = true;
      } else if (crc32c::Value(data.data() + pos + kHeaderSize, len) != crc) {
        bad = "checksum mismatch";
        may_be_tail =
            len == remaining - kHeaderSize || AllZero(data.substr(pos));
      }
    }
    if (!bad.empty()) {
      if (!is_last) return At(pos, bad + " (not the last segment)");
      if (!may_be_tail) return At(pos, bad + ", followed by more data");
      out->cut_records = static_cast<int>(pending.size()) + 1;
      return "";
    }
    Record r;
    if (std::string err = Decode(data.substr(pos + kHeaderSize, len), &r);
        !err.empty()) {
      return At(pos, err);
    }
    pos += kHeaderSize + len;
    if (r.type == RecordType::kCommit) {
      if (r.index != pending.size()) {
        return At(pos, "commit closes " + std::to_string(r.index) +
                           " records, batch has " +
                           std::to_string(pending.size()));
      }
      for (auto& p : pending) out->records.push_back(std::move(p));
      pending.clear();
      out->valid_bytes = pos;
    } else {
      pending.push_back(std::move(r));
    }
  }
  if (!pending.empty()) {
    if (!is_last) return At(pos, "batch without commit (not the last segment)");
    out->cut_records = static_cast<int>(pending.size());
  }
  return "";
}

std::string SegmentName(std::uint64_t seq, raft::Index first) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "wal-%016llx-%016llx.log",
                static_cast<unsigned long long>(seq),
                static_cast<unsigned long long>(first));
  return buf;
}

bool ParseSegmentName(std::string_view name, std::uint64_t* seq,
                      raft::Index* first) {
  // wal- (4) + 16 + '-' + 16 + .log (4) = 41
  if (name.size() != 41 || name.substr(0, 4) != "wal-" || name[20] != '-' ||
      name.substr(37) != ".log") {
    return false;
  }
  auto hex = [](std::string_view s, std::uint64_t* v) {
    *v = 0;
    for (char c : s) {
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else {
        return false;
      }
      *v = (*v << 4) | static_cast<std::uint64_t>(d);
    }
    return true;
  };
  return hex(name.substr(4, 16), seq) && hex(name.substr(21, 16), first);
}

}  // namespace faultline::raftkv::storage::wal
