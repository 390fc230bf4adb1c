// UniqueFd: the one owner of a file descriptor, closed when the owner goes (LevelDB's
// PosixRandomAccessFile holds its fd the same way). Move-only; not thread-safe.
//
//   UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
//   if (!fd.valid()) return ErrnoStatus("open", path);
//   ... every return closes it ...
//
// close(2) and EINTR: on Linux the descriptor is released even when close returns EINTR,
// and retrying could close a descriptor another thread has just been given, so close is
// never retried. The destructor and reset() ignore close's result (nothing written, or a
// file left to be removed); where a failed close must be reported (the last step of a write
// that is about to be renamed into place: NFS and some disk-full cases report only there),
// call Close(path) and check its Status.
#pragma once

#include <string_view>

#include "base/status.h"

namespace clickatron {

class UniqueFd {
 public:
  UniqueFd() = default;
  // Takes fd (a negative one is "none": a failed open's result can go straight in).
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    reset(other.release());
    return *this;
  }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership: returns the fd (or -1) and holds none.
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the fd held (if any; close's result ignored) and takes fd.
  // REQUIRES: fd is not the one held, unless it is negative.
  void reset(int fd = -1);
  // Closes the fd held now and says whether close succeeded: "close <path>: <strerror>"
  // (base/errno_status.h). Holds none afterwards, whatever close returned.
  // REQUIRES: valid().
  Status Close(std::string_view path);

 private:
  int fd_ = -1;
};

}  // namespace clickatron
