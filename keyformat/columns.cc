#include "keyformat/columns.h"

#include <charconv>
#include <cstring>

#include "base/clip.h"

namespace clickatron {

bool ColumnReader::Fail(std::string_view token, const char* why) {
  status_ = Status::Error("column '" + Clipped(token, 60) + "' " + why);
  rest_ = {};
  return false;
}

bool ColumnReader::Next(Column* column) {
  if (rest_.empty()) return false;
  const char* begin = rest_.data();
  const char* end = begin + rest_.size();
  const char* space = static_cast<const char*>(std::memchr(begin, ' ', rest_.size()));
  const char* token_end = space ? space : end;
  const std::string_view token(begin, size_t(token_end - begin));
  const char* colon = static_cast<const char*>(std::memchr(begin, ':', token.size()));
  if (colon == nullptr) return Fail(token, "has no ':'");
  if (colon == begin) return Fail(token, "has an empty name");
  if (!ParseInt128(std::string_view(colon + 1, size_t(token_end - colon - 1)), &column->count)) {
    return Fail(token, "has a count that is not a 128-bit integer");
  }
  column->name = std::string_view(begin, size_t(colon - begin));
  if (space == nullptr) {
    rest_ = {};
  } else {
    rest_ = std::string_view(space + 1, size_t(end - space - 1));
    if (rest_.empty()) return Fail(token, "is followed by a trailing space");
  }
  return true;
}

void AppendColumn(std::string* out, size_t start, std::string_view name, Int128 count) {
  // Most names are a few bytes: the column is built on the stack and appended once (four
  // appends were a tenth of an import's line assembly).
  constexpr size_t kShortName = 64;
  char buf[1 + kShortName + 1 + kMaxInt128Chars];
  char* p = buf;
  if (out->size() > start) *p++ = ' ';
  if (name.size() > kShortName) {
    out->append(buf, p).append(name);
    p = buf;
  } else {
    std::memcpy(p, name.data(), name.size());
    p += name.size();
  }
  *p++ = ':';
  if (count >= 0 && count < 10) {  // most counts of an hour
    *p++ = char('0' + int(count));
  } else {
    p = FormatInt128(p, count);
  }
  out->append(buf, p);
}

Status ValidateColumns(std::string_view value) {
  if (value.empty()) return Status::Error("value has no columns");
  ColumnReader reader(value);
  Column c;
  std::string_view previous;
  bool first = true;
  while (reader.Next(&c)) {
    if (!first && !(previous < c.name)) {
      return Status::Error("column '" + std::string(c.name) + "' is not after '" + std::string(previous) + "'");
    }
    if (c.count == 0) return Status::Error("column '" + std::string(c.name) + "' has a zero count");
    previous = c.name;
    first = false;
  }
  return reader.status();
}

}  // namespace clickatron
