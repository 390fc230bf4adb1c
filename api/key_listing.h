// Pure helpers of the dashboard's listings (docs/api.md#api-keys, #api-subtotals): which
// stored keys a `/keys` prefix can match, reading a key out of a listed record, and the
// `after=` keys that skip the rest of a key's (or a namespace's) records in a /fwmatch
// listing, so a listing steps from one key to the next instead of reading every hour.
//
// Records (docs/formats.md#records): archive total `{ns}|{key}`, realtime total
// `{ns}|{key}.{ymdh}`, subtotals `{subns}.{ns}|...`, lookups `_l|{hash}`. Stored keys and
// namespaces hold only bytes 0x21–0x7E and never '.', '|', ',' or ':', so a key followed by
// "\x7f" sorts after every record that starts with it and a '.' (docs/formats.md#key-order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace clickatron {

// Namespaces start with a letter or digit (docs/formats.md#namespaces): one listing chain
// per starting byte finds them all without listing from the empty prefix (refused by both
// tiers).
inline constexpr std::string_view kNamespaceStarts =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
// The most lines a listing asks for in one page: the tiers' default --fwmatch-limit.
inline constexpr size_t kMaxListingPageLines = 10000;

// "/fwmatch?key=<prefix>&limit=<limit>", with "&after=<after>" when after is not empty.
std::string ListingPath(std::string_view prefix, size_t limit, std::string_view after);

// True when some literal stored key can start with `prefix`: empty, or at most 11 bytes of
// 0x21–0x7E with none of ':' ',' '.' '|'. (A longer or other prefix can only be a whole key
// typed exactly, found through its hash.)
bool ListablePrefix(std::string_view prefix);

// The stored key of an archive total record's key `{ns}|{key}`; empty when `record_key`
// is not one of namespace ns.
std::string_view ArchiveListedKey(std::string_view record_key, std::string_view ns);
// The stored key of a realtime total record's key `{ns}|{key}.{ymdh}`; empty when it is not.
std::string_view RealtimeListedKey(std::string_view record_key, std::string_view ns);
// `{ns}|{key}.\x7f`: after it, a realtime listing goes on with the next key.
std::string AfterRealtimeKey(std::string_view ns, std::string_view stored_key);

// The first part of a record key, up to its first '.' or '|' (the subtotal namespace of
// `c.u|jehiah.US.c41l`, the namespace of `u|jehiah`); *separator gets that byte ('\0' when
// there is none: not a record key).
std::string_view FirstPart(std::string_view record_key, char* separator);
// `{part}{separator}\x7f`: after it, a listing goes on past every key starting with
// part + separator.
std::string AfterPart(std::string_view part, char separator);

// The hour (unix seconds) of a realtime subtotal key `{subns}.{ns}|{key}.{subkey}.{ymdh}` or
// an archive subtotal key `{subns}.{ns}|{key}.{ymdh}`: its last 4 bytes; -1 when they are
// not a valid YMDH token.
int64_t HourOfRecordKey(std::string_view record_key);

// Whether an archive key is a day or month rollup `{subns}.{ns}|{key}.{ymd}` / `.{ym}`
// (docs/formats.md#rollup-records): a subtotal key whose part after the last '.' is 2 or 3
// bytes long.
bool IsRollupKey(std::string_view record_key);

}  // namespace clickatron
