// Oplog frames (oplog/frame.h) and compressed batches (oplog/batch.h) on arbitrary bytes,
// and frames of arbitrary records.
//
// Beyond "no crash":
//   * a frame that decodes (kOk) re-encodes with AppendFrame to exactly the bytes it was
//     decoded from; kShort means the bytes end before the header or the length says;
//     kBadLength means a length of 0 or over kMaxPayload;
//   * AppendFrame's frame of any (seq >= 1, payload) decodes to that seq and payload, and
//     with any one bit flipped it never decodes as a good frame;
//   * DecodeFrame (records only) never takes a batch frame; a batch frame that decodes
//     re-encodes with AppendBatchFrame to its bytes, and when its body reads, the same
//     records written by BatchEncoder read back identical;
//   * arbitrary bytes as a batch block or body decompress and read without crashing, never
//     to more than kMaxBatchBody bytes.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/check.h"
#include "oplog/batch.h"
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

  Frame any;
  if (DecodeLogFrame(bytes, &any) == FrameState::kOk && any.batch) {
    FUZZ_CHECK(state == FrameState::kBadLength, "a record decoder refuses a batch");
    std::string again;
    AppendBatchFrame(any.seq, any.payload, &again);
    FUZZ_CHECK(bytes.substr(0, any.size) == again, "a decoded batch frame re-encodes to its bytes");
  }
  // The bytes as a compressed block and as a body.
  std::string body;
  if (DecompressBatch(bytes, &body).ok()) FUZZ_CHECK(body.size() <= kMaxBatchBody, "bounded");
  for (std::string_view candidate : {std::string_view(body), bytes}) {
    BatchReader reader(1, candidate);
    std::vector<std::pair<uint64_t, std::string>> records;
    uint64_t seq = 0;
    std::string_view payload;
    while (reader.Next(&seq, &payload)) records.emplace_back(seq, payload);
    if (!reader.status().ok() || records.empty()) continue;
    BatchEncoder encoder;
    for (const auto& [s, p] : records) encoder.Add(s, p);
    std::string frame;
    encoder.Compress(&frame);
    FUZZ_CHECK(DecodeLogFrame(frame, &any) == FrameState::kOk && any.batch,
               "a batch frame decodes");
    std::string body2;
    FUZZ_CHECK(DecompressBatch(any.payload, &body2).ok(), "a batch decompresses");
    BatchReader back(any.seq, body2);
    size_t i = 0;
    while (back.Next(&seq, &payload)) {
      FUZZ_CHECK(i < records.size() && records[i].first == seq && records[i].second == payload,
                 "a batch reads back its records");
      ++i;
    }
    FUZZ_CHECK(back.status().ok() && i == records.size(), "a batch reads back every record");
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
