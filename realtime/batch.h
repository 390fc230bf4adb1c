// Request bodies of the realtime shard: an /incr batch of `key,delta` lines and a /set
// batch of `_l|hash,escaped-original` lookup lines.
//
// A batch is validated whole before anything is applied: the first bad line fails the
// parse with "line K: <what is wrong>" (K counts from 1) and the caller applies nothing.
// The last line may or may not end in '\n'; an empty line anywhere else is an error (a
// sender that writes one has a bug worth seeing). Parsed lines are views into the body:
// the body must outlive them. The output vectors are cleared and reused, so a server
// that keeps one per loop parses without allocating once warm.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace clickatron::realtime {

// One increment: a realtime total or subtotal key (docs/formats.md#realtime-records) and a signed delta.
struct IncrLine {
  std::string_view key;
  int64_t delta = 0;
  int64_t day = 0;    // days since 1970-01-01 UTC of the key's hour
  uint32_t line = 0;  // 1-based line number in the body, for error messages
};

// One lookup record: `_l|{hash}` and its escaped original value (docs/formats.md#text-files).
struct LookupLine {
  std::string_view key;
  std::string_view value;  // as sent: escaped, stored and served escaped
  uint32_t line = 0;
};

// Parses an /incr body. Lookup keys are refused here: they go through /set.
Status ParseIncrBatch(std::string_view body, std::vector<IncrLine>* lines);

// Parses a /set body: lookup keys only, each value a non-empty, correctly escaped value.
Status ParseLookupBatch(std::string_view body, std::vector<LookupLine>* lines);

}  // namespace clickatron::realtime
