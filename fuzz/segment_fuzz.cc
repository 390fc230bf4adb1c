// Oplog segment checking and recovery's view of a file (oplog/segment.h ScanSegmentBytes,
// what recovery and `clickatron-oplog check` run on every segment), on arbitrary bytes and
// on torn copies of good segments; and segment file names.
//
// Beyond "no crash":
//   * a scan that succeeds splits the file exactly: valid_bytes + tail_bytes +
//     padding_bytes == file_bytes; the padding is zeros; a tail has a problem and >= 1
//     frame; the visited records are consecutive frames from offset 0 that re-encode to
//     their bytes (a compressed batch's records all at its frame's offset, and exactly the
//     records its body holds), with seqs increasing, above after_seq and not below the
//     name's seq;
//   * cutting the file at valid_bytes (what recovery does to the last segment) scans
//     clean with the same records;
//   * a good segment of NUL-free payloads, as record frames or as the sync thread's
//     compressed batches, cut anywhere (a torn write), maybe followed by zero padding, scans
//     OK with exactly the records of the frames whose bytes are all there;
//   * a name that parses as a segment name is the name SegmentFileName gives its seq.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/check.h"
#include "oplog/batch.h"
#include "oplog/frame.h"
#include "oplog/segment.h"

using namespace clickatron::oplog;

namespace {

struct Visited {
  uint64_t seq;
  std::string payload;
  uint64_t offset;
};

clickatron::Result<SegmentScan> Scan(std::string_view bytes, uint64_t name_seq, uint64_t after,
                                     std::vector<Visited>* visited) {
  visited->clear();
  return ScanSegmentBytes(SegmentFile{name_seq, "seg"}, bytes, after,
                          [&](uint64_t seq, std::string_view payload, uint64_t offset) {
                            visited->push_back({seq, std::string(payload), offset});
                          });
}

void CheckScan(std::string_view bytes, uint64_t name_seq, uint64_t after, const SegmentScan& scan,
               const std::vector<Visited>& visited) {
  FUZZ_CHECK(scan.file_bytes == bytes.size(), "file_bytes is the size");
  FUZZ_CHECK(scan.valid_bytes + scan.tail_bytes + scan.padding_bytes == scan.file_bytes,
             "records, bad tail and padding make up the file");
  for (size_t i = bytes.size() - scan.padding_bytes; i < bytes.size(); ++i) {
    FUZZ_CHECK(bytes[i] == 0, "padding is zeros");
  }
  FUZZ_CHECK(scan.tail_problem.empty() == (scan.tail_bytes == 0), "a tail has a problem");
  FUZZ_CHECK(scan.tail_bytes == 0 || scan.tail_records >= 1, "a tail holds a frame");
  FUZZ_CHECK(scan.records == visited.size(), "every record is visited");
  uint64_t at = 0, last = after;
  std::string body;
  for (size_t i = 0; i < visited.size();) {
    const Visited& v = visited[i];
    FUZZ_CHECK(v.offset == at, "records are consecutive from offset 0");
    Frame frame;
    FUZZ_CHECK(DecodeLogFrame(bytes.substr(at), &frame) == FrameState::kOk,
               "a record's frame is good");
    if (!frame.batch) {
      FUZZ_CHECK(v.seq > last && v.seq >= name_seq, "seqs increase from the name's");
      std::string again;
      AppendFrame(v.seq, v.payload, &again);
      FUZZ_CHECK(bytes.substr(at, again.size()) == again, "a record re-encodes to its bytes");
      last = v.seq;
      ++i;
    } else {
      FUZZ_CHECK(DecompressBatch(frame.payload, &body).ok(), "a visited batch decompresses");
      BatchReader batch(frame.seq, body);
      uint64_t seq = 0;
      std::string_view payload;
      while (batch.Next(&seq, &payload)) {
        FUZZ_CHECK(i < visited.size() && visited[i].offset == at && visited[i].seq == seq &&
                       visited[i].payload == payload,
                   "a batch's records are visited at its offset");
        FUZZ_CHECK(seq > last && seq >= name_seq, "seqs increase from the name's");
        last = seq;
        ++i;
      }
      FUZZ_CHECK(batch.status().ok(), "a visited batch reads");
    }
    at += frame.size;
  }
  FUZZ_CHECK(at == scan.valid_bytes, "the records end at valid_bytes");
  if (!visited.empty()) {
    FUZZ_CHECK(scan.first_seq == visited.front().seq && scan.last_seq == visited.back().seq,
               "first and last seq");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  uint64_t named = 0;
  if (ParseSegmentFileName(text, &named)) {
    FUZZ_CHECK(SegmentFileName(named) == text, "a segment name is its seq's name");
  }

  FuzzedDataProvider in(data, size);
  const uint64_t name_seq = in.ConsumeIntegralInRange<uint64_t>(0, 8);
  const uint64_t after = in.ConsumeIntegralInRange<uint64_t>(0, 8);
  const bool build = in.ConsumeBool();
  std::vector<Visited> visited;
  if (!build) {
    const std::string bytes = in.ConsumeRemainingBytesAsString();
    clickatron::Result<SegmentScan> scan = Scan(bytes, name_seq, after, &visited);
    if (!scan.ok()) return 0;
    CheckScan(bytes, name_seq, after, *scan, visited);
    const std::vector<Visited> first = visited;
    clickatron::Result<SegmentScan> cut =
        Scan(std::string_view(bytes).substr(0, scan->valid_bytes), name_seq, after, &visited);
    FUZZ_CHECK(cut.ok() && cut->tail_bytes == 0 && cut->padding_bytes == 0,
               "the valid prefix scans clean");
    FUZZ_CHECK(cut->records == scan->records && visited.size() == first.size(),
               "the valid prefix keeps every record");
    return 0;
  }

  // A good segment (records of increasing seqs), then a torn write and maybe padding.
  std::string bytes;
  std::vector<size_t> ends;
  uint64_t seq = std::max(name_seq, after + 1);
  while (in.remaining_bytes() > 2 && ends.size() < 32) {
    // Without NUL bytes, as the API's text payloads: a payload holding a whole frame (which
    // needs NULs) makes a torn tail after it a hard error by design (docs/oplog.md#recovery).
    std::string payload = in.ConsumeRandomLengthString(64);
    for (char& c : payload) c = c == '\0' ? 'p' : c;
    if (payload.empty()) payload = "p";
    AppendFrame(seq, payload, &bytes);
    ends.push_back(bytes.size());
    seq += in.ConsumeIntegralInRange<uint64_t>(1, 3);
  }
  if (in.ConsumeBool()) {  // as the sync thread writes a group commit
    std::string encoded;
    BatchEncoder().Encode(bytes, &encoded);
    bytes = std::move(encoded);
  }
  // The records each frame holds, and where it ends.
  std::vector<size_t> counts;
  ends.clear();
  {
    Frame frame;
    std::string body;
    for (size_t at = 0; at < bytes.size(); at += frame.size) {
      FUZZ_CHECK(DecodeLogFrame(std::string_view(bytes).substr(at), &frame) == FrameState::kOk,
                 "a written frame decodes");
      size_t n = 1;
      if (frame.batch) {
        FUZZ_CHECK(DecompressBatch(frame.payload, &body).ok(), "a written batch decompresses");
        BatchReader batch(frame.seq, body);
        uint64_t s;
        std::string_view p;
        for (n = 0; batch.Next(&s, &p);) ++n;
      }
      counts.push_back(n);
      ends.push_back(at + frame.size);
    }
  }
  const std::string full = bytes;
  const size_t cut = in.ConsumeIntegralInRange<size_t>(0, bytes.size());
  bytes.resize(cut);
  const size_t padding = in.ConsumeIntegralInRange<size_t>(0, 64);
  bytes.append(padding, '\0');
  clickatron::Result<SegmentScan> scan = Scan(bytes, name_seq, after, &visited);
  FUZZ_CHECK(scan.ok(), "a torn good segment is never corrupt");
  CheckScan(bytes, name_seq, after, *scan, visited);
  // A frame is whole when its bytes are all there: before the cut, or (a payload ending in
  // zeros) completed by the padding.
  size_t whole = 0, records = 0;
  for (size_t start = 0; whole < ends.size(); start = ends[whole], records += counts[whole++]) {
    const size_t n = ends[whole] - start;
    if (std::string_view(bytes).substr(start, n) != std::string_view(full).substr(start, n)) break;
  }
  FUZZ_CHECK(scan->records == records, "every record of a whole frame before the cut is read");
  return 0;
}
