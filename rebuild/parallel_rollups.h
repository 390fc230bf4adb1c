// ParallelRollups: the RollupWriter stage (rollup.h) of `merge` on several threads, with
// exactly the output of one RollupWriter.
//
// A RollupWriter's state lives within one subtotal key's month: what it writes for the
// lines of a key-month depends on nothing before or after them. So the merged stream is
// cut into chunks of about 1 MiB, each cut made between two lines of different key-months
// (or next to a line that is not a subtotal), and whole chunks are summed on the workers,
// each with a RollupWriter of its own, finished at the end of every chunk. A key-month
// with no such cut within the last 64 KiB of a chunk (a key with a huge month) is not cut:
// the next chunk continues it, on the same worker, whose writer is then not finished in
// between. The workers' output goes to the writer behind in chunk order, on the thread
// that adds (which also cuts the chunks).
//
// On 2 cores the merge of the 100 M-record benchmark was one thread at 100 %, two thirds
// of it in the rollups (docs/benchmarks.md#rebuild).
//
// Memory: at most 2 × workers + 2 chunks and their output in flight, plus each worker's
// RollupWriter (RollupLimits::max_held_bytes). Errors: the first error of a worker or of
// the writer behind is returned by every later call and by Finish().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "rebuild/rollup.h"
#include "rebuild/sorted_file.h"

namespace clickatron::rebuild {

class ParallelRollups : public RecordWriter {
 public:
  // Starts `workers` threads (at least 1) that write into *behind (which must outlive
  // Finish()).
  ParallelRollups(RecordWriter* behind, unsigned workers, RollupLimits limits = {});
  // Finish()es if that was not done (on an error path, whose file is discarded anyway).
  ~ParallelRollups() override;
  ParallelRollups(const ParallelRollups&) = delete;
  ParallelRollups& operator=(const ParallelRollups&) = delete;

  Status Add(std::string_view key, std::string_view value, uint64_t columns) override;
  Status AddLines(std::string_view lines, uint64_t records, uint64_t columns) override;
  bool counts_columns_itself() const override { return true; }  // its RollupWriters do
  // Sums and writes everything added (and what the writers hold), stops the workers.
  Status Finish();
  // The workers' stats, added up. REQUIRES: Finish() returned.
  RollupStats stats() const;

  // The line of `lines` (whole `key,value\n` lines, at least two) before which this stage
  // would cut: the offset of the last line start where a cut is allowed, looking back at
  // most `look_back` bytes from the end; 0 when there is none. Exposed for the test.
  static size_t CutPoint(std::string_view lines, size_t look_back);

 private:
  struct Chunk;
  struct Worker;
  Status Dispatch(bool ends_group);  // the chunk being filled, to a worker
  Status WriteDone(bool wait_for_all);
  void Work(Worker* me);

  RecordWriter* behind_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<Chunk> filling_;
  size_t next_worker_ = 0;
  bool continued_ = false;  // the last chunk sent did not end a key-month
  size_t last_worker_ = 0;
  Status error_;            // the first error seen by the adding thread
  bool finished_ = false;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Chunk>> in_flight_;  // in chunk order; guarded by mu_
  std::vector<std::unique_ptr<Chunk>> free_;      // guarded by mu_
  bool stopping_ = false;                         // guarded by mu_
};

}  // namespace clickatron::rebuild
