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
  if (Status s = CheckCursorName(request.cursor); !s.ok()) return s;
  for (const std::string& name : request.remove_files) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      return Status::Error("'" + name + "' is not a file name in the oplog directory");
    }
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

}  // namespace

Result<Rewind> RewindCursor(const std::string& dir, const RewindRequest& request) {
  if (Status s = CheckRequest(dir, request); !s.ok()) return s;
  // A directory no log was ever opened in (no DIR/LOCK) is refused before Open would create
  // a LOCK file in it. Otherwise the lock comes first: a running API may not have saved its
  // cursors yet, and "in use" is then the answer the operator needs.
  if (access((dir + "/LOCK").c_str(), F_OK) != 0) {
    Result<CursorMap> saved = LoadCursors(dir);
    if (!saved.ok()) return saved.status();
    if (!saved->contains(request.cursor)) return UnknownCursor(dir, request.cursor, *saved);
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
  const CursorStats* cursor = nullptr;
  CursorMap current;
  for (const CursorStats& c : stats.cursors) {
    current.emplace(c.name, c.seq);
    if (c.name == request.cursor) cursor = &c;
  }
  if (cursor == nullptr) return UnknownCursor(dir, request.cursor, current);
  rewind.old_cursor = cursor->seq;

  if (stats.first_seq == 0) return Status::Error("the oplog in " + dir + " holds no records");
  const uint64_t from = request.from == 0 ? stats.first_seq : request.from;
  if (from < stats.first_seq) {
    return Status::Error("seq " + std::to_string(from) + " is before the oldest record " + dir +
                         " still holds (seq " + std::to_string(stats.first_seq) +
                         "; older segments were deleted by retention)");
  }
  if (from > stats.last_seq) {
    return Status::Error("seq " + std::to_string(from) + " is after the last record in " + dir +
                         " (seq " + std::to_string(stats.last_seq) + ")");
  }
  if (from - 1 > rewind.old_cursor) {
    // Moving forward is fine only over numbers no record has (seqs may have gaps).
    Rewind pending;
    if (Status s = CountAfter(log, rewind.old_cursor, &pending); !s.ok()) return s;
    if (pending.records > 0 && pending.first_seq < from) {
      return Status::Error("cursor '" + request.cursor + "' is at seq " +
                           std::to_string(rewind.old_cursor) + " and seq " +
                           std::to_string(pending.first_seq) +
                           " has not been delivered yet: --from " + std::to_string(from) +
                           " would skip it (replay only moves a cursor back; use --from " +
                           std::to_string(pending.first_seq) + " or lower)");
    }
  }
  rewind.new_cursor = from - 1;
  if (Status s = CountAfter(log, rewind.new_cursor, &rewind); !s.ok()) return s;

  for (const std::string& name : request.remove_files) {
    const std::string path = dir + "/" + name;
    if (unlink(path.c_str()) == 0) {
      rewind.removed.push_back(path);
    } else if (errno != ENOENT) {
      return ErrnoStatus("remove", path);
    }
  }
  if (!rewind.removed.empty()) {
    if (Status s = SyncDir(dir); !s.ok()) return s;
  }
  // The rule of an earlier replay goes in any case: it must not outlive that replay.
  rewind.skip_path = dir + "/" + ReplaySkipFileName(request.cursor);
  if (unlink(rewind.skip_path.c_str()) == 0) {
    if (Status s = SyncDir(dir); !s.ok()) return s;
  } else if (errno != ENOENT) {
    return ErrnoStatus("remove", rewind.skip_path);
  }
  if (request.skip_through_day >= 0 && rewind.old_cursor > 0) {
    // Only what the consumer had acknowledged can be in the archive.
    rewind.skip = ReplaySkip{request.skip_through_day, rewind.old_cursor};
    if (Status s = SaveReplaySkip(dir, request.cursor, rewind.skip); !s.ok()) return s;
  }
  if (Status s = log.SetCursor(request.cursor, rewind.new_cursor); !s.ok()) return s;
  if (Status s = log.SaveCursors(); !s.ok()) return s;
  return rewind;
}

}  // namespace clickatron::oplog
