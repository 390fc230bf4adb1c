// The payload of an oplog record written by `/incr`: the realtime records of one request's
// events, each tagged with the realtime shard and the day it goes to.
//
//   payload = line*
//   line    = <shard> ' ' <day> ' ' <key> ',' <value> '\n'
//
//   0 20537 u|jehiah.c3p1,1
//   1 20537 country.u|jehiah.US.c3p1,1
//   1 20537 _l|h0aMB8AuNw4=,http://www.facebook.com/
//
// shard is the realtime shard (docs/formats.md#sharding: crc32 of the record's shard key modulo the shard
// count when the event was accepted), day the event's UTC day (days since 1970-01-01).
// Count lines (totals, subtotals) carry a signed delta; lookup lines (`_l|<hash>`) the
// escaped original (docs/formats.md#text-files), sent with `/set?day=<day>`. Routing is decided once, at
// acceptance, so each shard's sender only compares a number; the shard count is pinned by
// the shard list file in the oplog directory (shard_list.h) for as long as records are
// undelivered. Text, so `clickatron-oplog dump` shows it as is.
//
// A line starting with '!' is an annotation of the record, not a realtime record: every
// reader skips it (PayloadReader), so a sender never sends it. The one annotation is the
// idempotency stamp of a keyed request (docs/api-write.md#safe-retries), the record's last line:
//
//   !idempotency <accepted_at> <events> <digest> <key>
//   !idempotency 1764000000 2 7d0c6a0b4d58b1f2a3c4e5f60718293a batch-2026-11-24-0042
//
// accepted_at is unix seconds, events the request's answer ({"accepted": events}), digest the
// request's (idempotency_key.h: 32 hex digits), key its Idempotency-Key. The API rebuilds its
// idempotency index from these lines at start (idempotency_restore.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/idempotency_key.h"
#include "base/status.h"
#include "keyformat/event.h"

namespace clickatron {

// Appends the lines of one event (total, one subtotal per sub, a lookup per hashed key or
// subkey, each lookup once). REQUIRES: ValidateEvent(event); shard_count > 0.
// *scratch is working space (reused across calls, so a warm encoder does not allocate).
void AppendEventLines(const Event& event, uint32_t shard_count, std::string* payload,
                      std::string* scratch);

// The idempotency stamp of a record (above). Views point into the payload (or the caller's key).
struct IdempotencyStamp {
  int64_t accepted_at = 0;
  uint64_t events = 0;
  RequestDigest digest;
  std::string_view key;  // a valid key (ParseIdempotencyKey)
};

// Appends the stamp line. REQUIRES: stamp.key is a valid key, accepted_at >= 0.
void AppendIdempotencyLine(const IdempotencyStamp& stamp, std::string* payload);

// Reads the stamp of a payload (its last line) into *stamp and sets *found; *found false when
// the record has none. An error names a malformed stamp line (never written by
// AppendIdempotencyLine; the oplog's checksum rules out damage).
Status ReadIdempotencyStamp(std::string_view payload, IdempotencyStamp* stamp, bool* found);

struct PayloadLine {
  uint32_t shard = 0;
  int64_t day = 0;
  bool lookup = false;      // `_l|` key: value is the escaped original
  std::string_view key;
  std::string_view value;   // the delta's text, or the escaped lookup value
  int64_t delta = 0;        // count lines
};

// Walks the realtime records of a payload, skipping annotation lines ('!'). Views point into
// the payload.
class PayloadReader {
 public:
  explicit PayloadReader(std::string_view payload) : rest_(payload) {}
  // False at the end. A malformed line (never written by AppendEventLines; the oplog's
  // checksum rules out damage) sets status() and returns false.
  bool Next(PayloadLine* line);
  const Status& status() const { return status_; }

 private:
  std::string_view rest_;
  Status status_;
};

}  // namespace clickatron
