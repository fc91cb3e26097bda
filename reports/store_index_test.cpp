#include "reports/store_index.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using faultline::reports::ScanStore;
using faultline::reports::StoreIndexHtml;
using faultline::reports::WriteStoreIndex;

namespace {

// A temporary store, removed at the end of the test.
struct TempStore {
  TempStore() {
    char tmpl[] = "/tmp/faultline-store-test.XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempStore() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  void Write(const std::string& rel, const std::string& text) const {
    fs::create_directories((fs::path(path) / rel).parent_path());
    std::ofstream(fs::path(path) / rel) << text;
  }
  std::string path;
};

}  // namespace

TEST_CASE("store index: runs newest first with their verdicts") {
  TempStore store;
  store.Write("etcd-register/20261130T050000.000Z/results.json",
              R"({"name":"etcd-register","valid":"valid",
                  "started_at":"2026-11-30T05:00:00Z",
                  "phases":[{"name":"setup","seconds":1.5},
                            {"name":"workload","seconds":60}],
                  "checkers":[{"checker":"linearizable","valid":"valid",
                               "summary":"ok"}]})");
  store.Write("etcd-register/20261130T050000.000Z/history.jsonl", "");
  store.Write("etcd-register/20261130T050000.000Z/report.html", "x");
  store.Write("stale/20261130T060000.000Z/results.json",
              R"({"name":"stale","valid":"invalid","expect":"invalid",
                  "checkers":[{"checker":"linearizable","valid":"invalid",
                               "summary":"key k0: read 1 but 2"}]})");
  store.Write("stale/20261130T070000.000Z/history.jsonl", "{}\n");  // killed
  store.Write("stale/not-a-run/notes.txt", "");
  fs::create_directory_symlink(
      fs::path(store.path) / "stale/20261130T070000.000Z",
      fs::path(store.path) / "stale/latest");

  auto runs = ScanStore(store.path);
  REQUIRE(runs.size() == 3);
  CHECK(runs[0].run == "20261130T070000.000Z");
  CHECK(runs[0].verdict == "incomplete");
  CHECK(runs[1].name == "stale");
  CHECK(runs[1].verdict == "invalid");
  CHECK(runs[1].expect == std::optional<std::string>("invalid"));
  CHECK(runs[1].summary == "linearizable: key k0: read 1 but 2");
  CHECK(runs[2].path == "etcd-register/20261130T050000.000Z");
  CHECK(runs[2].duration_s == Approx(61.5));
  CHECK(runs[2].has_report);
  CHECK_FALSE(runs[1].has_report);

  std::string path = WriteStoreIndex(store.path);
  CHECK(path == (fs::path(store.path) / "index.html").string());
  std::ifstream in(path);
  std::string html((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  CHECK(html.find("3 runs: 1 valid, 1 invalid, 0 unknown, 1 incomplete") !=
        std::string::npos);
  CHECK(html.find("href=\"etcd-register/20261130T050000.000Z/report.html\"") !=
        std::string::npos);
  CHECK(html.find("href=\"stale/20261130T060000.000Z/\"") != std::string::npos);
  CHECK(html.find("invalid ✓") != std::string::npos);
  CHECK(html.find("1 min 01 s") == std::string::npos);
  CHECK(html.find("61.5 s") != std::string::npos);
}

TEST_CASE("store index: names from files and directories are escaped") {
  faultline::reports::StoreRun r;
  r.test = "<img src=x onerror=alert(1)>";
  r.run = "2026\"><script>";
  r.path = r.test + "/" + r.run;
  r.name = "</script><script>alert(1)</script>";
  r.verdict = "valid\"><b>";
  r.summary = "<i>x</i>";
  r.target = "\"><svg onload=alert(2)>";
  r.target_version = "<u>v</u>";
  r.faultline_version = "<b>1</b>";
  r.fault_kinds = "<kill> ×1";
  std::string html = StoreIndexHtml({r});
  // The page's own script is the only one.
  auto first = html.find("<script");
  REQUIRE(first != std::string::npos);
  CHECK(html.find("<script", first + 1) == std::string::npos);
  CHECK(html.find("<script>alert") == std::string::npos);
  CHECK(html.find("<svg") == std::string::npos);
  CHECK(html.find("<u>") == std::string::npos);
  CHECK(html.find("<b>") == std::string::npos);
  CHECK(html.find("<kill>") == std::string::npos);
  CHECK(html.find("data-target=\"&quot;&gt;&lt;svg") != std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("<i>") == std::string::npos);
  CHECK(html.find("&lt;/script&gt;&lt;script&gt;alert(1)") !=
        std::string::npos);
  CHECK(html.find("href=\"%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E/") !=
        std::string::npos);
}

TEST_CASE("store index: an empty or missing store") {
  CHECK(ScanStore("/nonexistent/faultline/store").empty());
  std::string html = StoreIndexHtml({});
  CHECK(html.find("No runs yet.") != std::string::npos);
}

TEST_CASE("store index: seed, target, versions, operations and faults") {
  TempStore store;
  store.Write("reg/20261201T100000.000Z/results.json",
              R"({"name":"reg","valid":"valid","seed":42,
                  "target":{"name":"etcd","version":"etcd 3.4.23"},
                  "faultline":{"version":"0.2.0","commit":"abc"},
                  "checkers":[{"checker":"stats","valid":"valid",
                    "summary":"s","details":{
                      "ops":{"ok":8455,"fail":700,"info":2063},
                      "faults":[{"f":"partition"},{"f":"kill"},
                                {"f":"partition"}]}}]})");
  store.Write("reg/20261201T110000.000Z/results.json",
              R"({"name":"reg","valid":"unknown","seed":"x",
                  "checkers":[{"checker":"stats","valid":"unknown",
                    "summary":"s","details":{"ops":[]}}]})");
  auto runs = ScanStore(store.path);
  REQUIRE(runs.size() == 2);
  const auto& bad = runs[0];  // malformed fields stay unknown
  CHECK_FALSE(bad.seed.has_value());
  CHECK(bad.ops_total == -1);
  CHECK(bad.faults == -1);
  CHECK(bad.summary == "stats: s");
  const auto& r = runs[1];
  CHECK(r.seed == std::optional<std::uint64_t>(42));
  CHECK(r.target == "etcd");
  CHECK(r.target_version == "etcd 3.4.23");
  CHECK(r.faultline_version == "0.2.0");
  CHECK(r.ops_ok == 8455);
  CHECK(r.ops_total == 11218);
  CHECK(r.faults == 3);
  CHECK(r.fault_kinds == "partition ×2, kill ×1");
  std::string html = StoreIndexHtml(runs);
  CHECK(html.find("8,455 ok of 11,218") != std::string::npos);
  CHECK(html.find("data-v=\"11218\"") != std::string::npos);
  CHECK(html.find("title=\"partition ×2, kill ×1\"") != std::string::npos);
  CHECK(html.find("<option>etcd</option>") != std::string::npos);
  CHECK(html.find("data-verdict=\"unknown\"") != std::string::npos);
}
