#include "targets/raftkv/storage/fault_env.h"

#include <algorithm>

namespace faultline::raftkv::storage {
namespace {

std::string ParentOf(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

class FaultFile final : public WritableFile {
 public:
  FaultFile(FaultEnv* env, std::shared_ptr<FaultEnv::Inode> inode,
            std::string path)
      : env_(env),
        inode_(std::move(inode)),
        path_(std::move(path)),
        generation_(env->generation_) {}

  std::string Append(std::string_view data) override {
    if (std::string err = Check("append"); !err.empty()) return err;
    std::string err = env_->Boundary("append " + path_ + ": " +
                                     std::to_string(data.size()) + " bytes");
    if (!err.empty()) return err;
    if (data.empty()) return "";
    inode_->appends.push_back(inode_->data.size());
    inode_->data.append(data);
    return "";
  }

  std::string Sync() override {
    if (std::string err = Check("sync"); !err.empty()) return err;
    std::string err = env_->Boundary("sync " + path_);
    if (!err.empty()) return err;
    inode_->synced = inode_->data.size();
    inode_->appends.clear();
    return "";
  }

  std::string Close() override {
    closed_ = true;
    return "";
  }

 private:
  std::string Check(const char* op) const {
    if (closed_) return std::string(op) + " " + path_ + ": file is closed";
    if (generation_ != env_->generation_) {
      return std::string(op) + " " + path_ + ": fault env: lost power";
    }
    return "";
  }

  FaultEnv* env_;
  std::shared_ptr<FaultEnv::Inode> inode_;
  std::string path_;
  int generation_;
  bool closed_ = false;
};

FaultEnv::FaultEnv() = default;
FaultEnv::~FaultEnv() = default;

std::string FaultEnv::Boundary(std::string what) {
  ++boundaries_;
  if (crash_after_ >= 0 && boundaries_ > crash_after_) {
    return "fault env: crashed (" + what + ")";
  }
  trace_.push_back(std::move(what));
  return "";
}

void FaultEnv::LosePower(const PowerLoss& how) {
  const Names& names = how.keep_unsynced_names ? current_ : durable_;
  // One survivor per inode, so names sharing an inode keep sharing it.
  std::map<const Inode*, std::shared_ptr<Inode>> survivors;
  Names next;
  for (const auto& [name, inode] : names) {
    auto& survivor = survivors[inode.get()];
    if (!survivor) {
      std::size_t keep = inode->synced;
      switch (how.data) {
        case PowerLoss::Data::kSyncedOnly:
          break;
        case PowerLoss::Data::kAll:
          keep = inode->data.size();
          break;
        case PowerLoss::Data::kTornLast:
          if (!inode->appends.empty()) {
            std::size_t last = inode->appends.back();
            std::size_t size = inode->data.size() - last;
            keep = last + std::min(how.torn_keep, size - 1);
          }
          break;
      }
      survivor = std::make_shared<Inode>();
      survivor->data = inode->data.substr(0, keep);
      survivor->synced = keep;
    }
    next[name] = survivor;
  }
  current_ = next;
  durable_ = next;
  crash_after_ = -1;
  ++generation_;
}

std::unique_ptr<FaultEnv> FaultEnv::Clone() const {
  auto c = std::make_unique<FaultEnv>();
  std::map<const Inode*, std::shared_ptr<Inode>> copies;
  auto copy = [&](const Names& from, Names* to) {
    for (const auto& [name, inode] : from) {
      auto& dup = copies[inode.get()];
      if (!dup) dup = std::make_shared<Inode>(*inode);
      (*to)[name] = dup;
    }
  };
  copy(current_, &c->current_);
  copy(durable_, &c->durable_);
  c->dirs_ = dirs_;
  c->boundaries_ = boundaries_;
  c->crash_after_ = crash_after_;
  c->trace_ = trace_;
  return c;
}

std::string FaultEnv::Contents(const std::string& path) const {
  auto it = current_.find(path);
  return it == current_.end() ? "" : it->second->data;
}

bool FaultEnv::Overwrite(const std::string& path, std::size_t offset,
                         char byte) {
  auto it = current_.find(path);
  if (it == current_.end() || offset >= it->second->data.size()) return false;
  it->second->data[offset] = byte;
  return true;
}

std::string FaultEnv::NewAppendableFile(const std::string& path,
                                        std::unique_ptr<WritableFile>* out) {
  if (std::find(dirs_.begin(), dirs_.end(), ParentOf(path)) == dirs_.end()) {
    return "open " + path + ": No such file or directory";
  }
  auto it = current_.find(path);
  std::shared_ptr<Inode> inode;
  if (it != current_.end()) {
    inode = it->second;
  } else {
    std::string err = Boundary("create " + path);
    if (!err.empty()) return err;
    inode = std::make_shared<Inode>();
    current_[path] = inode;
  }
  *out = std::make_unique<FaultFile>(this, inode, path);
  return "";
}

std::string FaultEnv::ReadFile(const std::string& path, std::string* out) {
  auto it = current_.find(path);
  if (it == current_.end()) return "open " + path + ": No such file";
  *out = it->second->data;
  return "";
}

std::string FaultEnv::Truncate(const std::string& path, std::uint64_t size) {
  auto it = current_.find(path);
  if (it == current_.end()) return "open " + path + ": No such file";
  Inode& inode = *it->second;
  if (size > inode.data.size()) return "truncate " + path + ": grows file";
  std::string err =
      Boundary("truncate " + path + " to " + std::to_string(size));
  if (!err.empty()) return err;
  inode.data.resize(size);
  inode.synced = size;
  inode.appends.clear();
  return "";
}

std::string FaultEnv::Rename(const std::string& from, const std::string& to) {
  auto it = current_.find(from);
  if (it == current_.end()) return "rename " + from + ": No such file";
  std::string err = Boundary("rename " + from + " -> " + to);
  if (!err.empty()) return err;
  auto inode = it->second;
  current_.erase(it);
  current_[to] = inode;
  return "";
}

std::string FaultEnv::Remove(const std::string& path) {
  auto it = current_.find(path);
  if (it == current_.end()) return "unlink " + path + ": No such file";
  std::string err = Boundary("remove " + path);
  if (!err.empty()) return err;
  current_.erase(it);
  return "";
}

std::string FaultEnv::ListDir(const std::string& dir,
                              std::vector<std::string>* names) {
  names->clear();
  if (std::find(dirs_.begin(), dirs_.end(), dir) == dirs_.end()) {
    return "opendir " + dir + ": No such file or directory";
  }
  for (const auto& [path, inode] : current_) {
    if (ParentOf(path) == dir) names->push_back(BaseOf(path));
  }
  for (const auto& d : dirs_) {
    if (d != dir && ParentOf(d) == dir) names->push_back(BaseOf(d));
  }
  return "";
}

std::string FaultEnv::CreateDir(const std::string& dir) {
  if (std::find(dirs_.begin(), dirs_.end(), dir) != dirs_.end()) return "";
  std::string parent = ParentOf(dir);
  if (parent != dir && parent != "/" && parent != ".") {
    if (std::string err = CreateDir(parent); !err.empty()) return err;
  }
  std::string err = Boundary("mkdir " + dir);
  if (!err.empty()) return err;
  dirs_.push_back(dir);
  return "";
}

std::string FaultEnv::SyncDir(const std::string& dir) {
  if (std::find(dirs_.begin(), dirs_.end(), dir) == dirs_.end()) {
    return "open " + dir + ": No such file or directory";
  }
  std::string err = Boundary("syncdir " + dir);
  if (!err.empty()) return err;
  for (auto it = durable_.begin(); it != durable_.end();) {
    it = ParentOf(it->first) == dir ? durable_.erase(it) : std::next(it);
  }
  for (const auto& [path, inode] : current_) {
    if (ParentOf(path) == dir) durable_[path] = inode;
  }
  return "";
}

std::string FaultEnv::FileSize(const std::string& path, std::uint64_t* size) {
  auto it = current_.find(path);
  if (it == current_.end()) return "stat " + path + ": No such file";
  *size = it->second->data.size();
  return "";
}

bool FaultEnv::FileExists(const std::string& path) {
  return current_.count(path) != 0 ||
         std::find(dirs_.begin(), dirs_.end(), path) != dirs_.end();
}

}  // namespace faultline::raftkv::storage
