#include "realtime/batch.h"

#include <gtest/gtest.h>

#include "keyformat/ymdh.h"

namespace clickatron::realtime {
namespace {

// c3p1 = 2012-03-25 01:00 UTC (docs/formats.md#hours-ymdh).
constexpr int64_t kDay = 15424;  // 2012-03-25

TEST(IncrBatch, ParsesTotalsAndSubtotals) {
  std::vector<IncrLine> lines;
  Status s = ParseIncrBatch("u|jehiah.c3p1,5\nref.u|jehiah.h0aMB8AuNw4=.c3p1,-2\n", &lines);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].key, "u|jehiah.c3p1");
  EXPECT_EQ(lines[0].delta, 5);
  EXPECT_EQ(lines[0].day, kDay);
  EXPECT_EQ(lines[0].line, 1u);
  EXPECT_EQ(lines[1].key, "ref.u|jehiah.h0aMB8AuNw4=.c3p1");
  EXPECT_EQ(lines[1].delta, -2);
  EXPECT_EQ(lines[1].line, 2u);
  EXPECT_EQ(ParseDay("2012-03-25").value(), kDay);
}

TEST(IncrBatch, LastLineNeedsNoNewlineAndEmptyBodyIsEmpty) {
  std::vector<IncrLine> lines;
  ASSERT_TRUE(ParseIncrBatch("u|a.c3p1,9223372036854775807", &lines).ok());
  EXPECT_EQ(lines[0].delta, INT64_MAX);
  ASSERT_TRUE(ParseIncrBatch("", &lines).ok());
  EXPECT_TRUE(lines.empty());
}

TEST(IncrBatch, ErrorsNameTheLine) {
  std::vector<IncrLine> lines;
  Status s = ParseIncrBatch("u|a.c3p1,1\nu|a.c3p1,x\n", &lines);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("line 2: delta: count 'x' is not an integer", 0), 0u) << s.message();

  s = ParseIncrBatch("u|a.c3p1,1\n\nu|a.c3p1,1\n", &lines);
  EXPECT_EQ(s.message(), "line 2: empty line");

  s = ParseIncrBatch("u|a.c3p1,99999999999999999999\n", &lines);
  EXPECT_NE(s.message().find("line 1: delta: count '99999999999999999999' does not fit in 64 bits"),
            std::string::npos) << s.message();

  s = ParseIncrBatch("u|a.c3p1 5\n", &lines);
  EXPECT_EQ(s.message().rfind("line 1: ", 0), 0u);
  EXPECT_NE(s.message().find("separator"), std::string::npos) << s.message();

  s = ParseIncrBatch("u|a.c2u0,1\n", &lines);  // Feb 30
  EXPECT_EQ(s.message().rfind("line 1: ", 0), 0u) << s.message();

  s = ParseIncrBatch("u|a,1\n", &lines);  // an archive key: no time token
  EXPECT_EQ(s.message().rfind("line 1: ", 0), 0u) << s.message();

  s = ParseIncrBatch("u|a.c3p1,1\r\n", &lines);
  EXPECT_EQ(s.message().rfind("line 1: delta: ", 0), 0u) << s.message();

  s = ParseIncrBatch("_l|h0aMB8AuNw4=,5\n", &lines);
  EXPECT_EQ(s.message(), "line 1: lookup record '_l|h0aMB8AuNw4=' is not a counter (send lookups to /set)");
}

TEST(LookupBatch, ParsesAndValidatesEscaping) {
  std::vector<LookupLine> lines;
  Status s = ParseLookupBatch("_l|h0aMB8AuNw4=,http://www.facebook.com/\n_l|AAAAAAAAAAA=,a%0Ab,c\n", &lines);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].value, "http://www.facebook.com/");
  EXPECT_EQ(lines[1].value, "a%0Ab,c");  // kept escaped; the first ',' splits

  s = ParseLookupBatch("_l|h0aMB8AuNw4=,100%\n", &lines);
  EXPECT_EQ(s.message().rfind("line 1: lookup value: ", 0), 0u) << s.message();
  s = ParseLookupBatch("u|a.c3p1,1\n", &lines);
  EXPECT_EQ(s.message(), "line 1: 'u|a.c3p1' is not a lookup key (_l|{hash}); counters go to /incr");
  s = ParseLookupBatch("_l|h0aMB8AuNw4=,\n", &lines);
  EXPECT_EQ(s.message(), "line 1: lookup value is empty");
  s = ParseLookupBatch("_l|short,x\n", &lines);
  EXPECT_EQ(s.message().rfind("line 1: ", 0), 0u) << s.message();
}

}  // namespace
}  // namespace clickatron::realtime
