// SegmentSink: the LineSink that writes a RecordSorter's output as segment directories
// inside a transaction's staging area — one directory per day (import, segment), plus one
// `lookups` directory for an import's lookup records. A segment covers its day with the
// sink's source, or covers nothing and adds to what else holds its hours: late data, and a
// realtime shard's part of a day the archive already holds (work_dir.h).
#pragma once

#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "rebuild/record_sorter.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

class SegmentSink : public LineSink {
 public:
  // source: what the new segments cover their units with ("import-<hex>", "export-<hex>").
  SegmentSink(Transaction* txn, uint32_t shards, std::string source)
      : txn_(txn), shards_(shards), source_(std::move(source)) {}
  // Late data (work_dir.h): the segments cover nothing and say which entries they hold.
  SegmentSink(Transaction* txn, uint32_t shards, LateRange late)
      : txn_(txn), shards_(shards), late_(std::move(late)), kind_(Kind::kLate) {}
  // One realtime shard's part of a day (work_dir.h): the segment covers nothing and records
  // the part (`day_part` line).
  SegmentSink(Transaction* txn, uint32_t shards, DayPart part)
      : txn_(txn), shards_(shards), kind_(Kind::kPart) {
    parts_[Day(0)].push_back(std::move(part));
  }

  // The segment of day also records these realtime exports: every shard's digest (`export`
  // line) and each shard's part with its ring (`day_part` lines).
  void SetExports(Day day, std::vector<uint64_t> digests, std::vector<DayPart> parts) {
    exports_[day] = std::move(digests);
    parts_[day] = std::move(parts);
  }

  Status BeginGroup(Day day, uint32_t shard) override;
  Status Lines(std::string_view lines, uint64_t records, uint64_t columns) override;
  Status EndGroup() override { return Status::OK(); }

  // The first segment written also records this late mark (`late` line: import --manifest
  // carries what a generation had merged of an API's late data).
  void CarryLate(LateRange late) { carried_late_.insert(std::move(late)); }

  // Makes sure a segment for day exists even with no records (an empty exported day).
  Status EnsureDay(Day day);
  // Finishes the last segment; every written segment is added to the transaction.
  Status Finish();
  const std::vector<SegmentInfo>& written() const { return written_; }

 private:
  Status StartDay(Day day);
  Status FinishCurrent();
  Transaction* txn_;
  uint32_t shards_;
  std::string source_;
  LateRange late_;
  enum class Kind { kCovers, kLate, kPart } kind_ = Kind::kCovers;
  std::map<Day, std::vector<uint64_t>> exports_;
  std::map<Day, std::vector<DayPart>> parts_;  // a kPart sink's one part under Day(0)
  std::set<LateRange> carried_late_;           // written into the first segment, then cleared
  std::unique_ptr<SegmentDirWriter> writer_;
  Day day_ = 0;
  SortedFileWriter* file_ = nullptr;
  std::vector<SegmentInfo> written_;
};

// "2012-03-25" for a day, "lookups" for kLookupDay.
std::string SpanOfDay(Day day);

}  // namespace clickatron::rebuild
