#include "rebuild/merged.h"

#include "rebuild/file.h"
#include "rebuild/footer.h"

namespace clickatron::rebuild {

Result<MergedInfo> ReadMergedInfo(const std::string& dir) {
  Result<KeyValueFile> meta = KeyValueFile::Read(dir + "/meta");
  if (!meta.ok()) return meta.status();
  MergedInfo info;
  const Status bad = Status::Error(dir + "/meta is damaged");
  info.inputs = meta->Get("inputs");
  info.last_day = meta->Get("last_day");
  try {
    info.shards = uint32_t(std::stoul(meta->Get("shards")));
    info.collisions = std::stoull(meta->Get("collisions"));
    for (uint32_t k = 0; k < info.shards; ++k) {
      const std::string p = "shard." + std::to_string(k) + ".";
      FileSummary f;
      f.records = std::stoull(meta->Get(p + "records"));
      f.bytes = std::stoull(meta->Get(p + "bytes"));
      f.columns = std::stoull(meta->Get(p + "columns"));
      Result<uint64_t> h = ParseHex64(meta->Get(p + "xxh64"));
      if (!h.ok()) return bad;
      f.xxh64 = *h;
      info.files.push_back(f);
    }
  } catch (const std::exception&) {
    return bad;
  }
  if (info.shards == 0 || info.inputs.empty()) return bad;
  return info;
}

Status WriteMergedInfo(const std::string& dir, const MergedInfo& info) {
  KeyValueFile f;
  f.Add("inputs", info.inputs);
  f.Add("shards", std::to_string(info.shards));
  f.Add("last_day", info.last_day);
  f.Add("collisions", std::to_string(info.collisions));
  for (uint32_t k = 0; k < info.files.size(); ++k) {
    const std::string p = "shard." + std::to_string(k) + ".";
    f.Add(p + "records", std::to_string(info.files[k].records));
    f.Add(p + "bytes", std::to_string(info.files[k].bytes));
    f.Add(p + "xxh64", Hex64(info.files[k].xxh64));
    f.Add(p + "columns", std::to_string(info.files[k].columns));
  }
  return WriteFileAtomic(dir + "/meta", f.Format());
}

}  // namespace clickatron::rebuild
