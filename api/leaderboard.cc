#include "api/leaderboard.h"

#include "api/buckets.h"
#include "api/key_listing.h"
#include "api/query_series.h"
#include "keyformat/records.h"
#include "net/json.h"

namespace clickatron {

Status AppendArchiveSums(std::string_view page, std::string_view ns, HourRange range, int64_t w,
                         std::string* sums, size_t* records) {
  const std::vector<Bucket> whole_range = {Bucket{range.start, range.end}};
  *records = 0;
  LineWalker lines(page);
  std::string_view key, value;
  while (lines.Next(&key, &value)) {
    std::string_view stored = ArchiveListedKey(key, ns);
    if (stored.empty()) {
      return Status::Error("archive record '" + std::string(key.substr(0, 100)) + "' is not a total of namespace " +
                           std::string(ns));
    }
    SeriesSum sum(whole_range, w);
    if (Status st = sum.AddArchiveTotal(value); !st.ok()) {
      return Status::Error("archive record '" + std::string(key.substr(0, 100)) + "': " + st.message());
    }
    if (!sum.overflow().empty()) {
      return Status::Error("the sum of archive record '" + std::string(key.substr(0, 100)) + "' leaves 128 bits");
    }
    sums->append(stored);
    sums->push_back(',');
    AppendInt128(sums, sum.values()[0]);
    sums->push_back('\n');
    ++*records;
  }
  return lines.status();
}

std::string LeaderboardJson(const QueryParams& q, Int128 total, const std::vector<BreakdownEntry>& entries) {
  std::string out;
  out.reserve(200 + entries.size() * 48);
  net::JsonWriter w(&out);
  w.BeginObject();
  w.Field("ns", std::string_view(q.ns));
  w.Field("unit", UnitName(q.unit));
  w.Field("units", q.units);
  w.Field("unit_reference_ts", q.reference_ts);
  w.Field("tz_offset", static_cast<int64_t>(q.tz_offset));
  if (q.has_range) {
    w.Field("start", q.start);
    w.Field("end", q.end);
  }
  w.Field("limit", static_cast<int64_t>(q.limit));
  w.Key("total");
  w.Count(total);
  w.BeginArray("leaderboard");
  for (const BreakdownEntry& e : entries) {
    w.BeginObject();
    w.Field("key", std::string_view(e.subkey));
    w.Key("value");
    w.Count(e.value);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace clickatron
