// The rapidjson steps every answer reader of wire/ takes (json_answer.cc,
// realtime_answers.cc, archive_answers.cc): parse a body, find a member by name at its place,
// read a string, find the envelope's "data". Internal to wire/: the readers' headers name no
// rapidjson type.
#ifndef CLICKATRON_WIRE_JSON_DOC_H_
#define CLICKATRON_WIRE_JSON_DOC_H_

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::wire::json {

// Parses body into *doc; an error quoting rapidjson's reason and where it stopped, or
// "not a JSON object".
Status Parse(std::string_view body, rapidjson::Document* doc);

// The member `name` of object v, or nullptr (also when v is not an object).
const rapidjson::Value* Member(const rapidjson::Value& v, const char* name);

// v's string; empty when v is null, absent or not a string.
std::string StringOf(const rapidjson::Value* v);

// The "data" object of an answer, or an error.
Result<const rapidjson::Value*> DataOf(const rapidjson::Document& doc);

}  // namespace clickatron::wire::json

#endif  // CLICKATRON_WIRE_JSON_DOC_H_
