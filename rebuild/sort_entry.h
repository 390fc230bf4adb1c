// SortEntry: one record of the external sort (record_sorter.h) while it is in memory.
//
// 40 bytes: the first 24 bytes of the entry key as three big-endian words (so integer
// order is byte order; zero padded), where the whole key lives in the sorter's arena, and
// the summed count. 24 bytes hold the day, the shard and 20 key bytes — for realistic keys
// (`c.u|u3f2a1.c3p0\0US`) the whole key, so most comparisons never touch the arena: with
// an 8-byte prefix, 50% of the import's time was memcmp over cache-missing arena bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace clickatron::rebuild {

inline constexpr size_t kInlineKeyBytes = 24;

// Eight key bytes as a big-endian word (integer order is byte order), and back.
inline uint64_t LoadBig(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}
inline void StoreBig(char* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

struct SortEntry {
  uint64_t k[3];
  uint64_t where;  // arena offset << 24 | key length
  int64_t count;

  uint64_t offset() const { return where >> 24; }
  uint32_t size() const { return uint32_t(where & 0xFFFFFF); }
  // Key byte i of the inline part. REQUIRES: i < kInlineKeyBytes.
  uint8_t Byte(size_t i) const { return uint8_t(k[i >> 3] >> (56 - 8 * (i & 7))); }
  bool SamePrefix(const SortEntry& o) const { return k[0] == o.k[0] && k[1] == o.k[1] && k[2] == o.k[2]; }
  // Order by the inline bytes alone: <0, 0 (undecided), >0.
  int ComparePrefix(const SortEntry& o) const {
    for (int i = 0; i < 3; ++i) {
      if (k[i] != o.k[i]) return k[i] < o.k[i] ? -1 : 1;
    }
    return 0;
  }
};

// The rest of the order: compares two entries whose inline bytes are equal, by their
// lengths and the key bytes past the inline ones (which only the sorter can reach).
class TailOrder {
 public:
  virtual ~TailOrder() = default;
  // REQUIRES: a.SamePrefix(b).
  virtual bool Less(const SortEntry& a, const SortEntry& b) const = 0;
};

}  // namespace clickatron::rebuild
