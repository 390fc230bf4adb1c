// TestDir: a fresh temporary directory for one unit test, removed with everything in it.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace clickatron::realtime {

class TestDir {
 public:
  TestDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "realtime-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TestDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace clickatron::realtime
