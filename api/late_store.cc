#include "api/late_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "base/durable_file.h"
#include "base/errno_status.h"
#include "keyformat/ymdh.h"
#include "oplog/frame.h"

namespace clickatron {
namespace {

constexpr std::string_view kEntryWord = "late-entry";
constexpr std::string_view kStateWord = "late-state";
constexpr size_t kCopyBytes = 1u << 20;  // chunk of a rewrite's copy

Status PreadAll(int fd, char* buf, size_t n, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, buf + done, n - done, off_t(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read", path);
    }
    if (r == 0) return Status::Error("read " + path + ": unexpected end of file at offset " +
                                     std::to_string(offset + done));
    done += size_t(r);
  }
  return Status::OK();
}

Status PwriteAll(int fd, std::string_view bytes, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::pwrite(fd, bytes.data() + done, bytes.size() - done, off_t(offset + done));
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path);
    }
    done += size_t(w);
  }
  return Status::OK();
}

bool ParseU64(std::string_view text, uint64_t* out) {
  if (text.empty()) return false;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && p == text.data() + text.size();
}

// Splits "name=value" words of a header line in order; false when a word is not `name=`.
bool ReadFields(std::string_view line, std::initializer_list<std::string_view> names,
                std::vector<std::string_view>* values) {
  values->clear();
  for (std::string_view name : names) {
    const size_t sp = line.find(' ');
    const std::string_view word = line.substr(0, sp);
    line = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
    if (word.size() <= name.size() || !word.starts_with(name) || word[name.size()] != '=') return false;
    values->push_back(word.substr(name.size() + 1));
  }
  return line.empty();
}

// The byte length of the first `lines` lines of text, or npos when it has fewer.
size_t LinesPrefix(std::string_view text, uint64_t lines) {
  size_t at = 0;
  for (uint64_t i = 0; i < lines; i++) {
    const size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) return std::string_view::npos;
    at = nl + 1;
  }
  return at;
}

uint64_t CountLines(std::string_view text) { return uint64_t(std::count(text.begin(), text.end(), '\n')); }

// The entry payload, parsed. Errors say what is wrong with it.
Status ParseEntry(std::string_view payload, LatePart* part) {
  const size_t nl = payload.find('\n');
  if (nl == std::string_view::npos) return Status::Error("entry without a header line");
  std::string_view header = payload.substr(0, nl);
  if (!header.starts_with(kEntryWord) || header.size() <= kEntryWord.size() ||
      header[kEntryWord.size()] != ' ') {
    return Status::Error("entry header '" + std::string(header.substr(0, 80)) + "' is not '" +
                         std::string(kEntryWord) + " ...'");
  }
  std::vector<std::string_view> v;
  uint64_t shard = 0, lookups = 0, counters = 0;
  if (!ReadFields(header.substr(kEntryWord.size() + 1), {"shard", "day", "seq", "records", "lookups", "counters"},
                  &v) ||
      !ParseU64(v[0], &shard) || shard > UINT32_MAX || !ParseU64(v[2], &part->seq) || part->seq == 0 ||
      !ParseU64(v[3], &part->records) || !ParseU64(v[4], &lookups) || !ParseU64(v[5], &counters)) {
    return Status::Error("entry header '" + std::string(header.substr(0, 200)) + "' does not parse");
  }
  Result<int64_t> day = ParseDay(v[1]);
  if (!day.ok()) return day.status().Prefixed("entry header: ");
  part->shard = uint32_t(shard);
  part->day = *day;
  const std::string_view body = payload.substr(nl + 1);
  const size_t split = LinesPrefix(body, lookups);
  if (split == std::string_view::npos || CountLines(body.substr(split)) != counters ||
      (body.size() > split && body.back() != '\n')) {
    return Status::Error("entry body does not hold " + std::to_string(lookups) + " lookup and " +
                         std::to_string(counters) + " counter lines");
  }
  part->lookups = body.substr(0, split);
  part->counters = body.substr(split);
  return Status::OK();
}

std::string EntryPayload(const LatePart& part) {
  std::string out;
  out.reserve(96 + part.lookups.size() + part.counters.size());
  out += kEntryWord;
  out += " shard=" + std::to_string(part.shard) + " day=" + FormatDay(part.day) +
         " seq=" + std::to_string(part.seq) + " records=" + std::to_string(part.records) +
         " lookups=" + std::to_string(CountLines(part.lookups)) +
         " counters=" + std::to_string(CountLines(part.counters)) + "\n";
  out += part.lookups;
  out += part.counters;
  return out;
}

}  // namespace

Result<std::unique_ptr<LateStore>> LateStore::Open(const std::string& dir, uint64_t first_id) {
  const std::string path = dir + "/" + kFileName;
  // A rewrite that did not reach its rename: the old file is whole, the copy is not needed.
  const std::string tmp = path + ".tmp";
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("remove", tmp);
  const bool existed = ::access(path.c_str(), F_OK) == 0;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open", path);
  std::unique_ptr<LateStore> store(new LateStore(dir, fd));
  if (!existed) {
    if (Status s = SyncDir(dir); !s.ok()) return s;
  }
  if (Status s = store->Recover(); !s.ok()) return s;
  if (store->size_ == 0 && first_id > 1) {
    // A new store (or one whose first write a crash cut): its first id is kept in a state
    // frame at once (a rewrite that drops nothing).
    store->next_id_ = first_id;
    if (Status s = store->Rewrite(0, 0); !s.ok()) return s;
  }
  return store;
}

LateStore::LateStore(std::string dir, int fd) : dir_(std::move(dir)), path_(dir_ + "/" + kFileName), fd_(fd) {}

LateStore::~LateStore() {
  if (fd_ >= 0) ::close(fd_);
}

Status LateStore::Recover() {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return ErrnoStatus("stat", path_);
  const uint64_t file_size = uint64_t(st.st_size);
  std::string buf;
  uint64_t offset = 0;
  while (offset < file_size) {
    const uint64_t left = file_size - offset;
    oplog::Frame frame;
    oplog::FrameState state = oplog::FrameState::kShort;
    if (left >= oplog::kHeaderSize) {
      buf.resize(oplog::kHeaderSize);
      if (Status s = PreadAll(fd_, buf.data(), buf.size(), offset, path_); !s.ok()) return s;
      state = oplog::DecodeFrame(buf, &frame);
      if (state == oplog::FrameState::kShort && frame.size != 0 && frame.size <= left) {
        buf.resize(frame.size);
        if (Status s = PreadAll(fd_, buf.data(), buf.size(), offset, path_); !s.ok()) return s;
        state = oplog::DecodeFrame(buf, &frame);
      }
    }
    if (state == oplog::FrameState::kOk) {
      if (Status s = LoadFrame(offset, frame.seq, frame.payload, offset == 0); !s.ok()) {
        return s.Prefixed(path_ + " at offset " + std::to_string(offset) + ": ");
      }
      offset += frame.size;
      continue;
    }
    // A bad frame. The tail of an append the process did not finish, if nothing whole
    // follows it (an append is one frame, so such a tail is at most one frame long);
    // otherwise damage, which is not repaired by cutting.
    const std::string why = oplog::FrameStateText(state);
    const std::string where = path_ + ": " + why + " at offset " + std::to_string(offset);
    if (left > oplog::kHeaderSize + oplog::kMaxPayload) {
      return Status::Error(where + " with " + std::to_string(left) +
                           " bytes after it: damaged, not a torn append (move the file away to start)");
    }
    buf.resize(size_t(left));
    if (Status s = PreadAll(fd_, buf.data(), buf.size(), offset, path_); !s.ok()) return s;
    for (size_t at = 1; at + oplog::kHeaderSize < buf.size(); at++) {
      oplog::Frame later;
      if (oplog::DecodeFrame(std::string_view(buf).substr(at), &later) == oplog::FrameState::kOk) {
        return Status::Error(where + ", with a whole frame at offset " + std::to_string(offset + at) +
                             " after it: damaged, not a torn append (move the file away to start)");
      }
    }
    if (::ftruncate(fd_, off_t(offset)) != 0) return ErrnoStatus("truncate", path_);
    if (::fdatasync(fd_) != 0) return ErrnoStatus("fdatasync", path_);
    recovery_ = "cut a torn tail of " + std::to_string(left) + " bytes at offset " + std::to_string(offset) +
                " (" + why + ")";
    break;
  }
  size_ = offset;
  return Status::OK();
}

Status LateStore::LoadFrame(uint64_t offset, uint64_t id, std::string_view payload, bool first) {
  if (payload.starts_with(kStateWord)) {
    if (!first) return Status::Error("a state frame that is not the first frame");
    const size_t nl = payload.find('\n');
    const std::string_view header = payload.substr(0, nl);
    std::vector<std::string_view> v;
    uint64_t marks = 0;
    if (nl == std::string_view::npos || header.size() <= kStateWord.size() ||
        header[kStateWord.size()] != ' ' ||
        !ReadFields(header.substr(kStateWord.size() + 1), {"next_id", "released_through", "marks"}, &v) ||
        !ParseU64(v[0], &next_id_) || next_id_ != id || !ParseU64(v[1], &released_through_) ||
        !ParseU64(v[2], &marks)) {
      return Status::Error("state header '" + std::string(header.substr(0, 200)) + "' does not parse");
    }
    std::string_view rest = payload.substr(nl + 1);
    for (uint64_t i = 0; i < marks; i++) {
      const size_t end = rest.find('\n');
      const std::string_view line = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      const size_t a = line.find(' ');
      const size_t b = a == std::string_view::npos ? a : line.find(' ', a + 1);
      uint64_t shard = 0, seq = 0;
      Result<int64_t> day = b == std::string_view::npos ? Result<int64_t>(Status::Error("no day"))
                                                        : ParseDay(line.substr(a + 1, b - a - 1));
      if (end == std::string_view::npos || !day.ok() || !ParseU64(line.substr(0, a), &shard) ||
          shard > UINT32_MAX || !ParseU64(line.substr(b + 1), &seq)) {
        return Status::Error("state mark '" + std::string(line.substr(0, 200)) + "' does not parse");
      }
      uint64_t& mark = marks_[{uint32_t(shard), *day}];
      mark = std::max(mark, seq);
    }
    if (!rest.empty()) return Status::Error("state frame has bytes after its " + std::to_string(marks) + " marks");
    return Status::OK();
  }
  LatePart part;
  if (Status s = ParseEntry(payload, &part); !s.ok()) return s;
  if (!index_.empty() && id <= index_.back().id) {
    return Status::Error("entry id " + std::to_string(id) + " after id " + std::to_string(index_.back().id));
  }
  const Index index{id, offset, uint32_t(oplog::kHeaderSize + payload.size()),
                    uint32_t(CountLines(part.lookups) + CountLines(part.counters)), part.day};
  AddPending(index);
  uint64_t& mark = marks_[{part.shard, part.day}];
  mark = std::max(mark, part.seq);
  next_id_ = std::max(next_id_, id + 1);
  return Status::OK();
}

void LateStore::AddPending(const Index& index) {
  index_.push_back(index);
  pending_days_[index.day]++;
  pending_lines_ += index.lines;
}

uint64_t LateStore::Mark(uint32_t shard, int64_t day) const {
  auto it = marks_.find({shard, day});
  return it == marks_.end() ? 0 : it->second;
}

Result<uint64_t> LateStore::Append(const LatePart& part) {
  if ((!part.lookups.empty() && part.lookups.back() != '\n') ||
      (!part.counters.empty() && part.counters.back() != '\n') || part.seq == 0) {
    return Status::Error("late part: seq 0 or lines without their final newline");
  }
  if (part.seq <= Mark(part.shard, part.day)) {
    duplicate_parts_++;
    return uint64_t{0};
  }
  const std::string payload = EntryPayload(part);
  if (payload.size() > oplog::kMaxPayload) {
    return Status::Error("late part of " + std::to_string(payload.size()) + " bytes is over the frame limit of " +
                         std::to_string(oplog::kMaxPayload));
  }
  const uint64_t id = next_id_;
  std::string frame;
  oplog::AppendFrame(id, payload, &frame);
  Status s = PwriteAll(fd_, frame, size_, path_);
  if (s.ok() && ::fdatasync(fd_) != 0) s = ErrnoStatus("fdatasync", path_);
  if (!s.ok()) {
    // Nothing of it may count: the next append overwrites these bytes, and a crash before
    // that leaves them as a tail that Open cuts (they cannot be a whole, synced frame).
    if (::ftruncate(fd_, off_t(size_)) != 0) {
      // Reported with the write's error; the bytes are overwritten by the next append.
    }
    return s;
  }
  AddPending(Index{id, size_, uint32_t(frame.size()),
                   uint32_t(CountLines(part.lookups) + CountLines(part.counters)), part.day});
  size_ += frame.size();
  next_id_ = id + 1;
  marks_[{part.shard, part.day}] = part.seq;
  appended_++;
  return id;
}

Status LateStore::ReadAfter(uint64_t after, size_t max_bytes,
                            const std::function<Status(const LateEntry&)>& visit, bool* more) const {
  *more = false;
  auto it = std::upper_bound(index_.begin(), index_.end(), after,
                             [](uint64_t id, const Index& e) { return id < e.id; });
  size_t bytes = 0;
  std::string buf;
  for (; it != index_.end(); ++it) {
    if (bytes > 0 && bytes + it->frame_bytes > max_bytes) {
      *more = true;
      return Status::OK();
    }
    bytes += it->frame_bytes;
    buf.resize(it->frame_bytes);
    if (Status s = PreadAll(fd_, buf.data(), buf.size(), it->offset, path_); !s.ok()) return s;
    oplog::Frame frame;
    const oplog::FrameState state = oplog::DecodeFrame(buf, &frame);
    const std::string where = path_ + ": late entry " + std::to_string(it->id) + " at offset " +
                              std::to_string(it->offset);
    if (state != oplog::FrameState::kOk) return Status::Error(where + ": " + oplog::FrameStateText(state));
    if (frame.seq != it->id) return Status::Error(where + ": the frame holds id " + std::to_string(frame.seq));
    LateEntry entry;
    entry.id = it->id;
    if (Status s = ParseEntry(frame.payload, &entry.part); !s.ok()) return s.Prefixed(where + ": ");
    if (Status s = visit(entry); !s.ok()) return s;
  }
  return Status::OK();
}

Result<LateRelease> LateStore::ReleaseThrough(uint64_t through) {
  const size_t drop = size_t(std::upper_bound(index_.begin(), index_.end(), through,
                                              [](uint64_t id, const Index& e) { return id < e.id; }) -
                             index_.begin());
  if (drop > 0) {
    if (Status s = Rewrite(drop, through); !s.ok()) return s;
  }
  LateRelease r;
  r.released_entries = drop;
  r.entries = index_.size();
  return r;
}

Status LateStore::Rewrite(size_t drop, uint64_t through) {
  // The state first: ids, the release point and the marks worth keeping.
  // (And those of days still pending, which a reopen would find in their entries anyway.)
  int64_t newest = INT64_MIN;
  for (const auto& [key, seq] : marks_) newest = std::max(newest, key.second);
  int64_t oldest_kept = INT64_MAX;
  for (size_t i = drop; i < index_.size(); i++) oldest_kept = std::min(oldest_kept, index_[i].day);
  std::map<std::pair<uint32_t, int64_t>, uint64_t> kept;
  for (const auto& [key, seq] : marks_) {
    if (key.second >= std::min(newest - kMarkDays, oldest_kept)) kept.emplace(key, seq);
  }
  const uint64_t released = std::max(released_through_, through);
  std::string payload = std::string(kStateWord) + " next_id=" + std::to_string(next_id_) +
                        " released_through=" + std::to_string(released) + " marks=" + std::to_string(kept.size()) +
                        "\n";
  for (const auto& [key, seq] : kept) {
    payload += std::to_string(key.first) + " " + FormatDay(key.second) + " " + std::to_string(seq) + "\n";
  }
  if (payload.size() > oplog::kMaxPayload) return Status::Error("late store state of " +
                                                                std::to_string(payload.size()) + " bytes is too big");
  std::string head;
  oplog::AppendFrame(next_id_, payload, &head);

  const uint64_t from = drop < index_.size() ? index_[drop].offset : size_;
  Status s = WriteFileAtomicWith(path_, [&](int out, const std::string& tmp) {
    Status w = WriteAll(out, head, tmp);
    std::string buf;
    for (uint64_t at = from; w.ok() && at < size_;) {
      buf.resize(size_t(std::min<uint64_t>(kCopyBytes, size_ - at)));
      w = PreadAll(fd_, buf.data(), buf.size(), at, path_);
      if (w.ok()) w = WriteAll(out, buf, tmp);
      at += buf.size();
    }
    return w;
  });
  if (!s.ok()) return s;
  // The new file is in place: point the store at it.
  const int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", path_);
  ::close(fd_);
  fd_ = fd;
  for (size_t i = 0; i < drop; i++) {
    auto day = pending_days_.find(index_[i].day);
    if (--day->second == 0) pending_days_.erase(day);
    pending_lines_ -= index_[i].lines;
  }
  index_.erase(index_.begin(), index_.begin() + ptrdiff_t(drop));
  for (Index& e : index_) e.offset = e.offset - from + head.size();
  size_ = size_ - from + head.size();
  marks_ = std::move(kept);
  released_through_ = released;
  return Status::OK();
}

LateStoreStats LateStore::Stats() const {
  LateStoreStats s;
  s.entries = index_.size();
  s.lines = pending_lines_;
  s.bytes = size_;
  s.oldest_pending_day = pending_days_.empty() ? -1 : pending_days_.begin()->first;
  s.first_id = index_.empty() ? 0 : index_.front().id;
  s.last_id = next_id_ - 1;
  s.released_through = released_through_;
  s.appended = appended_;
  s.duplicate_parts = duplicate_parts_;
  return s;
}

}  // namespace clickatron
