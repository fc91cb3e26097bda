// Unit tests of RemoteDescriptor's JSON form, the ledger's `remote` field,
// the stat parser behind remote start times, and heal's refusal of a
// descriptor it cannot open (no SSH server needed; the SSH paths run in
// tests/e2e_ssh_run.sh).
#include "harness/cluster/remote_factory.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "harness/ledger/ledger.h"

namespace fs = std::filesystem;
using namespace faultline::harness;

namespace {

RemoteDescriptor SshDescriptor() {
  RemoteDescriptor d;
  d.kind = "ssh";
  d.host = "10.77.70.2";
  d.port = 2222;
  d.user = "tester";
  d.key = "/tmp/k ey";
  d.known_hosts = "/tmp/kh";
  d.host_key_policy = "accept-new";
  d.sudo = true;
  return d;
}

}  // namespace

TEST_CASE("remote descriptor JSON round trip", "[remote_factory]") {
  const RemoteDescriptor d = SshDescriptor();
  auto back = RemoteDescriptorFromJson(RemoteDescriptorToJson(d));
  REQUIRE(back.ok());
  CHECK(*back == d);
  CHECK_FALSE(RemoteDescriptorFromJson("[1]").ok());
  CHECK_FALSE(RemoteDescriptorFromJson("{\"host\":\"x\"}").ok());
  CHECK_FALSE(RemoteDescriptorFromJson("not json").ok());
}

TEST_CASE("OpenRemote refuses empty and unknown kinds", "[remote_factory]") {
  RemoteDescriptor d;
  auto none = OpenRemote(d);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().find("without a kind") != std::string::npos);
  d.kind = "carrier-pigeon";
  auto unknown = OpenRemote(d);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().find("carrier-pigeon") != std::string::npos);
  d = SshDescriptor();
  d.host_key_policy = "maybe";
  auto policy = OpenRemote(d);
  REQUIRE_FALSE(policy.ok());
  CHECK(policy.error().find("host_key_policy") != std::string::npos);
}

TEST_CASE("stat start time parsing", "[remote_factory]") {
  // Field 22 of a real-looking line whose command name holds ") (".
  const std::string line =
      "4242 (we ird) (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 "
      "1 0 987654 12345678 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 "
      "17 1 0 0 0 0 0\n";
  auto st = ParseStatStartTime(line);
  REQUIRE(st.ok());
  CHECK(*st == 987654ULL);
  CHECK_FALSE(ParseStatStartTime("4242 (x) S 1 2").ok());
  CHECK_FALSE(ParseStatStartTime("garbage").ok());
  // Our own process: the same value the local reader gives.
  std::ifstream self("/proc/self/stat");
  std::string own;
  std::getline(self, own);
  auto mine = ParseStatStartTime(own);
  REQUIRE(mine.ok());
  CHECK(*mine > 0);
}

TEST_CASE("ledger keeps the remote descriptor; heal fails on a bad one",
          "[remote_factory][ledger]") {
  char tmpl[] = "/tmp/faultline-rf-XXXXXX";
  const fs::path dir = mkdtemp(tmpl);
  const std::string path = (dir / "ledger.jsonl").string();
  {
    auto ledger = Ledger::Create(path, "rf1", "");
    REQUIRE(ledger.ok());
    LedgerEntry stop;
    stop.kind = "stop";
    stop.node = "n2";
    stop.pid = 77;
    stop.start_time = 1234;
    stop.remote = SshDescriptor();
    REQUIRE((*ledger)->Record(stop) == 1);
    LedgerEntry local;
    local.kind = "dir";
    local.name = (dir / "faultline-x").string();
    REQUIRE((*ledger)->Record(local) == 2);
    LedgerEntry odd;
    odd.kind = "iptables";
    odd.remote.kind = "carrier-pigeon";
    REQUIRE((*ledger)->Record(odd) == 3);
  }
  auto entries = ReadLedger(path);
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 3);
  CHECK((*entries)[0].remote == SshDescriptor());
  CHECK((*entries)[0].start_time == 1234);
  CHECK((*entries)[1].remote.empty());
  CHECK((*entries)[2].remote.kind == "carrier-pigeon");
  // The unknown transport cannot be healed: the heal says so and fails
  // (the run stays listed), after trying the other entries.
  std::vector<LedgerEntry> odd_only = {(*entries)[2]};
  std::vector<std::string> log;
  Status s = UndoLedgerEntries(odd_only, &log);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().find("carrier-pigeon") != std::string::npos);
  std::error_code ec;
  fs::remove_all(dir, ec);
}
