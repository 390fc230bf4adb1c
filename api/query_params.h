// QueryParams: the parameters of the read endpoints that take a key's range —
// /series, /breakdown, /subtotals — and of /leaderboard (docs/api-read.md#parameters-and-answers),
// parsed and checked before any backend is asked anything.
//
//   ns, key            required (no key on /leaderboard); ns a namespace (not `_`-prefixed),
//                      key any user key (hashed when not literal, stored_key.h)
//   unit               hour | day (default) | week | mweek | month
//   units              1…10000, or -1 (default, as in bitly's API): back to the bucket
//                      holding the first hour with data
//   unit_reference_ts  unix seconds or `now` (default); within the YMDH range (ymdh.h)
//   start, end         the range form (query_range.h): unix seconds, end exclusive, both or
//                      neither, not with units or unit_reference_ts; the buckets are those
//                      of [start, end), the oldest cut at start's hour
//   timezone           integer hours −14…14 or an IANA name; `hour_offset` is an alias of
//                      an integer timezone (giving both is an error); default UTC
//   rollup             /series: true | false (default)
//   sub, limit         /breakdown: sub required (a namespace); limit 1…1000, default 100
//   limit              /leaderboard: 1…1000, default 10
//
// An empty value (`units=`) counts as absent. A parameter the endpoint does not take is
// refused (400 UNKNOWN_ARG, naming it and those it takes), and so is one given twice (400
// INVALID_ARG_<NAME>): a typo never silently changes the answer. Errors come out as
// QueryError: HTTP status, the status_txt (`MISSING_ARG_KEY`, `INVALID_ARG_UNITS`) and a
// human message.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "api/buckets.h"
#include "api/timezone.h"
#include "net/query.h"

namespace clickatron {

inline constexpr int64_t kUnitsBackToFirst = -1;
inline constexpr int kDefaultLimit = 100;
inline constexpr int kMaxLimit = 1000;
inline constexpr int kDefaultLeaderboardLimit = 10;

enum class QueryKind { kSeries, kBreakdown, kSubtotals, kLeaderboard };

struct QueryParams {
  QueryKind kind = QueryKind::kSeries;
  std::string ns;
  std::string key;         // as the user gave it (none for kLeaderboard)
  std::string stored_key;  // itself or its hash (docs/formats.md#keys-and-hashes)
  std::string sub;         // /breakdown
  Unit unit = Unit::kDay;
  int64_t units = kUnitsBackToFirst;
  int64_t reference_ts = 0;  // with the range form: end - 1
  bool has_range = false;    // the range form: start and end given (query_range.h)
  int64_t start = 0, end = 0;  // unix seconds, end exclusive
  TimeZone tz;
  int tz_offset = 0;       // whole hours at reference_ts
  bool rollup = false;
  int limit = kDefaultLimit;  // /breakdown; /leaderboard's is kDefaultLeaderboardLimit
};

// What a failed request gets: {"status_code": code, "status_txt": ..., "data": null,
// "message": ...}.
struct QueryError {
  int code = 400;
  std::string status_txt;
  std::string message;
};

// wire::kMissingArgPrefix / kInvalidArgPrefix + the parameter name in capitals.
QueryError MissingArg(std::string_view name);
QueryError InvalidArg(std::string_view name, std::string message);

// Refuses a parameter of params not among `allowed` (400 UNKNOWN_ARG: "unknown parameter
// 'timzone' (/series takes ns, key, ...)") and one given twice (400 INVALID_ARG_<NAME>), the
// first in request order; endpoint names the path in the message. True when none is.
bool CheckParamNames(const std::vector<net::QueryParam>& params, std::string_view endpoint,
                     std::initializer_list<std::string_view> allowed, QueryError* error);

// The errors of a backend call a read endpoint ends in: 503 ARCHIVE_UNAVAILABLE or
// REALTIME_UNAVAILABLE naming the shard, and 503 BACKEND_ERROR for data that does not parse.
QueryError BackendUnavailable(bool archive, std::string message);
QueryError BackendDataError(std::string message);

// Parses params (decoded, in request order) for a query of `kind` (CheckParamNames first);
// `now` is the server's unix time, the default unit_reference_ts. With the range form,
// q.units is set to the number of buckets of [start, end). Returns false with *error filled
// on bad input.
bool ParseQueryParams(QueryKind kind, const std::vector<net::QueryParam>& params, int64_t now,
                      QueryParams* out, QueryError* error);

}  // namespace clickatron
