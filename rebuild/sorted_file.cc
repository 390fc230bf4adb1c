#include "rebuild/sorted_file.h"

#include "base/clip.h"
#include "keyformat/key_order.h"

namespace clickatron::rebuild {

Status SortedFileWriter::Open(const std::string& path, bool with_footer) {
  with_footer_ = with_footer;
  return file_.Open(path, 4 << 20, /*direct=*/true);
}

Status SortedFileWriter::Add(std::string_view key, std::string_view value, uint64_t columns) {
  // Lines gather in pending_ and are hashed and copied on in pieces: one XXH64 call per
  // ~30-byte line was 4 % of an import.
  pending_.append(key).append(1, ',').append(value).append(1, '\n');
  summary_.records++;
  summary_.bytes += key.size() + value.size() + 2;
  summary_.columns += columns;
  return pending_.size() >= kPendingBytes ? FlushPending() : Status::OK();
}

Status SortedFileWriter::AddLines(std::string_view lines, uint64_t records, uint64_t columns) {
  summary_.records += records;
  summary_.bytes += lines.size();
  summary_.columns += columns;
  if (pending_.size() + lines.size() < kPendingBytes) {
    pending_.append(lines);
    return Status::OK();
  }
  if (Status s = FlushPending(); !s.ok()) return s;
  XXH64_update(&state_, lines.data(), lines.size());
  return file_.Append(lines);
}

Status SortedFileWriter::FlushPending() {
  XXH64_update(&state_, pending_.data(), pending_.size());
  Status s = file_.Append(pending_);
  pending_.clear();
  return s;
}

Status SortedFileWriter::Finish() {
  if (Status s = FlushPending(); !s.ok()) return s;
  summary_.xxh64 = XXH64_digest(&state_);
  if (with_footer_) {
    Status s = file_.Append(FormatFooter(Footer{summary_.records, summary_.xxh64}));
    if (!s.ok()) return s;
  }
  return file_.SyncAndClose();
}

Status SegmentReader::Open(const std::string& path, size_t buffer_bytes) {
  path_ = path;
  return status_ = reader_.Open(path, buffer_bytes);
}

bool SegmentReader::Fail(std::string message) {
  status_ = Status::Error("segment " + path_ + " is corrupt: " + message);
  return false;
}

bool SegmentReader::Next(std::string_view* key, std::string_view* value) {
  if (done_ || !status_.ok()) return false;
  std::string_view line;
  if (!reader_.Next(&line)) {
    if (!reader_.status().ok()) {
      status_ = reader_.status();
      return false;
    }
    return Fail("it ends without its #END footer (truncated?)");
  }
  if (IsFooter(line)) {
    done_ = true;
    if (!reader_.has_final_newline()) return Fail("the footer has no final newline (truncated?)");
    if (Status s = check_.Verify(line); !s.ok()) return Fail(s.message());
    std::string_view extra;
    if (reader_.Next(&extra)) return Fail("data after the #END footer");
    if (!reader_.status().ok()) status_ = reader_.status();
    return false;
  }
  if (!reader_.has_final_newline()) return Fail("the last line has no newline (truncated?)");
  check_.AddLineWithNewline(line);
  const size_t comma = line.find(',');
  if (comma == std::string_view::npos || comma == 0) {
    return Fail("line " + std::to_string(reader_.line_number()) + " is not key,value");
  }
  *key = line.substr(0, comma);
  *value = line.substr(comma + 1);
  if (!previous_key_.empty() && CompareKeys(previous_key_, *key) >= 0) {
    return Fail("line " + std::to_string(reader_.line_number()) + ": key '" +
                Clipped(*key, 200) + "' is out of order");
  }
  previous_key_.assign(*key);
  return true;
}

}  // namespace clickatron::rebuild
