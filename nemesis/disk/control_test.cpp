// The control protocol: parsing every command and its errors, the answer
// lines, and commands applied to a WriteCache over MemoryBacking.
#include "nemesis/disk/control.h"

#include <catch2/catch.hpp>
#include <string>

#include "nemesis/disk/write_cache.h"

using faultline::nemesis::disk::ControlOp;
using faultline::nemesis::disk::CrashReport;
using faultline::nemesis::disk::FormatCrashAnswer;
using faultline::nemesis::disk::FormatErrorAnswer;
using faultline::nemesis::disk::MemoryBacking;
using faultline::nemesis::disk::ParseControlLine;
using faultline::nemesis::disk::RunControlLine;
using faultline::nemesis::disk::WriteCache;

namespace {

std::string ErrorOf(const std::string& line) {
  auto parsed = ParseControlLine(line);
  REQUIRE_FALSE(parsed.ok());
  return parsed.error();
}

}  // namespace

TEST_CASE("control lines parse into commands", "[disk][control]") {
  auto drop = ParseControlLine("drop\n");
  REQUIRE(drop.ok());
  CHECK(drop->op == ControlOp::kDrop);

  auto torn = ParseControlLine("  torn\t123\r\n");
  REQUIRE(torn.ok());
  CHECK(torn->op == ControlOp::kTorn);
  CHECK(torn->seed == 123);

  auto flip = ParseControlLine("flip 18446744073709551615 3");
  REQUIRE(flip.ok());
  CHECK(flip->op == ControlOp::kFlip);
  CHECK(flip->seed == 18446744073709551615ull);
  CHECK(flip->count == 3);

  auto fsync = ParseControlLine("fsync-error 0");
  REQUIRE(fsync.ok());
  CHECK(fsync->op == ControlOp::kFsyncError);
  CHECK(fsync->count == 0);

  auto full = ParseControlLine("disk-full on");
  REQUIRE(full.ok());
  CHECK(full->op == ControlOp::kDiskFull);
  CHECK(full->on);
  CHECK_FALSE(ParseControlLine("disk-full off")->on);

  auto latency = ParseControlLine("latency 250");
  REQUIRE(latency.ok());
  CHECK(latency->op == ControlOp::kLatency);
  CHECK(latency->ms == 250);

  CHECK(ParseControlLine("status")->op == ControlOp::kStatus);
  CHECK(ParseControlLine("sync")->op == ControlOp::kSync);
  CHECK(ParseControlLine("heal")->op == ControlOp::kHeal);
  CHECK_FALSE(ParseControlLine("heal now").ok());
}

TEST_CASE("bad control lines say what was expected", "[disk][control]") {
  CHECK(ErrorOf("") ==
        "empty command; expected one of: drop, torn SEED, "
        "flip SEED N, fsync-error N, disk-full on|off, "
        "latency MS, sync, heal, status");
  CHECK(ErrorOf("  \n").rfind("empty command", 0) == 0);
  CHECK(ErrorOf("crash").rfind("unknown command 'crash'; expected", 0) == 0);
  CHECK(ErrorOf("DROP").rfind("unknown command 'DROP'", 0) == 0);
  CHECK(ErrorOf("drop now") == "drop takes no argument, got 1");
  CHECK(ErrorOf("torn") == "torn: expected torn SEED (a decimal number)");
  CHECK(ErrorOf("torn 1 2") == "torn: expected torn SEED (a decimal number)");
  CHECK(ErrorOf("torn -1").rfind("torn: expected", 0) == 0);
  CHECK(ErrorOf("torn +1").rfind("torn: expected", 0) == 0);
  CHECK(ErrorOf("torn 1x").rfind("torn: expected", 0) == 0);
  CHECK(ErrorOf("torn 18446744073709551616").rfind("torn: expected", 0) == 0);
  CHECK(ErrorOf("flip 1") ==
        "flip: expected flip SEED N (decimal numbers, 1 <= N <= 1048576)");
  CHECK(ErrorOf("flip 1 0").rfind("flip: expected", 0) == 0);
  CHECK(ErrorOf("flip 1 1048577").rfind("flip: expected", 0) == 0);
  CHECK(ErrorOf("fsync-error") ==
        "fsync-error: expected fsync-error N (a decimal number, 0 cancels)");
  CHECK(ErrorOf("disk-full yes") == "disk-full: expected disk-full on|off");
  CHECK(ErrorOf("disk-full") == "disk-full: expected disk-full on|off");
  CHECK(ErrorOf("latency 600001") ==
        "latency: expected latency MS (milliseconds, 0..600000)");
  CHECK(ErrorOf("status please") == "status takes no argument, got 1");
}

TEST_CASE("answers are one JSON object", "[disk][control]") {
  CrashReport drop;
  drop.op = "drop";
  drop.files = 1;
  drop.dropped_writes = 3;
  drop.dropped_bytes = 4096;
  CHECK(FormatCrashAnswer(drop) ==
        "{\"ok\":true,\"op\":\"drop\",\"files\":1,\"dropped_writes\":3,"
        "\"dropped_bytes\":4096,\"kept_writes\":0,\"kept_bytes\":0,"
        "\"cut_writes\":0,\"flipped_bits\":0,\"errors\":0}");

  CrashReport flip;
  flip.op = "flip";
  flip.flipped_bits = 2;
  flip.flips = {{1, 5, 0}, {2, 9, 7}};
  flip.errors = 1;
  flip.first_error = "pwrite: \"full\"\n";
  CHECK(FormatCrashAnswer(flip) ==
        "{\"ok\":true,\"op\":\"flip\",\"files\":0,\"dropped_writes\":0,"
        "\"dropped_bytes\":0,\"kept_writes\":0,\"kept_bytes\":0,"
        "\"cut_writes\":0,\"flipped_bits\":2,\"flips\":[{\"file\":1,"
        "\"offset\":5,\"bit\":0},{\"file\":2,\"offset\":9,\"bit\":7}],"
        "\"errors\":1,\"first_error\":\"pwrite: \\\"full\\\"\\u000a\"}");

  CHECK(FormatErrorAnswer("a\\b") == "{\"ok\":false,\"error\":\"a\\\\b\"}");
}

TEST_CASE("control commands act on the write cache", "[disk][control]") {
  MemoryBacking disk;
  WriteCache cache(disk);
  REQUIRE(cache.Write(1, 0, "abcd").ok());
  REQUIRE(cache.Write(1, 4, "efgh").ok());
  CHECK(RunControlLine(cache, "drop") ==
        "{\"ok\":true,\"op\":\"drop\",\"files\":1,\"dropped_writes\":2,"
        "\"dropped_bytes\":8,\"kept_writes\":0,\"kept_bytes\":0,"
        "\"cut_writes\":0,\"flipped_bits\":0,\"errors\":0}");
  CHECK(cache.Status().held_writes == 0);

  CHECK(RunControlLine(cache, "fsync-error 2") ==
        "{\"ok\":true,\"op\":\"fsync-error\",\"sync_errors_pending\":2}");
  CHECK(cache.Status().sync_errors_pending == 2);
  CHECK(RunControlLine(cache, "disk-full on") ==
        "{\"ok\":true,\"op\":\"disk-full\",\"disk_full\":true}");
  CHECK(cache.Write(1, 0, "x").code() == ENOSPC);
  CHECK(RunControlLine(cache, "latency 25") ==
        "{\"ok\":true,\"op\":\"latency\",\"latency_ms\":25}");
  CHECK(cache.Latency().count() == 25);

  CHECK(RunControlLine(cache, "status") ==
        "{\"ok\":true,\"op\":\"status\",\"files\":0,\"held_writes\":0,"
        "\"held_bytes\":0,\"sync_errors_pending\":2,\"disk_full\":true,"
        "\"latency_ms\":25,\"syncs\":0,\"failed_syncs\":0,"
        "\"written_back_writes\":0,\"written_back_bytes\":0,"
        "\"evicted_writes\":0,\"lost_writes\":0,\"lost_bytes\":0}");

  RunControlLine(cache, "disk-full off");
  REQUIRE(cache.Write(2, 0, "kept").ok());
  CHECK(RunControlLine(cache, "sync") == "{\"ok\":true,\"op\":\"sync\"}");
  CHECK(disk.Durable(2) == "kept");
  REQUIRE(cache.Write(2, 0, "KEPT").ok());
  const std::string torn = RunControlLine(cache, "torn 1");
  CHECK(torn.rfind("{\"ok\":true,\"op\":\"torn\",\"files\":1,", 0) == 0);
  const std::string flip = RunControlLine(cache, "flip 1 1");
  CHECK(flip.find("\"flips\":[]") != std::string::npos);  // nothing held

  CHECK(RunControlLine(cache, "bogus 1") ==
        "{\"ok\":false,\"error\":\"unknown command 'bogus'; expected one of: "
        "drop, torn SEED, flip SEED N, fsync-error N, disk-full on|off, "
        "latency MS, sync, heal, status\"}");
}

TEST_CASE("heal clears the three settings at once", "[disk][control]") {
  MemoryBacking backing;
  WriteCache cache(backing);
  RunControlLine(cache, "fsync-error 3");
  RunControlLine(cache, "disk-full on");
  RunControlLine(cache, "latency 40");
  CHECK(RunControlLine(cache, "heal") ==
        "{\"ok\":true,\"op\":\"heal\",\"sync_errors_pending\":0,"
        "\"disk_full\":false,\"latency_ms\":0}");
  auto s = cache.Status();
  CHECK(s.sync_errors_pending == 0);
  CHECK_FALSE(s.disk_full);
  CHECK(s.latency_ms == 0);
  CHECK(
      faultline::nemesis::disk::WithNumber("{\"ok\":true}", "undone_ops", 3) ==
      "{\"ok\":true,\"undone_ops\":3}");
}
