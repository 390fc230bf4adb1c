#include "base/read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "base/errno_status.h"
#include "base/unique_fd.h"

namespace clickatron {

Status ReadToEnd(int fd, const std::string& path, std::string* out, size_t max_bytes) {
  out->clear();
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out->reserve(std::min(static_cast<size_t>(st.st_size), max_bytes));
  char buf[1 << 16];
  while (out->size() < max_bytes) {
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, max_bytes - out->size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("read", path);
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  return Status::OK();
}

Status ReadFileIfExists(const std::string& path, std::string* out, bool* exists) {
  out->clear();
  *exists = false;
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return errno == ENOENT ? Status::OK() : ErrnoStatus("open", path);
  *exists = true;
  return ReadToEnd(fd.get(), path, out);
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

Result<std::string> ReadFile(const std::string& path) {
  std::string out;
  if (Status s = ReadFile(path, &out); !s.ok()) return s;
  return out;
}

}  // namespace clickatron
