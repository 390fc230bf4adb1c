#include "rebuild/merged.h"

#include "base/durable_file.h"
#include "keyformat/key_value.h"
#include "keyformat/manifest.h"
#include "keyformat/shard_meta.h"
#include "rebuild/file.h"

namespace clickatron::rebuild {

Result<MergedInfo> ReadMergedInfo(const std::string& dir) {
  Result<KeyValueText> meta = ReadKeyValueFile(dir + "/meta");
  if (!meta.ok()) return meta.status();
  MergedInfo info;
  const Status bad = Status::Error(dir + "/meta is damaged");
  info.inputs = meta->Get("inputs");
  info.last_day = meta->Get("last_day");
  uint64_t shards;
  if (!ParseCount(meta->Get("shards"), &shards) || shards == 0 || shards > kMaxMetaShards) return bad;
  info.shards = uint32_t(shards);
  if (!ParseCount(meta->Get("collisions"), &info.collisions)) return bad;
  for (uint32_t k = 0; k < info.shards; ++k) {
    Result<FileSummary> f = FileSummaryOf(*meta, k);
    if (!f.ok()) return bad;
    info.files.push_back(*f);
  }
  for (const std::string& d : meta->GetAll("day")) {
    Result<DayDigests> day = ParseDayDigests(d);
    if (!day.ok()) return bad;
    info.exports.days[day->day] = std::move(day->digests);
  }
  for (const std::string& d : meta->GetAll("day_part")) {
    Result<DayPart> part = ParseDayPart(d);
    if (!part.ok()) return bad;
    info.exports.parts.insert(*std::move(part));
  }
  for (const std::string& l : meta->GetAll("late")) {
    Result<LateMark> mark = ParseLateMark(l);
    if (!mark.ok()) return bad;
    info.late[mark->api] = mark->id;
  }
  const std::string rollups = meta->Get("rollups");
  if (!rollups.empty() && rollups != "1") return bad;
  info.rollups = rollups == "1";
  if (info.inputs.empty()) return bad;
  return info;
}

Status WriteMergedInfo(const std::string& dir, const MergedInfo& info) {
  KeyValueText f;
  f.Add("inputs", info.inputs);
  f.Add("shards", std::to_string(info.shards));
  f.Add("last_day", info.last_day);
  f.Add("collisions", std::to_string(info.collisions));
  for (uint32_t k = 0; k < info.files.size(); ++k) AddFileSummary(k, info.files[k], &f);
  for (const auto& [day, digests] : info.exports.days) f.Add("day", FormatDayDigests(day, digests));
  for (const DayPart& part : info.exports.parts) f.Add("day_part", FormatDayPart(part));
  for (const auto& [api, id] : info.late) f.Add("late", FormatLateMark(api, id));
  if (info.rollups) f.Add("rollups", "1");
  return WriteFileAtomic(dir + "/meta", f.Format());
}

}  // namespace clickatron::rebuild
