#include "net/query.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace clickatron::net {
namespace {

std::vector<std::pair<std::string, std::string>> Pairs(const Query& q) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const QueryParam& p : q.params()) out.emplace_back(p.name, p.value);
  return out;
}

using P = std::vector<std::pair<std::string, std::string>>;

TEST(Query, KeepsOrderAndRepeatedNames) {
  Query q;
  ASSERT_TRUE(q.Parse("key=a&k2=b&key=c&x").ok());
  EXPECT_EQ(Pairs(q), (P{{"key", "a"}, {"k2", "b"}, {"key", "c"}, {"x", ""}}));
  EXPECT_EQ(q.Get("key"), "a");
  EXPECT_EQ(q.Get("x"), "");
  EXPECT_FALSE(q.Get("missing").has_value());
  EXPECT_EQ(q.Count("key"), 2u);
}

TEST(Query, DecodesPercentAndPlus) {
  Query q;
  ASSERT_TRUE(q.Parse("key=u%7Cjehiah&h=h0aMB8AuNw4%3D&p=a%2Bb&s=a+b&n=%00&e=&&=v").ok());
  EXPECT_EQ(Pairs(q), (P{{"key", "u|jehiah"},
                         {"h", "h0aMB8AuNw4="},
                         {"p", "a+b"},
                         {"s", "a b"},
                         {"n", std::string(1, '\0')},
                         {"e", ""},
                         {"", "v"}}));
  ASSERT_TRUE(q.Parse("%6b%65%79=%c3%a9").ok());
  EXPECT_EQ(Pairs(q), (P{{"key", "\xc3\xa9"}}));
}

TEST(Query, BadPercentEncodingNamesTheParameter) {
  Query q;
  for (const char* bad : {"a=1&key=%zz", "a=1&key=%4", "a=1&key=%", "a=1&key=x%g1"}) {
    Status s = q.Parse(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.message(), "bad percent-encoding in query parameter 'key'") << bad;
    EXPECT_EQ(q.bad_param(), "key");
    EXPECT_EQ(Pairs(q), (P{{"a", "1"}}));
  }
  Status s = q.Parse("k%zz=1");
  EXPECT_EQ(s.message(), "bad percent-encoding in query parameter 'k%zz'");
  // A good parse after a bad one is clean.
  ASSERT_TRUE(q.Parse("key=1").ok());
  EXPECT_TRUE(q.status().ok());
  EXPECT_EQ(q.bad_param(), "");
}

TEST(Query, ReuseKeepsViewsValid) {
  Query q;
  ASSERT_TRUE(q.Parse("a=1").ok());
  std::string big = "k=" + std::string(10000, 'x') + "&k=" + std::string(5000, 'y');
  ASSERT_TRUE(q.Parse(big).ok());
  EXPECT_EQ(q.params()[0].value, std::string(10000, 'x'));
  EXPECT_EQ(q.params()[1].value, std::string(5000, 'y'));
  ASSERT_TRUE(q.Parse("").ok());
  EXPECT_TRUE(q.params().empty());
}

TEST(Query, PercentEncodeRoundTrips) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  std::string encoded = PercentEncode(all);
  for (char c : encoded) {
    EXPECT_TRUE(isalnum(static_cast<unsigned char>(c)) || c == '%' || c == '-' || c == '.' ||
                c == '_' || c == '~');
  }
  EXPECT_EQ(PercentEncode("u|a+b/c=d e&"), "u%7Ca%2Bb%2Fc%3Dd%20e%26");
  std::string decoded;
  ASSERT_TRUE(PercentDecode(encoded, true, &decoded).ok());
  EXPECT_EQ(decoded, all);
  decoded.clear();
  Status s = PercentDecode("ab%2", false, &decoded);
  EXPECT_EQ(s.message(), "bad percent-encoding '%2'");
  EXPECT_EQ(decoded, "ab");
  decoded.clear();
  ASSERT_TRUE(PercentDecode("a+b", false, &decoded).ok());
  EXPECT_EQ(decoded, "a+b");
}

TEST(PercentDecodeAppend, ReturnsTheOffsetOfTheFirstBadEscape) {
  std::string out = "x";
  EXPECT_EQ(PercentDecodeAppend("a%7Cb%7cc+d", false, &out), std::string_view::npos);
  EXPECT_EQ(out, "xa|b|c+d");  // appended; '+' literal
  out.clear();
  EXPECT_EQ(PercentDecodeAppend("a+b%20c+", true, &out), std::string_view::npos);
  EXPECT_EQ(out, "a b c ");
  out.clear();
  EXPECT_EQ(PercentDecodeAppend("%00", false, &out), std::string_view::npos);
  EXPECT_EQ(out, std::string(1, '\0'));
  out.clear();
  EXPECT_EQ(PercentDecodeAppend("ab+%zz", true, &out), 3u);
  EXPECT_EQ(out, "ab ");
  out.clear();
  EXPECT_EQ(PercentDecodeAppend("abc%4", false, &out), 3u);
  EXPECT_EQ(out, "abc");
  out.clear();
  EXPECT_EQ(PercentDecodeAppend("%", true, &out), 0u);
  EXPECT_EQ(out, "");
  EXPECT_EQ(PercentDecodeAppend("", true, &out), std::string_view::npos);
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace clickatron::net
