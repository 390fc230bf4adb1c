// Query strings and percent decoding (net/query.h) on arbitrary bytes.
//
// Beyond "no crash":
//   * PercentDecode(PercentEncode(s)) == s, with and without '+' as a space (the encoder
//     escapes '+', so both readings agree);
//   * PercentDecodeAppend fails exactly when PercentDecode does, and on failure the offset
//     it returns is a '%' of the input not followed by two hex digits;
//   * a Query parse that succeeds yields parameters whose percent-encoding, joined with
//     '=' and '&', parses back to the same (name, value) pairs; Get and Count agree with
//     the parameter list;
//   * a failed parse names a parameter (bad_param) that occurs in the raw text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/check.h"
#include "net/query.h"

using clickatron::net::PercentDecode;
using clickatron::net::PercentDecodeAppend;
using clickatron::net::PercentEncode;
using clickatron::net::Query;

namespace {

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);

  // Encoding round trip.
  const std::string encoded = PercentEncode(in);
  for (bool plus : {false, true}) {
    std::string decoded;
    FUZZ_CHECK(PercentDecode(encoded, plus, &decoded).ok(), "an encoded string decodes");
    FUZZ_CHECK(decoded == in, "decoding an encoded string gives it back");
  }

  // Raw decoding: the two entry points agree; a failure points at a bad escape.
  for (bool plus : {false, true}) {
    std::string a, b;
    const size_t bad = PercentDecodeAppend(in, plus, &a);
    const bool ok = PercentDecode(in, plus, &b).ok();
    FUZZ_CHECK(ok == (bad == std::string_view::npos), "both decoders agree");
    FUZZ_CHECK(a == b, "both decoders decode the same bytes");
    FUZZ_CHECK(a.size() <= in.size(), "decoding never grows the text");
    if (!ok) {
      FUZZ_CHECK(bad < in.size() && in[bad] == '%', "the bad offset is a '%'");
      FUZZ_CHECK(bad + 2 >= in.size() || !IsHex(in[bad + 1]) || !IsHex(in[bad + 2]),
                 "the bad '%' is not followed by two hex digits");
    }
  }

  // Query parsing, and re-encoding what it parsed.
  Query query;
  const bool parsed = query.Parse(in).ok();
  if (!parsed) {
    FUZZ_CHECK(in.find(query.bad_param()) != std::string_view::npos,
               "the bad parameter is named as it was sent");
    return 0;
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  std::string again;
  for (const auto& p : query.params()) {
    pairs.emplace_back(std::string(p.name), std::string(p.value));
    if (!again.empty()) again += '&';
    PercentEncode(p.name, &again);
    again += '=';
    PercentEncode(p.value, &again);
    FUZZ_CHECK(query.Get(p.name).has_value(), "Get finds every parsed name");
    FUZZ_CHECK(query.Count(p.name) >= 1, "Count counts every parsed name");
  }
  if (!pairs.empty()) {
    FUZZ_CHECK(*query.Get(pairs[0].first) == pairs[0].second, "Get gives the first value");
  }
  Query reparsed;
  FUZZ_CHECK(reparsed.Parse(again).ok(), "the re-encoded query parses");
  FUZZ_CHECK(reparsed.params().size() == pairs.size(), "the same number of parameters");
  for (size_t i = 0; i < pairs.size(); ++i) {
    FUZZ_CHECK(reparsed.params()[i].name == pairs[i].first, "the same names, in order");
    FUZZ_CHECK(reparsed.params()[i].value == pairs[i].second, "the same values, in order");
  }
  return 0;
}
