#include "api/query_plan.h"

#include <algorithm>

#include "keyformat/ymdh.h"
#include "net/query.h"

namespace clickatron {

Result<int64_t> ParseWatermark(std::optional<std::string_view> header) {
  if (!header.has_value()) return kNoArchiveDays;
  Result<int64_t> day = ParseDay(*header);
  if (!day.ok()) return Status::Error("archive header X-Archive-Last-Day: " + day.status().message());
  return day.value();
}

HourRange RangeOfBuckets(const std::vector<Bucket>& buckets) {
  HourRange r;
  if (buckets.empty()) return r;
  r.start = std::max(buckets.back().start, kYmdhMinTs);
  // kYmdhMaxTs is the last second of the last hour.
  r.end = std::min(buckets.front().end, kYmdhMaxTs + 1);
  if (r.start > r.end) r.start = r.end;
  return r;
}

HourRange RealtimeSpan(HourRange range, int64_t w, int64_t last_day) {
  // Within the YMDH range too: no realtime key names an hour outside it.
  return HourRange{std::max({range.start, (w + 1) * kSecondsPerDay, kYmdhMinTs}),
                   std::min({range.end, (last_day + 1) * kSecondsPerDay, kYmdhMaxTs + 1})};
}

bool RealtimeHours(HourRange range, int64_t w, int64_t last_day, size_t max_hours, HourRange* hours) {
  *hours = RealtimeSpan(range, w, last_day);
  return hours->empty() || static_cast<size_t>((hours->end - hours->start) / kSecondsPerHour) <= max_hours;
}

std::string FwsumPath(std::string_view prefix, HourRange span) {
  std::string path = "/fwsum?key=";
  net::PercentEncode(prefix, &path);
  // Tokens of hours in the YMDH range (the realtime days around now): never a failure.
  path += "&from=";
  path += EncodeYmdh(span.start)->view();
  path += "&to=";
  path += EncodeYmdh(span.end - kSecondsPerHour)->view();  // the last hour, included
  return path;
}

std::string FwsumPagePath(std::string_view prefix, HourRange span, std::string_view after) {
  std::string path = FwsumPath(prefix, span);
  path += "&after=";
  net::PercentEncode(after, &path);
  return path;
}

std::string GetPath(std::string_view key) {
  std::string path = "/get?key=";
  net::PercentEncode(key, &path);
  return path;
}

std::string FwmatchPath(std::string_view prefix) {
  std::string path = "/fwmatch?key=";
  net::PercentEncode(prefix, &path);
  return path;
}

std::string FwmatchPagePath(std::string_view prefix, std::string_view after) {
  std::string path = FwmatchPath(prefix);
  path += "&after=";
  net::PercentEncode(after, &path);
  return path;
}

std::string_view LastListedKey(std::string_view body) {
  if (!body.empty() && body.back() == '\n') body.remove_suffix(1);
  const size_t start = body.rfind('\n');
  std::string_view line = start == std::string_view::npos ? body : body.substr(start + 1);
  const size_t comma = line.find(',');
  return comma == std::string_view::npos ? std::string_view() : line.substr(0, comma);
}

std::vector<std::string> MgetPaths(const std::vector<std::string>& keys, size_t max_bytes) {
  MgetPathBuilder paths(max_bytes);
  std::string encoded;
  for (const std::string& key : keys) {
    encoded.clear();
    net::PercentEncode(key, &encoded);
    paths.Add(encoded, {});
  }
  return paths.Take();
}

void MgetPathBuilder::Add(std::string_view encoded_prefix, std::string_view encoded_suffix) {
  const size_t key_size = encoded_prefix.size() + encoded_suffix.size();
  if (!path_.empty() && (path_.size() + 5 + key_size > max_bytes_ || keys_ == max_keys_)) {
    paths_.push_back(std::move(path_));
    path_.clear();
    keys_ = 0;
  }
  if (path_.empty()) path_.reserve(std::min(max_bytes_, size_t{512}));
  path_ += path_.empty() ? "/mget?key=" : "&key=";
  path_ += encoded_prefix;
  path_ += encoded_suffix;
  ++keys_;
}

std::vector<std::string> MgetPathBuilder::Take() {
  if (!path_.empty()) paths_.push_back(std::move(path_));
  path_.clear();
  keys_ = 0;
  std::vector<std::string> out = std::move(paths_);
  paths_.clear();
  return out;
}

std::string_view SkipColumnsBefore(std::string_view value, std::string_view token) {
  // Column starts are offset 0 and every offset after a space. Invariant: the column at or
  // after `lo` may be the answer; every column starting before `lo` has a smaller token.
  size_t lo = 0, hi = value.size();
  auto column_at = [&](size_t at) {  // the first column start at or after `at`
    if (at == 0) return size_t{0};
    size_t space = value.find(' ', at - 1);
    return space == std::string_view::npos ? value.size() : space + 1;
  };
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    size_t start = column_at(mid);
    if (start >= hi) {
      hi = mid;
      continue;
    }
    if (value.substr(start, token.size()) < token) {
      lo = start + 1;
    } else {
      hi = mid;
    }
  }
  return value.substr(std::min(column_at(lo), value.size()));
}

bool LineWalker::Next(std::string_view* key, std::string_view* value) {
  while (!rest_.empty()) {
    size_t nl = rest_.find('\n');
    std::string_view line = rest_.substr(0, nl);
    rest_ = nl == std::string_view::npos ? std::string_view() : rest_.substr(nl + 1);
    if (line.empty()) continue;
    size_t comma = line.find(',');
    if (comma == std::string_view::npos || comma == 0) {
      status_ = Status::Error("backend line '" + std::string(line.substr(0, 80)) +
                              "' is not key,value");
      rest_ = {};
      return false;
    }
    *key = line.substr(0, comma);
    *value = line.substr(comma + 1);
    return true;
  }
  return false;
}

}  // namespace clickatron
