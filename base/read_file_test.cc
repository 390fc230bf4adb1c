#include "base/read_file.h"

#include <gtest/gtest.h>

#include "base/durable_file.h"
#include "base/test_dir.h"

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

}  // namespace
}  // namespace clickatron
