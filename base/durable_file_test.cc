#include "base/durable_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/test_dir.h"

namespace clickatron {
namespace {

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(WriteFileAtomic, CreatesAndReplacesLeavingNoTempFile) {
  TestDir dir;
  const std::string path = dir / "cursors";
  ASSERT_TRUE(WriteFileAtomic(path, "api 12\n").ok());
  EXPECT_EQ(Contents(path), "api 12\n");
  ASSERT_TRUE(WriteFileAtomic(path, "").ok());
  EXPECT_EQ(Contents(path), "");
  ASSERT_TRUE(WriteFileAtomic(path, std::string(1 << 20, 'x')).ok());
  EXPECT_EQ(Contents(path).size(), size_t{1} << 20);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(WriteFileAtomic, ErrorsNameTheCallAndKeepTheOldFile) {
  TestDir dir;
  EXPECT_EQ(WriteFileAtomic(dir / "missing/meta", "x").message(),
            "create " + dir.path() + "/missing/meta.tmp: No such file or directory");
  // The temp name is taken by a directory: the rename fails, the old file stays whole.
  const std::string path = dir.Write("meta", "old\n");
  std::filesystem::create_directory(path + ".tmp");
  std::filesystem::create_directory(path + ".tmp/x");
  const Status s = WriteFileAtomic(path, "new\n");
  EXPECT_EQ(s.message(), "create " + path + ".tmp: Is a directory");
  EXPECT_EQ(Contents(path), "old\n");
  // The rename fails (a directory is in the way): the temp file goes.
  const std::string busy = dir / "busy";
  std::filesystem::create_directories(busy + "/x");
  EXPECT_EQ(WriteFileAtomic(busy, "new\n").message(),
            "rename " + busy + ".tmp to " + busy + ": Is a directory");
  EXPECT_FALSE(std::filesystem::exists(busy + ".tmp"));
}

TEST(WriteFileAtomicWith, WritesInPiecesAndAFailedWriteKeepsTheOldFile) {
  TestDir dir;
  const std::string path = dir.Write("late", "old\n");
  std::string tmp_seen;
  ASSERT_TRUE(WriteFileAtomicWith(path, [&](int fd, const std::string& tmp) {
                tmp_seen = tmp;
                for (const char* piece : {"head\n", "entry 1\n", "entry 2\n"}) {
                  if (Status s = WriteAll(fd, piece, tmp); !s.ok()) return s;
                }
                return Status::OK();
              }).ok());
  EXPECT_EQ(tmp_seen, path + ".tmp");
  EXPECT_EQ(Contents(path), "head\nentry 1\nentry 2\n");
  // The writer's error is returned as it is; the temp file goes, the file stays.
  Status s = WriteFileAtomicWith(path, [](int fd, const std::string& tmp) {
    (void)WriteAll(fd, "half", tmp);
    return Status::Error("pread late: Input/output error");
  });
  EXPECT_EQ(s.message(), "pread late: Input/output error");
  EXPECT_EQ(Contents(path), "head\nentry 1\nentry 2\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(RenameDurable, MovesAndNamesBothPaths) {
  TestDir dir;
  const std::string from = dir.Write("a.tmp", "a\n");
  ASSERT_TRUE(RenameDurable(from, dir / "a").ok());
  EXPECT_EQ(Contents(dir / "a"), "a\n");
  EXPECT_EQ(RenameDurable(from, dir / "b").message(),
            "rename " + from + " to " + dir.path() + "/b: No such file or directory");
  // A bare name is in the current directory.
  const std::string cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  std::ofstream("c.tmp") << "c";
  const Status s = RenameDurable("c.tmp", "c");
  std::filesystem::current_path(cwd);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Contents(dir / "c"), "c");
}

TEST(SyncDir, SyncsADirectoryAndNamesAMissingOne) {
  TestDir dir;
  EXPECT_TRUE(SyncDir(dir.path()).ok());
  EXPECT_EQ(SyncDir(dir / "gone").message(), "open directory " + dir.path() + "/gone: No such file or directory");
}

TEST(WriteAll, WritesEverythingAtTheOffset) {
  TestDir dir;
  const std::string path = dir / "rounds";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(WriteAll(fd, "boot x\n", path).ok());
  ASSERT_TRUE(WriteAll(fd, "12\n", path).ok());
  ::close(fd);
  EXPECT_EQ(Contents(path), "boot x\n12\n");
  EXPECT_EQ(WriteAll(-1, "x", path).message(), "write " + path + ": Bad file descriptor");
}

}  // namespace
}  // namespace clickatron
