// ReadFile: a whole file into memory, with errors as Status values naming the call and the
// path ("open /w/meta: Permission denied", base/errno_status.h). For the small files every
// component reads whole (metadata, cursors, configs, ids); big files are streamed.
#pragma once

#include <string>

#include "base/status.h"

namespace clickatron {

// Reads the whole file at path into *out (replacing its contents).
Status ReadFile(const std::string& path, std::string* out);

// As ReadFile, except that a file that does not exist is not an error: *exists says whether
// it did (and *out is then empty).
Status ReadFileIfExists(const std::string& path, std::string* out, bool* exists);

}  // namespace clickatron
