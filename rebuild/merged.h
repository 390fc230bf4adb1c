// DIR/merged/: the output of `merge`, input of `publish`.
//
//   merged/shard-K.csv   plain docs/formats.md#text-files files, one per archive shard
//   merged/meta          inputs = <segment set fingerprint>, shards, last_day, collisions,
//                        shard.K.records / bytes / xxh64 / columns (keyformat/shard_meta.h),
//                        and what publish copies into the manifest: `day` (a day merged
//                        from realtime exports, with their digests), `day_part` (one
//                        realtime shard's export of a day, keyformat/manifest.h) and `late` (per API,
//                        the last late entry merged) lines, as keyformat/manifest.h writes
//                        them; `rollups = 1` when the files' rollup records carry the mask
//                        of their hours (keyformat/rollup_hours.h): publish then writes
//                        `rollups = 1` in the manifest (a meta of an older merge has no such
//                        line, and its rollups are not for the API to read)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "keyformat/manifest.h"
#include "rebuild/sorted_file.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

struct MergedInfo {
  std::string inputs;
  uint32_t shards = 0;
  std::string last_day;
  uint64_t collisions = 0;
  std::vector<FileSummary> files;
  MergedExports exports;                              // `day` and `day_part` lines
  std::map<std::string, uint64_t> late;               // API host:port -> last late entry id
  bool rollups = false;                               // rollups with masks: the API may read them
};

inline std::string MergedFileName(uint32_t shard) { return "shard-" + std::to_string(shard) + ".csv"; }

Result<MergedInfo> ReadMergedInfo(const std::string& dir);
Status WriteMergedInfo(const std::string& dir, const MergedInfo& info);
// XXH64 over segment names and file checksums (what `merge` was made from).
std::string SegmentSetFingerprint(const std::vector<SegmentInfo>& segments);

}  // namespace clickatron::rebuild
