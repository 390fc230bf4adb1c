#include "rebuild/sorted_file.h"

#include "base/clip.h"
#include "keyformat/key_order.h"

namespace clickatron::rebuild {

Status SortedFileWriter::Open(const std::string& path, bool with_footer) {
  with_footer_ = with_footer;
  return file_.Open(path, 4 << 20, /*direct=*/true);
}

Status SortedFileWriter::Add(std::string_view key, std::string_view value, uint64_t columns) {
  line_.assign(key);
  line_.push_back(',');
  line_.append(value);
  line_.push_back('\n');
  XXH64_update(&state_, line_.data(), line_.size());
  summary_.records++;
  summary_.bytes += line_.size();
  summary_.columns += columns;
  return file_.Append(line_);
}

Status SortedFileWriter::AddLines(std::string_view lines, uint64_t records, uint64_t columns) {
  XXH64_update(&state_, lines.data(), lines.size());
  summary_.records += records;
  summary_.bytes += lines.size();
  summary_.columns += columns;
  return file_.Append(lines);
}

Status SortedFileWriter::Finish() {
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
