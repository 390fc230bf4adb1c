// MemoryRecordWriter: a RecordWriter (sorted_file.h) that keeps what it is given in memory,
// for the unit tests of the stages in front of a file (rollup.h, parallel_rollups.h). Like
// SortedFileWriter's readers it checks the order of keys (an error naming both) and that
// each AddLines() holds as many lines as it says.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "keyformat/key_order.h"
#include "rebuild/sorted_file.h"

namespace clickatron::rebuild {

class MemoryRecordWriter : public RecordWriter {
 public:
  Status Add(std::string_view key, std::string_view value, uint64_t columns) override {
    return AddLines(std::string(key) + "," + std::string(value) + "\n", 1, columns);
  }
  Status AddLines(std::string_view lines, uint64_t records, uint64_t columns) override {
    uint64_t n = 0;
    for (size_t pos = 0; pos < lines.size(); ++n) {
      const size_t nl = lines.find('\n', pos);
      EXPECT_NE(nl, std::string_view::npos);
      const std::string_view key = KeyOfLine(lines.substr(pos, nl - pos));
      if (!last_.empty() && CompareKeys(last_, key) >= 0) {
        return Status::Error("'" + std::string(key) + "' written after '" + last_ + "'");
      }
      last_.assign(key);
      pos = nl + 1;
    }
    EXPECT_EQ(n, records);
    bytes.append(lines);
    this->records += records;
    this->columns += columns;
    return Status::OK();
  }
  std::string bytes;
  uint64_t records = 0, columns = 0;

 private:
  std::string last_;
};

}  // namespace clickatron::rebuild
