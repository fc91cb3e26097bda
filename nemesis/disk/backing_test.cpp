// PosixBacking over a real file in /tmp (no root needed).
#include "nemesis/disk/backing.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "nemesis/test_fakes.h"

using faultline::nemesis::disk::PosixBacking;
using faultline::nemesis::testing::TempDir;

TEST_CASE("posix backing reads and writes a file by its id", "[disk]") {
  TempDir dir("faultline-disk");
  const std::string path = (dir.path / "data").string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  PosixBacking backing;
  backing.Adopt(7, fd);

  REQUIRE(backing.Pwrite(7, 3, "abc").ok());
  auto size = backing.Size(7);
  REQUIRE(size.ok());
  CHECK(*size == 6);
  char buf[16] = {};
  auto got = backing.Pread(7, 0, buf, sizeof buf);
  REQUIRE(got.ok());
  CHECK(*got == 6);
  CHECK(std::string(buf, 6) == std::string("\0\0\0abc", 6));
  REQUIRE(backing.Truncate(7, 4).ok());
  CHECK(*backing.Size(7) == 4);
  CHECK(backing.Fsync(7).ok());

  auto unknown = backing.Size(8);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.code() == EBADF);
  CHECK(backing.Close(7));
  CHECK_FALSE(backing.Close(7));
  CHECK(backing.Fsync(7).code() == EBADF);
}
