// NamespaceJournal on a temporary directory (no root, no FUSE): what each
// undo restores, and which records each commit rule makes durable.
#include "nemesis/disk/namespace_journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

using faultline::nemesis::disk::CommitMode;
using faultline::nemesis::disk::NamespaceJournal;

namespace {

namespace fs = std::filesystem;

// A backing root and a trash directory under a fresh temporary directory.
struct Tree {
  fs::path top;
  fs::path root;
  fs::path trash;
  std::unique_ptr<NamespaceJournal> journal;

  explicit Tree(CommitMode mode = CommitMode::kDirFsync) {
    std::string templ = (fs::temp_directory_path() / "fl-journal.XXXXXX");
    REQUIRE(mkdtemp(templ.data()) != nullptr);
    top = templ;
    root = top / "root";
    trash = top / "trash";
    fs::create_directory(root);
    fs::create_directory(trash);
    auto opened = NamespaceJournal::Open(root, trash, mode);
    REQUIRE(opened.ok());
    journal = std::move(*opened);
  }
  ~Tree() {
    journal.reset();
    std::error_code ec;
    fs::remove_all(top, ec);
  }
  void Put(const std::string& rel, const std::string& data) const {
    std::ofstream(root / rel) << data;
  }
  std::string Get(const std::string& rel) const {
    std::ifstream in(root / rel);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  bool Exists(const std::string& rel) const {
    return fs::exists(fs::symlink_status(root / rel));
  }
  std::size_t TrashCount() const {
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(trash), fs::directory_iterator()));
  }
  // Commits what an fsync of directory `rel` makes durable (dir-fsync).
  std::uint64_t FsyncDir(const std::string& rel) const {
    struct stat st {};
    REQUIRE(stat((root / rel).c_str(), &st) == 0);
    return journal->CommitDir(st.st_dev, st.st_ino);
  }
  void Create(const std::string& rel, const std::string& data) const {
    auto fd = journal->Create(rel, O_RDWR | O_CREAT, 0644);
    REQUIRE(fd.ok());
    REQUIRE(write(*fd, data.data(), data.size()) ==
            static_cast<ssize_t>(data.size()));
    close(*fd);
  }
};

}  // namespace

TEST_CASE("journal: undo removes created files, dirs, links and symlinks",
          "[disk][journal]") {
  Tree t;
  t.Put("old", "kept");
  t.Create("new", "x");
  REQUIRE(t.journal->Mkdir("d", 0755).ok());
  t.Create("d/inner", "y");
  REQUIRE(t.journal->Mkdir("d/sub", 0700).ok());
  REQUIRE(t.journal->Link("old", "hard").ok());
  REQUIRE(t.journal->Symlink("old", "soft").ok());
  REQUIRE(t.journal->Mknod("fifo", S_IFIFO | 0600, 0).ok());
  CHECK(t.journal->Status().pending == 7);
  CHECK(t.Exists("hard"));
  CHECK(t.Exists("soft"));

  auto report = t.journal->UndoAll();
  CHECK(report.undone == 7);
  CHECK(report.failed == 0);
  CHECK_FALSE(t.Exists("new"));
  CHECK_FALSE(t.Exists("d"));
  CHECK_FALSE(t.Exists("hard"));
  CHECK_FALSE(t.Exists("soft"));
  CHECK_FALSE(t.Exists("fifo"));
  CHECK(t.Get("old") == "kept");
  CHECK(t.journal->Status().pending == 0);
}

TEST_CASE("journal: creating an existing file is not recorded",
          "[disk][journal]") {
  Tree t;
  t.Put("f", "data");
  auto fd = t.journal->Create("f", O_RDWR | O_CREAT, 0644);
  REQUIRE(fd.ok());
  close(*fd);
  CHECK(t.journal->Status().pending == 0);
  auto excl = t.journal->Create("f", O_RDWR | O_CREAT | O_EXCL, 0644);
  REQUIRE_FALSE(excl.ok());
  CHECK(excl.code() == EEXIST);
  t.journal->UndoAll();
  CHECK(t.Get("f") == "data");
}

TEST_CASE("journal: undo of unlink brings the file back from the trash",
          "[disk][journal]") {
  Tree t;
  t.Put("f", "contents");
  REQUIRE(t.journal->Unlink("f").ok());
  CHECK_FALSE(t.Exists("f"));
  CHECK(t.TrashCount() == 1);
  auto dir = t.journal->Unlink("missing");
  CHECK(dir.code() == ENOENT);
  CHECK(t.journal->UndoAll().undone == 1);
  CHECK(t.Get("f") == "contents");
  CHECK(t.TrashCount() == 0);
}

TEST_CASE("journal: undo of rename over a file restores both",
          "[disk][journal]") {
  Tree t;
  t.Put("a", "new version");
  t.Put("b", "old version");
  REQUIRE(t.journal->Mkdir("d", 0755).ok());
  REQUIRE(t.FsyncDir("") == 1);
  REQUIRE(t.journal->Rename("a", "b").ok());
  REQUIRE(t.journal->Rename("b", "d/c").ok());
  CHECK(t.Get("d/c") == "new version");
  CHECK_FALSE(t.Exists("b"));
  auto report = t.journal->UndoAll();
  CHECK(report.undone == 2);
  CHECK(t.Get("a") == "new version");
  CHECK(t.Get("b") == "old version");
  CHECK_FALSE(t.Exists("d/c"));
  CHECK(t.TrashCount() == 0);
}

TEST_CASE("journal: rename flags", "[disk][journal]") {
  Tree t;
  t.Put("a", "1");
  t.Put("b", "2");
  auto noreplace = t.journal->Rename("a", "b", RENAME_NOREPLACE);
  CHECK(noreplace.code() == EEXIST);
  CHECK(t.journal->Rename("a", "b", RENAME_EXCHANGE).code() == EINVAL);
  CHECK(t.journal->Rename("a", "c", RENAME_NOREPLACE).ok());
  CHECK(t.journal->Status().pending == 1);
  CHECK(t.Get("c") == "1");
}

TEST_CASE("journal: undo of rmdir and of rename over an empty dir",
          "[disk][journal]") {
  Tree t;
  fs::create_directory(t.root / "gone");
  chmod((t.root / "gone").c_str(), 0710);
  fs::create_directory(t.root / "target");
  chmod((t.root / "target").c_str(), 0750);
  fs::create_directory(t.root / "src");
  REQUIRE(t.journal->Rmdir("gone").ok());
  REQUIRE(t.journal->Rename("src", "target").ok());
  CHECK_FALSE(t.Exists("gone"));
  CHECK(t.journal->Rmdir("missing").code() == ENOENT);
  CHECK(t.journal->UndoAll().undone == 2);
  struct stat st {};
  REQUIRE(stat((t.root / "gone").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0710);
  REQUIRE(stat((t.root / "target").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0750);
  CHECK(t.Exists("src"));
}

TEST_CASE("journal: records follow a directory renamed later",
          "[disk][journal]") {
  Tree t;
  REQUIRE(t.journal->Mkdir("a", 0755).ok());
  t.Create("a/f", "x");
  REQUIRE(t.journal->Rename("a", "b").ok());
  // Only the root's records are durable: mkdir a and the rename.
  CHECK(t.FsyncDir("") == 2);
  CHECK(t.Exists("b/f"));
  auto report = t.journal->UndoAll();
  CHECK(report.undone == 1);
  CHECK(report.failed == 0);
  CHECK(t.Exists("b"));
  CHECK_FALSE(t.Exists("b/f"));
}

TEST_CASE("journal: dir-fsync commits only the fsynced directory's records",
          "[disk][journal]") {
  Tree t;
  REQUIRE(t.journal->Mkdir("d", 0755).ok());
  REQUIRE(t.FsyncDir("") == 1);
  t.Create("d/f", "data");
  t.Create("top", "t");
  t.Put("d/victim", "v");
  REQUIRE(t.journal->Unlink("d/victim").ok());
  CHECK(t.TrashCount() == 1);
  CHECK(t.FsyncDir("d") == 2);  // the create of d/f and the unlink
  CHECK(t.TrashCount() == 0);
  CHECK(t.journal->Status().pending == 1);
  auto report = t.journal->UndoAll();
  CHECK(report.undone == 1);
  CHECK(t.Exists("d/f"));
  CHECK_FALSE(t.Exists("d/victim"));
  CHECK_FALSE(t.Exists("top"));
}

TEST_CASE("journal: a rename is durable with its destination directory",
          "[disk][journal]") {
  Tree t;
  fs::create_directory(t.root / "src");
  fs::create_directory(t.root / "dst");
  t.Put("src/f", "x");
  REQUIRE(t.journal->Rename("src/f", "dst/f").ok());
  CHECK(t.FsyncDir("src") == 0);
  CHECK(t.FsyncDir("dst") == 1);
  CHECK(t.journal->UndoAll().undone == 0);
  CHECK(t.Exists("dst/f"));
}

TEST_CASE("journal: CommitAll (any-fsync, sync) keeps everything",
          "[disk][journal]") {
  Tree t(CommitMode::kAnyFsync);
  CHECK(t.journal->mode() == CommitMode::kAnyFsync);
  t.Put("old", "o");
  t.Create("f", "x");
  REQUIRE(t.journal->Unlink("old").ok());
  CHECK(t.journal->CommitAll() == 2);
  CHECK(t.TrashCount() == 0);
  CHECK(t.journal->UndoAll().undone == 0);
  CHECK(t.Exists("f"));
  CHECK_FALSE(t.Exists("old"));
  auto s = t.journal->Status();
  CHECK(s.committed == 2);
  CHECK(s.pending == 0);
}

TEST_CASE("journal: undo is best-effort and checks inodes", "[disk][journal]") {
  Tree t;
  t.Create("f", "mine");
  // Someone else replaces f behind the journal's back: undo must not
  // remove the stranger, and the other records are still undone.
  // (Made before f goes, so its inode number differs.)
  t.Put("g", "stranger");
  fs::rename(t.root / "g", t.root / "f");
  REQUIRE(t.journal->Mkdir("d", 0755).ok());
  auto report = t.journal->UndoAll();
  CHECK(report.undone == 1);
  CHECK(report.failed == 1);
  CHECK_FALSE(report.first_error.empty());
  CHECK(t.Get("f") == "stranger");
  CHECK_FALSE(t.Exists("d"));
  CHECK(t.journal->Status().undo_failed == 1);
}

TEST_CASE("journal: Open checks its directories and clears old trash",
          "[disk][journal]") {
  Tree t;
  std::ofstream(t.trash / "fl-1-1") << "left by a killed daemon";
  std::ofstream(t.trash / "other") << "not ours";
  auto again = NamespaceJournal::Open(t.root, t.trash, CommitMode::kDirFsync);
  REQUIRE(again.ok());
  CHECK_FALSE(fs::exists(t.trash / "fl-1-1"));
  CHECK(fs::exists(t.trash / "other"));
  auto missing =
      NamespaceJournal::Open(t.root / "nope", t.trash, CommitMode::kDirFsync);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().find("backing") != std::string::npos);
}
