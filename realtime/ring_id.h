// The ring id: which realtime data directory holds a day (docs/formats.md#realtime-ring-id).
//
//   DATA_DIR/ring-id      16 lowercase hex digits and a newline, e.g. 5f1c00aa12345678
//
// Drawn once, when a data directory is first opened (an existing directory from before ring
// ids gets one at its first start), and never changed: a shard that loses its disk and
// starts again on an empty directory gets a new one. The nightly records, for every day it
// merges into the archive, which ring each realtime shard's export came from
// (docs/formats.md#manifest, `day_part` lines), so that a replacement shard's data for an
// archived day is never taken for the data its predecessor exported. `/stats` says it
// (`ring`), and every `/export` answer names the ring it was read from (X-Realtime-Ring,
// wire/headers.h).
#pragma once

#include <string>

#include "base/status.h"

namespace clickatron::realtime {

inline constexpr char kRingIdFile[] = "ring-id";

// The ring id of directory dir, created (WriteFileAtomic) when the file does not exist.
// Errors name the path: unreadable, or not 16 lowercase hex digits.
Result<std::string> LoadOrCreateRingId(const std::string& dir);

}  // namespace clickatron::realtime
