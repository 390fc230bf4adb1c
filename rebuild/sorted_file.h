// Sorted record files: the segments of the work directory and the merged archive files.
//
// Both hold `key,value\n` lines in docs/formats.md#key-order key order. A segment ends with the `#END`
// footer (keyformat/footer.h) so a truncated or corrupted segment is found by its checksum
// when it is read; a merged file is a plain docs/formats.md#text-files file (the archive server serves it as
// is) and its checksum goes into the manifest instead. Readers check the order of keys as
// well, which costs one comparison per line and catches a file written by something else.
#pragma once

#define XXH_STATIC_LINKING_ONLY  // XXH64_state_t on the stack, no malloc per hash
#include <xxhash.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "keyformat/footer.h"
#include "rebuild/file.h"

namespace clickatron::rebuild {

// What a finished sorted file holds (the manifest and segment metadata carry these).
struct FileSummary {
  uint64_t records = 0;  // lines, footer excluded
  uint64_t bytes = 0;    // bytes of those lines, footer excluded
  uint64_t xxh64 = 0;    // of those bytes, seed 0
  uint64_t columns = 0;  // data points (columns of total and subtotal lines)
};

// Where sorted records go: a file, or a stage in front of one (rollup.h).
class RecordWriter {
 public:
  virtual ~RecordWriter() = default;
  // Appends `key,value\n`. REQUIRES: key after the previous key; value not empty.
  virtual Status Add(std::string_view key, std::string_view value, uint64_t columns) = 0;
  // Appends whole lines as they are (records of them, with columns data points).
  // REQUIRES: each line as Add() would write it, in order after the last.
  virtual Status AddLines(std::string_view lines, uint64_t records, uint64_t columns) = 0;
  // True for a writer that counts the records and columns it is given itself and ignores
  // the counts passed: the caller may then pass 0 instead of counting them.
  virtual bool counts_columns_itself() const { return false; }
};

class SortedFileWriter : public RecordWriter {
 public:
  SortedFileWriter() { XXH64_reset(&state_, 0); }
  // with_footer: a segment (true) or a merged archive file (false).
  Status Open(const std::string& path, bool with_footer);
  // Appends `key,value\n`. REQUIRES: key after the previous key; value not empty.
  Status Add(std::string_view key, std::string_view value, uint64_t columns = 0) override;
  // Appends whole lines as they are (records of them, with columns data points).
  // REQUIRES: each line as Add() would write it, in order after the last.
  Status AddLines(std::string_view lines, uint64_t records, uint64_t columns) override;
  // Writes the footer (segments), fsyncs, closes.
  Status Finish();
  // The records so far; xxh64 only once Finish() returned.
  const FileSummary& summary() const { return summary_; }
  const std::string& path() const { return file_.path(); }

 private:
  static constexpr size_t kPendingBytes = 64 << 10;
  Status FlushPending();  // pending_ hashed and into the file
  FileWriter file_;
  XXH64_state_t state_;
  bool with_footer_ = false;
  FileSummary summary_;
  std::string pending_;  // lines added, not yet hashed
};

// Reads a segment, checking order as it goes and the footer at the end.
class SegmentReader {
 public:
  // buffer_bytes: how much is read at once (about three times that is held).
  Status Open(const std::string& path, size_t buffer_bytes = 4 << 20);
  // The next record; false at the end (status() OK only if the footer matched) or on error.
  bool Next(std::string_view* key, std::string_view* value);
  const Status& status() const { return status_; }
  const std::string& path() const { return path_; }
  uint64_t bytes_read() const { return reader_.bytes_read(); }

 private:
  bool Fail(std::string message);
  LineReader reader_;
  FooterCheck check_;
  std::string path_;
  std::string previous_key_;
  bool done_ = false;
  Status status_;
};

}  // namespace clickatron::rebuild
