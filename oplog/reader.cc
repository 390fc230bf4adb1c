#include "oplog/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "base/errno_status.h"
#include "oplog/batch.h"
#include "oplog/frame.h"

namespace clickatron::oplog {
namespace {

constexpr size_t kMinChunk = 64 << 10;
// Frame starts remembered: a sender steps back at most one round (1024 records), which
// spans a few batches or up to 1024 record frames.
constexpr size_t kFrameStartsKept = 2048;

}  // namespace

Reader::~Reader() {
  if (fd_ >= 0) close(fd_);
}

Status Reader::Open(const Oplog::Segment& seg) {
  if (fd_ >= 0) close(fd_);
  fd_ = open(seg.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return ErrnoStatus("open", seg.path);
  name_seq_ = seg.name_seq;
  path_ = seg.path;
  offset_ = 0;
  frame_starts_.clear();
  return Status::OK();
}

Status Reader::Seek(uint64_t after) {
  positioned_ = false;
  Status last;
  // Retention may delete the segment between finding and opening it; find again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    Oplog::Segment seg;
    if (!log_->LocateSegment(after, &seg)) {
      if (fd_ >= 0) close(fd_);
      fd_ = -1;
      return Status::OK();
    }
    if (fd_ >= 0 && seg.name_seq == name_seq_) {
      // The open segment: re-enter at the last remembered frame that starts at or before
      // the first record wanted (records <= after in it are skipped), else at its start.
      auto next = std::upper_bound(frame_starts_.begin(), frame_starts_.end(), after + 1,
                                   [](uint64_t seq, const FrameStart& f) { return seq < f.seq; });
      if (next == frame_starts_.begin()) {
        offset_ = 0;
        frame_starts_.clear();
      } else {
        offset_ = std::prev(next)->offset;
        frame_starts_.erase(next, frame_starts_.end());  // walked again, remembered again
      }
      return Status::OK();
    }
    last = Open(seg);
    if (last.ok() || errno != ENOENT) return last;
  }
  return last;
}

Status Reader::Read(uint64_t after, size_t max_records, size_t max_bytes,
                    std::vector<Record>* out) {
  out->clear();
  if (bodies_.size() > 1) bodies_.erase(bodies_.begin(), bodies_.end() - 1);
  if (!positioned_ || after != position_ || fd_ < 0) {
    if (Status s = Seek(after); !s.ok()) return s;
  }
  while (fd_ >= 0) {
    bool at_end = false;
    bool newest = false;
    if (Status s = ReadSegment(after, max_records, max_bytes, out, &at_end, &newest); !s.ok()) {
      positioned_ = false;
      return s;
    }
    if (!out->empty() || !at_end || newest) break;
    // The segment is complete and used up: go on to the next one.
    Oplog::Segment next;
    if (!log_->NextSegment(name_seq_, &next)) break;
    if (Status s = Open(next); !s.ok()) {
      positioned_ = false;
      return s;
    }
  }
  position_ = out->empty() ? after : out->back().seq;
  positioned_ = fd_ >= 0;
  return Status::OK();
}

Status Reader::Damaged(const std::string& what) const {
  return Status::Error("oplog segment " + path_ + " at offset " + std::to_string(offset_) +
                       " is damaged: " + what);
}

Status Reader::BatchBody(const Frame& frame, std::string_view* body) {
  if (!bodies_.empty() && bodies_.back().name_seq == name_seq_ &&
      bodies_.back().offset == offset_) {
    *body = bodies_.back().bytes;
    return Status::OK();
  }
  bodies_.push_back(Body{name_seq_, offset_, {}});
  if (Status s = DecompressBatch(frame.payload, &bodies_.back().bytes); !s.ok()) {
    bodies_.pop_back();
    return Damaged(s.message());
  }
  ++batches_decompressed_;
  *body = bodies_.back().bytes;
  return Status::OK();
}

// buf_ = the chunk bytes of the segment at offset_, which has limit readable bytes.
Status Reader::ReadChunk(size_t chunk, uint64_t limit) {
  buf_.resize(chunk);
  size_t got = 0;
  while (got < chunk) {
    const ssize_t n = pread(fd_, buf_.data() + got, chunk - got, static_cast<off_t>(offset_ + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("read", path_);
    if (n == 0) {
      return Status::Error("oplog segment " + path_ + " is shorter than its " +
                           std::to_string(limit) + " readable bytes");
    }
    got += static_cast<size_t>(n);
  }
  return Status::OK();
}

Status Reader::ReadSegment(uint64_t after, size_t max_records, size_t max_bytes,
                           std::vector<Record>* out, bool* at_end, bool* newest) {
  uint64_t limit = 0;
  if (!log_->SegmentLimit(name_seq_, &limit, newest)) {
    // Deleted by retention after we opened it: it was complete, all of it is readable.
    struct stat st;
    if (fstat(fd_, &st) != 0) return ErrnoStatus("stat", path_);
    limit = static_cast<uint64_t>(st.st_size);
    *newest = false;
  }
  size_t payload_bytes = 0;
  size_t want = std::max(kMinChunk, std::min<size_t>(max_bytes, kMaxPayload) + kHeaderSize);
  // Views handed out point into buf_, so buf_ is refilled only while *out is empty.
  while (offset_ < limit && out->empty()) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(limit - offset_, want));
    if (Status s = ReadChunk(chunk, limit); !s.ok()) return s;
    std::string_view bytes(buf_.data(), chunk);
    Frame frame;
    while (!bytes.empty()) {
      const FrameState state = DecodeLogFrame(bytes, &frame);
      if (state == FrameState::kShort && offset_ + (frame.size ? frame.size : kHeaderSize) <= limit) {
        // The frame runs past this chunk: read it whole next time round (if out is empty).
        want = std::max(want, frame.size ? frame.size : kHeaderSize);
        break;
      }
      if (state != FrameState::kOk) return Damaged(FrameStateText(state));
      if (frame_starts_.empty() || frame_starts_.back().offset < offset_) {
        frame_starts_.push_back({frame.seq, offset_});
        if (frame_starts_.size() > kFrameStartsKept) frame_starts_.pop_front();
      }
      if (frame.batch) {
        std::string_view body;
        if (Status s = BatchBody(frame, &body); !s.ok()) return s;
        BatchReader batch(frame.seq, body);
        if (!batch.status().ok()) return Damaged(batch.status().message());
        uint64_t seq = 0;
        std::string_view payload;
        while (batch.Next(&seq, &payload)) {
          if (seq <= after) continue;
          // Stopping inside the batch leaves offset_ on it; the next Read skips what it gave.
          if (out->size() >= max_records) return Status::OK();
          if (!out->empty() && payload_bytes + payload.size() > max_bytes) return Status::OK();
          out->push_back({seq, payload});
          payload_bytes += payload.size();
        }
      } else if (frame.seq > after) {
        if (out->size() >= max_records) return Status::OK();
        if (!out->empty() && payload_bytes + frame.payload.size() > max_bytes) return Status::OK();
        out->push_back({frame.seq, frame.payload});
        payload_bytes += frame.payload.size();
      }
      offset_ += frame.size;
      bytes.remove_prefix(frame.size);
    }
  }
  *at_end = offset_ >= limit;
  return Status::OK();
}

}  // namespace clickatron::oplog
