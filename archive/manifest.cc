#include "archive/manifest.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/errno_status.h"

namespace clickatron::archive {

Result<std::optional<Manifest>> ReadManifest(const std::string& dir) {
  std::string path = dir.empty() ? std::string(kManifestName) : dir + "/" + kManifestName;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    if (err == ENOENT) return std::optional<Manifest>();
    return ErrnoStatus(err, path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": read error");
  Result<Manifest> m = ParseManifest(text.str());
  if (!m.ok()) return m.status().Prefixed(path + ": ");
  return std::optional<Manifest>(std::move(m).value());
}

}  // namespace clickatron::archive
