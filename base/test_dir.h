// TestDir: a fresh directory under the system's temp directory for one unit test, removed
// with everything in it when the test ends. Only *_test.cc include this.
//
//   TestDir dir;
//   std::string meta = dir.Write("meta", "count=3\n");   // dir.path() + "/meta"
//   Oplog::Open(dir / "log", ...);
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace clickatron {

class TestDir {
 public:
  TestDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "clickatron-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
    EXPECT_FALSE(path_.empty()) << "mkdtemp " << tmpl << " failed";
  }
  ~TestDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;

  const std::string& path() const { return path_; }
  // path()/name.
  std::string operator/(std::string_view name) const { return path_ + "/" + std::string(name); }
  // Writes (replaces) path()/name with contents; returns its path.
  std::string Write(std::string_view name, std::string_view contents) const {
    const std::string p = *this / name;
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(contents.data(), std::streamsize(contents.size()));
    return p;
  }

 private:
  std::string path_;
};

}  // namespace clickatron
