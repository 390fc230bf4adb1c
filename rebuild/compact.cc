// `compact --before D`: the segments of every whole month that ends before D become one
// month segment (span YYYY-MM), so the nightly merge reads a few files per year instead
// of one per day. A month is compacted again when a later import adds days to it.
//
// Each (month, shard) is one k-way merge (segment_merge.h), run in parallel with --jobs;
// the new month segments replace the old ones in one transaction, so a kill at any point
// leaves either the day segments or the month segment, never both.
#include <cstdio>
#include <map>
#include <mutex>

#include "base/durable_file.h"
#include "keyformat/ymdh.h"
#include "rebuild/commands.h"
#include "rebuild/file.h"
#include "rebuild/progress.h"
#include "rebuild/segment_merge.h"
#include "rebuild/tasks.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {
namespace {

// "YYYY-MM" of a day (YYYY-MM-DD) or month (YYYY-MM) span; "" for anything else (lookups).
std::string MonthOf(const std::string& span) {
  if (span.size() != 10 && span.size() != 7) return "";
  for (size_t i = 0; i < span.size(); ++i) {
    const bool dash = i == 4 || i == 7;
    if (dash ? span[i] != '-' : (span[i] < '0' || span[i] > '9')) return "";
  }
  return span.substr(0, 7);
}

// The first day of the month after "YYYY-MM". REQUIRES: MonthOf(month) == month.
Result<int64_t> NextMonthStart(const std::string& month) {
  int year = (month[0] - '0') * 1000 + (month[1] - '0') * 100 + (month[2] - '0') * 10 + (month[3] - '0');
  int mon = (month[5] - '0') * 10 + (month[6] - '0');
  if (++mon == 13) {
    mon = 1;
    ++year;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-01", year % 10000, mon % 100);
  return ParseDay(buf);
}

// A month to compact and the segments that fold into it.
using MonthPlan = std::pair<std::string, std::vector<const SegmentInfo*>>;

// The months that end before `before` and are not one month segment already, with the
// segments to fold; *total: their bytes.
std::vector<MonthPlan> PlanMonths(const std::vector<SegmentInfo>& segments, int64_t before, uint64_t* total) {
  std::map<std::string, std::vector<const SegmentInfo*>> months;
  for (const SegmentInfo& seg : segments) {
    const std::string month = MonthOf(seg.span);
    if (month.empty()) continue;
    Result<int64_t> next = NextMonthStart(month);
    if (!next.ok() || *next > before) continue;
    months[month].push_back(&seg);
  }
  std::vector<MonthPlan> plan;
  *total = 0;
  for (auto& [month, segs] : months) {
    if (segs.size() == 1 && segs[0]->span == month) continue;  // already one month segment
    for (const SegmentInfo* s : segs) {
      for (const FileSummary& f : s->files) *total += f.bytes;
    }
    plan.emplace_back(month, segs);
  }
  return plan;
}

// The month segment of plan staged in txn, empty: what its folded segments cover, export
// and mark late.
Result<SegmentInfo> StageMonthSegment(const MonthPlan& plan, uint32_t shards, Transaction* txn) {
  SegmentInfo info;
  info.span = plan.first;
  info.name = info.span + "." + WorkDir::NewId();
  info.dir = txn->StagingPath(info.name);
  info.shards = shards;
  info.files.resize(shards);
  for (const SegmentInfo* s : plan.second) {
    for (const auto& [unit, source] : s->covers) info.covers[unit] = source;
    for (const auto& [day, digests] : s->exports.days) info.exports.days[day] = digests;
    info.exports.parts.insert(s->exports.parts.begin(), s->exports.parts.end());
    info.late.insert(s->late.begin(), s->late.end());
  }
  if (Status s = MakeDirs(info.dir); !s.ok()) return s;
  return info;
}

// Shard k of the folded segments merged into shard k of *made; collisions logged and counted.
Status MergeMonthShard(const MonthPlan& plan, uint32_t k, SegmentInfo* made, Progress* progress,
                       std::mutex* mu, uint64_t* collisions) {
  std::vector<std::string> inputs;
  for (const SegmentInfo* s : plan.second) inputs.push_back(s->ShardPath(k));
  SortedFileWriter out;
  if (Status s = out.Open(made->ShardPath(k), /*with_footer=*/true); !s.ok()) return s;
  MergeStats stats;
  uint64_t last = 0;
  auto on_collision = [&](const std::string& text) {
    std::lock_guard<std::mutex> lock(*mu);
    ++*collisions;
    std::fprintf(stderr, "clickatron-rebuild: %s\n", text.c_str());
  };
  auto on_progress = [&](uint64_t bytes) {
    progress->Add(0, bytes - last);
    last = bytes;
    progress->Tick();
  };
  if (Status s = MergeSegments(inputs, &out, &stats, on_collision, on_progress); !s.ok()) return s;
  if (Status s = out.Finish(); !s.ok()) return s;
  progress->Add(stats.records_in, stats.bytes_in - last);
  made->files[k] = out.summary();
  return Status::OK();
}

}  // namespace

Status RunCompact(const Options& options, WorkDir* work) {
  Result<std::vector<SegmentInfo>> segments = work->Segments();
  if (!segments.ok()) return segments.status();
  if (segments->empty()) {
    Progress progress("compact");
    progress.Summary("no segments, nothing to do");
    return Status::OK();
  }
  const uint32_t shards = segments->front().shards;
  if (Status s = CheckShardCount(*segments, shards); !s.ok()) return s;
  uint64_t total = 0;
  const std::vector<MonthPlan> plan = PlanMonths(*segments, int64_t(options.before), &total);
  Progress progress("compact", total);
  if (plan.empty()) {
    progress.Summary("no whole month before " + FormatDay(options.before) + " has day segments, nothing to do");
    return Status::OK();
  }

  Transaction txn(*work);
  if (Status s = txn.Begin(); !s.ok()) return s;
  std::vector<SegmentInfo> made(plan.size());
  for (size_t m = 0; m < plan.size(); ++m) {
    Result<SegmentInfo> staged = StageMonthSegment(plan[m], shards, &txn);
    if (!staged.ok()) return staged.status();
    made[m] = std::move(staged).value();
  }
  std::mutex mu;
  uint64_t collisions = 0;
  Status result = RunTasks(plan.size() * shards, options.jobs, [&](size_t task) -> Status {
    const size_t m = task / shards;
    return MergeMonthShard(plan[m], uint32_t(task % shards), &made[m], &progress, &mu, &collisions);
  });
  if (!result.ok()) return result;
  size_t folded = 0;
  for (size_t m = 0; m < plan.size(); ++m) {
    if (Status s = WriteFileAtomic(made[m].dir + "/meta", FormatSegmentMeta(made[m])); !s.ok()) return s;
    txn.AddSegment(made[m].name);
    for (const SegmentInfo* s : plan[m].second) {
      txn.RemoveSegment(s->name);
      ++folded;
    }
  }
  if (Status s = txn.Commit(); !s.ok()) return s;
  std::string names;
  for (const auto& p : plan) names += (names.empty() ? "" : " ") + p.first;
  progress.Summary(std::to_string(folded) + " segment(s) → " + std::to_string(plan.size()) +
                   " month segment(s) (" + names + ")" +
                   (collisions ? ", " + std::to_string(collisions) + " hash collision(s)" : ""));
  return Status::OK();
}

}  // namespace clickatron::rebuild
