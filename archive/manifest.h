// Reads the generation manifest (keyformat/manifest.h, written by clickatron-rebuild
// publish) from the directory of the file the archive serves.
//
// The archive server uses the manifest for two things: /stats and the X-Archive-Last-Day
// header (the API's watermark, docs/architecture.md), and as a checksum of the file it is
// about to serve — when the manifest names the served file, its record count, byte count
// and xxh64 must match, so a half-copied or swapped-under-us file is refused (db_file.cc).
#ifndef CLICKATRON_ARCHIVE_MANIFEST_H_
#define CLICKATRON_ARCHIVE_MANIFEST_H_

#include <optional>
#include <string>

#include "base/status.h"
#include "keyformat/manifest.h"

namespace clickatron::archive {

// Reads `dir`/manifest. No file there → std::nullopt (not an error); an unreadable or
// malformed one is an error naming the path: "DIR/manifest: no 'last_day' line".
Result<std::optional<Manifest>> ReadManifest(const std::string& dir);

}  // namespace clickatron::archive

#endif  // CLICKATRON_ARCHIVE_MANIFEST_H_
