#include "wire/realtime_answers.h"

#include <gtest/gtest.h>

#include "net/json.h"

namespace clickatron::wire {
namespace {

using net::JsonEnvelope;
using net::JsonErrorEnvelope;

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

}  // namespace
}  // namespace clickatron::wire
