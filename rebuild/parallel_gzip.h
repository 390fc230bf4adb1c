// ParallelGzipWriter: one gzip member (RFC 1952) of a byte stream, deflated on several
// threads at once, as pigz does, so that `gzip -d` (and any zlib reader) reads it back.
//
// The input is cut into blocks of block_bytes. Each block is deflated by zlib on a worker
// thread as a raw deflate stream primed with the last 32 KiB of the block before it
// (deflateSetDictionary: matches may reach back across the cut, so the ratio is nearly
// that of one stream) and ended with Z_SYNC_FLUSH (an empty stored block: the stream ends
// on a byte boundary with no final bit), the last block with Z_FINISH. The pieces, written
// in input order between a gzip header and a trailer whose CRC-32 is the per-block CRCs
// combined (crc32_combine), are one valid deflate stream. At most 2 × threads blocks are in
// flight (input and output buffers reused), so memory is bounded whatever the input size.
// Used for publish's backup copy: one core of zlib level 6 made publish the slowest step
// of the nightly (docs/benchmarks.md#rebuild).
//
// Errors are values: a failed write or fsync ("write /b/shard-0.csv.gz: No space left on
// device") is returned by the Append or Finish that finds it, and the partial file is then
// removed. A writer destroyed before Finish succeeded removes its file too. Not
// thread-safe: one caller appends; the threads are the writer's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::rebuild {

struct ParallelGzipOptions {
  unsigned threads = 0;              // deflating threads; 0 = one per core
  size_t block_bytes = 1 << 20;      // input per block (at least 64 KiB)
  int level = 6;                     // zlib level 1..9 (gzip's default, 6)
};

class ParallelGzipWriter {
 public:
  ParallelGzipWriter();
  ~ParallelGzipWriter();  // without a successful Finish: stops the threads, removes the file
  ParallelGzipWriter(const ParallelGzipWriter&) = delete;
  ParallelGzipWriter& operator=(const ParallelGzipWriter&) = delete;

  // Creates (truncates) path and starts the threads.
  Status Open(const std::string& path, const ParallelGzipOptions& options = {});
  // Appends bytes to the uncompressed stream; an error sticks (later calls return it).
  Status Append(std::string_view bytes);
  // Deflates the rest, writes the trailer, fsyncs and closes. REQUIRES: Open succeeded.
  Status Finish();

  uint64_t bytes_in() const;   // uncompressed bytes deflated and written so far (all of them after Finish)
  uint64_t bytes_out() const;  // gzip bytes written so far

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// gzip of the file at from into a new file at to (fsynced), on options.threads threads;
// on_read(n) is called with each block of n bytes read (progress). On an error, to is
// removed.
Status GzipFileParallel(const std::string& from, const std::string& to, const ParallelGzipOptions& options,
                        const std::function<void(std::string_view)>& on_read);

}  // namespace clickatron::rebuild
