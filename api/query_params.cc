#include "api/query_params.h"

#include <charconv>

#include "api/query_range.h"

#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"
#include "wire/refusals.h"

namespace clickatron {

namespace {

// The first value of `name`; empty when absent or given empty.
std::string_view Param(const std::vector<net::QueryParam>& params, std::string_view name) {
  for (const net::QueryParam& p : params) {
    if (p.name == name) return p.value;
  }
  return {};
}

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty() || text[0] == '+') return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string Quoted(std::string_view text) {
  constexpr size_t kShown = 64;  // a 4 KB bad value does not need echoing whole
  std::string q = "'";
  q.append(text.substr(0, kShown));
  if (text.size() > kShown) q += "...";
  q += "'";
  return q;
}

bool ParseNames(const std::vector<net::QueryParam>& params, QueryParams* out, QueryError* error) {
  std::string_view ns = Param(params, "ns");
  if (ns.empty()) return *error = MissingArg("ns"), false;
  if (Status s = ValidateNamespace(ns, "ns"); !s.ok()) {
    return *error = InvalidArg("ns", s.message()), false;
  }
  out->ns.assign(ns);
  if (out->kind == QueryKind::kLeaderboard) return true;
  std::string_view key = Param(params, "key");
  if (key.empty()) return *error = MissingArg("key"), false;
  if (Status s = ValidateUserKey(key, "key"); !s.ok()) {
    return *error = InvalidArg("key", s.message()), false;
  }
  out->key.assign(key);
  out->stored_key = StoredKey(key);
  if (out->kind == QueryKind::kBreakdown) {
    std::string_view sub = Param(params, "sub");
    if (sub.empty()) return *error = MissingArg("sub"), false;
    if (Status s = ValidateNamespace(sub, "sub"); !s.ok()) {
      return *error = InvalidArg("sub", s.message()), false;
    }
    out->sub.assign(sub);
  }
  return true;
}

// start and end (the range form, query_range.h): both or neither, not with units or
// unit_reference_ts; the reference becomes end - 1.
bool ParseRangeForm(const std::vector<net::QueryParam>& params, QueryParams* out, QueryError* error) {
  std::string_view start = Param(params, "start"), end = Param(params, "end");
  if (start.empty() && end.empty()) return true;
  if (start.empty()) return *error = MissingArg("start"), false;
  if (end.empty()) return *error = MissingArg("end"), false;
  for (std::string_view other : {"units", "unit_reference_ts"}) {
    if (!Param(params, other).empty()) {
      return *error = InvalidArg(other, std::string(other) + " cannot be given with start and end: the range "
                                                             "gives the buckets"),
             false;
    }
  }
  if (!ParseInt(start, &out->start) || out->start < kYmdhMinTs || out->start > kYmdhMaxTs) {
    return *error = InvalidArg("start", "start " + Quoted(start) +
                                            " is not unix seconds from 2000-01-01 to 2031-12-31 UTC"),
           false;
  }
  if (!ParseInt(end, &out->end) || out->end <= out->start || out->end > kYmdhMaxTs + 1) {
    return *error = InvalidArg("end", "end " + Quoted(end) + " is not unix seconds after start (" +
                                          std::to_string(out->start) + ") and at most 2032-01-01 00:00 UTC"),
           false;
  }
  out->has_range = true;
  out->reference_ts = out->end - 1;
  return true;
}

bool ParseRange(const std::vector<net::QueryParam>& params, int64_t now, QueryParams* out,
                QueryError* error) {
  if (std::string_view unit = Param(params, "unit"); !unit.empty()) {
    Result<Unit> u = ParseUnit(unit);
    if (!u.ok()) return *error = InvalidArg("unit", u.status().message()), false;
    out->unit = u.value();
  }
  if (!ParseRangeForm(params, out, error)) return false;
  if (out->has_range) return true;
  if (std::string_view units = Param(params, "units"); !units.empty()) {
    int64_t n = 0;
    if (!ParseInt(units, &n) || (n != kUnitsBackToFirst && (n < 1 || n > kMaxBuckets))) {
      return *error = InvalidArg("units", "units " + Quoted(units) +
                                              " is not -1 or a whole number from 1 to 10000"),
             false;
    }
    out->units = n;
  }
  out->reference_ts = now;
  if (std::string_view ref = Param(params, "unit_reference_ts"); !ref.empty() && ref != "now") {
    int64_t ts = 0;
    if (!ParseInt(ref, &ts)) {
      return *error = InvalidArg("unit_reference_ts", "unit_reference_ts " + Quoted(ref) +
                                                          " is not unix seconds or 'now'"),
             false;
    }
    out->reference_ts = ts;
  }
  if (out->reference_ts < kYmdhMinTs || out->reference_ts > kYmdhMaxTs) {
    return *error = InvalidArg("unit_reference_ts",
                               "unit_reference_ts " + std::to_string(out->reference_ts) +
                                   " is outside the hours Clickatron can hold (2000-01-01 to "
                                   "2031-12-31 UTC)"),
           false;
  }
  return true;
}

// The range form's bucket count, once the zone is known: at most 10000.
bool CountRangeBuckets(QueryParams* out, QueryError* error) {
  Result<int64_t> n = RangeBucketCount(out->unit, out->tz, out->start, out->end);
  if (!n.ok()) return *error = InvalidArg("timezone", n.status().message()), false;
  if (n.value() > kMaxBuckets) {
    return *error = InvalidArg("start", "the range from start to end holds more than 10000 " +
                                            std::string(UnitName(out->unit)) +
                                            " buckets; give a larger unit or a shorter range"),
           false;
  }
  out->units = n.value();
  return true;
}

// The parameters each kind takes (docs/api-read.md#parameters-and-answers).
bool CheckKindParams(QueryKind kind, const std::vector<net::QueryParam>& params, QueryError* error) {
  switch (kind) {
    case QueryKind::kSeries:
      return CheckParamNames(params, "/series",
                             {"ns", "key", "unit", "units", "unit_reference_ts", "start", "end", "timezone",
                              "hour_offset", "rollup"},
                             error);
    case QueryKind::kBreakdown:
      return CheckParamNames(params, "/breakdown",
                             {"ns", "key", "sub", "unit", "units", "unit_reference_ts", "start", "end",
                              "timezone", "hour_offset", "limit"},
                             error);
    case QueryKind::kSubtotals:
      return CheckParamNames(params, "/subtotals",
                             {"ns", "key", "unit", "units", "unit_reference_ts", "start", "end", "timezone",
                              "hour_offset"},
                             error);
    case QueryKind::kLeaderboard:
      return CheckParamNames(params, "/leaderboard",
                             {"ns", "unit", "units", "unit_reference_ts", "start", "end", "timezone",
                              "hour_offset", "limit"},
                             error);
  }
  return true;
}

bool ParseZone(const std::vector<net::QueryParam>& params, QueryParams* out, QueryError* error) {
  std::string_view timezone = Param(params, "timezone");
  std::string_view hour_offset = Param(params, "hour_offset");
  if (!timezone.empty() && !hour_offset.empty()) {
    return *error = InvalidArg("hour_offset",
                               "hour_offset is an alias of timezone; give only one of them"),
           false;
  }
  if (!timezone.empty()) {
    Result<TimeZone> tz = TimeZone::Parse(timezone);
    if (!tz.ok()) return *error = InvalidArg("timezone", tz.status().message()), false;
    out->tz = tz.value();
  } else if (!hour_offset.empty()) {
    Result<TimeZone> tz = TimeZone::ParseHours(hour_offset);
    if (!tz.ok()) return *error = InvalidArg("hour_offset", tz.status().message()), false;
    out->tz = tz.value();
  }
  Result<int> offset = WholeHourOffsetAt(out->tz, out->reference_ts);
  if (!offset.ok()) {
    return *error = InvalidArg(timezone.empty() ? "hour_offset" : "timezone",
                               offset.status().message()),
           false;
  }
  out->tz_offset = offset.value();
  return true;
}

}  // namespace

bool CheckParamNames(const std::vector<net::QueryParam>& params, std::string_view endpoint,
                     std::initializer_list<std::string_view> allowed, QueryError* error) {
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string_view name = params[i].name;
    bool known = false;
    for (std::string_view a : allowed) known = known || a == name;
    if (!known) {
      std::string takes;
      for (std::string_view a : allowed) takes += (takes.empty() ? "" : ", ") + std::string(a);
      error->code = 400;
      error->status_txt = wire::kUnknownArg;
      error->message = "unknown parameter " + Quoted(name) + " (" + std::string(endpoint) +
                       (takes.empty() ? " takes none)" : " takes " + takes + ")");
      return false;
    }
    for (size_t j = 0; j < i; ++j) {
      if (params[j].name == name) {
        *error = InvalidArg(name, std::string(name) + " is given twice; give it once");
        return false;
      }
    }
  }
  return true;
}

QueryError BackendUnavailable(bool archive, std::string message) {
  return QueryError{503, archive ? wire::kArchiveUnavailable : wire::kRealtimeUnavailable, std::move(message)};
}

QueryError BackendDataError(std::string message) { return QueryError{503, wire::kBackendError, std::move(message)}; }

QueryError MissingArg(std::string_view name) {
  QueryError e;
  e.status_txt = wire::kMissingArgPrefix;
  for (char c : name) e.status_txt += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  e.message = "parameter '" + std::string(name) + "' is required";
  return e;
}

QueryError InvalidArg(std::string_view name, std::string message) {
  QueryError e;
  e.status_txt = wire::kInvalidArgPrefix;
  for (char c : name) e.status_txt += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  e.message = std::move(message);
  return e;
}

bool ParseQueryParams(QueryKind kind, const std::vector<net::QueryParam>& params, int64_t now,
                      QueryParams* out, QueryError* error) {
  out->kind = kind;
  if (!CheckKindParams(kind, params, error)) return false;
  if (!ParseNames(params, out, error)) return false;
  if (!ParseRange(params, now, out, error)) return false;
  if (!ParseZone(params, out, error)) return false;
  if (out->has_range && !CountRangeBuckets(out, error)) return false;
  if (std::string_view rollup = Param(params, "rollup"); !rollup.empty()) {
    if (rollup == "true" || rollup == "1") {
      out->rollup = true;
    } else if (rollup == "false" || rollup == "0") {
      out->rollup = false;
    } else {
      *error = InvalidArg("rollup", "rollup " + Quoted(rollup) + " is not true or false");
      return false;
    }
  }
  if (kind == QueryKind::kBreakdown || kind == QueryKind::kLeaderboard) {
    out->limit = kind == QueryKind::kBreakdown ? kDefaultLimit : kDefaultLeaderboardLimit;
    if (std::string_view limit = Param(params, "limit"); !limit.empty()) {
      int64_t n = 0;
      if (!ParseInt(limit, &n) || n < 1 || n > kMaxLimit) {
        *error = InvalidArg("limit", "limit " + Quoted(limit) +
                                         " is not a whole number from 1 to 1000");
        return false;
      }
      out->limit = static_cast<int>(n);
    }
  }
  return true;
}

}  // namespace clickatron
