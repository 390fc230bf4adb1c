// Runs independent tasks (one per archive shard, per realtime shard, per month) on up to
// `jobs` threads. Returns the error of the lowest-numbered failed task, so the message does
// not depend on scheduling; every task runs to its end either way (they are independent
// and each cleans up after itself).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "base/status.h"

namespace clickatron::rebuild {

inline Status RunTasks(size_t count, unsigned jobs, const std::function<Status(size_t)>& task) {
  std::vector<Status> results(count);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) results[i] = task(i);
  };
  std::vector<std::thread> threads;
  const size_t n = std::min<size_t>(jobs < 1 ? 1 : jobs, count);
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  for (const Status& s : results) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace clickatron::rebuild
