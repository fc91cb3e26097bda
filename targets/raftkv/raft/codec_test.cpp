// Codec: round trips and robustness against garbage.
#include "targets/raftkv/raft/codec.h"

#include <catch2/catch.hpp>
#include <random>

namespace faultline::raftkv::raft {
namespace {

Message FullMessage() {
  Message m;
  m.type = MsgType::kSnapshot;
  m.from = 3;
  m.to = 5;
  m.term = 0xFFFFFFFFFFFFFFF0ULL;
  m.index = 77;
  m.log_term = 6;
  m.entries = {Entry{6, 78, EntryType::kNormal, "put k v"},
               Entry{6, 79, EntryType::kNoop, ""},
               Entry{7, 80, EntryType::kNormal, std::string("\0\xff\x01", 3)}};
  m.commit = 75;
  m.reject = true;
  m.reject_hint = 70;
  m.context = 1234567890123ULL;
  m.snapshot.meta = SnapshotMeta{50, 4, {1, 2, 3}};
  m.snapshot.data = "chunk-bytes";
  m.snap_offset = 4096;
  m.snap_total = 9000;
  m.snap_done = true;
  m.lease_seq = 9;
  m.lease_duration = -5;  // negative values survive the trip
  m.lease_floor = 71;
  m.lease_revoke = true;
  return m;
}

bool Same(const Message& a, const Message& b) {
  return a.type == b.type && a.from == b.from && a.to == b.to &&
         a.term == b.term && a.index == b.index && a.log_term == b.log_term &&
         a.entries == b.entries && a.commit == b.commit &&
         a.reject == b.reject && a.reject_hint == b.reject_hint &&
         a.context == b.context && a.snapshot == b.snapshot &&
         a.snap_offset == b.snap_offset && a.snap_total == b.snap_total &&
         a.snap_done == b.snap_done && a.lease_seq == b.lease_seq &&
         a.lease_duration == b.lease_duration &&
         a.lease_floor == b.lease_floor && a.lease_revoke == b.lease_revoke;
}

TEST_CASE("codec: every message field survives a round trip") {
  Message m = FullMessage();
  Message out;
  REQUIRE(DecodeMessage(EncodeMessage(m), &out));
  CHECK(Same(m, out));
  Message empty;
  REQUIRE(DecodeMessage(EncodeMessage(empty), &out));
  CHECK(Same(empty, out));
  for (int t = 0; t <= static_cast<int>(MsgType::kReadIndexResp); ++t) {
    Message x;
    x.type = static_cast<MsgType>(t);
    REQUIRE(DecodeMessage(EncodeMessage(x), &out));
    CHECK(out.type == x.type);
  }
}

TEST_CASE("codec: truncated, extended or corrupted messages are rejected") {
  std::string enc = EncodeMessage(FullMessage());
  Message out;
  for (std::size_t n = 0; n < enc.size(); ++n) {
    INFO("prefix " << n);
    CHECK_FALSE(DecodeMessage(std::string_view(enc).substr(0, n), &out));
  }
  CHECK_FALSE(DecodeMessage(enc + "x", &out));
  std::string bad_version = enc;
  bad_version[0] = 9;
  CHECK_FALSE(DecodeMessage(bad_version, &out));
  std::string bad_type = enc;
  bad_type[1] = 13;
  CHECK_FALSE(DecodeMessage(bad_type, &out));
  // An absurd entry count (offset 2 + 5*8 bytes) must not allocate or crash.
  std::string bad_count = enc;
  for (int i = 0; i < 4; ++i) bad_count[42 + i] = '\xff';
  CHECK_FALSE(DecodeMessage(bad_count, &out));
}

TEST_CASE("codec: random garbage never crashes the decoder") {
  std::mt19937_64 rng(12345);
  std::string enc = EncodeMessage(FullMessage());
  Message out;
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    if (i % 2 == 0) {
      s.resize(rng() % 200);
      for (char& c : s) c = static_cast<char>(rng());
      if (!s.empty()) s[0] = static_cast<char>(kCodecVersion);
    } else {
      // Flip a few bytes of a valid encoding.
      s = enc;
      for (int k = 0; k < 3; ++k)
        s[rng() % s.size()] = static_cast<char>(rng());
    }
    if (DecodeMessage(s, &out)) {
      ++accepted;
      // Whatever decodes re-encodes to the same bytes (canonical format).
      CHECK(EncodeMessage(out) == s);
    }
  }
  CHECK(accepted < 20000);
}

TEST_CASE("codec: entries, hard states and snapshot metadata round trip") {
  Entry e{9, 100, EntryType::kNoop, ""};
  Entry e2{9, 101, EntryType::kNormal, std::string(70000, 'z')};
  Entry out;
  REQUIRE(DecodeEntry(EncodeEntry(e), &out));
  CHECK(out == e);
  REQUIRE(DecodeEntry(EncodeEntry(e2), &out));
  CHECK(out == e2);
  std::string enc = EncodeEntry(e2);
  CHECK_FALSE(DecodeEntry(enc.substr(0, enc.size() - 1), &out));
  CHECK_FALSE(DecodeEntry(enc + "!", &out));
  std::string bad_type = EncodeEntry(e);
  bad_type[16] = 7;
  CHECK_FALSE(DecodeEntry(bad_type, &out));

  HardState hs{5, 2, 40}, hs_out;
  REQUIRE(DecodeHardState(EncodeHardState(hs), &hs_out));
  CHECK(hs_out == hs);
  CHECK_FALSE(DecodeHardState("short", &hs_out));

  SnapshotMeta meta{10, 3, {1, 2, 3, 4, 5}}, meta_out;
  REQUIRE(DecodeSnapshotMeta(EncodeSnapshotMeta(meta), &meta_out));
  CHECK(meta_out == meta);
  std::string m = EncodeSnapshotMeta(meta);
  CHECK_FALSE(DecodeSnapshotMeta(m.substr(0, m.size() - 3), &meta_out));
}

}  // namespace
}  // namespace faultline::raftkv::raft
