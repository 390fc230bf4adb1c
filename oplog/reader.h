// Reader: hands one consumer (a realtime shard's delivery) the records of an Oplog in seq
// order, in batches, up to what is readable (durable; under `none`, written).
//
// Made to be called often from the API's event loop: it keeps its segment file open and
// its place in it, so reading on from where the last batch ended is one pread and a walk
// over the frames, with no search and no file opened. Asking for another position (a
// consumer that restarts from its cursor) finds the segment by name and walks to it.
// A compressed batch (batch.h) that a Read hands out only in part is decompressed once: the
// next Read goes on in the body it kept. A consumer that steps back a little (the API's
// sender asks again from its cursor when a round ended before the last record it was
// handed) re-enters at the start of the frame that holds its position, remembered from the
// recent walk, never at the start of the segment: a 64 MiB segment of batches would be
// decompressed again from the top on every such step.
//
// Threading: one thread at a time per Reader; several Readers may run at once beside the
// Oplog's writer. REQUIRES: the Oplog outlives its Readers.
#ifndef CLICKATRON_OPLOG_READER_H_
#define CLICKATRON_OPLOG_READER_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "oplog/frame.h"
#include "oplog/oplog.h"

namespace clickatron::oplog {

class Reader {
 public:
  struct Record {
    uint64_t seq;
    std::string_view payload;  // valid until the next Read or the Reader's destruction
  };

  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Fills *out (cleared first) with the readable records whose seq > after, in order: at
  // most max_records, and no more payload bytes than max_bytes unless the first record
  // alone is larger (a batch is never empty while a record is readable). An empty *out
  // means the consumer is caught up. Records deleted by retention are skipped over.
  // An error names a damaged frame's file and offset, or a failed read.
  // REQUIRES: max_records >= 1.
  Status Read(uint64_t after, size_t max_records, size_t max_bytes, std::vector<Record>* out);

  // Batch bodies decompressed so far: what reading has cost (tests pin it).
  uint64_t batches_decompressed() const { return batches_decompressed_; }

 private:
  friend class Oplog;
  explicit Reader(Oplog* log) : log_(log) {}

  Status Open(const Oplog::Segment& seg);
  Status Seek(uint64_t after);
  // Reads records from the open segment into *out; sets *at_end when it has no more
  // readable bytes and *newest when more may still be written to it.
  Status ReadSegment(uint64_t after, size_t max_records, size_t max_bytes,
                     std::vector<Record>* out, bool* at_end, bool* newest);
  Status ReadChunk(size_t chunk, uint64_t limit);  // buf_ = chunk bytes at offset_
  // The decompressed body of the batch frame at offset_ (kept in bodies_).
  Status BatchBody(const Frame& frame, std::string_view* body);
  // "oplog segment PATH at offset N is damaged: what"
  Status Damaged(const std::string& what) const;

  Oplog* const log_;
  int fd_ = -1;
  uint64_t name_seq_ = 0;  // of the open segment
  std::string path_;
  uint64_t offset_ = 0;    // of the next frame to read in the open segment
  // Starts of the frames walked most recently in the open segment (first seq, offset), in
  // order, at most kFrameStartsKept: where a step back re-enters (see above).
  struct FrameStart {
    uint64_t seq = 0;
    uint64_t offset = 0;
  };
  std::deque<FrameStart> frame_starts_;
  uint64_t batches_decompressed_ = 0;
  uint64_t position_ = 0;  // every record <= position_ lies before offset_ (or in the batch there)
  bool positioned_ = false;
  std::string buf_;
  // The batch bodies the last Read decompressed (its records point into them), the last of
  // which the next Read reuses when it starts in that batch.
  struct Body {
    uint64_t name_seq = 0;
    uint64_t offset = 0;
    std::string bytes;
  };
  std::deque<Body> bodies_;
};

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_READER_H_
