#include "realtime/ring_id.h"

#include <gtest/gtest.h>

#include "base/read_file.h"
#include "base/test_dir.h"
#include "keyformat/hex64.h"

namespace clickatron::realtime {
namespace {

TEST(RingId, CreatedOnceThenReadBack) {
  TestDir dir;
  Result<std::string> first = LoadOrCreateRingId(dir.path());
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(ParseHex64(*first).ok()) << *first;
  std::string text;
  ASSERT_TRUE(ReadFile(dir.path() + "/ring-id", &text).ok());
  EXPECT_EQ(text, *first + "\n");
  Result<std::string> again = LoadOrCreateRingId(dir.path());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
}

TEST(RingId, ADamagedFileIsAnErrorNamingIt) {
  TestDir dir;
  dir.Write("ring-id", "not-hex\n");
  Result<std::string> id = LoadOrCreateRingId(dir.path());
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().message(), dir.path() + "/ring-id: 'not-hex' is not 16 lowercase hex digits");
}

}  // namespace
}  // namespace clickatron::realtime
