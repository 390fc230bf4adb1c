#include "api/idempotency_restore.h"

#include <memory>
#include <vector>

#include "api/incr_payload.h"
#include "oplog/reader.h"

namespace clickatron {

Result<IdempotencyRestore> RestoreIdempotencyIndex(oplog::Oplog* log, int64_t now, IdempotencyIndex* index) {
  IdempotencyRestore out;
  std::unique_ptr<oplog::Reader> reader = log->NewReader();
  std::vector<oplog::Reader::Record> records;
  uint64_t after = 0;
  for (;;) {
    if (Status s = reader->Read(after, 4096, 4u << 20, &records); !s.ok()) return s;
    if (records.empty()) break;
    for (const oplog::Reader::Record& rec : records) {
      out.records++;
      IdempotencyStamp stamp;
      bool found = false;
      if (Status s = ReadIdempotencyStamp(rec.payload, &stamp, &found); !s.ok()) {
        if (out.malformed++ == 0) out.first_malformed = "record " + std::to_string(rec.seq) + ": " + s.message();
        continue;
      }
      if (!found) continue;
      if (now - stamp.accepted_at >= index->window_seconds()) {
        out.expired++;
        continue;
      }
      index->Restore(IdempotencyIndex::Entry{stamp.key, stamp.digest, stamp.accepted_at, stamp.events,
                                             rec.seq, IdempotencyIndex::State::kStored});
      out.keys++;
    }
    after = records.back().seq;
  }
  return out;
}

}  // namespace clickatron
