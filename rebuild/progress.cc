#include "rebuild/progress.h"

#include <unistd.h>

#include <cstdio>

namespace clickatron::rebuild {
namespace {

std::atomic<uint64_t> g_summarized_records{0}, g_summarized_bytes{0};

}  // namespace

uint64_t SummarizedRecords() { return g_summarized_records; }
uint64_t SummarizedBytes() { return g_summarized_bytes; }

std::string HumanBytes(uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.2f GB", double(bytes) / double(1ull << 30));
  else if (bytes >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%.1f MB", double(bytes) / double(1ull << 20));
  else if (bytes >= 1024) std::snprintf(buf, sizeof buf, "%.1f KB", double(bytes) / 1024.0);
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

std::string HumanCount(uint64_t n) {
  char buf[32];
  if (n >= 1000000) std::snprintf(buf, sizeof buf, "%.1fM", double(n) / 1e6);
  else if (n >= 1000) std::snprintf(buf, sizeof buf, "%.1fK", double(n) / 1e3);
  else std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(n));
  return buf;
}

bool Progress::IsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string step, uint64_t total_bytes)
    : step_(std::move(step)), total_bytes_(total_bytes),
      start_(std::chrono::steady_clock::now()), last_print_(start_) {}

Progress::~Progress() {
  if (printed_) std::fprintf(stderr, "\r\033[K");
}

void Progress::Add(uint64_t records, uint64_t bytes) {
  records_ += records;
  bytes_ += bytes;
}

double Progress::Seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::Tick() {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (now - last_print_ < std::chrono::seconds(1) || !IsTerminal()) return;
  last_print_ = now;
  const double secs = Seconds();
  const double mbps = secs > 0 ? double(bytes_) / secs / 1e6 : 0;
  std::string eta;
  if (total_bytes_ > 0 && bytes_ > 0 && bytes_ < total_bytes_) {
    char buf[32];
    std::snprintf(buf, sizeof buf, ", ETA %.0fs", double(total_bytes_ - bytes_) / (double(bytes_) / secs));
    eta = buf;
  }
  std::fprintf(stderr, "\r\033[K%s: %s records, %s, %.1f MB/s%s", step_.c_str(),
               HumanCount(records_).c_str(), HumanBytes(bytes_).c_str(), mbps, eta.c_str());
  std::fflush(stderr);
  printed_ = true;
}

void Progress::Summary(const std::string& text) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (printed_) {
      std::fprintf(stderr, "\r\033[K");
      printed_ = false;
    }
  }
  g_summarized_records += records_;
  g_summarized_bytes += bytes_;
  const double secs = Seconds();
  std::printf("%s: %s in %.2f s (%.1f MB/s)\n", step_.c_str(), text.c_str(), secs,
              secs > 0 ? double(bytes_) / secs / 1e6 : 0.0);
  std::fflush(stdout);
}

}  // namespace clickatron::rebuild
