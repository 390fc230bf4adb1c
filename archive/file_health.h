// FileHealth: whether a served file is still the file that was verified, and, once it is
// not, how that was found and what changed (docs/archive.md#a-file-changed-under-the-server).
//
// A served file is verified once (db_file.h) and must then never change: files are replaced
// by rename. A file truncated or rewritten in place is *damaged*. The states of one mapped
// file, and what moves it:
//
//   state    | event                                              | next
//   ---------|----------------------------------------------------|--------
//   whole    | a guarded read faults (SIGBUS)                     | damaged
//   whole    | a read finds bytes not shaped as verified          | damaged
//   whole    | inotify reports a write (IN_MODIFY)                | damaged
//   whole    | the periodic fstat sees another size or mtime      | damaged
//   damaged  | any of those                                       | damaged (the first cause stays)
//
// There is no way back for a mapping: a reload opens and verifies the file afresh, and the
// new mapping starts whole (live_db.h); a refused reload leaves the damaged one served (its
// reads answer 503 ARCHIVE_FILE_DAMAGED). MarkDamaged returns true to exactly one caller
// per file, which logs the episode: one line per episode.
//
// FileStamp is what "unchanged" compares: the size and the mtime fstat gives. A write,
// truncate or fallocate changes the mtime (and a truncate the size); a rename over the path,
// a chmod or a new hard link change only the ctime, which is not compared — renaming a new
// generation over the path is the supported way to change the file.
//
// Thread-safety: any thread may call anything; damaged() is one acquire load (the hot path
// checks it twice per read), the rest takes a mutex.
#ifndef CLICKATRON_ARCHIVE_FILE_HEALTH_H_
#define CLICKATRON_ARCHIVE_FILE_HEALTH_H_

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace clickatron::archive {

// What fstat says of a file that matters for "unchanged since verified".
struct FileStamp {
  uint64_t size = 0;
  int64_t mtime_ns = 0;

  static FileStamp Of(const struct stat& st);
  bool operator==(const FileStamp&) const = default;
};

// How `now` differs from `verified`, for a message: "truncated in place from 400 to 120
// bytes", "grew in place from 400 to 500 bytes", "rewritten in place (size 400 unchanged,
// mtime changed)"; empty when they are equal.
std::string DescribeChange(const FileStamp& verified, const FileStamp& now);

// How a damage was found (the table above), with the name /stats and the log give it.
enum class DamageSource { kSigbus, kBadBytes, kInotify, kStat };
const char* DamageSourceName(DamageSource source);  // "sigbus", "bad_bytes", "inotify", "stat"

struct Damage {
  DamageSource source;
  std::string what;  // "/data/gen/g1/shard-0.csv: truncated in place from 400 to 120 bytes (...)"
  std::chrono::system_clock::time_point since;
};

class FileHealth {
 public:
  bool damaged() const { return damaged_.load(std::memory_order_acquire); }
  // damaged(), ordered after every read of the mapping before it: a copy that ended after the
  // file was marked is answered as damaged (docs/archive.md#a-file-changed-under-the-server).
  bool damaged_after_reads() const {
#if !defined(__SANITIZE_THREAD__)
    // ThreadSanitizer does not model fences (gcc refuses one under -Werror=tsan); the mapped
    // bytes are written by no thread, so its build checks the flag's load alone.
    std::atomic_thread_fence(std::memory_order_acquire);
#endif
    return damaged();
  }
  // Marks the file damaged. True for the call that did it; false when it already was (the
  // first damage stays what damage() reports).
  bool MarkDamaged(DamageSource source, std::string what);
  // The damage, or nullopt while whole.
  std::optional<Damage> damage() const;

 private:
  mutable std::mutex mu_;
  std::optional<Damage> damage_;  // guarded by mu_
  std::atomic<bool> damaged_{false};  // set (once) after damage_
};

}  // namespace clickatron::archive

#endif  // CLICKATRON_ARCHIVE_FILE_HEALTH_H_
