// YMDH hour tokens and YYYY-MM-DD days (keyformat/ymdh.h) on arbitrary text and times.
//
// Beyond "no crash":
//   * a token that decodes is 4 symbols of the alphabet naming the start of an hour in
//     [kYmdhMinTs, kYmdhMaxTs], and encoding that time gives the token back; its day is
//     DayOfYmdhUnchecked's;
//   * any time in range encodes to a token that decodes to the start of its hour; any time
//     outside is refused;
//   * a day text that parses formats back to the same text; FormatDay of a day in range
//     parses back to it.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "keyformat/ymdh.h"

using namespace clickatron;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<int64_t> ts = DecodeYmdh(text);
  if (ts.ok()) {
    FUZZ_CHECK(text.size() == kYmdhSize &&
                   text.find_first_not_of(kYmdhAlphabet) == std::string_view::npos,
               "a token is 4 symbols of the alphabet");
    FUZZ_CHECK(*ts >= kYmdhMinTs && *ts <= kYmdhMaxTs && *ts % kSecondsPerHour == 0,
               "a token names an hour in range");
    Result<Ymdh> token = EncodeYmdh(*ts);
    FUZZ_CHECK(token.ok() && token->view() == text, "a decoded token encodes back");
    FUZZ_CHECK(DayOfYmdhUnchecked(text) == *ts / kSecondsPerDay, "the token's day");
  }
  Result<int64_t> day = ParseDay(text);
  if (day.ok()) {
    FUZZ_CHECK(FormatDay(*day) == text, "a parsed day formats back");
  }

  FuzzedDataProvider in(data, size);
  const int64_t t = in.ConsumeBool() ? in.ConsumeIntegral<int64_t>()
                                     : in.ConsumeIntegralInRange<int64_t>(kYmdhMinTs - 7200,
                                                                          kYmdhMaxTs + 7200);
  Result<Ymdh> token = EncodeYmdh(t);
  if (t < kYmdhMinTs || t > kYmdhMaxTs) {
    FUZZ_CHECK(!token.ok(), "a time outside the range is refused");
  } else {
    FUZZ_CHECK(token.ok(), "a time in range encodes");
    Result<int64_t> back = DecodeYmdh(token->view());
    FUZZ_CHECK(back.ok() && *back == t - t % kSecondsPerHour, "a token decodes to its hour");
    const int64_t d = t / kSecondsPerDay;
    Result<int64_t> parsed = ParseDay(FormatDay(d));
    FUZZ_CHECK(parsed.ok() && *parsed == d, "a day formats and parses back");
  }
  return 0;
}
