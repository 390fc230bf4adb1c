#include "keyformat/key_value.h"

#include <gtest/gtest.h>

namespace clickatron {
namespace {

TEST(KeyValueText, ParsesTrimsAndKeepsRepeats) {
  Result<KeyValueText> f = KeyValueText::Parse("# c\n a = 1 \n\nb=two words\na = 3\n\t#x = y\nc = \r\n");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->Get("a"), "1");
  EXPECT_EQ(f->GetAll("a"), (std::vector<std::string>{"1", "3"}));
  EXPECT_EQ(f->Get("b"), "two words");
  EXPECT_TRUE(f->Has("c"));
  EXPECT_EQ(f->Get("c"), "");
  EXPECT_FALSE(f->Has("#x"));
  EXPECT_FALSE(f->Has("d"));
  EXPECT_EQ(f->Get("d"), "");
  EXPECT_TRUE(f->GetAll("d").empty());
  ASSERT_EQ(f->entries().size(), 4u);
  EXPECT_EQ(f->entries()[0].line, 2u);
  EXPECT_EQ(f->entries()[2].line, 5u);
  EXPECT_EQ(f->Format(), "a = 1\nb = two words\na = 3\nc = \n");
}

TEST(KeyValueText, SplitsAtTheFirstEquals) {
  Result<KeyValueText> f = KeyValueText::Parse("url = http://x/?a=b\r\nlast=no newline");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->Get("url"), "http://x/?a=b");
  EXPECT_EQ(f->Get("last"), "no newline");
}

TEST(KeyValueText, RefusesALineWithoutEquals) {
  EXPECT_EQ(KeyValueText::Parse("a = 1\nnonsense\n").status().message(), "line 2: 'nonsense' is not 'key = value'");
  EXPECT_EQ(KeyValueText::Parse("  last_day 2026-01-01\r\n").status().message(),
            "line 1: 'last_day 2026-01-01' is not 'key = value'");
}

TEST(KeyValueText, RoundTrips) {
  KeyValueText f;
  f.Add("generation", "20260321-1");
  f.Add("covers", "2012-03-25 export-1f0c");
  f.Add("covers", "2012-03-26 export-2a0d");
  const std::string text = f.Format();
  EXPECT_EQ(text, "generation = 20260321-1\ncovers = 2012-03-25 export-1f0c\ncovers = 2012-03-26 export-2a0d\n");
  Result<KeyValueText> back = KeyValueText::Parse(text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->Format(), text);
  EXPECT_EQ(back->GetAll("covers").size(), 2u);
  EXPECT_TRUE(KeyValueText::Parse("").ok());
  EXPECT_EQ(KeyValueText().Format(), "");
}

TEST(ParseCount, TakesDecimalDigitsOnly) {
  uint64_t v = 7;
  EXPECT_TRUE(ParseCount("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseCount("12", &v));
  EXPECT_EQ(v, 12u);
  EXPECT_TRUE(ParseCount("18446744073709551615", &v));
  EXPECT_EQ(v, UINT64_MAX);
  for (const char* bad : {"", " 1", "1 ", "+1", "-1", "1x", "x", "0x10", "1.5", "18446744073709551616"}) {
    EXPECT_FALSE(ParseCount(bad, &v)) << bad;
  }
}

}  // namespace
}  // namespace clickatron
