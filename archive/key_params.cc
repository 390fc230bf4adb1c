#include "archive/key_params.h"

#include "net/query.h"
#include "wire/refusals.h"

namespace clickatron::archive {

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
  after_.clear();
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
      // '+' kept literally: archive keys contain '+' (key_params.h).
      if (net::PercentDecodeAppend(value, false, &buffer_) != std::string_view::npos) {
        return Fail(wire::kInvalidArgKey, "bad percent-encoding in key");
      }
      if (buffer_.size() - start > kMaxKeyBytes) {
        return Fail(wire::kInvalidArgKey, "key is longer than " + std::to_string(kMaxKeyBytes) +
                                           " bytes");
      }
      if (buffer_.size() == start) return Fail(wire::kInvalidArgKey, "key is empty");
      ends_.push_back(buffer_.size());
    } else if (name == "after" && mode == Mode::kFirstKey) {
      after_.clear();
      if (net::PercentDecodeAppend(value, false, &after_) != std::string_view::npos) {
        return Fail("INVALID_ARG_AFTER", "bad percent-encoding in after");
      }
      if (after_.size() > kMaxKeyBytes) {
        return Fail("INVALID_ARG_AFTER", "after is longer than " + std::to_string(kMaxKeyBytes) + " bytes");
      }
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
