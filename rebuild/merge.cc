// `merge`: every segment → DIR/merged/shard-K.csv, one k-way merge per archive shard
// (segment_merge.h), shards in parallel with --jobs.
//
// The result is written to DIR/merged.tmp-<id>/ and swapped in whole, with a `meta` that
// names the exact segment set it came from (`inputs`, an XXH64 over segment names and
// checksums). Running merge again on the same segment set is a no-op.
//
// `merge --shard K` (a task of the Slurm executor, slurm_executor.h) merges archive shard
// K only, into DIR/merging/<inputs>/shard-K.csv (a temp name renamed into place) and then
// shard-K.meta (its summary, written last: the mark that the piece is whole). A plain
// `merge` takes every whole piece of the same segment set as it is instead of merging
// that shard again (the bytes are the same: one function merges a shard either way), and
// drops DIR/merging once merged/ is swapped in.
#include <algorithm>
#include <cstdio>
#include <atomic>
#include <optional>

#include "base/durable_file.h"
#include "keyformat/hex64.h"
#include "keyformat/key_value.h"
#include "keyformat/ymdh.h"
#include "rebuild/commands.h"
#include "rebuild/file.h"
#include "rebuild/merged.h"
#include "rebuild/parallel_rollups.h"
#include "rebuild/progress.h"
#include "rebuild/rollup.h"
#include "rebuild/segment_merge.h"
#include "rebuild/tasks.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {
namespace {

// One archive shard merged: its file's summary, the merge's counts, the collision lines.
struct ShardMerge {
  FileSummary file;
  MergeStats stats;
  RollupStats rollups;
  std::vector<std::string> collisions;
};

std::string PiecePath(const std::string& pieces, uint32_t k) { return pieces + "/" + MergedFileName(k); }
std::string PieceMetaPath(const std::string& pieces, uint32_t k) {
  return pieces + "/shard-" + std::to_string(k) + ".meta";
}

Status WritePieceMeta(const std::string& pieces, uint32_t k, const ShardMerge& m) {
  KeyValueText f;
  AddFileSummary(k, m.file, &f);
  f.Add("records_in", std::to_string(m.stats.records_in));
  f.Add("bytes_in", std::to_string(m.stats.bytes_in));
  f.Add("collisions", std::to_string(m.stats.collisions));
  f.Add("rollup_days", std::to_string(m.rollups.days));
  f.Add("rollup_months", std::to_string(m.rollups.months));
  f.Add("rollups_limited", std::to_string(m.rollups.limited));
  f.Add("rollup_masks", "1");  // its rollups carry their hours (a piece of an older merge: merged again)
  for (const std::string& c : m.collisions) f.Add("collision", c);
  return WriteFileAtomic(PieceMetaPath(pieces, k), f.Format());
}

// The whole piece of shard k (its meta, and a file of the size it names), or nullopt.
std::optional<ShardMerge> ReadPiece(const std::string& pieces, uint32_t k) {
  if (!Exists(PieceMetaPath(pieces, k))) return std::nullopt;
  Result<KeyValueText> meta = ReadKeyValueFile(PieceMetaPath(pieces, k));
  if (!meta.ok()) return std::nullopt;
  Result<FileSummary> file = FileSummaryOf(*meta, k);
  ShardMerge m;
  if (!file.ok() || !ParseCount(meta->Get("records_in"), &m.stats.records_in) ||
      !ParseCount(meta->Get("bytes_in"), &m.stats.bytes_in) ||
      !ParseCount(meta->Get("collisions"), &m.stats.collisions) ||
      !ParseCount(meta->Get("rollup_days"), &m.rollups.days) ||
      !ParseCount(meta->Get("rollup_months"), &m.rollups.months) ||
      !ParseCount(meta->Get("rollups_limited"), &m.rollups.limited) || meta->Get("rollup_masks") != "1" ||
      FileSize(PiecePath(pieces, k)) != file->bytes) {
    return std::nullopt;
  }
  m.file = *file;
  m.collisions = meta->GetAll("collision");
  return m;
}

// Merges archive shard k of every segment into path.
Status MergeShard(const std::vector<SegmentInfo>& segments, uint32_t k, const std::string& path,
                  unsigned read_threads, Progress* progress, ShardMerge* m) {
  std::vector<std::string> paths;
  for (const SegmentInfo& seg : segments) paths.push_back(seg.ShardPath(k));
  SortedFileWriter out;
  if (Status s = out.Open(path, /*with_footer=*/false); !s.ok()) return s;
  auto on_collision = [&](const std::string& text) {
    m->collisions.push_back(text);
    std::fprintf(stderr, "clickatron-rebuild: shard %u: %s\n", k, text.c_str());
  };
  uint64_t shard_bytes = 0;
  auto on_progress = [&](uint64_t bytes) {
    progress->Add(0, bytes - shard_bytes);
    shard_bytes = bytes;
    progress->Tick();
  };
  // Day and month rollups of every subtotal key (docs/formats.md#rollup-records), summed
  // on threads of their own when there are threads to spare (parallel_rollups.h).
  if (read_threads > 1) {
    ParallelRollups with_rollups(&out, read_threads);
    Status merged = MergeSegments(paths, &with_rollups, &m->stats, on_collision, on_progress, read_threads);
    const Status rolled = with_rollups.Finish();
    if (!merged.ok()) return merged;
    if (!rolled.ok()) return rolled;
    m->rollups = with_rollups.stats();
  } else {
    RollupWriter with_rollups(&out);
    if (Status s = MergeSegments(paths, &with_rollups, &m->stats, on_collision, on_progress, 1); !s.ok()) return s;
    if (Status s = with_rollups.Finish(); !s.ok()) return s;
    m->rollups = with_rollups.stats();
  }
  if (Status s = out.Finish(); !s.ok()) return s;
  m->file = out.summary();
  return Status::OK();
}

// `merge --shard K`: the piece of shard K (see the top of this file).
Status MergeOnePiece(const Options& options, WorkDir* work, const std::vector<SegmentInfo>& segments,
                     const std::string& inputs, Progress* progress) {
  const uint32_t k = uint32_t(options.shard);
  const std::string pieces = work->Path("merging/" + inputs);
  if (std::optional<ShardMerge> done = ReadPiece(pieces, k)) {
    progress->Summary("shard " + std::to_string(k) + " is already merged from the " +
                      std::to_string(segments.size()) + " segment(s) (" + PiecePath(pieces, k) + "), nothing to do");
    return Status::OK();
  }
  if (Status s = MakeDirs(pieces); !s.ok()) return s;
  const std::string tmp = PiecePath(pieces, k) + ".tmp-" + WorkDir::NewId();
  ShardMerge m;
  Status s = MergeShard(segments, k, tmp, std::max<unsigned>(1, options.jobs), progress, &m);
  if (s.ok()) s = RenameDurable(tmp, PiecePath(pieces, k));
  if (!s.ok()) {
    RemoveAll(tmp);
    return s;
  }
  if (Status w = WritePieceMeta(pieces, k, m); !w.ok()) return w;
  progress->Add(m.stats.records_in, 0);
  progress->Summary("shard " + std::to_string(k) + " of " + std::to_string(segments.size()) + " segment(s) → " +
                    PiecePath(pieces, k) + ": " + std::to_string(m.file.records) + " records, " +
                    HumanBytes(m.file.bytes) + ", " + std::to_string(m.file.columns) + " data points" +
                    (m.stats.collisions ? ", " + std::to_string(m.stats.collisions) + " HASH COLLISION(S)" : ""));
  return Status::OK();
}

// Every shard merged into tmp/, or moved there from pieces/ where `merge --shard` left it
// (*taken counts those).
Status MergeShards(const Options& options, const std::vector<SegmentInfo>& segments, const std::string& pieces,
                   const std::string& tmp, Progress* progress, std::vector<ShardMerge>* merges, size_t* taken) {
  const uint32_t shards = options.archive_shards;
  std::atomic<size_t> moved{0};
  // Jobs beyond one per shard read the inputs ahead.
  const unsigned read_threads = std::max<unsigned>(1, options.jobs / std::min<uint32_t>(shards, options.jobs));
  Status result = RunTasks(shards, options.jobs, [&](size_t k) -> Status {
    const std::string path = tmp + "/" + MergedFileName(uint32_t(k));
    if (std::optional<ShardMerge> piece = ReadPiece(pieces, uint32_t(k))) {
      (*merges)[k] = std::move(*piece);
      ++moved;
      return RenameDurable(PiecePath(pieces, uint32_t(k)), path);
    }
    return MergeShard(segments, uint32_t(k), path, read_threads, progress, &(*merges)[k]);
  });
  *taken = moved;
  return result;
}

// What the shard files hold together, for the summary line.
struct MergeTotals {
  uint64_t records = 0, bytes = 0, columns = 0;
  RollupStats rolled;
};

// info's files and collision count from the shards' merges; their records read counted.
MergeTotals SumShards(const std::vector<ShardMerge>& merges, MergedInfo* info, Progress* progress) {
  MergeTotals t;
  info->files.resize(merges.size());
  for (size_t k = 0; k < merges.size(); ++k) {
    const ShardMerge& m = merges[k];
    info->files[k] = m.file;
    t.rolled.days += m.rollups.days;
    t.rolled.months += m.rollups.months;
    t.rolled.limited += m.rollups.limited;
    info->collisions += m.stats.collisions;
    t.records += m.file.records;
    t.bytes += m.file.bytes;
    t.columns += m.file.columns;
    progress->Add(m.stats.records_in, 0);
  }
  return t;
}

// tmp's collisions.txt (when there were any) and merged.info, synced.
Status WriteMergedDir(const std::string& tmp, const std::vector<ShardMerge>& merges, const MergedInfo& info) {
  std::string text;
  for (const ShardMerge& m : merges) {
    for (const std::string& c : m.collisions) text += c + "\n";
  }
  if (!text.empty()) {
    if (Status s = WriteFileAtomic(tmp + "/collisions.txt", text); !s.ok()) return s;
  }
  if (Status s = WriteMergedInfo(tmp, info); !s.ok()) return s;
  return SyncDir(tmp);
}

// Swap: merged → merged.old-<id>, tmp → merged, drop the old one and merge --shard's pieces.
Status SwapInMerged(WorkDir* work, const std::string& tmp) {
  const std::string merged = work->Path("merged");
  const std::string old = work->Path("merged.old-" + WorkDir::NewId());
  if (Exists(merged)) {
    if (Status s = RenameDurable(merged, old); !s.ok()) return s;
  }
  if (Status s = RenameDurable(tmp, merged); !s.ok()) return s;
  if (Status s = RemoveAll(old); !s.ok()) return s;
  return RemoveAll(work->Path("merging"));
}

std::string MergeSummary(size_t segments, const MergedInfo& info, const MergeTotals& t, size_t taken) {
  std::string text = std::to_string(segments) + " segment(s) → " + std::to_string(info.shards) +
                     " shard file(s): " + std::to_string(t.records) + " records, " + HumanBytes(t.bytes) +
                     ", " + std::to_string(t.columns) + " data points (rollups: " + std::to_string(t.rolled.days) +
                     " day, " + std::to_string(t.rolled.months) + " month" +
                     (t.rolled.limited ? ", " + std::to_string(t.rolled.limited) + " left out at a limit" : "") +
                     "), last day " + info.last_day;
  if (info.collisions) text += ", " + std::to_string(info.collisions) + " HASH COLLISION(S) (see merged/collisions.txt)";
  if (taken) text += ", " + std::to_string(taken) + " shard(s) merged by merge --shard";
  return text;
}

}  // namespace

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
  // Files of an older merge, whose rollups carry no mask, are merged again.
  if (current.ok() && current->inputs == inputs && current->shards == shards && current->rollups) {
    progress.Summary("merged files are up to date with the " + std::to_string(segments->size()) +
                     " segment(s), nothing to do");
    return Status::OK();
  }

  if (options.shard >= 0) return MergeOnePiece(options, work, *segments, inputs, &progress);

  const std::string tmp = work->Path("merged.tmp-" + WorkDir::NewId());
  if (Status s = MakeDirs(tmp); !s.ok()) return s;
  std::vector<ShardMerge> merges(shards);
  size_t taken = 0;
  Status result = MergeShards(options, *segments, work->Path("merging/" + inputs), tmp, &progress, &merges, &taken);
  if (!result.ok()) {
    RemoveAll(tmp);
    return result;
  }
  MergedInfo info;
  info.inputs = inputs;
  info.shards = shards;
  info.last_day = LastCoveredDay(*segments);
  info.exports = ExportsOf(*segments);
  info.late = LateMarks(*segments);
  info.rollups = true;  // every rollup written carries its mask (docs/formats.md#rollup-records)
  MergeTotals totals = SumShards(merges, &info, &progress);
  if (progress.bytes() < total_in) progress.Add(0, total_in - progress.bytes());
  if (Status s = WriteMergedDir(tmp, merges, info); !s.ok()) return s;
  if (Status s = SwapInMerged(work, tmp); !s.ok()) return s;
  progress.Summary(MergeSummary(segments->size(), info, totals, taken));
  return Status::OK();
}

}  // namespace clickatron::rebuild
