#include "net/json.h"

#include <charconv>
#include <cmath>

#include "base/int128.h"

namespace clickatron::net {

namespace {

// Length of the valid UTF-8 sequence starting at s[0] (2..4), or 0 if there is none.
// Rejects overlong forms, UTF-16 surrogates and code points above U+10FFFF (RFC 3629).
size_t Utf8SequenceLength(const unsigned char* s, size_t available) {
  unsigned char c = s[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;           // overlong
    if (c == 0xED) hi = 0x9F;           // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;           // overlong
    if (c == 0xF4) hi = 0x8F;           // above U+10FFFF
  } else {
    return 0;
  }
  if (available < n) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  }
  return n;
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // Copy the longest run that needs no escaping in one append.
    size_t run = i;
    while (run < n && p[run] >= 0x20 && p[run] < 0x7F && p[run] != '"' && p[run] != '\\') {
      ++run;
    }
    if (run > i) {
      out->append(s.data() + i, run - i);
      i = run;
      continue;
    }
    unsigned char c = p[i];
    if (c >= 0x80) {
      size_t len = Utf8SequenceLength(p + i, n - i);
      if (len == 0) {
        out->append("\\ufffd");
        ++i;
      } else {
        out->append(s.data() + i, len);
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default: {  // other control bytes and DEL
        char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out->append(esc, 6);
      }
    }
    ++i;
  }
  out->push_back('"');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ > 0) {
    uint64_t bit = uint64_t{1} << (depth_ - 1);
    if (first_ & bit) {
      first_ &= ~bit;
    } else {
      out_->push_back(',');
    }
  }
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_->push_back('{');
  first_ |= uint64_t{1} << depth_;
  ++depth_;
}

void JsonWriter::EndObject() {
  --depth_;
  out_->push_back('}');
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_->push_back('[');
  first_ |= uint64_t{1} << depth_;
  ++depth_;
}

void JsonWriter::EndArray() {
  --depth_;
  out_->push_back(']');
}

void JsonWriter::Key(std::string_view name) {
  BeforeValue();
  AppendJsonString(name, out_);
  out_->push_back(':');
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendJsonString(value, out_);
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), value);
  out_->append(buf, r.ptr);
}

void JsonWriter::Count(__int128 value) {
  BeforeValue();
  AppendInt128(out_, value);
}

void JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), value);
  out_->append(buf, r.ptr);
}

void JsonWriter::Double(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_->append("null");
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), value);
  out_->append(buf, r.ptr);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_->append(value ? "true" : "false");
}

void JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
}

void JsonWriter::Raw(std::string_view raw) {
  BeforeValue();
  out_->append(raw);
}

std::string JsonEnvelope(int status_code, std::string_view status_txt,
                         std::string_view data_json) {
  std::string out;
  out.reserve(48 + status_txt.size() + data_json.size());
  out.append("{\"status_code\": ");
  out.append(std::to_string(status_code));
  out.append(", \"status_txt\": ");
  AppendJsonString(status_txt, &out);
  out.append(", \"data\": ");
  out.append(data_json);
  out.push_back('}');
  return out;
}

std::string JsonErrorEnvelope(int status_code, std::string_view status_txt,
                              std::string_view message) {
  std::string out = JsonEnvelope(status_code, status_txt, "null");
  if (!message.empty()) {
    out.pop_back();  // the closing brace
    out.append(", \"message\": ");
    AppendJsonString(message, &out);
    out.push_back('}');
  }
  return out;
}

}  // namespace clickatron::net
