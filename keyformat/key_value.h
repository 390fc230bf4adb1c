// `key = value` text: the syntax of the generation manifest (manifest.h), a segment's
// `meta` and `merged/meta` of clickatron-rebuild (docs/formats.md#manifest,
// docs/formats.md#rebuild-metadata).
//
//   key = value        split at the first '='; key and value trimmed of ' ', '\t', '\r'
//   # anything         a comment (after leading blanks)
//   (blank)            ignored
//
// A key may repeat (GetAll). A value that is a count is decimal digits only (ParseCount);
// a checksum is Hex64 (hex64.h). Format() writes `key = value\n` per entry, in the order
// they were added, so the same entries always make the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace clickatron {

class KeyValueText {
 public:
  struct Entry {
    std::string key;
    std::string value;
    size_t line = 0;  // 1-based line of the text it was parsed from; 0 when added
  };

  // Errors name the line: "line 2: 'nonsense' is not 'key = value'".
  static Result<KeyValueText> Parse(std::string_view text);

  void Add(std::string key, std::string value) { entries_.push_back(Entry{std::move(key), std::move(value), 0}); }
  // First value of key, or "" when absent.
  std::string Get(std::string_view key) const;
  std::vector<std::string> GetAll(std::string_view key) const;
  bool Has(std::string_view key) const;
  const std::vector<Entry>& entries() const { return entries_; }

  std::string Format() const;

 private:
  std::vector<Entry> entries_;
};

// A count: decimal digits only (no sign, blank or prefix), at most UINT64_MAX. False
// for anything else, "" included.
bool ParseCount(std::string_view text, uint64_t* value);

}  // namespace clickatron
