// The `#END` footer that closes every /export stream (SPEC 3.2):
//
//   #END count=<records> xxh64=<16 lowercase hex digits>\n
//
// count is the number of `key,value\n` lines before the footer; xxh64 is XXH64 (seed 0) of
// every byte before the footer line. A reader that stops early, drops a chunk or sees a
// corrupted byte gets a mismatch, so an incomplete export is always detected. '#' cannot
// start a realtime key, so the footer can never be mistaken for a record.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::realtime {

inline constexpr std::string_view kFooterPrefix = "#END ";
inline constexpr uint64_t kExportHashSeed = 0;

struct ExportFooter {
  uint64_t count = 0;
  uint64_t xxh64 = 0;
};

// Appends the footer line, '\n' included.
void AppendExportFooter(std::string* out, const ExportFooter& footer);

// Parses a footer line (with or without its '\n').
Result<ExportFooter> ParseExportFooter(std::string_view line);

// Checks a whole export: the last line is a footer whose count and hash match the bytes
// before it. The error says what is wrong ("no #END footer: the export is truncated").
Status VerifyExport(std::string_view text);

}  // namespace clickatron::realtime
