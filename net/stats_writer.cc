#include "net/stats_writer.h"

#include <utility>

#include "metrics/text_format.h"
#include "net/http_server.h"
#include "net/request.h"
#include "net/secret.h"

namespace clickatron::net {

std::optional<int64_t> DayTimestamp(std::string_view day) {
  if (day.size() != 10 || day[4] != '-' || day[7] != '-') return std::nullopt;
  int parts[3] = {0, 0, 0};
  const size_t starts[3] = {0, 5, 8}, lengths[3] = {4, 2, 2};
  for (int i = 0; i < 3; i++) {
    for (size_t j = starts[i]; j < starts[i] + lengths[i]; j++) {
      if (day[j] < '0' || day[j] > '9') return std::nullopt;
      parts[i] = parts[i] * 10 + (day[j] - '0');
    }
  }
  const int y0 = parts[0], m = parts[1], d = parts[2];
  static constexpr int kDaysIn[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y0 % 4 == 0 && y0 % 100 != 0) || y0 % 400 == 0;
  if (m < 1 || m > 12 || d < 1 || d > kDaysIn[m - 1] || (m == 2 && d == 29 && !leap)) return std::nullopt;
  // Days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
  const int y = y0 - (m <= 2);
  const int era = y / 400;  // y >= 0 here
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return (int64_t{era} * 146097 + doe - 719468) * 86400;
}

void StatsWriter::AddSample(std::string_view name, std::string_view help, metrics::Type type, double value) {
  registry_->Add(name, help, type, labels_, value);
}

void StatsWriter::Flag(std::string_view field, bool value, std::string_view name, std::string_view help) {
  Field(field, value);
  if (registry_ != nullptr) AddSample(name, help, metrics::Type::kGauge, value ? 1 : 0);
}

void StatsWriter::Problem(std::string_view field, std::string_view text, std::string_view name,
                          std::string_view help) {
  Field(field, text);
  if (registry_ != nullptr) AddSample(name, help, metrics::Type::kGauge, text.empty() ? 0 : 1);
}

void StatsWriter::Info(std::string_view field, std::string_view text, std::string_view name, std::string_view help) {
  Field(field, text);
  if (registry_ == nullptr) return;
  metrics::Labels labels = labels_;
  labels.push_back({std::string(field), std::string(text)});
  registry_->Add(name, help, metrics::Type::kGauge, labels, 1);
}

void StatsWriter::State(std::string_view field, std::string_view text, std::initializer_list<std::string_view> states,
                        std::string_view name, std::string_view help) {
  Field(field, text);
  if (registry_ == nullptr) return;
  metrics::Labels labels = labels_;
  labels.push_back({std::string(field), ""});
  for (std::string_view state : states) {
    labels.back().value = std::string(state);
    registry_->Add(name, help, metrics::Type::kGauge, labels, state == text ? 1 : 0);
  }
}

void StatsWriter::Day(std::string_view text, std::string_view name, std::string_view help) {
  String(text);
  if (registry_ == nullptr) return;
  if (std::optional<int64_t> t = DayTimestamp(text)) AddSample(name, help, metrics::Type::kGauge, double(*t));
}

void StatsWriter::Histogram(const LatencySnapshot& snapshot, std::string_view name, std::string_view help,
                            double units_per_second) {
  if (registry_ != nullptr) registry_->AddHistogram(name, help, labels_, snapshot, units_per_second);
}

StatsWriter::LabelScope StatsWriter::Label(std::string_view name, std::string value) {
  labels_.push_back({std::string(name), std::move(value)});
  return LabelScope(this);
}

void HandleStats(Server* server, std::string_view secret, std::function<void(StatsWriter&)> write,
                 RouteOptions options) {
  auto shared = std::make_shared<std::function<void(StatsWriter&)>>(std::move(write));
  server->Handle("/stats", [secret, shared](Request& req) {
    if (!AdmitSecret(req, secret)) return;
    std::string data;
    StatsWriter w(&data, nullptr);
    (*shared)(w);
    req.ReplyJson(200, "OK", data);
  }, options);
  server->Handle("/metrics", [secret, shared](Request& req) {
    if (!AdmitSecret(req, secret)) return;
    std::string json;  // written by the same pass, not sent
    metrics::Registry registry;
    StatsWriter w(&json, &registry);
    (*shared)(w);
    std::string text;
    metrics::WriteText(registry, &text);
    req.AddHeader("Content-Type", metrics::kTextContentType);
    req.Reply(200, text);
  }, options);
}

}  // namespace clickatron::net
