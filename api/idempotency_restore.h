// RestoreIdempotencyIndex: rebuilds the API's idempotency index (idempotency_index.h) at start
// from the stamps (incr_payload.h) of the records its oplog holds — so a retry after a crash,
// `kill -9` included, is answered as before it (docs/api-write.md#safe-retries).
//
// Every record the oplog holds is read (the oplog keeps a record at least 72 h, its retention,
// past the 24 h window, delivered or not), and each stamp accepted within the window at `now`
// becomes a stored entry: a record recovered is durable, whether or not its request was
// answered before the crash. A malformed stamp is counted and named, never fatal: the record's
// counts are the sender's to deliver, and the key is only lost for retries.
#pragma once

#include <cstdint>
#include <string>

#include "api/idempotency_index.h"
#include "base/status.h"
#include "oplog/oplog.h"

namespace clickatron {

struct IdempotencyRestore {
  uint64_t records = 0;       // read
  uint64_t keys = 0;          // stamps within the window, restored
  uint64_t expired = 0;       // stamps past the window
  uint64_t malformed = 0;     // stamps that did not parse
  std::string first_malformed;  // "record 12: malformed idempotency line (digest): '...'"
};

// Reads every record of log into *index (see above). An error is the oplog's (a damaged frame).
Result<IdempotencyRestore> RestoreIdempotencyIndex(oplog::Oplog* log, int64_t now, IdempotencyIndex* index);

}  // namespace clickatron
