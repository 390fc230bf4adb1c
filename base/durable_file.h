// Writing small files so that a crash leaves either the old file or the whole new one.
//
// A small file (cursors, the shard list, segment and generation metadata) is replaced by
// WriteFileAtomic: the bytes go to "<path>.tmp", which is flushed to the device
// (fdatasync), renamed over path, and then the directory is fsynced so the rename itself
// survives a power loss. Bigger outputs written another way are put in place with
// RenameDurable. Errors are Status values naming the call and the path
// ("rename /w/meta.tmp to /w/meta: No space left on device", base/errno_status.h).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron {

// Writes all of bytes at fd's current offset, retrying short writes and EINTR; path names
// the file in the error.
Status WriteAll(int fd, std::string_view bytes, const std::string& path);

// fsync on a directory, so that entries created or renamed in it survive a crash.
Status SyncDir(const std::string& dir);

// rename(2), then fsync of the destination's directory.
Status RenameDurable(const std::string& from, const std::string& to);

// Replaces path with contents durably: "<path>.tmp" written, fdatasync'ed and closed,
// renamed over path, directory fsynced. On an error the temp file is removed and path is
// left as it was (or, when only the directory sync failed, already replaced).
Status WriteFileAtomic(const std::string& path, std::string_view contents);

// As WriteFileAtomic, for contents written in pieces (a file too big to build in memory,
// copied from another): write is called once with the temp file's fd, at its start, and
// its path for errors, and writes everything (WriteAll) before it returns.
Status WriteFileAtomicWith(const std::string& path,
                           const std::function<Status(int fd, const std::string& tmp_path)>& write);

}  // namespace clickatron
