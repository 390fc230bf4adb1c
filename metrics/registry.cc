#include "metrics/registry.h"

namespace clickatron::metrics {

std::string_view TypeName(Type type) {
  switch (type) {
    case Type::kCounter: return "counter";
    case Type::kGauge: return "gauge";
    case Type::kHistogram: return "histogram";
  }
  return "untyped";
}

namespace {

bool IsNameChar(char c, bool colon, bool first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return true;
  if (c == ':') return colon;
  return !first && c >= '0' && c <= '9';
}

bool IsName(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); i++) {
    if (!IsNameChar(name[i], colon, i == 0)) return false;
  }
  return true;
}

std::string SeriesKey(std::string_view name, const Labels& labels) {
  std::string key(name);
  for (const Label& l : labels) {
    key += '\0';
    key += l.name;
    key += '\0';
    key += l.value;
  }
  return key;
}

}  // namespace

bool IsMetricName(std::string_view name) { return IsName(name, true); }

bool IsLabelName(std::string_view name) { return IsName(name, false) && !name.starts_with("__"); }

uint64_t HistogramBound(int i) { return (uint64_t{1} << (kFirstBoundPower + i)) - 1; }

Family* Registry::FamilyFor(std::string_view name, std::string_view help, Type type) {
  auto it = index_.find(name);
  if (it == index_.end()) {
    if (!IsMetricName(name)) {
      problems_.push_back("metric name '" + std::string(name) + "' is not [a-zA-Z_:][a-zA-Z0-9_:]*");
      return nullptr;
    }
    it = index_.emplace(std::string(name), families_.size()).first;
    families_.push_back(Family{std::string(name), std::string(help), type, {}});
  }
  Family& family = families_[it->second];
  if (family.type != type) {
    problems_.push_back("metric " + family.name + " is a " + std::string(TypeName(family.type)) +
                        ", not a " + std::string(TypeName(type)));
    return nullptr;
  }
  return &family;
}

bool Registry::NewSeries(const Family& family, const Labels& labels) {
  for (const Label& l : labels) {
    if (!IsLabelName(l.name) || (family.type == Type::kHistogram && l.name == "le")) {
      problems_.push_back("metric " + family.name + ": label name '" + l.name + "' is not allowed");
      return false;
    }
  }
  if (!series_.insert(SeriesKey(family.name, labels)).second) {
    std::string shown;
    for (const Label& l : labels) shown += (shown.empty() ? "" : ",") + l.name + "=" + l.value;
    problems_.push_back("metric " + family.name + "{" + shown + "} added twice");
    return false;
  }
  return true;
}

void Registry::Add(std::string_view name, std::string_view help, Type type, const Labels& labels, double value) {
  if (type == Type::kHistogram) {
    problems_.push_back("metric " + std::string(name) + ": a histogram takes AddHistogram");
    return;
  }
  Family* family = FamilyFor(name, help, type);
  if (family == nullptr || !NewSeries(*family, labels)) return;
  family->samples.push_back(Sample{labels, value, {}, 1e6});
}

void Registry::AddHistogram(std::string_view name, std::string_view help, const Labels& labels,
                            const LatencySnapshot& snapshot, double units_per_second) {
  Family* family = FamilyFor(name, help, Type::kHistogram);
  if (family == nullptr || !NewSeries(*family, labels)) return;
  Sample sample{labels, double(snapshot.sum_micros()) / units_per_second, {}, units_per_second};
  sample.cumulative.reserve(kHistogramBounds + 1);
  uint64_t seen = 0;
  int next = 0;  // the snapshot's next bucket to add
  for (int i = 0; i < kHistogramBounds; i++) {
    const int last = LatencyBucket(HistogramBound(i));  // a bucket's upper bound: exact
    for (; next <= last; next++) seen += snapshot.bucket(next);
    sample.cumulative.push_back(seen);
  }
  // +Inf: the count as the snapshot has it (the sum of every bucket).
  sample.cumulative.push_back(snapshot.count());
  family->samples.push_back(std::move(sample));
}

}  // namespace clickatron::metrics
