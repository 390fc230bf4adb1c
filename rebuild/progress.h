// Progress of a long step: on a terminal, one line rewritten about once a second
// ("import: 12.4M records, 310 MB, 148.2 MB/s, ETA 41s"); and the one-line summary every
// step prints at its end, terminal or not (docs/architecture.md#guarantees: long work shows progress and ends with
// a summary). Thread-safe: parallel tasks add to the same counters.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace clickatron::rebuild {

class Progress {
 public:
  // total_bytes: expected input size for the ETA (0 = unknown).
  Progress(std::string step, uint64_t total_bytes = 0);
  ~Progress();  // clears the progress line

  void Add(uint64_t records, uint64_t bytes);
  // Prints the progress line if a second has passed and stderr is a terminal.
  void Tick();
  double Seconds() const;
  uint64_t records() const { return records_; }
  uint64_t bytes() const { return bytes_; }
  // "<step>: <text> in 12.3 s (45.6 MB/s)" on stdout.
  void Summary(const std::string& text);
  static bool IsTerminal();

 private:
  std::string step_;
  const uint64_t total_bytes_;
  std::atomic<uint64_t> records_{0}, bytes_{0};
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_print_;
  bool printed_ = false;
};

// What every Summary of this process counted so far (the task report, task_report.h).
uint64_t SummarizedRecords();
uint64_t SummarizedBytes();

// "1.5 GB", "312 MB", "12 KB".
std::string HumanBytes(uint64_t bytes);
// "12.4M", "3.1K", "17".
std::string HumanCount(uint64_t n);

}  // namespace clickatron::rebuild
