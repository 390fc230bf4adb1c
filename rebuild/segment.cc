// `segment --day D`: the exported realtime records of day D (DIR/export/D/shard-N.csv,
// one file per realtime shard) → one day segment, split by archive shard and sorted.
//
// Every export file is checked against its `#END` footer while it is read; a record of
// another day, or a malformed one, fails the step naming the file and line. The segment
// covers D with source `export-<xxh64 of the footers>`, so re-running with the same
// exports is a no-op, and a day that already has data from elsewhere (an import) is
// refused unless --replace. An empty export still makes an (empty) segment: the archive
// then holds that day — it had no data — and its realtime slot can be released. The
// segment records each shard's footer xxh64 (`export` line of its meta) and each shard's part
// with the ring it was read from (`day_part` lines), which publish writes into the manifest
// for release to check (docs/formats.md#manifest).
//
// `segment --day D --shard N`: realtime shard N's export of D alone, as a segment that
// covers nothing and ADDS to what else holds D (an import, the day's earlier export): the
// part of a day the archive already owns that the shard took before it closed the day
// (rebuild/day_plan.h). Re-running with the same export (digest and ring) is a no-op.
#include <cstdio>

#include "keyformat/footer.h"
#include "keyformat/ymdh.h"
#include "rebuild/commands.h"
#include "rebuild/day_cover.h"
#include "rebuild/export_files.h"
#include "rebuild/file.h"
#include "rebuild/progress.h"
#include "rebuild/record_sorter.h"
#include "rebuild/segment_sink.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

namespace {

// Sorts export files of `day` into the sink's segment, commits the transaction (removing
// `replaced`, when not empty) and prints the summary.
Status SortIntoSegment(const Options& options, Day day, const std::vector<std::string>& files,
                       Transaction* txn, SegmentSink* sink, Progress* progress, const std::string& replaced) {
  const std::string runs = txn->StagingPath("runs");
  if (Status s = MakeDirs(runs); !s.ok()) return s;
  RecordSorter sorter(SorterOptions{options.archive_shards, options.memory, runs, day, day, options.jobs});
  for (const std::string& path : files) {
    if (Status s = SortFootedFile(path, "export", &sorter, progress); !s.ok()) return s;
  }
  auto on_collision = [](const std::string& text) {
    std::fprintf(stderr, "clickatron-rebuild: %s\n", text.c_str());
  };
  if (Status s = sorter.Finish(sink, on_collision); !s.ok()) return s;
  if (Status s = sink->EnsureDay(day); !s.ok()) return s;
  if (Status s = sink->Finish(); !s.ok()) return s;
  if (Status s = RemoveAll(runs); !s.ok()) return s;
  if (!replaced.empty()) txn->RemoveSegment(replaced);
  if (Status s = txn->Commit(); !s.ok()) return s;
  const SorterStats st = sorter.stats();
  progress->Summary(std::to_string(files.size()) + " export file(s), " + std::to_string(st.records_in) +
                    " records → " + std::to_string(st.lines_out) + " archive lines (" +
                    std::to_string(st.columns_out) + " data points) in " + std::to_string(options.archive_shards) +
                    " shard(s)" + (replaced.empty() ? "" : ", replaced " + replaced) +
                    (st.collisions ? ", " + std::to_string(st.collisions) + " hash collision(s)" : ""));
  return Status::OK();
}

// `segment --day D --shard N`: one shard's part of a day, added to the archive.
Status RunSegmentPart(const Options& options, WorkDir* work) {
  const Day day = options.day;
  const uint32_t shard = uint32_t(options.shard);
  Result<DayPart> part = ExportPart(*work, day, shard);
  if (!part.ok()) return part.status();
  Result<std::vector<SegmentInfo>> existing = work->Segments();
  if (!existing.ok()) return existing.status();
  if (Status s = CheckShardCount(*existing, options.archive_shards); !s.ok()) return s;
  const std::string path = ExportPath(*work, day, shard);
  Progress progress("segment " + FormatDay(day) + " of realtime shard " + std::to_string(shard), FileSize(path));
  if (ExportsOf(*existing).parts.count(*part)) {
    progress.Summary("the part of realtime shard " + std::to_string(shard) + " in " + FormatDay(day) +
                     " is already segmented from this export, nothing to do");
    return Status::OK();
  }
  Transaction txn(*work);
  if (Status s = txn.Begin(); !s.ok()) return s;
  SegmentSink sink(&txn, options.archive_shards, *part);
  return SortIntoSegment(options, day, {path}, &txn, &sink, &progress, "");
}

}  // namespace

Status RunSegment(const Options& options, WorkDir* work) {
  if (options.shard >= 0) return RunSegmentPart(options, work);
  const Day day = options.day;
  Result<std::vector<std::string>> files = ExportFiles(*work, day, uint32_t(options.realtime.size()));
  if (!files.ok()) return files.status();
  Result<std::string> source = ExportSource(*files);
  if (!source.ok()) return source.status();
  Result<std::vector<uint64_t>> digests = ExportDigests(*files);
  if (!digests.ok()) return digests.status();

  Result<std::vector<SegmentInfo>> existing = work->Segments();
  if (!existing.ok()) return existing.status();
  if (Status s = CheckShardCount(*existing, options.archive_shards); !s.ok()) return s;
  uint64_t total = 0;
  for (const std::string& f : *files) total += FileSize(f);
  Progress progress("segment " + FormatDay(day), total);

  const DayCoverPlan plan = PlanDayCover(CoverageOf(*existing), {day}, *source);
  if (plan.all_mine) {
    progress.Summary("day " + FormatDay(day) + " is already segmented from these exports, nothing to do");
    return Status::OK();
  }
  std::string replaced;
  if (!plan.taken.empty()) {
    const Cover& cover = plan.taken.front().second;
    if (!options.replace) {
      return Status::Error("day " + FormatDay(day) + " already has data (segment " + cover.segment + ", from " +
                           cover.source + "); use --replace to replace it with the export");
    }
    if (!plan.unreplaceable.ok()) return plan.unreplaceable;
    replaced = cover.segment;
  }

  std::vector<DayPart> parts;
  for (uint32_t n = 0; n < files->size(); ++n) {
    Result<DayPart> part = ExportPart(*work, day, n);
    if (!part.ok()) return part.status();
    parts.push_back(*part);
  }
  Transaction txn(*work);
  if (Status s = txn.Begin(); !s.ok()) return s;
  SegmentSink sink(&txn, options.archive_shards, *source);
  sink.SetExports(day, *digests, std::move(parts));
  return SortIntoSegment(options, day, *files, &txn, &sink, &progress, replaced);
}

}  // namespace clickatron::rebuild
