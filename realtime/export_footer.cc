#include "realtime/export_footer.h"

#include <xxhash.h>

#include <charconv>
#include <cstdio>

namespace clickatron::realtime {

void AppendExportFooter(std::string* out, const ExportFooter& footer) {
  char buf[96];
  int n = std::snprintf(buf, sizeof buf, "#END count=%llu xxh64=%016llx\n",
                        static_cast<unsigned long long>(footer.count),
                        static_cast<unsigned long long>(footer.xxh64));
  out->append(buf, static_cast<size_t>(n));
}

Result<ExportFooter> ParseExportFooter(std::string_view line) {
  if (line.ends_with('\n')) line.remove_suffix(1);
  const std::string_view bad = "malformed #END footer '";
  if (!line.starts_with(kFooterPrefix)) return Status::Error(std::string(bad) + std::string(line.substr(0, 80)) + "'");
  std::string_view rest = line.substr(kFooterPrefix.size());
  ExportFooter f;
  constexpr std::string_view kCount = "count=", kHash = " xxh64=";
  if (!rest.starts_with(kCount)) return Status::Error(std::string(bad) + std::string(line) + "'");
  rest.remove_prefix(kCount.size());
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), f.count);
  if (ec != std::errc()) return Status::Error(std::string(bad) + std::string(line) + "'");
  rest.remove_prefix(static_cast<size_t>(p - rest.data()));
  if (!rest.starts_with(kHash) || rest.size() != kHash.size() + 16) {
    return Status::Error(std::string(bad) + std::string(line) + "'");
  }
  rest.remove_prefix(kHash.size());
  for (char c : rest) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return Status::Error(std::string(bad) + std::string(line) + "'");
    }
  }
  std::from_chars(rest.data(), rest.data() + rest.size(), f.xxh64, 16);
  return f;
}

Status VerifyExport(std::string_view text) {
  if (!text.ends_with('\n')) return Status::Error("no #END footer: the export is truncated");
  size_t start = text.rfind('\n', text.size() - 2);
  start = start == std::string_view::npos ? 0 : start + 1;
  std::string_view last = text.substr(start);
  if (!last.starts_with(kFooterPrefix)) return Status::Error("no #END footer: the export is truncated");
  Result<ExportFooter> f = ParseExportFooter(last);
  if (!f.ok()) return f.status();
  std::string_view body = text.substr(0, start);
  uint64_t lines = 0;
  for (char c : body) lines += c == '\n';
  if (lines != f->count) {
    return Status::Error("export has " + std::to_string(lines) + " records but its footer says " +
                         std::to_string(f->count));
  }
  if (XXH64(body.data(), body.size(), kExportHashSeed) != f->xxh64) {
    return Status::Error("export bytes do not match the footer's xxh64");
  }
  return Status::OK();
}

}  // namespace clickatron::realtime
