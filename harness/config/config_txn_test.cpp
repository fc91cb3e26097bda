// Config keys of the transactional workloads (list-append, rw-register):
// key_dist, max_writes_per_key, min/max_txn_length, consistency_model, and
// their cross-field rules.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using namespace faultline::harness;
using namespace faultline::harness::config_testing;

TEST_CASE("txn workloads: keys, defaults, round trip", "[config][txn]") {
  LoadResult d = MustLoad("name: x\n");
  CHECK(d.spec->workload.key_dist == "uniform");
  CHECK(d.spec->workload.max_writes_per_key == 32);
  CHECK(d.spec->workload.min_txn_length == 1);
  CHECK(d.spec->workload.max_txn_length == 4);
  CHECK(d.spec->workload.consistency_model == "strict-serializable");

  LoadResult r = MustLoad(
      "name: x\ntarget: {name: raftkv}\n"
      "workload:\n  name: list-append\n  keys: 20\n  key_dist: hot\n"
      "  max_writes_per_key: 8\n  min_txn_length: 2\n  max_txn_length: 6\n"
      "  consistency_model: snapshot-isolation\n");
  const WorkloadSpec& w = r.spec->workload;
  CHECK(w.name == "list-append");
  CHECK(w.key_dist == "hot");
  CHECK(w.max_writes_per_key == 8);
  CHECK(w.min_txn_length == 2);
  CHECK(w.max_txn_length == 6);
  CHECK(w.consistency_model == "snapshot-isolation");
  CHECK(MustLoadDescribed(*r.spec).spec->workload == w);
  MustLoad("name: x\ntarget: {name: raftkv}\nworkload: {name: rw-register}\n");
}

TEST_CASE("txn workloads: bad values are refused with their place",
          "[config][txn]") {
  ExpectError("name: x\nworkload:\n  key_dist: zipf\n",
              {.line = 3, .column = 13, .message_has = {"zipf"}});
  ExpectError("name: x\nworkload:\n  consistency_model: linearizable\n",
              {.line = 3, .message_has = {"linearizable"}});
  ExpectError("name: x\nworkload:\n  max_txn_length: 0\n", {.line = 3});
  ExpectError(
      "name: x\ntarget: {name: raftkv}\nworkload:\n  name: list-append\n"
      "  min_txn_length: 5\n  max_txn_length: 2\n",
      {.message_has = {"min_txn_length (5)", "max_txn_length (2)"}});
  ExpectError(
      "name: x\ntarget: {name: raftkv}\nworkload:\n  name: rw-register\n"
      "  mix: {read: 0, write: 0, cas: 5}\n",
      {.message_has = {"read and write are both 0"}});
  ExpectError(
      "name: x\ntarget:\n  name: process\n  processes: [{argv: [s]}]\n"
      "  client: {protocol: resp, port: c}\n  ports: {c: 7000}\n"
      "workload: {name: list-append}\nnemesis: {faults: []}\n",
      {.message_has = {"exec client", "resp"}});
}
