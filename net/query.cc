#include "net/query.h"

namespace clickatron::net {

Status PercentDecode(std::string_view in, bool plus_as_space, std::string* out) {
  size_t bad = PercentDecodeAppend(in, plus_as_space, out);
  if (bad == std::string_view::npos) return Status::OK();
  return Status::Error("bad percent-encoding '" + std::string(in.substr(bad, 3)) + "'");
}

void PercentEncode(std::string_view in, std::string* out) {
  static const char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : in) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                      (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out->push_back(static_cast<char>(c));
    } else {
      out->push_back('%');
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
}

std::string PercentEncode(std::string_view in) {
  std::string out;
  out.reserve(in.size() * 3);
  PercentEncode(in, &out);
  return out;
}

void Query::Clear() {
  buffer_.clear();
  params_.clear();
  status_ = Status::OK();
  bad_param_.clear();
}

Status Query::Parse(std::string_view raw) {
  Clear();
  // Decoded text is never longer than the raw text, so after this reserve the buffer never
  // reallocates and the views below stay put.
  buffer_.reserve(raw.size());
  while (!raw.empty()) {
    size_t amp = raw.find('&');
    std::string_view segment = raw.substr(0, amp);
    raw = amp == std::string_view::npos ? std::string_view() : raw.substr(amp + 1);
    if (segment.empty()) continue;
    size_t eq = segment.find('=');
    std::string_view raw_name = segment.substr(0, eq);
    std::string_view raw_value =
        eq == std::string_view::npos ? std::string_view() : segment.substr(eq + 1);

    size_t name_start = buffer_.size();
    bool bad = PercentDecodeAppend(raw_name, true, &buffer_) != std::string_view::npos;
    size_t value_start = buffer_.size();
    bad = bad || PercentDecodeAppend(raw_value, true, &buffer_) != std::string_view::npos;
    if (bad) {
      buffer_.resize(name_start);
      bad_param_.assign(raw_name);
      status_ = Status::Error("bad percent-encoding in query parameter '" + bad_param_ + "'");
      return status_;
    }
    const char* base = buffer_.data();
    params_.push_back({std::string_view(base + name_start, value_start - name_start),
                       std::string_view(base + value_start, buffer_.size() - value_start)});
  }
  return status_;
}

std::optional<std::string_view> Query::Get(std::string_view name) const {
  for (const QueryParam& p : params_) {
    if (p.name == name) return p.value;
  }
  return std::nullopt;
}

size_t Query::Count(std::string_view name) const {
  size_t n = 0;
  for (const QueryParam& p : params_) n += p.name == name;
  return n;
}

}  // namespace clickatron::net
