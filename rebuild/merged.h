// DIR/merged/: the output of `merge`, input of `publish`.
//
//   merged/shard-K.csv   plain docs/formats.md#text-files files, one per archive shard
//   merged/meta          inputs = <segment set fingerprint>, shards, last_day, collisions,
//                        shard.K.records / bytes / xxh64 / columns (keyformat/shard_meta.h)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "rebuild/sorted_file.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

struct MergedInfo {
  std::string inputs;
  uint32_t shards = 0;
  std::string last_day;
  uint64_t collisions = 0;
  std::vector<FileSummary> files;
};

inline std::string MergedFileName(uint32_t shard) { return "shard-" + std::to_string(shard) + ".csv"; }

Result<MergedInfo> ReadMergedInfo(const std::string& dir);
Status WriteMergedInfo(const std::string& dir, const MergedInfo& info);
// XXH64 over segment names and file checksums (what `merge` was made from).
std::string SegmentSetFingerprint(const std::vector<SegmentInfo>& segments);

}  // namespace clickatron::rebuild
