// Manifest: the description of one archive generation (SPEC 6), as the archive server
// reads it from the file named `manifest` beside the file it serves.
//
// The manifest is `key = value` lines written by clickatron-rebuild publish:
//   generation = 20260321-1        (an opaque id)
//   last_day = 2026-03-20          (the newest day the generation holds)
//   shards = 2
//   shard.0.file = shard-0.csv     and per shard: .records, .bytes, .xxh64 (16 hex digits)
// Blank lines and lines starting with '#' are ignored, as are keys this reader does not
// know (a newer rebuild may add some). `generation` and `last_day` are required; a
// shard's entries are optional as a group, but an entry that is present must parse.
//
// The archive server uses the manifest for two things: /stats and the X-Archive-Last-Day
// header (the API's watermark, SPEC 3.3), and as a checksum of the file it is about to
// serve — when the manifest names the served file, its record count, byte count and xxh64
// must match, so a half-copied or swapped-under-us file is refused.
#ifndef CLICKATRON_ARCHIVE_MANIFEST_H_
#define CLICKATRON_ARCHIVE_MANIFEST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace clickatron::archive {

inline constexpr char kManifestName[] = "manifest";

struct ManifestShard {
  int index = -1;
  std::string file;
  bool has_records = false, has_bytes = false, has_xxh64 = false;
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t xxh64 = 0;
};

struct Manifest {
  bool present = false;    // false: no manifest beside the file
  std::string generation;
  std::string last_day;    // YYYY-MM-DD, validated
  int shards = 0;          // 0 when the line is absent
  std::vector<ManifestShard> shard_entries;

  // The entry whose file is `file_name` (a base name), or nullptr.
  const ManifestShard* FindFile(std::string_view file_name) const;
};

// Parses manifest text. Errors name the line: "line 4: last_day '2026-13-01' is not a
// valid YYYY-MM-DD day".
Result<Manifest> ParseManifest(std::string_view text);

// Reads `dir`/manifest. No file there → a Manifest with present == false (not an error);
// an unreadable or malformed one is an error naming the path.
Result<Manifest> ReadManifest(const std::string& dir);

}  // namespace clickatron::archive

#endif  // CLICKATRON_ARCHIVE_MANIFEST_H_
