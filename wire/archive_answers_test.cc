#include "wire/archive_answers.h"

#include <gtest/gtest.h>

#include "net/json.h"

namespace clickatron::wire {
namespace {

using net::JsonEnvelope;
using net::JsonErrorEnvelope;

// Any /stats shape with a generation, spaces and all.
const char kStatsWithGeneration[] =
    R"({"data": {"slots": [{"slot": 0, "day": "2013-05-10", "state": "released"},)"
    R"({"slot":1,"day":null,"state":"empty"}], "generation" : "20130510-ab"}})";

TEST(ReadArchiveStats, ReadsTheManifestFields) {
  Result<ArchiveStatsFields> f = ReadArchiveStats(kStatsWithGeneration);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->generation, "20130510-ab");
  EXPECT_EQ(f->last_day, "");  // absent
  f = ReadArchiveStats(JsonEnvelope(
      200, "OK", R"({"db_file": "current/shard-0.csv", "generation": "20261122T003012Z", "last_day": "2012-04-02"})"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->generation, "20261122T003012Z");
  EXPECT_EQ(f->last_day, "2012-04-02");
  EXPECT_EQ(f->served_ms, -1);  // not said: an older server
  f = ReadArchiveStats(JsonEnvelope(200, "OK", R"({"generation": "g7", "served_ms": 2500})"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->served_ms, 2500);
  f = ReadArchiveStats(JsonEnvelope(200, "OK", R"({"generation": null})"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->generation, "");
  EXPECT_FALSE(ReadArchiveStats("").ok());
  EXPECT_FALSE(ReadArchiveStats(JsonErrorEnvelope(404, "NOT_FOUND")).ok());
}

}  // namespace
}  // namespace clickatron::wire
