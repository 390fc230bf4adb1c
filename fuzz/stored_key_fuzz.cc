// Stored keys and lookup hashes (keyformat/stored_key.h) of arbitrary user keys, and the
// realtime and archive keys built from them (keyformat/records.h).
//
// Beyond "no crash":
//   * ValidateUserKey accepts exactly 1..kMaxUserKeySize bytes; ValidateNamespace exactly
//     [A-Za-z0-9][A-Za-z0-9_-]{0,15};
//   * a key's stored form is the key itself when IsLiteralKey, else KeyHash(key): 12 base64
//     characters ending in '=' (IsKeyHash), which no literal ever equals; either way it is
//     IsStoredKey;
//   * a stored key parses back: the total, subtotal and lookup keys built from valid parts
//     (realtime and archive) parse with ParseRealtimeKey / ParseArchiveKey to those parts.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "keyformat/records.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

using namespace clickatron;

namespace {

bool ModelNamespace(std::string_view s) {
  auto alnum = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  if (s.empty() || s.size() > kMaxNamespaceSize || !alnum(s[0])) return false;
  for (char c : s) {
    if (!alnum(c) && c != '_' && c != '-') return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string ns = in.ConsumeRandomLengthString(20);
  const std::string subns = in.ConsumeRandomLengthString(20);
  const std::string subkey = in.ConsumeRandomLengthString(40);
  const int64_t ts = in.ConsumeIntegralInRange<int64_t>(kYmdhMinTs, kYmdhMaxTs);
  const std::string key = in.ConsumeRemainingBytesAsString();

  FUZZ_CHECK(ValidateUserKey(key).ok() == (!key.empty() && key.size() <= kMaxUserKeySize),
             "a user key is 1..4096 bytes");
  FUZZ_CHECK(ValidateNamespace(ns).ok() == ModelNamespace(ns), "the namespace rule");
  if (key.empty()) return 0;

  std::string stored;
  const bool hashed = AppendStoredKey(key, &stored);
  FUZZ_CHECK(stored == StoredKey(key), "both entry points agree");
  FUZZ_CHECK(hashed == !IsLiteralKey(key), "hashed iff not literal");
  FUZZ_CHECK(IsStoredKey(stored), "a stored key is a stored key");
  if (hashed) {
    FUZZ_CHECK(stored == KeyHash(key) && stored.size() == kHashSize && IsKeyHash(stored),
               "a hashed key is its 12-character hash");
  } else {
    FUZZ_CHECK(stored == key && !IsKeyHash(stored), "a literal is itself, never a hash");
  }

  if (!ModelNamespace(ns) || !ModelNamespace(subns) || subkey.empty()) return 0;
  const std::string stored_sub = StoredKey(subkey);
  const Ymdh ymdh = *EncodeYmdh(ts);
  const std::string shard_key = ns + "|" + stored;

  std::string total;
  AppendTotalKey(&total, ns, stored, ymdh.view());
  Result<ParsedKey> p = ParseRealtimeKey(total);
  FUZZ_CHECK(p.ok() && p->type == RecordType::kTotal && p->ns == ns && p->key == stored &&
                 p->ymdh == ymdh.view() && p->shard_key == shard_key,
             "a realtime total key parses back");

  std::string sub;
  AppendSubtotalKey(&sub, subns, ns, stored, stored_sub, ymdh.view());
  p = ParseRealtimeKey(sub);
  FUZZ_CHECK(p.ok() && p->type == RecordType::kSubtotal && p->subns == subns && p->ns == ns &&
                 p->key == stored && p->subkey == stored_sub && p->ymdh == ymdh.view() &&
                 p->shard_key == shard_key,
             "a realtime subtotal key parses back");

  if (hashed) {
    std::string lookup;
    AppendLookupKey(&lookup, stored);
    for (auto parse : {ParseRealtimeKey, ParseArchiveKey}) {
      p = parse(lookup);
      FUZZ_CHECK(p.ok() && p->type == RecordType::kLookup && p->hash == stored &&
                     p->shard_key == lookup,
                 "a lookup key parses back");
    }
  }

  std::string archive_total;
  AppendArchiveTotalKey(&archive_total, ns, stored);
  p = ParseArchiveKey(archive_total);
  FUZZ_CHECK(p.ok() && p->type == RecordType::kTotal && p->ns == ns && p->key == stored,
             "an archive total key parses back");
  std::string archive_sub;
  AppendArchiveSubtotalKey(&archive_sub, subns, ns, stored, ymdh.view());
  p = ParseArchiveKey(archive_sub);
  FUZZ_CHECK(p.ok() && p->type == RecordType::kSubtotal && p->subns == subns && p->ns == ns &&
                 p->key == stored && p->ymdh == ymdh.view(),
             "an archive subtotal key parses back");
  return 0;
}
