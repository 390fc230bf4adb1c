// `key = value` text (keyformat/key_value.h: manifests, rebuild meta files) and its
// ParseCount, on arbitrary text.
//
// Beyond "no crash":
//   * text that parses formats (Format) to text that parses to the same entries, in the
//     same order, and formatting that again gives the same bytes; Get/GetAll/Has agree with
//     the entries; every key and value is trimmed and free of '\n', every key of '=';
//   * ParseCount accepts exactly nonempty decimal digits up to UINT64_MAX, and the number
//     it reads prints back as the text without leading zeros.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "keyformat/key_value.h"

using namespace clickatron;

namespace {

bool Trimmed(const std::string& s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  return s.empty() || (!blank(s.front()) && !blank(s.back()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  uint64_t count = 0;
  if (ParseCount(text, &count)) {
    FUZZ_CHECK(!text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos,
               "a count is digits");
    const std::string printed = std::to_string(count);
    const size_t first = text.find_first_not_of('0');
    const std::string_view significant = first == std::string_view::npos ? "0" : text.substr(first);
    FUZZ_CHECK(printed == significant, "a count prints back");
  } else if (!text.empty() && text.size() < 20 &&
             text.find_first_not_of("0123456789") == std::string_view::npos) {
    FUZZ_CHECK(false, "up to 19 digits are a count");
  }

  Result<KeyValueText> kv = KeyValueText::Parse(text);
  if (!kv.ok()) return 0;
  for (const KeyValueText::Entry& e : kv->entries()) {
    FUZZ_CHECK(Trimmed(e.key) && Trimmed(e.value), "keys and values are trimmed");
    FUZZ_CHECK(e.key.find('\n') == std::string::npos && e.value.find('\n') == std::string::npos,
               "one line per entry");
    FUZZ_CHECK(e.key.find('=') == std::string::npos, "a key holds no '='");
    FUZZ_CHECK(kv->Has(e.key), "Has finds every key");
    FUZZ_CHECK(!kv->GetAll(e.key).empty(), "GetAll finds every key");
  }
  if (!kv->entries().empty()) {
    FUZZ_CHECK(kv->Get(kv->entries()[0].key) == kv->entries()[0].value, "Get gives the first value");
  }
  const std::string formatted = kv->Format();
  Result<KeyValueText> again = KeyValueText::Parse(formatted);
  FUZZ_CHECK(again.ok(), "formatted text parses");
  FUZZ_CHECK(again->entries().size() == kv->entries().size(), "every entry survives Format");
  for (size_t i = 0; i < kv->entries().size(); ++i) {
    FUZZ_CHECK(again->entries()[i].key == kv->entries()[i].key &&
                   again->entries()[i].value == kv->entries()[i].value,
               "entries survive Format, in order");
  }
  FUZZ_CHECK(again->Format() == formatted, "formatting is deterministic");
  return 0;
}
