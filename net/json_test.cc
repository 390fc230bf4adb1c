#include "net/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "base/int128.h"

namespace clickatron::net {
namespace {

std::string Quote(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

TEST(Json, EscapesQuotesBackslashAndControlBytes) {
  EXPECT_EQ(Quote("plain"), "\"plain\"");
  EXPECT_EQ(Quote("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
  EXPECT_EQ(Quote("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
  EXPECT_EQ(Quote(std::string_view("\x00\x01\x1f\x7f", 4)), "\"\\u0000\\u0001\\u001f\\u007f\"");
}

TEST(Json, CountsAreExactIntegersOf128Bits) {
  std::string out;
  JsonWriter w(&out);
  w.BeginArray();
  w.Count(0);
  w.Count(-9007199254740993);  // past 2^53: a double would round it
  w.Count(__int128{INT64_MAX} + 1);
  w.Count(kInt128Min);
  w.Count(kInt128Max);
  w.EndArray();
  EXPECT_EQ(out, "[0,-9007199254740993,9223372036854775808,-170141183460469231731687303715884105728,"
                 "170141183460469231731687303715884105727]");
}

TEST(Json, PassesValidUtf8) {
  // é (2 bytes), € (3), U+10348 (4), U+FFFF, U+10FFFF: all valid, passed through.
  std::string valid = "\xc3\xa9\xe2\x82\xac\xf0\x90\x8d\x88\xef\xbf\xbf\xf4\x8f\xbf\xbf";
  EXPECT_EQ(Quote(valid), "\"" + valid + "\"");
}

TEST(Json, ReplacesEveryInvalidUtf8Byte) {
  struct Case {
    std::string in;
    std::string out;
  } cases[] = {
      {"\x80", "\\ufffd"},                          // stray continuation
      {"a\xff" "b", "a\\ufffdb"},                   // never valid
      {"\xc0\xaf", "\\ufffd\\ufffd"},               // overlong '/'
      {"\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd"},    // overlong, 3 bytes
      {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},    // UTF-16 surrogate D800
      {"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"},  // above U+10FFFF
      {"\xe2\x82", "\\ufffd\\ufffd"},               // truncated at the end
      {"\xe2\x82" "x", "\\ufffd\\ufffdx"},          // truncated mid-string
      {"\xc3\xa9\xc3", "\xc3\xa9\\ufffd"},          // valid then truncated
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Quote(c.in), "\"" + c.out + "\"") << c.in;
  }
}

TEST(Json, WriterInsertsCommasAndNests) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("ns");
  w.String("u");
  w.Key("series");
  w.BeginArray();
  for (int i = 0; i < 2; ++i) {
    w.BeginObject();
    w.Key("dt");
    w.Int(1332633600 + i * 3600);
    w.Key("value");
    w.Int(-i);
    w.EndObject();
  }
  w.EndArray();
  w.Key("empty");
  w.BeginArray();
  w.EndArray();
  w.Key("obj");
  w.BeginObject();
  w.EndObject();
  w.Key("flags");
  w.BeginArray();
  w.Bool(true);
  w.Bool(false);
  w.Null();
  w.Uint(18446744073709551615u);
  w.Int(std::numeric_limits<int64_t>::min());
  w.Raw("{\"x\":1}");
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(out,
            "{\"ns\":\"u\",\"series\":[{\"dt\":1332633600,\"value\":0},"
            "{\"dt\":1332637200,\"value\":-1}],\"empty\":[],\"obj\":{},"
            "\"flags\":[true,false,null,18446744073709551615,-9223372036854775808,{\"x\":1}]}");
}

TEST(Json, FieldWritesKeyAndValueByType) {
  std::string out;
  JsonWriter w(&out);
  const std::string text = "t\"x";
  w.BeginObject();
  w.Field("u64", uint64_t{18446744073709551615u});
  w.Field("size", size_t{3});
  w.Field("i64", int64_t{-5});
  w.Field("int", -1);
  w.Field("double", 0.5);
  w.Field("bool", false);
  w.Field("literal", "lit");  // a string, not the bool a pointer converts to
  w.Field("string", text);
  w.Field("view", std::string_view("v"));
  w.EndObject();
  EXPECT_EQ(out,
            "{\"u64\":18446744073709551615,\"size\":3,\"i64\":-5,\"int\":-1,\"double\":0.5,"
            "\"bool\":false,\"literal\":\"lit\",\"string\":\"t\\\"x\",\"view\":\"v\"}");
}

TEST(Json, Doubles) {
  std::string out;
  JsonWriter w(&out);
  w.BeginArray();
  w.Double(0.1);
  w.Double(2.5e-7);
  w.Double(3);
  w.Double(std::nan(""));
  w.Double(std::numeric_limits<double>::infinity());
  w.EndArray();
  EXPECT_EQ(out, "[0.1,2.5e-07,3,null,null]");
}

TEST(Json, Envelope) {
  EXPECT_EQ(JsonEnvelope(200, "OK", "{\"a\":1}"),
            "{\"status_code\": 200, \"status_txt\": \"OK\", \"data\": {\"a\":1}}");
  EXPECT_EQ(JsonErrorEnvelope(400, "MISSING_ARG_KEY"),
            "{\"status_code\": 400, \"status_txt\": \"MISSING_ARG_KEY\", \"data\": null}");
  EXPECT_EQ(JsonErrorEnvelope(400, "INVALID_LINE", "line 2: \"x\""),
            "{\"status_code\": 400, \"status_txt\": \"INVALID_LINE\", \"data\": null, "
            "\"message\": \"line 2: \\\"x\\\"\"}");
}

}  // namespace
}  // namespace clickatron::net
