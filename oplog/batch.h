// Compressed batches: the records of one group commit stored as one frame (frame.h, the
// batch bit set), the oplog's format since version 2 (docs/oplog.md#compressed-batches).
//
// The frame's payload is one zstd frame, with its content size, of the batch body:
//
//   body   = record+
//   record = varint seq_delta, varint length, `length` payload bytes
//
// seq_delta is the record's seq minus the one before it in the body (>= 1), and for the
// first record its seq minus the frame's seq (always 0): the frame's header names the first
// record, so recovery, readers and retention see seqs exactly as with a frame per record.
// Varints are LEB128 (7 bits a byte, least significant first, at most 10 bytes). A body is
// 1..kMaxBatchBody bytes; each payload 1..kMaxPayload.
//
// Why zstd level 1: 5.0x on the API's 5 KB demo records where lz4 makes 3.3x, at a rate the
// sync thread keeps above the appends (docs/benchmarks.md#oplog-compression). Small batches
// (under kMinBatchInput bytes of frames) and ones that would not shrink stay frames of one
// record each, so a quiet log or one of tiny records is written as before.
#ifndef CLICKATRON_OPLOG_BATCH_H_
#define CLICKATRON_OPLOG_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::oplog {

inline constexpr size_t kMaxBatchBody = 1u << 20;    // bounds what a reader decompresses
inline constexpr size_t kTargetBatchBody = 256u << 10;  // a group commit is cut into these
inline constexpr size_t kMinBatchInput = 512;        // record frames below this stay as they are
inline constexpr int kBatchLevel = 1;

// Rewrites record frames (AppendFrame's, whole and in seq order, as Oplog::Append queues
// them) as compressed batch frames where that makes them smaller; each batch holds a run of
// consecutive records of at most kTargetBatchBody body bytes (a larger record alone).
// Not thread-safe: one per writing thread (it keeps the zstd context and its buffers).
class BatchEncoder {
 public:
  BatchEncoder();
  ~BatchEncoder();
  BatchEncoder(const BatchEncoder&) = delete;
  BatchEncoder& operator=(const BatchEncoder&) = delete;

  // Replaces *out with the frames of `frames`, compressed.
  void Encode(std::string_view frames, std::string* out);

  // The body of a batch of (seq, payload) records appended one by one; Compress() then
  // appends the frame. For tests and tools that build batches by hand.
  void Add(uint64_t seq, std::string_view payload);
  void Compress(std::string* out);

 private:
  void Flush(std::string_view plain, std::string* out);

  struct Context;
  Context* ctx_;
  std::string body_;
  std::string block_;
  uint64_t first_seq_ = 0, last_seq_ = 0;
};

// Decompresses a batch frame's payload into *body: an error when it is not a zstd frame
// with its content size or decompresses to nothing or more than kMaxBatchBody bytes.
Status DecompressBatch(std::string_view block, std::string* body);

// Walks the records of a batch body (views into it), checking all of it before the first
// record is handed out, so a bad body delivers nothing.
class BatchReader {
 public:
  // An error (see status()) when the body is not well formed: seq deltas, lengths and its
  // end must agree exactly.
  BatchReader(uint64_t first_seq, std::string_view body);
  // False at the end or on an error.
  bool Next(uint64_t* seq, std::string_view* payload);
  const Status& status() const { return status_; }
  size_t records() const { return records_; }
  uint64_t last_seq() const { return last_seq_; }

 private:
  std::string_view body_;
  std::string_view rest_;
  uint64_t seq_ = 0;
  uint64_t last_seq_ = 0;
  size_t records_ = 0;
  bool first_ = true;
  Status status_;
};

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_BATCH_H_
