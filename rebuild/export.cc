// `export --day D`: POST /close?day=D, then GET /export?day=D, on every realtime shard into
// DIR/export/D/shard-N.csv (shards in parallel with --jobs). The close makes the day final
// on the shard (docs/realtime.md#day-lifecycle): what is exported is all the shard will
// ever hold of it, and a later write for it is refused as late data.
//
// The body is streamed to a temp file while its lines are counted and hashed; the last
// line must be the `#END` footer matching them (keyformat/footer.h), else the export is
// refused and the step fails naming the shard. Only a verified file is fsynced and renamed into place,
// so a file that exists is complete; re-running skips shards whose file is already there
// (checked again against its footer). `--shard N` does realtime shard N only (a task of the
// Slurm executor, slurm_executor.h).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "base/clip.h"
#include "base/durable_file.h"
#include "base/errno_status.h"
#include "keyformat/footer.h"
#include "keyformat/ymdh.h"
#include "net/fetch.h"
#include "keyformat/day_ring.h"
#include "keyformat/hex64.h"
#include "rebuild/cluster_http.h"
#include "rebuild/cluster_view.h"
#include "rebuild/commands.h"
#include "rebuild/export_files.h"
#include "rebuild/file.h"
#include "rebuild/progress.h"
#include "rebuild/tasks.h"
#include "rebuild/work_dir.h"
#include "wire/headers.h"

namespace clickatron::rebuild {
namespace {

Status VerifyExportFile(const std::string& path, uint64_t* records) {
  FootedStreamCheck check;
  if (Status s = ForEachBlock(path, 4 << 20, [&check](std::string_view block) { check.Add(block); });
      !s.ok()) {
    return s;
  }
  if (Status s = check.Finish(); !s.ok()) return Status::Error(path + ": " + s.message());
  *records = check.records();
  return Status::OK();
}

// Realtime shard n answered 404 DAY_NOT_HELD for `day`, which it closed: when its slot for
// the day holds a newer one, the day was never written there (a first write opens a slot,
// and a slot moves on only once its day is released, which the rebuild does only for a day
// the archive holds), so its export is empty. Anything else stays the error it was.
Result<bool> NeverHeld(const Options& options, size_t n, Day day, std::string* ring) {
  Result<wire::RealtimeStatsFields> stats = ReadRealtimeStatsOf(options.realtime[n], options.timeout_ms);
  if (!stats.ok()) return stats.status();
  const size_t slot = size_t(SlotOfDay(day));
  if (slot >= stats->slots.size() || stats->slots[slot].day.empty()) return false;
  Result<int64_t> held = ParseDay(stats->slots[slot].day);
  Result<int64_t> closed = ParseDay(stats->closed_through);
  *ring = stats->ring;
  return held.ok() && closed.ok() && *held > int64_t(day) && *closed >= int64_t(day);
}

// Writes `text` as DIR/export/<day>/shard-N.ring (nothing when the server named no ring).
Status WriteRing(const WorkDir& work, Day day, uint32_t n, std::string_view ring) {
  if (ring.empty()) return Status::OK();
  if (!ParseHex64(ring).ok()) return Status::Error("realtime shard " + std::to_string(n) + " names its ring '" +
                                                   Clipped(ring, 40) + "', not 16 hex digits");
  return WriteFileAtomic(ExportRingPath(work, day, n), std::string(ring) + "\n");
}

// Closes `day` on realtime shard n and fetches its export into place (export/<day>/shard-n.csv,
// its ring beside it); skips a file already there that checks out. *records: its records;
// *fetched: whether it was fetched now.
Status ExportShard(const Options& options, WorkDir* work, Day day, uint32_t n, Progress* progress,
                   uint64_t* records, bool* fetched) {
  const net::HostPort& to = options.realtime[n];
  const std::string path = ExportPath(*work, day, n);
  const std::string refused = "export of " + FormatDay(day) + " from " + RealtimeShardName(options, n) + " refused: ";
  // First the close: what the export then reads is final (a later write is late data).
  const std::string close = "/close?day=" + FormatDay(day);
  Result<HttpResult> closed = HttpCall(to, "POST", close, options.timeout_ms);
  if (!closed.ok()) return Status::Error(refused + closed.status().message());
  if (closed->status != 200) {
    return Status::Error(refused + "POST " + close + ": HTTP " + std::to_string(closed->status) + ": " +
                         ClippedLine(closed->body, 200));
  }
  if (Exists(path)) {
    // A file fetched from another ring (the shard's disk was replaced since) is not this
    // ring's day: fetched again.
    Result<DayPart> part = ExportPart(*work, day, n);
    Result<wire::RealtimeStatsFields> stats = ReadRealtimeStatsOf(to, options.timeout_ms);
    const bool same_ring = part.ok() && stats.ok() && (part->ring == 0 || stats->ring == Hex64(part->ring));
    Status s = same_ring ? VerifyExportFile(path, records) : Status::Error(path + " was read from another ring");
    if (s.ok()) return s;
    std::fprintf(stderr, "clickatron-rebuild: %s: fetching again\n", s.message().c_str());
  }
  const std::string tmp = path + ".tmp";
  Result<FetchedFile> got = FetchFootedFile(to, "/export?day=" + FormatDay(day), tmp, progress);
  if (!got.ok()) return Status::Error(refused + got.status().message());
  std::string ring(got->response.Header(wire::kRingHeader).value_or(""));
  if (got->response.status == 404) {
    Result<bool> never = NeverHeld(options, n, day, &ring);
    if (!never.ok() || !*never) {
      return Status::Error(refused + "the shard does not hold " + FormatDay(day) + " (404: " +
                           ClippedLine(got->error_body, 200) + ")");
    }
    std::fprintf(stderr, "clickatron-rebuild: export: %s never held %s (its slot holds a later day): empty\n",
                 RealtimeShardName(options, n).c_str(), FormatDay(day).c_str());
    if (Status s = WriteRing(*work, day, n, ring); !s.ok()) return s;
    *records = 0;
    *fetched = true;
    return WriteFileAtomic(path, FormatFooter(Footer{0, XXH64(nullptr, 0, kFooterHashSeed)}));
  }
  if (got->response.status != 200) {
    return Status::Error(refused + "HTTP " + std::to_string(got->response.status) + ": " + ClippedLine(got->error_body, 200));
  }
  if (Status s = WriteRing(*work, day, n, ring); !s.ok()) return s;
  if (Status s = RenameDurable(tmp, path); !s.ok()) return s;
  *records = got->records;
  *fetched = true;
  return Status::OK();
}

}  // namespace

Status RunExport(const Options& options, WorkDir* work) {
  const Day day = options.day;
  const std::string dir = ExportDir(*work, day);
  if (Status s = MakeDirs(dir); !s.ok()) return s;
  Progress progress("export " + FormatDay(day));
  std::vector<uint32_t> selected;
  for (uint32_t n = 0; n < options.realtime.size(); ++n) {
    if (options.shard < 0 || uint32_t(options.shard) == n) selected.push_back(n);
  }
  std::vector<uint64_t> records(selected.size(), 0);
  std::vector<char> fetched(selected.size(), 0);
  Status result = RunTasks(selected.size(), options.jobs, [&](size_t i) -> Status {
    bool now = false;
    Status s = ExportShard(options, work, day, selected[i], &progress, &records[i], &now);
    fetched[i] = now;
    return s;
  });
  if (!result.ok()) return result;
  uint64_t total = 0, got = 0;
  for (size_t n = 0; n < records.size(); ++n) {
    total += records[n];
    got += fetched[n];
  }
  progress.Add(total, 0);
  const std::string from = options.shard < 0 ? std::to_string(records.size()) + " realtime shard(s)"
                                            : "realtime shard " + std::to_string(options.shard);
  progress.Summary(std::to_string(total) + " records from " + from + ", " + std::to_string(got) + " fetched, " +
                   std::to_string(records.size() - got) + " already there, footers verified");
  return Status::OK();
}

}  // namespace clickatron::rebuild
