// Multi-column archive values (docs/formats.md#archive-records): `name:n name:n …`, one space between columns.
//
// Total records name columns by YMDH token (ascending time); subtotal records by stored
// subkey (ascending bytes). ColumnReader walks a value in place — no allocation per
// column — because archive reads and the nightly merge parse billions of them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/int128.h"
#include "base/status.h"

namespace clickatron {

// A column's count is 128-bit: an hour's count is a sum of increments and may leave int64
// (docs/formats.md#counts).
struct Column {
  std::string_view name;
  Int128 count = 0;
};

class ColumnReader {
 public:
  explicit ColumnReader(std::string_view value) : rest_(value) {}

  // Reads the next column into *column. Returns false at the end or on a malformed
  // column; then status() tells which (OK at a clean end).
  bool Next(Column* column);
  const Status& status() const { return status_; }

 private:
  bool Fail(std::string_view token, const char* why);
  std::string_view rest_;
  Status status_;
};

// Appends one column, with the separating space when *out already holds columns
// (that is, when out->size() > start, the offset where this value began).
// A count that fits int64 (nearly all) costs no 128-bit formatting.
void AppendColumn(std::string* out, size_t start, std::string_view name, Int128 count);

// Checks a whole value: well formed, names strictly ascending, no zero counts.
Status ValidateColumns(std::string_view value);

}  // namespace clickatron
