#include "keyformat/manifest.h"

#include "keyformat/key_value.h"
#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

Status LineError(size_t line_no, const std::string& what) {
  return Status::Error("line " + std::to_string(line_no) + ": " + what);
}

// Applies one line of the manifest to *m.
Status ApplyEntry(const KeyValueText::Entry& e, Manifest* m) {
  const std::string& value = e.value;
  if (e.key == "generation") {
    if (value.empty()) return LineError(e.line, "generation is empty");
    m->generation = value;
  } else if (e.key == "last_day") {
    if (value.size() != 10 || !ParseDay(value).ok()) {
      return LineError(e.line, "last_day '" + value + "' is not a valid YYYY-MM-DD day");
    }
    m->last_day = value;
  } else if (e.key == "shards") {
    uint64_t n;
    if (!ParseCount(value, &n) || n == 0 || n > kMaxMetaShards) {
      return LineError(e.line, "shards '" + value + "' is not a positive count");
    }
    m->shards = uint32_t(n);
  } else if (IsShardKey(e.key)) {
    uint32_t k;
    std::string_view field;
    if (!SplitShardKey(e.key, &k, &field)) return LineError(e.line, "'" + e.key + "' is not shard.K.<field>");
    // Set on a copy: a field this reader does not know (a newer rebuild's) must not make
    // an empty entry for its shard, which FormatManifest would not write back.
    auto it = m->shard_files.find(k);
    ShardMeta meta = it == m->shard_files.end() ? ShardMeta{} : it->second;
    if (Status s = SetShardField(e.key, field, value, &meta); !s.ok()) {
      return s.Prefixed("line " + std::to_string(e.line) + ": ");
    }
    if (it != m->shard_files.end()) {
      it->second = std::move(meta);
    } else if (!meta.file.empty() || meta.records || meta.bytes || meta.xxh64 || meta.columns) {
      m->shard_files.emplace(k, std::move(meta));
    }
  }
  return Status::OK();
}

}  // namespace

const ShardMeta* Manifest::FindFile(std::string_view file_name) const {
  for (const auto& [k, meta] : shard_files) {
    if (meta.file == file_name) return &meta;
  }
  return nullptr;
}

Result<Manifest> ParseManifest(std::string_view text) {
  Result<KeyValueText> kv = KeyValueText::Parse(text);
  if (!kv.ok()) return kv.status();
  Manifest m;
  for (const KeyValueText::Entry& e : kv->entries()) {
    if (Status s = ApplyEntry(e, &m); !s.ok()) return s;
  }
  if (m.generation.empty()) return Status::Error("no 'generation' line");
  if (m.last_day.empty()) return Status::Error("no 'last_day' line");
  return m;
}

std::string FormatManifest(const Manifest& manifest) {
  KeyValueText kv;
  kv.Add("generation", manifest.generation);
  kv.Add("last_day", manifest.last_day);
  if (manifest.shards != 0) kv.Add("shards", std::to_string(manifest.shards));
  for (const auto& [k, meta] : manifest.shard_files) AddShardMeta(k, meta, &kv);
  return kv.Format();
}

}  // namespace clickatron
