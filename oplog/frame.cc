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

}  // namespace

uint64_t PayloadChecksum(uint64_t seq, std::string_view payload) {
  return XXH64(payload.data(), payload.size(), seq);
}

void AppendFrame(uint64_t seq, std::string_view payload, std::string* out) {
  char header[kHeaderSize];
  PutFixed32(static_cast<uint32_t>(payload.size()), header);
  PutFixed64(seq, header + 4);
  PutFixed64(PayloadChecksum(seq, payload), header + 12);
  out->append(header, kHeaderSize);
  out->append(payload);
}

FrameState DecodeFrame(std::string_view bytes, Frame* frame) {
  frame->seq = 0;
  frame->payload = {};
  frame->size = 0;
  if (bytes.size() < 4) return FrameState::kShort;
  const uint32_t length = GetFixed32(bytes.data());
  if (length == 0 || length > kMaxPayload) return FrameState::kBadLength;
  frame->size = kHeaderSize + length;
  if (bytes.size() < kHeaderSize) return FrameState::kShort;
  frame->seq = GetFixed64(bytes.data() + 4);
  if (bytes.size() < frame->size) return FrameState::kShort;
  frame->payload = bytes.substr(kHeaderSize, length);
  if (GetFixed64(bytes.data() + 12) != PayloadChecksum(frame->seq, frame->payload)) {
    return FrameState::kBadChecksum;
  }
  return FrameState::kOk;
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
