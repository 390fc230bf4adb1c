// The hours a day or month rollup record summed (docs/formats.md#rollup-records).
//
// A rollup value starts with one column per day whose hours it summed, in day order, then
// its `{subkey}:{n}` sums:
//
//   c.u|jehiah.c41,.1:3145728 JP:3 US:5       day 2012-04-01: hours 20 and 21 (bits 20, 21)
//   c.u|jehiah.c4,.1:3145728 .2:3 JP:3 US:7   month 2012-04: those, and hours 0 and 1 of day 2
//
// The column's name is '.' and the day's YMDH symbol; its count has bit h set for hour h
// (1 .. 2^24 - 1). A stored subkey never contains '.' (docs/formats.md#keys-and-hashes), so
// a mask column cannot be taken for a subkey nor a subkey for one. A day rollup has exactly
// one mask column, of its own day; a month rollup one per day with hours, at least one.
// A reader uses a rollup only when every hour of its mask is an hour it would otherwise
// read (the API: an hour of the total record, api/rollup_plan.h); a value without a valid
// mask is not a rollup to use.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron {

inline constexpr char kRollupMaskMark = '.';
inline constexpr uint32_t kAllHoursOfDay = (uint32_t(1) << 24) - 1;

// The hours of a rollup: by day of month (1 .. 31), bit h for hour h; [0] is unused.
using RollupHours = std::array<uint32_t, 32>;

// The day of month (1 .. 31) and hour (0 .. 23) that a mask gives the 4-symbol hour token
// `ymdh` (its year and month are not looked at); false when either symbol is outside them.
bool RollupDayAndHour(std::string_view ymdh, int* day, int* hour);

// Marks the hour of `ymdh` in *hours; false, and nothing marked, where RollupDayAndHour is.
bool MarkRollupHour(std::string_view ymdh, RollupHours* hours);

// Appends the mask column of one day (day_symbol: its YMDH day symbol) to a value being
// written, with the separating space when *out already holds columns past start.
void AppendRollupMask(std::string* out, size_t start, char day_symbol, uint32_t hours);

// Appends the mask columns of every day of *hours that has one, in day order.
void AppendRollupMasks(std::string* out, size_t start, const RollupHours& hours);

// Reads the mask columns at the start of the value of the rollup whose time token is
// `token` (3 symbols: a day; 2: a month) into *hours and returns the value's remaining
// `{subkey}:{n}` columns. Fails, naming why, when the mask is missing or malformed: no mask
// column, a day symbol out of 1 .. 31, days not ascending, a count outside 1 .. 2^24 - 1,
// a day rollup whose mask is not exactly one column of its own day.
Result<std::string_view> SplitRollupMask(std::string_view token, std::string_view value, RollupHours* hours);

}  // namespace clickatron
