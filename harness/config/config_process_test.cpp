// Unit tests of `target: process` in the config (config_parse_process.cpp,
// CheckProcess in config_validate.cpp) and of its template language
// (template.h).
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"
#include "harness/config/template.h"

using namespace faultline::harness;
using namespace faultline::harness::config_testing;

namespace {

// A minimal process config; `processes` and `extra` are spliced in.
std::string Config(const std::string& processes, const std::string& extra = "",
                   const std::string& nemesis = "nemesis: {faults: []}\n") {
  return "name: p\ncluster: {nodes: 3}\ntarget:\n  name: process\n"
         "  ports: {client: 7000, peer: 7001}\n"
         "  client: {protocol: exec, command: [my-client, \"{ip}\"]}\n" +
         extra + "  processes:\n" + processes + nemesis;
}

const char kServer[] =
    "    - name: server\n"
    "      argv: [my-server, --listen, \"{ip}:{port:client}\", --peers, "
    "\"{peers:peer}\"]\n"
    "      ready: {tcp: client}\n";

}  // namespace

TEST_CASE("process: keys are read, defaults filled in, described",
          "[config][process]") {
  LoadResult r = MustLoad(
      Config(std::string(kServer) +
                 "    - name: sidecar\n      argv: [my-sidecar, \"{data}\"]\n"
                 "      stop_signal: INT\n      stop_grace: 2s\n",
             "  lists: {raft: {each: \"{id}={ip}:{port:peer}\"}}\n"
             "  files: [{path: \"{dir}/node.conf\", content: \"id {id}\\n\"}]\n"
             "  setup: [[my-server, --init, \"{data}\"]]\n"
             "  start: sequential\n"
             "  status: {command: [my-status, \"{ip}\"], timeout: 2s}\n"));
  const ProcessSpec& p = r.spec->target.process;
  REQUIRE(p.processes.size() == 2);
  CHECK(p.processes[0].faults ==
        std::vector<std::string>{"pause", "kill", "clock"});
  CHECK(p.processes[1].faults.empty());  // sidecars take no fault by default
  CHECK(p.processes[1].stop_signal == "INT");
  CHECK(p.processes[1].stop_grace_ms == 2000);
  CHECK(p.ports.size() == 2);
  CHECK(p.lists.size() == 1);
  CHECK(p.start == "sequential");
  CHECK(p.status_timeout_ms == 2000);
  CheckRoundTrip(*r.spec);
}

TEST_CASE("process: templates and ports are checked at their place",
          "[config][process]") {
  // An unknown placeholder: the column points at it (6 = after `argv: [`
  // ... here the element's own column plus its offset).
  const ConfigError e = ExpectError(
      Config("    - argv: [my-server, --data, \"{datadir}\"]\n"),
      {.line = 8, .message_has = {"placeholder {datadir} is unknown"}});
  CHECK(e.column > 20);
  ExpectError(Config("    - argv: [my-server, \"{port:metrics}\"]\n"),
              {.line = 8, .message_has = {"port `metrics` is not declared"}});
  ExpectError(Config("    - argv: [my-server, \"{list:raft}\"]\n"),
              {.message_has = {"list `raft` is not declared"}});
  ExpectError(Config("    - argv: [my-server, \"{ip\"]\n"),
              {.message_has = {"unclosed `{`"}});
  // A ready port the node does not have can never succeed.
  ExpectError(Config("    - argv: [my-server]\n      ready: {tcp: 9999}\n"),
              {.message_has = {"port `9999` is not one of target.ports"}});
  // {{ and }} are literal braces.
  CheckLoads(Config("    - argv: [my-server, \"{{\\\"json\\\": 1}}\"]\n"));
  // A list's per-peer template cannot nest lists.
  ExpectError(Config(kServer, "  lists: {l: {each: \"{peers:peer}\"}}\n"),
              {.message_has = {"cannot be used here"}});
}

TEST_CASE("process: what the faults and selectors need", "[config][process]") {
  // pause, but no process takes it.
  ExpectError(Config("    - argv: [my-server]\n      faults: [kill]\n", "",
                     "nemesis: {faults: [pause], targets: [one]}\n"),
              {.message_has = {"nemesis.faults has pause", "no process"}});
  // The leader selector needs a status command.
  ExpectError(
      Config(kServer, "", "nemesis: {faults: [kill], targets: [leader]}\n"),
      {.message_has = {"leader or follower selector",
                       "target.status has no command"}});
  CheckLoads(Config(kServer, "  status: {command: [st]}\n",
                    "nemesis: {faults: [kill], targets: [leader]}\n"));
  // Or the exec client answers who leads.
  LoadResult asked =
      MustLoad(Config(kServer, "  status: {client: true, timeout: 300ms}\n",
                      "nemesis: {faults: [kill], targets: [leader]}\n"));
  const ProcessSpec& ap = asked.spec->target.process;
  CHECK(ap.status_client);
  CHECK(ap.has_status());
  CHECK(ap.status_timeout_ms == 300);
  CHECK(Contains(DescribeSpec(*asked.spec), "status: {client: true"));
  CheckRoundTrip(*asked.spec);
  ExpectError(Config(kServer, "  status: {client: true, command: [st]}\n"),
              {.message_has = {"both a command and client: true"}});
  ExpectError(
      "name: p\ncluster: {nodes: 3}\ntarget:\n  name: process\n"
      "  ports: {client: 7000, peer: 7001}\n"
      "  client: {protocol: resp, port: client}\n"
      "  status: {client: true}\n  processes:\n" +
          std::string(kServer) + "nemesis: {faults: []}\n",
      {.line = 7,
       .message_has = {"only protocol exec can answer", "speaks resp"}});
  // No processes, no client.
  ExpectError(
      "name: p\ntarget: {name: process, client: {protocol: exec, "
      "command: [c]}}\nnemesis: {faults: []}\n",
      {.message_has = {"needs `processes`"}});
  ExpectError(
      "name: p\ntarget: {name: process, processes: [{argv: [s]}]}\n"
      "nemesis: {faults: []}\n",
      {.message_has = {"needs `client`"}});
  // A key of another target.
  ExpectError(Config(kServer, "  read_mode: lease\n"),
              {.message_has = {"`read_mode` is a key of the raftkv target"}});
}

TEST_CASE("templates expand per node", "[config][process][template]") {
  TemplateContext ctx;
  ctx.nodes = {{"n1", "10.0.0.1"}, {"n2", "10.0.0.2"}, {"n3", "10.0.0.3"}};
  ctx.self = 1;
  ctx.ports = {{"client", 6379}, {"peer", 7001}};
  ctx.lists = {{"raft", "{id}={ip}:{port:peer}/{port:client}", ",", false},
               {"others", "{name}", ";", true}};
  ctx.dir = "/w/n2";
  ctx.data = "/w/n2/data";
  CHECK(ExpandTemplate("{name} {id} {index} {ip} {n}", ctx) ==
        "n2 2 1 10.0.0.2 3");
  CHECK(ExpandTemplate("{ip}:{port:client} {data}", ctx) ==
        "10.0.0.2:6379 /w/n2/data");
  CHECK(ExpandTemplate("{peers:peer}", ctx) ==
        "10.0.0.1:7001,10.0.0.2:7001,10.0.0.3:7001");
  CHECK(ExpandTemplate("{peer_names:peer}", ctx) ==
        "n1=10.0.0.1:7001,n2=10.0.0.2:7001,n3=10.0.0.3:7001");
  CHECK(ExpandTemplate("{peer_urls:peer}", ctx)
            .starts_with("n1=http://10.0.0.1:7001,"));
  CHECK(ExpandTemplate("gcomm://{peer_ips}", ctx) ==
        "gcomm://10.0.0.1,10.0.0.2,10.0.0.3");
  CHECK(ExpandTemplate("{list:raft}", ctx) ==
        "1=10.0.0.1:7001/6379,2=10.0.0.2:7001/6379,3=10.0.0.3:7001/6379");
  CHECK(ExpandTemplate("{list:others}", ctx) == "n1;n3");
  CHECK(ExpandTemplate("{{literal}} {{", ctx) == "{literal} {");
  TemplateNames names;
  names.ports = {"client"};
  CHECK_FALSE(CheckTemplate("{ip}:{port:client}", names));
  auto e = CheckTemplate("abc {nope}", names);
  REQUIRE(e);
  CHECK(e->offset == 4);
}

TEST_CASE("process: an empty argument is kept, an empty program is not",
          "[config][process]") {
  LoadResult r =
      MustLoad(Config("    - argv: [redis-server, --save, \"\", --port, "
                      "\"{port:client}\"]\n"));
  CHECK(r.spec->target.process.processes[0].argv[2].empty());
  const ConfigError e =
      ExpectError(Config("    - argv: [\"\", x]\n"),
                  {.message_has = {"must start with a program"}});
  CHECK_THAT(e.message, Catch::Matchers::Contains("target.processes[0].argv"));
}
