#include "api/query_params.h"

#include <charconv>

#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

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
  std::string_view key = Param(params, "key");
  if (key.empty()) return *error = MissingArg("key"), false;
  if (Status s = ValidateUserKey(key, "key"); !s.ok()) {
    return *error = InvalidArg("key", s.message()), false;
  }
  out->ns.assign(ns);
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

bool ParseRange(const std::vector<net::QueryParam>& params, int64_t now, QueryParams* out,
                QueryError* error) {
  if (std::string_view unit = Param(params, "unit"); !unit.empty()) {
    Result<Unit> u = ParseUnit(unit);
    if (!u.ok()) return *error = InvalidArg("unit", u.status().message()), false;
    out->unit = u.value();
  }
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

QueryError MissingArg(std::string_view name) {
  QueryError e;
  e.status_txt = "MISSING_ARG_";
  for (char c : name) e.status_txt += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  e.message = "parameter '" + std::string(name) + "' is required";
  return e;
}

QueryError InvalidArg(std::string_view name, std::string message) {
  QueryError e;
  e.status_txt = "INVALID_ARG_";
  for (char c : name) e.status_txt += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  e.message = std::move(message);
  return e;
}

bool ParseQueryParams(QueryKind kind, const std::vector<net::QueryParam>& params, int64_t now,
                      QueryParams* out, QueryError* error) {
  out->kind = kind;
  if (!ParseNames(params, out, error)) return false;
  if (!ParseRange(params, now, out, error)) return false;
  if (!ParseZone(params, out, error)) return false;
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
  if (kind == QueryKind::kBreakdown) {
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
