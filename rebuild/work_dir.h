// The work directory of clickatron-rebuild and its segment catalog.
//
//   DIR/lock                       flock: one rebuild command at a time
//   DIR/export/<day>/shard-N.csv   realtime exports, `#END` footer kept
//   DIR/segments/<span>.<id>/      one segment: `meta` + shard-K.seg for every archive shard
//   DIR/txn/<id>/                  a change of the segment set being prepared or applied
//   DIR/merged/                    shard-K.csv + meta (what `publish` publishes)
//   DIR/gen/<generation>/          published generations; DIR/current -> gen/<generation>
//   DIR/merging/<inputs>/          one archive shard's merge done by `merge --shard K` (merge.cc)
//   DIR/tasks/<task>.lock          flock: one run of each task of a Slurm graph at a time
//   DIR/slurm/<run>/               a Slurm graph's scripts, logs, exit files (slurm_executor.h)
//
// A segment's span is a day (YYYY-MM-DD), a month (YYYY-MM, made by `compact`) or
// `lookups` (the lookup records of one import, which belong to no day). Its meta says
// which units it covers and where each came from:
//
//   span = 2012-03-25
//   shards = 2
//   covers = 2012-03-25 export-1f0c...      (one line per covered day, or `lookups <src>`)
//   export = 2012-03-25 <Hex64> <Hex64>     a covered day made from realtime exports: each
//                                           realtime shard's footer xxh64, in shard order
//   day_part = 2012-03-25 1 <Hex64> <Hex64> one realtime shard's export of the day, with the
//                                           ring it came from (keyformat/manifest.h): one per
//                                           shard of an `export` day, or alone in a segment
//                                           that adds a shard's part of a day the archive
//                                           already holds (covering nothing)
//   late = 10.0.0.1:8000 17 42              late data of that API, entries 17..42: added to
//                                           the days it holds, covering none of them
//   shard.0.records = 12   shard.0.bytes = 345   shard.0.xxh64 = 16 hex
//
// A segment holding late data, or day parts alone (span: a day), covers no unit, so it
// never stands in the way of an import or an export of its days (day_cover.h): `merge`
// sums its columns into whatever else holds those hours (docs/formats.md#rebuild-metadata).
//
// The segment set changes only through a Transaction: new segment directories are
// written inside DIR/txn/<id>/, then a COMMIT file lists what to add and what to remove,
// then the renames happen. Every command first runs Recover(): a transaction with COMMIT
// is finished, one without is deleted. So a kill -9 anywhere leaves the old set or the new
// one, and a day is never counted twice.
//
// Tasks of a Slurm graph (slurm_executor.h) run at the same time on one shared work
// directory: each opens it with OpenTask(name), which takes the lock shared (a local
// command, which takes it exclusive, waits for none of them and is refused while any runs)
// and recovers only the transactions of that task (named txn/<task>.<id>), so one task's
// recovery never deletes another's change in progress.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "keyformat/key_value.h"
#include "keyformat/manifest.h"
#include "rebuild/record_sorter.h"
#include "rebuild/sorted_file.h"

namespace clickatron::rebuild {

// Reads a `key = value` file (keyformat/key_value.h); errors name the path.
Result<KeyValueText> ReadKeyValueFile(const std::string& path);

// The shard.K lines of a segment's meta and of merged/meta (keyformat/shard_meta.h): all
// four fields of a FileSummary, each required.
void AddFileSummary(uint32_t shard, const FileSummary& summary, KeyValueText* out);
Result<FileSummary> FileSummaryOf(const KeyValueText& meta, uint32_t shard);

// Late entries first..last of one API, merged into a segment.
struct LateRange {
  std::string api;  // host:port
  uint64_t first = 0, last = 0;
  auto operator<=>(const LateRange&) const = default;
};

struct SegmentInfo {
  std::string name;                          // directory name: <span>.<id>
  std::string dir;                           // full path
  std::string span;                          // YYYY-MM-DD, YYYY-MM or lookups
  uint32_t shards = 0;
  std::map<std::string, std::string> covers; // unit (day or "lookups") -> source
  MergedExports exports;                     // `export` (day) and `day_part` lines
  std::set<LateRange> late;
  std::vector<FileSummary> files;            // per shard
  std::string ShardPath(uint32_t shard) const;
};

class WorkDir {
 public:
  explicit WorkDir(std::string root) : root_(std::move(root)) {}
  ~WorkDir();

  // Creates the layout if needed, takes the lock, and runs Recover().
  Status Open();
  // As Open, for task `task` of a Slurm graph: the lock shared, the task's own lock
  // exclusive (a second run of the same task is refused), and only the task's own
  // transactions recovered.
  Status OpenTask(const std::string& task);
  // After Open: keeps the lock, shared, so that the tasks of a graph can open the directory
  // while a local command still cannot.
  Status ShareLock();
  // The prefix of this process's transaction directories ("" or "<task>.").
  std::string TxnPrefix() const { return task_.empty() ? "" : task_ + "."; }
  const std::string& root() const { return root_; }
  std::string Path(std::string_view relative) const { return root_ + "/" + std::string(relative); }

  // Finishes committed transactions and deletes unfinished ones and stray temp files; in a
  // task (OpenTask), only the transactions of that task.
  Status Recover();

  // Every segment, by name (so by span: months before their days, lookups last).
  Result<std::vector<SegmentInfo>> Segments() const;

  // A unique id for new names (time and pid based).
  static std::string NewId();

 private:
  Status TakeLock(int operation, const std::string& path, int* fd, const std::string& busy);
  std::string root_;
  std::string task_;
  int lock_fd_ = -1;
  int task_lock_fd_ = -1;
};

// Which segment covers each unit (a day, or "lookups" per source).
struct Cover {
  std::string source;
  std::string segment;  // name
  std::string span;
};
// Key: the unit ("2012-03-25"; lookups as "lookups <source>").
std::map<std::string, Cover> CoverageOf(const std::vector<SegmentInfo>& segments);
// The newest day the segments hold: the newest covered day or day part ("" when none).
std::string LastCoveredDay(const std::vector<SegmentInfo>& segments);
// Every realtime export the segments hold (their `export` and `day_part` lines).
MergedExports ExportsOf(const std::vector<SegmentInfo>& segments);
// Per API, the last late entry id the segments hold.
std::map<std::string, uint64_t> LateMarks(const std::vector<SegmentInfo>& segments);
// Error when a segment was written for another archive shard count.
Status CheckShardCount(const std::vector<SegmentInfo>& segments, uint32_t shards);

Result<SegmentInfo> ReadSegmentInfo(const std::string& dir, const std::string& name);
std::string FormatSegmentMeta(const SegmentInfo& info);

// A change of the segment set (see the top of this file).
class Transaction {
 public:
  explicit Transaction(const WorkDir& work);
  ~Transaction();  // an uncommitted transaction is deleted
  Status Begin();
  // Where to write a new segment directory called name.
  std::string StagingPath(const std::string& name) const { return dir_ + "/" + name; }
  void AddSegment(const std::string& name) { adds_.push_back(name); }
  void RemoveSegment(const std::string& name) { removes_.push_back(name); }
  // Makes the change durable and applies it.
  Status Commit();

 private:
  const WorkDir& work_;
  std::string dir_;
  std::vector<std::string> adds_, removes_;
  bool committed_ = false;
};

// Applies a committed transaction directory (idempotent).
Status ApplyTransaction(const WorkDir& work, const std::string& txn_dir);

// Writes a segment directory: one shard-K.seg per shard and the meta file last.
class SegmentDirWriter {
 public:
  SegmentDirWriter(std::string dir, std::string name, std::string span, uint32_t shards);
  Status Open();  // creates the directory
  // The writer of shard K, opened on first use; shards must be opened in ascending order.
  Result<SortedFileWriter*> Shard(uint32_t shard);
  void Cover(const std::string& unit, const std::string& source) { info_.covers[unit] = source; }
  void Export(const std::string& day, std::vector<uint64_t> digests) { info_.exports.days[day] = std::move(digests); }
  void Part(DayPart part) { info_.exports.parts.insert(std::move(part)); }
  void Late(const LateRange& range) { info_.late.insert(range); }
  // Writes the empty shards, fsyncs, writes meta.
  Status Finish();
  const SegmentInfo& info() const { return info_; }

 private:
  Status CloseCurrent();
  Status OpenShard(uint32_t shard);
  SegmentInfo info_;
  std::unique_ptr<SortedFileWriter> current_;
  uint32_t current_shard_ = 0;
  uint32_t next_shard_ = 0;
};

}  // namespace clickatron::rebuild
