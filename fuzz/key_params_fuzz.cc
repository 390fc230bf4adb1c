// The key parameters of archive (and realtime) reads, archive/key_params.h, on arbitrary
// query strings, in both modes (/get's first `key`, /mget's every parameter starting 'k').
//
// Beyond "no crash":
//   * a parse that succeeds gives keys of 1..kMaxKeyBytes bytes, each the percent-decoding
//     ('+' kept literally) of a key parameter's value; a failed one names the parameter
//     (INVALID_ARG_KEY, ...);
//   * the keys, percent-encoded back into a query (`key=..&k=..`), parse to the same keys,
//     and a limit survives the trip too (a plain key with '+' stays '+').
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "archive/key_params.h"
#include "fuzz/check.h"
#include "net/query.h"

using clickatron::archive::KeyParams;
using clickatron::archive::kMaxKeyBytes;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  for (KeyParams::Mode mode : {KeyParams::Mode::kFirstKey, KeyParams::Mode::kEveryK}) {
    KeyParams params;
    if (!params.Parse(raw, mode)) {
      FUZZ_CHECK(std::string_view(params.error_name()).starts_with("INVALID_ARG_"),
                 "a failed parse names the bad parameter");
      FUZZ_CHECK(!params.error().empty(), "a failed parse says why");
      continue;
    }
    if (mode == KeyParams::Mode::kFirstKey) {
      FUZZ_CHECK(params.keys().size() <= 1, "/get reads one key at most");
    }
    const std::vector<std::string> keys(params.keys().begin(), params.keys().end());
    std::string again;
    for (const std::string& key : keys) {
      FUZZ_CHECK(!key.empty() && key.size() <= kMaxKeyBytes, "a key is 1..4096 bytes");
      FUZZ_CHECK(raw.find('=') != std::string_view::npos, "a key came from a key=value");
      if (!again.empty()) again += '&';
      again += "key=";
      clickatron::net::PercentEncode(key, &again);
    }
    std::optional<std::string> limit;
    if (params.limit().has_value()) {
      limit = std::string(*params.limit());
      FUZZ_CHECK(limit->find('&') == std::string::npos, "a limit is one parameter's value");
      again += "&limit=" + *limit;
    }
    KeyParams reparsed;
    FUZZ_CHECK(reparsed.Parse(again, mode), "re-encoded keys parse");
    FUZZ_CHECK(reparsed.keys().size() == keys.size(), "the same number of keys");
    for (size_t i = 0; i < keys.size(); ++i) {
      FUZZ_CHECK(reparsed.keys()[i] == keys[i], "the same keys, in order");
    }
    FUZZ_CHECK(reparsed.limit().has_value() == limit.has_value(), "a limit stays");
    if (limit.has_value()) FUZZ_CHECK(*reparsed.limit() == *limit, "the same limit");
  }
  return 0;
}
