#include "base/status.h"

#include <gtest/gtest.h>

namespace clickatron {
namespace {

TEST(Status, OkHasNoCodeAndNoMessage) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status::OK().code(), StatusCode::kOk);
  EXPECT_EQ(Status::OK().message(), "");
}

TEST(Status, AnErrorIsKErrorUnlessNamed) {
  Status plain = Status::Error("time token 'zzzz' is not YMDH");
  EXPECT_FALSE(plain.ok());
  EXPECT_EQ(plain.code(), StatusCode::kError);
  Status named = Status::Error(StatusCode::kRealtimeUnavailable, "archive is in this message");
  EXPECT_FALSE(named.ok());
  EXPECT_EQ(named.code(), StatusCode::kRealtimeUnavailable);  // the code, not the text
  EXPECT_EQ(named.message(), "archive is in this message");
}

TEST(Status, PrefixedKeepsTheCode) {
  Status s = Status::Error(StatusCode::kArchiveUnavailable, "no live replica").Prefixed("shard 2: ");
  EXPECT_EQ(s.code(), StatusCode::kArchiveUnavailable);
  EXPECT_EQ(s.message(), "shard 2: no live replica");
  EXPECT_TRUE(Status::OK().Prefixed("x: ").ok());
}

TEST(Result, StatusCarriesTheCode) {
  Result<int> r(Status::Error(StatusCode::kArchiveUnavailable, "down"));
  EXPECT_EQ(r.status().code(), StatusCode::kArchiveUnavailable);
  EXPECT_EQ(Result<int>(3).status().code(), StatusCode::kOk);
}

}  // namespace
}  // namespace clickatron
