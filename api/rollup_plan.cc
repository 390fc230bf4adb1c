#include "api/rollup_plan.h"

#include <algorithm>
#include <unordered_map>

#include "keyformat/columns.h"
#include "keyformat/rollup_hours.h"
#include "keyformat/ymdh.h"

namespace clickatron {

namespace {

bool Inside(HourRange outer, HourRange inner) { return inner.start >= outer.start && inner.end <= outer.end; }

// A 4-byte token whose day and hour symbols are in range (the month was checked with its
// period): the columns inside a whole month are taken on this test alone, not decoded one
// by one — a rollup record of the month replaces them, or, missing, their hour records are
// asked for and a bad token among them is simply not found.
bool PlausibleHour(std::string_view token) {
  int day = 0, hour = 0;
  return RollupDayAndHour(token, &day, &hour);
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
    int year = YmdhSymbolValue(token[0]), month = YmdhSymbolValue(token[1]);
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

namespace {

// The rollup period (month, else day token) an hour of the archive range falls in whole,
// or "" when neither lies inside it. The tests are made once per month and once per day,
// not per hour.
struct RollupPeriods {
  explicit RollupPeriods(HourRange archive) : archive(archive) {}
  std::string_view Of(std::string_view hour) {
    const std::string_view m = hour.substr(0, kMonthTokenSize), d = hour.substr(0, kDayTokenSize);
    if (m != month) {
      month = m;
      Result<HourRange> p = PeriodOfToken(m);
      month_inside = p.ok() && Inside(archive, p.value());
    }
    if (month_inside) return m;
    if (d != day) {
      day = d;
      Result<HourRange> p = PeriodOfToken(d);
      day_inside = p.ok() && Inside(archive, p.value());
    }
    return day_inside ? d : std::string_view();
  }
  HourRange archive;
  std::string month, day;
  bool month_inside = false, day_inside = false;
};

}  // namespace

Status PlanSubtotalRecords(std::string_view total_value, HourRange range, int64_t w, bool use_rollups,
                           std::vector<PlannedRecord>* plan) {
  plan->clear();
  const HourRange archive{range.start, std::min(range.end, (w + 1) * kSecondsPerDay)};
  if (archive.empty()) return Status::OK();
  Result<Ymdh> first = EncodeYmdh(archive.start);
  Result<Ymdh> last = EncodeYmdh(archive.end - kSecondsPerHour);
  if (!first.ok() || !last.ok()) return Status::OK();  // unreachable: the range is clamped
  RollupPeriods periods(archive);
  // The rollup record being filled (an index into *plan) and where its columns start.
  size_t open = SIZE_MAX, open_from = 0;
  auto close = [&](size_t at) {
    if (open == SIZE_MAX) return;
    std::string_view columns = total_value.substr(open_from, at - open_from);
    while (!columns.empty() && columns.back() == ' ') columns.remove_suffix(1);
    (*plan)[open].fallback_columns = columns;
    open = SIZE_MAX;
  };
  auto offset_of = [&](std::string_view name) { return static_cast<size_t>(name.data() - total_value.data()); };
  ColumnReader reader(SkipColumnsBefore(total_value, first->view()));
  Column column;
  size_t stop = total_value.size();
  while (reader.Next(&column)) {
    if (column.name < first->view()) continue;
    if (column.name > last->view()) {
      stop = offset_of(column.name);
      break;
    }
    std::string_view m = column.name.substr(0, kMonthTokenSize);
    if (open != SIZE_MAX && periods.month_inside && m == periods.month && PlausibleHour(column.name)) {
      MarkRollupHour(column.name, &(*plan)[open].index_hours);
      continue;  // one more hour of the open month
    }
    Result<int64_t> hour = DecodeYmdh(column.name);
    if (!hour.ok()) return Status::Error("archive total column '" + std::string(column.name) + "' is not YMDH");
    if (use_rollups) {
      const std::string_view period = periods.Of(column.name);
      if (!period.empty()) {
        if (open == SIZE_MAX || (*plan)[open].token != period) {
          close(offset_of(column.name));
          plan->push_back({std::string(period), {}, {}});
          open = plan->size() - 1;
          open_from = offset_of(column.name);
        }
        MarkRollupHour(column.name, &(*plan)[open].index_hours);  // decoded: a valid hour
        continue;
      }
    }
    close(offset_of(column.name));
    plan->push_back({std::string(column.name), {}, {}});
  }
  if (!reader.status().ok()) return Status::Error("archive total record: " + reader.status().message());
  close(stop);
  return Status::OK();
}

std::vector<std::string_view> FallbackHours(const PlannedRecord& record) {
  std::vector<std::string_view> hours;
  ColumnReader reader(record.fallback_columns);
  Column column;
  while (reader.Next(&column)) hours.push_back(column.name);
  return hours;
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
    if (!r.rollup() || found.count(r.token)) continue;
    for (std::string_view hour : FallbackHours(r)) {
      std::string key;
      key.reserve(prefix.size() + hour.size());
      key += prefix;
      key += hour;
      keys.push_back(std::move(key));
    }
  }
  return keys;
}

bool RollupUsable(const PlannedRecord& record, std::string_view value) {
  RollupHours summed;
  if (!record.rollup() || !SplitRollupMask(record.token, value, &summed).ok()) return false;
  for (size_t d = 0; d < summed.size(); ++d) {
    if ((summed[d] & ~record.index_hours[d]) != 0) return false;
  }
  return true;
}

void CollectTokens(std::string_view body, std::string_view prefix, const std::vector<PlannedRecord>& plan,
                   std::unordered_set<std::string_view>* found) {
  std::unordered_map<std::string_view, const PlannedRecord*> rollups;
  for (const PlannedRecord& r : plan) {
    if (r.rollup()) rollups.emplace(r.token, &r);
  }
  LineWalker lines(body);
  std::string_view key, value;
  while (lines.Next(&key, &value)) {
    if (key.size() <= prefix.size() || key.substr(0, prefix.size()) != prefix) continue;
    const std::string_view token = key.substr(prefix.size());
    if (token.size() < kYmdhSize) {
      auto it = rollups.find(token);
      if (it == rollups.end() || !RollupUsable(*it->second, value)) continue;
    }
    found->insert(token);
  }
}

}  // namespace clickatron
