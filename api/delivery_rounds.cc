#include "api/delivery_rounds.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>

#include "base/durable_file.h"
#include "base/errno_status.h"
#include "base/read_file.h"

namespace clickatron {
namespace {

constexpr uint64_t kCompactBytes = 256 * 1024;

}  // namespace

std::string KernelBootId() {
  std::string text;
  if (!ReadFile("/proc/sys/kernel/random/boot_id", &text).ok()) return "";
  return text.substr(0, text.find('\n'));
}

DeliveryRounds::~DeliveryRounds() {
  if (fd_ >= 0) ::close(fd_);
}

std::string DeliveredRingPath(const std::string& dir, const std::string& name) {
  return dir + "/delivery-" + name + ".ring";
}

std::string DeliveryRounds::Path(const std::string& dir, const std::string& name) {
  return dir + "/delivery-" + name + ".rounds";
}

Status DeliveryRounds::Open(const std::string& dir, const std::string& name, uint64_t cursor,
                            std::deque<uint64_t>* ends, bool* trusted) {
  path_ = Path(dir, name);
  boot_id_ = KernelBootId();
  ends->clear();
  *trusted = false;
  // A file that cannot be read is one with no rounds: the rewrite below replaces it.
  if (std::string text; ReadFile(path_, &text).ok()) {
    std::string_view rest(text);
    const std::string header = "boot " + boot_id_ + "\n";
    if (!boot_id_.empty() && rest.starts_with(header)) {
      *trusted = true;
      rest.remove_prefix(header.size());
      // Only whole lines: a torn last line (the process died inside write) was never
      // followed by a send.
      for (size_t nl; (nl = rest.find('\n')) != std::string_view::npos; rest.remove_prefix(nl + 1)) {
        uint64_t end = 0;
        auto [p, ec] = std::from_chars(rest.data(), rest.data() + nl, end);
        if (ec != std::errc() || p != rest.data() + nl) break;
        if (end > cursor && (ends->empty() || end > ends->back())) ends->push_back(end);
      }
    }
  }
  return Rewrite(*ends);
}

Status DeliveryRounds::Rewrite(const std::deque<uint64_t>& live) {
  std::string text = "boot " + boot_id_ + "\n";
  for (uint64_t end : live) text += std::to_string(end) + "\n";
  if (Status s = WriteFileAtomic(path_, text); !s.ok()) return s;
  // Appends go on after the rewrite.
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", path_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  size_ = text.size();
  return Status::OK();
}

Status DeliveryRounds::Append(uint64_t end) {
  char line[24];
  auto [p, ec] = std::to_chars(line, line + sizeof line - 1, end);
  (void)ec;
  *p++ = '\n';
  Status s = WriteAll(fd_, std::string_view(line, size_t(p - line)), path_);
  if (s.ok()) size_ += uint64_t(p - line);
  return s;
}

Status DeliveryRounds::MaybeCompact(const std::deque<uint64_t>& live) {
  if (size_ < kCompactBytes) return Status::OK();
  return Rewrite(live);
}

}  // namespace clickatron
