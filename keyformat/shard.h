// Sharding (docs/formats.md#sharding): shard = crc32(shard key) % shard count, crc32 as in zlib (IEEE).
//
// The shard key of a total or subtotal record is its total part `{ns}|{stored key}`, so
// one query touches one shard; of a lookup record, the whole `_l|{hash}`.
#pragma once

#include <cstdint>
#include <string_view>

namespace clickatron {

uint32_t Crc32(std::string_view bytes);

// REQUIRES: shard_count > 0.
inline uint32_t ShardOf(std::string_view shard_key, uint32_t shard_count) {
  return Crc32(shard_key) % shard_count;
}

}  // namespace clickatron
