// ChunkReader: one input (a file, or standard input as "-") handed to several threads in
// chunks of whole lines, in input order — the reading side of a parallel `import`.
//
// Each thread calls Next() with a buffer of its own and gets the next chunk: it starts at
// the start of a line and ends just after a '\n' (only the input's last line may lack
// one), so no line is split between two threads. Chunks are numbered in input order, so
// per-line problems can still be reported in that order, with line numbers. The XXH64 of
// every byte is taken as the bytes are read (in order: reading is serialized).
//
// Thread-safe.
#pragma once

#define XXH_STATIC_LINKING_ONLY  // XXH64_state_t on the stack, no malloc per hash
#include <xxhash.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace clickatron::rebuild {

class ChunkReader {
 public:
  ChunkReader() = default;
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // chunk_bytes: how much one chunk holds (more when a single line is longer).
  Status Open(const std::string& path, size_t chunk_bytes = 4 << 20);
  // Reads the next chunk into *buffer (grown as needed, kept for the next call) and
  // points *text at it; *index is its number (0, 1, ...). false at the end of the input
  // or on a read error (then status()).
  bool Next(std::vector<char>* buffer, std::string_view* text, uint64_t* index);

  Status status() const;
  // XXH64 (seed 0) of the whole input, once Next() has returned false with status() OK.
  uint64_t digest() const;
  uint64_t bytes_read() const;
  // Size of the file when known (a regular file), else 0.
  uint64_t file_size() const { return file_size_; }
  const std::string& path() const { return path_; }

 private:
  bool Fill(std::vector<char>* buffer, size_t* used);
  mutable std::mutex mu_;
  int fd_ = -1;
  bool owns_fd_ = false;
  std::string path_;
  size_t chunk_bytes_ = 0;
  uint64_t file_size_ = 0;
  // Guarded by mu_:
  std::string carry_;  // the start of a line read with the previous chunk
  bool eof_ = false;
  uint64_t next_index_ = 0;
  uint64_t bytes_read_ = 0;
  XXH64_state_t digest_state_;
  Status status_;
};

}  // namespace clickatron::rebuild
