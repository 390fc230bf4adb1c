// Registry: the metrics of one scrape — typed families (counter, gauge, histogram) of
// labelled samples — in the order they were first added, for the Prometheus text format
// (text_format.h; docs/operations.md#prometheus).
//
// A registry is filled at scrape time by the code that writes /stats (net/stats_writer.h):
// every value a server reports is read once and goes to the JSON and, when a registry is
// given, to one sample here, so /stats and /metrics cannot disagree and no counter on a hot
// path moves or changes. A sample is (family name, labels, value); the first Add of a name
// fixes its type and help, and samples of one family are written together even when they
// were added between other families' (a loop over shards adds to several).
//
// Misuse is not fatal — a scrape must answer — but never silent: a name or label that the
// format does not allow, a second type for a family, or the same series twice drops that
// sample and is listed by problems(); WriteText writes them as comment lines, which every
// scraper ignores and the tests refuse.
//
// Histograms are LatencySnapshots (base/latency.h), the histogram every /stats quantile is
// read from: their buckets are written at every power of two of microseconds
// (kHistogramBounds, exact bucket bounds of the snapshot), in seconds.
//
// Not thread-safe (one scrape, one thread); cheap enough for a scrape every few seconds
// (docs/benchmarks.md#metrics).
#ifndef CLICKATRON_METRICS_REGISTRY_H_
#define CLICKATRON_METRICS_REGISTRY_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/latency.h"

namespace clickatron::metrics {

enum class Type { kCounter, kGauge, kHistogram };
std::string_view TypeName(Type type);  // "counter", "gauge", "histogram"

struct Label {
  std::string name;
  std::string value;
};
using Labels = std::vector<Label>;

// The histogram buckets written: values of at most 2^k - 1 microseconds for k = 3..35
// (7 us .. 9.5 hours), each the upper bound of a LatencySnapshot bucket, so every
// cumulative count is exact; then +Inf.
inline constexpr int kFirstBoundPower = 3;
inline constexpr int kLastBoundPower = 35;

// True for a metric name the format allows ([a-zA-Z_:][a-zA-Z0-9_:]*) and a label name
// ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__", which Prometheus reserves).
bool IsMetricName(std::string_view name);
bool IsLabelName(std::string_view name);

// The bound of bucket i of a written histogram, in recorded units (2^(kFirstBoundPower+i) - 1).
inline constexpr int kHistogramBounds = kLastBoundPower - kFirstBoundPower + 1;
uint64_t HistogramBound(int i);

struct Sample {
  Labels labels;
  double value = 0;  // counter, gauge; histogram: the sum, in seconds
  // Histogram: the values at most HistogramBound(i), for each i, then all of them (+Inf).
  std::vector<uint64_t> cumulative;
  double units_per_second = 1e6;  // histogram: of the recorded values (the bounds' `le`)
};

struct Family {
  std::string name;
  std::string help;
  Type type = Type::kGauge;
  std::vector<Sample> samples;
};

class Registry {
 public:
  // A counter or gauge sample. REQUIRES: type is not kHistogram (else a problem).
  void Add(std::string_view name, std::string_view help, Type type, const Labels& labels, double value);
  // A histogram sample: the snapshot's counts, its sum in seconds (values are recorded in
  // 1/units_per_second s: microseconds for every LatencyHistogram of the project; bounds
  // and sum are divided by it, so 15 us is exactly the `le` 1.5e-05).
  void AddHistogram(std::string_view name, std::string_view help, const Labels& labels,
                    const LatencySnapshot& snapshot, double units_per_second = 1e6);

  const std::vector<Family>& families() const { return families_; }
  // What was dropped and why, one line each ("" when nothing was).
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  // The family of name, created with type and help on first use; null (and a problem) when
  // the name is bad or the family has another type.
  Family* FamilyFor(std::string_view name, std::string_view help, Type type);
  // False (and a problem) when the labels are bad or the series exists already.
  bool NewSeries(const Family& family, const Labels& labels);

  std::vector<Family> families_;
  std::map<std::string, size_t, std::less<>> index_;  // name -> families_ position
  std::set<std::string> series_;                       // name + labels, to find duplicates
  std::vector<std::string> problems_;
};

}  // namespace clickatron::metrics

#endif  // CLICKATRON_METRICS_REGISTRY_H_
