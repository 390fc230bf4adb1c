#include "keyformat/shard_meta.h"

#include "keyformat/hex64.h"

namespace clickatron {

std::string ShardKey(uint32_t shard, std::string_view field) {
  return "shard." + std::to_string(shard) + "." + std::string(field);
}

bool SplitShardKey(std::string_view key, uint32_t* shard, std::string_view* field) {
  if (!IsShardKey(key)) return false;
  const std::string_view rest = key.substr(6);  // after "shard."
  const size_t dot = rest.find('.');
  uint64_t k;
  if (dot == std::string_view::npos || !ParseCount(rest.substr(0, dot), &k) || k > kMaxMetaShards) return false;
  *shard = uint32_t(k);
  *field = rest.substr(dot + 1);
  return true;
}

Status SetShardField(std::string_view key, std::string_view field, std::string_view value, ShardMeta* meta) {
  const auto bad = [&](std::string_view what) {
    return Status::Error(std::string(key) + " '" + std::string(value) + "' is not " + std::string(what));
  };
  const auto count = [&](std::optional<uint64_t>* out) {
    uint64_t v;
    if (!ParseCount(value, &v)) return bad("a count");
    *out = v;
    return Status::OK();
  };
  if (field == "file") {
    if (value.empty() || value.find('/') != std::string_view::npos) {
      return Status::Error(std::string(key) + " must be a plain file name");
    }
    meta->file = std::string(value);
  } else if (field == "records") {
    return count(&meta->records);
  } else if (field == "bytes") {
    return count(&meta->bytes);
  } else if (field == "columns") {
    return count(&meta->columns);
  } else if (field == "xxh64") {
    Result<uint64_t> h = ParseHex64(value);
    if (!h.ok()) return bad("16 hex digits");
    meta->xxh64 = *h;
  }
  return Status::OK();
}

void AddShardMeta(uint32_t shard, const ShardMeta& meta, KeyValueText* out) {
  if (!meta.file.empty()) out->Add(ShardKey(shard, "file"), meta.file);
  if (meta.records) out->Add(ShardKey(shard, "records"), std::to_string(*meta.records));
  if (meta.bytes) out->Add(ShardKey(shard, "bytes"), std::to_string(*meta.bytes));
  if (meta.xxh64) out->Add(ShardKey(shard, "xxh64"), Hex64(*meta.xxh64));
  if (meta.columns) out->Add(ShardKey(shard, "columns"), std::to_string(*meta.columns));
}

Result<ShardMeta> ShardMetaOf(const KeyValueText& kv, uint32_t shard) {
  ShardMeta meta;
  for (const KeyValueText::Entry& e : kv.entries()) {
    uint32_t k;
    std::string_view field;
    if (!SplitShardKey(e.key, &k, &field) || k != shard) continue;
    if (Status s = SetShardField(e.key, field, e.value, &meta); !s.ok()) return s;
  }
  return meta;
}

}  // namespace clickatron
