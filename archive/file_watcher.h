// FileWatcher: notices, on a thread of its own, that the file a LiveDb serves was changed in
// place, and reports it (docs/archive.md#a-file-changed-under-the-server).
//
// Two ways, one thread, so the event loops pay nothing for either:
//   * inotify (IN_MODIFY | IN_ATTRIB) on the served file's inode, added through
//     /proc/self/fd/N so it is the mapped file even once its path names another generation.
//     A write, truncate or fallocate by any process is an IN_MODIFY: reported as
//     DamageSource::kInotify as soon as the thread runs (microseconds; a scheduler tick or
//     more on a busy machine);
//   * an fstat of the mapped file every check_ms, after every inotify event and at once
//     when the served file changes: another size or mtime than at verification is reported
//     as kStat. It catches what inotify does not report: a write through another process's
//     shared writable mapping (the kernel updates the mtime), a change made by another NFS
//     client, an mtime set by `touch`, events lost to an inotify queue overflow.
// A file already damaged is not reported again; a file not current any more is not watched.
// If inotify cannot be had (inotify_init1 or inotify_add_watch fail: the per-user limits),
// the fstat check runs alone and Start() says so.
//
// Thread-safety: Retarget() and Stop() may be called from any thread; on_damage runs on the
// watcher's thread.
#ifndef CLICKATRON_ARCHIVE_FILE_WATCHER_H_
#define CLICKATRON_ARCHIVE_FILE_WATCHER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "archive/db_file.h"
#include "archive/file_health.h"
#include "archive/live_db.h"

namespace clickatron::archive {

class FileWatcher {
 public:
  using OnDamage = std::function<void(const std::shared_ptr<const DbFile>&, DamageSource)>;

  // REQUIRES: check_ms > 0; db outlives the watcher.
  FileWatcher(const LiveDb* db, int check_ms, OnDamage on_damage);
  ~FileWatcher();  // Stop()
  FileWatcher(const FileWatcher&) = delete;
  FileWatcher& operator=(const FileWatcher&) = delete;

  // Watches the current file and starts the thread: a change from now on is reported.
  // REQUIRES: db->Open() succeeded; called once. Returns an empty
  // string, or why inotify is not used ("inotify_init1: Too many open files; the fstat
  // check every 250 ms runs alone").
  std::string Start();
  // The LiveDb serves another file: watch it now rather than at the next wake.
  void Retarget();
  // Joins the thread. Idempotent.
  void Stop();

 private:
  void Main();
  // Moves the inotify watch to `file`; returns its descriptor, or -1 (fstat only).
  int Watch(const DbFile& file, int old_wd);
  // Waits up to check_ms for an event or a poke; true when an IN_MODIFY of wd was read.
  bool WaitForEvents(int wd);

  const LiveDb* const db_;
  const int check_ms_;
  const OnDamage on_damage_;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Retarget() and Stop()
  // The file watched and its inotify watch (-1: none); the thread's after Start().
  std::shared_ptr<const DbFile> watched_;
  int wd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace clickatron::archive

#endif  // CLICKATRON_ARCHIVE_FILE_WATCHER_H_
