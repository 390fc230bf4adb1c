#include "realtime/ring_id.h"

#include "base/durable_file.h"
#include "base/random_id.h"
#include "keyformat/hex64.h"
#include "base/read_file.h"

namespace clickatron::realtime {

Result<std::string> LoadOrCreateRingId(const std::string& dir) {
  const std::string path = dir + "/" + kRingIdFile;
  std::string text;
  bool exists;
  if (Status s = ReadFileIfExists(path, &text, &exists); !s.ok()) return s;
  if (exists) {
    std::string_view id = text;
    if (!id.empty() && id.back() == '\n') id.remove_suffix(1);
    if (!ParseHex64(id).ok()) return Status::Error(path + ": '" + std::string(id.substr(0, 32)) + "' is not 16 lowercase hex digits");
    return std::string(id);
  }
  const std::string id = RandomId64();
  if (Status s = WriteFileAtomic(path, id + "\n"); !s.ok()) return s;
  return id;
}

}  // namespace clickatron::realtime
