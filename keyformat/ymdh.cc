#include "keyformat/ymdh.h"

#include <date/date.h>

#include <charconv>
#include <cstdio>
#include <cstring>

namespace clickatron {
namespace {

// Symbol → value, -1 for bytes outside the alphabet.
struct SymbolTable {
  int8_t value[256];
  constexpr SymbolTable() : value() {
    for (int i = 0; i < 256; i++) value[i] = -1;
    for (int i = 0; i < 32; i++) value[static_cast<unsigned char>(kYmdhAlphabet[i])] = int8_t(i);
  }
};
constexpr SymbolTable kSymbols;

std::string RangeError(int64_t ts) {
  return "time " + std::to_string(ts) +
         " is outside the YMDH range 2000-01-01 00:00 to 2031-12-31 23:59:59 UTC (unix " +
         std::to_string(kYmdhMinTs) + " to " + std::to_string(kYmdhMaxTs) + ")";
}

}  // namespace

int YmdhSymbolValue(char symbol) { return kSymbols.value[static_cast<unsigned char>(symbol)]; }

Result<Ymdh> EncodeYmdh(int64_t ts) {
  if (ts < kYmdhMinTs || ts > kYmdhMaxTs) return Status::Error(RangeError(ts));
  const int64_t day = ts / kSecondsPerDay;  // ts > 0 here, so division floors
  const int hour = int((ts % kSecondsPerDay) / kSecondsPerHour);
  const date::year_month_day ymd{date::sys_days{date::days{day}}};
  Ymdh out;
  out.bytes[0] = kYmdhAlphabet[int(ymd.year()) - 2000];
  out.bytes[1] = kYmdhAlphabet[unsigned(ymd.month())];
  out.bytes[2] = kYmdhAlphabet[unsigned(ymd.day())];
  out.bytes[3] = kYmdhAlphabet[hour];
  return out;
}

bool DecodeYmdhQuietly(std::string_view token, int64_t* ts) {
  // The last token decoded on this thread: the keys of an import or a batch mostly share
  // their hour, and the date arithmetic below was 4 % of an import.
  thread_local uint32_t memo_token = 0;
  thread_local int64_t memo_ts = -1;  // -1: no token yet
  if (token.size() != kYmdhSize) return false;
  uint32_t bytes = 0;
  std::memcpy(&bytes, token.data(), kYmdhSize);
  if (bytes == memo_token && memo_ts >= 0) {
    *ts = memo_ts;
    return true;
  }
  int v[kYmdhSize];
  for (size_t i = 0; i < kYmdhSize; i++) {
    v[i] = kSymbols.value[static_cast<unsigned char>(token[i])];
    if (v[i] < 0) return false;
  }
  const date::year_month_day ymd{date::year{2000 + v[0]}, date::month(unsigned(v[1])),
                                 date::day(unsigned(v[2]))};
  if (!ymd.ok() || v[3] > 23) return false;
  const int64_t day = date::sys_days{ymd}.time_since_epoch().count();
  memo_token = bytes;
  memo_ts = day * kSecondsPerDay + int64_t(v[3]) * kSecondsPerHour;
  *ts = memo_ts;
  return true;
}

// The quiet decode, and on failure the reason.
Result<int64_t> DecodeYmdh(std::string_view token) {
  if (int64_t ts; DecodeYmdhQuietly(token, &ts)) return ts;
  if (token.size() != kYmdhSize) {
    return Status::Error("time token '" + std::string(token) + "' is not YMDH: it has " +
                         std::to_string(token.size()) + " characters, not 4");
  }
  int v[kYmdhSize];
  for (size_t i = 0; i < kYmdhSize; i++) {
    v[i] = kSymbols.value[static_cast<unsigned char>(token[i])];
    if (v[i] < 0) {
      return Status::Error("time token '" + std::string(token) + "' is not YMDH: '" +
                           std::string(1, token[i]) + "' is not in the alphabet 0-9a-v");
    }
  }
  const date::year_month_day ymd{date::year{2000 + v[0]}, date::month(unsigned(v[1])),
                                 date::day(unsigned(v[2]))};
  if (!ymd.ok()) {
    return Status::Error("time token '" + std::string(token) + "' is not YMDH: " +
                         std::to_string(2000 + v[0]) + "-" + std::to_string(v[1]) + "-" +
                         std::to_string(v[2]) + " is not a date");
  }
  return Status::Error("time token '" + std::string(token) + "' is not YMDH: hour " +
                       std::to_string(v[3]) + " is not 0-23");
}

int64_t DayOfYmdhUnchecked(std::string_view token) {
  const date::year_month_day ymd{date::year{2000 + kSymbols.value[uint8_t(token[0])]},
                                 date::month(unsigned(kSymbols.value[uint8_t(token[1])])),
                                 date::day(unsigned(kSymbols.value[uint8_t(token[2])]))};
  return date::sys_days{ymd}.time_since_epoch().count();
}

std::string FormatDay(int64_t day) {
  const date::year_month_day ymd{date::sys_days{date::days{day}}};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", int(ymd.year()), unsigned(ymd.month()),
                unsigned(ymd.day()));
  return buf;
}

Result<int64_t> ParseDay(std::string_view text) {
  auto bad = [&](const char* why) {
    return Status::Error("day '" + std::string(text) + "' is not YYYY-MM-DD: " + why);
  };
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return bad("wrong shape");
  int y = 0;
  unsigned m = 0, d = 0;
  auto num = [&](std::string_view s, auto& out) {
    for (char c : s) {
      if (c < '0' || c > '9') return false;
    }
    return std::from_chars(s.data(), s.data() + s.size(), out).ec == std::errc();
  };
  if (!num(text.substr(0, 4), y) || !num(text.substr(5, 2), m) || !num(text.substr(8, 2), d)) {
    return bad("not digits");
  }
  const date::year_month_day ymd{date::year{y}, date::month{m}, date::day{d}};
  if (!ymd.ok()) return bad("not a date");
  const int64_t day = date::sys_days{ymd}.time_since_epoch().count();
  if (day * kSecondsPerDay < kYmdhMinTs || day * kSecondsPerDay > kYmdhMaxTs) {
    return bad("outside the YMDH range 2000-01-01 to 2031-12-31");
  }
  return day;
}

}  // namespace clickatron
