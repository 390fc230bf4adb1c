// RecordSorter: realtime records in, sorted archive lines out — the external sort behind
// `import` and `segment`.
//
// Each input line (`key,delta` or `_l|hash,escaped`, docs/formats.md#records) is parsed once and turned
// into one sort entry whose key is
//
//   [day: 2 bytes BE][archive shard: 2 bytes BE][archive key] 0x00 [column]
//
// where the column is the YMDH token of a total, the subkey of a subtotal, or the escaped
// original of a lookup. Sorting these bytes orders the output by day, then shard, then
// archive key in docs/formats.md#key-order order (0x00 sorts before any key byte, so a key comes before
// every longer key it prefixes), then column. Equal entries are summed (pre-aggregation:
// realistic input repeats keys a lot), so runs shrink.
//
// Memory: the budget (less 5% for I/O buffers) is split among the feeders — threads that
// add records at once. A feeder keeps its records in one mapped area: entries (40 bytes,
// sort_entry.h, whose first 24 key bytes are inline) from the bottom, the key bytes past
// those 24 from the top. When the two meet the feeder sorts its entries (radix_sort.h),
// sums them and writes them to a run file in the temp directory, on its own thread, while
// the other feeders go on parsing. Finish() k-way merges the runs (and what is still in
// memory) and assembles archive lines: columns of one key joined in order, zero sums
// dropped, empty records dropped, one lookup per hash (a second, different original is a
// collision: counted, reported through the callback, and the first kept). The merge and
// the line assembly run on two threads when `threads` allows.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "keyformat/records.h"
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
  // Whole archive lines `key,value\n` back to back, in order: records of them, with
  // columns data points in their values (lookups count none).
  virtual Status Lines(std::string_view lines, uint64_t records, uint64_t columns) = 0;
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
  // Threads for sorting and merging (--jobs).
  uint32_t threads = 1;
  // Threads that will add records at once (import: --jobs); fewer when the memory is too
  // small to split (see feeder_count()).
  uint32_t feeders = 1;
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
  class Feeder;

  explicit RecordSorter(SorterOptions options);
  ~RecordSorter();
  RecordSorter(const RecordSorter&) = delete;
  RecordSorter& operator=(const RecordSorter&) = delete;

  // How many feeders there are: options.feeders, or fewer so that each holds at least
  // 4 MiB.
  size_t feeder_count() const { return feeders_.size(); }
  // Feeder i, for the one thread that adds through it. REQUIRES: i < feeder_count().
  Feeder* feeder(size_t i) { return feeders_[i].get(); }
  // Add() through feeder 0, for a single thread.
  Status Add(std::string_view line);
  bool io_error() const;

  // Days seen so far (ascending), lookups excluded; and whether any lookup was seen.
  // REQUIRES: no feeder is adding.
  std::vector<Day> Days() const;
  bool has_lookups() const;

  // Merges everything and feeds the sink. on_collision gets a human-readable line.
  // REQUIRES: no feeder is adding.
  Status Finish(LineSink* sink, const std::function<void(const std::string&)>& on_collision);

  // records_in and runs so far; the rest once Finish() is done.
  SorterStats stats() const;

  // Receives the merged (entry key, summed count) stream inside Finish(); declared here
  // only so that the .cc's helpers can implement it.
  class MergedSink;

 private:
  class Batch;
  class Source;
  class MemorySource;
  class RunSource;
  class SourceHeap;
  std::string NewRunPath();
  static Status MergeSources(std::vector<std::unique_ptr<Source>>* sources, MergedSink* out);

  SorterOptions options_;
  std::vector<std::unique_ptr<Feeder>> feeders_;
  mutable std::mutex runs_mu_;
  std::vector<std::string> run_paths_;  // guarded by runs_mu_
  SorterStats stats_;  // what Finish() counts; records_in and runs come from the feeders
};

// Adds records for one thread: parses each line into its own memory and, when that is
// full, sorts it and writes a run on the calling thread. Not thread-safe: one feeder per
// thread; different feeders of one sorter may add at the same time.
class RecordSorter::Feeder {
 public:
  Feeder(RecordSorter* sorter, uint64_t memory_bytes, uint32_t sort_threads);
  ~Feeder();
  // Parses and keeps one realtime-format line (no '\n'). A malformed line is an error
  // naming the problem (the caller adds the line number) and is not kept; an I/O error
  // writing a run is an error too (io_error() tells which).
  Status Add(std::string_view line);
  bool io_error() const { return io_error_; }

 private:
  friend class RecordSorter;
  // What a line becomes: the parts of its entry key (docs/rebuild.md) and its count.
  struct Entry {
    Day day = 0;
    std::string_view head, tail, column;  // the archive key is head[.tail]
    int64_t count = 0;
  };
  // The steps of Add(): the line read as a lookup or an hour record, then kept.
  Status ReadLookup(std::string_view key, std::string_view value, Entry* e);
  Status ReadHour(std::string_view key, std::string_view value, Entry* e);
  Status AddEntry(const Entry& e);
  Status Spill();
  // The rare ends of Add(), out of its way: a full batch spilled, then the entry added; an
  // entry whose count (wide_count_) is kept beside it (docs/rebuild.md#counts).
  [[gnu::noinline]] Status SpillAndAdd(std::string_view entry_key, int64_t count);
  [[gnu::noinline, gnu::cold]] Status AddWide(std::string_view entry_key);
  RecordSorter* sorter_;
  std::unique_ptr<Batch> batch_;
  uint32_t sort_threads_;
  std::string key_;  // the entry key being built, when it is too long for the stack
  ParsedKey parsed_;  // the key being added: one struct reused, not one zeroed a line
  Int128 wide_count_ = 0;  // the count being added, when it does not fit the entry
  std::vector<uint64_t> day_bits_;
  bool has_lookups_ = false;
  bool io_error_ = false;
  uint64_t records_ = 0;
};

// Parses "512M", "2G", "1048576" (bytes; K/M/G/T suffixes are powers of 1024).
Result<uint64_t> ParseMemorySize(std::string_view text);

}  // namespace clickatron::rebuild
