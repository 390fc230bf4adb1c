// RadixSort against std::sort with the full key order, over key sets that exercise each
// of its paths: shared leading bytes, ties within the inline bytes, keys that end inside
// them, long tails, duplicates, ranges around the small-range cutoff, one and two threads.
#include "rebuild/radix_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace clickatron::rebuild {
namespace {

// Keys kept in a vector; an entry's offset is its key's index.
class Keys : public TailOrder {
 public:
  SortEntry Add(std::string key) {
    SortEntry e{};
    char prefix[kInlineKeyBytes] = {};
    std::memcpy(prefix, key.data(), std::min(key.size(), kInlineKeyBytes));
    for (int w = 0; w < 3; ++w) e.k[w] = LoadBig(prefix + 8 * w);
    e.where = (uint64_t(keys_.size()) << 24) | key.size();
    e.count = int64_t(keys_.size());
    keys_.push_back(std::move(key));
    return e;
  }
  const std::string& Of(const SortEntry& e) const { return keys_[e.offset()]; }
  bool Less(const SortEntry& a, const SortEntry& b) const override { return Of(a) < Of(b); }

 private:
  std::vector<std::string> keys_;
};

void ExpectSorted(size_t n, unsigned threads, const std::function<std::string(std::mt19937_64&)>& make) {
  std::mt19937_64 rng(n * 31 + threads);
  Keys keys;
  std::vector<SortEntry> entries;
  for (size_t i = 0; i < n; ++i) entries.push_back(keys.Add(make(rng)));
  std::vector<SortEntry> expected = entries;
  std::stable_sort(expected.begin(), expected.end(),
                   [&](const SortEntry& a, const SortEntry& b) { return keys.Of(a) < keys.Of(b); });
  RadixSort(entries.data(), entries.data() + entries.size(), keys, threads);
  ASSERT_EQ(entries.size(), expected.size());
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(keys.Of(entries[i]), keys.Of(expected[i])) << "at " << i << " of " << n;
  }
  // A permutation: every entry once (counts are the original indexes).
  std::vector<bool> seen(n);
  for (const SortEntry& e : entries) seen[size_t(e.count)] = true;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), std::ptrdiff_t(n));
}

std::string Digits(std::mt19937_64& rng, size_t len, const char* alphabet) {
  const size_t m = std::strlen(alphabet);
  std::string s;
  for (size_t i = 0; i < len; ++i) s.push_back(alphabet[rng() % m]);
  return s;
}

TEST(RadixSort, MatchesAComparisonSort) {
  // Realistic: a shared day/shard head, a few namespaces, user ids, hours, subkeys; some
  // keys pass the 24 inline bytes, many end inside them.
  auto realistic = [](std::mt19937_64& rng) {
    static const char* heads[] = {"u|", "c.u|", "r.u|", "_l|"};
    std::string k("\x3c\x00\x00\x00", 4);
    k += heads[rng() % 4];
    k += "u" + Digits(rng, 1 + rng() % 12, "0123456789abcdef");
    k += ".c3p" + Digits(rng, 1, "0123456789ab");
    k.push_back('\0');
    k += Digits(rng, rng() % 14, "ABCDEFGHIJKLMNOPQRSTUVWXYZ+=");
    return k;
  };
  // Everything equal within the inline bytes: only the tails order them.
  auto tails = [](std::mt19937_64& rng) {
    return std::string(kInlineKeyBytes, 'x') + Digits(rng, rng() % 6, "ab\x01");
  };
  // Short keys over a tiny alphabet (zero bytes included): many duplicates and prefixes.
  auto tiny = [](std::mt19937_64& rng) { return Digits(rng, rng() % 5, "a\x01") + std::string(rng() % 2, '\0'); };
  for (unsigned threads : {1u, 2u}) {
    for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(63), size_t(64), size_t(65), size_t(1000), size_t(200000)}) {
      ExpectSorted(n, threads, realistic);
      ExpectSorted(n, threads, tails);
      ExpectSorted(n, threads, tiny);
    }
  }
}

}  // namespace
}  // namespace clickatron::rebuild
