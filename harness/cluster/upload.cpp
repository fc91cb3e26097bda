#include "harness/cluster/upload.h"

namespace faultline::harness {

Status UploadExecutable(Remote& remote, const std::string& node_name,
                        const std::string& local, const std::string& path,
                        std::chrono::milliseconds timeout) {
  if (Status up = remote.Upload(local, path); !up.ok())
    return Fail("cannot copy " + local + " to " + node_name + ":" + path +
                ": " + up.error());
  CommandOptions o;
  o.timeout = timeout;
  auto mode = remote.Run({"chmod", "755", path}, o);
  if (!mode.ok())
    return Fail("chmod " + path + " on " + node_name + ": " +
                DescribeResult(mode));
  return Ok();
}

}  // namespace faultline::harness
