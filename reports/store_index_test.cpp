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
  std::string html = StoreIndexHtml({r});
  CHECK(html.find("<script") == std::string::npos);
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
