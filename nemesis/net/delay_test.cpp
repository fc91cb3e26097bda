// The pure parts of the delay fault: DelayLine ordering and timing, the
// daemon's flags, the iptables batch, the queue listing parser.
#include "nemesis/net/delay.h"

#include <catch2/catch.hpp>
#include <string>

#include "nemesis/net/netdelay_node.h"

using faultline::nemesis::DelayLine;
using faultline::nemesis::DelayRules;
using faultline::nemesis::ParseNetdelayArgs;
using faultline::nemesis::QueueBound;

TEST_CASE("DelayLine releases each packet after the delay, in order",
          "[delay]") {
  DelayLine line(100, 0, 1);
  CHECK(line.Push(1, 1000) == 1100);
  CHECK(line.Push(2, 1030) == 1130);
  CHECK(line.NextRelease() == 1100);
  CHECK(line.PopDue(1099).empty());
  CHECK(line.PopDue(1100) == std::vector<std::uint32_t>{1});
  CHECK(line.size() == 1);
  CHECK(line.PopDue(5000) == std::vector<std::uint32_t>{2});
  CHECK_FALSE(line.NextRelease().has_value());
}

TEST_CASE("DelayLine jitter stays in bounds and never reorders", "[delay]") {
  DelayLine line(200, 50, 42);
  std::int64_t last = 0;
  bool varied = false;
  for (std::uint32_t i = 0; i < 2000; ++i) {
    std::int64_t now = 10 * i;
    std::int64_t r = line.Push(i, now);
    CHECK(r >= now + 150);
    CHECK(r >= last);  // FIFO
    // Above now + 250 only when held back behind an earlier packet.
    if (r > now + 250) CHECK(r == last);
    if (r != now + 200) varied = true;
    last = r;
  }
  CHECK(varied);
  std::vector<std::uint32_t> all = line.PopDue(INT64_MAX / 2);
  REQUIRE(all.size() == 2000);
  for (std::uint32_t i = 0; i < 2000; ++i) CHECK(all[i] == i);
}

TEST_CASE("DelayLine with the same seed gives the same releases", "[delay]") {
  DelayLine a(100, 30, 7), b(100, 30, 7);
  for (std::uint32_t i = 0; i < 100; ++i)
    CHECK(a.Push(i, i * 50) == b.Push(i, i * 50));
}

TEST_CASE("DelayLine PopAll empties the line in order", "[delay]") {
  DelayLine line(1000, 0, 1);
  line.Push(5, 0);
  line.Push(6, 1);
  CHECK(line.PopAll() == std::vector<std::uint32_t>{5, 6});
  CHECK(line.size() == 0);
}

TEST_CASE("netdelay flags", "[delay]") {
  auto ok = ParseNetdelayArgs({"--queue", "7", "--delay-ms", "600",
                               "--jitter-ms", "20", "--seed", "9"});
  REQUIRE(ok.ok());
  CHECK(ok->queue == 7);
  CHECK(ok->delay_ms == 600);
  CHECK(ok->jitter_ms == 20);
  CHECK(ok->seed == 9);
  CHECK(ParseNetdelayArgs({"--help"})->help);
  auto big = ParseNetdelayArgs(
      {"--queue", "1", "--delay-ms", "5", "--seed", "18446744073709551615"});
  REQUIRE(big.ok());
  CHECK(big->seed == UINT64_MAX);
  CHECK_FALSE(ParseNetdelayArgs({"--queue", "1", "--delay-ms", "5", "--seed",
                                 "18446744073709551616"})
                  .ok());
  auto missing = ParseNetdelayArgs({"--delay-ms", "5"});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error() == "--queue is required");
  CHECK_FALSE(ParseNetdelayArgs({"--queue", "1"}).ok());
  CHECK_FALSE(ParseNetdelayArgs({"--queue", "70000", "--delay-ms", "5"}).ok());
  CHECK_FALSE(ParseNetdelayArgs({"--queue", "1", "--delay-ms", "0"}).ok());
  CHECK_FALSE(ParseNetdelayArgs({"--queue", "1", "--delay-ms", "10001"}).ok());
  CHECK_FALSE(ParseNetdelayArgs({"--queue", "1", "--delay-ms", "x"}).ok());
  auto jitter = ParseNetdelayArgs(
      {"--queue", "1", "--delay-ms", "5", "--jitter-ms", "6"});
  REQUIRE_FALSE(jitter.ok());
  CHECK(jitter.error() == "--jitter-ms must not exceed --delay-ms");
  auto unknown = ParseNetdelayArgs({"--queue", "1", "--bogus"});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error() == "unknown argument '--bogus'");
  CHECK_FALSE(ParseNetdelayArgs({"--queue"}).ok());
}

TEST_CASE("DelayRules queues each source with bypass", "[delay]") {
  CHECK(DelayRules({"10.0.0.1", "10.0.0.3"}, 12) ==
        "*filter\n"
        ":faultline-delay - [0:0]\n"
        "-A faultline-delay -s 10.0.0.1/32 -j NFQUEUE --queue-num 12 "
        "--queue-bypass\n"
        "-A faultline-delay -s 10.0.0.3/32 -j NFQUEUE --queue-num 12 "
        "--queue-bypass\n"
        "-A INPUT -j faultline-delay\n"
        "COMMIT\n");
  CHECK(DelayRules({}, 1) ==
        "*filter\n:faultline-delay - [0:0]\n-A INPUT -j faultline-delay\n"
        "COMMIT\n");
}

TEST_CASE("QueueBound reads the nfnetlink_queue listing", "[delay]") {
  const std::string listing =
      "    5  12345     0 1     0  0  0        0  1\n"
      " 7701  23456     3 1     0  0  0       17  1\n";
  CHECK(QueueBound(listing, 7701));
  CHECK(QueueBound(listing, 5));
  CHECK_FALSE(QueueBound(listing, 770));
  CHECK_FALSE(QueueBound("", 5));
}

TEST_CASE("DescribeNetdelayCheck names the library a node lacks", "[delay]") {
  using faultline::nemesis::DescribeNetdelayCheck;
  const std::string missing =
      "/tmp/faultline-x/netdelay-n1/faultline-netdelay: error while loading "
      "shared libraries: libnetfilter_queue.so.1: cannot open shared object "
      "file: No such file or directory\n";
  const std::string why = DescribeNetdelayCheck(127, missing);
  CHECK(why.rfind("the node lacks libnetfilter_queue.so.1,", 0) == 0);
  CHECK(why.find("libnetfilter-queue1") != std::string::npos);
  CHECK(DescribeNetdelayCheck(1, "x\nboom\n") ==
        "faultline-netdelay --help exited 1: boom");
  CHECK(DescribeNetdelayCheck(126, "") ==
        "faultline-netdelay --help exited 126");
}
