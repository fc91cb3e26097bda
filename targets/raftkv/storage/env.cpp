#include "targets/raftkv/storage/env.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace faultline::raftkv::storage {
namespace {

std::string Err(const char* what, const std::string& path, int err) {
  return std::string(what) + " " + path + ": " + std::strerror(err);
}

int OpenRetry(const char* path, int flags, mode_t mode = 0) {
  int fd;
  do {
    fd = ::open(path, flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(int fd, std::string path)
      : fd_(fd), path_(std::move(path)) {}
  ~PosixWritableFile() override { Close(); }

  std::string Append(std::string_view data) override {
    if (fd_ < 0) return "append " + path_ + ": file is closed";
    const char* p = data.data();
    std::size_t left = data.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Err("write", path_, errno);
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    return "";
  }

  std::string Sync() override {
    if (fd_ < 0) return "sync " + path_ + ": file is closed";
    if (::fdatasync(fd_) != 0) return Err("fdatasync", path_, errno);
    return "";
  }

  std::string Close() override {
    if (fd_ < 0) return "";
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0 && errno != EINTR) return Err("close", path_, errno);
    return "";
  }

 private:
  int fd_;
  std::string path_;
};

std::string Parent(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

class PosixEnvImpl final : public Env {
 public:
  std::string NewAppendableFile(const std::string& path,
                                std::unique_ptr<WritableFile>* out) override {
    int fd = OpenRetry(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                       0644);
    if (fd < 0) return Err("open", path, errno);
    *out = std::make_unique<PosixWritableFile>(fd, path);
    return "";
  }

  std::string ReadFile(const std::string& path, std::string* out) override {
    out->clear();
    int fd = OpenRetry(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Err("open", path, errno);
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      out->reserve(static_cast<std::size_t>(st.st_size));
    }
    char buf[1 << 16];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        return Err("read", path, err);
      }
      if (n == 0) break;
      out->append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return "";
  }

  std::string Truncate(const std::string& path, std::uint64_t size) override {
    int fd = OpenRetry(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Err("open", path, errno);
    std::string err;
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
      err = Err("ftruncate", path, errno);
    } else if (::fsync(fd) != 0) {
      err = Err("fsync", path, errno);
    }
    ::close(fd);
    return err;
  }

  std::string Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) {
      return Err("rename", from + " -> " + to, errno);
    }
    return "";
  }

  std::string Remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return Err("unlink", path, errno);
    return "";
  }

  std::string ListDir(const std::string& dir,
                      std::vector<std::string>* names) override {
    names->clear();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return Err("opendir", dir, errno);
    errno = 0;
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names->push_back(std::move(name));
      errno = 0;
    }
    int err = errno;
    ::closedir(d);
    if (err != 0) return Err("readdir", dir, err);
    return "";
  }

  std::string CreateDir(const std::string& dir) override {
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return "";
      return Err("mkdir", dir, ENOTDIR);
    }
    std::string parent = Parent(dir);
    if (parent != dir && parent != "/" && parent != ".") {
      std::string err = CreateDir(parent);
      if (!err.empty()) return err;
    }
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return Err("mkdir", dir, errno);
    }
    // The new entry lives in the parent: make it durable too.
    return SyncDir(parent);
  }

  std::string SyncDir(const std::string& dir) override {
    int fd = OpenRetry(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Err("open", dir, errno);
    std::string err;
    if (::fsync(fd) != 0) err = Err("fsync", dir, errno);
    ::close(fd);
    return err;
  }

  std::string FileSize(const std::string& path, std::uint64_t* size) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Err("stat", path, errno);
    *size = static_cast<std::uint64_t>(st.st_size);
    return "";
  }

  bool FileExists(const std::string& path) override {
    return ::access(path.c_str(), F_OK) == 0;
  }
};

}  // namespace

Env* PosixEnv() {
  static PosixEnvImpl* env = new PosixEnvImpl();  // never destroyed
  return env;
}

}  // namespace faultline::raftkv::storage
