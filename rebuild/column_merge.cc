#include "rebuild/column_merge.h"

#include <algorithm>

#include "keyformat/columns.h"

namespace clickatron::rebuild {
namespace {

std::string_view FirstName(std::string_view value) {
  return value.substr(0, value.find(':'));
}

std::string_view LastName(std::string_view value) {
  const size_t space = value.rfind(' ');
  std::string_view last = space == std::string_view::npos ? value : value.substr(space + 1);
  return last.substr(0, last.find(':'));
}

}  // namespace

bool SumColumnsOfLines(std::string_view lines, ColumnSums* sums) {
  for (size_t pos = 0; pos < lines.size();) {
    const size_t nl = std::min(lines.find('\n', pos), lines.size());
    const std::string_view line = lines.substr(pos, nl - pos);
    pos = nl + 1;
    const size_t comma = line.find(',');
    ColumnReader reader(comma == std::string_view::npos ? std::string_view() : line.substr(comma + 1));
    Column c;
    while (reader.Next(&c)) {
      if (!AddInt128(&sums->try_emplace(c.name, 0).first->second, c.count)) return false;
    }
  }
  return true;
}

uint64_t CountColumns(std::string_view value) {
  if (value.empty()) return 0;
  return uint64_t(std::count(value.begin(), value.end(), ' ')) + 1;
}

Status MergeColumnsInto(std::string* acc, std::string_view more, std::string* scratch) {
  if (more.empty()) return Status::OK();
  if (acc->empty()) {
    acc->assign(more);
    return Status::OK();
  }
  // Disjoint and in order: concatenate (the nightly case for totals).
  if (LastName(*acc) < FirstName(more)) {
    acc->push_back(' ');
    acc->append(more);
    return Status::OK();
  }
  if (LastName(more) < FirstName(*acc)) {
    scratch->assign(more);
    scratch->push_back(' ');
    scratch->append(*acc);
    acc->swap(*scratch);
    return Status::OK();
  }
  scratch->clear();
  ColumnReader a(*acc), b(more);
  Column ca, cb;
  bool has_a = a.Next(&ca), has_b = b.Next(&cb);
  while (has_a || has_b) {
    if (has_a && (!has_b || ca.name < cb.name)) {
      AppendColumn(scratch, 0, ca.name, ca.count);
      has_a = a.Next(&ca);
    } else if (has_b && (!has_a || cb.name < ca.name)) {
      AppendColumn(scratch, 0, cb.name, cb.count);
      has_b = b.Next(&cb);
    } else {
      Int128 sum = ca.count;
      if (!AddInt128(&sum, cb.count)) {
        return Status::Error("column '" + std::string(ca.name) + "' sums past 128 bits");
      }
      if (sum != 0) AppendColumn(scratch, 0, ca.name, sum);
      has_a = a.Next(&ca);
      has_b = b.Next(&cb);
    }
  }
  if (!a.status().ok()) return a.status();
  if (!b.status().ok()) return b.status();
  acc->swap(*scratch);
  return Status::OK();
}

}  // namespace clickatron::rebuild
