// TempDir: a fresh directory under /tmp for one rebuild test, removed with everything in it.
// Only *_test.cc include this.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace clickatron::rebuild {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/rebuild_test.XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace clickatron::rebuild
