// Inspecting a log from outside the process that writes it: what `clickatron-oplog dump`
// and `verify` print. Read-only and lock-free, so it works beside a running API (whose
// newest segment may then end in a record still being written: reported as a torn tail,
// which is what recovery would cut if the API crashed at that moment).
#ifndef CLICKATRON_OPLOG_INSPECT_H_
#define CLICKATRON_OPLOG_INSPECT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::oplog {

struct LogCheck {
  uint64_t segments = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;      // of whole records
  uint64_t first_seq = 0;  // 0 when the log is empty
  uint64_t last_seq = 0;
  // Non-empty when the newest segment ends in a torn or corrupt tail (recovery cuts it).
  std::string torn_tail;
  // Not ok when the log is corrupt (the message names the file and the offset) or could
  // not be read; the counts then cover what came before.
  Status error;
};

// Checks every frame of the log in dir, in seq order, calling visit for each record.
LogCheck CheckLog(const std::string& dir,
                  const std::function<void(uint64_t seq, std::string_view payload)>& visit);

// The payload as one printable line: bytes 0x20-0x7E as they are except '\', which is
// "\\"; "\n", "\r", "\t"; anything else "\xHH".
std::string EscapePayload(std::string_view payload);

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_INSPECT_H_
