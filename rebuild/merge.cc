// `merge`: every segment → DIR/merged/shard-K.csv, one k-way merge per archive shard
// (segment_merge.h), shards in parallel with --jobs.
//
// The result is written to DIR/merged.tmp-<id>/ and swapped in whole, with a `meta` that
// names the exact segment set it came from (`inputs`, an XXH64 over segment names and
// checksums). Running merge again on the same segment set is a no-op.
#include <algorithm>
#include <cstdio>
#include <mutex>

#include "base/durable_file.h"
#include "keyformat/hex64.h"
#include "keyformat/ymdh.h"
#include "rebuild/commands.h"
#include "rebuild/file.h"
#include "rebuild/merged.h"
#include "rebuild/progress.h"
#include "rebuild/rollup.h"
#include "rebuild/segment_merge.h"
#include "rebuild/tasks.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

std::string SegmentSetFingerprint(const std::vector<SegmentInfo>& segments) {
  XXH64_state_t st;
  XXH64_reset(&st, 0);
  for (const SegmentInfo& seg : segments) {
    XXH64_update(&st, seg.name.data(), seg.name.size() + 1);
    for (const FileSummary& f : seg.files) XXH64_update(&st, &f.xxh64, sizeof f.xxh64);
  }
  return Hex64(XXH64_digest(&st));
}

Status RunMerge(const Options& options, WorkDir* work) {
  Result<std::vector<SegmentInfo>> segments = work->Segments();
  if (!segments.ok()) return segments.status();
  if (segments->empty()) {
    return Status::Error("no segments in " + work->Path("segments") + ": import or segment some data first");
  }
  const uint32_t shards = options.archive_shards;
  if (Status s = CheckShardCount(*segments, shards); !s.ok()) return s;
  const std::string inputs = SegmentSetFingerprint(*segments);

  uint64_t total_in = 0;
  for (const SegmentInfo& seg : *segments) {
    for (const FileSummary& f : seg.files) total_in += f.bytes;
  }
  Progress progress("merge", total_in);
  Result<MergedInfo> current = ReadMergedInfo(work->Path("merged"));
  if (current.ok() && current->inputs == inputs && current->shards == shards) {
    progress.Summary("merged files are up to date with the " + std::to_string(segments->size()) +
                     " segment(s), nothing to do");
    return Status::OK();
  }

  const std::string tmp = work->Path("merged.tmp-" + WorkDir::NewId());
  if (Status s = MakeDirs(tmp); !s.ok()) return s;
  MergedInfo info;
  info.inputs = inputs;
  info.shards = shards;
  info.last_day = LastCoveredDay(*segments);
  info.days = ExportedDays(*segments);
  info.late = LateMarks(*segments);
  info.files.resize(shards);
  std::vector<MergeStats> stats(shards);
  std::vector<RollupStats> rollups(shards);
  std::mutex mu;
  std::vector<std::string> collisions;
  std::vector<uint64_t> shard_bytes(shards, 0);
  // Jobs beyond one per shard read the inputs ahead.
  const unsigned read_threads = std::max<unsigned>(1, options.jobs / std::min<uint32_t>(shards, options.jobs));
  Status result = RunTasks(shards, options.jobs, [&](size_t k) -> Status {
    std::vector<std::string> paths;
    for (const SegmentInfo& seg : *segments) paths.push_back(seg.ShardPath(uint32_t(k)));
    SortedFileWriter out;
    if (Status s = out.Open(tmp + "/" + MergedFileName(uint32_t(k)), /*with_footer=*/false); !s.ok()) return s;
    auto on_collision = [&](const std::string& text) {
      std::lock_guard<std::mutex> lock(mu);
      collisions.push_back(text);
      std::fprintf(stderr, "clickatron-rebuild: shard %zu: %s\n", k, text.c_str());
    };
    auto on_progress = [&](uint64_t bytes) {
      progress.Add(0, bytes - shard_bytes[k]);
      shard_bytes[k] = bytes;
      progress.Tick();
    };
    // Day and month rollups of every subtotal key (docs/formats.md#rollup-records).
    RollupWriter with_rollups(&out);
    if (Status s = MergeSegments(paths, &with_rollups, &stats[k], on_collision, on_progress, read_threads); !s.ok()) {
      return s;
    }
    if (Status s = with_rollups.Finish(); !s.ok()) return s;
    rollups[k] = with_rollups.stats();
    if (Status s = out.Finish(); !s.ok()) return s;
    info.files[k] = out.summary();
    return Status::OK();
  });
  if (!result.ok()) {
    RemoveAll(tmp);
    return result;
  }
  uint64_t records = 0, bytes = 0, columns = 0;
  RollupStats rolled;
  for (uint32_t k = 0; k < shards; ++k) {
    rolled.days += rollups[k].days;
    rolled.months += rollups[k].months;
    rolled.limited += rollups[k].limited;
    info.collisions += stats[k].collisions;
    records += info.files[k].records;
    bytes += info.files[k].bytes;
    columns += info.files[k].columns;
    progress.Add(stats[k].records_in, 0);
  }
  progress.Add(0, total_in - progress.bytes());
  if (!collisions.empty()) {
    std::string text;
    for (const std::string& c : collisions) text += c + "\n";
    if (Status s = WriteFileAtomic(tmp + "/collisions.txt", text); !s.ok()) return s;
  }
  if (Status s = WriteMergedInfo(tmp, info); !s.ok()) return s;
  if (Status s = SyncDir(tmp); !s.ok()) return s;
  // Swap: merged → merged.old-<id>, tmp → merged, drop the old one.
  const std::string merged = work->Path("merged");
  const std::string old = work->Path("merged.old-" + WorkDir::NewId());
  if (Exists(merged)) {
    if (Status s = RenameDurable(merged, old); !s.ok()) return s;
  }
  if (Status s = RenameDurable(tmp, merged); !s.ok()) return s;
  if (Status s = RemoveAll(old); !s.ok()) return s;

  std::string text = std::to_string(segments->size()) + " segment(s) → " + std::to_string(shards) +
                     " shard file(s): " + std::to_string(records) + " records, " + HumanBytes(bytes) +
                     ", " + std::to_string(columns) + " data points (rollups: " + std::to_string(rolled.days) +
                     " day, " + std::to_string(rolled.months) + " month" +
                     (rolled.limited ? ", " + std::to_string(rolled.limited) + " left out at a limit" : "") +
                     "), last day " + info.last_day;
  if (info.collisions) text += ", " + std::to_string(info.collisions) + " HASH COLLISION(S) (see merged/collisions.txt)";
  progress.Summary(text);
  return Status::OK();
}

}  // namespace clickatron::rebuild
