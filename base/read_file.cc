#include "base/read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errno_status.h"

namespace clickatron {
namespace {

Status ReadOpen(int fd, const std::string& path, std::string* out) {
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out->reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("read", path);
    if (n == 0) return Status::OK();
    out->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

Status ReadFileIfExists(const std::string& path, std::string* out, bool* exists) {
  out->clear();
  *exists = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? Status::OK() : ErrnoStatus("open", path);
  *exists = true;
  Status s = ReadOpen(fd, path, out);
  ::close(fd);
  return s;
}

Status ReadFile(const std::string& path, std::string* out) {
  bool exists;
  Status s = ReadFileIfExists(path, out, &exists);
  if (s.ok() && !exists) {
    errno = ENOENT;
    return ErrnoStatus("open", path);
  }
  return s;
}

}  // namespace clickatron
