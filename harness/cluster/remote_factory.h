// Opening a Remote from a RemoteDescriptor
// (harness/cluster/remote_descriptor.h), its JSON form in the fault ledger, and
// reading a remote process's start time, which `faultline heal` compares before
// it signals a recorded pid.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "harness/cluster/remote.h"
#include "harness/cluster/remote_descriptor.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

// Opens (and for SSH connects, so a bad address, key or host key fails
// here) a Remote for `d`. Fails for an empty or unknown kind.
Result<std::unique_ptr<Remote>> OpenRemote(const RemoteDescriptor& d);

// The descriptor as one JSON object ({"kind":"ssh","host":...}); the fields
// of other kinds are left out.
std::string RemoteDescriptorToJson(const RemoteDescriptor& d);
// Parses what RemoteDescriptorToJson wrote; missing fields keep their
// defaults. Fails when `json` is not an object with a string "kind".
Result<RemoteDescriptor> RemoteDescriptorFromJson(std::string_view json);

// Field 22 of /proc/<pid>/stat (clock ticks since boot) read through
// `remote`; fails when the process does not exist (or the node cannot be
// reached: the error then begins with "ssh:" or names the transport).
Result<unsigned long long> RemoteProcessStartTime(Remote& remote, pid_t pid);

// Parses field 22 of a /proc/<pid>/stat line; fails when it is malformed.
Result<unsigned long long> ParseStatStartTime(std::string_view stat_line);

}  // namespace faultline::harness
