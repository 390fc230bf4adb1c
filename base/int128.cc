#include "base/int128.h"

#include <charconv>

namespace clickatron {

bool ParseInt128(std::string_view text, Int128* out) {
  const char* p = text.data();
  const char* const end = p + text.size();
  int64_t narrow;
  auto [ptr, ec] = std::from_chars(p, end, narrow);
  if (ec == std::errc() && ptr == end) {  // nearly every count
    *out = narrow;
    return true;
  }
  if (ec != std::errc::result_out_of_range) return false;  // not digits, or bytes after them
  // Too wide for int64: digits accumulated as a negative number, whose range holds -2^127.
  const bool negative = *p == '-';
  if (negative) ++p;
  Int128 v = 0;
  for (; p < end; ++p) {
    if (*p < '0' || *p > '9') return false;
    const int digit = *p - '0';
    // v * 10 - digit >= -2^127 (the division rounds towards zero: up). Not
    // __builtin_mul_overflow, which clang lowers to compiler-rt's __muloti4 for 128 bits.
    if (v < (kInt128Min + digit) / 10) return false;
    v = v * 10 - digit;
  }
  if (!negative && v == kInt128Min) return false;
  *out = negative ? v : -v;
  return true;
}

char* FormatInt128(char* buf, Int128 v) {
  if (FitsInt64(v)) return std::to_chars(buf, buf + kMaxInt128Chars, int64_t(v)).ptr;
  char digits[kMaxInt128Chars];
  char* d = digits + sizeof digits;
  Uint128 u = AbsInt128(v);
  do {
    *--d = char('0' + int(u % 10));
    u /= 10;
  } while (u != 0);
  char* p = buf;
  if (v < 0) *p++ = '-';
  for (; d < digits + sizeof digits; ++d) *p++ = *d;
  return p;
}

void AppendInt128(std::string* out, Int128 v) {
  char buf[kMaxInt128Chars];
  out->append(buf, FormatInt128(buf, v));
}

std::string Int128ToString(Int128 v) {
  std::string s;
  AppendInt128(&s, v);
  return s;
}

}  // namespace clickatron
