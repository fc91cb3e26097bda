// Client operations as invoke/completion pairs, for the checkers that look
// at operations one by one (mutex-fencing, leader-per-term).
//
// Thread-safety: pure functions; call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "checkers/history.h"

namespace faultline::checkers {

struct PairedOp {
  std::size_t inv = 0;       // position of the invoke in the history
  std::ptrdiff_t done = -1;  // position of the completion, -1 when none
  EventType outcome = EventType::kInfo;  // never completed counts as info
  std::int64_t t_inv = 0;                // TimeOf the invoke
  std::int64_t t_done = 0;  // TimeOf the completion (= t_inv when none)
};

// True when every client event carries a time and those times never
// decrease in file order: then times order the operations. Otherwise
// positions do: a history without times, or one whose times step back (as
// Jepsen's can, by up to a millisecond), is ordered as its file is.
bool OrderedByTime(const History& h);

// The event's time when `timed`, else its index (an order without a clock).
inline std::int64_t TimeOf(const Event& e, bool timed) {
  return timed ? *e.time : e.index;
}

// Client operations in invoke order; nemesis events are skipped.
// Precondition: `h` is well formed (checkers/history_io.h CheckWellFormed),
// and every client event has a time when `timed`.
std::vector<PairedOp> PairOps(const History& h, bool timed);

}  // namespace faultline::checkers
