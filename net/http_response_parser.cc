#include "net/http_response_parser.h"

#include <strings.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>

namespace clickatron::net {
namespace {

// A body with a Content-Length up to this is allocated at once and received straight into
// the response; a larger declared length grows as the bytes arrive.
constexpr size_t kPreallocateBodyBytes = 4u << 20;

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// True iff the comma-separated header value holds token (case-insensitive).
bool HasToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (EqualsNoCase(item, token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

void HttpResponseParser::Start(bool head, size_t max_response_bytes,
                               std::function<bool(std::string_view)> on_chunk) {
  response_ = HttpResponse();
  on_chunk_ = std::move(on_chunk);
  max_response_bytes_ = max_response_bytes;
  head_ = head;
  phase_ = Phase::kStatus;
  remaining_ = 0;
  body_filled_ = 0;
  preallocated_ = false;
  keep_alive_ = true;
  error_.clear();
}

HttpResponseParser::State HttpResponseParser::Fail(std::string text) {
  error_ = std::move(text);
  keep_alive_ = false;
  return State::kFailed;
}

namespace {

// One CRLF (or LF) line from the front of *data, if complete.
inline bool TakeLine(std::string_view* data, std::string_view* out) {
  size_t nl = data->find('\n');
  if (nl == std::string_view::npos) return false;
  *out = data->substr(0, nl > 0 && (*data)[nl - 1] == '\r' ? nl - 1 : nl);
  data->remove_prefix(nl + 1);
  return true;
}

}  // namespace

[[gnu::always_inline]] inline HttpResponseParser::State HttpResponseParser::Line(std::string_view line) {
  switch (phase_) {
    case Phase::kStatus: return StatusLine(line);
    case Phase::kHeaders: return HeaderLine(line);
    case Phase::kChunkSize: return ChunkSizeLine(line);
    case Phase::kChunkEnd:
      if (!line.empty()) return Fail("invalid HTTP response");
      phase_ = Phase::kChunkSize;
      return State::kMore;
    case Phase::kTrailers: return line.empty() ? State::kComplete : State::kMore;
    default: return State::kMore;  // body phases take bytes, not lines (BodyBytes)
  }
}

// "HTTP/1.1 200 OK"
[[gnu::always_inline]] inline HttpResponseParser::State HttpResponseParser::StatusLine(std::string_view l) {
  if (l.size() < 12 || l.substr(0, 7) != "HTTP/1." || l[8] != ' ') return Fail("invalid HTTP response");
  int code = 0;
  auto [end, ec] = std::from_chars(l.data() + 9, l.data() + 12, code);
  if (ec != std::errc() || end != l.data() + 12 || code < 100) return Fail("invalid HTTP response");
  response_.status = code;
  response_.headers.clear();
  response_.headers.reserve(8);  // one allocation for a backend's usual 3-6 headers
  keep_alive_ = l[7] == '1';  // HTTP/1.1 keeps the connection unless told otherwise
  phase_ = Phase::kHeaders;
  return State::kMore;
}

// "Name: value", or the empty line that ends the headers.
[[gnu::always_inline]] inline HttpResponseParser::State HttpResponseParser::HeaderLine(std::string_view l) {
  if (!l.empty()) {
    size_t colon = l.find(':');
    if (colon == std::string_view::npos || colon == 0) return Fail("invalid HTTP response");
    std::string_view value = l.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    response_.headers.emplace_back(l.substr(0, colon), value);
    return State::kMore;
  }
  if (response_.status < 200 && response_.status != 101) {  // interim (100 Continue)
    phase_ = Phase::kStatus;
    return State::kMore;
  }
  if (StartBody() == State::kFailed) return State::kFailed;
  return phase_ == Phase::kStatus ? State::kComplete : State::kMore;  // kStatus: no body
}

// "1a2b[;extension]": the next chunk's size in hex; 0 ends the body.
[[gnu::always_inline]] inline HttpResponseParser::State HttpResponseParser::ChunkSizeLine(std::string_view l) {
  size_t semi = l.find(';');
  std::string_view hex = l.substr(0, semi);
  while (!hex.empty() && hex.back() == ' ') hex.remove_suffix(1);
  uint64_t size = 0;
  auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), size, 16);
  if (hex.empty() || ec != std::errc() || end != hex.data() + hex.size()) return Fail("invalid HTTP response");
  if (size == 0) {
    phase_ = Phase::kTrailers;
  } else {
    remaining_ = size;
    phase_ = Phase::kChunkData;
  }
  return State::kMore;
}

// Body bytes: a Content-Length body, a chunk's data, or everything until the close.
[[gnu::always_inline]] inline HttpResponseParser::State HttpResponseParser::BodyBytes(std::string_view* data) {
  if (phase_ == Phase::kUntilClose) {
    if (!Body(*data)) return State::kFailed;
    data->remove_prefix(data->size());
    return State::kMore;
  }
  size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, data->size()));
  if (!Body(data->substr(0, take))) return State::kFailed;
  data->remove_prefix(take);
  remaining_ -= take;
  if (remaining_ != 0) return State::kMore;
  if (phase_ == Phase::kBody) return State::kComplete;
  phase_ = Phase::kChunkEnd;
  return State::kMore;
}

// The steps above return kMore to go on parsing, kComplete or kFailed to stop there.
HttpResponseParser::State HttpResponseParser::Parse(std::string_view* data) {
  while (!data->empty()) {
    State state;
    if (phase_ == Phase::kBody || phase_ == Phase::kChunkData || phase_ == Phase::kUntilClose) {
      state = BodyBytes(data);
    } else {
      std::string_view line;
      if (!TakeLine(data, &line)) return State::kMore;
      state = Line(line);
    }
    if (state != State::kMore) return state;
  }
  return State::kMore;
}

HttpResponseParser::State HttpResponseParser::Close() {
  if (phase_ == Phase::kUntilClose) {
    keep_alive_ = false;
    return State::kComplete;
  }
  return Fail("connection closed before a complete response");
}

// After the head: how the body is framed (RFC 7230 3.3.3).
HttpResponseParser::State HttpResponseParser::StartBody() {
  std::optional<std::string_view> connection = response_.Header("Connection");
  if (connection.has_value()) {
    if (HasToken(*connection, "close")) keep_alive_ = false;
    if (HasToken(*connection, "keep-alive")) keep_alive_ = true;
  }
  int code = response_.status;
  if (head_ || code == 204 || code == 304) {
    phase_ = Phase::kStatus;
    return State::kMore;
  }
  std::optional<std::string_view> te = response_.Header("Transfer-Encoding");
  if (te.has_value() && HasToken(*te, "chunked")) {
    phase_ = Phase::kChunkSize;
    return State::kMore;
  }
  std::optional<std::string_view> length = response_.Header("Content-Length");
  if (!length.has_value()) {
    keep_alive_ = false;
    phase_ = Phase::kUntilClose;
    return State::kMore;
  }
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(length->data(), length->data() + length->size(), n);
  if (length->empty() || ec != std::errc() || end != length->data() + length->size()) {
    return Fail("invalid HTTP response");
  }
  if (!on_chunk_ && n > max_response_bytes_) {
    return Fail("response body larger than " + std::to_string(max_response_bytes_) + " bytes");
  }
  if (n == 0) {
    phase_ = Phase::kStatus;
    return State::kMore;
  }
  remaining_ = n;
  phase_ = Phase::kBody;
  if (!on_chunk_ && n <= kPreallocateBodyBytes) {
    response_.body.resize(static_cast<size_t>(n));
    preallocated_ = true;
    body_filled_ = 0;
  }
  return State::kMore;
}

bool HttpResponseParser::Body(std::string_view bytes) {
  if (bytes.empty()) return true;
  if (on_chunk_) {
    if (!on_chunk_(bytes)) {
      Fail("aborted by receiver");
      return false;
    }
    return true;
  }
  if (preallocated_) {
    std::memcpy(response_.body.data() + body_filled_, bytes.data(), bytes.size());
    body_filled_ += bytes.size();
    return true;
  }
  if (response_.body.size() + bytes.size() > max_response_bytes_) {
    Fail("response body larger than " + std::to_string(max_response_bytes_) + " bytes");
    return false;
  }
  response_.body.append(bytes);
  return true;
}

char* HttpResponseParser::DirectBody(size_t* space) {
  if (phase_ != Phase::kBody || !preallocated_) return nullptr;
  *space = response_.body.size() - body_filled_;
  return response_.body.data() + body_filled_;
}

HttpResponseParser::State HttpResponseParser::DirectReceived(size_t n) {
  body_filled_ += n;
  remaining_ -= n;
  return remaining_ == 0 ? State::kComplete : State::kMore;
}

}  // namespace clickatron::net
