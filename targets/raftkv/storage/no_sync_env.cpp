#include "targets/raftkv/storage/no_sync_env.h"

#include <utility>

namespace faultline::raftkv::storage {
namespace {

// Forwards Append and Close; Sync is a no-op that reports success.
class NoSyncFile final : public WritableFile {
 public:
  explicit NoSyncFile(std::unique_ptr<WritableFile> base)
      : base_(std::move(base)) {}
  std::string Append(std::string_view data) override {
    return base_->Append(data);
  }
  std::string Sync() override { return ""; }
  std::string Close() override { return base_->Close(); }

 private:
  std::unique_ptr<WritableFile> base_;
};

}  // namespace

std::string NoSyncEnv::NewAppendableFile(const std::string& path,
                                         std::unique_ptr<WritableFile>* out) {
  std::unique_ptr<WritableFile> base;
  if (std::string err = base_->NewAppendableFile(path, &base); !err.empty()) {
    return err;
  }
  *out = std::make_unique<NoSyncFile>(std::move(base));
  return "";
}

}  // namespace faultline::raftkv::storage
