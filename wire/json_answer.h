// The JSON envelope every Clickatron server wraps its JSON answers in, as a client reads it
// (docs/wire.md#the-envelope; docs/api.md#conventions): {"status_code": 409, "status_txt":
// "DAY_EXPIRED", "data": null, "message": "…"}. net/json.h writes it; the answer shapes inside
// "data" are realtime_answers.h and archive_answers.h.
//
// The bodies are parsed with rapidjson, a real JSON parser: escapes are decoded, keys are
// matched by name at their place in the document (a key of the same name elsewhere, such
// as a source called "day", is not mistaken for the field), and the order of members does
// not matter. Each reader returns the fields it names, or an error saying why the body is
// not that answer; a field the answer may leave out reads as empty (or 0).
//
//   Result<JsonAnswer> a = ReadJsonAnswer(response.body);
//   if (a.ok() && a->status_txt == wire::kSlotNotReleased) ...   // a->message: the detail
//
// Pure functions of the body; thread-safe.
#ifndef CLICKATRON_WIRE_JSON_ANSWER_H_
#define CLICKATRON_WIRE_JSON_ANSWER_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::wire {

struct JsonAnswer {
  int status_code = 0;
  std::string status_txt;  // "OK", or the error's name (refusals.h)
  std::string message;     // an error's human detail; empty when absent
};
// Fails unless body is a JSON object with an integer "status_code" and a string "status_txt".
Result<JsonAnswer> ReadJsonAnswer(std::string_view body);

// The "data" object of an envelope, written back as compact JSON (to embed one server's
// /stats in another's answer: only a parsed, valid object is ever passed on). Fails unless
// body is a JSON object with a "data" object.
Result<std::string> ReadDataJson(std::string_view body);

}  // namespace clickatron::wire

#endif  // CLICKATRON_WIRE_JSON_ANSWER_H_
