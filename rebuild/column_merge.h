// Merging the multi-column values of one archive key found in several segments.
//
// Total records (`ymdh:n …`) and subtotal records (`subkey:n …`) both hold columns in
// ascending name order. Merging two values walks both once: equal names are summed, a
// column whose sum is 0 is dropped (docs/formats.md#archive-records), the rest keep their order. The common case
// of the nightly merge — yesterday's hours appended after every earlier hour — is a plain
// concatenation, checked by comparing one boundary pair of names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/int128.h"
#include "base/status.h"

namespace clickatron::rebuild {

// Merges `more` into *acc (both well-formed sorted column values; *acc may be empty).
// Counts are 128-bit (docs/formats.md#counts). Fails on a malformed value or a sum that
// leaves 128 bits, naming the column.
Status MergeColumnsInto(std::string* acc, std::string_view more, std::string* scratch);

// Sums by name, in name order, exact in 128 bits.
using ColumnSums = std::map<std::string_view, Int128>;
// Adds the columns of `key,value\n` lines (well formed: they were parsed before) to *sums,
// as views into lines; false when a sum leaves 128 bits. The rollups' slow path
// (rollup.h), out of the way of their int64 sums.
bool SumColumnsOfLines(std::string_view lines, ColumnSums* sums);

// Number of columns of a well-formed value (its spaces + 1; 0 when empty).
uint64_t CountColumns(std::string_view value);

}  // namespace clickatron::rebuild
