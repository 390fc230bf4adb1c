// The `#END` footer: the last line of a realtime export and of every segment file, so that
// a reader knows it got every byte (docs/formats.md#export-footer).
//
//   key,value\n ... key,value\n#END count=<records> xxh64=<Hex64>\n
//
//   count   decimal, the number of lines before the footer
//   xxh64   16 lowercase hex digits (hex64.h): XXH64, seed 0, of every byte before the
//           footer line, the '\n' of the last record included
//
// No Clickatron key starts with '#', so the footer is never mistaken for a record. A stream
// without a footer was cut short; one whose count or hash differs was damaged: both are
// refused. The realtime server writes the footer; clickatron-rebuild writes it under every
// segment and checks it on every export and segment it reads.
#pragma once

#define XXH_STATIC_LINKING_ONLY  // XXH64_state_t on the stack, no malloc per hash
#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron {

inline constexpr std::string_view kFooterPrefix = "#END ";
inline constexpr uint64_t kFooterHashSeed = 0;

struct Footer {
  uint64_t count = 0;
  uint64_t xxh64 = 0;
};

// "#END count=N xxh64=HEX\n".
std::string FormatFooter(const Footer& footer);

// True when line is meant as a footer (starts with "#END "), well-formed or not.
inline bool IsFooter(std::string_view line) { return line.starts_with(kFooterPrefix); }

// Parses a footer line, with or without its '\n'. Error:
// "footer '#END count=3' is not '#END count=<n> xxh64=<16 hex>'".
Result<Footer> ParseFooter(std::string_view line);

// The running count and hash of the lines before a footer, fed as they are read; then
// checks the footer against them.
//   FooterCheck check;
//   while (reader.Next(&line)) { if (IsFooter(line)) {...Verify(line)...} check.AddLineWithNewline(line); }
class FooterCheck {
 public:
  FooterCheck() { XXH64_reset(&state_, kFooterHashSeed); }
  // Adds one record line; its '\n' follows it in memory: line.data()[line.size()].
  // Short lines gather in a small buffer hashed in one call: a call a ~30-byte line was
  // 4 % of a merge.
  void AddLineWithNewline(std::string_view line) {
    const size_t n = line.size() + 1;
    if (pending_ + n > sizeof buffer_) Flush();
    if (n > sizeof buffer_) {
      XXH64_update(&state_, line.data(), n);
    } else {
      std::memcpy(buffer_ + pending_, line.data(), n);
      pending_ += n;
    }
    ++count_;
  }
  // Adds raw bytes that hold `lines` whole lines.
  void AddBytes(std::string_view bytes, uint64_t lines) {
    Flush();
    XXH64_update(&state_, bytes.data(), bytes.size());
    count_ += lines;
  }
  uint64_t count() const { return count_; }
  uint64_t digest() const {
    XXH64_state_t all = state_;
    XXH64_update(&all, buffer_, pending_);
    return XXH64_digest(&all);
  }
  // OK when footer_line is a footer matching what was added; else says what differs:
  // "footer says 3 records but 2 were read", "checksum mismatch: footer says xxh64=... but
  // the bytes hash to ...".
  Status Verify(std::string_view footer_line) const;

 private:
  void Flush() {
    XXH64_update(&state_, buffer_, pending_);
    pending_ = 0;
  }
  XXH64_state_t state_;
  uint64_t count_ = 0;
  size_t pending_ = 0;  // bytes of buffer_ not hashed yet
  char buffer_[8192];
};

// Checks a whole footed stream that arrives in chunks cut anywhere (an HTTP answer, a file
// read in blocks): every line but the last is counted and hashed; the last is held back,
// since it must be the footer. Finish() says whether the stream ended with a matching one.
class FootedStreamCheck {
 public:
  void Add(std::string_view chunk);
  // OK when the stream ended with a footer that matches everything before it; errors say
  // "the answer is empty (no #END footer)", "... (truncated)", or what FooterCheck says.
  Status Finish() const;
  // Records counted so far (all of them once Finish() is OK).
  uint64_t records() const { return check_.count(); }

 private:
  FooterCheck check_;
  std::string held_;
};

}  // namespace clickatron
