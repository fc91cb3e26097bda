#include "targets/raftkv/storage/wal.h"

#include <catch2/catch.hpp>
#include <random>

#include "targets/raftkv/storage/storage_test_util.h"

namespace faultline::raftkv::storage::wal {
namespace {

using testing::E;

// Two committed batches: [entry 1, entry 2, hs] and [truncate 2, entry 2',
// snapshot mark].
std::string TwoBatches(std::size_t* first_batch_end) {
  std::string buf;
  AppendEntry(&buf, E(1, 1));
  AppendEntry(&buf, E(2, 1, 50));
  AppendHardState(&buf, raft::HardState{1, 2, 1});
  AppendCommit(&buf, 3);
  *first_batch_end = buf.size();
  AppendTruncate(&buf, 2);
  AppendEntry(&buf, E(2, 2));
  AppendSnapshotMark(&buf, 1, 1, true);
  AppendCommit(&buf, 3);
  return buf;
}

TEST_CASE("wal records round-trip", "[storage][wal]") {
  std::size_t mid;
  std::string buf = TwoBatches(&mid);
  SegmentScan scan;
  REQUIRE(ScanSegment(buf, true, &scan) == "");
  CHECK(scan.valid_bytes == buf.size());
  CHECK(scan.cut_records == 0);
  REQUIRE(scan.records.size() == 6);
  CHECK(scan.records[0].entry == E(1, 1));
  CHECK(scan.records[1].entry == E(2, 1, 50));
  CHECK(scan.records[2].hard_state == raft::HardState{1, 2, 1});
  CHECK(scan.records[3].type == RecordType::kTruncate);
  CHECK(scan.records[3].index == 2);
  CHECK(scan.records[4].entry == E(2, 2));
  CHECK(scan.records[5].type == RecordType::kSnapshot);
  CHECK(scan.records[5].index == 1);
  CHECK(scan.records[5].term == 1);
  CHECK(scan.records[5].kept);
}

TEST_CASE("every truncation of the last batch is a torn tail, cut whole",
          "[storage][wal]") {
  std::size_t mid;
  std::string buf = TwoBatches(&mid);
  for (std::size_t len = mid; len < buf.size(); ++len) {
    INFO("file cut to " << len << " of " << buf.size() << " bytes");
    SegmentScan scan;
    REQUIRE(ScanSegment(std::string_view(buf).substr(0, len), true, &scan) ==
            "");
    CHECK(scan.records.size() == 3);
    CHECK(scan.valid_bytes == mid);
    CHECK((len == mid) == (scan.cut_records == 0));
    // In a segment that is not the last, the same bytes are corruption.
    if (len > mid) {
      CHECK(ScanSegment(std::string_view(buf).substr(0, len), false, &scan) !=
            "");
    }
  }
}

TEST_CASE("a zero-filled tail is cut; a bad record before data is an error",
          "[storage][wal]") {
  std::size_t mid;
  std::string buf = TwoBatches(&mid);
  SegmentScan scan;

  std::string zeros = buf.substr(0, mid) + std::string(100, '\0');
  REQUIRE(ScanSegment(zeros, true, &scan) == "");
  CHECK(scan.valid_bytes == mid);
  CHECK(scan.records.size() == 3);

  // A flipped bit in the first record: valid records follow, so this is
  // corruption, not a torn write.
  std::string flipped = buf;
  flipped[kHeaderSize + 3] ^= 0x10;
  std::string err = ScanSegment(flipped, true, &scan);
  CHECK(err.find("checksum mismatch") != std::string::npos);
  CHECK(err.find("offset 0") != std::string::npos);

  // A flipped bit in the very last record (the commit) cannot be told from a
  // torn write: that batch is cut.
  std::string last = buf;
  last[last.size() - 1] ^= 0x01;
  REQUIRE(ScanSegment(last, true, &scan) == "");
  CHECK(scan.valid_bytes == mid);
  CHECK(scan.cut_records == 4);
}

TEST_CASE("a commit with the wrong count is corruption", "[storage][wal]") {
  std::string buf;
  AppendEntry(&buf, E(1, 1));
  AppendCommit(&buf, 2);
  SegmentScan scan;
  CHECK(ScanSegment(buf, true, &scan) != "");
}

TEST_CASE("mutated segments never read past the data or lie about length",
          "[storage][wal]") {
  std::size_t mid;
  const std::string good = TwoBatches(&mid);
  std::mt19937 rng(7);
  int errors = 0;
  for (int round = 0; round < 5000; ++round) {
    std::string bad = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      bad[rng() % bad.size()] = static_cast<char>(rng());
    }
    bad.resize(rng() % (bad.size() + 1));
    SegmentScan scan;
    std::string err = ScanSegment(bad, rng() % 2 == 0, &scan);
    if (!err.empty()) {
      ++errors;
      continue;
    }
    REQUIRE(scan.valid_bytes <= bad.size());
    // What was accepted is a prefix of the original batches.
    REQUIRE(good.compare(0, scan.valid_bytes, bad, 0, scan.valid_bytes) == 0);
  }
  CHECK(errors > 0);
}

TEST_CASE("segment names", "[storage][wal]") {
  std::string name = SegmentName(0x1a, 0x2b3c);
  CHECK(name == "wal-000000000000001a-0000000000002b3c.log");
  std::uint64_t seq = 0;
  raft::Index first = 0;
  REQUIRE(ParseSegmentName(name, &seq, &first));
  CHECK(seq == 0x1a);
  CHECK(first == 0x2b3c);
  CHECK_FALSE(ParseSegmentName("wal-000000000000001a.log", &seq, &first));
  CHECK_FALSE(ParseSegmentName("wal-00000000000000zz-0000000000002b3c.log",
                               &seq, &first));
  CHECK_FALSE(ParseSegmentName("snapshot", &seq, &first));
}

}  // namespace
}  // namespace faultline::raftkv::storage::wal
