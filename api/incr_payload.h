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
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "keyformat/event.h"
#include "base/status.h"

namespace clickatron {

// Appends the lines of one event (total, one subtotal per sub, a lookup per hashed key or
// subkey, each lookup once). REQUIRES: ValidateEvent(event); shard_count > 0.
// *scratch is working space (reused across calls, so a warm encoder does not allocate).
void AppendEventLines(const Event& event, uint32_t shard_count, std::string* payload,
                      std::string* scratch);

struct PayloadLine {
  uint32_t shard = 0;
  int64_t day = 0;
  bool lookup = false;      // `_l|` key: value is the escaped original
  std::string_view key;
  std::string_view value;   // the delta's text, or the escaped lookup value
  int64_t delta = 0;        // count lines
};

// Walks the lines of a payload. Views point into the payload.
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
