#include "api/rollup_plan.h"

#include <algorithm>

#include "keyformat/columns.h"
#include "keyformat/ymdh.h"

namespace clickatron {

namespace {

int SymbolValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'v') return c - 'a' + 10;
  return -1;
}

bool Inside(HourRange outer, HourRange inner) { return inner.start >= outer.start && inner.end <= outer.end; }

// Appends hour `token` to the plan's last record when that is `period`, else starts one.
void AddToRollup(std::vector<PlannedRecord>* plan, std::string_view period, std::string_view token) {
  if (plan->empty() || plan->back().token != period) plan->push_back({std::string(period), {}});
  plan->back().fallback_hours.emplace_back(token);
}

}  // namespace

Result<HourRange> PeriodOfToken(std::string_view token) {
  char hour[kYmdhSize] = {0, 0, '1', '0'};  // day 1, hour 0 fill what a rollup token leaves out
  if (token.size() < kMonthTokenSize || token.size() > kYmdhSize) {
    return Status::Error("time token '" + std::string(token.substr(0, 16)) + "' is not 2, 3 or 4 characters");
  }
  std::copy(token.begin(), token.end(), hour);
  if (token.size() == kDayTokenSize) hour[3] = '0';
  Result<int64_t> start = DecodeYmdh(std::string_view(hour, kYmdhSize));
  if (!start.ok()) {
    return Status::Error("time token '" + std::string(token) + "' is not a UTC hour, day or month (" +
                         start.status().message() + ")");
  }
  HourRange r{start.value(), 0};
  if (token.size() == kYmdhSize) {
    r.end = r.start + kSecondsPerHour;
  } else if (token.size() == kDayTokenSize) {
    r.end = r.start + kSecondsPerDay;
  } else {
    // The month after: the next month symbol, or January of the next year.
    int year = SymbolValue(token[0]), month = SymbolValue(token[1]);
    if (month == 12) {
      year += 1;
      month = 1;
    } else {
      month += 1;
    }
    if (year >= 32) {
      r.end = kYmdhMaxTs + 1;
    } else {
      const char next[kYmdhSize] = {kYmdhAlphabet[year], kYmdhAlphabet[month], '1', '0'};
      Result<int64_t> end = DecodeYmdh(std::string_view(next, kYmdhSize));
      if (!end.ok()) return end.status();  // unreachable: a valid month's successor
      r.end = end.value();
    }
  }
  return r;
}

Status PlanSubtotalRecords(std::string_view total_value, HourRange range, int64_t w, bool use_rollups,
                           std::vector<PlannedRecord>* plan) {
  plan->clear();
  const HourRange archive{range.start, std::min(range.end, (w + 1) * kSecondsPerDay)};
  if (archive.empty()) return Status::OK();
  Result<Ymdh> first = EncodeYmdh(archive.start);
  Result<Ymdh> last = EncodeYmdh(archive.end - kSecondsPerHour);
  if (!first.ok() || !last.ok()) return Status::OK();  // unreachable: the range is clamped
  // The period tests are made once per month and once per day, not per hour.
  std::string month, day;
  bool month_inside = false, day_inside = false;
  ColumnReader reader(SkipColumnsBefore(total_value, first->view()));
  Column column;
  while (reader.Next(&column)) {
    if (column.name < first->view()) continue;
    if (column.name > last->view()) break;
    Result<int64_t> hour = DecodeYmdh(column.name);
    if (!hour.ok()) return Status::Error("archive total column '" + std::string(column.name) + "' is not YMDH");
    if (use_rollups) {
      std::string_view m = column.name.substr(0, kMonthTokenSize), d = column.name.substr(0, kDayTokenSize);
      if (m != month) {
        month = m;
        Result<HourRange> p = PeriodOfToken(m);
        month_inside = p.ok() && Inside(archive, p.value());
      }
      if (month_inside) {
        AddToRollup(plan, m, column.name);
        continue;
      }
      if (d != day) {
        day = d;
        Result<HourRange> p = PeriodOfToken(d);
        day_inside = p.ok() && Inside(archive, p.value());
      }
      if (day_inside) {
        AddToRollup(plan, d, column.name);
        continue;
      }
    }
    plan->push_back({std::string(column.name), {}});
  }
  if (!reader.status().ok()) return Status::Error("archive total record: " + reader.status().message());
  return Status::OK();
}

std::vector<std::string> PlannedKeys(const std::vector<PlannedRecord>& plan, std::string_view prefix) {
  std::vector<std::string> keys;
  keys.reserve(plan.size());
  for (const PlannedRecord& r : plan) {
    std::string key;
    key.reserve(prefix.size() + r.token.size());
    key += prefix;
    key += r.token;
    keys.push_back(std::move(key));
  }
  return keys;
}

std::vector<std::string> FallbackKeys(const std::vector<PlannedRecord>& plan,
                                      const std::unordered_set<std::string_view>& found,
                                      std::string_view prefix) {
  std::vector<std::string> keys;
  for (const PlannedRecord& r : plan) {
    if (r.fallback_hours.empty() || found.count(r.token)) continue;
    for (const std::string& hour : r.fallback_hours) {
      std::string key;
      key.reserve(prefix.size() + hour.size());
      key += prefix;
      key += hour;
      keys.push_back(std::move(key));
    }
  }
  return keys;
}

void CollectTokens(std::string_view body, std::string_view prefix,
                   std::unordered_set<std::string_view>* found) {
  LineWalker lines(body);
  std::string_view key, value;
  while (lines.Next(&key, &value)) {
    if (key.size() > prefix.size() && key.substr(0, prefix.size()) == prefix) {
      found->insert(key.substr(prefix.size()));
    }
  }
}

}  // namespace clickatron
