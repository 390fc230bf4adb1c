#include "wire/generation.h"

#include <gtest/gtest.h>

namespace clickatron::wire {
namespace {

// The tag of a generation's answers and the If-None-Match values that name it (RFC 9110
// 13.1.2: a list, `*`, weak comparison).
TEST(Etag, NamesTheGenerationAndMatchesWhatAClientHolds) {
  EXPECT_EQ(GenerationEtag("20120325-914c817bc232203e"), "\"20120325-914c817bc232203e\"");
  EXPECT_TRUE(EtagMatches("\"g7\"", "g7"));
  EXPECT_TRUE(EtagMatches("*", "g7"));
  EXPECT_TRUE(EtagMatches("W/\"g7\"", "g7"));
  EXPECT_TRUE(EtagMatches("\"g6\", \"g7\"", "g7"));
  EXPECT_TRUE(EtagMatches(" \"g7\" ,\"g8\"", "g7"));
  EXPECT_FALSE(EtagMatches("\"g7\"", "g8"));
  EXPECT_FALSE(EtagMatches("\"g7\"", ""));  // no manifest: no tag, never 304
  EXPECT_FALSE(EtagMatches("*", ""));
  EXPECT_FALSE(EtagMatches("g7", "g7"));       // unquoted is not a tag
  EXPECT_FALSE(EtagMatches("\"g7", "g7"));
  EXPECT_FALSE(EtagMatches("\"g77\"", "g7"));
  EXPECT_FALSE(EtagMatches("", "g7"));
  EXPECT_FALSE(EtagMatches(",,", "g7"));
}

// The release waits out twice the lease a client may take a generation as served for.
TEST(Lease, TheReleaseWaitsTwiceTheLease) {
  static_assert(kReleaseAfterServedMs == 2 * kGenerationConfirmMs);
  EXPECT_EQ(kGenerationConfirmMs, 1000);
}

}  // namespace
}  // namespace clickatron::wire
