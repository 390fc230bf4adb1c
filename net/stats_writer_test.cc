#include "net/stats_writer.h"

#include <gtest/gtest.h>

#include "metrics/text_format.h"

namespace clickatron::net {
namespace {

TEST(DayTimestamp, DaysAndNotDays) {
  EXPECT_EQ(DayTimestamp("1970-01-01"), 0);
  EXPECT_EQ(DayTimestamp("2026-11-22"), 1795305600);
  EXPECT_EQ(DayTimestamp("2000-02-29"), 951782400);
  EXPECT_EQ(DayTimestamp("2031-12-31"), 1956441600);
  EXPECT_EQ(DayTimestamp("2001-02-29"), std::nullopt);
  EXPECT_EQ(DayTimestamp("2026-13-01"), std::nullopt);
  EXPECT_EQ(DayTimestamp("2026-1-01"), std::nullopt);
  EXPECT_EQ(DayTimestamp(""), std::nullopt);
  EXPECT_EQ(DayTimestamp("2026-11-2x"), std::nullopt);
}

// The same pass writes the JSON and, with a registry, one sample per metric call.
void WriteExample(StatsWriter& w) {
  LatencySnapshot lag;
  lag.Add(1500);
  w.BeginObject();
  w.Field("node_id", "api-1");  // JSON only
  w.Info("generation", "g1", "clickatron_x_generation_info", "The generation.");
  w.BeginArray("shards");
  for (int shard = 0; shard < 2; shard++) {
    auto label = w.Label("shard", std::to_string(shard));
    w.BeginObject();
    w.Counter("delivered", uint64_t(10 + shard), "clickatron_x_delivered_total", "Delivered.");
    w.Gauge("lag_ms", 1.5, "clickatron_x_lag_seconds", "Lag.", 1000);
    w.Flag("waiting", shard == 1, "clickatron_x_waiting", "Waiting.");
    w.Problem("error", shard == 1 ? "down" : "", "clickatron_x_error", "Error.");
    w.State("state", shard == 0 ? "idle" : "retrying", {"idle", "sending", "retrying"}, "clickatron_x_state",
            "State.");
    w.Key("day");
    w.Day("2026-11-22", "clickatron_x_day_timestamp_seconds", "Day.");
    w.BeginObject("lag");
    w.Histogram(lag, "clickatron_x_lag_histogram_seconds", "Lag histogram.");
    w.Field("p50", lag.Quantile(0.5));
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

TEST(StatsWriter, WithoutARegistryOnlyTheJson) {
  std::string json;
  StatsWriter w(&json, nullptr);
  WriteExample(w);
  EXPECT_EQ(json,
            "{\"node_id\":\"api-1\",\"generation\":\"g1\",\"shards\":["
            "{\"delivered\":10,\"lag_ms\":1.5,\"waiting\":false,\"error\":\"\",\"state\":\"idle\",\"day\":\"2026-11-22\",\"lag\":{\"p50\":1500}},"
            "{\"delivered\":11,\"lag_ms\":1.5,\"waiting\":true,\"error\":\"down\",\"state\":\"retrying\",\"day\":\"2026-11-22\",\"lag\":{\"p50\":1500}}]}");
}

TEST(StatsWriter, WithARegistryTheSameJsonAndOneSamplePerCall) {
  std::string plain, json;
  StatsWriter p(&plain, nullptr);
  WriteExample(p);
  metrics::Registry registry;
  StatsWriter w(&json, &registry);
  WriteExample(w);
  EXPECT_EQ(json, plain);
  ASSERT_TRUE(registry.problems().empty());
  std::string text;
  metrics::WriteText(registry, &text);
  for (const char* line : {
           "clickatron_x_generation_info{generation=\"g1\"} 1\n",
           "clickatron_x_delivered_total{shard=\"0\"} 10\n",
           "clickatron_x_delivered_total{shard=\"1\"} 11\n",
           "clickatron_x_lag_seconds{shard=\"1\"} 0.0015\n",
           "clickatron_x_waiting{shard=\"0\"} 0\n",
           "clickatron_x_waiting{shard=\"1\"} 1\n",
           "clickatron_x_error{shard=\"0\"} 0\n",
           "clickatron_x_error{shard=\"1\"} 1\n",
           "clickatron_x_day_timestamp_seconds{shard=\"0\"} 1795305600\n",
           "clickatron_x_state{shard=\"0\",state=\"idle\"} 1\n",
           "clickatron_x_state{shard=\"0\",state=\"retrying\"} 0\n",
           "clickatron_x_state{shard=\"1\",state=\"retrying\"} 1\n",
           "clickatron_x_lag_histogram_seconds_count{shard=\"1\"} 1\n",
           "clickatron_x_lag_histogram_seconds_bucket{shard=\"1\",le=\"0.002047\"} 1\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  EXPECT_EQ(text.find("node_id"), std::string::npos);  // JSON only
  EXPECT_EQ(text.find("p50"), std::string::npos);
}

TEST(StatsWriter, ADayThatIsNotADayIsJsonOnly) {
  std::string json;
  metrics::Registry registry;
  StatsWriter w(&json, &registry);
  w.BeginObject();
  w.Key("last_day");
  w.Day("", "clickatron_x_day_timestamp_seconds", "Day.");
  w.EndObject();
  EXPECT_EQ(json, "{\"last_day\":\"\"}");
  EXPECT_TRUE(registry.families().empty());
}

}  // namespace
}  // namespace clickatron::net
