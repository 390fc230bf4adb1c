#include "base/wall_clock.h"

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>

#include "base/read_file.h"

namespace clickatron {
namespace {

const char* ClockFile() {
  static const char* const path = [] {
    const char* p = std::getenv("CLICKATRON_CLOCK_FILE");
    return (p && *p) ? p : nullptr;
  }();
  return path;
}

int64_t MonotonicMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

Result<int64_t> ReadClockFile(const char* path) {
  std::string text;
  if (Status s = ReadFile(path, &text); !s.ok()) return s;
  return ParseClockFile(text);
}

}  // namespace

Result<int64_t> ParseClockFile(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return Status::Error("holds '" + std::string(text.substr(0, 32)) + "', not unix seconds");
  }
  return value;
}

int64_t WallClockSeconds() {
  const char* path = ClockFile();
  if (path == nullptr) return int64_t(std::time(nullptr));
  static std::mutex mu;
  static int64_t cached = -1;
  static int64_t read_at_ms = 0;
  std::lock_guard<std::mutex> lock(mu);
  const int64_t now_ms = MonotonicMs();
  if (cached >= 0 && now_ms - read_at_ms < kWallClockRereadMs) return cached;
  Result<int64_t> t = ReadClockFile(path);
  if (t.ok()) {
    cached = *t;
  } else if (cached < 0) {
    std::fprintf(stderr, "CLICKATRON_CLOCK_FILE=%s: %s\n", path, t.status().message().c_str());
    std::exit(2);
  }
  read_at_ms = now_ms;
  return cached;
}

}  // namespace clickatron
