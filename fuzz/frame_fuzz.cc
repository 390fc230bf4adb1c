// Oplog frames (oplog/frame.h) on arbitrary bytes, and frames of arbitrary records.
//
// Beyond "no crash":
//   * a frame that decodes (kOk) re-encodes with AppendFrame to exactly the bytes it was
//     decoded from; kShort means the bytes end before the header or the length says;
//     kBadLength means a length of 0 or over kMaxPayload;
//   * AppendFrame's frame of any (seq >= 1, payload) decodes to that seq and payload, and
//     with any one bit flipped it never decodes as a good frame.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "oplog/frame.h"

using namespace clickatron::oplog;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Frame frame;
  const FrameState state = DecodeFrame(bytes, &frame);
  FUZZ_CHECK(FrameStateText(state)[0] != '?', "every state has a text");
  uint32_t length = 0;
  if (size >= 4) std::memcpy(&length, data, 4);  // little-endian hosts only (x86, arm64)
  switch (state) {
    case FrameState::kOk: {
      std::string again;
      AppendFrame(frame.seq, frame.payload, &again);
      FUZZ_CHECK(frame.size == again.size() && bytes.substr(0, frame.size) == again,
                 "a decoded frame re-encodes to its bytes");
      break;
    }
    case FrameState::kShort:
      FUZZ_CHECK(size < kHeaderSize || size < kHeaderSize + length, "short means short");
      break;
    case FrameState::kBadLength:
      FUZZ_CHECK(size >= 4 && (length == 0 || length > kMaxPayload), "a bad length is bad");
      break;
    case FrameState::kBadChecksum:
      FUZZ_CHECK(frame.size == kHeaderSize + length && size >= frame.size,
                 "a bad checksum is over a whole frame");
      break;
  }

  FuzzedDataProvider in(data, size);
  const uint64_t seq = in.ConsumeIntegralInRange<uint64_t>(1, UINT64_MAX);
  const size_t flip = in.ConsumeIntegral<uint16_t>();
  std::string payload = in.ConsumeRemainingBytesAsString();
  if (payload.empty()) payload = "x";
  std::string encoded;
  AppendFrame(seq, payload, &encoded);
  FUZZ_CHECK(DecodeFrame(encoded, &frame) == FrameState::kOk, "an encoded frame decodes");
  FUZZ_CHECK(frame.seq == seq && frame.payload == payload && frame.size == encoded.size(),
             "an encoded frame decodes to its record");
  const size_t bit = flip % (encoded.size() * 8);
  encoded[bit / 8] = static_cast<char>(encoded[bit / 8] ^ (1 << (bit % 8)));
  FUZZ_CHECK(DecodeFrame(encoded, &frame) != FrameState::kOk, "a flipped bit is caught");
  return 0;
}
