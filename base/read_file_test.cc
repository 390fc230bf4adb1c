#include "base/read_file.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include "base/durable_file.h"
#include "base/test_dir.h"
#include "base/unique_fd.h"

namespace clickatron {
namespace {

TEST(ReadFile, WholeFileMissingFileAndDirectory) {
  TestDir dir;
  const std::string path = dir.path() + "/f";
  std::string big(200000, 'x');
  big[123456] = '\n';
  ASSERT_TRUE(WriteFileAtomic(path, big).ok());
  std::string out = "old";
  ASSERT_TRUE(ReadFile(path, &out).ok());
  EXPECT_EQ(out, big);

  bool exists = true;
  ASSERT_TRUE(ReadFileIfExists(dir.path() + "/none", &out, &exists).ok());
  EXPECT_FALSE(exists);
  EXPECT_EQ(out, "");
  Status s = ReadFile(dir.path() + "/none", &out);
  EXPECT_EQ(s.message(), "open " + dir.path() + "/none: No such file or directory");
  s = ReadFile(dir.path(), &out);  // a directory opens, but read fails: EISDIR
  EXPECT_EQ(s.message(), "read " + dir.path() + ": Is a directory");
}

TEST(ReadFile, AsAValue) {
  TestDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/f", "abc\n").ok());
  Result<std::string> text = ReadFile(dir.path() + "/f");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "abc\n");
  EXPECT_EQ(ReadFile(dir.path() + "/none").status().message(),
            "open " + dir.path() + "/none: No such file or directory");
}

TEST(ReadToEnd, FromTheOffsetAndAtMostMaxBytes) {
  TestDir dir;
  const std::string path = dir.path() + "/f";
  ASSERT_TRUE(WriteFileAtomic(path, "0123456789").ok());
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  std::string out = "old";
  ASSERT_TRUE(ReadToEnd(fd.get(), path, &out, 4).ok());
  EXPECT_EQ(out, "0123");
  ASSERT_TRUE(ReadToEnd(fd.get(), path, &out).ok());  // on from where the last one stopped
  EXPECT_EQ(out, "456789");
  ASSERT_TRUE(ReadToEnd(fd.get(), path, &out).ok());
  EXPECT_EQ(out, "");
  EXPECT_EQ(ReadToEnd(-1, "x", &out).message(), "read x: Bad file descriptor");
}

}  // namespace
}  // namespace clickatron
