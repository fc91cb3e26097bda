#include "targets/raftkv/raft/sim/memdisk.h"

#include <sstream>

namespace faultline::raftkv::raft::sim {

const Entry* MemDisk::At(Index i) const {
  if (i < FirstIndex() || i > LastIndex()) return nullptr;
  return &log[i - FirstIndex()];
}

std::optional<Term> MemDisk::TermAt(Index i) const {
  if (i == 0) return Term{0};
  if (snap && i == snap->meta.index) return snap->meta.term;
  const Entry* e = At(i);
  if (e == nullptr) return std::nullopt;
  return e->term;
}

std::optional<std::string> MemDisk::Append(const std::vector<Entry>& es) {
  if (es.empty()) return std::nullopt;
  const Index first = es.front().index;
  for (std::size_t k = 0; k < es.size(); ++k) {
    if (es[k].index != first + k) {
      return "entries to persist are not contiguous at index " +
             std::to_string(es[k].index);
    }
  }
  if (first <= SnapIndex()) {
    return "entries to persist start at " + std::to_string(first) +
           ", inside the snapshot at " + std::to_string(SnapIndex());
  }
  if (first > LastIndex() + 1) {
    return "entries to persist start at " + std::to_string(first) +
           ", leaving a gap after last index " + std::to_string(LastIndex());
  }
  log.resize(first - FirstIndex());
  log.insert(log.end(), es.begin(), es.end());
  return std::nullopt;
}

void MemDisk::InstallSnapshot(const Snapshot& s) {
  std::vector<Entry> keep;
  const Entry* e = At(s.meta.index);
  if (e != nullptr && e->term == s.meta.term) {
    keep.assign(log.begin() + static_cast<std::ptrdiff_t>(s.meta.index + 1 -
                                                          FirstIndex()),
                log.end());
  }
  snap = s;
  log = std::move(keep);
  if (hs.commit < s.meta.index) hs.commit = s.meta.index;
}

void MemDisk::Compact(Index index, std::string data,
                      std::vector<NodeId> voters) {
  if (index <= SnapIndex() || index > LastIndex()) return;
  Snapshot s;
  s.meta.index = index;
  s.meta.term = At(index)->term;
  s.meta.voters = std::move(voters);
  s.data = std::move(data);
  log.erase(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(
                                           index + 1 - FirstIndex()));
  snap = std::move(s);
}

std::string SimKv::EncodePut(const std::string& key, const std::string& value) {
  return key + "=" + value;
}

bool SimKv::DecodePut(const Entry& e, std::string* key, std::string* value) {
  if (e.type != EntryType::kNormal) return false;
  const auto eq = e.data.find('=');
  if (eq == std::string::npos) return false;
  *key = e.data.substr(0, eq);
  *value = e.data.substr(eq + 1);
  return true;
}

void SimKv::Apply(const Entry& e) {
  std::string k, v;
  if (DecodePut(e, &k, &v)) data_[k] = v;
  applied_ = e.index;
}

std::optional<std::string> SimKv::Get(const std::string& key) const {
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second;
}

std::string SimKv::Serialize() const {
  std::string out;
  for (const auto& [k, v] : data_) out += k + "=" + v + "\n";
  return out;
}

bool SimKv::Restore(const std::string& bytes, Index index) {
  std::map<std::string, std::string> d;
  std::istringstream in(bytes);
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) return false;
    d[line.substr(0, eq)] = line.substr(eq + 1);
  }
  data_ = std::move(d);
  applied_ = index;
  return true;
}

}  // namespace faultline::raftkv::raft::sim
