// Config keys of the collection workloads (set, bank, counter): accounts,
// total, max_transfer, and their cross-field rules.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using namespace faultline::harness;
using namespace faultline::harness::config_testing;

TEST_CASE("collection workloads: keys, defaults, round trip",
          "[config][collections]") {
  LoadResult d = MustLoad("name: x\n");
  CHECK(d.spec->workload.accounts == 5);
  CHECK(d.spec->workload.total == 100);
  CHECK(d.spec->workload.max_transfer == 5);

  LoadResult r = MustLoad(
      "name: x\ntarget: {name: raftkv}\n"
      "workload:\n  name: bank\n  accounts: 8\n  total: 1000\n"
      "  max_transfer: 20\n");
  const WorkloadSpec& w = r.spec->workload;
  CHECK(w.name == "bank");
  CHECK(w.accounts == 8);
  CHECK(w.total == 1000);
  CHECK(w.max_transfer == 20);
  CHECK(MustLoadDescribed(*r.spec).spec->workload == w);
  MustLoad("name: x\ntarget: {name: raftkv}\nworkload: {name: set}\n");
  MustLoad("name: x\ntarget: {name: raftkv}\nworkload: {name: counter}\n");
}

TEST_CASE("collection workloads: bad values are refused with their place",
          "[config][collections]") {
  ExpectError("name: x\nworkload:\n  accounts: 1\n",
              {.file = "t.yaml", .line = 3, .message_has = {"out of range"}});
  ExpectError("name: x\nworkload:\n  total: -1\n", {.line = 3});
  ExpectError("name: x\nworkload:\n  max_transfer: 0\n", {.line = 3});
  ExpectError("name: x\nworkload:\n  accounts: many\n",
              {.line = 3, .message_has = {"expected an integer"}});
}

TEST_CASE("collection workloads: only targets with a client, a usable mix",
          "[config][collections]") {
  for (const std::string name : {"set", "bank", "counter"}) {
    for (const std::string target : {"etcd", "redis", "zookeeper"}) {
      MustLoad("name: x\ntarget: {name: " + target +
               "}\nworkload: {name: " + name + "}\n");
    }
    // The process target through an exec client only.
    const std::string process =
        "name: x\ntarget:\n  name: process\n  processes: [{argv: [s]}]\n"
        "  ports: {c: 7000}\n";
    MustLoad(process + "  client: {protocol: exec, command: [c]}\n" +
             "workload: {name: " + name + "}\nnemesis: {faults: []}\n");
    ExpectError(process + "  client: {protocol: resp, port: c}\n" +
                    "workload: {name: " + name + "}\nnemesis: {faults: []}\n",
                {.message_has = {"the " + name +
                                     " workload needs an exec "
                                     "client on the process target",
                                 "resp"}});
    ExpectError(process + "  client: {protocol: etcd, port: c}\n" +
                    "workload: {name: " + name + "}\nnemesis: {faults: []}\n",
                {.message_has = {"needs an exec client", "etcd"}});
    ExpectError("name: x\ntarget: {name: raftkv}\nworkload:\n  name: " + name +
                    "\n  mix: {read: 0, write: 0, cas: 5}\n",
                {.message_has = {"read and write are both 0"}});
  }
  // The read weight alone is enough (a read-only run).
  MustLoad(
      "name: x\ntarget: {name: raftkv}\nworkload:\n  name: set\n"
      "  mix: {read: 1, write: 0, cas: 0}\n");
}
