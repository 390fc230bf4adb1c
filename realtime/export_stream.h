// ExportStream: one /export?day=D reply, streamed in chunks of about 64 KiB.
//
// The slot (its file merged with its pending memtable) is walked in key order one chunk at a time; the next chunk is produced only
// once the previous one has drained to the socket, so memory stays at one chunk whatever
// the slot's size. Between chunks the loop serves other requests (increments keep
// arriving), so every chunk re-seeks its cursor just past the last key sent rather than
// keeping a cursor across writes or flushes. The bytes sent are hashed as they go and
// the `#END` footer (keyformat/footer.h) closes the stream. If the slot stops holding the day
// mid-stream the connection is closed without a footer: the reader sees a truncated export,
// never a wrong one.
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "net/request.h"
#include "realtime/ring.h"

namespace clickatron::realtime {

inline constexpr size_t kExportChunkBytes = 64 * 1024;

class ExportStream {
 public:
  // on_done runs once the stream is over (complete, failed or client gone); it may
  // destroy this object.
  ExportStream(Ring* ring, int64_t day, std::unique_ptr<net::AsyncReply> reply,
               std::function<void(ExportStream*)> on_done);
  ~ExportStream();
  ExportStream(const ExportStream&) = delete;
  ExportStream& operator=(const ExportStream&) = delete;

  // Sends the status line and the first chunk.
  void Start();

  uint64_t records() const { return records_; }

 private:
  void Pump();
  void Done();

  Ring* ring_;
  int64_t day_;
  std::unique_ptr<net::AsyncReply> reply_;
  std::function<void(ExportStream*)> on_done_;
  XXH64_state_t* hash_;
  std::string last_key_;
  bool started_ = false;  // last_key_ is meaningful
  uint64_t records_ = 0;
  std::string chunk_;
};

}  // namespace clickatron::realtime
