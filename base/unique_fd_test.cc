#include "base/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <utility>

namespace clickatron {
namespace {

// Whether fd is an open descriptor of this process.
bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

int OpenNull() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

TEST(UniqueFd, ClosesWhenItGoes) {
  int raw = -1;
  {
    UniqueFd fd(OpenNull());
    raw = fd.get();
    ASSERT_TRUE(fd.valid());
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFd, NoneFromAFailedOpen) {
  UniqueFd fd(::open("/nonexistent/x", O_RDONLY | O_CLOEXEC));
  EXPECT_FALSE(fd.valid());
  EXPECT_EQ(fd.get(), -1);
  UniqueFd empty;
  EXPECT_FALSE(empty.valid());
}

TEST(UniqueFd, ReleaseGivesUpOwnership) {
  UniqueFd fd(OpenNull());
  const int raw = fd.release();
  EXPECT_FALSE(fd.valid());
  EXPECT_TRUE(IsOpen(raw));  // the destructor below leaves it alone
  ::close(raw);
}

TEST(UniqueFd, ResetClosesTheOldOne) {
  UniqueFd fd(OpenNull());
  const int first = fd.get();
  const int second = OpenNull();
  fd.reset(second);
  EXPECT_FALSE(IsOpen(first));
  EXPECT_EQ(fd.get(), second);
  fd.reset();
  EXPECT_FALSE(IsOpen(second));
  EXPECT_FALSE(fd.valid());
}

TEST(UniqueFd, MovesOwnership) {
  UniqueFd a(OpenNull());
  const int raw = a.get();
  UniqueFd b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): moved-from holds none
  EXPECT_EQ(b.get(), raw);
  UniqueFd c(OpenNull());
  const int other = c.get();
  c = std::move(b);  // closes c's own first
  EXPECT_FALSE(IsOpen(other));
  EXPECT_EQ(c.get(), raw);
  EXPECT_TRUE(IsOpen(raw));
}

TEST(UniqueFd, CloseReportsTheResult) {
  UniqueFd fd(OpenNull());
  const int raw = fd.get();
  EXPECT_TRUE(fd.Close("/dev/null").ok());
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(IsOpen(raw));
  // A descriptor that is not open: close fails with EBADF, and it is named.
  UniqueFd bad(raw);
  EXPECT_EQ(bad.Close("/dev/null").message(), "close /dev/null: Bad file descriptor");
  EXPECT_FALSE(bad.valid());
}

}  // namespace
}  // namespace clickatron
