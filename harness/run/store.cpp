#include "harness/run/store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace faultline::harness {
namespace fs = std::filesystem;

namespace {

std::string RandomRunId() {
  std::random_device rd;
  char buf[8];
  std::snprintf(buf, sizeof buf, "%06x", rd() & 0xffffff);
  return buf;
}

}  // namespace

std::string UtcNowMillis(UtcForm form) {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                now.time_since_epoch())
                .count() %
            1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf,
                form == UtcForm::kBasic ? "%Y%m%dT%H%M%S" : "%Y-%m-%dT%H:%M:%S",
                &tm);
  char out[80];
  std::snprintf(out, sizeof out, "%s.%03lldZ", buf, static_cast<long long>(ms));
  return out;
}

Result<RunDir> CreateRunDir(const std::string& store_dir,
                            const std::string& test_name) {
  std::error_code ec;
  fs::path test_dir = fs::path(store_dir) / test_name;
  fs::create_directories(test_dir, ec);
  if (ec) {
    return Fail("cannot create store directory " + test_dir.string() + ": " +
                ec.message());
  }
  RunDir run;
  run.test_dir = test_dir.string();
  // Two runs within one millisecond get the same timestamp: the later one
  // takes the first free "-N" suffix (it still sorts after the first).
  const std::string stamp = UtcNowMillis(UtcForm::kBasic);
  for (int attempt = 0; attempt < 100; ++attempt) {
    run.timestamp =
        attempt == 0 ? stamp : stamp + "-" + std::to_string(attempt + 1);
    fs::path dir = test_dir / run.timestamp;
    if (fs::create_directory(dir, ec)) {
      run.path = dir.string();
      break;
    }
    if (ec) return Fail("cannot create " + dir.string() + ": " + ec.message());
  }
  if (run.path.empty()) return Fail("cannot find a free run directory name");
  run.run_id = RandomRunId();
  fs::create_directories(fs::path(run.path) / kNodesDir, ec);
  return run;
}

Status PointLatestAt(const RunDir& run) {
  std::error_code ec;
  fs::path test_dir(run.test_dir);
  fs::path tmp = test_dir / (".latest." + run.run_id);
  fs::remove(tmp, ec);
  fs::create_directory_symlink(run.timestamp, tmp, ec);
  if (!ec) fs::rename(tmp, test_dir / "latest", ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Fail("cannot point " + (test_dir / "latest").string() + " at " +
                run.timestamp + ": " + ec.message());
  }
  return Ok();
}

Status RemoveRunDir(const RunDir& run) {
  std::error_code ec;
  fs::remove_all(run.path, ec);
  if (ec) return Fail("cannot remove " + run.path + ": " + ec.message());
  // Only an empty test directory goes (fs::remove refuses a non-empty one).
  fs::remove(run.test_dir, ec);
  return Ok();
}

Result<std::string> ResolveRunDir(const std::string& arg) {
  std::error_code ec;
  fs::path p(arg);
  if (!fs::is_directory(p, ec)) {
    return Fail(arg +
                ": not a directory (expected a run directory such as "
                "store/<test>/latest)");
  }
  fs::path canonical = fs::canonical(p, ec);
  if (ec) return Fail(arg + ": " + ec.message());
  if (!fs::exists(canonical / kHistoryFile, ec) &&
      !fs::exists(canonical / kConfigFile, ec)) {
    return Fail(arg + ": no " + std::string(kHistoryFile) + " or " +
                kConfigFile +
                " here; is this a run directory (store/<test>/<timestamp>)?");
  }
  return canonical.string();
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail("cannot read " + path + ": " + strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteFileAtomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("cannot write " + tmp + ": " + strerror(errno));
  std::size_t off = 0;
  while (off < content.size()) {
    ssize_t n = write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      return Fail("cannot write " + tmp + ": " + strerror(e));
    }
    off += static_cast<std::size_t>(n);
  }
  fsync(fd);
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    return Fail("cannot rename " + tmp + ": " + strerror(errno));
  }
  return Ok();
}

}  // namespace faultline::harness
