#include "keyformat/hex64.h"

namespace clickatron {

std::string Hex64(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(kHex64Size, '0');
  for (size_t i = kHex64Size; i-- > 0;) {
    out[i] = kDigits[value & 15];
    value >>= 4;
  }
  return out;
}

Result<uint64_t> ParseHex64(std::string_view text) {
  auto bad = [&] { return Status::Error("'" + std::string(text.substr(0, 40)) + "' is not 16 lowercase hex digits"); };
  if (text.size() != kHex64Size) return bad();
  uint64_t v = 0;
  for (char c : text) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return bad();
    }
    v = (v << 4) | uint64_t(d);
  }
  return v;
}

}  // namespace clickatron
