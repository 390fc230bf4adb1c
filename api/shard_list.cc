#include "api/shard_list.h"

#include <algorithm>
#include <string_view>

#include "api/shard_delivery.h"
#include "base/durable_file.h"
#include "base/read_file.h"
#include "oplog/oplog.h"

namespace clickatron {
namespace {

std::string Joined(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& s : list) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out.empty() ? "(none)" : out;
}

}  // namespace

Result<std::vector<std::string>> LoadShardList(const std::string& dir) {
  const std::string path = dir + "/" + kShardListFile;
  std::vector<std::string> out;
  std::string text;
  bool exists = false;
  if (Status s = ReadFileIfExists(path, &text, &exists); !s.ok()) return s;
  for (std::string_view rest(text); !rest.empty();) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    if (!line.empty()) out.emplace_back(line);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  }
  return out;
}

Status SaveShardList(const std::string& dir, const std::vector<std::string>& shards) {
  std::string text;
  for (const std::string& s : shards) text += s + "\n";
  return WriteFileAtomic(dir + "/" + kShardListFile, text);
}

Status AdoptShardList(oplog::Oplog* log, const std::vector<net::HostPort>& shards) {
  std::vector<std::string> wanted;
  for (const net::HostPort& hp : shards) wanted.push_back(hp.ToString());
  Result<std::vector<std::string>> saved = LoadShardList(log->dir());
  if (!saved.ok()) return saved.status();
  if (*saved == wanted) return Status::OK();
  const uint64_t last = log->last_seq();
  if (saved->empty()) {
    if (last > 0) {
      return Status::Error("oplog " + log->dir() + " holds records (last seq " + std::to_string(last) +
                           ") but no " + kShardListFile + " file: cannot tell which realtime shards "
                           "they were routed to");
    }
    return SaveShardList(log->dir(), wanted);
  }
  std::string undelivered;
  for (size_t k = 0; k < saved->size(); k++) {
    uint64_t cursor = last;
    for (const std::string& name : ShardDelivery::CursorNames(uint32_t(k))) cursor = std::min(cursor, log->cursor(name));
    if (cursor < last) {
      undelivered += (undelivered.empty() ? "" : ", ") + std::string("shard ") + std::to_string(k) +
                     " (" + (*saved)[k] + ") at seq " + std::to_string(cursor) + " of " + std::to_string(last);
    }
  }
  if (!undelivered.empty()) {
    return Status::Error("the realtime shard list changed (was: " + Joined(*saved) + "; now: " +
                         Joined(wanted) + ") while the oplog holds undelivered records: " + undelivered +
                         ". Start the API with the old list until /stats shows no backlog, then change it");
  }
  // Everything was delivered: the new shards start at the end of the log.
  for (size_t k = 0; k < wanted.size(); k++) {
    for (const std::string& name : ShardDelivery::CursorNames(uint32_t(k))) {
      if (Status s = log->SetCursor(name, last); !s.ok()) return s;
    }
  }
  // Shards that are gone take their cursors with them: a cursor nobody advances would hold
  // back the oplog's retention forever.
  for (size_t k = wanted.size(); k < saved->size(); k++) {
    if (Status s = RemoveShardDelivery(log, uint32_t(k)); !s.ok()) return s;
  }
  if (Status s = log->SaveCursors(); !s.ok()) return s;
  std::fprintf(stderr, "clickatron-api: realtime shard list changed (was: %s; now: %s); "
               "every shard starts after seq %llu\n", Joined(*saved).c_str(), Joined(wanted).c_str(),
               (unsigned long long)last);
  return SaveShardList(log->dir(), wanted);
}

}  // namespace clickatron
