// The #END footer of exports and segments (keyformat/footer.h): FootedStreamCheck on
// arbitrary streams cut into arbitrary chunks, and ParseFooter on arbitrary lines.
//
// Beyond "no crash":
//   * FootedStreamCheck's verdict does not depend on where the stream is cut into chunks,
//     and equals a plain model: the stream is whole lines, the last one a footer that
//     FooterCheck (fed every line before it) verifies; then records() is their count;
//   * the check accepts exactly what FooterCheck's writer wrote: any whole-line body
//     followed by FormatFooter of its count and digest is accepted, and with the count or
//     the hash one off it is refused;
//   * ParseFooter(FormatFooter(f)) == f, and a footer line that parses formats to a line
//     that parses to the same footer.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/check.h"
#include "keyformat/footer.h"

using namespace clickatron;

namespace {

// The model: split into lines; every line but the last is a record.
bool ModelAccepts(std::string_view stream, uint64_t* records) {
  if (stream.empty() || stream.back() != '\n') return false;
  FooterCheck check;
  std::string_view rest = stream;
  std::string_view last;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (rest.empty()) {
      last = line;
    } else {
      check.AddLineWithNewline(line);
    }
  }
  *records = check.count();
  return IsFooter(last) && check.Verify(last).ok();
}

// Feeds stream in chunks whose sizes come from `cuts`.
Status CheckInChunks(std::string_view stream, const std::vector<size_t>& cuts, uint64_t* records) {
  FootedStreamCheck check;
  size_t i = 0;
  for (size_t cut : cuts) {
    const size_t n = std::min(cut, stream.size() - i);
    check.Add(stream.substr(i, n));
    i += n;
  }
  check.Add(stream.substr(i));
  *records = check.records();
  return check.Finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  std::vector<size_t> cuts;
  const size_t n_cuts = in.ConsumeIntegralInRange<size_t>(0, 8);
  for (size_t i = 0; i < n_cuts; ++i) cuts.push_back(in.ConsumeIntegralInRange<size_t>(0, 64));
  const std::string stream = in.ConsumeRemainingBytesAsString();

  // Arbitrary streams: chunking changes nothing; the model agrees.
  uint64_t model_records = 0, whole_records = 0, chunked_records = 0;
  const bool model = ModelAccepts(stream, &model_records);
  const Status whole = CheckInChunks(stream, {}, &whole_records);
  const Status chunked = CheckInChunks(stream, cuts, &chunked_records);
  FUZZ_CHECK(whole.ok() == model, "the stream check agrees with the model");
  FUZZ_CHECK(chunked.ok() == model, "chunking does not change the verdict");
  FUZZ_CHECK(whole.message() == chunked.message(), "chunking does not change the error");
  if (model) {
    FUZZ_CHECK(whole_records == model_records && chunked_records == model_records,
               "records() counts the records");
  }

  // What the writer writes is accepted; a footer one off is refused.
  std::string body = stream;
  if (!body.empty() && body.back() != '\n') body += '\n';
  FooterCheck writer;
  uint64_t lines = 0;
  for (char c : body) lines += c == '\n';
  writer.AddBytes(body, lines);
  const Footer footer{writer.count(), writer.digest()};
  const std::string line = FormatFooter(footer);
  uint64_t records = 0;
  FUZZ_CHECK(CheckInChunks(body + line, cuts, &records).ok(), "a written footer is accepted");
  FUZZ_CHECK(records == lines, "every written line is counted");
  FUZZ_CHECK(!CheckInChunks(body + FormatFooter({footer.count + 1, footer.xxh64}), cuts, &records).ok(),
             "a wrong count is refused");
  FUZZ_CHECK(!CheckInChunks(body + FormatFooter({footer.count, footer.xxh64 ^ 1}), cuts, &records).ok(),
             "a wrong hash is refused");

  // Footer lines.
  Result<Footer> parsed = ParseFooter(line);
  FUZZ_CHECK(parsed.ok() && parsed->count == footer.count && parsed->xxh64 == footer.xxh64,
             "a formatted footer parses back");
  Result<Footer> any = ParseFooter(stream);
  if (any.ok()) {
    FUZZ_CHECK(IsFooter(stream), "a footer starts with #END");
    Result<Footer> again = ParseFooter(FormatFooter(*any));
    FUZZ_CHECK(again.ok() && again->count == any->count && again->xxh64 == any->xxh64,
               "a parsed footer formats to the same footer");
  }
  return 0;
}
