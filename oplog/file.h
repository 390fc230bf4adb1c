// The few POSIX file operations the oplog needs beyond base/ (base/durable_file.h), with
// errors as Status values whose text names the file and the OS error ("write
// /var/oplog/seg-...log: No space left on device", base/errno_status.h).
#ifndef CLICKATRON_OPLOG_FILE_H_
#define CLICKATRON_OPLOG_FILE_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::oplog {

// Writes all of bytes at offset, retrying short writes and EINTR.
Status WriteAt(int fd, std::string_view bytes, off_t offset, const std::string& path);

// Creates dir if it does not exist (not its parents).
Status EnsureDir(const std::string& dir);

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_FILE_H_
