// Binary codec for Raft messages and storage records (codec.h).
#include "targets/raftkv/raft/codec.h"

#include <cstring>

namespace faultline::raftkv::raft {
namespace {

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}
  void U8(std::uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void U32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) U8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void U64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) U8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void I64(std::int64_t v) { U64(static_cast<std::uint64_t>(v)); }
  void Str(std::string_view s) {
    U32(static_cast<std::uint32_t>(s.size()));
    out_->append(s.data(), s.size());
  }

 private:
  std::string* out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U8(std::uint8_t* v) {
    if (in_.size() < 1) return false;
    *v = static_cast<std::uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return true;
  }
  bool U32(std::uint32_t* v) {
    if (in_.size() < 4) return false;
    std::uint32_t r = 0;
    for (int i = 0; i < 4; ++i)
      r |= std::uint32_t{static_cast<std::uint8_t>(in_[i])} << (8 * i);
    in_.remove_prefix(4);
    *v = r;
    return true;
  }
  bool U64(std::uint64_t* v) {
    if (in_.size() < 8) return false;
    std::uint64_t r = 0;
    for (int i = 0; i < 8; ++i)
      r |= std::uint64_t{static_cast<std::uint8_t>(in_[i])} << (8 * i);
    in_.remove_prefix(8);
    *v = r;
    return true;
  }
  bool I64(std::int64_t* v) {
    std::uint64_t u = 0;
    if (!U64(&u)) return false;
    *v = static_cast<std::int64_t>(u);
    return true;
  }
  bool Bool(bool* v) {
    std::uint8_t b = 0;
    if (!U8(&b) || b > 1) return false;
    *v = b == 1;
    return true;
  }
  bool Str(std::string* s) {
    std::uint32_t n = 0;
    if (!U32(&n) || in_.size() < n) return false;
    s->assign(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  // A count of elements each at least `min_size` bytes long: rejects counts
  // the remaining input cannot hold (no huge reserve on garbage).
  bool Count(std::size_t min_size, std::uint32_t* n) {
    if (!U32(n)) return false;
    return std::uint64_t{*n} * min_size <= in_.size();
  }
  bool Done() const { return in_.empty(); }

 private:
  std::string_view in_;
};

constexpr std::size_t kEntryMinSize = 8 + 8 + 1 + 4;

void PutEntry(Writer& w, const Entry& e) {
  w.U64(e.term);
  w.U64(e.index);
  w.U8(static_cast<std::uint8_t>(e.type));
  w.Str(e.data);
}

bool GetEntry(Reader& r, Entry* e) {
  std::uint8_t type = 0;
  if (!r.U64(&e->term) || !r.U64(&e->index) || !r.U8(&type)) return false;
  if (type > static_cast<std::uint8_t>(EntryType::kNoop)) return false;
  e->type = static_cast<EntryType>(type);
  return r.Str(&e->data);
}

void PutMeta(Writer& w, const SnapshotMeta& m) {
  w.U64(m.index);
  w.U64(m.term);
  w.U32(static_cast<std::uint32_t>(m.voters.size()));
  for (NodeId v : m.voters) w.U64(v);
}

bool GetMeta(Reader& r, SnapshotMeta* m) {
  std::uint32_t n = 0;
  if (!r.U64(&m->index) || !r.U64(&m->term) || !r.Count(8, &n)) return false;
  m->voters.assign(n, kNone);
  for (auto& v : m->voters) {
    if (!r.U64(&v)) return false;
  }
  return true;
}

}  // namespace

std::string EncodeMessage(const Message& m) {
  std::string out;
  std::size_t data = m.snapshot.data.size();
  for (const Entry& e : m.entries) data += e.data.size() + kEntryMinSize;
  out.reserve(160 + data);
  Writer w(&out);
  w.U8(kCodecVersion);
  w.U8(static_cast<std::uint8_t>(m.type));
  w.U64(m.from);
  w.U64(m.to);
  w.U64(m.term);
  w.U64(m.index);
  w.U64(m.log_term);
  w.U32(static_cast<std::uint32_t>(m.entries.size()));
  for (const Entry& e : m.entries) PutEntry(w, e);
  w.U64(m.commit);
  w.U8(m.reject ? 1 : 0);
  w.U64(m.reject_hint);
  w.U64(m.context);
  PutMeta(w, m.snapshot.meta);
  w.Str(m.snapshot.data);
  w.U64(m.snap_offset);
  w.U64(m.snap_total);
  w.U8(m.snap_done ? 1 : 0);
  w.U64(m.lease_seq);
  w.I64(m.lease_duration);
  w.U64(m.lease_floor);
  w.U8(m.lease_revoke ? 1 : 0);
  return out;
}

bool DecodeMessage(std::string_view in, Message* out) {
  Reader r(in);
  Message m;
  std::uint8_t version = 0, type = 0;
  if (!r.U8(&version) || version != kCodecVersion) return false;
  if (!r.U8(&type) || type > static_cast<std::uint8_t>(MsgType::kReadIndexResp))
    return false;
  m.type = static_cast<MsgType>(type);
  std::uint32_t n = 0;
  if (!r.U64(&m.from) || !r.U64(&m.to) || !r.U64(&m.term) || !r.U64(&m.index) ||
      !r.U64(&m.log_term) || !r.Count(kEntryMinSize, &n))
    return false;
  m.entries.resize(n);
  for (Entry& e : m.entries) {
    if (!GetEntry(r, &e)) return false;
  }
  if (!r.U64(&m.commit) || !r.Bool(&m.reject) || !r.U64(&m.reject_hint) ||
      !r.U64(&m.context) || !GetMeta(r, &m.snapshot.meta) ||
      !r.Str(&m.snapshot.data) || !r.U64(&m.snap_offset) ||
      !r.U64(&m.snap_total) || !r.Bool(&m.snap_done) || !r.U64(&m.lease_seq) ||
      !r.I64(&m.lease_duration) || !r.U64(&m.lease_floor) ||
      !r.Bool(&m.lease_revoke) || !r.Done())
    return false;
  *out = std::move(m);
  return true;
}

std::string EncodeEntry(const Entry& e) {
  std::string out;
  out.reserve(kEntryMinSize + e.data.size());
  Writer w(&out);
  PutEntry(w, e);
  return out;
}

bool DecodeEntry(std::string_view in, Entry* out) {
  Reader r(in);
  Entry e;
  if (!GetEntry(r, &e) || !r.Done()) return false;
  *out = std::move(e);
  return true;
}

std::string EncodeHardState(const HardState& hs) {
  std::string out;
  Writer w(&out);
  w.U64(hs.term);
  w.U64(hs.vote);
  w.U64(hs.commit);
  return out;
}

bool DecodeHardState(std::string_view in, HardState* out) {
  Reader r(in);
  HardState hs;
  if (!r.U64(&hs.term) || !r.U64(&hs.vote) || !r.U64(&hs.commit) || !r.Done())
    return false;
  *out = hs;
  return true;
}

std::string EncodeSnapshotMeta(const SnapshotMeta& meta) {
  std::string out;
  Writer w(&out);
  PutMeta(w, meta);
  return out;
}

bool DecodeSnapshotMeta(std::string_view in, SnapshotMeta* out) {
  Reader r(in);
  SnapshotMeta m;
  if (!GetMeta(r, &m) || !r.Done()) return false;
  *out = std::move(m);
  return true;
}

}  // namespace faultline::raftkv::raft
