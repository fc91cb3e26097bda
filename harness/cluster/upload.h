// Copying one of the controller's programs to a node: Remote::Upload, then
// `chmod 755`, so the copy can be run there (raftkv, faultline-netdelay and
// faultline-clock on ssh and docker nodes).
#pragma once

#include <chrono>
#include <string>

#include "harness/cluster/remote.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

// Uploads `local` to `path` on the node `node_name` reached through
// `remote` and makes it executable. Errors read "cannot copy <local> to
// <node>:<path>: <why>" or "chmod <path> on <node>: <why>"; callers prefix
// their own name. `timeout` bounds the chmod (CommandOptions' default when
// not given). Thread-safety: that of the Remote.
Status UploadExecutable(
    Remote& remote, const std::string& node_name, const std::string& local,
    const std::string& path,
    std::chrono::milliseconds timeout = CommandOptions{}.timeout);

}  // namespace faultline::harness
