// An event ("user jehiah got 1 click at 21:00 from the US") and its realtime records.
//
// One event adds `value` to the total of its hour and to one subtotal per subtotal
// namespace; every hashed key or subkey also yields a lookup record (docs/formats.md#keys-and-hashes, 2.3).
// Used by `clickatron-key encode` and by the API's /incr.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "keyformat/records.h"
#include "base/status.h"

namespace clickatron {

struct SubtotalRef {
  std::string_view subns;
  std::string_view subkey;
};

struct Event {
  std::string_view ns;
  std::string_view key;
  int64_t ts = 0;
  int64_t value = 1;
  std::vector<SubtotalRef> subs;
};

// Error texts name the parameter, for the API's INVALID_ARG_<NAME> answers.
struct EventError {
  std::string param;    // "ns", "key", "value", "ts" or "sub"
  std::string message;  // what is wrong
};

// OK when the event can be stored: valid namespaces and keys, value ≠ 0, ts within the
// YMDH range, no subtotal namespace given twice (its column sum must equal the total).
// On failure fills *error (when given).
bool ValidateEvent(const Event& event, EventError* error);

// A realtime record as written to the realtime tier: `key,value` where value is the
// delta of a total or subtotal, or the escaped original of a lookup.
struct RealtimeRecord {
  RecordType type;
  std::string key;
  std::string value;
  int64_t delta = 0;  // totals and subtotals
};

// Appends the event's records (total, subtotals, lookups — each lookup once) in key
// order. REQUIRES: ValidateEvent(event).
void EncodeEvent(const Event& event, std::vector<RealtimeRecord>* out);

// The docs/formats.md#sharding shard key of the event's totals and subtotals: `{ns}|{stored key}`.
std::string EventShardKey(const Event& event);

}  // namespace clickatron
