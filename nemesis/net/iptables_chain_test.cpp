// The pure half of nemesis/net/iptables_chain.h: the restore batch and the
// reading of `iptables -S`.
#include "nemesis/net/iptables_chain.h"

#include <catch2/catch.hpp>

using faultline::nemesis::ChainBatch;
using faultline::nemesis::ChainState;

TEST_CASE("ChainBatch creates the chain, fills it and jumps to it",
          "[iptables-chain]") {
  CHECK(ChainBatch("faultline-part",
                   {"-s 10.0.0.2/32 -j DROP", "-s 10.0.0.3/32 -j DROP"}) ==
        "*filter\n"
        ":faultline-part - [0:0]\n"
        "-A faultline-part -s 10.0.0.2/32 -j DROP\n"
        "-A faultline-part -s 10.0.0.3/32 -j DROP\n"
        "-A INPUT -j faultline-part\n"
        "COMMIT\n");
}

TEST_CASE("ChainState counts jumps and rules of one chain only",
          "[iptables-chain]") {
  const std::string listing =
      "-P INPUT ACCEPT\n"
      "-P FORWARD ACCEPT\n"
      "-P OUTPUT ACCEPT\n"
      "-N faultline-delay\n"
      "-N faultline-part\n"
      "-A INPUT -s 10.0.0.3/32 -m statistic --mode random --probability 0.3 "
      "-m comment --comment faultline-loss -j DROP\n"
      "-A INPUT -j faultline-part\n"
      "-A INPUT -j faultline-delay\n"
      "-A faultline-delay -s 10.0.0.2/32 -j NFQUEUE --queue-num 7701 "
      "--queue-bypass\n"
      "-A faultline-part -s 10.0.0.2/32 -p tcp -j REJECT --reject-with "
      "tcp-reset\n"
      "-A faultline-part -s 10.0.0.2/32 -j DROP\n";
  auto part = ChainState(listing, "faultline-part");
  CHECK(part.exists);
  CHECK(part.jumps == 1);
  CHECK(part.rules == 2);
  auto delay = ChainState(listing, "faultline-delay");
  CHECK(delay.exists);
  CHECK(delay.jumps == 1);
  CHECK(delay.rules == 1);
  auto none = ChainState("-P INPUT ACCEPT\n", "faultline-part");
  CHECK_FALSE(none.exists);
  CHECK(none.jumps == 0);
  CHECK(none.rules == 0);
  // A chain whose name extends another's is not counted as it.
  auto prefix = ChainState("-N faultline-partx\n-A INPUT -j faultline-partx\n",
                           "faultline-part");
  CHECK_FALSE(prefix.exists);
  CHECK(prefix.jumps == 0);
}

TEST_CASE("ChainDropped sums the DROP and REJECT counters of its chain",
          "[iptables-chain]") {
  using faultline::nemesis::ChainDropped;
  const std::string listing =
      "Chain faultline-part (1 references)\n"
      "    pkts      bytes target     prot opt in     out     source          "
      "     destination\n"
      "      12     1008 RETURN     tcp  --  *      *       10.0.0.2        "
      "     0.0.0.0/0            tcp flags:0x04/0x04\n"
      "       3      180 REJECT     tcp  --  *      *       10.0.0.2        "
      "     0.0.0.0/0            reject-with tcp-reset\n"
      "      40     2400 DROP       all  --  *      *       10.0.0.2        "
      "     0.0.0.0/0\n"
      "       0        0 DROP       all  --  *      *       10.0.0.3        "
      "     0.0.0.0/0\n";
  CHECK(ChainDropped(listing, "faultline-part") == 43u);  // RETURN passes
  CHECK(ChainDropped("Chain faultline-part (1 references)\n    pkts      "
                     "bytes target     prot opt in     out     source\n",
                     "faultline-part") == 0u);
  CHECK_FALSE(ChainDropped(listing, "faultline-delay"));
  CHECK_FALSE(ChainDropped("iptables: No chain/target/match by that name.\n",
                           "faultline-part"));
}
