// Graph: edges collected, then sorted into compressed rows (checkers/txn/
// txn_internal.h).
#include <algorithm>

#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {

void Graph::Add(TxnId from, TxnId to, std::uint8_t bits) {
  if (from == to || bits == 0) return;
  pending_.push_back(Edge{from, to, bits});
}

// A counting sort by `from` (linear), then each row sorted by `to` and its
// parallel edges merged: rows are short, so this is several times faster
// than one comparison sort of millions of edges.
void Graph::Finish() {
  const std::size_t n = nodes_;
  std::vector<std::uint32_t> start(n + 1, 0);
  for (const Edge& e : pending_) ++start[static_cast<std::size_t>(e.from) + 1];
  for (std::size_t i = 1; i <= n; ++i) start[i] += start[i - 1];
  std::vector<std::uint64_t> rows(pending_.size());  // to << 8 | bits
  {
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (const Edge& e : pending_) {
      rows[fill[e.from]++] = (static_cast<std::uint64_t>(e.to) << 8) | e.bits;
    }
  }
  pending_.clear();
  pending_.shrink_to_fit();
  offsets_.assign(n + 1, 0);
  targets_.clear();
  bits_.clear();
  targets_.reserve(rows.size());
  bits_.reserve(rows.size());
  for (std::size_t from = 0; from < n; ++from) {
    auto* b = rows.data() + start[from];
    auto* e = rows.data() + start[from + 1];
    std::sort(b, e);
    for (auto* it = b; it != e;) {
      const auto to = static_cast<TxnId>(*it >> 8);
      std::uint8_t bits = 0;
      for (; it != e && static_cast<TxnId>(*it >> 8) == to; ++it) {
        bits |= static_cast<std::uint8_t>(*it & 0xff);
      }
      targets_.push_back(to);
      bits_.push_back(bits);
    }
    offsets_[from + 1] = static_cast<std::uint32_t>(targets_.size());
  }
}

std::size_t Graph::MemoryBytes() const {
  return pending_.capacity() * sizeof(Edge) +
         offsets_.capacity() * sizeof(std::uint32_t) +
         targets_.capacity() * sizeof(TxnId) + bits_.capacity();
}

}  // namespace faultline::checkers::txn
