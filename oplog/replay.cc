#include "oplog/replay.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

#include "base/durable_file.h"
#include "base/errno_status.h"
#include "oplog/cursors.h"
#include "oplog/oplog.h"
#include "oplog/reader.h"

namespace clickatron::oplog {
namespace {

std::string Names(const CursorMap& cursors) {
  std::string names;
  for (const auto& [name, seq] : cursors) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "none" : names;
}

Status CheckRequest(const std::string& dir, const RewindRequest& request) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return ErrnoStatus("open directory", dir);
  if (!S_ISDIR(st.st_mode)) return Status::Error(dir + " is not a directory");
  return CheckCursorName(request.cursor);
}

Status CheckFileName(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return Status::Error("'" + name + "' is not a file name in the oplog directory");
  }
  return Status::OK();
}

Status UnknownCursor(const std::string& dir, const std::string& name, const CursorMap& cursors) {
  return Status::Error("no cursor named '" + name + "' in " + dir + "/" + kCursorsFile +
                       " (cursors: " + Names(cursors) + ")");
}

// The records after `after`: how many, the first and the last.
Status CountAfter(Oplog& log, uint64_t after, Rewind* out) {
  std::unique_ptr<Reader> reader = log.NewReader();
  std::vector<Reader::Record> records;
  for (;;) {
    if (Status s = reader->Read(after, 1 << 16, 64 << 20, &records); !s.ok()) return s;
    if (records.empty()) return Status::OK();
    if (out->records == 0) out->first_seq = records.front().seq;
    out->records += records.size();
    out->last_seq = after = records.back().seq;
  }
}

// Refuses a `from` that would skip a record not yet delivered to one of the cursors.
Status CheckNothingSkipped(Oplog& log, const CursorRewind& c, uint64_t from) {
  if (from - 1 <= c.old_cursor) return Status::OK();
  // Moving forward is fine only over numbers no record has (seqs may have gaps).
  Rewind pending;
  if (Status s = CountAfter(log, c.old_cursor, &pending); !s.ok()) return s;
  if (pending.records > 0 && pending.first_seq < from) {
    return Status::Error("cursor '" + c.name + "' is at seq " + std::to_string(c.old_cursor) + " and seq " +
                         std::to_string(pending.first_seq) + " has not been delivered yet: --from " +
                         std::to_string(from) + " would skip it (replay only moves a cursor back; use --from " +
                         std::to_string(pending.first_seq) + " or lower)");
  }
  return Status::OK();
}

Status RemoveFile(const std::string& dir, const std::string& name, std::vector<std::string>* removed) {
  const std::string path = dir + "/" + name;
  if (unlink(path.c_str()) == 0) {
    removed->push_back(path);
  } else if (errno != ENOENT) {
    return ErrnoStatus("remove", path);
  }
  return Status::OK();
}

// The consumer's files, then its skip rule (that of an earlier replay goes in any case: it
// must not outlive that replay), then a new rule when asked.
Status ReplaceConsumerFiles(const std::string& dir, const RewindRequest& request, CursorRewind* c,
                            std::vector<std::string>* removed) {
  if (request.consumer_files) {
    for (const std::string& name : request.consumer_files(c->name)) {
      if (Status s = RemoveFile(dir, name, removed); !s.ok()) return s;
    }
  }
  c->skip_path = dir + "/" + ReplaySkipFileName(c->name);
  if (unlink(c->skip_path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("remove", c->skip_path);
  if (Status s = SyncDir(dir); !s.ok()) return s;
  if (request.skip_through_day >= 0 && c->old_cursor > 0) {
    // Only what the consumer had acknowledged can be in the archive.
    c->skip = ReplaySkip{request.skip_through_day, c->old_cursor};
    if (Status s = SaveReplaySkip(dir, c->name, c->skip); !s.ok()) return s;
  }
  return Status::OK();
}

// The range of records to send again: `from` (0: the oldest kept) checked against the log.
Result<uint64_t> CheckFrom(const std::string& dir, const Stats& stats, uint64_t requested) {
  if (stats.first_seq == 0) return Status::Error("the oplog in " + dir + " holds no records");
  const uint64_t from = requested == 0 ? stats.first_seq : requested;
  if (from < stats.first_seq) {
    return Status::Error("seq " + std::to_string(from) + " is before the oldest record " + dir +
                         " still holds (seq " + std::to_string(stats.first_seq) +
                         "; older segments were deleted by retention)");
  }
  if (from > stats.last_seq) {
    return Status::Error("seq " + std::to_string(from) + " is after the last record in " + dir + " (seq " +
                         std::to_string(stats.last_seq) + ")");
  }
  return from;
}

}  // namespace

std::vector<std::string> CursorsNamed(const CursorMap& cursors, const std::string& name) {
  if (cursors.contains(name)) return {name};
  std::vector<std::string> group;
  const std::string prefix = name + ".";
  for (auto it = cursors.lower_bound(prefix); it != cursors.end() && it->first.starts_with(prefix); ++it) {
    group.push_back(it->first);
  }
  return group;
}

Result<Rewind> RewindCursor(const std::string& dir, const RewindRequest& request) {
  if (Status s = CheckRequest(dir, request); !s.ok()) return s;
  // A directory no log was ever opened in (no DIR/LOCK) is refused before Open would create
  // a LOCK file in it. Otherwise the lock comes first: a running API may not have saved its
  // cursors yet, and "in use" is then the answer the operator needs.
  if (access((dir + "/LOCK").c_str(), F_OK) != 0) {
    Result<CursorMap> saved = LoadCursors(dir);
    if (!saved.ok()) return saved.status();
    if (CursorsNamed(*saved, request.cursor).empty()) return UnknownCursor(dir, request.cursor, *saved);
  }

  Options options;
  options.prepare_segments = false;  // a rewind appends nothing: no segment to prepare
  Result<std::unique_ptr<Oplog>> opened = Oplog::Open(dir, options);
  if (!opened.ok()) return opened.status();
  Oplog& log = **opened;
  Rewind rewind;
  rewind.recovery = log.recovery().message;
  // The cursors as the log loaded them under its lock (a process may have saved new ones
  // since the check above).
  const Stats stats = log.GetStats();
  CursorMap current;
  for (const CursorStats& c : stats.cursors) current.emplace(c.name, c.seq);
  for (const std::string& name : CursorsNamed(current, request.cursor)) {
    rewind.cursors.push_back(CursorRewind{name, current.at(name), {}, {}});
  }
  if (rewind.cursors.empty()) return UnknownCursor(dir, request.cursor, current);
  Result<uint64_t> from = CheckFrom(dir, stats, request.from);
  if (!from.ok()) return from.status();
  for (const CursorRewind& c : rewind.cursors) {
    if (Status s = CheckNothingSkipped(log, c, *from); !s.ok()) return s;
    if (!request.consumer_files) continue;
    for (const std::string& name : request.consumer_files(c.name)) {
      if (Status s = CheckFileName(name); !s.ok()) return s;
    }
  }
  rewind.new_cursor = *from - 1;
  if (Status s = CountAfter(log, rewind.new_cursor, &rewind); !s.ok()) return s;
  for (CursorRewind& c : rewind.cursors) {
    if (Status s = ReplaceConsumerFiles(dir, request, &c, &rewind.removed); !s.ok()) return s;
  }
  for (const CursorRewind& c : rewind.cursors) {
    if (Status s = log.SetCursor(c.name, rewind.new_cursor); !s.ok()) return s;
  }
  if (Status s = log.SaveCursors(); !s.ok()) return s;
  return rewind;
}

}  // namespace clickatron::oplog
