#include "base/errno_status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace clickatron {
namespace {

TEST(ErrnoStatus, WhatPathAndReason) {
  errno = ENOENT;
  const Status s = ErrnoStatus("open", "/w/meta");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "open /w/meta: No such file or directory");
}

TEST(ErrnoStatus, SavedErrnoAndAnyContext) {
  errno = 0;
  EXPECT_EQ(ErrnoStatus(ENOSPC, "/w/x.csv: write").message(), "/w/x.csv: write: No space left on device");
  EXPECT_EQ(ErrnoStatus(EACCES, "cannot connect").message(), "cannot connect: Permission denied");
}

}  // namespace
}  // namespace clickatron
