// ErrnoStatus: the Status of a failed system call, naming what failed and the OS's reason.
//
// Two shapes, both with strerror's text at the end:
//   ErrnoStatus("open", "/w/meta")          "open /w/meta: No such file or directory"
//   ErrnoStatus(err, "/w/x.csv: open")      "/w/x.csv: open: No such file or directory"
// The first is the usual one for a call on a file; the second takes a saved errno and any
// context (for messages whose shape tests and users already rely on).
#pragma once

#include <string_view>

#include "base/status.h"

namespace clickatron {

// "<what> <path>: <strerror(errno)>". Reads errno before anything else, so call it right
// after the failed call.
Status ErrnoStatus(std::string_view what, std::string_view path);

// "<context>: <strerror(err)>".
Status ErrnoStatus(int err, std::string_view context);

}  // namespace clickatron
