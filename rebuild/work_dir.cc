#include "rebuild/work_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "base/durable_file.h"
#include "base/errno_status.h"
#include "keyformat/manifest.h"
#include "keyformat/shard_meta.h"
#include "rebuild/file.h"

namespace clickatron::rebuild {
namespace {

constexpr char kCommitFile[] = "COMMIT";

}  // namespace

Result<KeyValueText> ReadKeyValueFile(const std::string& path) {
  Result<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  Result<KeyValueText> kv = KeyValueText::Parse(*text);
  if (!kv.ok()) return kv.status().Prefixed(path + ": ");
  return kv;
}

void AddFileSummary(uint32_t shard, const FileSummary& summary, KeyValueText* out) {
  AddShardMeta(shard, ShardMeta{"", summary.records, summary.bytes, summary.xxh64, summary.columns}, out);
}

Result<FileSummary> FileSummaryOf(const KeyValueText& meta, uint32_t shard) {
  Result<ShardMeta> m = ShardMetaOf(meta, shard);
  if (!m.ok()) return m.status();
  if (!m->records || !m->bytes || !m->xxh64 || !m->columns) {
    return Status::Error("shard " + std::to_string(shard) + " lacks one of records, bytes, xxh64, columns");
  }
  return FileSummary{*m->records, *m->bytes, *m->xxh64, *m->columns};
}

std::string SegmentInfo::ShardPath(uint32_t shard) const {
  return dir + "/shard-" + std::to_string(shard) + ".seg";
}

std::string FormatSegmentMeta(const SegmentInfo& info) {
  KeyValueText f;
  f.Add("span", info.span);
  f.Add("shards", std::to_string(info.shards));
  for (const auto& [unit, source] : info.covers) f.Add("covers", unit + " " + source);
  for (const auto& [day, digests] : info.exports.days) f.Add("export", FormatDayDigests(day, digests));
  for (const DayPart& part : info.exports.parts) f.Add("day_part", FormatDayPart(part));
  for (const LateRange& r : info.late) {
    f.Add("late", r.api + " " + std::to_string(r.first) + " " + std::to_string(r.last));
  }
  for (uint32_t k = 0; k < info.files.size(); ++k) AddFileSummary(k, info.files[k], &f);
  return f.Format();
}

Result<SegmentInfo> ReadSegmentInfo(const std::string& dir, const std::string& name) {
  Result<KeyValueText> meta = ReadKeyValueFile(dir + "/meta");
  if (!meta.ok()) return meta.status();
  SegmentInfo info;
  info.name = name;
  info.dir = dir;
  info.span = meta->Get("span");
  const std::string what = "segment " + dir + ": ";
  uint64_t shards;
  if (!ParseCount(meta->Get("shards"), &shards) || shards == 0 || shards > 65535) {
    return Status::Error(what + "bad 'shards'");
  }
  info.shards = uint32_t(shards);
  for (const std::string& c : meta->GetAll("covers")) {
    const size_t space = c.find(' ');
    if (space == std::string::npos) return Status::Error(what + "bad 'covers' line '" + c + "'");
    info.covers[c.substr(0, space)] = c.substr(space + 1);
  }
  for (const std::string& e : meta->GetAll("export")) {
    Result<DayDigests> d = ParseDayDigests(e);
    if (!d.ok()) return Status::Error(what + "bad 'export' line: " + d.status().message());
    info.exports.days[d->day] = std::move(d->digests);
  }
  for (const std::string& e : meta->GetAll("day_part")) {
    Result<DayPart> part = ParseDayPart(e);
    if (!part.ok()) return Status::Error(what + "bad 'day_part' line: " + part.status().message());
    info.exports.parts.insert(*std::move(part));
  }
  for (const std::string& l : meta->GetAll("late")) {
    const size_t space = l.rfind(' ');
    Result<LateMark> mark = ParseLateMark(space == std::string::npos ? l : l.substr(0, space));
    LateRange r;
    if (!mark.ok() || space == std::string::npos || !ParseCount(l.substr(space + 1), &r.last) ||
        mark->id > r.last) {
      return Status::Error(what + "bad 'late' line '" + l + "'");
    }
    r.api = mark->api;
    r.first = mark->id;
    info.late.insert(r);
  }
  for (uint32_t k = 0; k < info.shards; ++k) {
    Result<FileSummary> s = FileSummaryOf(*meta, k);
    if (!s.ok()) return Status::Error(what + "bad metadata for shard " + std::to_string(k));
    info.files.push_back(*s);
  }
  return info;
}

std::map<std::string, Cover> CoverageOf(const std::vector<SegmentInfo>& segments) {
  std::map<std::string, Cover> out;
  for (const SegmentInfo& seg : segments) {
    for (const auto& [unit, source] : seg.covers) {
      const std::string key = unit == "lookups" ? "lookups " + source : unit;
      out[key] = Cover{source, seg.name, seg.span};
    }
  }
  return out;
}

std::string LastCoveredDay(const std::vector<SegmentInfo>& segments) {
  std::string last;
  for (const SegmentInfo& seg : segments) {
    for (const auto& entry : seg.covers) {
      if (entry.first != "lookups" && entry.first > last) last = entry.first;
    }
    last = std::max(last, seg.exports.LastPartDay());
  }
  return last;
}

MergedExports ExportsOf(const std::vector<SegmentInfo>& segments) {
  MergedExports out;
  for (const SegmentInfo& seg : segments) {
    for (const auto& [day, digests] : seg.exports.days) out.days[day] = digests;
    out.parts.insert(seg.exports.parts.begin(), seg.exports.parts.end());
  }
  return out;
}

std::map<std::string, uint64_t> LateMarks(const std::vector<SegmentInfo>& segments) {
  std::map<std::string, uint64_t> out;
  for (const SegmentInfo& seg : segments) {
    for (const LateRange& r : seg.late) out[r.api] = std::max(out[r.api], r.last);
  }
  return out;
}

Status CheckShardCount(const std::vector<SegmentInfo>& segments, uint32_t shards) {
  for (const SegmentInfo& seg : segments) {
    if (seg.shards != shards) {
      return Status::Error("segment " + seg.name + " was written for " + std::to_string(seg.shards) +
                           " archive shards, not " + std::to_string(shards) +
                           " (changing the archive shard count needs a new work directory)");
    }
  }
  return Status::OK();
}

WorkDir::~WorkDir() {
  if (task_lock_fd_ >= 0) ::close(task_lock_fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Status WorkDir::TakeLock(int operation, const std::string& path, int* fd, const std::string& busy) {
  *fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (*fd < 0) return ErrnoStatus("open", path);
  if (::flock(*fd, operation | LOCK_NB) != 0) return Status::Error(busy + " (lock " + path + ")");
  return Status::OK();
}

Status WorkDir::Open() {
  if (root_.empty()) return Status::Error("--work is required");
  for (const char* sub : {"", "/segments", "/txn"}) {
    if (Status s = MakeDirs(root_ + sub); !s.ok()) return s;
  }
  const std::string busy = "work directory " + root_ + " is in use by another clickatron-rebuild";
  if (Status s = TakeLock(LOCK_EX, Path("lock"), &lock_fd_, busy); !s.ok()) return s;
  return Recover();
}

Status WorkDir::OpenTask(const std::string& task) {
  if (root_.empty()) return Status::Error("--work is required");
  for (const char* sub : {"", "/segments", "/txn", "/tasks"}) {
    if (Status s = MakeDirs(root_ + sub); !s.ok()) return s;
  }
  task_ = task;
  const std::string busy = "work directory " + root_ + " is in use by a local clickatron-rebuild";
  if (Status s = TakeLock(LOCK_SH, Path("lock"), &lock_fd_, busy); !s.ok()) return s;
  const std::string twice = "task " + task + " is already running on " + root_;
  if (Status s = TakeLock(LOCK_EX, Path("tasks/" + task + ".lock"), &task_lock_fd_, twice); !s.ok()) return s;
  return Recover();
}

Status WorkDir::ShareLock() {
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_SH) != 0) return ErrnoStatus("flock LOCK_SH", Path("lock"));
  return Status::OK();
}

Status WorkDir::Recover() {
  // Temp names of killed merges and publishes: never live, always safe to drop (a merge
  // killed between its two renames has no `merged` and simply runs again).
  Result<std::vector<std::string>> top = ListDir(root_);
  if (!top.ok()) return top.status();
  for (const std::string& name : task_.empty() ? *top : std::vector<std::string>()) {
    if (name.starts_with("merged.tmp-") || name.starts_with("merged.old-") || name.starts_with("current.tmp-")) {
      if (Status s = RemoveAll(Path(name)); !s.ok()) return s;
    }
  }
  Result<std::vector<std::string>> txns = ListDir(Path("txn"));
  if (!txns.ok()) return txns.status();
  for (const std::string& name : *txns) {
    if (!name.starts_with(TxnPrefix())) continue;  // another task's change
    const std::string dir = Path("txn") + "/" + name;
    if (Exists(dir + "/" + kCommitFile)) {
      std::fprintf(stderr, "clickatron-rebuild: finishing interrupted change %s\n", name.c_str());
      if (Status s = ApplyTransaction(*this, dir); !s.ok()) return s;
    } else if (Status s = RemoveAll(dir); !s.ok()) {
      return s;
    }
  }
  return Status::OK();
}

Result<std::vector<SegmentInfo>> WorkDir::Segments() const {
  Result<std::vector<std::string>> names = ListDir(Path("segments"));
  if (!names.ok()) return names.status();
  std::vector<SegmentInfo> out;
  for (const std::string& name : *names) {
    Result<SegmentInfo> info = ReadSegmentInfo(Path("segments") + "/" + name, name);
    if (!info.ok()) return info.status();
    out.push_back(std::move(info).value());
  }
  return out;
}

std::string WorkDir::NewId() {
  static std::atomic<uint32_t> counter{0};
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld%09ld-%d-%u", static_cast<long long>(ts.tv_sec), ts.tv_nsec,
                int(::getpid()), counter.fetch_add(1));
  return buf;
}

Transaction::Transaction(const WorkDir& work) : work_(work) {}

Transaction::~Transaction() {
  if (!dir_.empty() && !committed_) RemoveAll(dir_);
}

Status Transaction::Begin() {
  dir_ = work_.Path("txn") + "/" + work_.TxnPrefix() + WorkDir::NewId();
  return MakeDirs(dir_);
}

Status Transaction::Commit() {
  for (const std::string& name : adds_) {
    if (Status s = SyncDir(StagingPath(name)); !s.ok()) return s;
  }
  if (Status s = SyncDir(dir_); !s.ok()) return s;
  std::string commit;
  for (const std::string& name : removes_) commit += "remove " + name + "\n";
  for (const std::string& name : adds_) commit += "add " + name + "\n";
  if (Status s = WriteFileAtomic(dir_ + "/" + kCommitFile, commit); !s.ok()) return s;
  committed_ = true;
  return ApplyTransaction(work_, dir_);
}

Status ApplyTransaction(const WorkDir& work, const std::string& txn_dir) {
  Result<std::string> commit = ReadSmallFile(txn_dir + "/" + kCommitFile);
  if (!commit.ok()) return commit.status();
  const std::string segments = work.Path("segments");
  std::string_view text = *commit;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.starts_with("remove ")) {
      if (Status s = RemoveAll(segments + "/" + std::string(line.substr(7))); !s.ok()) return s;
    } else if (line.starts_with("add ")) {
      const std::string name(line.substr(4));
      const std::string from = txn_dir + "/" + name;
      if (Exists(from)) {
        if (Status s = RenameDurable(from, segments + "/" + name); !s.ok()) return s;
      }
    } else if (!line.empty()) {
      return Status::Error("change " + txn_dir + " has a bad COMMIT line '" + std::string(line) + "'");
    }
  }
  if (Status s = SyncDir(segments); !s.ok()) return s;
  return RemoveAll(txn_dir);
}

SegmentDirWriter::SegmentDirWriter(std::string dir, std::string name, std::string span, uint32_t shards) {
  info_.dir = std::move(dir);
  info_.name = std::move(name);
  info_.span = std::move(span);
  info_.shards = shards;
}

Status SegmentDirWriter::Open() { return MakeDirs(info_.dir); }

Status SegmentDirWriter::CloseCurrent() {
  if (!current_) return Status::OK();
  if (Status s = current_->Finish(); !s.ok()) return s;
  info_.files.push_back(current_->summary());
  current_.reset();
  return Status::OK();
}

Status SegmentDirWriter::OpenShard(uint32_t shard) {
  current_ = std::make_unique<SortedFileWriter>();
  current_shard_ = shard;
  next_shard_ = shard + 1;
  return current_->Open(info_.ShardPath(shard), /*with_footer=*/true);
}

Result<SortedFileWriter*> SegmentDirWriter::Shard(uint32_t shard) {
  if (current_ && shard == current_shard_) return current_.get();
  if (shard < next_shard_ || shard >= info_.shards) {
    return Status::Error("internal: shard " + std::to_string(shard) + " written out of order");
  }
  while (true) {
    if (Status s = CloseCurrent(); !s.ok()) return s;
    if (Status s = OpenShard(next_shard_); !s.ok()) return s;
    if (current_shard_ == shard) return current_.get();
  }
}

Status SegmentDirWriter::Finish() {
  while (next_shard_ < info_.shards) {
    if (Status s = CloseCurrent(); !s.ok()) return s;
    if (Status s = OpenShard(next_shard_); !s.ok()) return s;
  }
  if (Status s = CloseCurrent(); !s.ok()) return s;
  if (Status s = WriteFileAtomic(info_.dir + "/meta", FormatSegmentMeta(info_)); !s.ok()) return s;
  return SyncDir(info_.dir);
}

}  // namespace clickatron::rebuild
