#include "archive/key_params.h"

namespace clickatron::archive {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Appends the decoding of in ('+' kept literally); false on a bad escape. Runs between
// escapes are appended whole (most keys have none, or one '|' sent as %7C).
bool Decode(std::string_view in, std::string* out) {
  while (!in.empty()) {
    size_t pct = in.find('%');
    out->append(in.substr(0, pct));
    if (pct == std::string_view::npos) return true;
    if (pct + 2 >= in.size()) return false;
    int hi = HexValue(in[pct + 1]), lo = HexValue(in[pct + 2]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    in.remove_prefix(pct + 3);
  }
  return true;
}

}  // namespace

bool KeyParams::Fail(const char* name, std::string message) {
  error_name_ = name;
  error_ = std::move(message);
  return false;
}

bool KeyParams::Parse(std::string_view raw, Mode mode) {
  buffer_.clear();
  ends_.clear();
  keys_.clear();
  limit_.reset();
  error_.clear();
  error_name_ = "";
  // Keys are decoded into buffer_ and their views made at the end, since buffer_ may
  // grow (and move) while decoding.
  std::string_view limit_raw;
  bool has_limit = false;
  while (!raw.empty()) {
    size_t amp = raw.find('&');
    std::string_view param = raw.substr(0, amp);
    raw.remove_prefix(amp == std::string_view::npos ? raw.size() : amp + 1);
    if (param.empty()) continue;
    size_t eq = param.find('=');
    std::string_view name = param.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? std::string_view()
                                                          : param.substr(eq + 1);
    bool is_key = mode == Mode::kEveryK ? name.starts_with('k')
                                        : (name == "key" && ends_.empty());
    if (is_key) {
      size_t start = buffer_.size();
      if (!Decode(value, &buffer_)) {
        return Fail("INVALID_ARG_KEY", "bad percent-encoding in key");
      }
      if (buffer_.size() - start > kMaxKeyBytes) {
        return Fail("INVALID_ARG_KEY", "key is longer than " + std::to_string(kMaxKeyBytes) +
                                           " bytes");
      }
      if (buffer_.size() == start) return Fail("INVALID_ARG_KEY", "key is empty");
      ends_.push_back(buffer_.size());
    } else if (name == "limit" && !has_limit) {
      limit_raw = value;
      has_limit = true;
    }
  }
  size_t start = 0;
  for (size_t end : ends_) {
    keys_.emplace_back(buffer_.data() + start, end - start);
    start = end;
  }
  if (has_limit) limit_ = limit_raw;
  return true;
}

}  // namespace clickatron::archive
