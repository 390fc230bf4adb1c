// IncrEvent: one event of `/incr` (docs/api.md#api-incr), parsed and validated from its query
// parameters — the query string of `GET /incr` or one line of a `POST /incr` body.
//
//   ns=u&key=jehiah&value=2&ts=1332637200&sub=country:US&sub=ref:http://bit.ly/
//
// ns and key are required; value is a signed 64-bit integer other than 0 (default 1); ts
// is unix seconds (default: now) within the window the realtime ring holds: from yesterday
// 00:00 UTC to tomorrow 23:59:59 UTC (older → TS_TOO_OLD, later → TS_IN_FUTURE); every
// `sub=<subns>:<subkey>` adds a subtotal, split at the FIRST ':' (a subtotal namespace has
// no ':'; the subkey may, and is then stored as its hash). A parameter other than these
// five is refused (400 UNKNOWN_ARG): a typo such as `vaule=5` would otherwise count 1
// silently. ns, key, value and ts may appear once.
//
// Errors carry what the client sees: the HTTP code, the status_txt of docs/api.md#api-incr
// (`MISSING_ARG_KEY`, `INVALID_ARG_TS`, `TS_TOO_OLD`, ...) and a message naming the problem.
// The parsed Event holds views into the parameter values: valid while they are.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "keyformat/event.h"
#include "net/query.h"

namespace clickatron {

struct IncrError {
  int code = 400;
  std::string status_txt;  // a refusal name: INVALID_ARG_TS, TS_TOO_OLD, …
  std::string message;     // "ts 99 is before yesterday 00:00 UTC (2026-11-21)"
};

// The ts window for `now` (unix seconds): [first, last], both inclusive.
struct TsWindow {
  int64_t first = 0;  // yesterday 00:00:00 UTC
  int64_t last = 0;   // tomorrow 23:59:59 UTC
};
TsWindow TsWindowAt(int64_t now);

// Fills *event from params (the subs vector is cleared and reused, so a caller parsing
// many events allocates only while it grows). Returns false and fills *error on the first
// problem. `now` is the default ts and anchors the window.
bool ParseIncrEvent(const std::vector<net::QueryParam>& params, int64_t now, Event* event,
                    IncrError* error);

// The error for a query string that failed to decode (bad percent-encoding in parameter
// `bad_param`): INVALID_ARG_<NAME> for a known parameter, else UNKNOWN_ARG.
IncrError QueryDecodeError(std::string_view bad_param, std::string_view message);

}  // namespace clickatron
