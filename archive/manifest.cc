#include "archive/manifest.h"

#include "base/read_file.h"

namespace clickatron::archive {

Result<std::optional<Manifest>> ReadManifest(const std::string& dir) {
  std::string path = dir.empty() ? std::string(kManifestName) : dir + "/" + kManifestName;
  std::string text;
  bool exists = false;
  if (Status s = ReadFileIfExists(path, &text, &exists); !s.ok()) return s;
  if (!exists) return std::optional<Manifest>();
  Result<Manifest> m = ParseManifest(text);
  if (!m.ok()) return m.status().Prefixed(path + ": ");
  return std::optional<Manifest>(std::move(m).value());
}

}  // namespace clickatron::archive
