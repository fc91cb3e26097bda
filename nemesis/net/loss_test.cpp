// The pure parts of the loss fault: probability text, the rules and their
// iptables-restore batches, the drop-counter parser.
#include "nemesis/net/loss.h"

#include <catch2/catch.hpp>

using faultline::nemesis::FormatProbability;
using faultline::nemesis::LossDropped;
using faultline::nemesis::LossRules;
using faultline::nemesis::LossRuleSpecs;

TEST_CASE("loss probability text has no trailing zeros", "[loss]") {
  CHECK(FormatProbability(0.3) == "0.3");
  CHECK(FormatProbability(1.0) == "1");
  CHECK(FormatProbability(0.000001) == "0.000001");
  CHECK(FormatProbability(0.25) == "0.25");
}

TEST_CASE("loss rules drop from each source only, tagged", "[loss]") {
  auto specs = LossRuleSpecs({"10.77.56.2", "10.77.56.3"}, 0.3);
  REQUIRE(specs.size() == 2);
  CHECK(specs[0] ==
        "INPUT -s 10.77.56.2/32 -m statistic --mode random --probability 0.3 "
        "-m comment --comment faultline-loss -j DROP");
  CHECK(specs[1].find("-s 10.77.56.3/32") != std::string::npos);
  CHECK(LossRuleSpecs({}, 0.5).empty());
}

TEST_CASE("the add and delete batches name the same rules", "[loss]") {
  const std::vector<std::string> sources = {"10.77.56.1", "10.77.56.3"};
  std::string add = LossRules(sources, 0.5, true);
  std::string del = LossRules(sources, 0.5, false);
  CHECK(add.rfind("*filter\n", 0) == 0);
  CHECK(add.substr(add.size() - 7) == "COMMIT\n");
  CHECK(add.find("-A INPUT -s 10.77.56.1/32") != std::string::npos);
  CHECK(add.find("-D ") == std::string::npos);
  // Deleting is the same text with -D for -A.
  std::string swapped = add;
  for (std::size_t at; (at = swapped.find("-A INPUT")) != std::string::npos;)
    swapped.replace(at, 2, "-D");
  CHECK(swapped == del);
}

TEST_CASE("drop counters are summed from tagged DROP lines only", "[loss]") {
  const std::string listing =
      "Chain INPUT (policy ACCEPT 120 packets, 9000 bytes)\n"
      "    pkts      bytes target     prot opt in     out     source        "
      "       destination\n"
      "      12     1008 DROP       all  --  *      *       10.77.56.2     "
      "       0.0.0.0/0            statistic mode random probability "
      "0.30000000009 /* faultline-loss */\n"
      "       5      420 DROP       all  --  *      *       10.77.56.3     "
      "       0.0.0.0/0            statistic mode random probability "
      "0.30000000009 /* faultline-loss */\n"
      "      99     8000 DROP       all  --  *      *       10.77.56.4     "
      "       0.0.0.0/0\n"
      "       7      500 ACCEPT     all  --  *      *       10.77.56.5     "
      "       0.0.0.0/0            /* faultline-loss */\n";
  auto n = LossDropped(listing);
  REQUIRE(n.has_value());
  CHECK(*n == 17);
  CHECK_FALSE(LossDropped("Chain INPUT (policy ACCEPT)\n").has_value());
  CHECK(LossDropped("       0        0 DROP  all -- * * 1.2.3.4 0.0.0.0/0 "
                    "/* faultline-loss */\n") == std::uint64_t{0});
}
