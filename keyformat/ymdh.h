// YMDH: the 4-character hour token of docs/formats.md#hours-ymdh.
//
// b32(year-2000) b32(month) b32(day) b32(hour), alphabet 0-9a-v, all UTC. Tokens sort in
// time order. The format holds 2000-01-01 00:00 to 2031-12-31 23:00 UTC and nothing else:
// times outside are rejected, never wrapped (year 2032 would need a 33rd symbol). The long
// explanation is in docs/formats.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron {

inline constexpr char kYmdhAlphabet[] = "0123456789abcdefghijklmnopqrstuv";
inline constexpr size_t kYmdhSize = 4;
// First and last unix second the format can hold.
inline constexpr int64_t kYmdhMinTs = 946684800;   // 2000-01-01 00:00:00 UTC
inline constexpr int64_t kYmdhMaxTs = 1956527999;  // 2031-12-31 23:59:59 UTC
inline constexpr int64_t kSecondsPerHour = 3600;
inline constexpr int64_t kSecondsPerDay = 86400;

// A fixed 4-byte token; data() is not NUL-terminated.
struct Ymdh {
  char bytes[kYmdhSize];
  std::string_view view() const { return std::string_view(bytes, kYmdhSize); }
};

// The value (0 .. 31) of one symbol of the alphabet, -1 for any other byte.
int YmdhSymbolValue(char symbol);

// The token of the hour holding unix time `ts`. Fails outside [kYmdhMinTs, kYmdhMaxTs].
Result<Ymdh> EncodeYmdh(int64_t ts);

// The unix time of the start of the hour named by `token`. Fails on a wrong length, a
// symbol outside the alphabet (uppercase included), or an impossible date or hour.
Result<int64_t> DecodeYmdh(std::string_view token);
// The same without the reason: true and *ts exactly when DecodeYmdh succeeds.
bool DecodeYmdhQuietly(std::string_view token, int64_t* ts);

// Days since 1970-01-01 of the hour named by a token already known to be valid.
int64_t DayOfYmdhUnchecked(std::string_view token);

// "YYYY-MM-DD" of a day number, and back (the day must be within the YMDH range).
std::string FormatDay(int64_t day);
Result<int64_t> ParseDay(std::string_view text);

}  // namespace clickatron
