// The `#END` footer that closes a realtime export (SPEC 3.2) and every segment file:
//
//   key,value\n ... key,value\n#END count=<records> xxh64=<16 lowercase hex>\n
//
// count is the number of lines before the footer; xxh64 (seed 0) covers every byte before
// the footer line. No Clickatron key starts with '#', so the footer cannot be mistaken for a
// record. A file without a valid footer, or whose bytes do not match it, was cut short or
// corrupted and is refused.
#pragma once

#define XXH_STATIC_LINKING_ONLY  // XXH64_state_t on the stack, no malloc per hash
#include <xxhash.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::rebuild {

inline constexpr std::string_view kFooterPrefix = "#END ";

struct Footer {
  uint64_t count = 0;
  uint64_t xxh64 = 0;
};

// "#END count=N xxh64=HEX\n".
std::string FormatFooter(const Footer& footer);
// Parses a footer line (without its '\n').
Result<Footer> ParseFooter(std::string_view line);
// 16 lowercase hex digits.
std::string Hex64(uint64_t value);
Result<uint64_t> ParseHex64(std::string_view text);

// Counts and hashes the lines of a footed file as they are read, then checks the footer.
//   FooterCheck check;
//   while (reader.Next(&line)) { if (check.IsFooter(line)) {...break;} check.Add(line); }
class FooterCheck {
 public:
  FooterCheck() { XXH64_reset(&state_, 0); }
  static bool IsFooter(std::string_view line) { return line.starts_with(kFooterPrefix); }
  // Adds one record line (its '\n' follows it in memory: line.data()[line.size()]).
  void AddLineWithNewline(std::string_view line) {
    XXH64_update(&state_, line.data(), line.size() + 1);
    ++count_;
  }
  // Adds raw bytes that hold `lines` whole lines.
  void AddBytes(std::string_view bytes, uint64_t lines) {
    XXH64_update(&state_, bytes.data(), bytes.size());
    count_ += lines;
  }
  uint64_t count() const { return count_; }
  uint64_t digest() const { return XXH64_digest(&state_); }
  // OK when footer_line is a footer matching what was added; else says what differs.
  Status Verify(std::string_view footer_line) const;

 private:
  XXH64_state_t state_;
  uint64_t count_ = 0;
};

}  // namespace clickatron::rebuild
