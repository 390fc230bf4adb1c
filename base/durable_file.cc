#include "base/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/errno_status.h"
#include "base/unique_fd.h"

namespace clickatron {
namespace {

// The directory holding path ("." for a bare name, "/" for a file at the root).
std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return path.substr(0, slash == 0 ? 1 : slash);
}

Status Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) == 0) return Status::OK();
  const int err = errno;  // before building the message
  return ErrnoStatus(err, "rename " + from + " to " + to);
}

}  // namespace

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("write", path);
    if (n == 0) return ErrnoStatus(EIO, "write " + path);
    bytes.remove_prefix(size_t(n));
  }
  return Status::OK();
}

Status SyncDir(const std::string& dir) {
  const UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus("open directory", dir);
  if (::fsync(fd.get()) != 0) return ErrnoStatus("fsync directory", dir);
  return Status::OK();
}

Status RenameDurable(const std::string& from, const std::string& to) {
  if (Status s = Rename(from, to); !s.ok()) return s;
  return SyncDir(DirectoryOf(to));
}

Status WriteFileAtomicWith(const std::string& path,
                           const std::function<Status(int fd, const std::string& tmp_path)>& write) {
  const std::string tmp = path + ".tmp";
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return ErrnoStatus("create", tmp);
  Status s = write(fd.get(), tmp);
  if (s.ok() && ::fdatasync(fd.get()) != 0) s = ErrnoStatus("fsync", tmp);
  if (Status closed = fd.Close(tmp); s.ok()) s = closed;
  if (s.ok()) s = Rename(tmp, path);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return SyncDir(DirectoryOf(path));
}

Status WriteFileAtomic(const std::string& path, std::string_view contents) {
  return WriteFileAtomicWith(path, [contents](int fd, const std::string& tmp) { return WriteAll(fd, contents, tmp); });
}

}  // namespace clickatron
