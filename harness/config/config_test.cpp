// Unit tests for config loading and validation (harness/config/config.h).
#include "harness/config/config.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "harness/config/config_test_util.h"

namespace fs = std::filesystem;
using namespace faultline::harness;
using namespace faultline::harness::config_testing;

TEST_CASE("minimal config gets defaults and a random seed", "[config]") {
  LoadResult r = LoadConfigFile(SourceDir() +
                                "/harness/config/testdata/config/minimal.yaml");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  const TestSpec& s = *r.spec;
  CHECK(s.name == "minimal");
  CHECK_FALSE(s.seed_given);
  CHECK(s.cluster.nodes == 5);
  CHECK(s.workload.name == "register");
  CHECK(s.nemesis.faults.size() == 3);
  CHECK(Contains(s.source_file, "minimal.yaml"));
  // Two loads draw (almost surely) different seeds.
  LoadResult r2 = MustLoad("name: minimal\n");
  LoadResult r3 = MustLoad("name: minimal\n");
  CHECK(r2.spec->seed != r3.spec->seed);
}

TEST_CASE("every field is read", "[config]") {
  LoadResult r = MustLoad(R"(name: full
description: a test
seed: 18446744073709551615
time_limit: 2m
recovery: 1500ms
store: /tmp/st
expect: invalid
cluster: {provider: netns, nodes: 3, subnet: 192.168.4.0/28}
target:
  name: etcd
  pre_vote: false
  heartbeat_ms: 50
  election_timeout_ms: 1s
  serializable_reads: true
  binary: /opt/etcd/etcd
  extra_args: ["--snapshot-count=100", --log-level=debug]
workload:
  name: register
  keys: 2
  concurrency: 4
  rate: 0
  mix: {read: 1.5, write: 0, cas: 2}
  op_timeout_ms: 750
nemesis:
  faults: [kill]
  interval: 0
  duration: 2.5
  partitions: []
  targets: [all]
checker: {timeout: 10, memory_limit_mb: 512, threads: 2}
)");
  const TestSpec& s = *r.spec;
  CHECK(s.description == "a test");
  CHECK(s.seed == 18446744073709551615ULL);
  CHECK(s.seed_given);
  CHECK(s.time_limit_s == 120);
  CHECK(s.recovery_s == 1.5);
  CHECK(s.store_dir == "/tmp/st");
  CHECK(s.expect == std::optional<std::string>("invalid"));
  CHECK(s.cluster.nodes == 3);
  CHECK(s.cluster.subnet == "192.168.4.0/28");
  CHECK_FALSE(s.target.etcd.pre_vote);
  CHECK(s.target.etcd.heartbeat_ms == 50);
  CHECK(s.target.etcd.election_timeout_ms == 1000);
  CHECK(s.target.etcd.serializable_reads);
  CHECK(s.target.etcd.binary == "/opt/etcd/etcd");
  CHECK(s.target.etcd.extra_args ==
        std::vector<std::string>{"--snapshot-count=100", "--log-level=debug"});
  CHECK(s.workload.keys == 2);
  CHECK(s.workload.concurrency == 4);
  CHECK(s.workload.rate == 0);
  CHECK(s.workload.read == 1.5);
  CHECK(s.workload.write == 0);
  CHECK(s.workload.cas == 2);
  CHECK(s.workload.op_timeout_ms == 750);
  CHECK(s.nemesis.faults == std::vector<std::string>{"kill"});
  CHECK(s.nemesis.interval_s == 0);
  CHECK(s.nemesis.duration_s == 2.5);
  CHECK(s.nemesis.partitions.empty());
  CHECK(s.nemesis.targets == std::vector<std::string>{"all"});
  CHECK(s.checker.timeout_s == 10);
  CHECK(s.checker.memory_limit_mb == 512);
  CHECK(s.checker.threads == 2);
}

TEST_CASE("ConfigError::Format", "[config]") {
  ConfigError e{"a.yaml", 3, 7, "bad thing", "do this"};
  CHECK(e.Format() == "a.yaml:3:7: error: bad thing\n  hint: do this");
  ConfigError no_place{"a.yaml", 0, 0, "--nodes 1: too few", ""};
  CHECK(no_place.Format() == "a.yaml: error: --nodes 1: too few");
}

TEST_CASE("YAML syntax errors carry the parser's position", "[config]") {
  ExpectError(
      "name: x\nnemesis:\n  faults: [kill, pause\ncluster: {nodes: 3}\n",
      {.line = 4,
       .column = 8,
       .message_has = {"invalid YAML"},
       .hint_has = {"closing"}});
  ExpectError("name: x\ncluster:\n\tnodes: 3\n",
              {.line = 3, .column = 1, .hint_has = {"spaces"}});
}

TEST_CASE("unknown keys get a did-you-mean or a placement hint", "[config]") {
  ExpectError("name: x\ncluster:\n  nodse: 3\n",
              {.line = 3,
               .column = 3,
               .message = "unknown key `nodse` in `cluster:`",
               .hint = "did you mean `nodes`?"});
  ExpectError(
      "name: x\nnodes: 3\n",
      {.line = 2, .column = 1, .hint = "`nodes` belongs under `cluster:`"});
  ExpectError("name: x\nzzzzzz: 1\n",
              {.hint_has = {"valid keys here: name, description"}});
  ExpectError("name: x\ntime-limit: 5\n",
              {.hint = "did you mean `time_limit`?"});
}

TEST_CASE("wrong types name what was expected", "[config]") {
  ExpectError("name: x\ncluster:\n  nodes: five\n",
              {.line = 3,
               .column = 10,
               .message = "cluster.nodes: expected an integer, got `five`",
               .hint_has = {"nodes: 5"}});
  ExpectError("name: x\ncluster:\n  nodes: \"3\"\n",
              {.message_has = {"got the quoted text \"3\""}});
  ExpectError("name: x\ncluster: {nodes: 2.5}\n",
              {.message_has = {"expected an integer"}});
  ExpectError("name: x\ntarget:\n  pre_vote: yes\n",
              {.line = 3,
               .column = 13,
               .message = "target.pre_vote: expected true or false, got `yes`",
               .hint = "write `pre_vote: true`"});
  ExpectError("name: x\nnemesis: partition\n",
              {.line = 2, .column = 10, .message_has = {"expected a mapping"}});
  ExpectError("name: x\nnemesis:\n  faults: kill\n",
              {.message_has = {"expected a list of fault names"},
               .hint_has = {"faults: [partition]"}});
  ExpectError("name: x\ntime_limit: soon\n",
              {.column = 13, .message_has = {"expected a duration"}});
}

TEST_CASE("an empty value points at its key", "[config]") {
  ExpectError("name: x\ncluster:\n  nodes:\n  subnet: 10.0.0.0/24\n",
              {.line = 3,
               .column = 3,
               .message = "cluster.nodes: expected an integer, got no value"});
}

TEST_CASE("out-of-range numbers", "[config]") {
  ExpectError("name: x\ncluster: {nodes: 12}\n",
              {.line = 2,
               .column = 18,
               .message = "cluster.nodes: 12 is out of range; expected an "
                          "integer from 1 to 9"});
  ExpectError("name: x\ntime_limit: 0\n",
              {.message_has = {"expected a value > 0 s and <= 86400 s"}});
  ExpectError("name: x\nworkload: {rate: -1}\n",
              {.message_has = {"workload.rate: -1 is out of range"}});
  ExpectError("name: x\nworkload:\n  concurrency: 1001\n", {.line = 3});
  ExpectError("name: x\nseed: -3\n",
              {.message_has = {"seed: -3 is out of range"}});
  ExpectError("name: x\nworkload:\n  op_timeout_ms: 0\n",
              {.message_has = {"expected whole milliseconds from 1"}});
}

TEST_CASE("duplicate keys", "[config]") {
  ExpectError(
      "name: x\ncluster:\n  nodes: 3\n  subnet: 10.1.0.0/24\n  nodes: 5\n",
      {.line = 5,
       .column = 3,
       .message = "duplicate key `nodes` (first set at line 3)"});
}

TEST_CASE("unknown names get a did-you-mean", "[config]") {
  ExpectError("name: x\nnemesis:\n  faults: [pause, partiton]\n",
              {.line = 3,
               .column = 19,
               .message_has = {"unknown fault \"partiton\"; expected one of: "
                               "partition, pause, kill"},
               .hint = "did you mean \"partition\"?"});
  ExpectError("name: x\nnemesis:\n  partitions: [majority-ring]\n",
              {.hint = "did you mean \"majorities-ring\"?"});
  ExpectError("name: x\ntarget: {name: Etcd}\n",
              {.hint = "did you mean \"etcd\"?"});
  ExpectError("name: x\nnemesis:\n  faults: [kill, kill]\n",
              {.column = 18, .message_has = {"listed twice"}});
  ExpectError("name: x\nexpect: vald\n", {.hint = "did you mean \"valid\"?"});
}

TEST_CASE("name is required and checked", "[config]") {
  ExpectError("cluster: {nodes: 3}\n",
              {.line = 1, .message = "missing required key `name`"});
  ExpectError("name: Etcd Register!\n",
              {.column = 7, .hint = "e.g. `name: etcd-register`"});
  ExpectError("# nothing\n", {.line = 0, .message_has = {"empty"}});
  ExpectError("name: a\n---\nname: b\n",
              {.line = 3, .message_has = {"more than one YAML document"}});

  // yaml-cpp 0.7's LoadAll never returns on this input; the loader must.
  ExpectError(
      ", x\n",
      {.line = 1, .column = 1, .message = "invalid YAML: unexpected `,`"});
  ExpectError("name: a\n---\n, x\n", {.line = 3});

  ExpectError("- name: a\n", {.message_has = {"expected a mapping"}});
}

TEST_CASE("partition shapes must fit the cluster", "[config]") {
  ExpectError(
      "name: x\ncluster:\n  nodes: 1\nnemesis:\n  faults: [partition]\n",
      {.line = 3,
       .column = 10,
       .message =
           "a partition needs at least 2 nodes, but cluster.nodes is 1"});

  // Explicit shapes: each misfit entry is named at its own position.
  LoadResult two = Load(
      "name: x\ncluster:\n  nodes: 2\nnemesis:\n"
      "  faults: [partition]\n"
      "  partitions: [one, bridge, majorities-ring]\n");
  REQUIRE(two.errors.size() == 2);
  CHECK(two.errors[0].line == 6);
  CHECK(two.errors[0].column == 21);
  CHECK(Contains(two.errors[0].message,
                 "partition shape \"bridge\" needs at least 3 nodes, but "
                 "cluster.nodes is 2"));
  CHECK(Contains(two.errors[0].hint, "one, leader, halves"));
  CHECK(two.errors[1].column == 29);

  // Default shapes: one error, on the node count.
  ExpectError(
      "name: x\ncluster:\n  nodes: 2\nnemesis:\n  faults: [partition]\n",
      {.line = 3,
       .message_has = {"majorities-ring, bridge, which need at least 3 "
                       "nodes"}});
  ExpectError("name: x\nnemesis:\n  faults: [partition]\n  partitions: []\n",
              {.line = 4,
               .column = 15,
               .message_has = {"nemesis.partitions is empty"}});

  // Shapes are irrelevant without partition faults.
  CheckLoads(
      "name: x\ncluster: {nodes: 1}\nnemesis:\n  faults: [kill]\n"
      "  targets: [one]\n  partitions: []\n");
}

TEST_CASE("node selectors must fit the cluster", "[config]") {
  ExpectError(
      "name: x\ncluster: {nodes: 1}\nnemesis:\n  faults: [pause]\n"
      "  targets: [one, majority]\n",
      {.line = 5,
       .column = 18,
       .message_has = {"node selector \"majority\" needs at least 3"}});
  ExpectError("name: x\nnemesis:\n  faults: [kill]\n  targets: []\n",
              {.message_has = {"nemesis.targets is empty"}});
}

TEST_CASE("subnet rules", "[config]") {
  ExpectError("name: x\ncluster:\n  nodes: 6\n  subnet: 10.9.0.0/29\n",
              {.line = 4,
               .column = 11,
               .message_has = {"has 6 usable addresses, too few for 6 nodes "
                               "plus the controller"},
               .hint_has = {"subnet: 10.9.0.0/28"}});
  CheckLoads("name: x\ncluster: {nodes: 5, subnet: 10.9.0.0/29}\n");

  ExpectError("name: x\ncluster:\n  subnet: 10.9.0.5/24\n",
              {.hint = "did you mean 10.9.0.0/24?"});
  ExpectError("name: x\ncluster:\n  subnet: 8.8.8.0/24\n",
              {.message_has = {"not a private network"}});
  ExpectError("name: x\ncluster:\n  subnet: 10.0.0.0/8\n",
              {.message_has = {"expected /16 to /29"}});
  ExpectError("name: x\ncluster:\n  subnet: 10.0.0/24\n",
              {.message_has = {"expected an IPv4 network"}});
  CheckLoads("name: x\ncluster: {subnet: 172.31.0.0/16}\n");
  CHECK_FALSE(Load("name: x\ncluster: {subnet: 172.32.0.0/16}\n").ok());
}

TEST_CASE("etcd timing rule and reserved flags", "[config]") {
  ExpectError(
      "name: x\ntarget:\n  heartbeat_ms: 100\n  election_timeout_ms: 300\n",
      {.line = 4,
       .column = 24,
       .message_has = {"must be at least 5 x target.heartbeat_ms (100) = "
                       "500"}});
  ExpectError("name: x\ntarget:\n  extra_args: [--foo, --name=n9]\n",
              {.column = 23, .message_has = {"--name is set by faultline"}});
}

TEST_CASE("mix weights and fault timing", "[config]") {
  ExpectError("name: x\nworkload:\n  mix: {read: 0, write: 0, cas: 0}\n",
              {.line = 3, .message_has = {"every weight is 0"}});
  ExpectError("name: x\ntime_limit: 30\nnemesis:\n  interval: 30s\n",
              {.line = 4, .message_has = {"no fault would ever start"}});
  CheckLoads(
      "name: x\ntime_limit: 30\nnemesis:\n  interval: 30\n  faults: []\n");
}

TEST_CASE("all independent mistakes are reported", "[config]") {
  LoadResult r = LoadConfigFile(
      SourceDir() + "/harness/config/testdata/config/many-errors.yaml");
  INFO(r.FormatErrors());
  REQUIRE(r.errors.size() == 3 + 1);
  CHECK(r.errors[0].line == 5);   // nodse
  CHECK(r.errors[1].line == 6);   // public subnet
  CHECK(r.errors[2].line == 8);   // concurrency: lots
  CHECK(r.errors[3].line == 10);  // partiton
  CHECK(r.errors[3].column == 12);
  CHECK(Contains(r.FormatErrors(), "many-errors.yaml:10:12: error: "));
}

TEST_CASE("overrides apply before validation and name their flag", "[config]") {
  const std::string text =
      "name: x\ncluster: {nodes: 3}\n"
      "nemesis:\n  faults: [partition]\n"
      "  partitions: [halves, bridge]\n";
  Overrides o;
  o.nodes = 5;
  o.time_limit_s = 12.5;
  o.seed = 7;
  o.concurrency = 3;
  o.store_dir = "/tmp/elsewhere";
  LoadResult ok = MustLoad(text, o);
  CHECK(ok.spec->cluster.nodes == 5);
  CHECK(ok.spec->time_limit_s == 12.5);
  CHECK(ok.spec->seed == 7);
  CHECK(ok.spec->seed_given);
  CHECK(ok.spec->workload.concurrency == 3);
  CHECK(ok.spec->store_dir == "/tmp/elsewhere");

  Overrides two;
  two.nodes = 2;
  ConfigError e =
      ExpectError(text,
                  {.line = 0,
                   .message_has = {"--nodes 2: nemesis.partitions has bridge, "
                                   "which needs at least 3 nodes"}},
                  two);
  CHECK(Contains(e.Format(), "t.yaml: error: --nodes 2: "));

  Overrides range;
  range.nodes = 10;
  ExpectError("name: x\n",
              {.message = "--nodes 10: cluster.nodes must be from 1 to 9"},
              range);

  Overrides short_run;
  short_run.time_limit_s = 5;
  ExpectError("name: x\nnemesis: {interval: 8}\n",
              {.message_has = {"--time-limit 5: nemesis.interval (8 s)"}},
              short_run);

  Overrides bad_tl;
  bad_tl.time_limit_s = -1;
  ExpectError("name: x\n", {.message_has = {"--time-limit -1:"}}, bad_tl);
}

TEST_CASE("DescribeSpec loads back to the same spec", "[config]") {
  LoadResult r = MustLoad(R"(name: round-trip
description: "quotes \" backslash \\ newline\n tab\t and unicode é"
time_limit: 0.1
recovery: 1e-3
store: "st: ore # not a comment"
expect: valid
cluster: {nodes: 4, subnet: 10.3.0.0/28}
target:
  extra_args: ["--a=b c", "x\"y"]
  binary: "true"
workload: {mix: {read: 0.3, write: 1e-7, cas: 0}}
nemesis: {faults: [], interval: 0, partitions: [], targets: [all]}
)");
  TestSpec original = *r.spec;
  CHECK_FALSE(original.seed_given);
  LoadResult back = MustLoadDescribed(original);
  TestSpec expected = original;
  expected.seed_given = true;  // the drawn seed is now written down
  expected.source_file = "described";
  CHECK(*back.spec == expected);
  // And the describer is a fixed point.
  CHECK(DescribeSpec(*back.spec) == DescribeSpec(expected));
}

TEST_CASE("every shipped config loads, and round-trips", "[config]") {
  int count = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(SourceDir() + "/configs")) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    INFO(entry.path().string());
    LoadResult r = LoadConfigFile(entry.path().string());
    INFO(r.FormatErrors());
    REQUIRE(r.ok());
    CheckRoundTrip(*r.spec);
  }
  CHECK(count >= 3);

  Result<TestSpec> demo =
      LoadConfig(SourceDir() + "/configs/etcd-register.yaml");
  REQUIRE(demo.ok());
  CHECK(demo->cluster.nodes == 5);
  CHECK(demo->target.etcd.pre_vote);
  CHECK(demo->time_limit_s == 60);

  Result<TestSpec> stale = LoadConfig(
      SourceDir() + "/configs/known/etcd-serializable-stale-read.yaml");
  REQUIRE(stale.ok());
  CHECK(stale->target.etcd.serializable_reads);
  CHECK(stale->expect == std::optional<std::string>("invalid"));
  CHECK(stale->nemesis.partitions == std::vector<std::string>{"leader"});

  Result<TestSpec> quick = LoadConfig(SourceDir() + "/configs/etcd-quick.yaml");
  REQUIRE(quick.ok());
  CHECK(quick->cluster.nodes == 3);
  CHECK(quick->time_limit_s == 20);
  CHECK(quick->nemesis.faults == std::vector<std::string>{"partition"});
}

TEST_CASE("missing file is an error value", "[config]") {
  LoadResult r = LoadConfigFile("/nonexistent/faultline.yaml");
  REQUIRE(r.errors.size() == 1);
  CHECK(Contains(r.errors[0].Format(),
                 "/nonexistent/faultline.yaml: error: cannot read the "
                 "config: No such file or directory"));
  Result<TestSpec> res = LoadConfig("/nonexistent/faultline.yaml");
  CHECK_FALSE(res.ok());
}

TEST_CASE("known names and helpers", "[config]") {
  CHECK(DidYouMean("nodse", {"nodes", "subnet"}) == "nodes");
  CHECK(DidYouMean("qqqqqq", {"nodes", "subnet"}).empty());
  CHECK(DidYouMean("kil", {"kill", "pause"}) == "kill");
  CHECK(MinNodesForShape("bridge") == 3);
  CHECK(MinNodesForShape("one") == 2);
  CHECK(MinNodesForShape("nope") == 0);
  CHECK(MinNodesForSelector("minority") == 3);
  CHECK(MinNodesForSelector("all") == 1);
  const std::string listing = FormatKnownNames();
  for (const auto* group :
       {&Known().targets, &Known().workloads, &Known().faults,
        &Known().partition_shapes, &Known().node_selectors}) {
    for (const auto& k : *group) {
      INFO(k.name);
      CHECK(Contains(listing, "  " + k.name + " "));
    }
  }
  CHECK(Known().partition_shapes.size() == 8);  // 5 + 3 one-way shapes
  CHECK(Known().node_selectors.size() == 6);
}

TEST_CASE("hints speak in flags when a flag caused the error", "[config]") {
  Overrides o;
  o.nodes = 1;
  ExpectError(
      "name: x\nnemesis: {faults: [partition]}\n",
      {.message = "--nodes 1: a partition needs at least 2 nodes, but "
                  "cluster.nodes is 1",
       .hint =
           "remove partition from nemesis.faults, or pass --nodes 2 or more"},
      o);

  Overrides t;
  t.time_limit_s = 3;
  ExpectError("name: x\nnemesis: {interval: 3}\n",
              {.hint_has = {"pass a --time-limit longer than"}}, t);

  // The same rule, from the file alone, points at the file and its keys.
  ExpectError("name: x\ncluster: {nodes: 1}\nnemesis: {faults: [partition]}\n",
              {.line = 2, .hint_has = {"set cluster.nodes to 2 or more"}});
}
