// The generation manifest: the file `manifest` that clickatron-rebuild publish writes
// beside the shard files of a generation, and that the archive server reads beside the
// file it serves (docs/formats.md#manifest). `key = value` lines (key_value.h):
//
//   generation = 20260321-8c1f...   required; an opaque id
//   last_day = 2026-03-20           required; the newest day the generation holds
//   shards = 2                      a count, 1 .. kMaxMetaShards
//   shard.K.file / records / bytes / xxh64   per shard, shard_meta.h
//
// Blank lines, comments and keys this reader does not know are ignored (a newer rebuild
// may add some). A shard's entries are optional, each on its own, but an entry that is
// present must parse. The archive uses last_day as the API's watermark and checks the file
// it serves against its shard entry, so a half-copied generation is never served.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "keyformat/shard_meta.h"

namespace clickatron {

inline constexpr char kManifestName[] = "manifest";

struct Manifest {
  std::string generation;
  std::string last_day;               // YYYY-MM-DD, a valid day
  uint32_t shards = 0;                // 0 when the line is absent
  std::map<uint32_t, ShardMeta> shard_files;  // by K

  // The entry whose file is `file_name` (a base name), or nullptr.
  const ShardMeta* FindFile(std::string_view file_name) const;
};

// Errors name the line: "line 4: last_day '2026-13-01' is not a valid YYYY-MM-DD day",
// or say what is missing: "no 'generation' line".
Result<Manifest> ParseManifest(std::string_view text);

// The manifest's text: generation, last_day, shards (when not 0), then each shard's
// entries in K order. ParseManifest(FormatManifest(m)) gives m back.
std::string FormatManifest(const Manifest& manifest);

}  // namespace clickatron
