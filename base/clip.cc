#include "base/clip.h"

namespace clickatron {

std::string Clipped(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  std::string out(text.substr(0, max));
  out += "...";
  return out;
}

std::string ClippedLine(std::string_view text, size_t max) {
  std::string out = Clipped(text, max);
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace clickatron
