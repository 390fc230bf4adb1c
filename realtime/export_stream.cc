#include "realtime/export_stream.h"

#include <cstdio>

#include "keyformat/footer.h"
#include "keyformat/ymdh.h"

namespace clickatron::realtime {

ExportStream::ExportStream(Ring* ring, int64_t day, std::unique_ptr<net::AsyncReply> reply,
                           std::function<void(ExportStream*)> on_done)
    : ring_(ring), day_(day), reply_(std::move(reply)), on_done_(std::move(on_done)),
      hash_(XXH64_createState()) {
  XXH64_reset(hash_, kFooterHashSeed);
  reply_->SetOnClose([this] { Done(); });
}

ExportStream::~ExportStream() { XXH64_freeState(hash_); }

void ExportStream::Start() {
  reply_->AddHeader("Content-Type", "text/plain; charset=utf-8");
  reply_->StartChunked(200);
  Pump();
}

void ExportStream::Done() {
  auto done = std::move(on_done_);
  on_done_ = nullptr;
  if (done) done(this);
}

void ExportStream::Pump() {
  std::unique_ptr<MergedCursor> cursor = ring_->Cursor(day_);
  if (cursor == nullptr) {
    std::fprintf(stderr, "realtime: export of %s stopped: the slot no longer holds it\n",
                 FormatDay(day_).c_str());
    reply_.reset();  // closes the connection mid-stream: no footer, a visible truncation
    Done();
    return;
  }
  chunk_.clear();
  cursor->Seek(last_key_, {}, started_);
  while (cursor->Valid() && chunk_.size() < kExportChunkBytes) {
    chunk_.append(cursor->key()).push_back(',');
    cursor->AppendValue(&chunk_);
    chunk_.push_back('\n');
    ++records_;
    last_key_.assign(cursor->key());
    started_ = true;
    cursor->Next();
  }
  const bool end = !cursor->Valid();
  XXH64_update(hash_, chunk_.data(), chunk_.size());
  if (!end) {
    reply_->SendChunk(chunk_, [this] { Pump(); });
    return;
  }
  chunk_ += FormatFooter(Footer{records_, XXH64_digest(hash_)});
  reply_->SendChunk(chunk_);
  reply_->EndChunked();
  Done();
}

}  // namespace clickatron::realtime
