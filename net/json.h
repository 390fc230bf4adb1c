// JSON output: a small streaming writer with correct string escaping, and the response
// envelope of docs/api.md#conventions.
//
// Strings are escaped so that any byte sequence produces valid JSON: '"' and '\' get a
// backslash, \b \f \n \r \t their short forms, every other control byte (0x00-0x1F, 0x7F)
// \u00XX, valid UTF-8 passes through unchanged, and every byte that is not part of a
// valid UTF-8 sequence (stray continuation bytes, overlong forms, surrogates, code points
// above U+10FFFF, truncated sequences) becomes \ufffd, one per byte. So a hashed key's
// original bytes, whatever they were, can always be shown.
//
// JsonWriter appends to a caller-owned std::string and inserts commas itself; the caller
// only has to nest calls correctly (REQUIRES: a Key() before every value inside an object,
// no Key() inside an array, at most 64 levels of nesting).
//
//   std::string out;
//   JsonWriter w(&out);
//   w.BeginObject();
//   w.Key("ns"); w.String("u");
//   w.Key("series"); w.BeginArray(); w.BeginObject(); w.Key("dt"); w.Int(1332633600);
//   w.EndObject(); w.EndArray();
//   w.EndObject();   // out == {"ns":"u","series":[{"dt":1332633600}]}
//
// Not thread-safe; cheap to construct (no allocation of its own).
#ifndef CLICKATRON_NET_JSON_H_
#define CLICKATRON_NET_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace clickatron::net {

// Appends s as a JSON string literal, quotes included, escaped as described above.
void AppendJsonString(std::string_view s, std::string* out);

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view name);
  void String(std::string_view value);
  void Int(int64_t value);
  // A count of up to 128 bits (docs/api.md#conventions): a plain integer literal, exact
  // whatever its size (a JavaScript client parses one past 2^53 as a BigInt).
  void Count(__int128 value);
  void Uint(uint64_t value);
  // Finite values as the shortest text that reads back exactly; NaN and infinities as null
  // (JSON has no spelling for them).
  void Double(double value);
  void Bool(bool value);
  void Null();
  // Appends already-serialised JSON as one value (e.g. a "data" object built elsewhere).
  // REQUIRES: raw is one valid JSON value.
  void Raw(std::string_view raw);

  // A member of the open object: Key(name) then the value, written as the value's type
  // says (signed integers as Int, unsigned as Uint, double, bool, string). So an object
  // of counters reads as a list of named fields:
  //   w.Field("records", db.records()); w.Field("generation", m.generation);
  template <typename T>
    requires std::is_integral_v<T> && (!std::is_same_v<T, bool>)
  void Field(std::string_view name, T value) {
    Key(name);
    if constexpr (std::is_signed_v<T>) {
      Int(value);
    } else {
      Uint(value);
    }
  }
  void Field(std::string_view name, double value) { Key(name); Double(value); }
  void Field(std::string_view name, bool value) { Key(name); Bool(value); }
  void Field(std::string_view name, std::string_view value) { Key(name); String(value); }
  // A string literal is a string, not the bool a pointer would convert to.
  void Field(std::string_view name, const char* value) { Key(name); String(value); }
  // A member whose value is an object or array: Key(name), then Begin…; End… as usual.
  void BeginObject(std::string_view name) { Key(name); BeginObject(); }
  void BeginArray(std::string_view name) { Key(name); BeginArray(); }

 private:
  void BeforeValue();

  std::string* out_;
  uint64_t first_ = 1;  // bit d: no element written yet at depth d
  int depth_ = 0;
  bool after_key_ = false;
};

// The docs/api.md#conventions envelope: {"status_code": 200, "status_txt": "OK", "data": <data_json>}.
// REQUIRES: data_json is one valid JSON value ("null" for errors).
std::string JsonEnvelope(int status_code, std::string_view status_txt,
                         std::string_view data_json);

// The error form: {"status_code": 400, "status_txt": "MISSING_ARG_KEY", "data": null},
// with a trailing "message": "<human detail>" when message is not empty.
std::string JsonErrorEnvelope(int status_code, std::string_view status_txt,
                              std::string_view message = {});

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_JSON_H_
