// DeliveryRounds: where each batch ("round") sent to one realtime shard ended, kept in the
// oplog directory so that a restarted API re-sends exactly the same batches.
//
// Why: the realtime tier makes a re-sent batch a no-op by its per-(slot, source)
// high-water mark — a batch numbered seq N is skipped when the slot already holds a mark
// >= N. That is exactly-once only if a re-sent batch has the same boundaries as the one
// that may have been applied: a batch (C, N'] re-cut after a crash with N' > N would apply
// the records of (C, N] a second time. Delivery cursors are saved lazily (and on purpose
// behind the realtime's own commit point), so after a crash of the API the records past
// the saved cursor are re-sent, cut at the ends recorded here.
//
// File DIR/delivery-<name>.rounds:
//   boot <kernel boot id>\n         first line
//   <end seq>\n                     one per round, appended BEFORE the round is first sent
// Rounds are appended with plain write(2), no fsync: the file is needed after a crash of
// the process, and the page cache survives that. (The rewrite at start and every few
// hundred KB is the atomic small-file write of base/durable_file.h.) A machine crash may
// lose its tail; the boot id tells (a different boot id after restart), and the sender
// then sends every record past the cursor as a batch of its own (one record, one seq —
// exactly-once whatever was applied before), up to the last record of the recovered log.
//
// Not thread-safe (the API's event loop owns it).
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "base/status.h"

namespace clickatron {

class DeliveryRounds {
 public:
  DeliveryRounds() = default;
  ~DeliveryRounds();
  DeliveryRounds(const DeliveryRounds&) = delete;
  DeliveryRounds& operator=(const DeliveryRounds&) = delete;

  // dir/delivery-<name>.rounds, the file of consumer `name`.
  static std::string Path(const std::string& dir, const std::string& name);

  // Opens dir/delivery-<name>.rounds. Loads the ends > cursor (in order) into *ends and
  // sets *trusted: true when the file was written since this machine booted (so it holds
  // every round sent), false when it is missing or from an earlier boot. Then starts a new
  // file holding only those ends.
  Status Open(const std::string& dir, const std::string& name, uint64_t cursor,
              std::deque<uint64_t>* ends, bool* trusted);

  // Records that a round ending at `end` is about to be sent.
  Status Append(uint64_t end);

  // Rewrites the file with only `live` (the ends past the saved cursor) once it has grown
  // past a few hundred KB, so it stays small.
  Status MaybeCompact(const std::deque<uint64_t>& live);

  const std::string& path() const { return path_; }

 private:
  Status Rewrite(const std::deque<uint64_t>& live);

  std::string path_;
  std::string boot_id_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// DIR/delivery-<name>.ring: the ring id (16 hex digits, realtime/ring_id.h) of the realtime
// data directory consumer `name`'s rounds went to. `clickatron-oplog replay` removes it with
// the rounds file, so the stream then delivers to whatever directory the shard now has.
std::string DeliveredRingPath(const std::string& dir, const std::string& name);

// The kernel's boot id (/proc/sys/kernel/random/boot_id), "" if unreadable.
std::string KernelBootId();

}  // namespace clickatron
