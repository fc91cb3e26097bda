// `same`: faults of a `together` group that act on the nodes its first
// fault acted on (docs/config.md, "Per-fault settings and combined faults").
//
// A later fault of a group whose selector is kSameNodes (`targets: [same]`,
// or `partitions: [same]` for a partition) does not draw nodes of its own:
// once the group's first fault has started, the interpreter binds it to the
// nodes named in that fault's start value (its "nodes" list) with BindSame,
// and the nemesis acts on exactly those (a partition cuts them off from the
// other nodes, both ways). The schedule leaves the selector as written.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checkers/value.h"
#include "harness/interfaces/nemesis.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

inline constexpr const char* kSameNodes = "same";

// The node names of a start value's "nodes" list, e.g. ["n2"] for
// {"kind":"clock","selector":"follower","nodes":["n2"],...}; nullopt when
// it has no such list of strings, or it is empty.
std::optional<std::vector<std::string>> NodesActedOn(
    const checkers::Value& started);

// `step` with `nodes` set to the nodes the group's first fault acted on.
// `first_started`: that fault's start value, null when it did not start.
// Precondition: step.selector == kSameNodes. Fails, saying why, when the
// first fault did not start or its value names no nodes.
Result<FaultStep> BindSame(FaultStep step,
                           const checkers::Value* first_started);

}  // namespace faultline::harness
