// Records of docs/formats.md#records: building and parsing realtime and archive keys, one text line
// (`key,value`), counts, and lookup values.
//
// Realtime keys (one int64 per hour):      Archive keys (multi-column lines):
//   total     {ns}|{key}.{ymdh}              {ns}|{key}               → ymdh:n ymdh:n …
//   subtotal  {subns}.{ns}|{key}.{subkey}.{ymdh}   {subns}.{ns}|{key}.{ymdh} → subkey:n …
//   lookup    _l|{hash}                      _l|{hash}                → original, escaped
// Namespaces have no `.` or `|`, stored keys have no `.` `|` `,` `:`, which is what makes
// these keys parse unambiguously. Parsed keys are views into the caller's bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/int128.h"
#include "base/status.h"

namespace clickatron {

inline constexpr std::string_view kLookupNamespace = "_l";
inline constexpr std::string_view kLookupPrefix = "_l|";

enum class RecordType { kTotal, kSubtotal, kLookup };

// Parts of a key; fields a type does not have are empty. `shard_key` is the docs/formats.md#sharding shard
// key (`{ns}|{key}` for totals and subtotals, `_l|{hash}` for lookups), a view into the key.
struct ParsedKey {
  RecordType type = RecordType::kTotal;
  std::string_view ns, key, subns, subkey, ymdh, hash, shard_key;
  int64_t hour = 0;  // the Unix time of ymdh, when the key has one
};

// Parses and validates a realtime key (namespaces, stored keys, the YMDH token).
Result<ParsedKey> ParseRealtimeKey(std::string_view key);
// The same without the reason: true and *p exactly when ParseRealtimeKey succeeds (the
// hot paths; they ask ParseRealtimeKey why only when this fails). Every field of *p is
// set, so one ParsedKey can be reused key after key; after false it is unspecified.
bool ParseRealtimeKeyQuietly(std::string_view key, ParsedKey* p);
// Parses and validates an archive key (totals carry no ymdh; subtotals carry no subkey).
Result<ParsedKey> ParseArchiveKey(std::string_view key);

// Key builders; each appends to *out. Parts must already be valid and stored (hashed).
void AppendTotalKey(std::string* out, std::string_view ns, std::string_view key, std::string_view ymdh);
void AppendSubtotalKey(std::string* out, std::string_view subns, std::string_view ns,
                       std::string_view key, std::string_view subkey, std::string_view ymdh);
void AppendLookupKey(std::string* out, std::string_view hash);
void AppendArchiveTotalKey(std::string* out, std::string_view ns, std::string_view key);
void AppendArchiveSubtotalKey(std::string* out, std::string_view subns, std::string_view ns,
                              std::string_view key, std::string_view ymdh);

// One line of a text file (docs/formats.md#text-files), without its '\n': key before the first separator.
struct Line {
  std::string_view key;
  std::string_view value;
};
// Fails when there is no separator or the key is empty.
Result<Line> SplitLine(std::string_view line, char separator = ',');

// A signed 64-bit decimal: optional '-', digits, nothing else; overflow is an error. The
// bound of one increment (docs/formats.md#counts); stored and summed counts are 128-bit
// (base/int128.h).
Result<int64_t> ParseCount(std::string_view text);
// The same without the reason: true and *n exactly when ParseCount succeeds.
bool ParseCountQuietly(std::string_view text, int64_t* n);
void AppendCount(std::string* out, int64_t n);
// A stored or summed count (docs/formats.md#counts): ParseInt128 with the reason.
Result<Int128> ParseWideCount(std::string_view text);

// The lookup value escaping of docs/formats.md#text-files: `%`→%25, LF→%0A, CR→%0D, NUL→%00, nothing else.
void AppendEscapedLookupValue(std::string* out, std::string_view original);
// Inverse; fails on a `%` not followed by one of those four escapes.
Result<std::string> UnescapeLookupValue(std::string_view escaped);

// A stored key (literal or hash) is well formed.
bool IsStoredKey(std::string_view stored);

}  // namespace clickatron
