#include "keyformat/manifest.h"

#include "keyformat/hex64.h"
#include "keyformat/key_value.h"
#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

Status LineError(size_t line_no, const std::string& what) {
  return Status::Error("line " + std::to_string(line_no) + ": " + what);
}

// Splits text at single spaces into tokens; false on an empty token (two spaces, a
// leading or trailing one) or no token at all.
bool SplitTokens(std::string_view text, std::vector<std::string_view>* out) {
  out->clear();
  while (true) {
    const size_t space = text.find(' ');
    const std::string_view token = text.substr(0, space);
    if (token.empty()) return false;
    out->push_back(token);
    if (space == std::string_view::npos) return true;
    text.remove_prefix(space + 1);
  }
}

bool IsDay(std::string_view text) { return text.size() == 10 && ParseDay(text).ok(); }

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
  } else if (e.key == "rollups") {
    if (value != "0" && value != "1") return LineError(e.line, "rollups '" + value + "' is not 0 or 1");
    m->rollups = value == "1";
  } else if (e.key == "shards") {
    uint64_t n;
    if (!ParseCount(value, &n) || n == 0 || n > kMaxMetaShards) {
      return LineError(e.line, "shards '" + value + "' is not a positive count");
    }
    m->shards = uint32_t(n);
  } else if (e.key == "day") {
    Result<DayDigests> d = ParseDayDigests(value);
    if (!d.ok()) return LineError(e.line, d.status().message());
    if (m->exports.days.count(d->day)) return LineError(e.line, "day " + d->day + " appears twice");
    m->exports.days[d->day] = std::move(d->digests);
  } else if (e.key == "day_part") {
    Result<DayPart> part = ParseDayPart(value);
    if (!part.ok()) return LineError(e.line, part.status().message());
    m->exports.parts.insert(*std::move(part));
  } else if (e.key == "late") {
    Result<LateMark> l = ParseLateMark(value);
    if (!l.ok()) return LineError(e.line, l.status().message());
    if (m->late.count(l->api)) return LineError(e.line, "late " + l->api + " appears twice");
    m->late[l->api] = l->id;
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


Result<DayDigests> ParseDayDigests(std::string_view value) {
  const Status bad = Status::Error("day line '" + std::string(value) + "' is not 'YYYY-MM-DD <16 hex> ...'");
  std::vector<std::string_view> tokens;
  if (!SplitTokens(value, &tokens) || tokens.size() < 2 || !IsDay(tokens[0])) return bad;
  DayDigests out;
  out.day = std::string(tokens[0]);
  for (size_t i = 1; i < tokens.size(); ++i) {
    Result<uint64_t> h = ParseHex64(tokens[i]);
    if (!h.ok()) return bad;
    out.digests.push_back(*h);
  }
  return out;
}

std::string FormatDayDigests(const std::string& day, const std::vector<uint64_t>& digests) {
  std::string text = day;
  for (uint64_t d : digests) text += " " + Hex64(d);
  return text;
}

Result<DayPart> ParseDayPart(std::string_view value) {
  const Status bad = Status::Error("day_part line '" + std::string(value) +
                                   "' is not 'YYYY-MM-DD <shard> <16 hex> <16 hex>'");
  std::vector<std::string_view> tokens;
  uint64_t shard;
  if (!SplitTokens(value, &tokens) || tokens.size() != 4 || !IsDay(tokens[0]) || !ParseCount(tokens[1], &shard) ||
      shard > UINT32_MAX) {
    return bad;
  }
  Result<uint64_t> digest = ParseHex64(tokens[2]);
  Result<uint64_t> ring = ParseHex64(tokens[3]);
  if (!digest.ok() || !ring.ok()) return bad;
  return DayPart{std::string(tokens[0]), uint32_t(shard), *ring, *digest};
}

std::string FormatDayPart(const DayPart& part) {
  return part.day + " " + std::to_string(part.shard) + " " + Hex64(part.digest) + " " + Hex64(part.ring);
}

bool MergedExports::Holds(const std::string& day, uint32_t shard, uint64_t ring, size_t realtime_shards) const {
  bool any_part = false;
  for (auto it = parts.lower_bound(DayPart{day, shard, 0, 0}); it != parts.end() && it->day == day && it->shard == shard;
       ++it) {
    if (it->ring == ring || it->ring == 0) return true;
    any_part = true;
  }
  if (any_part) return false;
  auto it = days.find(day);
  return it != days.end() && it->second.size() == realtime_shards;
}

std::string MergedExports::LastPartDay() const { return parts.empty() ? "" : parts.rbegin()->day; }

Result<LateMark> ParseLateMark(std::string_view value) {
  std::vector<std::string_view> tokens;
  LateMark out;
  if (!SplitTokens(value, &tokens) || tokens.size() != 2 || !ParseCount(tokens[1], &out.id)) {
    return Status::Error("late line '" + std::string(value) + "' is not '<host:port> <id>'");
  }
  out.api = std::string(tokens[0]);
  return out;
}

std::string FormatLateMark(const std::string& api, uint64_t id) { return api + " " + std::to_string(id); }

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
  if (manifest.rollups) kv.Add("rollups", "1");
  if (manifest.shards != 0) kv.Add("shards", std::to_string(manifest.shards));
  for (const auto& [k, meta] : manifest.shard_files) AddShardMeta(k, meta, &kv);
  for (const auto& [day, digests] : manifest.exports.days) kv.Add("day", FormatDayDigests(day, digests));
  for (const DayPart& part : manifest.exports.parts) kv.Add("day_part", FormatDayPart(part));
  for (const auto& [api, id] : manifest.late) kv.Add("late", FormatLateMark(api, id));
  return kv.Format();
}

}  // namespace clickatron
