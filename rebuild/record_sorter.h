// RecordSorter: realtime records in, sorted archive lines out — the external sort behind
// `import` and `segment`.
//
// Each input line (`key,delta` or `_l|hash,escaped`, SPEC 2.3) is parsed once and turned
// into one sort entry whose key is
//
//   [day: 2 bytes BE][archive shard: 2 bytes BE][archive key] 0x00 [column]
//
// where the column is the YMDH token of a total, the subkey of a subtotal, or the escaped
// original of a lookup. Sorting these bytes orders the output by day, then shard, then
// archive key in SPEC 2.4 order (0x00 sorts before any key byte, so a key comes before
// every longer key it prefixes), then column. Equal entries are summed (pre-aggregation:
// realistic input repeats keys a lot), so runs shrink.
//
// Memory: entries (40 bytes, sort_entry.h) and their key bytes live in two mapped areas
// whose sizes add up to 95% of the memory budget; when one is full the entries are sorted
// (radix_sort.h, on `threads` threads), summed and written to a run file in the temp
// directory. Finish() k-way merges the runs (and what is still in memory) and assembles
// archive lines: columns of one key joined in order, zero sums
// dropped, empty records dropped, one lookup per hash (a second, different original is a
// collision: counted, reported through the callback, and the first kept).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "keyformat/status.h"
#include "rebuild/sort_entry.h"

namespace clickatron::rebuild {

// Days since 1970-01-01 (fits 16 bits for the whole YMDH range, 2000–2031).
using Day = uint16_t;
// The pseudo-day of lookup records when the sorter is told to keep them apart (import).
inline constexpr Day kLookupDay = 0xFFFF;

// Receives the sorted output, one (day, shard) group after the other, in order.
class LineSink {
 public:
  virtual ~LineSink() = default;
  virtual Status BeginGroup(Day day, uint32_t shard) = 0;
  // columns: data points in value (0 for lookups).
  virtual Status Line(std::string_view key, std::string_view value, uint64_t columns) = 0;
  virtual Status EndGroup() = 0;
};

struct SorterOptions {
  uint32_t shards = 1;
  uint64_t memory_bytes = 1ull << 30;
  std::string temp_dir;          // run files go here
  // kLookupDay: lookups form their own group (import); otherwise lookups belong to this
  // day (segment of one exported day).
  Day lookup_day = kLookupDay;
  // Only this day is accepted (segment); 0 = any day.
  Day only_day = 0;
  // Threads for sorting (--jobs).
  uint32_t threads = 1;
};

struct SorterStats {
  uint64_t records_in = 0;     // valid input records
  uint64_t runs = 0;           // run files written
  uint64_t lines_out = 0;      // archive lines
  uint64_t columns_out = 0;    // data points in them
  uint64_t collisions = 0;     // lookup hashes with more than one original
};

class RecordSorter {
 public:
  explicit RecordSorter(SorterOptions options);
  ~RecordSorter();
  RecordSorter(const RecordSorter&) = delete;
  RecordSorter& operator=(const RecordSorter&) = delete;

  // Parses and keeps one realtime-format line (no '\n'). A malformed line is an error
  // naming the problem (the caller adds the line number) and is not kept; an I/O error
  // writing a run is an error too (io_error() tells which).
  Status Add(std::string_view line);
  bool io_error() const { return io_error_; }

  // Days seen so far (ascending), lookups excluded; and whether any lookup was seen.
  std::vector<Day> Days() const;
  bool has_lookups() const { return has_lookups_; }

  // Merges everything and feeds the sink. on_collision gets a human-readable line.
  Status Finish(LineSink* sink, const std::function<void(const std::string&)>& on_collision);

  const SorterStats& stats() const { return stats_; }

 private:
  class ArenaTailOrder;
  class Source;
  class MemorySource;
  class RunSource;
  Status SpillRun();
  void SortAndSum();
  bool Equal(const SortEntry& a, const SortEntry& b) const;
  char* Resolve(uint64_t offset) const;
  bool Reserve(uint32_t size, uint64_t* offset);

  SorterOptions options_;
  std::vector<char*> blocks_;  // the arena: mapped blocks of 2^block_shift_ (+ slack) bytes
  int block_shift_ = 26;
  uint64_t arena_capacity_ = 0, arena_used_ = 0;
  SortEntry* entries_ = nullptr;   // mapped on first use, entries_capacity_ of them
  size_t entries_capacity_ = 0;
  size_t n_entries_ = 0;
  std::vector<std::pair<size_t, size_t>> parts_;  // sorted ranges after SortAndSum()
  bool overflow_ = false;
  std::vector<std::string> run_paths_;
  std::vector<uint64_t> day_bits_;
  bool has_lookups_ = false;
  bool io_error_ = false;
  SorterStats stats_;
};

// Parses "512M", "2G", "1048576" (bytes; K/M/G/T suffixes are powers of 1024).
Result<uint64_t> ParseMemorySize(std::string_view text);

}  // namespace clickatron::rebuild
