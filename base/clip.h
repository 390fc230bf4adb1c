// Clipped: a user-supplied string cut short for an error message, so that a 4 KB key or a
// whole response body does not flood the message or the log line.
//
//   Clipped("abc", 64)                 "abc"
//   Clipped(<100 x 'k'>, 64)           <64 x 'k'> "..."
//   ClippedLine("HTTP 500\nboom\n", 200)  "HTTP 500 boom"
//
// Each caller picks the length that suits its message (64 for a parameter, 200 for a key
// or a record line). Bytes are cut, not characters: a multi-byte UTF-8 character at the
// cut may be split; the JSON writer (net/json.h) shows the broken sequence as U+FFFD.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace clickatron {

// text when it is at most max bytes, else its first max bytes followed by "...".
std::string Clipped(std::string_view text, size_t max);

// Clipped, on one line: CR and LF become spaces and trailing spaces are dropped (a
// response body quoted in a message).
std::string ClippedLine(std::string_view text, size_t max);

}  // namespace clickatron
