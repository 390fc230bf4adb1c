#include "oplog/batch.h"

#include <zstd.h>

#include <cstdlib>

#include "base/varint.h"
#include "oplog/frame.h"

namespace clickatron::oplog {
namespace {

// One decompression context per thread: readers run on the API's loop, recovery and the
// tool on theirs.
ZSTD_DCtx* ThreadDecompressor() {
  struct Holder {
    ZSTD_DCtx* ctx = ZSTD_createDCtx();
    ~Holder() { ZSTD_freeDCtx(ctx); }
  };
  thread_local Holder holder;
  return holder.ctx;
}

}  // namespace

struct BatchEncoder::Context {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ~Context() { ZSTD_freeCCtx(cctx); }
};

BatchEncoder::BatchEncoder() : ctx_(new Context) {}
BatchEncoder::~BatchEncoder() { delete ctx_; }

void BatchEncoder::Add(uint64_t seq, std::string_view payload) {
  if (body_.empty()) first_seq_ = last_seq_ = seq;
  PutVarint64(&body_, seq - last_seq_);
  PutVarint64(&body_, payload.size());
  body_.append(payload);
  last_seq_ = seq;
}

void BatchEncoder::Compress(std::string* out) {
  block_.resize(ZSTD_compressBound(body_.size()));
  const size_t n = ZSTD_compressCCtx(ctx_->cctx, block_.data(), block_.size(), body_.data(),
                                     body_.size(), kBatchLevel);
  // Only a bug can make zstd fail on a buffer of compressBound bytes.
  if (ZSTD_isError(n)) std::abort();
  AppendBatchFrame(first_seq_, std::string_view(block_.data(), n), out);
  body_.clear();
}

void BatchEncoder::Flush(std::string_view plain, std::string* out) {
  if (plain.empty()) return;
  const size_t before = out->size();
  if (plain.size() >= kMinBatchInput) {
    Compress(out);
    if (out->size() - before < plain.size()) return;
    out->resize(before);  // it did not shrink: the records as they are
  }
  body_.clear();
  out->append(plain);
}

void BatchEncoder::Encode(std::string_view frames, std::string* out) {
  out->clear();
  body_.clear();
  size_t run_start = 0, at = 0;
  Frame frame;
  while (at < frames.size()) {
    DecodeFrame(frames.substr(at), &frame);  // the queue's own frames: whole and good
    if (!body_.empty() && body_.size() + frame.payload.size() + 20 > kTargetBatchBody) {
      Flush(frames.substr(run_start, at - run_start), out);
      run_start = at;
    }
    Add(frame.seq, frame.payload);
    at += frame.size;
  }
  Flush(frames.substr(run_start, at - run_start), out);
}

Status DecompressBatch(std::string_view block, std::string* body) {
  body->clear();
  const unsigned long long size = ZSTD_getFrameContentSize(block.data(), block.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    return Status::Error("compressed batch is not a zstd frame with its size");
  }
  if (size == 0 || size > kMaxBatchBody) {
    return Status::Error("compressed batch of " + std::to_string(size) +
                         " bytes is outside 1.." + std::to_string(kMaxBatchBody));
  }
  body->resize(size);
  const size_t n =
      ZSTD_decompressDCtx(ThreadDecompressor(), body->data(), body->size(), block.data(), block.size());
  if (ZSTD_isError(n) || n != size) {
    body->clear();
    return Status::Error(std::string("compressed batch does not decompress: ") +
                         (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short"));
  }
  return Status::OK();
}

BatchReader::BatchReader(uint64_t first_seq, std::string_view body)
    : body_(body), rest_(body), seq_(first_seq) {
  if (body.empty()) {
    status_ = Status::Error("compressed batch holds no record");
    return;
  }
  // Check every record before handing out the first, so a bad body delivers nothing.
  uint64_t seq = 0;
  std::string_view payload;
  while (Next(&seq, &payload)) {}
  if (!status_.ok()) return;
  last_seq_ = seq;
  rest_ = body_;
  seq_ = first_seq;
  records_ = 0;
  first_ = true;
}

bool BatchReader::Next(uint64_t* seq, std::string_view* payload) {
  if (!status_.ok() || rest_.empty()) return false;
  uint64_t delta = 0, length = 0;
  if (!GetVarint64(&rest_, &delta) || !GetVarint64(&rest_, &length)) {
    status_ = Status::Error("compressed batch record " + std::to_string(records_ + 1) +
                            ": bad varint");
    return false;
  }
  if ((first_ && delta != 0) || (!first_ && delta == 0) || delta > UINT64_MAX - seq_) {
    status_ = Status::Error("compressed batch record " + std::to_string(records_ + 1) +
                            ": seq delta " + std::to_string(delta) + " out of order");
    return false;
  }
  if (length == 0 || length > kMaxPayload || length > rest_.size()) {
    status_ = Status::Error("compressed batch record " + std::to_string(records_ + 1) +
                            ": impossible length " + std::to_string(length));
    return false;
  }
  first_ = false;
  seq_ += delta;
  *seq = seq_;
  *payload = rest_.substr(0, length);
  rest_.remove_prefix(length);
  ++records_;
  return true;
}

}  // namespace clickatron::oplog
