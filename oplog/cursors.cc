#include "oplog/cursors.h"

#include <charconv>

#include "base/durable_file.h"
#include "base/read_file.h"

namespace clickatron::oplog {

Status CheckCursorName(std::string_view name) {
  if (name.empty()) return Status::Error("cursor name is empty");
  if (name.size() > 64) return Status::Error("cursor name is longer than 64 bytes");
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == ':' || c == '-';
    if (!ok) {
      return Status::Error("cursor name '" + std::string(name) +
                           "' has a character outside [A-Za-z0-9_.:-]");
    }
  }
  return Status::OK();
}

Result<CursorMap> LoadCursors(const std::string& dir) {
  const std::string path = dir + "/" + kCursorsFile;
  CursorMap cursors;
  std::string text;
  bool exists = false;
  if (Status s = ReadFileIfExists(path, &text, &exists); !s.ok()) return s;
  if (!exists) return cursors;
  std::string_view rest = text;
  int line_no = 0;
  while (!rest.empty()) {
    ++line_no;
    const size_t nl = rest.find('\n');
    const std::string where = path + " line " + std::to_string(line_no) + ": ";
    if (nl == std::string_view::npos) return Status::Error(where + "no newline at the end");
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) return Status::Error(where + "expected 'name seq'");
    std::string_view name = line.substr(0, space);
    std::string_view digits = line.substr(space + 1);
    if (Status s = CheckCursorName(name); !s.ok()) return s.Prefixed(where);
    uint64_t seq = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
      return Status::Error(where + "seq '" + std::string(digits) + "' is not a number");
    }
    if (!cursors.emplace(std::string(name), seq).second) {
      return Status::Error(where + "cursor '" + std::string(name) + "' appears twice");
    }
  }
  return cursors;
}

Status SaveCursors(const std::string& dir, const CursorMap& cursors) {
  std::string text;
  for (const auto& [name, seq] : cursors) {
    text += name;
    text += ' ';
    text += std::to_string(seq);
    text += '\n';
  }
  // On an error the old, whole file stays in place.
  return WriteFileAtomic(dir + "/" + kCursorsFile, text);
}

}  // namespace clickatron::oplog
