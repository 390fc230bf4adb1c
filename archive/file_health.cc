#include "archive/file_health.h"

#include <utility>

namespace clickatron::archive {

FileStamp FileStamp::Of(const struct stat& st) {
  FileStamp s;
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return s;
}

std::string DescribeChange(const FileStamp& verified, const FileStamp& now) {
  const std::string from = std::to_string(verified.size), to = std::to_string(now.size);
  if (now.size < verified.size) return "truncated in place from " + from + " to " + to + " bytes";
  if (now.size > verified.size) return "grew in place from " + from + " to " + to + " bytes";
  if (now.mtime_ns != verified.mtime_ns) return "rewritten in place (size " + from + " unchanged, mtime changed)";
  return {};
}

const char* DamageSourceName(DamageSource source) {
  switch (source) {
    case DamageSource::kSigbus: return "sigbus";
    case DamageSource::kBadBytes: return "bad_bytes";
    case DamageSource::kInotify: return "inotify";
    case DamageSource::kStat: return "stat";
  }
  return "?";
}

bool FileHealth::MarkDamaged(DamageSource source, std::string what) {
  std::lock_guard<std::mutex> lock(mu_);
  if (damage_) return false;
  damage_ = Damage{source, std::move(what), std::chrono::system_clock::now()};
  damaged_.store(true, std::memory_order_release);
  return true;
}

std::optional<Damage> FileHealth::damage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return damage_;
}

}  // namespace clickatron::archive
