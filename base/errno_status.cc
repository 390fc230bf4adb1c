#include "base/errno_status.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace clickatron {

Status ErrnoStatus(std::string_view what, std::string_view path) {
  const int err = errno;
  std::string context(what);
  context += ' ';
  context += path;
  return ErrnoStatus(err, context);
}

Status ErrnoStatus(int err, std::string_view context) {
  std::string m(context);
  m += ": ";
  m += std::strerror(err);
  return Status::Error(std::move(m));
}

}  // namespace clickatron
