#include "keyformat/key_value.h"

#include <charconv>

namespace clickatron {
namespace {

std::string_view Trim(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<KeyValueText> KeyValueText::Parse(std::string_view text) {
  KeyValueText kv;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = Trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return Status::Error("line " + std::to_string(line_no) + ": '" + std::string(line) + "' is not 'key = value'");
    }
    kv.entries_.push_back(
        Entry{std::string(Trim(line.substr(0, eq))), std::string(Trim(line.substr(eq + 1))), line_no});
  }
  return kv;
}

std::string KeyValueText::Get(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return e.value;
  }
  return "";
}

std::vector<std::string> KeyValueText::GetAll(std::string_view key) const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) {
    if (e.key == key) out.push_back(e.value);
  }
  return out;
}

bool KeyValueText::Has(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return true;
  }
  return false;
}

std::string KeyValueText::Format() const {
  std::string out;
  for (const Entry& e : entries_) out += e.key + " = " + e.value + "\n";
  return out;
}

bool ParseCount(std::string_view text, uint64_t* value) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace clickatron
