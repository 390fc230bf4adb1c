// Varints: unsigned integers as LEB128, 7 bits a byte, least significant first, the top bit
// set on every byte but the last (LevelDB's util/coding.h). The oplog's compressed batch
// bodies (docs/oplog.md#compressed-batches) and the rebuild's sorted runs write them; a
// value below 2^64 takes at most 10 bytes, a 128-bit one at most 19, and a value has the
// same bytes whatever the width of the type it was encoded from.
//
//   0 -> 00    127 -> 7f    128 -> 80 01    300 -> ac 02    2^64-1 -> ff x9 01
//
// Inline and allocation-free except PutVarint64: the rebuild's merge decodes three of
// them a record (docs/benchmarks.md#fewer-instructions-a-record).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace clickatron {

inline constexpr size_t kMaxVarint64Bytes = 10;
inline constexpr size_t kMaxVarint128Bytes = 19;

// Writes v at dst and returns the end. REQUIRES: room for kMaxVarint64Bytes (a uint64_t)
// or kMaxVarint128Bytes (unsigned __int128) at dst.
template <typename U>
inline char* EncodeVarint(char* dst, U v) {
  while (v >= 0x80) {
    *dst++ = char(uint8_t(v) | 0x80);
    v >>= 7;
  }
  *dst++ = char(uint8_t(v));
  return dst;
}

// Reads a varint of type U from p..limit into *v and returns the bytes it took; 0 (and *v
// untouched) when p..limit ends before it does or it runs past U's width in bytes. The
// last byte's bits beyond U are not checked (GetVarint64 does; the rebuild's run reader
// takes a 64-bit count whose tenth byte says more as a 128-bit one).
template <typename U>
inline size_t DecodeVarint(const char* p, const char* limit, U* v) {
  U result = 0;
  for (int shift = 0, i = 0; p + i < limit && shift < int(8 * sizeof(U)); shift += 7, ++i) {
    const U byte = uint8_t(p[i]);
    result |= (byte & 0x7F) << shift;
    if (byte < 0x80) {
      *v = result;
      return size_t(i + 1);
    }
  }
  return 0;
}

// Appends v to *dst.
inline void PutVarint64(std::string* dst, uint64_t v) {
  char buf[kMaxVarint64Bytes];
  dst->append(buf, size_t(EncodeVarint(buf, v) - buf));
}

// Reads a varint from the front of *input into *v and drops its bytes from *input; false
// (and nothing changed) when *input holds no whole one or it is past 2^64 - 1.
inline bool GetVarint64(std::string_view* input, uint64_t* v) {
  uint64_t value = 0;
  const size_t n = DecodeVarint(input->data(), input->data() + input->size(), &value);
  if (n == 0 || (n == kMaxVarint64Bytes && uint8_t((*input)[n - 1]) > 1)) return false;
  input->remove_prefix(n);
  *v = value;
  return true;
}

}  // namespace clickatron
