#include "oplog/frame.h"

#include <xxhash.h>

namespace clickatron::oplog {
namespace {

void PutFixed32(uint32_t v, char* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

void PutFixed64(uint64_t v, char* p) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

uint32_t GetFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint64_t GetFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// A batch's checksum is seeded with ~seq, so the batch bit is covered too: a record frame
// whose bit 31 flips fails its checksum (and is a torn tail or damage as before) instead of
// passing for a batch.
uint64_t Checksum(bool batch, uint64_t seq, std::string_view payload) {
  return PayloadChecksum(batch ? ~seq : seq, payload);
}

void Append(bool batch, uint64_t seq, std::string_view payload, std::string* out) {
  char header[kHeaderSize];
  PutFixed32(static_cast<uint32_t>(payload.size()) | (batch ? kBatchBit : 0), header);
  PutFixed64(seq, header + 4);
  PutFixed64(Checksum(batch, seq, payload), header + 12);
  out->append(header, kHeaderSize);
  out->append(payload);
}

FrameState Decode(std::string_view bytes, bool allow_batch, Frame* frame) {
  frame->seq = 0;
  frame->payload = {};
  frame->size = 0;
  frame->batch = false;
  if (bytes.size() < 4) return FrameState::kShort;
  uint32_t length = GetFixed32(bytes.data());
  if (allow_batch && (length & kBatchBit) != 0) {
    frame->batch = true;
    length &= ~kBatchBit;
  }
  if (length == 0 || length > kMaxPayload) return FrameState::kBadLength;
  frame->size = kHeaderSize + length;
  if (bytes.size() < kHeaderSize) return FrameState::kShort;
  frame->seq = GetFixed64(bytes.data() + 4);
  if (bytes.size() < frame->size) return FrameState::kShort;
  frame->payload = bytes.substr(kHeaderSize, length);
  if (GetFixed64(bytes.data() + 12) != Checksum(frame->batch, frame->seq, frame->payload)) {
    return FrameState::kBadChecksum;
  }
  return FrameState::kOk;
}

}  // namespace

uint64_t PayloadChecksum(uint64_t seq, std::string_view payload) {
  return XXH64(payload.data(), payload.size(), seq);
}

void AppendFrame(uint64_t seq, std::string_view payload, std::string* out) {
  Append(false, seq, payload, out);
}

void AppendBatchFrame(uint64_t first_seq, std::string_view block, std::string* out) {
  Append(true, first_seq, block, out);
}

FrameState DecodeFrame(std::string_view bytes, Frame* frame) { return Decode(bytes, false, frame); }

FrameState DecodeLogFrame(std::string_view bytes, Frame* frame) {
  return Decode(bytes, true, frame);
}

const char* FrameStateText(FrameState state) {
  switch (state) {
    case FrameState::kOk: return "ok";
    case FrameState::kShort: return "frame cut short";
    case FrameState::kBadLength: return "impossible record length";
    case FrameState::kBadChecksum: return "bad checksum";
  }
  return "?";
}

}  // namespace clickatron::oplog
