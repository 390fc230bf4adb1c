#include "rebuild/footer.h"

#include <charconv>
#include <cstdio>

namespace clickatron::rebuild {

std::string Hex64(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[size_t(i)] = kDigits[value & 15];
    value >>= 4;
  }
  return out;
}

Result<uint64_t> ParseHex64(std::string_view text) {
  uint64_t v = 0;
  std::string shown(text.substr(0, 40));
  shown.insert(shown.begin(), '\'');
  shown += "' is not 16 lowercase hex digits";
  if (text.size() != 16) return Status::Error(std::move(shown));
  for (char c : text) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return Status::Error(std::move(shown));
    v = (v << 4) | uint64_t(d);
  }
  return v;
}

std::string FormatFooter(const Footer& footer) {
  char buf[80];
  const int n = std::snprintf(buf, sizeof buf, "#END count=%llu xxh64=%016llx\n",
                              static_cast<unsigned long long>(footer.count),
                              static_cast<unsigned long long>(footer.xxh64));
  return std::string(buf, size_t(n));
}

Result<Footer> ParseFooter(std::string_view line) {
  const std::string shown(line.substr(0, 100));
  const Status bad = Status::Error("footer '" + shown + "' is not '#END count=<n> xxh64=<16 hex>'");
  if (!line.starts_with(kFooterPrefix)) return bad;
  std::string_view rest = line.substr(kFooterPrefix.size());
  if (!rest.starts_with("count=")) return bad;
  rest.remove_prefix(6);
  const size_t space = rest.find(' ');
  if (space == std::string_view::npos) return bad;
  Footer f;
  const std::string_view count = rest.substr(0, space);
  auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), f.count);
  if (ec != std::errc() || ptr != count.data() + count.size() || count.empty()) return bad;
  rest.remove_prefix(space + 1);
  if (!rest.starts_with("xxh64=")) return bad;
  Result<uint64_t> h = ParseHex64(rest.substr(6));
  if (!h.ok()) return bad;
  f.xxh64 = *h;
  return f;
}

Status FooterCheck::Verify(std::string_view footer_line) const {
  Result<Footer> f = ParseFooter(footer_line);
  if (!f.ok()) return f.status();
  if (f->count != count_) {
    return Status::Error("footer says " + std::to_string(f->count) + " records but " +
                         std::to_string(count_) + " were read");
  }
  if (f->xxh64 != digest()) {
    return Status::Error("checksum mismatch: footer says xxh64=" + Hex64(f->xxh64) +
                         " but the bytes hash to " + Hex64(digest()));
  }
  return Status::OK();
}

}  // namespace clickatron::rebuild
