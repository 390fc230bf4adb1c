#include "net/json_read.h"

#include <gtest/gtest.h>

#include "net/json.h"

namespace clickatron::net {
namespace {

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

TEST(ReadIncrAnswer, ReadsTheThreeCounts) {
  Result<IncrAnswer> a = ReadIncrAnswer(JsonEnvelope(200, "OK", R"({"applied":2,"duplicate":5,"seq":-1})"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->applied, 2u);
  EXPECT_EQ(a->duplicate, 5u);
  EXPECT_EQ(a->seq, -1);
  EXPECT_FALSE(ReadIncrAnswer(JsonEnvelope(200, "OK", R"({"applied":2,"seq":1})")).ok());
  EXPECT_FALSE(ReadIncrAnswer(JsonEnvelope(200, "OK", R"({"applied":2,"duplicate":-1,"seq":1})")).ok());
  EXPECT_FALSE(ReadIncrAnswer(JsonErrorEnvelope(409, "DAY_EXPIRED", "x")).ok());
}

// The realtime /stats shape (docs/api.md#clickatron-realtime), spaces and all.
const char kRealtimeStats[] =
    R"({"data": {"slots": [{"slot": 0, "day": "2013-05-10", "state": "released"},)"
    R"({"slot":1,"day":null,"state":"empty"}], "generation" : "20130510-ab"}})";

TEST(ReadRealtimeSlots, ReadsDayAndStateOfEachSlot) {
  Result<std::vector<RealtimeSlotFields>> slots = ReadRealtimeSlots(kRealtimeStats);
  ASSERT_TRUE(slots.ok()) << slots.status().message();
  ASSERT_EQ(slots->size(), 2u);
  EXPECT_EQ((*slots)[0].day, "2013-05-10");
  EXPECT_EQ((*slots)[0].state, "released");
  EXPECT_EQ((*slots)[1].day, "");
  EXPECT_EQ((*slots)[1].state, "empty");
}

TEST(ReadRealtimeSlots, OtherKeysOfTheSameNameAreNotSlots) {
  // A source named "day" (the slots' and the server's source marks are objects keyed by
  // source name) is not read as a slot's day.
  const char stats[] =
      R"({"status_code": 200, "status_txt": "OK", "data": {"slots":[)"
      R"({"slot":0,"day":"2013-05-11","state":"open","sources":{"day":7,"state":3}}],)"
      R"("sources":{"day":{"seq":7,"synced_seq":7}}}})";
  Result<std::vector<RealtimeSlotFields>> slots = ReadRealtimeSlots(stats);
  ASSERT_TRUE(slots.ok()) << slots.status().message();
  ASSERT_EQ(slots->size(), 1u);
  EXPECT_EQ((*slots)[0].day, "2013-05-11");
  EXPECT_EQ((*slots)[0].state, "open");
}

TEST(ReadRealtimeSlots, RefusesAnUnknownShape) {
  EXPECT_FALSE(ReadRealtimeSlots("not json").ok());
  EXPECT_FALSE(ReadRealtimeSlots(R"({"data":{}})").ok());
  EXPECT_FALSE(ReadRealtimeSlots(R"({"data":{"slots":{}}})").ok());
  EXPECT_FALSE(ReadRealtimeSlots(R"({"data":{"slots":[{"day":"2013-05-10"}]}})").ok());
  EXPECT_FALSE(ReadRealtimeSlots(R"({"data":{"slots":[{"day":5,"state":"open"}]}})").ok());
  Result<std::vector<RealtimeSlotFields>> none = ReadRealtimeSlots(R"({"data":{"slots":[]}})");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(ReadRealtimeStats, ReadsSlotsClosedThroughAndRing) {
  Result<RealtimeStatsFields> f = ReadRealtimeStats(
      R"({"data":{"slots":[{"slot":0,"day":"2013-05-10","state":"closed"}],"closed_through":"2013-05-10",)"
      R"("ring":"5f1c00aa12345678","sources":{"closed_through":"x"}}})");
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->slots.size(), 1u);
  EXPECT_EQ(f->slots[0].state, "closed");
  EXPECT_EQ(f->closed_through, "2013-05-10");
  EXPECT_EQ(f->ring, "5f1c00aa12345678");
  Result<RealtimeStatsFields> older = ReadRealtimeStats(R"({"data":{"slots":[],"closed_through":null}})");
  ASSERT_TRUE(older.ok()) << older.status().message();
  EXPECT_EQ(older->closed_through, "");
  EXPECT_EQ(older->ring, "");
  EXPECT_FALSE(ReadRealtimeStats(R"({"data":{"slots":[],"ring":7}})").ok());
  EXPECT_FALSE(ReadRealtimeStats(R"({"data":{"closed_through":"2013-05-10"}})").ok());
}

TEST(ReadArchiveStats, ReadsTheManifestFields) {
  Result<ArchiveStatsFields> f = ReadArchiveStats(kRealtimeStats);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->generation, "20130510-ab");
  EXPECT_EQ(f->last_day, "");  // absent
  f = ReadArchiveStats(JsonEnvelope(
      200, "OK", R"({"db_file": "current/shard-0.csv", "generation": "20261122T003012Z", "last_day": "2012-04-02"})"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->generation, "20261122T003012Z");
  EXPECT_EQ(f->last_day, "2012-04-02");
  f = ReadArchiveStats(JsonEnvelope(200, "OK", R"({"generation": null})"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->generation, "");
  EXPECT_FALSE(ReadArchiveStats("").ok());
  EXPECT_FALSE(ReadArchiveStats(JsonErrorEnvelope(404, "NOT_FOUND")).ok());
}

}  // namespace
TEST(JsonRead, DataJson) {
  Result<std::string> d = ReadDataJson(R"({"status_code": 200, "status_txt": "OK", "data": {"a": [1, "x\u00e9"], "b": null}})");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(*d, "{\"a\":[1,\"x\u00e9\"],\"b\":null}");
  EXPECT_FALSE(ReadDataJson(R"({"data": null})").ok());
  EXPECT_FALSE(ReadDataJson("{\"data\": {").ok());
  EXPECT_FALSE(ReadDataJson("[]").ok());
}

}  // namespace clickatron::net
