#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "keyformat/columns.h"
#include "keyformat/event.h"
#include "keyformat/key_order.h"
#include "keyformat/records.h"
#include "keyformat/shard.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

TEST(Ymdh, RoundTripsEveryHourOfRandomTimes) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> ts(kYmdhMinTs, kYmdhMaxTs);
  for (int i = 0; i < 200000; i++) {
    const int64_t t = ts(rng);
    Result<Ymdh> token = EncodeYmdh(t);
    ASSERT_TRUE(token.ok());
    Result<int64_t> back = DecodeYmdh(token->view());
    ASSERT_TRUE(back.ok()) << token->view();
    ASSERT_EQ(*back, t - t % kSecondsPerHour);
    ASSERT_EQ(DayOfYmdhUnchecked(token->view()), t / kSecondsPerDay);
  }
}

TEST(Ymdh, TokenOrderIsTimeOrder) {
  std::mt19937_64 rng(43);
  std::uniform_int_distribution<int64_t> ts(kYmdhMinTs, kYmdhMaxTs);
  for (int i = 0; i < 200000; i++) {
    const int64_t a = ts(rng), b = ts(rng);
    const std::string ta(EncodeYmdh(a)->view()), tb(EncodeYmdh(b)->view());
    const int64_t ha = a / kSecondsPerHour, hb = b / kSecondsPerHour;
    ASSERT_EQ(ta < tb, ha < hb) << ta << " " << tb;
    ASSERT_EQ(ta == tb, ha == hb);
  }
}

TEST(Ymdh, EdgesAndErrors) {
  EXPECT_EQ(EncodeYmdh(kYmdhMinTs)->view(), "0110");
  EXPECT_EQ(EncodeYmdh(kYmdhMaxTs)->view(), "vcvn");
  EXPECT_FALSE(EncodeYmdh(kYmdhMinTs - 1).ok());
  EXPECT_FALSE(EncodeYmdh(kYmdhMaxTs + 1).ok());
  EXPECT_FALSE(EncodeYmdh(-1).ok());
  EXPECT_EQ(*DecodeYmdh("c2t0"), 1330473600);  // 2012-02-29, a leap day
  EXPECT_FALSE(DecodeYmdh("b2t0").ok());        // 2011-02-29 is not
  EXPECT_FALSE(DecodeYmdh("").ok());
  EXPECT_FALSE(DecodeYmdh(std::string_view("c3\0p", 4)).ok());
  EXPECT_NE(DecodeYmdh("c2u0").status().message().find("not a date"), std::string::npos);
  // The same token twice, others in between, a bad one after a good one (the last decode
  // is remembered per thread).
  EXPECT_EQ(*DecodeYmdh("c2t0"), 1330473600);
  EXPECT_EQ(*DecodeYmdh("c2t1"), 1330473600 + 3600);
  EXPECT_FALSE(DecodeYmdh("c2to").ok());
  EXPECT_FALSE(DecodeYmdh(std::string_view("\0\0\0\0", 4)).ok());
  EXPECT_EQ(*DecodeYmdh("c2t1"), 1330473600 + 3600);
  EXPECT_EQ(*DecodeYmdh("c2t0"), 1330473600);
}

TEST(Ymdh, SymbolValues) {
  for (int i = 0; i < 32; i++) EXPECT_EQ(YmdhSymbolValue(kYmdhAlphabet[i]), i);
  for (char c : {'w', 'z', 'A', 'V', '/', ':', ' ', '\0', '\xff'}) EXPECT_EQ(YmdhSymbolValue(c), -1) << int(c);
}

TEST(Ymdh, Days) {
  EXPECT_EQ(FormatDay(15431), "2012-04-01");
  EXPECT_EQ(*ParseDay("2012-04-01"), 15431);
  EXPECT_FALSE(ParseDay("2012-02-30").ok());
  EXPECT_FALSE(ParseDay("2012-4-01").ok());
  EXPECT_FALSE(ParseDay("1999-12-31").ok());
  EXPECT_FALSE(ParseDay("2032-01-01").ok());
  EXPECT_FALSE(ParseDay("2012-04-0x").ok());
}

TEST(StoredKey, RuleAndHash) {
  EXPECT_TRUE(IsLiteralKey("jehiah"));
  EXPECT_FALSE(IsLiteralKey(""));
  EXPECT_FALSE(IsLiteralKey("a.b"));
  EXPECT_EQ(KeyHash("http://www.facebook.com/"), "h0aMB8AuNw4=");
  EXPECT_TRUE(IsKeyHash("h0aMB8AuNw4="));
  EXPECT_FALSE(IsKeyHash("h0aMB8AuNw4"));
  EXPECT_FALSE(IsKeyHash("h0aMB8A.Nw4="));
  // A hash never equals a literal: literals are ≤ 11 bytes, hashes 12.
  std::mt19937 rng(1);
  for (int i = 0; i < 10000; i++) {
    std::string v(1 + rng() % 20, 'x');
    for (char& c : v) c = char(rng() % 256);
    const std::string s = StoredKey(v);
    EXPECT_TRUE(IsStoredKey(s));
    EXPECT_EQ(s.size() == 12, !IsLiteralKey(v));
  }
  EXPECT_FALSE(ValidateUserKey("").ok());
  EXPECT_TRUE(ValidateUserKey(std::string(4096, 'a')).ok());
  EXPECT_FALSE(ValidateUserKey(std::string(4097, 'a')).ok());
}

TEST(Namespace, Validation) {
  for (const char* good : {"u", "c", "A9", "user-clicks_1", "abcdefghijklmnop"}) {
    EXPECT_TRUE(ValidateNamespace(good).ok()) << good;
  }
  for (const char* bad : {"", "_l", "_x", "-a", "u|x", "a.b", "abcdefghijklmnopq", "a b", "é"}) {
    EXPECT_FALSE(ValidateNamespace(bad).ok()) << bad;
  }
}

TEST(Records, BuildAndParseRealtimeKeys) {
  std::string k;
  AppendSubtotalKey(&k, "r", "u", "jehiah", "h0aMB8AuNw4=", "c41l");
  EXPECT_EQ(k, "r.u|jehiah.h0aMB8AuNw4=.c41l");
  Result<ParsedKey> p = ParseRealtimeKey(k);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->type, RecordType::kSubtotal);
  EXPECT_EQ(p->subns, "r");
  EXPECT_EQ(p->ns, "u");
  EXPECT_EQ(p->key, "jehiah");
  EXPECT_EQ(p->subkey, "h0aMB8AuNw4=");
  EXPECT_EQ(p->ymdh, "c41l");
  EXPECT_EQ(p->hour, *DecodeYmdh("c41l"));
  EXPECT_EQ(p->shard_key, "u|jehiah");

  p = ParseRealtimeKey("u|jehiah.c3p1");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->type, RecordType::kTotal);
  EXPECT_EQ(p->hour, 1332633600 + 3600);  // 2012-03-25 01:00
  EXPECT_EQ(p->shard_key, "u|jehiah");
  p = ParseRealtimeKey("_l|h0aMB8AuNw4=");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->type, RecordType::kLookup);
  EXPECT_EQ(p->shard_key, "_l|h0aMB8AuNw4=");

  for (const char* bad : {"u|jehiah", "u|jehiah.c2u0", "ujehiah.c3p1", "u|.c3p1", "_x|a.c3p1",
                          "c.u|jehiah.c3p1", "u|jehiah.c3p1.x", "_l|short", "c.u|j.US.c3p1x",
                          "u|abcdefghijkl.c3p1", "|a.c3p1"}) {
    EXPECT_FALSE(ParseRealtimeKey(bad).ok()) << bad;
  }
}

// The realtime grammar as it reads in docs/formats.md, split at each part's first
// separator and each part checked whole: the one-pass parser must agree with it.
bool ReferenceParseRealtimeKey(std::string_view key, ParsedKey* p) {
  if (key.starts_with(kLookupPrefix)) {
    *p = ParsedKey{};
    p->type = RecordType::kLookup;
    p->hash = key.substr(kLookupPrefix.size());
    p->shard_key = key;
    return IsKeyHash(p->hash);
  }
  *p = ParsedKey{};
  const size_t bar = key.find('|');
  if (bar == std::string_view::npos) return false;
  const std::string_view head = key.substr(0, bar);
  const size_t ns_dot = head.find('.');
  if (ns_dot == std::string_view::npos) {
    p->ns = head;
  } else {
    p->subns = head.substr(0, ns_dot);
    p->ns = head.substr(ns_dot + 1);
    if (!IsNamespace(p->subns)) return false;
  }
  if (!IsNamespace(p->ns)) return false;
  const std::string_view tail = key.substr(bar + 1);
  const size_t dot = tail.find('.');
  if (dot == std::string_view::npos) return false;
  p->key = tail.substr(0, dot);
  const std::string_view rest = tail.substr(dot + 1);
  if (!IsLiteralKey(p->key) && !IsKeyHash(p->key)) return false;
  const size_t shard_begin = p->subns.empty() ? 0 : p->subns.size() + 1;
  p->shard_key = key.substr(shard_begin, bar + 1 + p->key.size() - shard_begin);
  if (p->subns.empty()) {
    p->type = RecordType::kTotal;
    p->ymdh = rest;
  } else {
    p->type = RecordType::kSubtotal;
    const size_t d = rest.find('.');
    if (d == std::string_view::npos) return false;
    p->subkey = rest.substr(0, d);
    p->ymdh = rest.substr(d + 1);
    if (!IsLiteralKey(p->subkey) && !IsKeyHash(p->subkey)) return false;
  }
  return DecodeYmdhQuietly(p->ymdh, &p->hour);
}

// The hot paths parse with the quiet predicates and ask the explaining parsers only why a
// line failed: both must accept exactly the same keys, counts, tokens and names.
TEST(Records, QuietParsersAcceptExactlyWhatTheExplainingOnesAccept) {
  const std::vector<std::string> names = {"c",  "u",  "_l", "a_b", "-x", "x-", "12345678901234567", "0123456789abcdef",
                                          "",   "US", "\xc3\xa9"};
  const std::vector<std::string> keys = {"jehiah", "HMCJVIkxxP4=", "", "a:b", "x y", "k", "AAAAAAAAAAA=",
                                         "abcdefghijk", "abcdefghijkl", "AAAAAAAAAAAA", "a|b", "a\x7f"};
  const std::vector<std::string> tokens = {"c3p1", "c3p", "c3pw", "zz3p1", "c2u0", "0000", "vvvv", "c3pn", "c2tn"};
  const std::string mutations = ".|:,_-a0Z =\x80";
  std::mt19937 rng(7);
  int valid = 0;
  auto pick = [&rng](const std::vector<std::string>& from) { return from[rng() % from.size()]; };
  ParsedKey reused;
  for (int i = 0; i < 100000; ++i) {
    std::string key;
    switch (rng() % 3) {
      case 0: key = "_l|" + pick(keys); break;
      case 1: key = pick(names) + "|" + pick(keys) + "." + pick(tokens); break;
      default: key = pick(names) + "." + pick(names) + "|" + pick(keys) + "." + pick(keys) + "." + pick(tokens); break;
    }
    if (rng() % 2 && !key.empty()) {  // one byte changed or dropped
      const size_t at = rng() % key.size();
      if (rng() % 4 == 0) key.erase(at, 1);
      else key[at] = mutations[rng() % mutations.size()];
    }
    // ParseRealtimeKey is the quiet parse, then a second walk for the reason: every key the
    // quiet parse refuses must get a real reason there, not the fallback.
    // The quiet parse into one struct reused key after key (as the importer does) must
    // leave nothing of an earlier key in it.
    const bool ok = ParseRealtimeKeyQuietly(key, &reused);
    const Result<ParsedKey> loud = ParseRealtimeKey(key);
    ASSERT_EQ(ok, loud.ok()) << key;
    ParsedKey reference;
    ASSERT_EQ(ok, ReferenceParseRealtimeKey(key, &reference)) << key;
    if (ok) {
      EXPECT_EQ(reused.key, reference.key) << key;
      EXPECT_EQ(reused.subkey, reference.subkey) << key;
      EXPECT_EQ(reused.shard_key, reference.shard_key) << key;
      EXPECT_EQ(reused.ymdh, reference.ymdh) << key;
    }
    valid += ok;
    if (ok) {
      EXPECT_EQ(int(reused.type), int(loud->type)) << key;
      EXPECT_EQ(reused.ns, loud->ns) << key;
      EXPECT_EQ(reused.key, loud->key) << key;
      EXPECT_EQ(reused.subns, loud->subns) << key;
      EXPECT_EQ(reused.subkey, loud->subkey) << key;
      EXPECT_EQ(reused.ymdh, loud->ymdh) << key;
      EXPECT_EQ(reused.hash, loud->hash) << key;
      EXPECT_EQ(reused.shard_key, loud->shard_key) << key;
      EXPECT_EQ(reused.hour, loud->hour) << key;
    }
    if (!ok) {
      EXPECT_NE(loud.status().message(), "key '" + key + "' is malformed") << key;
    }
    const std::string name = key.substr(0, rng() % 20);
    EXPECT_EQ(IsNamespace(name), ValidateNamespace(name).ok()) << name;
    if (!IsNamespace(name)) {
      EXPECT_EQ(ValidateNamespace(name).message().find("is not a namespace"), std::string::npos) << name;
    }
    const std::string token = key.substr(rng() % 3, 4);
    int64_t ts = 0;
    const bool token_ok = DecodeYmdhQuietly(token, &ts);
    const Result<int64_t> decoded = DecodeYmdh(token);
    ASSERT_EQ(token_ok, decoded.ok()) << token;
    if (token_ok) {
      EXPECT_EQ(ts, *decoded);
    }
    if (!token_ok && decoded.status().message().find("is not 0-23") != std::string::npos) {
      EXPECT_GT(YmdhSymbolValue(token[3]), 23) << token;
    }
  }
  EXPECT_GT(valid, 1000);
  for (const char* text : {"0", "-1", "12", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                           "", "-", "+1", "1x", " 1", "1 ", "00", "-0"}) {
    int64_t n = 0;
    const bool ok = ParseCountQuietly(text, &n);
    const Result<int64_t> loud = ParseCount(text);
    ASSERT_EQ(ok, loud.ok()) << text;
    if (ok) {
      EXPECT_EQ(n, *loud) << text;
    }
  }
}

TEST(Records, ArchiveKeys) {
  Result<ParsedKey> p = ParseArchiveKey("u|jehiah");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->type, RecordType::kTotal);
  p = ParseArchiveKey("c.u|jehiah.c41l");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->type, RecordType::kSubtotal);
  EXPECT_EQ(p->ymdh, "c41l");
  EXPECT_EQ(p->shard_key, "u|jehiah");
  EXPECT_FALSE(ParseArchiveKey("u|jehiah.c41l").ok());
  EXPECT_FALSE(ParseArchiveKey("c.u|jehiah").ok());
}

TEST(Records, CountsAndLines) {
  EXPECT_EQ(*ParseCount("-9223372036854775808"), INT64_MIN);
  EXPECT_FALSE(ParseCount("9223372036854775808").ok());
  EXPECT_FALSE(ParseCount("+1").ok());
  EXPECT_FALSE(ParseCount(" 1").ok());
  EXPECT_FALSE(ParseCount("").ok());
  EXPECT_FALSE(ParseCount("1x").ok());
  Result<Line> l = SplitLine("_l|x,a,b");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->key, "_l|x");
  EXPECT_EQ(l->value, "a,b");
  EXPECT_FALSE(SplitLine("nokey").ok());
  EXPECT_FALSE(SplitLine(",v").ok());
}

TEST(Records, LookupEscapingRoundTrips) {
  std::string e;
  AppendEscapedLookupValue(&e, std::string("a%b\nc\rd\0e,f", 11));
  EXPECT_EQ(e, "a%25b%0Ac%0Dd%00e,f");
  EXPECT_EQ(*UnescapeLookupValue(e), std::string("a%b\nc\rd\0e,f", 11));
  EXPECT_FALSE(UnescapeLookupValue("100%").ok());
  EXPECT_FALSE(UnescapeLookupValue("%41").ok());
  std::mt19937 rng(5);
  for (int i = 0; i < 5000; i++) {
    std::string v(rng() % 30, 'x');
    for (char& c : v) c = char(rng() % 256);
    std::string esc;
    AppendEscapedLookupValue(&esc, v);
    EXPECT_EQ(esc.find('\n'), std::string::npos);
    EXPECT_EQ(*UnescapeLookupValue(esc), v);
  }
}

// docs/formats.md#counts: a column's count is any 128-bit integer, written in decimal.
TEST(Columns, CountsOf128Bits) {
  std::string v;
  AppendColumn(&v, 0, "a", Int128{INT64_MAX} + 1);
  AppendColumn(&v, 0, "b", kInt128Min);
  AppendColumn(&v, 0, "c", kInt128Max);
  AppendColumn(&v, 0, "d", INT64_MIN);
  AppendColumn(&v, 0, std::string(70, 'e'), Int128{INT64_MIN} - 1);  // a long name, a wide count
  EXPECT_EQ(v, "a:9223372036854775808 b:-170141183460469231731687303715884105728 "
               "c:170141183460469231731687303715884105727 d:-9223372036854775808 " +
                   std::string(70, 'e') + ":-9223372036854775809");
  ColumnReader r(v);
  Column c;
  std::vector<std::string> got;
  while (r.Next(&c)) got.push_back(std::string(c.name.substr(0, 1)) + "=" + Int128ToString(c.count));
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(got, (std::vector<std::string>{"a=9223372036854775808", "b=-170141183460469231731687303715884105728",
                                           "c=170141183460469231731687303715884105727", "d=-9223372036854775808",
                                           "e=-9223372036854775809"}));
  EXPECT_TRUE(ValidateColumns(v.substr(0, v.find(" d:"))).ok());
  ColumnReader bad("a:170141183460469231731687303715884105728");
  EXPECT_FALSE(bad.Next(&c));
  EXPECT_EQ(bad.status().message(), "column 'a:170141183460469231731687303715884105728' has a count that is not a 128-bit integer");
}

TEST(Records, WideCountsParseWithTheReason) {
  EXPECT_EQ(Int128ToString(*ParseWideCount("-170141183460469231731687303715884105728")),
            "-170141183460469231731687303715884105728");
  EXPECT_EQ(ParseWideCount("170141183460469231731687303715884105728").status().message(),
            "count '170141183460469231731687303715884105728' does not fit in 128 bits");
  for (const char* bad : {"", "-", "1x", "+1", " 1", "--1", "1-"}) {
    EXPECT_EQ(ParseWideCount(bad).status().message(), "count '" + std::string(bad) + "' is not an integer") << bad;
  }
}

TEST(Columns, ReadsAndWrites) {
  std::string v;
  AppendColumn(&v, 0, "c3b4", 1);
  AppendColumn(&v, 0, "c3b5", -2);
  AppendColumn(&v, 0, "c3c4", 32);
  EXPECT_EQ(v, "c3b4:1 c3b5:-2 c3c4:32");
  ColumnReader r(v);
  Column c;
  std::vector<std::pair<std::string, int64_t>> got;
  while (r.Next(&c)) got.emplace_back(std::string(c.name), c.count);
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int64_t>>{{"c3b4", 1}, {"c3b5", -2}, {"c3c4", 32}}));
  for (const char* bad : {"c3b4", ":1", "c3b4:", "c3b4:1 ", "c3b4:x", "c3b4:1  c3b5:2", "a:170141183460469231731687303715884105728",
                          "a:-170141183460469231731687303715884105729"}) {
    ColumnReader br(bad);
    while (br.Next(&c)) {
    }
    EXPECT_FALSE(br.status().ok()) << bad;
  }
  EXPECT_TRUE(ValidateColumns("JP:1 US:4").ok());
  EXPECT_FALSE(ValidateColumns("US:4 JP:1").ok());
  EXPECT_FALSE(ValidateColumns("JP:0").ok());
  EXPECT_FALSE(ValidateColumns("").ok());
}

TEST(Event, EncodesTotalsSubtotalsAndLookups) {
  Event e;
  e.ns = "u";
  e.key = "jehiah";
  e.ts = 1333314000;  // c41l
  e.value = 2;
  e.subs = {{"c", "US"}, {"r", "http://www.facebook.com/"}};
  EventError err;
  ASSERT_TRUE(ValidateEvent(e, &err)) << err.message;
  std::vector<RealtimeRecord> rs;
  EncodeEvent(e, &rs);
  std::vector<std::string> lines;
  for (auto& r : rs) lines.push_back(r.key + "," + r.value);
  EXPECT_EQ(lines, (std::vector<std::string>{"_l|h0aMB8AuNw4=,http://www.facebook.com/",
                                             "c.u|jehiah.US.c41l,2",
                                             "r.u|jehiah.h0aMB8AuNw4=.c41l,2", "u|jehiah.c41l,2"}));
  EXPECT_EQ(EventShardKey(e), "u|jehiah");
}

TEST(Event, Rejections) {
  Event e;
  e.ns = "u";
  e.key = "k";
  e.ts = 1333314000;
  EventError err;
  e.value = 0;
  EXPECT_FALSE(ValidateEvent(e, &err));
  EXPECT_EQ(err.param, "value");
  e.value = 1;
  e.ts = 2000000000;
  EXPECT_FALSE(ValidateEvent(e, &err));
  EXPECT_EQ(err.param, "ts");
  e.ts = 1333314000;
  e.subs = {{"c", "US"}, {"c", "CA"}};
  EXPECT_FALSE(ValidateEvent(e, &err));
  EXPECT_EQ(err.param, "sub");
  e.subs = {{"_l", "x"}};
  EXPECT_FALSE(ValidateEvent(e, &err));
  e.subs = {};
  e.ns = "u|x";
  EXPECT_FALSE(ValidateEvent(e, &err));
  EXPECT_EQ(err.param, "ns");
}

TEST(KeyOrder, PrefixSortsFirst) {
  EXPECT_LT(CompareKeys("ab", "ab+"), 0);
  EXPECT_LT(CompareKeys("ab+", "abc"), 0);
  EXPECT_LT(CompareKeys("a\x7f", "a\x80"), 0);  // bytewise, unsigned
  EXPECT_TRUE(LineKeyLess{}("ab,1", "ab+,1"));
  EXPECT_FALSE(LineKeyLess{}("ab+,1", "ab,1"));
}

}  // namespace
}  // namespace clickatron
