#include "targets/raftkv/storage/snapshot_file.h"

#include "targets/raftkv/storage/crc32c.h"
#include "targets/raftkv/storage/wal.h"

namespace faultline::raftkv::storage {
namespace {

constexpr std::string_view kMagic = "RKVSNAP1";

std::string Header(const raft::Snapshot& snap) {
  std::string h(kMagic);
  wal::PutU64(&h, snap.meta.index);
  wal::PutU64(&h, snap.meta.term);
  wal::PutU32(&h, static_cast<std::uint32_t>(snap.meta.voters.size()));
  for (raft::NodeId v : snap.meta.voters) wal::PutU64(&h, v);
  wal::PutU64(&h, snap.data.size());
  return h;
}

}  // namespace

std::string EncodeSnapshotFile(const raft::Snapshot& snap) {
  std::string out = Header(snap);
  out.append(snap.data);
  wal::PutU32(&out, crc32c::Value(out));
  return out;
}

std::string DecodeSnapshotFile(std::string_view b, raft::Snapshot* out) {
  *out = raft::Snapshot{};
  if (b.size() < kMagic.size() + 8 + 8 + 4 || b.substr(0, 8) != kMagic) {
    return "snapshot: bad magic or too short";
  }
  std::size_t pos = kMagic.size();
  out->meta.index = wal::GetU64(b.data() + pos);
  out->meta.term = wal::GetU64(b.data() + pos + 8);
  std::uint32_t nvoters = wal::GetU32(b.data() + pos + 16);
  pos += 20;
  if ((b.size() - pos) / 8 < nvoters) return "snapshot: truncated voters";
  for (std::uint32_t i = 0; i < nvoters; ++i, pos += 8) {
    out->meta.voters.push_back(wal::GetU64(b.data() + pos));
  }
  if (b.size() - pos < 8) return "snapshot: truncated";
  std::uint64_t len = wal::GetU64(b.data() + pos);
  pos += 8;
  if (b.size() - pos < 4 || b.size() - pos - 4 != len) {
    return "snapshot: data length " + std::to_string(len) +
           " does not match the file size";
  }
  std::uint32_t want = wal::GetU32(b.data() + b.size() - 4);
  if (crc32c::Value(b.data(), b.size() - 4) != want) {
    return "snapshot: checksum mismatch";
  }
  out->data.assign(b.data() + pos, len);
  return "";
}

std::string WriteSnapshotFile(Env* env, const std::string& dir,
                              const raft::Snapshot& snap, bool* renamed) {
  *renamed = false;
  const std::string tmp = dir + "/" + kSnapshotTmpFile;
  if (env->FileExists(tmp)) {
    if (std::string err = env->Remove(tmp); !err.empty()) return err;
  }
  std::unique_ptr<WritableFile> f;
  if (std::string err = env->NewAppendableFile(tmp, &f); !err.empty()) {
    return err;
  }
  // Three appends instead of one copy of a possibly large state.
  std::string header = Header(snap);
  std::uint32_t crc = crc32c::Value(header);
  crc = crc32c::Extend(crc, snap.data.data(), snap.data.size());
  std::string footer;
  wal::PutU32(&footer, crc);
  for (std::string_view part :
       {std::string_view(header), std::string_view(snap.data),
        std::string_view(footer)}) {
    if (std::string err = f->Append(part); !err.empty()) return err;
  }
  if (std::string err = f->Sync(); !err.empty()) return err;
  if (std::string err = f->Close(); !err.empty()) return err;
  *renamed = true;
  if (std::string err = env->Rename(tmp, dir + "/" + kSnapshotFile);
      !err.empty()) {
    return err;
  }
  return env->SyncDir(dir);
}

std::string ReadSnapshotFile(Env* env, const std::string& dir,
                             std::optional<raft::Snapshot>* out) {
  out->reset();
  const std::string path = dir + "/" + kSnapshotFile;
  if (!env->FileExists(path)) return "";
  std::string bytes;
  if (std::string err = env->ReadFile(path, &bytes); !err.empty()) return err;
  raft::Snapshot snap;
  if (std::string err = DecodeSnapshotFile(bytes, &snap); !err.empty()) {
    return path + ": " + err;
  }
  *out = std::move(snap);
  return "";
}

}  // namespace faultline::raftkv::storage
