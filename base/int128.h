// Int128: signed 128-bit integers, the width of every stored or summed count
// (docs/formats.md#counts), as decimal text and with checked addition.
//
//   ParseInt128("-170141183460469231731687303715884105728")   -2^127
//   ParseInt128("170141183460469231731687303715884105728")    fails: leaves 128 bits
//   AppendInt128(&s, (Int128{1} << 100))                      "1267650600228229401496703205376"
//
// The text is the one C++ and JSON both read: an optional '-', then decimal digits,
// nothing else (no '+', no spaces; leading zeros are accepted on input as from_chars
// does for int64). A value that fits int64 takes the int64 path of from_chars/to_chars, so
// callers pay for the width only when a value needs it. __int128 is a GCC/Clang builtin;
// std::from_chars, std::to_chars and std::numeric_limits do not take it in strict C++20,
// hence these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace clickatron {

using Int128 = __int128;
using Uint128 = unsigned __int128;

inline constexpr Int128 kInt128Max = Int128(~Uint128(0) >> 1);  // 2^127 - 1
inline constexpr Int128 kInt128Min = -kInt128Max - 1;           // -2^127
// Characters of the longest decimal: '-' and 39 digits.
inline constexpr size_t kMaxInt128Chars = 40;

// true and *out exactly when text is an optional '-' and 1+ digits whose value fits.
bool ParseInt128(std::string_view text, Int128* out);

// Writes v in decimal at buf (kMaxInt128Chars bytes available); returns the end.
char* FormatInt128(char* buf, Int128 v);
void AppendInt128(std::string* out, Int128 v);
std::string Int128ToString(Int128 v);

// *a += b; false, and *a unchanged, when the sum leaves 128 bits.
inline bool AddInt128(Int128* a, Int128 b) {
  Int128 sum;
  if (__builtin_add_overflow(*a, b, &sum)) return false;
  *a = sum;
  return true;
}

inline bool FitsInt64(Int128 v) { return v >= INT64_MIN && v <= INT64_MAX; }

// |v| as unsigned (|-2^127| is 2^127).
inline Uint128 AbsInt128(Int128 v) { return v < 0 ? Uint128(0) - Uint128(v) : Uint128(v); }

}  // namespace clickatron
