#include "api/query_breakdown.h"

#include <algorithm>

#include "api/query_series.h"
#include "api/rollup_plan.h"
#include "keyformat/columns.h"
#include "keyformat/records.h"
#include "keyformat/rollup_hours.h"
#include "keyformat/ymdh.h"
#include "net/json.h"

namespace clickatron {

namespace {

Status Malformed(const char* tier, std::string_view key, const std::string& why) {
  return Status::Error(std::string(tier) + " record '" + std::string(key.substr(0, 100)) + "': " + why);
}

}  // namespace

void BreakdownSum::Add(std::string_view subkey, Int128 n) {
  auto [it, inserted] = sums_.try_emplace(subkey, n);
  if (!inserted && !AddInt128(&it->second, n) && overflow_.empty()) overflow_ = std::string(subkey);
}

Status BreakdownSum::AddArchive(std::string_view body, std::string_view prefix) {
  LineWalker lines(body);
  std::string_view key, value;
  while (lines.Next(&key, &value)) {
    // {prefix}{ymdh}, or a day or month rollup {prefix}{first 3 or 2 bytes of ymdh}.
    const size_t shortest = prefix.size() + (rollups_ != nullptr ? kMonthTokenSize : kYmdhSize);
    if (key.size() < shortest || key.size() > prefix.size() + kYmdhSize || key.substr(0, prefix.size()) != prefix) {
      return Malformed("archive", key, "not a subtotal record of this key");
    }
    std::string_view token = key.substr(prefix.size());
    if (token.size() == kYmdhSize) {
      Result<int64_t> hour = DecodeYmdh(token);
      if (!hour.ok()) return Malformed("archive", key, hour.status().message());
      if (!range_.Contains(hour.value()) || DayOfHour(hour.value()) > watermark_) continue;
    } else {
      // A rollup counts only when every hour of its period is the archive's and in range,
      // and its mask said it stands for the index's hours (else they were read instead).
      Result<HourRange> period = PeriodOfToken(token);
      if (!period.ok()) return Malformed("archive", key, period.status().message());
      if (period->start < range_.start || period->end > range_.end ||
          DayOfHour(period->end - kSecondsPerHour) > watermark_ || !rollups_->count(token)) {
        continue;
      }
      RollupHours hours;
      Result<std::string_view> sums = SplitRollupMask(token, value, &hours);
      if (!sums.ok()) return Malformed("archive", key, sums.status().message());  // CollectTokens took it
      value = sums.value();
    }
    ColumnReader reader(value);
    Column column;
    while (reader.Next(&column)) Add(column.name, column.count);
    if (!reader.status().ok()) return Malformed("archive", key, reader.status().message());
  }
  return lines.status();
}

Status BreakdownSum::AddRealtime(std::string_view body, std::string_view prefix) {
  LineWalker lines(body);
  std::string_view key, value;
  while (lines.Next(&key, &value)) {
    // {prefix}{subkey}.{ymdh}: the subkey is at least one byte.
    if (key.size() < prefix.size() + 2 + kYmdhSize) {
      return Malformed("realtime", key, "not a subtotal record of this key");
    }
    Result<int64_t> hour = RealtimeKeyHour(key, prefix);
    if (!hour.ok()) return hour.status();
    if (!range_.Contains(hour.value()) || DayOfHour(hour.value()) <= watermark_) continue;
    Result<Int128> n = ParseWideCount(value);
    if (!n.ok()) return Malformed("realtime", key, n.status().message());
    Add(key.substr(prefix.size(), key.size() - prefix.size() - kYmdhSize - 1), n.value());
  }
  return lines.status();
}

Status BreakdownSum::AddRealtimeSums(std::string_view body) {
  LineWalker lines(body);
  std::string_view subkey, value;
  while (lines.Next(&subkey, &value)) {
    if (subkey.empty() || subkey.find('.') != std::string_view::npos) {
      return Malformed("realtime", subkey, "not a subkey of a /fwsum answer");
    }
    Result<Int128> n = ParseWideCount(value);
    if (!n.ok()) return Malformed("realtime", subkey, n.status().message());
    Add(subkey, n.value());
  }
  return lines.status();
}

bool BreakdownSum::Total(Int128* total) const {
  Int128 sum = 0;
  for (const auto& [subkey, value] : sums_) {
    if (!AddInt128(&sum, value)) return false;
  }
  *total = sum;
  return true;
}

std::vector<SubkeyCount> BreakdownSum::Candidates(int limit) const {
  std::vector<SubkeyCount> all;
  all.reserve(sums_.size());
  for (const auto& [subkey, value] : sums_) {
    if (value != 0) all.push_back({subkey, value});
  }
  auto larger = [](const SubkeyCount& a, const SubkeyCount& b) {
    return a.value != b.value ? a.value > b.value : a.stored < b.stored;
  };
  size_t n = static_cast<size_t>(limit);
  if (all.size() <= n) {
    std::sort(all.begin(), all.end(), larger);
    return all;
  }
  std::nth_element(all.begin(), all.begin() + (n - 1), all.end(), larger);
  const Int128 cut = all[n - 1].value;
  // Everything tied with the last place may outrank it once names are shown.
  auto end = std::partition(all.begin() + n, all.end(),
                            [cut](const SubkeyCount& c) { return c.value == cut; });
  all.erase(end, all.end());
  std::sort(all.begin(), all.end(), larger);
  return all;
}

Status ArchiveSubtotalKeys(std::string_view total_value, HourRange range, int64_t w,
                           std::string_view sub, std::string_view ns, std::string_view stored_key,
                           std::vector<std::string>* keys) {
  keys->clear();
  int64_t end = std::min(range.end, (w + 1) * kSecondsPerDay);
  if (range.start >= end) return Status::OK();
  Result<Ymdh> first = EncodeYmdh(range.start);
  Result<Ymdh> last = EncodeYmdh(end - kSecondsPerHour);
  if (!first.ok() || !last.ok()) return Status::OK();  // unreachable: the range is clamped
  ColumnReader reader(SkipColumnsBefore(total_value, first->view()));
  Column column;
  while (reader.Next(&column)) {
    if (column.name < first->view()) continue;
    if (column.name > last->view()) break;
    if (!DecodeYmdh(column.name).ok()) {
      return Status::Error("archive total column '" + std::string(column.name) + "' is not YMDH");
    }
    std::string key;
    AppendArchiveSubtotalKey(&key, sub, ns, stored_key, column.name);
    keys->push_back(std::move(key));
  }
  if (!reader.status().ok()) return Status::Error("archive total record: " + reader.status().message());
  return Status::OK();
}

std::vector<BreakdownEntry> RankBreakdown(const std::vector<SubkeyCount>& candidates, int limit,
                                          const std::function<std::string(std::string_view)>& shown) {
  std::vector<BreakdownEntry> entries;
  entries.reserve(candidates.size());
  for (const SubkeyCount& c : candidates) entries.push_back({shown(c.stored), c.value});
  std::sort(entries.begin(), entries.end(), [](const BreakdownEntry& a, const BreakdownEntry& b) {
    return a.value != b.value ? a.value > b.value : a.subkey < b.subkey;
  });
  if (entries.size() > static_cast<size_t>(limit)) entries.resize(static_cast<size_t>(limit));
  return entries;
}

std::string BreakdownJson(const QueryParams& q, const std::vector<BreakdownEntry>& entries) {
  std::string out;
  out.reserve(200 + entries.size() * 48);
  net::JsonWriter w(&out);
  w.BeginObject();
  WriteQueryHead(q, &w);
  w.Key("sub");
  w.String(q.sub);
  w.Key("breakdown");
  w.BeginArray();
  for (const BreakdownEntry& e : entries) {
    w.BeginObject();
    w.Key("subkey");
    w.String(e.subkey);
    w.Key("value");
    w.Count(e.value);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace clickatron
