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
#include "rebuild/cluster_http.h"
#include "rebuild/commands.h"
#include "rebuild/export_files.h"
#include "rebuild/file.h"
#include "rebuild/progress.h"
#include "rebuild/tasks.h"
#include "rebuild/work_dir.h"

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

}  // namespace

Status RunExport(const Options& options, WorkDir* work) {
  const Day day = options.day;
  const std::string dir = ExportDir(*work, day);
  if (Status s = MakeDirs(dir); !s.ok()) return s;
  Progress progress("export " + FormatDay(day));
  std::vector<size_t> selected;
  for (size_t n = 0; n < options.realtime.size(); ++n) {
    if (options.shard < 0 || size_t(options.shard) == n) selected.push_back(n);
  }
  std::vector<uint64_t> records(selected.size(), 0);
  std::vector<bool> fetched(selected.size(), false);
  Status result = RunTasks(selected.size(), options.jobs, [&](size_t i) -> Status {
    const size_t n = selected[i];
    const net::HostPort& to = options.realtime[n];
    const std::string path = ExportPath(*work, day, uint32_t(n));
    const std::string what = "realtime shard " + std::to_string(n) + " (" + to.ToString() + ")";
    // First the close: what the export then reads is final (a later write is late data).
    const std::string refused = "export of " + FormatDay(day) + " from " + what + " refused: ";
    const std::string close = "/close?day=" + FormatDay(day);
    Result<HttpResult> closed = HttpCall(to, "POST", close, options.timeout_ms);
    if (!closed.ok()) return Status::Error(refused + closed.status().message());
    if (closed->status != 200) {
      return Status::Error(refused + "POST " + close + ": HTTP " + std::to_string(closed->status) + ": " +
                           ClippedLine(closed->body, 200));
    }
    if (Exists(path)) {
      Status s = VerifyExportFile(path, &records[i]);
      if (s.ok()) return s;
      std::fprintf(stderr, "clickatron-rebuild: %s: fetching again\n", s.message().c_str());
    }
    const std::string tmp = path + ".tmp";
    auto fail = [&](const std::string& message) { return Status::Error(refused + message); };
    Result<FetchedFile> got = FetchFootedFile(to, "/export?day=" + FormatDay(day), tmp, &progress);
    if (!got.ok()) return fail(got.status().message());
    if (got->response.status == 404) {
      return fail("the shard does not hold " + FormatDay(day) + " (404: " + ClippedLine(got->error_body, 200) + ")");
    }
    if (got->response.status != 200) {
      return fail("HTTP " + std::to_string(got->response.status) + ": " + ClippedLine(got->error_body, 200));
    }
    if (Status s = RenameDurable(tmp, path); !s.ok()) return s;
    records[i] = got->records;
    fetched[i] = true;
    return Status::OK();
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
