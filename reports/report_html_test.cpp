#include "reports/report_html.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "checkers/history_io.h"
#include "checkers/linearizable.h"
#include "checkers/stats.h"

using faultline::checkers::Event;
using faultline::checkers::EventType;
using faultline::checkers::History;
using faultline::checkers::Validity;
using faultline::checkers::Value;
using faultline::checkers::Verdict;
using faultline::reports::HtmlEscape;
using faultline::reports::ReportDataJson;
using faultline::reports::ReportHtml;
using faultline::reports::ReportLinks;
using faultline::reports::RunSummary;
using faultline::reports::ScriptSafeJson;
using nlohmann::json;

namespace {

const std::string kPayload = "</script><script>alert(1)</script>";

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

History StaleRead() {
  auto read = faultline::checkers::ParseJsonl(
      ReadText(std::string(REPORTS_TESTDATA) + "/stale_read.jsonl"));
  REQUIRE(read.ok);
  return read.history;
}

RunSummary Summary(const History& h) {
  RunSummary s;
  s.name = "etcd-register";
  s.run_dir = "/store/etcd-register/T";
  s.started_at = "2026-11-30T05:00:00Z";
  s.seed = 3;
  s.cluster_provider = "netns";
  s.nodes = 3;
  s.target = "etcd";
  s.target_version = "etcd 3.4.23";
  s.config_yaml = "name: etcd-register\n";
  faultline::checkers::LinearizableOptions lin;
  s.verdicts = {faultline::checkers::CheckLinearizable(h, lin),
                faultline::checkers::StatsVerdict(h)};
  return s;
}

Event Ev(std::int64_t index, std::int64_t process, EventType type,
         std::string f, Value key, Value value, std::int64_t time_ns) {
  Event e;
  e.index = index;
  e.process = process;
  e.type = type;
  e.f = std::move(f);
  e.key = std::move(key);
  e.value = std::move(value);
  e.time = time_ns;
  return e;
}

// A register-like history of `ops` operations by `concurrency` workers;
// every 50th op is an info (the worker continues as a fresh process).
History Big(int ops, int concurrency) {
  History h;
  std::vector<std::int64_t> proc(concurrency);
  for (int w = 0; w < concurrency; ++w) proc[w] = w;
  std::int64_t next_proc = concurrency;
  std::int64_t t = 0;
  for (int i = 0; i < ops; i += concurrency) {
    for (int w = 0; w < concurrency && i + w < ops; ++w) {
      int n = i + w;
      Value key = Value::String("k" + std::to_string(n % 5));
      bool write = n % 3 == 0;
      h.push_back(Ev(static_cast<std::int64_t>(h.size()), proc[w],
                     EventType::kInvoke, write ? "write" : "read", key,
                     write ? Value::Int(n) : Value::Null(), t += 1000));
    }
    for (int w = 0; w < concurrency && i + w < ops; ++w) {
      int n = i + w;
      Value key = Value::String("k" + std::to_string(n % 5));
      bool write = n % 3 == 0;
      EventType type = n % 50 == 49  ? EventType::kInfo
                       : n % 17 == 0 ? EventType::kFail
                                     : EventType::kOk;
      h.push_back(Ev(static_cast<std::int64_t>(h.size()), proc[w], type,
                     write ? "write" : "read", key,
                     write ? Value::Int(n) : Value::Int(n - 1), t += 1500));
      if (type == EventType::kInfo) proc[w] = next_proc++;
    }
  }
  return h;
}

std::size_t Count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = hay.find(needle); p != std::string::npos;
       p = hay.find(needle, p + 1)) {
    ++n;
  }
  return n;
}

// The JSON inside <script type="application/json" id="faultline-data">.
json DataBlock(const std::string& html) {
  const std::string open =
      "<script type=\"application/json\" id=\"faultline-data\">";
  auto a = html.find(open);
  REQUIRE(a != std::string::npos);
  a += open.size();
  auto b = html.find("</script>", a);
  REQUIRE(b != std::string::npos);
  return json::parse(html.substr(a, b - a));
}

}  // namespace

TEST_CASE("report: HtmlEscape escapes markup and replaces invalid UTF-8") {
  CHECK(HtmlEscape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(HtmlEscape(kPayload) ==
        "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(HtmlEscape("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(HtmlEscape("x\xFFy") == "x\xEF\xBF\xBDy");
  CHECK(HtmlEscape("\xC3") == "\xEF\xBF\xBD");  // truncated sequence
  CHECK(HtmlEscape("a\x01z") == "a\xEF\xBF\xBDz");
}

TEST_CASE("report: ScriptSafeJson leaves no markup and stays JSON") {
  std::string in = json{{"v", kPayload + " & \xE2\x80\xA8"}}.dump();
  std::string out = ScriptSafeJson(in);
  CHECK(out.find('<') == std::string::npos);
  CHECK(out.find('>') == std::string::npos);
  CHECK(out.find('&') == std::string::npos);
  CHECK(out.find("\xE2\x80\xA8") == std::string::npos);
  CHECK(json::parse(out)["v"] == kPayload + " & \xE2\x80\xA8");
}

TEST_CASE("report: injected strings stay text everywhere") {
  History h = StaleRead();
  // The payload as a value read, a key, a node and an error.
  h[7].value = Value::String(kPayload);
  h[8].key = Value::String(kPayload);
  h[10].error = kPayload;
  h[6].node = kPayload;
  RunSummary s = Summary(h);
  s.name = kPayload;
  s.config_yaml = "name: " + kPayload + "\n";
  s.problems = {kPayload};
  s.target_version = kPayload;
  s.verdicts[0].explanation += "\n" + kPayload;
  s.verdicts[0].summary = kPayload;
  ReportLinks links;
  links.node_logs = {"nodes/n1/" + kPayload + ".log"};
  std::string html = ReportHtml(s, h, links);
  // Exactly our two script elements: the data block and the script.
  CHECK(Count(html, "<script") == 2);
  CHECK(Count(html, "</script>") == 2);
  CHECK(html.find("alert(1)</script>") == std::string::npos);
  CHECK(html.find("&lt;/script&gt;&lt;script&gt;alert(1)") !=
        std::string::npos);
  // The data block round-trips the payload exactly.
  json d = DataBlock(html);
  bool found = false;
  for (const auto& desc : d["ops"]["d"]) {
    if (desc.get<std::string>().find(kPayload) != std::string::npos) {
      found = true;
    }
  }
  CHECK(found);
  // Links are percent-encoded, never raw markup.
  CHECK(html.find("href=\"nodes/n1/%3C/script%3E%3Cscript%3E") !=
        std::string::npos);
}

TEST_CASE("report: faultline's version and an interrupt are shown") {
  History h = StaleRead();
  RunSummary s = Summary(h);
  s.faultline_version = "0.1.0";
  s.faultline_commit = "0123456789ab";
  std::string html = ReportHtml(s, h, ReportLinks{});
  CHECK(html.find("<tr><th>faultline</th><td>0.1.0 (commit "
                  "0123456789ab)</td></tr>") != std::string::npos);
  CHECK(html.find("id=\"interrupted\"") == std::string::npos);
  s.aborted = true;
  s.interruption.signal = "SIGINT";
  s.interruption.at = "2026-11-30T05:00:09.000Z";
  html = ReportHtml(s, h, ReportLinks{});
  // In the header, before the checkers, and in the run's facts.
  auto badge = html.find(
      "<span id=\"interrupted\" class=\"expect unmet\">"
      "interrupted by SIGINT</span>");
  REQUIRE(badge != std::string::npos);
  CHECK(badge < html.find("id=\"checkers\""));
  CHECK(html.find("<p class=\"interrupted\">interrupted by SIGINT at "
                  "2026-11-30T05:00:09.000Z: the verdict covers only") !=
        std::string::npos);
  CHECK(html.find("<tr><th>interrupted</th>") != std::string::npos);
}

TEST_CASE("report: structure, verdict first, violation located") {
  History h = StaleRead();
  RunSummary s = Summary(h);
  REQUIRE(s.verdicts[0].validity == Validity::kInvalid);
  ReportLinks links;
  links.node_logs = {"nodes/n1/etcd.log"};
  links.ledger.clear();
  std::string html = ReportHtml(s, h, links);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  auto verdict = html.find("id=\"verdict\" class=\"verdict invalid\">invalid<");
  auto timeline = html.find("id=\"timeline\"");
  REQUIRE(verdict != std::string::npos);
  REQUIRE(timeline != std::string::npos);
  CHECK(verdict < timeline);
  CHECK(html.find("default-src 'none'") != std::string::npos);
  for (const char* id : {"id=\"checkers\"", "id=\"violation\"",
                         "id=\"latency\"", "id=\"throughput\"", "id=\"run\""}) {
    CHECK(html.find(id) != std::string::npos);
  }
  CHECK(html.find("href=\"history.jsonl\"") != std::string::npos);
  CHECK(html.find("href=\"nodes/n1/etcd.log\"") != std::string::npos);
  CHECK(html.find("ledger.jsonl") == std::string::npos);  // not linked
  // No URL to anywhere: the only "http" is the SVG namespace name.
  std::string stripped = std::regex_replace(
      html, std::regex("http://www\\.w3\\.org/2000/svg"), "");
  CHECK(stripped.find("http://") == std::string::npos);
  CHECK(stripped.find("https://") == std::string::npos);

  json d = DataBlock(html);
  CHECK(d["unit"] == "us");
  CHECK(d["end"] == 72000);
  CHECK(d["lanes"].size() == 4);  // p0..p3
  CHECK(d["ops"]["s"].size() == 6);
  CHECK(d["faults"].size() == 1);
  CHECK(d["faults"][0]["f"] == "partition");
  CHECK(d["faults"][0]["s"] == 14000);
  CHECK(d["faults"][0]["e"] == 61000);
  // The info write is never-completed-looking only if it had no completion:
  // here it completed as info (type 2).
  const json& v = d["violation"];
  REQUIRE(v.is_object());
  CHECK(v["key"] == "\"k0\"");
  bool stale = false;
  for (const auto& op : v["ops"]) {
    if (op["role"] == "rejected") {
      CHECK(op["process"] == 2);
      CHECK(op["s"] == 40000);  // times looked up from the history
      CHECK(op["e"] == 44000);
      CHECK(op["d"].get<std::string>().find("read") != std::string::npos);
      stale = true;
    }
  }
  CHECK(stale);
  // The context: the kind, the sentence, the node of each op, the ops the
  // sentence names, and the partition in force with its window.
  CHECK(v["kind"] == "stale-read");
  CHECK(v["at"] == 44000);
  CHECK(v["sentence"].get<std::string>().rfind(
            "n1, cut off from the majority since 0.01 s, served 1 at 0.04 s; "
            "2 had been acknowledged by n2 at 0.03 s.",
            0) == 0);
  std::map<std::string, json> parts;
  for (const auto& op : v["ops"]) {
    if (op.contains("part")) parts[op["part"].get<std::string>()] = op;
  }
  REQUIRE(parts.count("read") == 1);
  CHECK(parts["read"]["node"] == "n1");
  CHECK(parts["read"]["faults"] == json::array({0}));
  REQUIRE(parts.count("written_by") == 1);
  CHECK(parts["written_by"]["node"] == "n1");
  CHECK(parts["written_by"]["s"] == 1000);
  REQUIRE(parts.count("latest_write") == 1);
  CHECK(parts["latest_write"]["node"] == "n2");
  CHECK(parts["latest_write"]["e"] == 31000);
  REQUIRE(parts.count("later_read") == 1);  // not in the checker's window
  CHECK(parts["later_read"]["role"] == "context");
  CHECK(parts["later_read"]["s"] == 70000);
  REQUIRE(v["faults"].size() == 1);
  CHECK(v["faults"][0]["kind"] == "partition");
  CHECK(v["faults"][0]["s"] == 14000);
  CHECK(v["faults"][0]["e"] == 61000);
  CHECK(v["faults"][0]["open"] == false);
  CHECK(v["faults"][0]["effect"].get<std::string>().find(
            "n1 cut off from the majority") != std::string::npos);
  // The panel's script draws them: the fault band and the node per op.
  CHECK(html.find("'fault vfault'") != std::string::npos);
  CHECK(html.find("o.node + ': '") != std::string::npos);
}

TEST_CASE(
    "report: a valid run has no violation and a history without "
    "times is drawn by event index") {
  History h = StaleRead();
  for (auto& e : h) e.time.reset();
  h[7].value = Value::Int(2);  // the read now sees the latest write
  RunSummary s = Summary(h);
  REQUIRE(s.verdicts[0].validity == Validity::kValid);
  json d = json::parse(ReportDataJson(s, h));
  CHECK(d["violation"].is_null());
  CHECK(d["unit"] == "index");
  CHECK(d["end"] == 15);
  CHECK(d["verdict"] == "valid");
}

TEST_CASE("report: a never-completed invoke is drawn to the end") {
  History h = StaleRead();
  h.pop_back();  // p1's last read never completes
  RunSummary s = Summary(h);
  json d = json::parse(ReportDataJson(s, h));
  const json& ops = d["ops"];
  std::size_t last = ops["s"].size() - 1;
  CHECK(ops["t"][last] == 3);
  CHECK(ops["e"][last] == 70000);  // the end of the history
  CHECK(ops["d"][last].get<std::string>().find("never completed") !=
        std::string::npos);
}

TEST_CASE("report: 100,000 ops stay compact and processes share lanes") {
  History h = Big(100000, 10);
  RunSummary s;
  s.name = "big";
  s.verdicts = {faultline::checkers::StatsVerdict(h)};
  auto t0 = std::chrono::steady_clock::now();
  std::string html = ReportHtml(s, h, ReportLinks{});
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  WARN("100k-op report: " << html.size() << " bytes in " << secs << " s");
  CHECK(html.size() < 100000 * 80);  // < 80 bytes per op
  json d = DataBlock(html);
  CHECK(d["ops"]["s"].size() == 100000);
  // 2000 infos made 2000 fresh processes; lifetimes that do not overlap
  // share a lane, so the lanes stay about the concurrency.
  CHECK(d["lanes"].size() <= 12);
  CHECK(d["lanes"].size() >= 10);
}

TEST_CASE("report: lock runs get holders per node with overlaps") {
  using E = EventType;
  const Value lock = Value::String("L");
  History h;
  auto add = [&](std::int64_t p, E t, const char* f, Value v, int ms,
                 const char* node) {
    Event e = Ev(static_cast<std::int64_t>(h.size()), p, t, f, lock,
                 std::move(v), ms * 1000000LL);
    e.node = node;
    h.push_back(std::move(e));
  };
  add(0, E::kInvoke, "acquire", Value(), 1, "n1");
  add(0, E::kOk, "acquire", Value::Int(1), 2, "n1");
  add(1, E::kInvoke, "acquire", Value(), 3, "n2");
  add(1, E::kOk, "acquire", Value::Int(2), 4, "n2");
  add(0, E::kInvoke, "release", Value(), 6, "n1");
  add(0, E::kOk, "release", Value(), 7, "n1");
  RunSummary s;
  s.name = "lock";
  json d = json::parse(ReportDataJson(s, h));
  const json& holds = d["holds"];
  REQUIRE(holds.is_object());
  CHECK(holds["rows"] == json::array({"n1", "n2"}));
  CHECK(holds["locks"] == json::array({"\"L\""}));
  REQUIRE(holds["items"].size() == 2);
  CHECK(holds["items"][0]["s"] == 2000);
  CHECK(holds["items"][0]["e"] == 6000);
  CHECK(holds["items"][1]["token"] == 2);
  CHECK(holds["items"][1]["open"] == true);
  REQUIRE(holds["overlaps"].size() == 1);
  CHECK(holds["overlaps"][0]["s"] == 4000);
  CHECK(holds["overlaps"][0]["e"] == 6000);
  // A register run has none.
  History reg = StaleRead();
  CHECK(json::parse(ReportDataJson(s, reg))["holds"].is_null());
}

TEST_CASE(
    "report: lock holders mark a token granted twice and judge overlaps") {
  using E = EventType;
  const Value lock = Value::String("L");
  History h;
  auto add = [&](std::int64_t p, E t, const char* f, Value v, int ms) {
    Event e = Ev(static_cast<std::int64_t>(h.size()), p, t, f, lock,
                 std::move(v), ms * 1000000LL);
    e.node = "n" + std::to_string(p + 1);
    h.push_back(std::move(e));
  };
  // p0 holds token 1; p1 takes token 2 while p0 still holds it (harmless:
  // p0 writes nothing); later p2 is granted token 2 again (unsafe).
  add(0, E::kInvoke, "acquire", Value(), 1);
  add(0, E::kOk, "acquire", Value::Int(1), 2);
  add(1, E::kInvoke, "acquire", Value(), 3);
  add(1, E::kOk, "acquire", Value::Int(2), 4);
  add(0, E::kInvoke, "release", Value(), 6);
  add(0, E::kOk, "release", Value(), 7);
  add(1, E::kInvoke, "release", Value(), 8);
  add(1, E::kOk, "release", Value(), 9);
  add(2, E::kInvoke, "acquire", Value(), 10);
  add(2, E::kOk, "acquire", Value::Int(2), 11);
  RunSummary s;
  s.name = "lock";
  json d = json::parse(ReportDataJson(s, h));
  const json& holds = d["holds"];
  REQUIRE(holds.is_object());
  REQUIRE(holds["items"].size() == 3);
  CHECK_FALSE(holds["items"][0].contains("bad"));
  CHECK(holds["items"][1]["bad"] == "duplicate");
  CHECK(holds["items"][2]["bad"] == "duplicate");
  CHECK(holds["items"][2]["bad_why"] ==
        "token 2 was granted to p1 at 0.004 s and to p2 at 0.011 s");
  REQUIRE(holds["overlaps"].size() == 1);
  CHECK(holds["overlaps"][0]["unsafe"] == false);
  CHECK(holds["overlaps"][0]["why"] == "p0 wrote nothing after p1 acquired it");
}

TEST_CASE("report: leaders per term mark a term with two leaders") {
  using E = EventType;
  History h;
  auto observe = [&](std::int64_t p, const char* node, int ms, const char* role,
                     int term) {
    Event inv = Ev(static_cast<std::int64_t>(h.size()), p, E::kInvoke,
                   "observe", Value(), Value(), ms * 1000000LL);
    inv.node = node;
    h.push_back(inv);
    Value v = Value::MakeObject({{"role", Value::String(role)},
                                 {"term", Value::Int(term)},
                                 {"leader", Value::String(node)}});
    Event ok = Ev(static_cast<std::int64_t>(h.size()), p, E::kOk, "observe",
                  Value(), std::move(v), (ms + 1) * 1000000LL);
    ok.node = node;
    h.push_back(ok);
  };
  observe(0, "n1", 0, "leader", 4);
  observe(0, "n1", 100, "leader", 5);
  observe(2, "n3", 200, "leader", 5);
  observe(1, "n2", 300, "leader", 6);
  RunSummary s;
  s.name = "election";
  json d = json::parse(ReportDataJson(s, h));
  const json& l = d["leaders"];
  REQUIRE(l.is_object());
  REQUIRE(l["terms"].size() == 3);
  // The term with two leaders first, marked; then the others by term.
  CHECK(l["terms"][0]["term"] == 5);
  CHECK(l["terms"][0]["conflict"] == true);
  CHECK(l["terms"][0]["nodes"] == json::array({"n1", "n3"}));
  CHECK(l["terms"][1]["term"] == 4);
  CHECK(l["terms"][1]["conflict"] == false);
  CHECK(l["terms"][2]["nodes"] == json::array({"n2"}));
  CHECK(l["terms_more"] == 0);
  CHECK(l["conflicts"].size() == 1);
}

TEST_CASE("report: leader observations give leaders per node with terms") {
  // The example of docs/history-locks.md: n1 (term 1) and n2 (term 2)
  // both believe they lead from 2.003 s until n1 learns of term 2.
  auto read = faultline::checkers::ParseJsonl(
      ReadText(std::string(REPORTS_TESTDATA) + "/leaders.jsonl"));
  REQUIRE(read.ok);
  RunSummary s;
  s.name = "election";
  json d = json::parse(ReportDataJson(s, read.history));
  const json& l = d["leaders"];
  REQUIRE(l.is_object());
  CHECK(l["rows"] == json::array({"n1", "n2"}));
  REQUIRE(l["items"].size() == 2);
  CHECK(l["items"][0]["term"] == 1);
  CHECK(l["items"][1]["term"] == 2);
  REQUIRE(l["dual"].size() == 1);
  CHECK(l["dual"][0]["s"] == 2003000);
  CHECK(l["dual"][0]["e"] == 4001000);
  CHECK(l["conflicts"].empty());
  CHECK(d["holds"].is_null());
}
