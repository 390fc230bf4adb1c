// The HTTP client's response parser (net/http_response_parser.h) on arbitrary server bytes,
// fed whole and in pieces cut anywhere (as recv() returns them), collected and streamed.
//
// Beyond "no crash":
//   * the outcome does not depend on how the bytes are cut: the same state, error, status,
//     headers, body and leftover, whole or in pieces;
//   * streaming (on_chunk) hands over exactly the bytes collecting puts in the body;
//   * a complete collected body stays within max_response_bytes; a Content-Length response
//     that completes has exactly that many body bytes;
//   * after the bytes, Close() completes only a response framed by the close.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/check.h"
#include "net/http_response_parser.h"

using namespace clickatron::net;
using State = HttpResponseParser::State;

namespace {

constexpr size_t kMaxBody = 4096;

struct Outcome {
  State state = State::kMore;
  State at_close = State::kMore;
  std::string error;
  HttpResponse response;
  std::string streamed;
  std::string leftover;
};

Outcome Run(std::string_view bytes, const std::vector<size_t>& pieces, bool head, bool stream) {
  Outcome o;
  HttpResponseParser p;
  if (stream) {
    p.Start(head, kMaxBody, [&o](std::string_view chunk) {
      FUZZ_CHECK(!chunk.empty(), "no empty chunks");
      o.streamed.append(chunk);
      return true;
    });
  } else {
    p.Start(head, kMaxBody, nullptr);
  }
  std::string buffer;
  size_t at = 0, k = 0;
  while (o.state == State::kMore && at < bytes.size()) {
    const size_t n = pieces.empty() ? bytes.size() : std::max<size_t>(1, pieces[k++ % pieces.size()]);
    buffer.append(bytes.substr(at, n));
    at += std::min(n, bytes.size() - at);
    std::string_view data(buffer);
    o.state = p.Parse(&data);
    if (o.state == State::kComplete) o.leftover = std::string(data) + std::string(bytes.substr(at));
    buffer.erase(0, buffer.size() - data.size());
  }
  o.at_close = o.state == State::kMore ? p.Close() : o.state;
  o.error = p.error();
  o.response = p.response();
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const bool head = in.ConsumeBool();
  std::vector<size_t> pieces;
  const size_t n = in.ConsumeIntegralInRange<size_t>(1, 8);
  for (size_t i = 0; i < n; ++i) pieces.push_back(in.ConsumeIntegralInRange<size_t>(1, 40));
  const std::string bytes = in.ConsumeRemainingBytesAsString();

  const Outcome whole = Run(bytes, {}, head, false);
  const Outcome cut = Run(bytes, pieces, head, false);
  FUZZ_CHECK(whole.state == cut.state && whole.at_close == cut.at_close, "the same outcome in pieces");
  FUZZ_CHECK(whole.error == cut.error, "the same error in pieces");
  FUZZ_CHECK(whole.response.status == cut.response.status && whole.response.headers == cut.response.headers,
             "the same head in pieces");
  if (whole.state == State::kComplete) {
    FUZZ_CHECK(whole.response.body == cut.response.body, "the same body in pieces");
    FUZZ_CHECK(whole.leftover == cut.leftover, "the same leftover in pieces");
    FUZZ_CHECK(whole.response.body.size() <= kMaxBody, "a collected body stays within the limit");
    auto length = whole.response.Header("Content-Length");
    const bool chunked = whole.response.Header("Transfer-Encoding").has_value();
    if (length.has_value() && !chunked && !head && whole.response.status != 204 &&
        whole.response.status != 304) {
      FUZZ_CHECK(std::to_string(whole.response.body.size()) == *length ||
                     std::stoull(std::string(*length)) == whole.response.body.size(),
                 "a Content-Length body has that many bytes");
    }
  }
  if (whole.at_close == State::kComplete) {
    FUZZ_CHECK(whole.response.body == cut.response.body, "the same body at close in pieces");
  }

  const Outcome streamed = Run(bytes, pieces, head, true);
  if (streamed.at_close == State::kComplete && whole.at_close == State::kComplete) {
    FUZZ_CHECK(streamed.streamed == whole.response.body, "streaming hands over the body's bytes");
    FUZZ_CHECK(streamed.response.body.empty(), "a streamed body is not collected");
  }
  return 0;
}
