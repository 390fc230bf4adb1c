// The generation manifest: the file `manifest` that clickatron-rebuild publish writes
// beside the shard files of a generation, and that the archive server reads beside the
// file it serves (docs/formats.md#manifest). `key = value` lines (key_value.h):
//
//   generation = 20260321-8c1f...   required; an opaque id
//   last_day = 2026-03-20           required; the newest day the generation holds
//   rollups = 1                     0 or 1: the shard files carry day and month rollup
//                                   records (docs/formats.md#rollup-records); absent is 0
//   shards = 2                      a count, 1 .. kMaxMetaShards
//   shard.K.file / records / bytes / xxh64   per shard, shard_meta.h
//   day = 2026-03-20 <Hex64> <Hex64> ...     repeated: a day merged from the realtime
//                                            exports, with the xxh64 of each realtime
//                                            shard's #END footer (footer.h), in shard order
//   day_part = 2026-03-20 1 <Hex64> <Hex64>  repeated: one realtime shard's export of a day
//                                            merged: the day, the shard, the xxh64 of its
//                                            #END footer, the ring it was read from
//                                            (realtime/ring_id.h; 0 when not known)
//   late = api1.internal:8000 42             repeated: per API (`api =` of the cluster
//                                            config), the last late entry id merged
//
// Blank lines, comments and keys this reader does not know are ignored (a newer rebuild
// may add some; the day and late lines were added that way, so an older reader skips
// them). A shard's entries are optional, each on its own, but an entry that is present
// must parse. The archive uses last_day as the API's watermark and checks the file it
// serves against its shard entry, so a half-copied generation is never served;
// clickatron-rebuild release frees a realtime slot only for a day whose `day` line has a
// digest from every realtime shard, and the nightly asks each API for late data after its
// `late` id (docs/formats.md#manifest).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "keyformat/shard_meta.h"

namespace clickatron {

inline constexpr char kManifestName[] = "manifest";

// One realtime shard's export of one day, merged into the archive: the value of a `day_part`
// line, "<YYYY-MM-DD> <shard> <Hex64 digest> <Hex64 ring>" (docs/formats.md#manifest). The
// digest is the xxh64 of the export's #END footer (footer.h), the ring the id of the data
// directory it was read from (realtime/ring_id.h), 0 for an export fetched before ring ids.
// Also a line of segment metas and merged/meta (docs/formats.md#rebuild-metadata). Errors:
// "day_part line '...' is not 'YYYY-MM-DD <shard> <16 hex> <16 hex>'".
struct DayPart {
  std::string day;
  uint32_t shard = 0;
  uint64_t ring = 0;
  uint64_t digest = 0;
  auto operator<=>(const DayPart&) const = default;
};
Result<DayPart> ParseDayPart(std::string_view value);
std::string FormatDayPart(const DayPart& part);

// What the archive holds of the realtime tier's days: the `day` lines (every shard's export
// of a day, without rings: written before day_part lines, and still written beside them)
// and the `day_part` lines. The one rule of what counts as merged
// (docs/architecture.md#one-owner-per-day).
struct MergedExports {
  std::map<std::string, std::vector<uint64_t>> days;
  std::set<DayPart> parts;

  // Whether realtime shard `shard`'s day `day`, as its ring `ring` holds it now, is merged:
  // a day_part of that day, shard and ring (or of ring 0, not known); or, for a day merged
  // before day_part lines, a `day` line with a digest per shard and no day_part of the shard.
  bool Holds(const std::string& day, uint32_t shard, uint64_t ring, size_t realtime_shards) const;
  // The newest day of a part ("" when none).
  std::string LastPartDay() const;
};

struct Manifest {
  std::string generation;
  std::string last_day;               // YYYY-MM-DD, a valid day
  uint32_t shards = 0;                // 0 when the line is absent
  bool rollups = false;               // `rollups = 1`: the files carry day and month rollups
  std::map<uint32_t, ShardMeta> shard_files;  // by K
  // The realtime exports merged: `day` lines (day -> each realtime shard's export digest,
  // in shard order) and `day_part` lines.
  MergedExports exports;
  // API host:port -> the last late entry id merged from it.
  std::map<std::string, uint64_t> late;

  // The entry whose file is `file_name` (a base name), or nullptr.
  const ShardMeta* FindFile(std::string_view file_name) const;
};


// The value of a `day` line: "<YYYY-MM-DD> <Hex64> [<Hex64> ...]" (one digest at least).
// Also the value of `export` lines in a segment's meta and `day` lines in merged/meta
// (docs/formats.md#rebuild-metadata). Errors: "day line '...' is not
// 'YYYY-MM-DD <16 hex> ...'".
struct DayDigests {
  std::string day;
  std::vector<uint64_t> digests;
};
Result<DayDigests> ParseDayDigests(std::string_view value);
std::string FormatDayDigests(const std::string& day, const std::vector<uint64_t>& digests);

// The value of a `late` line: "<host:port> <id>" (the address a single token without
// spaces, the id a count). Errors: "late line '...' is not '<host:port> <id>'".
struct LateMark {
  std::string api;
  uint64_t id = 0;
};
Result<LateMark> ParseLateMark(std::string_view value);
std::string FormatLateMark(const std::string& api, uint64_t id);

// Errors name the line: "line 4: last_day '2026-13-01' is not a valid YYYY-MM-DD day",
// or say what is missing: "no 'generation' line".
Result<Manifest> ParseManifest(std::string_view text);

// The manifest's text: generation, last_day, shards (when not 0), each shard's entries in
// K order, the day lines in day order, the late lines in address order.
// ParseManifest(FormatManifest(m)) gives m back.
std::string FormatManifest(const Manifest& manifest);

}  // namespace clickatron
