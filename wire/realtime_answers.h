// The realtime shard's JSON answers as its clients read them (docs/wire.md#answer-shapes):
// the data of an /incr answer (read by the API's sender) and the fields of /stats the nightly
// checks (docs/api.md#realtime-incr, #realtime-stats). Each reader fails unless the body is
// that answer (json_answer.h has the envelope and the parsing rules). Pure; thread-safe.
#ifndef CLICKATRON_WIRE_REALTIME_ANSWERS_H_
#define CLICKATRON_WIRE_REALTIME_ANSWERS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace clickatron::wire {

// The data of a realtime /incr answer: {"applied": n, "duplicate": n, "seq": n}.
struct IncrAnswer {
  uint64_t applied = 0;
  uint64_t duplicate = 0;
  int64_t seq = 0;
};
// Fails unless body's "data" is an object holding the three as integers.
Result<IncrAnswer> ReadIncrAnswer(std::string_view body);

// One slot of a realtime /stats answer ("slots": [{"slot": 0, "day": …, "state": …}, …]).
struct RealtimeSlotFields {
  std::string day;    // YYYY-MM-DD; empty for a slot that holds no day ("day": null)
  std::string state;  // "empty", "open", "released", …
};
// The slots in order. Fails unless "data"."slots" is an array of objects each with a string
// "state" and a "day" that is a string or null.
Result<std::vector<RealtimeSlotFields>> ReadRealtimeSlots(std::string_view body);

// What the nightly reads of a realtime /stats: the slots, "closed_through" (YYYY-MM-DD; empty
// when null) and "ring" (the data directory's id, realtime/ring_id.h; empty from an older
// server). Fails as ReadRealtimeSlots does, or when either field has another type.
struct RealtimeStatsFields {
  std::vector<RealtimeSlotFields> slots;
  std::string closed_through;
  std::string ring;
};
Result<RealtimeStatsFields> ReadRealtimeStats(std::string_view body);

}  // namespace clickatron::wire

#endif  // CLICKATRON_WIRE_REALTIME_ANSWERS_H_
