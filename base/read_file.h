// ReadFile: a whole file into memory, with errors as Status values naming the call and the
// path ("open /w/meta: Permission denied", base/errno_status.h). For the small files every
// component reads whole (metadata, cursors, configs, ids); big files are streamed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace clickatron {

// Reads the whole file at path into *out (replacing its contents).
Status ReadFile(const std::string& path, std::string* out);

// The same, as a value.
Result<std::string> ReadFile(const std::string& path);

// As ReadFile, except that a file that does not exist is not an error: *exists says whether
// it did (and *out is then empty).
Status ReadFileIfExists(const std::string& path, std::string* out, bool* exists);

// Reads fd from its offset to the end, or max_bytes of it, into *out (replacing its
// contents), for a caller that opened and checked the file itself; path names it in the
// error ("read <path>: ..."). Does not close fd.
Status ReadToEnd(int fd, const std::string& path, std::string* out, size_t max_bytes = SIZE_MAX);

}  // namespace clickatron
