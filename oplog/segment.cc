#include "oplog/segment.h"

#include <dirent.h>
#include <errno.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "base/errno_status.h"
#include "base/read_file.h"
#include "oplog/batch.h"
#include "oplog/frame.h"

namespace clickatron::oplog {
namespace {

constexpr std::string_view kPrefix = "seg-";
constexpr std::string_view kSuffix = ".log";
constexpr size_t kDigits = 20;

// Whether a whole, well-ordered record starts anywhere in bytes[from..]. A bad frame with
// such a record after it is damage inside the log, not a write cut short by a crash: a
// crashed append leaves nothing valid behind the point where it stopped.
// Only starts before `end` are tried: a frame cannot start in the zeros after it.
bool WholeRecordFollows(std::string_view bytes, size_t from, size_t end, uint64_t after_seq) {
  Frame frame;
  for (size_t at = from; at < end && at + kHeaderSize < bytes.size(); ++at) {
    if (DecodeLogFrame(bytes.substr(at), &frame) == FrameState::kOk && frame.seq > after_seq) {
      return true;
    }
  }
  return false;
}

// Frames that begin in the bad tail, following lengths while they stay inside it.
uint64_t CountTailFrames(std::string_view tail) {
  uint64_t frames = 0;
  size_t at = 0;
  Frame frame;
  while (at < tail.size()) {
    ++frames;
    FrameState state = DecodeLogFrame(tail.substr(at), &frame);
    if (state == FrameState::kShort || state == FrameState::kBadLength) break;
    at += frame.size;
  }
  return frames;
}

// The offset just past the last non-zero byte at or after `from` (`from` if none).
size_t EndOfNonZero(std::string_view bytes, size_t from) {
  size_t end = bytes.size();
  while (end > from && bytes[end - 1] == 0) --end;
  return end;
}

std::string Where(const SegmentFile& seg, uint64_t offset) {
  return seg.path + " at offset " + std::to_string(offset);
}

}  // namespace

std::string SegmentFileName(uint64_t first_seq) {
  char name[64];
  std::snprintf(name, sizeof name, "seg-%020" PRIu64 ".log", first_seq);
  return name;
}

bool ParseSegmentFileName(std::string_view name, uint64_t* first_seq) {
  if (name.size() != kPrefix.size() + kDigits + kSuffix.size()) return false;
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return false;
  uint64_t v = 0;
  for (char c : name.substr(kPrefix.size(), kDigits)) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *first_seq = v;
  return true;
}

Result<std::vector<SegmentFile>> ListSegments(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus("open directory", dir);
  std::vector<SegmentFile> segments;
  errno = 0;
  while (dirent* e = readdir(d)) {
    uint64_t seq = 0;
    if (ParseSegmentFileName(e->d_name, &seq)) segments.push_back({seq, dir + "/" + e->d_name});
  }
  closedir(d);
  std::sort(segments.begin(), segments.end(),
            [](const SegmentFile& a, const SegmentFile& b) { return a.name_seq < b.name_seq; });
  return segments;
}

namespace {

// The end of a segment at `at`, where no good frame starts: zeros to the end are the
// unwritten rest of a prepared file (padding). Anything else is a bad tail (a write cut
// short, perhaps into such zeros), or damage when whole records after `last` follow it.
Status ReadEnd(const SegmentFile& seg, std::string_view bytes, size_t at, FrameState state,
               const Frame& frame, uint64_t last, SegmentScan* scan) {
  size_t end = EndOfNonZero(bytes, at);
  if (end == at) {
    scan->padding_bytes = bytes.size() - at;
    return Status::OK();
  }
  // The bad frame's own zero bytes are part of the tail, not padding: as far as its
  // length says (to the end of the file when the length itself is cut short).
  size_t extent = 0;
  if (state == FrameState::kShort || state == FrameState::kBadChecksum) {
    extent = frame.size == 0 ? bytes.size() - at : frame.size;  // 0: length itself cut
  }
  end = std::max(end, std::min(bytes.size(), at + extent));
  scan->padding_bytes = bytes.size() - end;
  std::string problem = FrameStateText(state);
  if (frame.seq != 0) problem += " (seq " + std::to_string(frame.seq) + ")";
  if (WholeRecordFollows(bytes, at + 1, end, last)) {
    return Status::Error("oplog segment " + Where(seg, at) + " is corrupt: " + problem +
                         ", and whole records follow it");
  }
  scan->tail_problem = std::move(problem);
  scan->tail_bytes = end - at;
  scan->tail_records = CountTailFrames(bytes.substr(at, end - at));
  return Status::OK();
}

}  // namespace

Result<SegmentScan> ScanSegmentBytes(
    const SegmentFile& seg, std::string_view bytes, uint64_t after_seq,
    const std::function<void(uint64_t seq, std::string_view payload, uint64_t offset)>& visit) {
  SegmentScan scan;
  scan.file_bytes = bytes.size();
  uint64_t last = after_seq;
  size_t at = 0;
  Frame frame;
  std::string body;  // a batch's records
  while (at < bytes.size()) {
    const FrameState state = DecodeLogFrame(bytes.substr(at), &frame);
    if (state != FrameState::kOk) {
      if (Status s = ReadEnd(seg, bytes, at, state, frame, last, &scan); !s.ok()) return s;
      break;
    }
    auto take = [&](uint64_t seq, std::string_view payload) {
      if (seq <= last || seq < seg.name_seq) {
        return Status::Error("oplog segment " + Where(seg, at) + " is corrupt: record seq " +
                             std::to_string(seq) + " is out of order (after seq " +
                             std::to_string(last) + ", segment starts at seq " +
                             std::to_string(seg.name_seq) + ")");
      }
      if (visit) visit(seq, payload, at);
      if (scan.records == 0) scan.first_seq = seq;
      ++scan.records;
      scan.last_seq = last = seq;
      return Status::OK();
    };
    if (frame.batch) {
      // Its checksum held, so a body that does not decode is no torn write: damage (or a
      // writer's bug), never skipped.
      Status unpacked = DecompressBatch(frame.payload, &body);
      BatchReader batch(frame.seq, body);
      if (unpacked.ok()) unpacked = batch.status();
      if (!unpacked.ok()) {
        return Status::Error("oplog segment " + Where(seg, at) + " is corrupt: batch (seq " +
                             std::to_string(frame.seq) + "): " + unpacked.message());
      }
      uint64_t seq = 0;
      std::string_view payload;
      while (batch.Next(&seq, &payload)) {
        if (Status s = take(seq, payload); !s.ok()) return s;
      }
    } else if (Status s = take(frame.seq, frame.payload); !s.ok()) {
      return s;
    }
    at += frame.size;
    scan.valid_bytes = at;
  }
  return scan;
}

Result<SegmentScan> ScanSegment(
    const SegmentFile& seg, uint64_t after_seq,
    const std::function<void(uint64_t seq, std::string_view payload, uint64_t offset)>& visit) {
  std::string bytes;
  if (Status s = ReadFile(seg.path, &bytes); !s.ok()) return s;
  return ScanSegmentBytes(seg, bytes, after_seq, visit);
}

}  // namespace clickatron::oplog
