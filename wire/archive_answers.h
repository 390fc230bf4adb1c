// The archive's JSON answers as its clients read them (docs/wire.md#answer-shapes): the
// manifest fields of /stats the nightly's publish and release check (docs/api.md#archive-stats).
// json_answer.h has the envelope and the parsing rules. Pure; thread-safe.
#ifndef CLICKATRON_WIRE_ARCHIVE_ANSWERS_H_
#define CLICKATRON_WIRE_ARCHIVE_ANSWERS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::wire {

// The manifest fields of an archive /stats answer; each empty when the server has no
// manifest (or the field is not a string).
struct ArchiveStatsFields {
  std::string generation;
  std::string last_day;
  int64_t served_ms = -1;  // how long the file has been served; -1 when not said (an older server)
};
// Fails unless body has a "data" object.
Result<ArchiveStatsFields> ReadArchiveStats(std::string_view body);

}  // namespace clickatron::wire

#endif  // CLICKATRON_WIRE_ARCHIVE_ANSWERS_H_
