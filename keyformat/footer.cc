#include "keyformat/footer.h"

#include <charconv>

#include "keyformat/hex64.h"

namespace clickatron {

std::string FormatFooter(const Footer& footer) {
  return std::string(kFooterPrefix) + "count=" + std::to_string(footer.count) + " xxh64=" + Hex64(footer.xxh64) +
         "\n";
}

Result<Footer> ParseFooter(std::string_view line) {
  if (line.ends_with('\n')) line.remove_suffix(1);
  const Status bad =
      Status::Error("footer '" + std::string(line.substr(0, 100)) + "' is not '#END count=<n> xxh64=<16 hex>'");
  if (!IsFooter(line)) return bad;
  std::string_view rest = line.substr(kFooterPrefix.size());
  constexpr std::string_view kCount = "count=", kHash = "xxh64=";
  if (!rest.starts_with(kCount)) return bad;
  rest.remove_prefix(kCount.size());
  const size_t space = rest.find(' ');
  if (space == std::string_view::npos || space == 0) return bad;
  Footer f;
  const std::string_view count = rest.substr(0, space);
  auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), f.count);
  if (ec != std::errc() || ptr != count.data() + count.size()) return bad;
  rest.remove_prefix(space + 1);
  if (!rest.starts_with(kHash)) return bad;
  Result<uint64_t> h = ParseHex64(rest.substr(kHash.size()));
  if (!h.ok()) return bad;
  f.xxh64 = *h;
  return f;
}

Status FooterCheck::Verify(std::string_view footer_line) const {
  Result<Footer> f = ParseFooter(footer_line);
  if (!f.ok()) return f.status();
  if (f->count != count_) {
    return Status::Error("footer says " + std::to_string(f->count) + " records but " + std::to_string(count_) +
                         " were read");
  }
  if (f->xxh64 != digest()) {
    return Status::Error("checksum mismatch: footer says xxh64=" + Hex64(f->xxh64) + " but the bytes hash to " +
                         Hex64(digest()));
  }
  return Status::OK();
}

void FootedStreamCheck::Add(std::string_view chunk) {
  held_.append(chunk);
  const size_t last_nl = held_.rfind('\n');
  if (last_nl == std::string::npos || last_nl == 0) return;
  const size_t prev_nl = held_.rfind('\n', last_nl - 1);
  if (prev_nl == std::string::npos) return;
  // held_[0..prev_nl] are whole lines that are not the last line of the stream so far.
  const std::string_view done(held_.data(), prev_nl + 1);
  uint64_t lines = 0;
  for (char c : done) lines += c == '\n';
  check_.AddBytes(done, lines);
  held_.erase(0, prev_nl + 1);
}

Status FootedStreamCheck::Finish() const {
  if (held_.empty()) return Status::Error("the answer is empty (no #END footer)");
  if (held_.back() != '\n') return Status::Error("the answer ends in the middle of a line (truncated)");
  std::string_view rest(held_);
  rest.remove_suffix(1);
  const size_t nl = rest.rfind('\n');
  FooterCheck check = check_;
  if (nl != std::string_view::npos) {
    check.AddBytes(rest.substr(0, nl + 1), 1);
    rest = rest.substr(nl + 1);
  }
  if (!IsFooter(rest)) return Status::Error("the answer does not end with an #END footer (truncated)");
  return check.Verify(rest);
}

}  // namespace clickatron
