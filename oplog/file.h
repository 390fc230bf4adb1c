// The few POSIX file operations the oplog needs, with errors as Status values whose text
// names the file and the OS error ("write /var/oplog/seg-...log: No space left on device").
#ifndef CLICKATRON_OPLOG_FILE_H_
#define CLICKATRON_OPLOG_FILE_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::oplog {

// "<what> <path>: <strerror(errno)>".
Status ErrnoError(std::string_view what, const std::string& path);

// Reads a whole file into *out.
Status ReadFile(const std::string& path, std::string* out);

// Writes all of bytes at offset, retrying short writes and EINTR.
Status WriteAt(int fd, std::string_view bytes, off_t offset, const std::string& path);

// fsync on a directory, so that entries created or renamed in it survive a crash.
Status SyncDir(const std::string& dir);

// Creates dir if it does not exist (not its parents).
Status EnsureDir(const std::string& dir);

// Monotonic microseconds, for latencies.
uint64_t NowMicros();

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_FILE_H_
