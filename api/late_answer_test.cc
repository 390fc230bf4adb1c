#include "api/late_answer.h"

#include <gtest/gtest.h>

#include "base/test_dir.h"
#include "keyformat/footer.h"
#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

const int64_t kDay = *ParseDay("2026-11-20");

class LateAnswerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<LateStore>> s = LateStore::Open(dir_.path());
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(s).value();
  }
  void Add(uint32_t shard, int64_t day, uint64_t seq, std::string_view lookups, std::string_view counters) {
    LatePart p;
    p.shard = shard;
    p.day = day;
    p.seq = seq;
    p.records = 1;
    p.lookups = lookups;
    p.counters = counters;
    Result<uint64_t> id = store_->Append(p);
    ASSERT_TRUE(id.ok() && *id > 0);
  }
  LateAnswer Answer(uint64_t after, size_t max_bytes = kLateAnswerBytes) {
    LateAnswer a;
    Status s = BuildLateAnswer(*store_, after, max_bytes, &a);
    EXPECT_TRUE(s.ok()) << s.message();
    return a;
  }
  static std::string Footed(const std::string& body, uint64_t count) {
    FooterCheck check;
    check.AddBytes(body, count);
    return body + FormatFooter(Footer{check.count(), check.digest()});
  }

  TestDir dir_;
  std::unique_ptr<LateStore> store_;
};

TEST_F(LateAnswerTest, EmptyIsTheFooterAlone) {
  LateAnswer a = Answer(0);
  EXPECT_EQ(a.body, "#END count=0 xxh64=ef46db3751d8e999\n");
  EXPECT_EQ(a.first, 1u);
  EXPECT_EQ(a.last, 0u);
  EXPECT_EQ(a.entries, 0u);
  EXPECT_FALSE(a.more);
}

TEST_F(LateAnswerTest, SumsCountersOnceEachLookupInKeyOrder) {
  Add(0, kDay, 3, "_l|h0aMB8AuNw4=,http://www.facebook.com/\n", "u|ab.c41l,2\nu|ab+.c41l,1\n");
  Add(1, kDay, 3, "", "c.u|ab.US.c41l,7\n");
  Add(0, kDay + 1, 4, "_l|h0aMB8AuNw4=,http://www.facebook.com/\n", "u|ab.c41l,-5\nu|ab.c41m,1\n");
  LateAnswer a = Answer(0);
  // Key order: '+' (0x2B) before '.' (0x2E), so `u|ab+.c41l` before `u|ab.c41l`; the
  // lookup ('_', 0x5F) before `c.` and `u|` (0x63, 0x75).
  EXPECT_EQ(a.body, Footed("_l|h0aMB8AuNw4=,http://www.facebook.com/\n"
                           "c.u|ab.US.c41l,7\n"
                           "u|ab+.c41l,1\n"
                           "u|ab.c41l,-3\n"
                           "u|ab.c41m,1\n",
                           5));
  EXPECT_EQ(a.records, 5u);
  EXPECT_EQ(a.entries, 3u);
  EXPECT_EQ(a.first, 1u);
  EXPECT_EQ(a.last, 3u);
  EXPECT_FALSE(a.more);
  FootedStreamCheck check;
  check.Add(a.body);
  EXPECT_TRUE(check.Finish().ok());

  a = Answer(2);
  EXPECT_EQ(a.body, Footed("_l|h0aMB8AuNw4=,http://www.facebook.com/\nu|ab.c41l,-5\nu|ab.c41m,1\n", 3));
  EXPECT_EQ(a.first, 3u);
  EXPECT_EQ(a.last, 3u);
}

TEST_F(LateAnswerTest, BoundedByWholeEntries) {
  Add(0, kDay, 1, "", "u|a.c41l,1\n");
  Add(0, kDay, 2, "", "u|a.c41l,2\n");
  Add(0, kDay, 3, "", "u|a.c41l,4\n");
  LateAnswer a = Answer(0, 1);  // one entry at least
  EXPECT_EQ(a.body, Footed("u|a.c41l,1\n", 1));
  EXPECT_EQ(a.first, 1u);
  EXPECT_EQ(a.last, 1u);
  EXPECT_TRUE(a.more);
  a = Answer(1, 1);
  EXPECT_EQ(a.body, Footed("u|a.c41l,2\n", 1));
  EXPECT_TRUE(a.more);
  a = Answer(2, 1);
  EXPECT_EQ(a.body, Footed("u|a.c41l,4\n", 1));
  EXPECT_FALSE(a.more);
}

TEST_F(LateAnswerTest, SumsPastInt64AreExactAndPast128BitsANamedError) {
  Add(0, kDay, 1, "", "u|a.c41l,9223372036854775807\n");
  Add(0, kDay, 2, "", "u|a.c41l,9223372036854775807\nu|b.c41l,-9223372036854775808\n");
  Add(0, kDay, 3, "", "u|a.c41l,3\nu|b.c41l,-9223372036854775808\n");
  LateAnswer a;
  ASSERT_TRUE(BuildLateAnswer(*store_, 0, kLateAnswerBytes, &a).ok());
  EXPECT_EQ(a.body, Footed("u|a.c41l,18446744073709551617\nu|b.c41l,-18446744073709551616\n", 2));
  Add(0, kDay, 4, "", "u|a.c41l,170141183460469231731687303715884105727\n");
  Status s = BuildLateAnswer(*store_, 0, kLateAnswerBytes, &a);
  EXPECT_EQ(s.message(), "key 'u|a.c41l': the late entries add up past 128 bits");
}

}  // namespace
}  // namespace clickatron
