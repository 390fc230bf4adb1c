#include "wire/json_answer.h"

#include <gtest/gtest.h>

#include "net/json.h"

namespace clickatron::wire {
namespace {

using net::JsonEnvelope;
using net::JsonErrorEnvelope;

TEST(ReadJsonAnswer, ReadsTheErrorEnvelopeTheServersWrite) {
  const std::string body = JsonErrorEnvelope(503, "SLOT_NOT_RELEASED", "slot 1 holds 2013-05-10 (open)");
  Result<JsonAnswer> a = ReadJsonAnswer(body);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->status_code, 503);
  EXPECT_EQ(a->status_txt, "SLOT_NOT_RELEASED");
  EXPECT_EQ(a->message, "slot 1 holds 2013-05-10 (open)");
}

TEST(ReadJsonAnswer, DecodesEscapesInTheMessage) {
  // A key with a quote and a backslash, as the realtime shard escapes it.
  const std::string body = JsonErrorEnvelope(400, "COUNTER_OVERFLOW", "line 1: counter 'u|a\"b\\c' would overflow");
  Result<JsonAnswer> a = ReadJsonAnswer(body);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->status_txt, "COUNTER_OVERFLOW");
  EXPECT_EQ(a->message, "line 1: counter 'u|a\"b\\c' would overflow");
}

TEST(ReadJsonAnswer, AnswerWithoutMessageAndAnyMemberOrder) {
  Result<JsonAnswer> ok = ReadJsonAnswer(JsonEnvelope(200, "OK", R"({"applied":1})"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status_code, 200);
  EXPECT_EQ(ok->status_txt, "OK");
  EXPECT_EQ(ok->message, "");
  Result<JsonAnswer> swapped = ReadJsonAnswer(R"({"message":"m","status_txt":"DAY_EXPIRED","status_code":409})");
  ASSERT_TRUE(swapped.ok());
  EXPECT_EQ(swapped->status_code, 409);
  EXPECT_EQ(swapped->status_txt, "DAY_EXPIRED");
  EXPECT_EQ(swapped->message, "m");
}

TEST(ReadJsonAnswer, RefusesWhatIsNotAnEnvelope) {
  EXPECT_FALSE(ReadJsonAnswer("").ok());
  EXPECT_FALSE(ReadJsonAnswer("<html>502 Bad Gateway</html>").ok());
  EXPECT_FALSE(ReadJsonAnswer("[1,2]").ok());
  EXPECT_FALSE(ReadJsonAnswer(R"({"status_code":400})").ok());
  EXPECT_FALSE(ReadJsonAnswer(R"({"status_code":"400","status_txt":"X"})").ok());
  EXPECT_FALSE(ReadJsonAnswer(R"({"status_code":400,"status_txt":"X")").ok());  // truncated
  // The text of a name inside a message is not the name.
  Result<JsonAnswer> a = ReadJsonAnswer(JsonErrorEnvelope(400, "INVALID_LINE", "COUNTER_OVERFLOW"));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->status_txt, "INVALID_LINE");
  Status s = ReadJsonAnswer("{").status();
  EXPECT_NE(s.message().find("not JSON"), std::string::npos) << s.message();
}

TEST(ReadDataJson, WritesTheDataObjectBack) {
  Result<std::string> d = ReadDataJson(R"({"status_code": 200, "status_txt": "OK", "data": {"a": [1, "x\u00e9"], "b": null}})");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(*d, "{\"a\":[1,\"x\u00e9\"],\"b\":null}");
  EXPECT_FALSE(ReadDataJson(R"({"data": null})").ok());
  EXPECT_FALSE(ReadDataJson("{\"data\": {").ok());
  EXPECT_FALSE(ReadDataJson("[]").ok());
}

}  // namespace
}  // namespace clickatron::wire
