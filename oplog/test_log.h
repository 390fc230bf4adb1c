// Test helpers for a log on disk: reading a whole log back through a Reader, a small real
// filesystem, and options for plain (appended) segments. The scratch directory is
// base/test_dir.h. Only *_test.cc include this.
#ifndef CLICKATRON_OPLOG_TEST_LOG_H_
#define CLICKATRON_OPLOG_TEST_LOG_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/test_dir.h"
#include "oplog/oplog.h"
#include "oplog/reader.h"

namespace clickatron::oplog {

// Every readable record after `after`, as (seq, payload) pairs, read in batches of at
// most `batch` records.
inline std::vector<std::pair<uint64_t, std::string>> ReadAll(Oplog& log, uint64_t after = 0,
                                                              size_t batch = 7) {
  std::vector<std::pair<uint64_t, std::string>> all;
  std::unique_ptr<Reader> reader = log.NewReader();
  std::vector<Reader::Record> records;
  for (;;) {
    Status s = reader->Read(after, batch, 1 << 20, &records);
    EXPECT_TRUE(s.ok()) << s.message();
    if (!s.ok() || records.empty()) break;
    for (const Reader::Record& r : records) all.emplace_back(r.seq, std::string(r.payload));
    after = records.back().seq;
  }
  return all;
}

// Replaces the file at path with bytes (a hand-made segment).
inline void WriteBytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A tmpfs of `size` bytes ("256k", "1m") mounted at `path` for one test, so the log can
// meet a real full filesystem; unmounted when destroyed. error() says why mounting failed
// (not permitted here: the test skips).
class SmallFilesystem {
 public:
  SmallFilesystem(const std::string& path, const std::string& size) : path_(path) {
    std::filesystem::create_directory(path);
    if (mount("tmpfs", path.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0) {
      error_ = std::strerror(errno);
    }
  }
  ~SmallFilesystem() {
    if (error_.empty()) umount2(path_.c_str(), MNT_DETACH);
  }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  std::string error_;
};

// Options whose segments grow by appending, for tests that pin down the exact files the
// log writes; a prepared segment (the default) is trimmed only when it is closed, and the
// first one replaces a plain segment whenever its preparation happens to finish.
inline Options PlainSegments(Options o = {}) {
  o.prepare_segments = false;
  return o;
}

// The sorted names of the segment files in dir.
inline std::vector<std::string> SegmentNames(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("seg-")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_TEST_LOG_H_
