// Day and month rollup records of the merged archive (docs/formats.md#rollup-records).
//
// RollupWriter sits between the k-way merge and the merged file. Every record passes
// through in order; the hour records of a subtotal key `{subns}.{ns}|{key}.{ymdh}` are held
// back until the key's UTC month ends, summed per day and per month, and written after the
// month rollup `….{ym}` and each day's rollup `….{ymd}` — where those keys sort, since a key
// sorts before every longer key it starts with (docs/formats.md#key-order):
//
//   c.u|jehiah.c4      month rollup        (written first)
//   c.u|jehiah.c41     day rollup of 2012-04-01
//   c.u|jehiah.c410 … c.u|jehiah.c41n      that day's hours
//   c.u|jehiah.c42     next day's rollup, and so on
//
// A rollup's value starts with the mask of the hours it summed (keyformat/rollup_hours.h),
// then its sums. A rollup is written whole or not at all, never with a wrong number. It is not written when
// it would add little (a day with one hour, a month with one day, sums that fold the hours'
// columns less than RollupLimits::min_fold times), when its sums cancel to nothing or
// leave 128 bits, or when a limit is hit: the hour lines of one key's month held past
// max_held_bytes (the month rollup is dropped, the days go on one at a time; a single day
// past it streams without its rollup) or a rollup of more than max_columns subkeys. Readers
// sum the hours wherever a rollup is missing. Memory: at most max_held_bytes of lines and
// their parsed columns (24 bytes each).
//
// Counts are summed in the 24-byte columns as int64; a day with a count past int64, or
// whose sums leave it, and a month with such a day, are summed again from their held lines
// exactly in 128 bits (SumExactly): rollups stay exact, and the common case pays nothing.
//
// Rollups exist only in merged files: segments and compacted months hold hours only, and
// a rollup line found in an input is dropped (the merge writes its own).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "rebuild/sorted_file.h"

namespace clickatron::rebuild {

struct RollupLimits {
  size_t max_held_bytes = size_t(64) << 20;  // hour lines of one key's month held back
  size_t max_columns = size_t(1) << 20;      // subkeys of one rollup
  // A rollup is written when hour columns >= min_fold * its columns (1: whenever it sums at
  // least two hours, or two days for a month).
  uint64_t min_fold = 2;
};

struct RollupStats {
  uint64_t days = 0, months = 0;  // rollups written
  uint64_t unfolded = 0;          // left out: folding less than min_fold
  uint64_t limited = 0;           // left out: a limit, or sums leaving 128 bits
  uint64_t dropped = 0;           // rollup lines found in the input (rewritten)
};

class RollupWriter : public RecordWriter {
 public:
  // max_held_bytes is taken as at most 1 GiB (columns are found by 32-bit offsets).
  explicit RollupWriter(RecordWriter* out, RollupLimits limits = {}) : out_(out), limits_(limits) {
    if (limits_.max_held_bytes > (size_t(1) << 30)) limits_.max_held_bytes = size_t(1) << 30;
  }
  Status Add(std::string_view key, std::string_view value, uint64_t columns) override;
  Status AddLines(std::string_view lines, uint64_t records, uint64_t columns) override;
  bool counts_columns_itself() const override { return true; }
  // Writes what is held. Call before finishing the file underneath.
  Status Finish();
  const RollupStats& stats() const { return stats_; }

 private:
  struct Col {  // a column; its name is bytes [name, name + size) of held_
    uint64_t prefix;  // its first 8 bytes, big-endian, zero-padded: most comparisons end here
    uint32_t name, size;
    int64_t count;
  };
  struct Day {
    char symbol;
    size_t line_begin, line_end;  // held_ bytes of its hour lines
    uint64_t hours = 0, hour_columns = 0;
    size_t col_begin, col_end;    // cols_: the hours' columns, then (once summed) the sums
    bool summed = false, ok = true;
    bool wide = false;            // a count or a sum past int64: summed by SumExactly
    uint32_t mask = 0;            // bit h: hour h was held (keyformat/rollup_hours.h)
  };
  // One subtotal line (line: key,value\n as read, or empty when only key and value are).
  Status Record(std::string_view key, std::string_view value, std::string_view line);
  // The steps of Record (rollup.cc).
  void HoldMonth(std::string_view group, std::string_view time);
  bool HoldLine(std::string_view key, std::string_view value, std::string_view line);
  [[gnu::noinline, gnu::cold]] Status ColumnsError(std::string_view key, std::string_view value, size_t cols_before);
  void AddHour(std::string_view time, uint64_t n);
  [[gnu::noinline]] Status PastHeldLimit();
  Status FinishDay();                    // sums the last day (and writes it if no month)
  Status WriteDay(const Day& day);       // its rollup (if due) and its hours
  Status WriteHeld();                    // the month rollup (if due) and every day
  void Drop();                           // forget what is held
  bool ParseColumns(size_t at, size_t size);
  // The rest of a count past int64 whose digits start at from (its '-' included), p the
  // first digit not read: reads to the end of the digits and marks the day wide; returns
  // the end of the digits, or nullptr when the count is past 128 bits.
  [[gnu::noinline, gnu::cold]] const char* ParseWideColumn(const char* from, const char* p, const char* end);
  // Sums equal names of (*cols)[begin, end) in place, in the order each name first came,
  // dropping zero sums; *end becomes the end of the sums. False on an int64 overflow (of a
  // partial sum). Unsorted: most days and months do not fold and are never written, so
  // only the rollups written are sorted (SortByName).
  bool Sum(std::vector<Col>* cols, size_t begin, size_t* end);
  bool SameName(const Col& a, const Col& b) const;
  void SortByName(Col* first, size_t n) const;  // distinct names, in column order
  bool Folds(uint64_t rollup_columns, uint64_t hour_columns) const;
  // The rollup of one day (day) or of the month (day null: the mask of every held day).
  Status WriteRollup(const Day* day, const std::vector<Col>& cols, size_t begin, size_t end);
  void BeginRollup(const Day* day);  // key_ and the masks of value_
  // The slow path of a wide day or month: sums its hour lines held_[begin, end) in 128
  // bits and writes its rollup when it folds (or counts why not).
  [[gnu::noinline, gnu::cold]] Status SumExactly(const Day* day, size_t begin, size_t end, uint64_t hour_columns);

  RecordWriter* out_;
  RollupLimits limits_;
  RollupStats stats_;
  bool holding_ = false;     // a key's month is being held (or streamed)
  bool month_ok_ = true;     // its month rollup is still possible
  bool streaming_ = false;   // the current day goes straight through (past the limit)
  std::string group_;        // `{subns}.{ns}|{key}.`
  char month_[2] = {0, 0};
  std::string held_;
  std::vector<Col> cols_;
  std::vector<Day> days_;
  std::vector<Col> month_cols_;
  std::vector<uint32_t> slots_;  // Sum's hash table
  std::string key_, value_;  // scratch
};

// Checks the rollup lines of a merged file's bytes: each one is the mask of exactly the hour
// records it covers, then their sum (docs/formats.md#rollup-records), keys in order. Fails
// naming the first wrong line.
Status CheckRollups(std::string_view file);

}  // namespace clickatron::rebuild
