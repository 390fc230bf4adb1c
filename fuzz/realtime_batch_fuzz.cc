// Realtime request bodies (realtime/batch.h): the input is parsed both as an /incr batch and
// as a /set batch.
//
// Beyond "no crash":
//   * a batch that parses has one parsed line per line of the body (the last may lack its
//     '\n'), numbered 1.. in order, each a view of its line's text;
//   * an /incr line's key is a realtime count key whose YMDH day is the line's day, and its
//     delta prints back to its value's text (ParseCount); no lookup key is accepted;
//   * a /set line's key is a lookup key and its value unescapes (and escapes back to itself);
//   * a refused batch says which line: "line K: ...".
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/check.h"
#include "keyformat/records.h"
#include "keyformat/ymdh.h"
#include "realtime/batch.h"

using namespace clickatron;

namespace {

std::vector<std::string_view> Lines(std::string_view body) {
  std::vector<std::string_view> out;
  while (!body.empty()) {
    const size_t nl = body.find('\n');
    out.push_back(body.substr(0, nl));
    body.remove_prefix(nl == std::string_view::npos ? body.size() : nl + 1);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> lines = Lines(body);

  std::vector<realtime::IncrLine> incr;
  if (Status s = realtime::ParseIncrBatch(body, &incr); s.ok()) {
    FUZZ_CHECK(incr.size() == lines.size(), "one parsed line per line");
    for (size_t i = 0; i < incr.size(); ++i) {
      const realtime::IncrLine& l = incr[i];
      FUZZ_CHECK(l.line == i + 1, "lines are numbered in order");
      FUZZ_CHECK(lines[i].starts_with(l.key) && lines[i].size() > l.key.size() &&
                     lines[i][l.key.size()] == ',',
                 "the key is the line's text before ','");
      Result<ParsedKey> key = ParseRealtimeKey(l.key);
      FUZZ_CHECK(key.ok() && key->type != RecordType::kLookup, "a count key");
      Result<int64_t> ts = DecodeYmdh(key->ymdh);
      FUZZ_CHECK(ts.ok() && *ts / kSecondsPerDay == l.day, "the day is the key's hour's");
      Result<int64_t> delta = ParseCount(lines[i].substr(l.key.size() + 1));
      FUZZ_CHECK(delta.ok() && *delta == l.delta, "the delta is the value's number");
    }
  } else {
    FUZZ_CHECK(s.message().starts_with("line "), "a refusal names the line");
  }

  std::vector<realtime::LookupLine> lookups;
  if (Status s = realtime::ParseLookupBatch(body, &lookups); s.ok()) {
    FUZZ_CHECK(lookups.size() == lines.size(), "one parsed lookup per line");
    for (size_t i = 0; i < lookups.size(); ++i) {
      const realtime::LookupLine& l = lookups[i];
      FUZZ_CHECK(l.line == i + 1, "lookups are numbered in order");
      FUZZ_CHECK(std::string(l.key) + "," + std::string(l.value) == lines[i],
                 "key and value make the line");
      Result<ParsedKey> key = ParseRealtimeKey(l.key);
      FUZZ_CHECK(key.ok() && key->type == RecordType::kLookup, "a lookup key");
      Result<std::string> original = UnescapeLookupValue(l.value);
      FUZZ_CHECK(original.ok() && !l.value.empty(), "the value unescapes");
      std::string escaped;
      AppendEscapedLookupValue(&escaped, *original);
      FUZZ_CHECK(escaped == l.value, "the value escapes back to itself");
    }
  } else {
    FUZZ_CHECK(s.message().starts_with("line "), "a refusal names the line");
  }
  return 0;
}
