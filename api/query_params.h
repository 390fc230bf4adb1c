// QueryParams: the parameters of /series and /breakdown (docs/api-read.md#parameters-and-answers), parsed and checked
// before any backend is asked anything.
//
//   ns, key            required; ns a namespace (not `_`-prefixed), key any user key (hashed
//                      when not literal, stored_key.h)
//   unit               hour | day (default) | week | mweek | month
//   units              1…10000, or -1 (default, as in bitly's API): back to the bucket
//                      holding the first hour with data
//   unit_reference_ts  unix seconds or `now` (default); within the YMDH range (ymdh.h)
//   timezone           integer hours −14…14 or an IANA name; `hour_offset` is an alias of
//                      an integer timezone (giving both is an error); default UTC
//   rollup             true | false (default)
//   sub, limit         /breakdown only: sub required (a namespace); limit 1…1000, default 100
//
// An empty value (`units=`) counts as absent. Unknown parameters are ignored (clients of
// bitly's API send access_token, format, ...). Errors come out as QueryError: HTTP status,
// the SPEC's status_txt (`MISSING_ARG_KEY`, `INVALID_ARG_UNITS`) and a human message.
#pragma once

#include <cstdint>
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

enum class QueryKind { kSeries, kBreakdown };

struct QueryParams {
  QueryKind kind = QueryKind::kSeries;
  std::string ns;
  std::string key;         // as the user gave it
  std::string stored_key;  // itself or its hash (docs/formats.md#keys-and-hashes)
  std::string sub;         // /breakdown
  Unit unit = Unit::kDay;
  int64_t units = kUnitsBackToFirst;
  int64_t reference_ts = 0;
  TimeZone tz;
  int tz_offset = 0;       // whole hours at reference_ts
  bool rollup = false;
  int limit = kDefaultLimit;
};

// What a failed request gets: {"status_code": code, "status_txt": ..., "data": null,
// "message": ...}.
struct QueryError {
  int code = 400;
  std::string status_txt;
  std::string message;
};

// "MISSING_ARG_" / "INVALID_ARG_" + the parameter name in capitals.
QueryError MissingArg(std::string_view name);
QueryError InvalidArg(std::string_view name, std::string message);

// Parses params (decoded, in request order) for a query of `kind`; `now` is the server's
// unix time, the default unit_reference_ts. Returns false with *error filled on bad input.
bool ParseQueryParams(QueryKind kind, const std::vector<net::QueryParam>& params, int64_t now,
                      QueryParams* out, QueryError* error);

}  // namespace clickatron
