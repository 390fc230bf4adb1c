// Segment files: their names, listing them, and checking every frame of one.
//
// A segment is named after the sequence number it was opened for, zero-padded so that
// name order is seq order: "seg-00000000000000000001.log". Every record in a segment has
// seq >= its name's seq and < the next segment's name's seq, so the segment holding a seq
// is the last one whose name is <= it. Other files in the oplog directory (cursors, LOCK,
// files the API keeps there) are never touched by the segment code.
#ifndef CLICKATRON_OPLOG_SEGMENT_H_
#define CLICKATRON_OPLOG_SEGMENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace clickatron::oplog {

std::string SegmentFileName(uint64_t first_seq);
// True when name is a segment file name; sets *first_seq.
bool ParseSegmentFileName(std::string_view name, uint64_t* first_seq);

struct SegmentFile {
  uint64_t name_seq = 0;  // the seq in the file name
  std::string path;
};

// Every segment file of dir, in seq order.
Result<std::vector<SegmentFile>> ListSegments(const std::string& dir);

// What ScanSegment found in one file.
struct SegmentScan {
  uint64_t records = 0;
  uint64_t first_seq = 0;     // of the first whole record; 0 when none
  uint64_t last_seq = 0;      // of the last whole record; 0 when none
  uint64_t valid_bytes = 0;   // the whole-record prefix of the file
  uint64_t file_bytes = 0;
  // Zero bytes at the end of the file, after the records (and after a bad tail): the rest
  // of a segment file prepared ahead of time (prepared_segment.h), not damage.
  uint64_t padding_bytes = 0;
  // When tail_problem is set, the tail_bytes after valid_bytes (before any padding) are a
  // bad tail: a frame cut short or failing its checksum with no whole record after it.
  // Frames (whole or partial) that begin in the bad tail, >= 1, found by following the
  // lengths written there (so a damaged length can make it more than the records lost).
  uint64_t tail_bytes = 0;
  uint64_t tail_records = 0;
  std::string tail_problem;   // e.g. "bad checksum (seq 17)"; "" when there is no bad tail
};

// Reads seg and checks every frame, calling visit(seq, payload, offset) for each whole
// record in order (the records of a compressed batch, batch.h, all with the batch frame's
// offset; a batch whose checksum holds but whose body does not decode is corruption).
// after_seq is the last seq of the log before this segment: each record
// must be greater than the one before it (and than after_seq) and not below the name's seq.
//
// Returns an error naming the file and the offset for corruption before the tail: a bad
// frame followed by a whole record, or a whole record out of order. A bad tail is not an
// error here (nor is padding); the caller decides (recovery cuts it off the last segment, and refuses it
// anywhere else).
Result<SegmentScan> ScanSegment(
    const SegmentFile& seg, uint64_t after_seq,
    const std::function<void(uint64_t seq, std::string_view payload, uint64_t offset)>& visit);

// The same check over bytes already in memory (the file's contents); path names it in errors.
Result<SegmentScan> ScanSegmentBytes(
    const SegmentFile& seg, std::string_view bytes, uint64_t after_seq,
    const std::function<void(uint64_t seq, std::string_view payload, uint64_t offset)>& visit);

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_SEGMENT_H_
