// Unit tests of the `mount` ledger entries' heal (harness/ledger/ledger_mount.h):
// only a faultline-lazyfs mount at exactly the recorded path is unmounted.
#include "harness/ledger/ledger_mount.h"

#include <catch2/catch.hpp>

using namespace faultline::harness;

namespace {

const char* kMounts =
    "proc /proc proc rw,nosuid 0 0\n"
    "tmpfs /dev/shm tmpfs rw 0 0\n"
    "faultline-lazyfs /dev/shm/faultline-r1/n1/data fuse.faultline-lazyfs "
    "rw,user_id=0 0 0\n"
    "faultline-lazyfs /dev/shm/faultline-r1/n\\0402/data "
    "fuse.faultline-lazyfs rw 0 0\n"
    "sshfs /dev/shm/faultline-r1/n3/data fuse.sshfs rw 0 0\n";

struct Recorder {
  std::vector<std::vector<std::string>> calls;
  bool umount_fails = false;
  MountRunner Runner() {
    return [this](const std::vector<std::string>& argv) {
      calls.push_back(argv);
      CommandResult r;
      r.exit_code = (umount_fails && argv[0] == "umount") ? 32 : 0;
      return r;
    };
  }
};

}  // namespace

TEST_CASE("LazyfsMountedAt finds only our type at exactly the path",
          "[ledger-mount]") {
  CHECK(LazyfsMountedAt(kMounts, "/dev/shm/faultline-r1/n1/data"));
  CHECK(LazyfsMountedAt(kMounts, "/dev/shm/faultline-r1/n1/data/"));
  CHECK(LazyfsMountedAt(kMounts, "/dev/shm/faultline-r1/n 2/data"));
  CHECK_FALSE(LazyfsMountedAt(kMounts, "/dev/shm/faultline-r1/n1"));
  CHECK_FALSE(LazyfsMountedAt(kMounts, "/dev/shm/faultline-r1/n3/data"));
  CHECK_FALSE(LazyfsMountedAt(kMounts, "/dev/shm"));
  CHECK_FALSE(LazyfsMountedAt("", "/dev/shm/faultline-r1/n1/data"));
}

TEST_CASE("UnmountLazyfs unmounts ours, leaves others, falls back",
          "[ledger-mount]") {
  std::vector<std::string> log;
  {
    Recorder rec;
    REQUIRE(UnmountLazyfs(rec.Runner(), kMounts,
                          "/dev/shm/faultline-r1/n1/data", "", &log)
                .ok());
    REQUIRE(rec.calls.size() == 1);
    CHECK(rec.calls[0] == std::vector<std::string>{
                              "umount", "-l", "/dev/shm/faultline-r1/n1/data"});
  }
  {
    Recorder rec;  // someone else's FUSE mount at a path of ours: untouched
    REQUIRE(UnmountLazyfs(rec.Runner(), kMounts,
                          "/dev/shm/faultline-r1/n3/data", "", &log)
                .ok());
    CHECK(rec.calls.empty());
  }
  {
    Recorder rec;
    rec.umount_fails = true;
    REQUIRE(UnmountLazyfs(rec.Runner(), kMounts,
                          "/dev/shm/faultline-r1/n1/data", "", &log)
                .ok());
    REQUIRE(rec.calls.size() == 2);
    CHECK(rec.calls[1][0] == "fusermount3");
  }
}
