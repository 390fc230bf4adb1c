#include "metrics/text_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace clickatron::metrics {
namespace {

std::string Value(double v) {
  std::string out;
  AppendValue(v, &out);
  return out;
}

TEST(TextFormat, Values) {
  EXPECT_EQ(Value(0), "0");
  EXPECT_EQ(Value(12345), "12345");
  EXPECT_EQ(Value(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(Value(0.25), "0.25");
  EXPECT_EQ(Value(7e-06), "7e-06");
  EXPECT_EQ(Value(-1.5), "-1.5");
  EXPECT_EQ(Value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(Value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(Value(std::nan("")), "NaN");
}

TEST(TextFormat, EscapesLabelValuesAndHelp) {
  std::string label, help;
  AppendLabelValue("a\\b\"c\nd\te", &label);
  EXPECT_EQ(label, "a\\\\b\\\"c\\nd\te");
  AppendHelp("a\\b\"c\nd", &help);
  EXPECT_EQ(help, "a\\\\b\"c\\nd");
}

TEST(TextFormat, FamiliesWithHelpTypeAndSamples) {
  Registry r;
  r.Add("clickatron_x_total", "Things\ncounted.", Type::kCounter, {}, 3);
  r.Add("clickatron_y", "A level.", Type::kGauge, {{"shard", "0"}, {"msg", "say \"hi\""}}, 0.5);
  r.Add("clickatron_x_total", "", Type::kCounter, {{"k", "v"}}, 4);
  std::string out;
  WriteText(r, &out);
  EXPECT_EQ(out,
            "# HELP clickatron_x_total Things\\ncounted.\n"
            "# TYPE clickatron_x_total counter\n"
            "clickatron_x_total 3\n"
            "clickatron_x_total{k=\"v\"} 4\n"
            "# HELP clickatron_y A level.\n"
            "# TYPE clickatron_y gauge\n"
            "clickatron_y{shard=\"0\",msg=\"say \\\"hi\\\"\"} 0.5\n");
}

TEST(TextFormat, HistogramBucketsSumAndCount) {
  LatencySnapshot s;
  s.Add(5);
  s.Add(100);
  s.Add(2000000);
  Registry r;
  r.AddHistogram("d_seconds", "D.", {{"path", "/get"}}, s);
  std::string out;
  WriteText(r, &out);
  EXPECT_NE(out.find("# TYPE d_seconds histogram\n"), std::string::npos);
  EXPECT_NE(out.find("d_seconds_bucket{path=\"/get\",le=\"7e-06\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("d_seconds_bucket{path=\"/get\",le=\"0.000127\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("d_seconds_bucket{path=\"/get\",le=\"2.097151\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("d_seconds_bucket{path=\"/get\",le=\"+Inf\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("d_seconds_sum{path=\"/get\"} 2.000105\n"), std::string::npos) << out;
  EXPECT_NE(out.find("d_seconds_count{path=\"/get\"} 3\n"), std::string::npos) << out;
}

TEST(TextFormat, ProblemsAreCommentLines) {
  Registry r;
  r.Add("x", "", Type::kGauge, {}, 1);
  r.Add("x", "", Type::kGauge, {}, 1);
  std::string out;
  WriteText(r, &out);
  EXPECT_NE(out.find("\n# problem: metric x{} added twice\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace clickatron::metrics
