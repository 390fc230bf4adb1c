#include "keyformat/rollup_hours.h"

#include <charconv>

#include "base/clip.h"
#include "keyformat/ymdh.h"

namespace clickatron {

bool RollupDayAndHour(std::string_view ymdh, int* day, int* hour) {
  if (ymdh.size() != kYmdhSize) return false;
  *day = YmdhSymbolValue(ymdh[2]);
  *hour = YmdhSymbolValue(ymdh[3]);
  return *day >= 1 && *hour >= 0 && *hour <= 23;  // a symbol's value is at most 31
}

bool MarkRollupHour(std::string_view ymdh, RollupHours* hours) {
  int day = 0, hour = 0;
  if (!RollupDayAndHour(ymdh, &day, &hour)) return false;
  (*hours)[size_t(day)] |= uint32_t(1) << hour;
  return true;
}

void AppendRollupMask(std::string* out, size_t start, char day_symbol, uint32_t hours) {
  if (out->size() > start) out->push_back(' ');
  out->push_back(kRollupMaskMark);
  out->push_back(day_symbol);
  out->push_back(':');
  char buf[12];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, hours);
  (void)ec;
  out->append(buf, ptr);
}

void AppendRollupMasks(std::string* out, size_t start, const RollupHours& hours) {
  for (int d = 1; d <= 31; ++d) {
    if (hours[size_t(d)] != 0) AppendRollupMask(out, start, kYmdhAlphabet[d], hours[size_t(d)]);
  }
}

Result<std::string_view> SplitRollupMask(std::string_view token, std::string_view value, RollupHours* hours) {
  hours->fill(0);
  if (token.size() != 2 && token.size() != 3) {
    return Status::Error("rollup time '" + Clipped(token, 16) + "' is not 2 or 3 symbols");
  }
  int last = 0;
  int columns = 0;
  while (!value.empty() && value[0] == kRollupMaskMark) {
    const size_t end = std::min(value.find(' '), value.size());
    const std::string_view column = value.substr(0, end);
    const int day = column.size() >= 4 && column[2] == ':' ? YmdhSymbolValue(column[1]) : -1;
    uint32_t mask = 0;
    auto [ptr, ec] = std::from_chars(column.data() + std::min<size_t>(3, column.size()),
                                     column.data() + column.size(), mask);
    if (day < 1 || ec != std::errc() || ptr != column.data() + column.size()) {  // '0' is no day
      return Status::Error("rollup mask column '" + Clipped(column, 40) + "' is not .{day}:{hours}");
    }
    if (mask == 0 || mask > kAllHoursOfDay) {
      return Status::Error("rollup mask column '" + Clipped(column, 40) + "' has hours outside 1 .. 2^24 - 1");
    }
    if (day <= last) return Status::Error("rollup mask column '" + Clipped(column, 40) + "' is out of day order");
    if (token.size() == 3 && (columns > 0 || column[1] != token[2])) {
      return Status::Error("day rollup '" + std::string(token) + "' has a mask of another day: '" +
                           Clipped(column, 40) + "'");
    }
    (*hours)[size_t(day)] = mask;
    last = day;
    ++columns;
    value.remove_prefix(end);
    if (!value.empty()) {
      value.remove_prefix(1);
      if (value.empty()) return Status::Error("rollup mask is followed by a trailing space");
    }
  }
  if (columns == 0) return Status::Error("rollup '" + std::string(token) + "' has no mask of its hours");
  return value;
}

}  // namespace clickatron
