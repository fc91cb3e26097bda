// Refused runs: subnet overlap, finding the active run that holds a subnet
// from the index and its config, the note naming it, and the ledger check
// that decides whether a refused run's directory may go.
#include "cli/refusal.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using faultline::cli::CidrOverlap;
using faultline::cli::HolderNote;
using faultline::cli::LedgerAllHealed;
using faultline::cli::RunsHoldingSubnet;

struct TempDir {
  TempDir()
      : path(fs::temp_directory_path() /
             ("refusal-test-" + std::to_string(getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path path;
};

// An active run: its directory with config.yaml and a ledger, and its
// index file.
fs::path ActiveRun(const fs::path& root, const std::string& id,
                   const std::string& subnet) {
  fs::path run = root / "store" / "t" / id;
  fs::create_directories(run);
  std::ofstream(run / "config.yaml")
      << "name: t\ncluster:\n  nodes: 3\n  subnet: " << subnet
      << "\ntarget:\n  name: raftkv\nworkload:\n  name: register\n";
  std::ofstream(run / "ledger.jsonl") << "";
  fs::create_directories(root / "active");
  std::ofstream(root / "active" / id)
      << (run / "ledger.jsonl").string() << "\n";
  return run;
}

}  // namespace

TEST_CASE("refusal: CidrOverlap") {
  CHECK(CidrOverlap("10.77.3.0/24", "10.77.3.0/24"));
  CHECK(CidrOverlap("10.77.3.0/24", "10.77.3.128/25"));
  CHECK(CidrOverlap("10.77.0.0/16", "10.77.3.0/24"));
  CHECK_FALSE(CidrOverlap("10.77.3.0/24", "10.77.4.0/24"));
  CHECK_FALSE(CidrOverlap("10.77.3.0/25", "10.77.3.128/25"));
  CHECK_FALSE(CidrOverlap("10.77.3.0", "10.77.3.0/24"));
  CHECK_FALSE(CidrOverlap("300.1.1.1/24", "10.77.3.0/24"));
}

TEST_CASE("refusal: the active run holding a subnet is named") {
  TempDir tmp;
  fs::path holder = ActiveRun(tmp.path, "aaaaaa", "10.77.3.0/24");
  ActiveRun(tmp.path, "bbbbbb", "10.77.9.0/24");
  fs::path self = ActiveRun(tmp.path, "cccccc", "10.77.3.0/24");
  auto found = RunsHoldingSubnet((tmp.path / "active").string(), "10.77.3.0/24",
                                 self.string());
  REQUIRE(found.size() == 1);
  CHECK(found[0] == fs::canonical(holder).string());
  CHECK(RunsHoldingSubnet((tmp.path / "active").string(), "10.77.5.0/24", "")
            .empty());
  CHECK(RunsHoldingSubnet((tmp.path / "missing").string(), "10.77.3.0/24", "")
            .empty());

  std::string note = HolderNote(found);
  CHECK(note.find("held by the run " + found[0]) != std::string::npos);
  CHECK(note.find("`faultline heal " + found[0] + "`") != std::string::npos);
  CHECK(HolderNote({}).empty());
}

TEST_CASE("refusal: LedgerAllHealed") {
  TempDir tmp;
  fs::path ledger = tmp.path / "ledger.jsonl";
  std::ofstream(ledger)
      << "{\"seq\":1,\"kind\":\"dir\",\"name\":\"/dev/shm/faultline-x\"}\n"
         "{\"seq\":2,\"kind\":\"bridge\",\"name\":\"flb-x\"}\n"
         "{\"seq\":3,\"kind\":\"healed\",\"ref\":1}\n";
  CHECK_FALSE(LedgerAllHealed(ledger.string()));
  std::ofstream(ledger, std::ios::app)
      << "{\"seq\":4,\"kind\":\"healed\",\"ref\":2}\n";
  CHECK(LedgerAllHealed(ledger.string()));
  CHECK_FALSE(LedgerAllHealed((tmp.path / "missing.jsonl").string()));
}
