// Files for batch work: big buffered writes and reads, directories.
//
// Every output of clickatron-rebuild is written to a temporary name, fsynced, and renamed
// into place (then its directory fsynced: RenameDurable and WriteFileAtomic,
// base/durable_file.h), so a step killed at any point leaves either the old file or the
// whole new one — never half of one. Errors are returned as Status values whose text names
// the path and the failing call ("write /w/merged/shard-0.csv: No space left on device",
// base/errno_status.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"

namespace clickatron::rebuild {

// Memory from std::aligned_alloc (the 4 KiB alignment O_DIRECT wants), freed with free().
struct FreeAligned {
  void operator()(char* p) const;
};
using AlignedBuffer = std::unique_ptr<char[], FreeAligned>;

// Appends to a new file through a large buffer. Not thread-safe.
//
// A full buffer is written by a helper thread while the caller fills the other one, so the
// caller waits for the device only when it is the slower of the two. A direct writer
// (Open with direct = true) writes its whole aligned blocks around the page cache
// (O_DIRECT) and only the last partial block through it. For big sequential files (runs,
// segments, merged files): on this VM a buffered write costs the kernel a copy into freshly
// allocated page-cache pages, 0.73 GB/s against 2.4 GB/s direct (docs/benchmarks.md,
// rebuild). A filesystem that refuses O_DIRECT (tmpfs) gets buffered writes instead.
class FileWriter {
 public:
  FileWriter() = default;
  ~FileWriter();  // closes without syncing (an unfinished temp file is garbage anyway)
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  // Creates (truncates) path for writing.
  Status Open(const std::string& path, size_t buffer_size = 4 << 20, bool direct = false);
  // Appends bytes; an error sticks (later calls return it too).
  Status Append(std::string_view bytes);
  // Flushes, fsyncs and closes. REQUIRES: Open succeeded.
  Status SyncAndClose();
  // Flushes and closes without fsync (scratch files).
  Status Close();
  uint64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  Status FlushBuffer(bool last);
  Status WaitForWrite();
  Status WriteAll(const char* data, size_t size);
  int fd_ = -1;
  bool direct_ = false;  // read and changed only while no write is on its way
  std::string path_;
  AlignedBuffer buffers_[2];  // capacity_ bytes each
  int current_ = 0;                           // the one being filled
  size_t capacity_ = 0, used_ = 0;
  std::thread writing_;  // writes the other buffer
  Status written_;       // its result
  uint64_t bytes_ = 0;
  Status error_;
};

// Reads a file front to back in big blocks, the next block always on its way: a helper
// thread reads it while the caller works on the current one. Around the page cache
// (O_DIRECT) where the filesystem allows: the files read this way (runs, segments) were
// written around it, and on this VM copying out of the page cache cost the import's merge
// 2 s of 100M records (docs/benchmarks.md, rebuild). Not thread-safe.
class BlockReader {
 public:
  BlockReader() = default;
  ~BlockReader();  // waits for the read on its way
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;

  // block_bytes is rounded up to a multiple of 4 KiB.
  Status Open(const std::string& path, size_t block_bytes = 4 << 20);
  // The next block into *block (empty at the end), valid until the next call; false on
  // a read error.
  Status Next(std::string_view* block);
  const std::string& path() const { return path_; }

 private:
  void StartRead();
  ssize_t ReadAt(char* buffer, uint64_t offset);
  int fd_ = -1;
  bool direct_ = false;
  std::string path_;
  size_t block_bytes_ = 0;
  AlignedBuffer buffers_[2];  // block_bytes_ each
  int next_ = 0;           // the buffer being read into
  uint64_t offset_ = 0;    // of the block being read
  std::thread pending_;    // reads buffers_[next_]
  ssize_t pending_bytes_ = 0;
  int pending_errno_ = 0;
  bool eof_ = false;
};

// Reads a file (or standard input, path "-") line by line through a large buffer.
// Lines are returned without their '\n' as views valid until the next call. A last line
// without '\n' is returned too; has_final_newline() tells whether the input ended in one.
class LineReader {
 public:
  LineReader() = default;
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  Status Open(const std::string& path, size_t buffer_size = 4 << 20);
  // Stores the next line in *line; false at the end or on an error (then status()).
  bool Next(std::string_view* line);
  const Status& status() const { return status_; }
  uint64_t line_number() const { return line_number_; }  // of the last line returned
  uint64_t bytes_read() const { return bytes_read_; }    // from the file so far
  // Size of the file when known (a regular file), else 0.
  uint64_t file_size() const { return file_size_; }
  bool has_final_newline() const { return final_newline_; }
  const std::string& path() const { return path_; }

 private:
  bool Refill();
  int fd_ = -1;
  bool owns_fd_ = false;
  std::unique_ptr<BlockReader> blocks_;  // a regular file: read ahead, around the page cache
  std::string path_;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  bool final_newline_ = true;
  uint64_t line_number_ = 0;
  uint64_t bytes_read_ = 0;
  uint64_t file_size_ = 0;
  Status status_;
};

// A file (or standard input) opened by OpenInput.
struct InputFile {
  int fd = -1;
  bool owned = false;    // false for standard input, which the caller must not close
  bool regular = false;  // a regular file: its size is known
  uint64_t size = 0;     // when regular
};
// Opens path for reading; "-" is standard input (not fstat'ed). Error: "open <path>: ...".
Status OpenInput(const std::string& path, InputFile* in);

// Reads a whole small file (metadata, manifests).
Result<std::string> ReadSmallFile(const std::string& path);
// Reads the file at path front to back in blocks of up to block_size bytes, passing each to
// fn in order (a sequential-read hint given). Errors name the call and the path:
// "open <path>: ...", "read <path>: ..." (base/errno_status.h).
Status ForEachBlock(const std::string& path, size_t block_size,
                    const std::function<void(std::string_view)>& fn);
// One read(2) of up to size bytes from fd into buffer, retried on EINTR; *n is 0 at the end
// of the input. The error is "read <path>: <strerror>".
Status ReadSome(int fd, char* buffer, size_t size, const std::string& path, size_t* n);
// mkdir -p.
Status MakeDirs(const std::string& dir);
// rm -rf; a missing path is fine.
Status RemoveAll(const std::string& path);
bool Exists(const std::string& path);
// Size of a regular file; 0 when it cannot be read.
uint64_t FileSize(const std::string& path);
// Names in a directory (not "." or ".."), sorted; a missing directory is empty.
Result<std::vector<std::string>> ListDir(const std::string& dir);

}  // namespace clickatron::rebuild
