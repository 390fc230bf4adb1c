#include "oplog/oplog.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "base/durable_file.h"
#include "base/errno_status.h"
#include "base/unique_fd.h"
#include "oplog/file.h"
#include "oplog/frame.h"
#include "oplog/reader.h"
#include "oplog/segment.h"

namespace clickatron::oplog {

Result<SyncPolicy> ParseSyncPolicy(std::string_view text) {
  if (text == "always") return SyncPolicy::kAlways;
  if (text == "batch") return SyncPolicy::kBatch;
  if (text == "none") return SyncPolicy::kNone;
  return Status::Error("oplog sync policy '" + std::string(text) +
                       "' is not one of always, batch, none");
}

const char* SyncPolicyName(SyncPolicy policy) {
  switch (policy) {
    case SyncPolicy::kAlways: return "always";
    case SyncPolicy::kBatch: return "batch";
    case SyncPolicy::kNone: return "none";
  }
  return "?";
}

Oplog::Oplog(std::string dir, Options options) : dir_(std::move(dir)), options_(std::move(options)) {}

Result<std::unique_ptr<Oplog>> Oplog::Open(const std::string& dir, Options options) {
  if (options.segment_bytes < kHeaderSize + 1) {
    return Status::Error("oplog segment size " + std::to_string(options.segment_bytes) +
                         " is too small for one record");
  }
  if (options.retention.count() < 0) return Status::Error("oplog retention is negative");
  std::unique_ptr<Oplog> log(new Oplog(dir, std::move(options)));
  if (Status s = EnsureDir(dir); !s.ok()) return s;

  const std::string lock_path = dir + "/LOCK";
  log->lock_fd_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (log->lock_fd_ < 0) return ErrnoStatus("open", lock_path);
  if (flock(log->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return Status::Error("oplog directory " + dir + " is in use by another process (it holds " +
                           lock_path + "; a running clickatron-api keeps its oplog locked)");
    }
    return ErrnoStatus("lock", lock_path);
  }

  if (Status s = log->Recover(); !s.ok()) return s;
  Result<CursorMap> cursors = LoadCursors(dir);
  if (!cursors.ok()) return cursors.status();
  log->cursors_ = log->saved_cursors_ = *cursors;
  unlink((dir + "/" + kCursorsFile + ".tmp").c_str());  // a save cut short by a crash

  log->last_retention_ = log->Now();
  if (log->options_.prepare_segments) {
    log->preparer_ = std::make_unique<SegmentPreparer>(dir, log->options_.segment_bytes);
  }
  log->sync_thread_ = std::thread([raw = log.get()] { raw->SyncLoop(); });
  return log;
}

// A segment's bad tail: a write cut short by a crash in the newest segment (nothing after
// it was ever acknowledged: dropped and told in recovery_), damage in any other.
Status Oplog::DropTornTail(const SegmentFile& file, const SegmentScan& scan, bool newest) {
  const std::string where = file.path + " at offset " + std::to_string(scan.valid_bytes);
  if (!newest) {
    return Status::Error("oplog segment " + where + " is corrupt: " + scan.tail_problem +
                         " (only the newest segment may end in a torn record)");
  }
  recovery_.dropped_bytes = scan.tail_bytes;
  recovery_.dropped_records = scan.tail_records;
  recovery_.message = "cut " + std::to_string(recovery_.dropped_bytes) + " bytes (" +
                      std::to_string(scan.tail_records) + (scan.tail_records == 1 ? " record: " : " records: ") +
                      scan.tail_problem + ") off " + where;
  return Status::OK();
}

Status Oplog::Recover() {
  Result<std::vector<SegmentFile>> files = ListSegments(dir_);
  if (!files.ok()) return files.status();
  uint64_t last = 0;
  for (size_t i = 0; i < files->size(); ++i) {
    const SegmentFile& file = (*files)[i];
    const bool newest = i + 1 == files->size();
    Result<SegmentScan> scan = ScanSegment(file, last, nullptr);
    if (!scan.ok()) return scan.status();
    if (!scan->tail_problem.empty()) {
      if (Status s = DropTornTail(file, *scan, newest); !s.ok()) return s;
    }
    // The bad tail, and the zeros a crash left after the records of a segment written into
    // a prepared file (no record was ever there): every segment the log opens from now on
    // is new, so this one is cut to its records like a closed one.
    const bool cut = scan->valid_bytes < scan->file_bytes;
    if (cut && truncate(file.path.c_str(), static_cast<off_t>(scan->valid_bytes)) != 0) {
      return ErrnoStatus("truncate the tail of", file.path);
    }
    recovery_.trimmed_bytes += scan->padding_bytes;
    if (newest || cut) {
      // A crashed process may have left its last writes in the page cache only.
      const UniqueFd fd(open(file.path.c_str(), O_WRONLY | O_CLOEXEC));
      if (!fd.valid()) return ErrnoStatus("open", file.path);
      if (fdatasync(fd.get()) != 0) return ErrnoStatus("fdatasync", file.path);
    }
    if (scan->records > 0) last = scan->last_seq;
    if (!newest && (*files)[i + 1].name_seq <= last) {
      return Status::Error("oplog segment " + file.path + " holds seq " + std::to_string(last) +
                           ", which the next segment's name (seq " +
                           std::to_string((*files)[i + 1].name_seq) + ") says it cannot");
    }
    struct stat st;
    if (stat(file.path.c_str(), &st) != 0) return ErrnoStatus("stat", file.path);
    segments_.push_back({file.name_seq, file.path, scan->first_seq, scan->last_seq,
                         scan->valid_bytes, static_cast<int64_t>(st.st_mtime)});
    recovery_.records += scan->records;
  }
  recovery_.segments = segments_.size();
  recovery_.last_seq = last;
  // Strictly above every seq in the log and every segment name, so a new segment never
  // collides with an old (perhaps empty) one.
  next_seq_ = std::max(last, segments_.empty() ? 0 : segments_.back().name_seq) + 1;
  settled_seq_ = last;
  durable_seq_.store(last, std::memory_order_release);
  return Status::OK();
}

Oplog::~Oplog() {
  if (sync_thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_one();
    sync_thread_.join();
  }
  // Under `none` too: a clean shutdown leaves nothing unsynced (and no padding).
  if (active_fd_ >= 0) CloseActiveSegment();
  preparer_.reset();
  if (lock_fd_ >= 0) close(lock_fd_);
}

int64_t Oplog::Now() const {
  return options_.clock ? options_.clock() : static_cast<int64_t>(time(nullptr));
}

Result<uint64_t> Oplog::Append(std::string_view payload) {
  if (payload.empty()) return Status::Error("oplog record is empty");
  if (payload.size() > kMaxPayload) {
    return Status::Error("oplog record of " + std::to_string(payload.size()) +
                         " bytes is larger than the limit of " + std::to_string(kMaxPayload));
  }
  uint64_t seq;
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!damaged_.ok()) return damaged_;
    if (stop_) return Status::Error("oplog is closing");
    if (queue_.size() + kHeaderSize + payload.size() > options_.max_queued_bytes) {
      return Status::Error("oplog write queue is full (" + std::to_string(queue_.size()) +
                           " bytes waiting for the disk)");
    }
    seq = next_seq_++;
    wake = queue_.empty();
    if (wake) {
      queue_first_ = seq;
      queue_since_us_ = MonotonicMicros();
    }
    AppendFrame(seq, payload, &queue_);
    queue_last_ = seq;
    ++appends_;
    if (options_.sync == SyncPolicy::kNone) durable_seq_.store(seq, std::memory_order_release);
  }
  // The sync thread only sleeps on an empty queue, so only the first record needs a wake.
  if (wake) work_cv_.notify_one();
  return seq;
}

uint64_t Oplog::last_seq() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_seq_ - 1;
}

Status Oplog::Sync() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = next_seq_ - 1;
  const uint64_t checked = sync_checked_;  // failures up to here were reported by a Sync
  sync_checked_ = std::max(sync_checked_, target);
  work_cv_.notify_one();
  done_cv_.wait(lock, [&] { return settled_seq_ >= target; });
  if (last_failed_ > checked) return Status::Error(last_error_);
  if (!damaged_.ok()) return damaged_;
  return Status::OK();
}

void Oplog::SyncLoop() {
  const auto idle_wait = std::min<std::chrono::milliseconds>(options_.cursor_save_interval,
                                                             std::chrono::seconds(1));
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (queue_.empty() && !stop_) work_cv_.wait_for(lock, idle_wait);
    if (!queue_.empty()) {
      writing_.swap(queue_);  // queue_ takes the old buffer's capacity: no allocation
      const uint64_t first = queue_first_, last = queue_last_, since = queue_since_us_;
      lock.unlock();
      WriteBatch(writing_, first, last, since);
      writing_.clear();
    } else if (stop_) {
      break;
    } else {
      lock.unlock();
    }
    SaveCursorsIfDue(false);
    const int64_t now = Now();
    if (now - last_retention_ >= options_.retention_check_interval.count()) {
      last_retention_ = now;
      RemoveExpiredSegments(now);  // a failure is retried at the next check
    }
    lock.lock();
  }
  lock.unlock();
  SaveCursorsIfDue(true);
}

void Oplog::WriteBatch(std::string_view frames, uint64_t first, uint64_t last, uint64_t since_us) {
  if (options_.sync != SyncPolicy::kAlways) {
    if (options_.compress) {
      encoder_.Encode(frames, &encoded_);
      frames = encoded_;
    }
    Report(WriteAndSync(frames, first, last), first, last, since_us);
    return;
  }
  // `always`: one write and one fdatasync per record, as the policy promises.
  Frame frame;
  while (!frames.empty()) {
    DecodeFrame(frames, &frame);  // our own frames: whole and good
    const std::string_view one = frames.substr(0, frame.size);
    Report(WriteAndSync(one, frame.seq, frame.seq), frame.seq, frame.seq, since_us);
    frames.remove_prefix(frame.size);
  }
}

Status Oplog::WriteAndSync(std::string_view frames, uint64_t first, uint64_t last) {
  (void)last;
  if (Status s = EnsureActiveSegment(first, frames.size()); !s.ok()) return s;
  const uint64_t start = active_size_;
  if (Status s = WriteAt(active_fd_, frames, static_cast<off_t>(start), active_path_); !s.ok()) {
    return CutBack(s, start);
  }
  if (options_.sync != SyncPolicy::kNone) {
    const uint64_t t0 = MonotonicMicros();
    if (fdatasync(active_fd_) != 0) return CutBack(ErrnoStatus("fdatasync", active_path_), start);
    sync_latency_.Record(MonotonicMicros() - t0);
  }
  active_size_ = start + frames.size();
  return Status::OK();
}

// Removes a failed write from the file so the log holds only whole, reported records.
Status Oplog::CutBack(Status cause, uint64_t size) {
  // A prepared segment loses its zeros here and goes on as a plain, appended one.
  active_prepared_ = false;
  const bool cut = ftruncate(active_fd_, static_cast<off_t>(size)) == 0 &&
                   (options_.sync == SyncPolicy::kNone || fdatasync(active_fd_) == 0);
  if (!cut) {
    Status damaged = ErrnoStatus("cannot cut a failed write back off", active_path_);
    std::lock_guard<std::mutex> lock(mu_);
    damaged_ = Status::Error("oplog is damaged (" + damaged.message() + ", after: " +
                             cause.message() + "); restart to recover");
  }
  return cause;
}

Status Oplog::EnsureActiveSegment(uint64_t first_seq, size_t bytes) {
  const int64_t now = Now();
  const int64_t hour = now >= 0 ? now / 3600 : (now - 3599) / 3600;
  if (active_fd_ >= 0) {
    const bool full = active_size_ > 0 && active_size_ + bytes > options_.segment_bytes;
    const bool new_hour = active_size_ > 0 && hour != active_hour_;
    // A plain segment (the first after a start, or after a fallback) gives way as soon as
    // a prepared file is ready, so fast syncs do not wait for the next hour.
    const bool upgrade = !active_prepared_ && active_size_ > 0 && preparer_ && preparer_->ready();
    if (!full && !new_hour && !upgrade) return Status::OK();
    if (Status s = CloseActiveSegment(); !s.ok()) return s;
  }
  const std::string path = dir_ + "/" + SegmentFileName(first_seq);
  UniqueFd fd;
  bool prepared = false;
  if (preparer_ && preparer_->TakeAs(path)) {
    fd.reset(open(path.c_str(), O_WRONLY | O_CLOEXEC));
    prepared = fd.valid();
    if (!fd.valid()) unlink(path.c_str());  // not usable: an empty name is created below
  }
  if (!fd.valid()) fd.reset(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) return ErrnoStatus("create", path);
  if (Status s = SyncDir(dir_); !s.ok()) {
    fd.reset();
    unlink(path.c_str());
    return s;
  }
  active_fd_ = fd.release();
  active_size_ = 0;
  active_hour_ = hour;
  active_path_ = path;
  active_prepared_ = prepared;
  std::lock_guard<std::mutex> lock(mu_);
  segments_.push_back({first_seq, path, 0, 0, 0, now});
  return Status::OK();
}

Status Oplog::CloseActiveSegment() {
  // A closed segment holds exactly its records and is durable under every policy, so
  // recovery may treat damage in any segment but the newest as corruption.
  if (active_prepared_ && ftruncate(active_fd_, static_cast<off_t>(active_size_)) != 0) {
    return ErrnoStatus("trim", active_path_);
  }
  if (fdatasync(active_fd_) != 0) return ErrnoStatus("fdatasync", active_path_);
  close(active_fd_);
  active_fd_ = -1;
  active_prepared_ = false;
  return Status::OK();
}

void Oplog::Report(const Status& status, uint64_t first, uint64_t last, uint64_t since_us) {
  SyncReport report;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status.ok()) {
      Segment& seg = segments_.back();  // the active segment, which was just written
      if (seg.first_seq == 0) seg.first_seq = first;
      seg.last_seq = last;
      seg.bytes = active_size_;
      seg.mtime = Now();
      if (options_.sync != SyncPolicy::kNone) {
        ++syncs_;
        durable_seq_.store(last, std::memory_order_release);
      }
    } else {
      failed_records_ += last - first + 1;
      last_failed_ = last;
      last_error_ = status.message();
      report.failed_first = first;
      report.failed_last = last;
      report.error = status.message();
    }
    report.durable_seq = durable_seq_.load(std::memory_order_relaxed);
  }
  if (status.ok()) durable_latency_.Record(MonotonicMicros() - since_us, last - first + 1);
  if (options_.on_sync) options_.on_sync(report);
  // Settled only after the callback, so Sync() returns once the caller has been told.
  {
    std::lock_guard<std::mutex> lock(mu_);
    settled_seq_ = last;
  }
  done_cv_.notify_all();
}

uint64_t Oplog::cursor(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cursors_.find(name);
  return it == cursors_.end() ? 0 : it->second;
}

Status Oplog::SetCursor(std::string_view name, uint64_t seq) {
  if (Status s = CheckCursorName(name); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  if (seq > next_seq_ - 1) {
    return Status::Error("cursor '" + std::string(name) + "' cannot be set to seq " +
                         std::to_string(seq) + ", past the last record (seq " +
                         std::to_string(next_seq_ - 1) + ")");
  }
  auto it = cursors_.find(name);
  if (it == cursors_.end()) {
    cursors_.emplace(std::string(name), seq);
  } else if (it->second != seq) {
    it->second = seq;
  } else {
    return Status::OK();
  }
  cursors_dirty_ = true;
  return Status::OK();
}

Status Oplog::RemoveCursor(std::string_view name) {
  if (Status s = CheckCursorName(name); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cursors_.find(name);
  if (it == cursors_.end()) return Status::Error("no cursor named '" + std::string(name) + "'");
  cursors_.erase(it);
  cursors_dirty_ = true;
  return Status::OK();
}

Status Oplog::SaveCursors() { return SaveCursorsIfDue(true); }

Status Oplog::SaveCursorsIfDue(bool force) {
  std::lock_guard<std::mutex> save_lock(cursor_save_mu_);  // saves land in snapshot order
  CursorMap snapshot;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!cursors_dirty_) return Status::OK();
    const uint64_t now = MonotonicMicros();
    const uint64_t interval =
        static_cast<uint64_t>(options_.cursor_save_interval.count()) * 1000u;
    if (!force && now - last_cursor_save_us_ < interval) return Status::OK();
    last_cursor_save_us_ = now;
    snapshot = cursors_;
    cursors_dirty_ = false;
  }
  Status s = oplog::SaveCursors(dir_, snapshot);
  std::lock_guard<std::mutex> lock(mu_);
  if (s.ok()) {
    saved_cursors_ = std::move(snapshot);
    cursor_error_.clear();
  } else {
    cursors_dirty_ = true;  // try again at the next interval
    cursor_error_ = s.message();
  }
  return s;
}

Result<size_t> Oplog::RemoveExpiredSegments(int64_t now) {
  std::lock_guard<std::mutex> retention_lock(retention_mu_);
  std::vector<std::string> doomed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (saved_cursors_.empty()) return size_t{0};  // nobody has consumed anything yet
    uint64_t min_cursor = UINT64_MAX;
    for (const auto& [name, seq] : saved_cursors_) min_cursor = std::min(min_cursor, seq);
    // Never the newest segment (it is, or will be, written to); only a prefix of the log.
    for (size_t i = 0; i + 1 < segments_.size(); ++i) {
      const Segment& seg = segments_[i];
      if (seg.last_seq > min_cursor) break;
      if (now - seg.mtime < options_.retention.count()) break;
      doomed.push_back(seg.path);
    }
  }
  size_t removed = 0;
  Status error;
  for (const std::string& path : doomed) {
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      error = ErrnoStatus("delete", path);
      break;
    }
    ++removed;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    segments_.erase(segments_.begin(), segments_.begin() + static_cast<ptrdiff_t>(removed));
  }
  if (!error.ok()) return error;
  return removed;
}

Stats Oplog::GetStats() const {
  Stats stats;
  stats.policy = options_.sync;
  stats.sync_latency = sync_latency_.Snapshot();
  stats.durable_latency = durable_latency_.Snapshot();
  std::lock_guard<std::mutex> lock(mu_);
  stats.segments = segments_.size();
  for (const Segment& seg : segments_) {
    stats.bytes += seg.bytes;
    if (stats.first_seq == 0 && seg.first_seq != 0) stats.first_seq = seg.first_seq;
  }
  stats.last_seq = next_seq_ - 1;
  stats.durable_seq = durable_seq_.load(std::memory_order_relaxed);
  stats.queued_bytes = queue_.size();
  stats.appends = appends_;
  stats.syncs = syncs_;
  stats.failed_records = failed_records_;
  stats.last_error = last_error_;
  stats.cursor_error = cursor_error_;
  stats.damaged = damaged_.message();
  if (preparer_) {
    stats.prepared_segments = preparer_->taken();
    stats.prepare_error = preparer_->last_error();
  }
  for (const auto& [name, seq] : cursors_) {
    auto saved = saved_cursors_.find(name);
    stats.cursors.push_back({name, seq, saved == saved_cursors_.end() ? 0 : saved->second,
                             stats.last_seq - std::min(seq, stats.last_seq)});
  }
  return stats;
}

std::unique_ptr<Reader> Oplog::NewReader() { return std::unique_ptr<Reader>(new Reader(this)); }

bool Oplog::LocateSegment(uint64_t after, Segment* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (segments_.empty()) return false;
  // The last segment named <= after + 1 holds the first record after `after`.
  auto it = std::upper_bound(segments_.begin(), segments_.end(), after + 1,
                             [](uint64_t seq, const Segment& s) { return seq < s.name_seq; });
  *out = it == segments_.begin() ? segments_.front() : *(it - 1);
  return true;
}

bool Oplog::NextSegment(uint64_t name_seq, Segment* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::upper_bound(segments_.begin(), segments_.end(), name_seq,
                             [](uint64_t seq, const Segment& s) { return seq < s.name_seq; });
  if (it == segments_.end()) return false;
  *out = *it;
  return true;
}

bool Oplog::SegmentLimit(uint64_t name_seq, uint64_t* bytes, bool* newest) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::lower_bound(segments_.begin(), segments_.end(), name_seq,
                             [](const Segment& s, uint64_t seq) { return s.name_seq < seq; });
  if (it == segments_.end() || it->name_seq != name_seq) return false;
  *bytes = it->bytes;
  *newest = it + 1 == segments_.end();
  return true;
}

}  // namespace clickatron::oplog
