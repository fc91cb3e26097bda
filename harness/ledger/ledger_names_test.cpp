// Unit tests of what heal may touch (harness/ledger/ledger_names.h): the
// naming rules, the refusal of foreign names, and the iptables commands that
// remove one fault's tag and nothing else.
#include "harness/ledger/ledger_names.h"

#include <catch2/catch.hpp>

using namespace faultline::harness;

namespace {

LedgerEntry Entry(const std::string& kind, const std::string& name,
                  const std::string& netns = "") {
  LedgerEntry e;
  e.seq = 7;
  e.kind = kind;
  e.name = name;
  e.netns = netns;
  return e;
}

using Commands = std::vector<std::vector<std::string>>;

}  // namespace

TEST_CASE("faultline's names follow the rules it creates them by",
          "[ledger-names]") {
  CHECK(IsFaultlineNamespace("fl-run1-n1"));
  CHECK(IsFaultlineNamespace("fl-0a1b2c3d-n12"));
  CHECK_FALSE(IsFaultlineNamespace("probe-ns"));
  CHECK_FALSE(IsFaultlineNamespace("fl-run1"));
  CHECK_FALSE(IsFaultlineNamespace("fl--n1"));
  CHECK_FALSE(IsFaultlineNamespace("fl-toolongid-n1"));  // 9 characters
  CHECK_FALSE(IsFaultlineNamespace("fl-Run1-n1"));
  CHECK_FALSE(IsFaultlineNamespace("fl-run1-n0"));
  CHECK_FALSE(IsFaultlineNamespace("fl-run1-n1x"));
  CHECK_FALSE(IsFaultlineNamespace("fl-run1-n1/../x"));
  CHECK(IsFaultlineBridge("flb-run1"));
  CHECK_FALSE(IsFaultlineBridge("docker0"));
  CHECK_FALSE(IsFaultlineBridge("flb-"));
  CHECK(IsFaultlineVeth("flv-run1-3"));
  CHECK_FALSE(IsFaultlineVeth("flv-run1"));
  CHECK_FALSE(IsFaultlineVeth("eth0"));
  CHECK(IsFaultlineTag("faultline-part"));
  CHECK(IsFaultlineTag("faultline-loss"));
  CHECK_FALSE(IsFaultlineTag("faultline-"));
  CHECK_FALSE(IsFaultlineTag("INPUT"));
  CHECK_FALSE(IsFaultlineTag("owner-chain"));
  CHECK_FALSE(IsFaultlineTag("faultline-Part"));
  CHECK_FALSE(IsFaultlineTag("faultline-part x"));
  CHECK_FALSE(IsFaultlineTag("faultline-0123456789abcdefghi"));  // 29 chars
}

TEST_CASE("RefusalReason names what is not faultline's", "[ledger-names]") {
  // What runs record today passes.
  CHECK(RefusalReason(Entry("netns", "fl-run1-n2")).empty());
  CHECK(RefusalReason(Entry("bridge", "flb-run1")).empty());
  CHECK(RefusalReason(Entry("hostrule", "flb-run1")).empty());
  CHECK(RefusalReason(Entry("veth", "flv-run1-2")).empty());
  CHECK(
      RefusalReason(Entry("iptables", "faultline-part", "fl-run1-n2")).empty());
  CHECK(RefusalReason(Entry("iptables", "", "fl-run1-n2")).empty());  // old
  CHECK(RefusalReason(Entry("dir", "/dev/shm/faultline-run1")).empty());
  CHECK(RefusalReason(Entry("dir", "store/t/20240101/faultline-work")).empty());
  CHECK(
      RefusalReason(Entry("faketime", "/tmp/faultline-run1/faketime")).empty());
  CHECK(RefusalReason(Entry("sysclock", "/n/faultline-r/sysclock.state"))
            .empty());
  CHECK(RefusalReason(Entry("process", "")).empty());
  LedgerEntry remote = Entry("iptables", "faultline-delay");
  remote.remote.kind = "ssh";
  remote.remote.host = "10.0.0.2";
  CHECK(RefusalReason(remote).empty());

  // A hand-edited ledger naming someone else's resources does not.
  auto refused = [](const LedgerEntry& e, const std::string& word) {
    const std::string why = RefusalReason(e);
    INFO(e.kind << " " << e.name << " " << e.netns << ": " << why);
    CHECK(why.find(word) != std::string::npos);
  };
  refused(Entry("netns", "probe-ns"), "probe-ns");
  refused(Entry("iptables", "faultline-part", "probe-ns"), "probe-ns");
  refused(Entry("iptables", "", "probe-ns"), "probe-ns");
  refused(Entry("iptables", "faultline-part", ""), "no namespace");
  refused(Entry("iptables", "owner-chain", "fl-run1-n1"), "owner-chain");
  remote.name = "INPUT";
  refused(remote, "INPUT");
  refused(Entry("bridge", "docker0"), "docker0");
  refused(Entry("hostrule", "br0"), "br0");
  refused(Entry("veth", "eth0"), "eth0");
  refused(Entry("dir", "/home/owner"), "/home/owner");
  refused(Entry("dir", "/tmp/faultline-x/.."), "..");
  refused(Entry("dir", "/tmp/faultline-x/../../home/owner/faultline-y"), "..");
  refused(Entry("faketime", "/etc/faketime"), "/etc/faketime");
  refused(Entry("sysclock", "/root/sysclock.state"), "sysclock.state");
}

TEST_CASE("SplitIptablesLine undoes iptables' quoting", "[ledger-names]") {
  CHECK(SplitIptablesLine("-A INPUT -j faultline-part") ==
        std::vector<std::string>{"-A", "INPUT", "-j", "faultline-part"});
  CHECK(
      SplitIptablesLine(R"(-A INPUT -m comment --comment "a \"b\" c" -j X)") ==
      std::vector<std::string>{"-A", "INPUT", "-m", "comment", "--comment",
                               "a \"b\" c", "-j", "X"});
  CHECK(SplitIptablesLine("  ").empty());
}

TEST_CASE("TagHealCommands removes one tag and leaves every other rule",
          "[ledger-names]") {
  const std::string listing =
      "-P INPUT ACCEPT\n"
      "-P FORWARD ACCEPT\n"
      "-P OUTPUT ACCEPT\n"
      "-N faultline-delay\n"
      "-N faultline-part\n"
      "-N owner-chain\n"
      "-A INPUT -s 10.9.9.9/32 -j DROP\n"
      "-A INPUT -j owner-chain\n"
      "-A INPUT -s 10.0.0.3/32 -m statistic --mode random --probability 0.3 "
      "-m comment --comment faultline-loss -j DROP\n"
      "-A INPUT -m comment --comment \"owner rule\" -j ACCEPT\n"
      "-A INPUT -j faultline-part\n"
      "-A INPUT -j faultline-delay\n"
      "-A faultline-delay -s 10.0.0.2/32 -j NFQUEUE --queue-num 7701 "
      "--queue-bypass\n"
      "-A faultline-part -s 10.0.0.2/32 -j DROP\n"
      "-A owner-chain -s 10.8.8.8/32 -j DROP\n";
  CHECK(TagHealCommands(listing, "faultline-part") ==
        Commands{{"-D", "INPUT", "-j", "faultline-part"},
                 {"-F", "faultline-part"},
                 {"-X", "faultline-part"}});
  CHECK(TagHealCommands(listing, "faultline-loss") ==
        Commands{{"-D", "INPUT", "-s", "10.0.0.3/32", "-m", "statistic",
                  "--mode", "random", "--probability", "0.3", "-m", "comment",
                  "--comment", "faultline-loss", "-j", "DROP"}});
  // No tag (an older ledger): every faultline tag, still nothing else.
  CHECK(TagHealCommands(listing, "") ==
        Commands{{"-D", "INPUT", "-s", "10.0.0.3/32", "-m", "statistic",
                  "--mode", "random", "--probability", "0.3", "-m", "comment",
                  "--comment", "faultline-loss", "-j", "DROP"},
                 {"-D", "INPUT", "-j", "faultline-part"},
                 {"-D", "INPUT", "-j", "faultline-delay"},
                 {"-F", "faultline-delay"},
                 {"-X", "faultline-delay"},
                 {"-F", "faultline-part"},
                 {"-X", "faultline-part"}});
  // Nothing of faultline's: nothing to do (a second heal).
  const std::string foreign =
      "-P INPUT ACCEPT\n-N owner-chain\n-A INPUT -j owner-chain\n"
      "-A owner-chain -s 10.8.8.8/32 -j DROP\n";
  CHECK(TagHealCommands(foreign, "faultline-part").empty());
  CHECK(TagHealCommands(foreign, "").empty());
  // A jump from any other chain goes (by the naming rule it is
  // faultline's); a chain whose name extends the tag stays.
  CHECK(TagHealCommands("-N faultline-fig8\n-N faultline-fig88\n"
                        "-A owner-chain -j faultline-fig8\n"
                        "-A INPUT -j faultline-fig88\n",
                        "faultline-fig8") ==
        Commands{{"-D", "owner-chain", "-j", "faultline-fig8"},
                 {"-F", "faultline-fig8"},
                 {"-X", "faultline-fig8"}});
}

TEST_CASE("mount entries: only paths inside faultline-* directories",
          "[ledger-names]") {
  CHECK(RefusalReason(Entry("mount", "/dev/shm/faultline-r1/n1/data")) == "");
  CHECK(RefusalReason(Entry("mount", "/tmp/faultline-r1/n2/data/")) == "");
  CHECK(RefusalReason(Entry("mount", "/var/lib/etcd")) != "");
  CHECK(RefusalReason(Entry("mount", "relative/faultline-x/data")) != "");
  CHECK(RefusalReason(Entry("mount", "/tmp/faultline-x/../../var")) != "");
  CHECK(RefusalReason(Entry("mount", "")) != "");
}
