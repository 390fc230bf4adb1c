#include "oplog/file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errno_status.h"

namespace clickatron::oplog {

Status WriteAt(int fd, std::string_view bytes, off_t offset, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = pwrite(fd, bytes.data(), bytes.size(), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("write", path);
    if (n == 0) {
      errno = EIO;
      return ErrnoStatus("write", path);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
    offset += n;
  }
  return Status::OK();
}

Status EnsureDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) {
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) return ErrnoStatus("stat", dir);
    if (!S_ISDIR(st.st_mode)) return Status::Error(dir + " is not a directory");
    return Status::OK();
  }
  return ErrnoStatus("create directory", dir);
}

}  // namespace clickatron::oplog
