// StatsWriter: what every server writes its /stats with, so that the same pass also fills
// its /metrics (docs/operations.md#prometheus).
//
// A server has one function that writes its stats. For GET /stats it runs with a
// StatsWriter over the JSON only; for GET /metrics with a metrics::Registry too, and every
// value written through Counter, Gauge, Flag, Problem, Info, Day or Histogram becomes both
// its JSON member and one sample — so the two answers are the same reading of the same
// variables and cannot disagree, and nothing on a request's path changes. A value written
// with the plain JsonWriter calls (Field, String, ...) is JSON only. Adding a metric for a
// /stats field is changing its one line:
//
//   w.Field("delivered_records", n);                                               // JSON only
//   w.Counter("delivered_records", n, "clickatron_api_realtime_delivered_records_total",
//             "Oplog records the shard acknowledged.");                            // both
//
// Labels: Label(name, value) returns a scope; every sample added while it lives carries
// the label, after those of the scopes around it (a shard's object: shard="0"; its slots
// inside: shard="0",slot="1"). Names follow docs/operations.md#metric-names.
//
// HandleStats registers both routes behind one guard.
#ifndef CLICKATRON_NET_STATS_WRITER_H_
#define CLICKATRON_NET_STATS_WRITER_H_

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "base/latency.h"
#include "metrics/registry.h"
#include "net/http_server.h"
#include "net/json.h"

namespace clickatron::net {

// The day "YYYY-MM-DD" as the unix time of its 00:00 UTC; nullopt for anything else.
std::optional<int64_t> DayTimestamp(std::string_view day);

class StatsWriter : public JsonWriter {
 public:
  // registry: where the samples go; null for /stats (the JSON only).
  StatsWriter(std::string* json, metrics::Registry* registry) : JsonWriter(json), registry_(registry) {}

  bool has_registry() const { return registry_ != nullptr; }

  // Field(field, value), and a counter (a count since the process started) or gauge (a
  // level) sample of value / per_unit (per_unit converts to the metric's unit: 1000 for a
  // field in ms and a metric in seconds; a division, so 1500 ms is exactly 1.5 s).
  template <typename T>
    requires std::is_arithmetic_v<T> && (!std::is_same_v<T, bool>)
  void Counter(std::string_view field, T value, std::string_view name, std::string_view help, double per_unit = 1) {
    Field(field, value);
    if (registry_ != nullptr) AddSample(name, help, metrics::Type::kCounter, double(value) / per_unit);
  }
  template <typename T>
    requires std::is_arithmetic_v<T> && (!std::is_same_v<T, bool>)
  void Gauge(std::string_view field, T value, std::string_view name, std::string_view help, double per_unit = 1) {
    Field(field, value);
    if (registry_ != nullptr) AddSample(name, help, metrics::Type::kGauge, double(value) / per_unit);
  }
  // A JSON bool; a gauge of 1 or 0.
  void Flag(std::string_view field, bool value, std::string_view name, std::string_view help);
  // A JSON string that is empty while all is well (an error, a conflict); a gauge of 1
  // while it is not.
  void Problem(std::string_view field, std::string_view text, std::string_view name, std::string_view help);
  // A JSON string; the gauge name{<field>="text"} 1 (an info metric: the value is a label).
  void Info(std::string_view field, std::string_view text, std::string_view name, std::string_view help);
  // A JSON string, one of states; a gauge name{<field>="s"} for each s of states: 1 for
  // text, 0 for the others (a state set: a rule can ask for one state by name).
  void State(std::string_view field, std::string_view text, std::initializer_list<std::string_view> states,
             std::string_view name, std::string_view help);
  // A value (after Key()): the JSON string text, a day "YYYY-MM-DD"; the gauge of its 00:00
  // UTC in unix seconds (no sample when text is not a day).
  void Day(std::string_view text, std::string_view name, std::string_view help);
  // No JSON: the histogram sample of snapshot, whose quantiles the caller writes beside it.
  // units_per_second: of the recorded values (microseconds for every LatencyHistogram).
  void Histogram(const LatencySnapshot& snapshot, std::string_view name, std::string_view help,
                 double units_per_second = 1e6);

  class [[nodiscard]] LabelScope {
   public:
    explicit LabelScope(StatsWriter* w) : w_(w) {}
    LabelScope(LabelScope&& other) noexcept : w_(other.w_) { other.w_ = nullptr; }
    LabelScope(const LabelScope&) = delete;
    LabelScope& operator=(const LabelScope&) = delete;
    LabelScope& operator=(LabelScope&&) = delete;
    ~LabelScope() {
      if (w_ != nullptr) w_->labels_.pop_back();
    }

   private:
    StatsWriter* w_;
  };
  // Adds name=value to every sample until the scope ends. REQUIRES: scopes end in reverse
  // order of creation (they are locals).
  LabelScope Label(std::string_view name, std::string value);

 private:
  void AddSample(std::string_view name, std::string_view help, metrics::Type type, double value);

  metrics::Registry* registry_;
  metrics::Labels labels_;
};

// Registers GET /stats (the JSON envelope of what write writes, without a registry) and
// GET /metrics (the samples of the same pass in the Prometheus text format,
// metrics/text_format.h) on server, both admitted by AdmitSecret(secret) (net/secret.h:
// empty admits everyone) and routed with options. REQUIRES: before server->Listen();
// secret outlives the server.
void HandleStats(Server* server, std::string_view secret, std::function<void(StatsWriter&)> write,
                 RouteOptions options = {});

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_STATS_WRITER_H_
