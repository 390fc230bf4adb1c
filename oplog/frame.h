// The oplog frame: how records are laid out in a segment file.
//
// A segment file is a plain concatenation of frames, no file header; only the newest may
// end in zeros (the unused rest of a prepared file, prepared_segment.h). Zeros are never a
// frame: a length of 0 is impossible. A frame holds one record, or (format version 2) a
// compressed batch of records (batch.h):
//
//   offset 0   u32  length    bit 31: 0 one record, 1 a compressed batch;
//                             bits 0..30: payload bytes, 1..kMaxPayload
//          4   u64  seq       the record's seq (a batch: its first record's), > every seq
//                             before it in the log
//         12   u64  checksum  XXH64(payload, seed = seq); a batch: seed = ~seq (bitwise
//                             not), so a flipped batch bit fails the checksum too
//         20        payload   a record: `length` opaque bytes; a batch: a zstd frame
//
// Version 1 logs hold record frames only (bit 31 was never set: a length is at most
// kMaxPayload = 2^24), so every old segment reads as it always did; a build from before
// batches meets a batch frame as an impossible length and refuses it, never misreads it.

// All integers are little-endian. The checksum is xxHash64 of the payload seeded with the
// record's seq, so a flipped bit in the seq is caught as surely as one in the payload; a
// flipped bit in the length makes the checksum cover other bytes and fails too (or makes
// the frame run past the end of the file, which recovery tells apart from a torn write by
// looking for a whole record after it). docs/oplog.md has the long explanation.
#ifndef CLICKATRON_OPLOG_FRAME_H_
#define CLICKATRON_OPLOG_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace clickatron::oplog {

inline constexpr size_t kHeaderSize = 4 + 8 + 8;  // length, seq, checksum
inline constexpr uint32_t kMaxPayload = 16u << 20;  // bounds a frame a reader must buffer

inline constexpr uint32_t kBatchBit = 1u << 31;

// Appends the frame of (seq, payload) to *out.
// REQUIRES: 1 <= payload.size() <= kMaxPayload, seq >= 1.
void AppendFrame(uint64_t seq, std::string_view payload, std::string* out);

// Appends a batch frame whose first record is first_seq; block is the compressed body.
// REQUIRES: 1 <= block.size() <= kMaxPayload, first_seq >= 1.
void AppendBatchFrame(uint64_t first_seq, std::string_view block, std::string* out);

uint64_t PayloadChecksum(uint64_t seq, std::string_view payload);

enum class FrameState {
  kOk,           // a whole frame with a good checksum
  kShort,        // the bytes end before the frame does (a header or payload cut short)
  kBadLength,    // length is 0 or above kMaxPayload (or a batch where only records may be)
  kBadChecksum,  // the payload does not match its checksum
};

struct Frame {
  uint64_t seq = 0;
  std::string_view payload;  // a view into the decoded bytes
  size_t size = 0;           // kHeaderSize + payload.size()
  bool batch = false;        // payload is a compressed batch (batch.h)
};

// Decodes the record frame at the start of `bytes`. On kOk fills *frame; on kShort and
// kBadChecksum fills frame->seq and frame->size from the header as far as it was read.
// A batch frame is kBadLength: for files of single records (the late store).
FrameState DecodeFrame(std::string_view bytes, Frame* frame);

// The same for a segment's frames: a record or a batch (frame->batch).
FrameState DecodeLogFrame(std::string_view bytes, Frame* frame);

// A short phrase for a bad state: "bad checksum", "frame cut short", ...
const char* FrameStateText(FrameState state);

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_FRAME_H_
