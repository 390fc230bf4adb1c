// The order of every sorted Clickatron file (docs/formats.md#key-order): by key, bytewise, a key sorting
// before any longer key it prefixes. Comparing whole lines instead would put `ab+,1`
// before `ab,1` (since '+' < ','), and hashes contain '+', '/' and '='.
#pragma once

#include <string_view>

namespace clickatron {

// <0, 0, >0 as memcmp over the shorter length, then shorter first.
inline int CompareKeys(std::string_view a, std::string_view b) { return a.compare(b); }

// The key of a line (the bytes before the first separator; the whole line if none).
inline std::string_view KeyOfLine(std::string_view line, char separator = ',') {
  return line.substr(0, line.find(separator));
}

// Orders whole lines by their keys.
struct LineKeyLess {
  char separator = ',';
  bool operator()(std::string_view a, std::string_view b) const {
    return CompareKeys(KeyOfLine(a, separator), KeyOfLine(b, separator)) < 0;
  }
};

}  // namespace clickatron
