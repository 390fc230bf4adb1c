#include "base/unique_fd.h"

#include <unistd.h>

#include "base/errno_status.h"

namespace clickatron {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);  // never retried: see the header
  fd_ = fd;
}

Status UniqueFd::Close(std::string_view path) {
  if (::close(release()) == 0) return Status::OK();
  return ErrnoStatus("close", path);
}

}  // namespace clickatron
