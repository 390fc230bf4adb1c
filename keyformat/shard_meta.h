// Per-shard metadata: what the generation manifest (manifest.h), a segment's `meta` and
// `merged/meta` of clickatron-rebuild say about each shard file, as `key = value` lines
// (key_value.h) for K = 0 .. shards-1 (docs/formats.md#rebuild-metadata):
//
//   shard.K.file     plain file name, no '/'   the manifest only
//   shard.K.records  count (ParseCount)        lines of the file, a footer excluded
//   shard.K.bytes    count                     bytes of those lines
//   shard.K.xxh64    Hex64 (hex64.h)           XXH64, seed 0, of those bytes
//   shard.K.columns  count                     data points; segment meta and merged/meta only
//
// Writers write a shard's fields in this order; readers ignore fields they do not know (a
// newer rebuild may add some), and each file says which fields it requires.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "keyformat/key_value.h"

namespace clickatron {

// Bounds K and a file's `shards`, so that a damaged number cannot make a reader allocate
// without end.
inline constexpr uint32_t kMaxMetaShards = 1'000'000;

struct ShardMeta {
  std::string file;  // "" when absent
  std::optional<uint64_t> records;
  std::optional<uint64_t> bytes;
  std::optional<uint64_t> xxh64;
  std::optional<uint64_t> columns;
};

// "shard.K.<field>".
std::string ShardKey(uint32_t shard, std::string_view field);

// True for every key meant as shard metadata ("shard." ...), well-formed or not.
inline bool IsShardKey(std::string_view key) { return key.starts_with("shard."); }

// Splits "shard.K.<field>"; false unless K is a count <= kMaxMetaShards followed by '.'.
bool SplitShardKey(std::string_view key, uint32_t* shard, std::string_view* field);

// Sets the field of *meta that `field` names (key is the whole key, for errors); an
// unknown field changes nothing. Errors: "shard.0.records 'x' is not a count",
// "shard.0.xxh64 '12' is not 16 hex digits", "shard.0.file must be a plain file name".
Status SetShardField(std::string_view key, std::string_view field, std::string_view value, ShardMeta* meta);

// Adds the fields present in meta as shard.K lines, in the order of the table above.
void AddShardMeta(uint32_t shard, const ShardMeta& meta, KeyValueText* out);

// Every shard.K.* field of kv for the given K; errors as SetShardField's.
Result<ShardMeta> ShardMetaOf(const KeyValueText& kv, uint32_t shard);

}  // namespace clickatron
