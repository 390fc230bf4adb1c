// The answer of GET /late?after=ID (docs/api.md#api-late): the records of the late entries
// with id > ID in the shape of a realtime /export stream, so the nightly reads it as one
// more export (docs/api-write.md#late-data):
//
//   key,value\n ... key,value\n#END count=<records> xxh64=<16 hex>\n   (keyformat/footer.h)
//
// Records in key order (docs/formats.md#key-order), each key once: counters summed over the
// entries, a lookup once (the oldest entry's; a hash names one original). An answer holds
// whole entries only, in id order: at least one, then more while their stored bytes stay
// within max_bytes; `more` says entries remain after `last`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "api/late_store.h"
#include "base/status.h"

namespace clickatron {

inline constexpr size_t kLateAnswerBytes = size_t{64} << 20;

struct LateAnswer {
  std::string body;        // records and the #END footer
  uint64_t records = 0;    // lines before the footer
  uint64_t entries = 0;    // entries included
  uint64_t first = 0;      // the first id included; after + 1 when none
  uint64_t last = 0;       // the last id included; after when none
  bool more = false;
};

// Errors: what the store says of an entry that does not read back, or a counter whose sum
// over the entries passes int64 ("key 'u|x.qbm6': the late entries add up past int64").
Status BuildLateAnswer(const LateStore& store, uint64_t after, size_t max_bytes, LateAnswer* out);

}  // namespace clickatron
