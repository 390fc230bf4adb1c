// Reading the JSON answers one Clickatron process gets from another: the envelope every
// server wraps its JSON in (docs/api.md#clickatron-http-api-and-command-lines, "JSON
// envelope"), a realtime /incr answer, and the /stats fields clickatron-rebuild checks
// (docs/api.md#clickatron-realtime and #clickatron-archive, their GET /stats).
//
// The bodies are parsed with rapidjson, a real JSON parser: escapes are decoded, keys are
// matched by name at their place in the document (a key of the same name elsewhere, such
// as a source called "day", is not mistaken for the field), and the order of members does
// not matter. Each reader returns the fields it names, or an error saying why the body is
// not that answer; a field the answer may leave out reads as empty (or 0).
//
//   Result<JsonAnswer> a = ReadJsonAnswer(response.body);
//   if (a.ok() && a->status_txt == "SLOT_NOT_RELEASED") ...   // a->message: the detail
//
// Pure functions of the body; thread-safe.
#ifndef CLICKATRON_NET_JSON_READ_H_
#define CLICKATRON_NET_JSON_READ_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace clickatron::net {

// The envelope {"status_code": 409, "status_txt": "DAY_EXPIRED", "data": null, "message": "…"}.
struct JsonAnswer {
  int status_code = 0;
  std::string status_txt;  // "OK", or the error's name
  std::string message;     // an error's human detail; empty when absent
};
// Fails unless body is a JSON object with an integer "status_code" and a string "status_txt".
Result<JsonAnswer> ReadJsonAnswer(std::string_view body);

// The data of a realtime /incr answer: {"applied": n, "duplicate": n, "seq": n}.
struct IncrAnswer {
  uint64_t applied = 0;
  uint64_t duplicate = 0;
  int64_t seq = 0;
};
// Fails unless body's "data" is an object holding the three as integers.
Result<IncrAnswer> ReadIncrAnswer(std::string_view body);

// The manifest fields of an archive /stats answer; each empty when the server has no
// manifest (or the field is not a string).
struct ArchiveStatsFields {
  std::string generation;
  std::string last_day;
  int64_t served_ms = -1;  // how long the file has been served; -1 when not said (an older server)
};
// Fails unless body has a "data" object.
Result<ArchiveStatsFields> ReadArchiveStats(std::string_view body);

// One slot of a realtime /stats answer ("slots": [{"slot": 0, "day": …, "state": …}, …]).
struct RealtimeSlotFields {
  std::string day;    // YYYY-MM-DD; empty for a slot that holds no day ("day": null)
  std::string state;  // "empty", "open", "released", …
};
// The slots in order. Fails unless "data"."slots" is an array of objects each with a string
// "state" and a "day" that is a string or null.
Result<std::vector<RealtimeSlotFields>> ReadRealtimeSlots(std::string_view body);

// What the nightly reads of a realtime /stats: the slots, "closed_through" (YYYY-MM-DD; empty
// when null) and "ring" (the data directory's id, realtime/ring_id.h; empty from an older
// server). Fails as ReadRealtimeSlots does, or when either field has another type.
struct RealtimeStatsFields {
  std::vector<RealtimeSlotFields> slots;
  std::string closed_through;
  std::string ring;
};
Result<RealtimeStatsFields> ReadRealtimeStats(std::string_view body);

// The "data" object of an envelope, written back as compact JSON (to embed one server's
// /stats in another's answer: only a parsed, valid object is ever passed on). Fails unless
// body is a JSON object with a "data" object.
Result<std::string> ReadDataJson(std::string_view body);

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_JSON_READ_H_
