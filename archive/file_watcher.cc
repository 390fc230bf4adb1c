#include "archive/file_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace clickatron::archive {

FileWatcher::FileWatcher(const LiveDb* db, int check_ms, OnDamage on_damage)
    : db_(db), check_ms_(check_ms), on_damage_(std::move(on_damage)) {}

FileWatcher::~FileWatcher() {
  Stop();
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

std::string FileWatcher::Start() {
  std::string note;
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  inotify_fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_fd_ < 0) {
    note = std::string("inotify_init1: ") + std::strerror(errno) + "; the fstat check every " +
           std::to_string(check_ms_) + " ms runs alone";
  }
  // Watched before Start returns: a write from now on is an event the thread will read.
  watched_ = db_->Current();
  wd_ = Watch(*watched_, -1);
  thread_ = std::thread([this] { Main(); });
  return note;
}

void FileWatcher::Retarget() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof(one));
  (void)n;  // a full counter (EAGAIN) already wakes the thread
}

void FileWatcher::Stop() {
  stopping_.store(true, std::memory_order_release);
  Retarget();
  if (thread_.joinable()) thread_.join();
}

int FileWatcher::Watch(const DbFile& file, int old_wd) {
  if (inotify_fd_ < 0) return -1;
  if (old_wd >= 0) inotify_rm_watch(inotify_fd_, old_wd);  // its late events are ignored by wd
  const uint32_t mask = IN_MODIFY | IN_ATTRIB;
  // Through the descriptor: the mapped inode, whatever the path names by now.
  const std::string by_fd = "/proc/self/fd/" + std::to_string(file.fd());
  int wd = inotify_add_watch(inotify_fd_, by_fd.c_str(), mask);
  if (wd < 0) {
    std::fprintf(stderr, "clickatron-archive: inotify_add_watch %s: %s; the fstat check every %d ms runs alone\n",
                 file.real_path().c_str(), std::strerror(errno), check_ms_);
  }
  return wd;
}

bool FileWatcher::WaitForEvents(int wd) {
  struct pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
  const nfds_t n = inotify_fd_ >= 0 ? 2 : 1;
  if (poll(fds, n, check_ms_) <= 0) return false;
  uint64_t pokes;
  while (read(wake_fd_, &pokes, sizeof(pokes)) > 0) {
  }
  bool written = false;
  alignas(struct inotify_event) char buf[4096];
  ssize_t got;
  while (inotify_fd_ >= 0 && (got = read(inotify_fd_, buf, sizeof(buf))) > 0) {
    for (char* p = buf; p < buf + got;) {
      const auto* event = reinterpret_cast<const struct inotify_event*>(p);
      if (event->wd == wd && (event->mask & IN_MODIFY) != 0) written = true;
      p += sizeof(struct inotify_event) + event->len;
    }
  }
  return written;
}

void FileWatcher::Main() {
  while (true) {
    // Events first: a write reads as IN_MODIFY even though the fstat below would see it too.
    const bool written = WaitForEvents(wd_);
    if (stopping_.load(std::memory_order_acquire)) break;
    std::shared_ptr<const DbFile> current = db_->Current();
    if (current != watched_) {
      // A new file: its events from now on; a change since its open shows in the fstat.
      wd_ = Watch(*current, wd_);
      watched_ = std::move(current);
    } else if (written && !watched_->health().damaged()) {
      on_damage_(watched_, DamageSource::kInotify);
    }
    if (!watched_->health().damaged() && !watched_->ChangeSinceVerified().empty()) {
      on_damage_(watched_, DamageSource::kStat);
    }
  }
  if (wd_ >= 0) inotify_rm_watch(inotify_fd_, wd_);
  watched_.reset();
}

}  // namespace clickatron::archive
