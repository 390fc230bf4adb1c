// `late`: the late data of every API of the config (`api =` lines) into the work
// directory, as segments that add to the days they hold (docs/api.md#clickatron-rebuild,
// docs/operations.md#the-nightly-job).
//
// An API keeps increments the realtime tier refused as closed or expired (late data) and
// answers them on GET /late?after=ID: realtime records, key order, the #END footer, with
// X-Late-First / X-Late-Last (the entry ids included) and X-Late-More: 1 when a bounded
// answer left some out. For each API:
//
//   after = the higher of the live manifest's `late` id for it and the last late id the
//           segments already hold (a night that segmented late data but failed before
//           publish must not fetch it a second time);
//   fetch pages into DIR/late/<host_port>/page-N.csv (each checked against its footer)
//   until X-Late-More is absent, sort them into late segments of the days they hold
//   (work_dir.h: `late = <api> <first> <last>`, covering no day), commit, drop the pages.
//
// An API that cannot be reached or answers anything but a footed 200 is skipped with a
// warning: its entries stay in its store and come next night. Merging sums the late
// columns into whatever holds those hours, days already archived included.
//
// After publish, ReleaseLate tells every API the id the live manifest records for it
// (POST /late/release?through=ID), so it may drop those entries; a failure there is a
// warning too: the manifest id keeps them from being merged twice.
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "base/clip.h"
#include "base/durable_file.h"
#include "keyformat/footer.h"
#include "keyformat/key_value.h"
#include "keyformat/ymdh.h"
#include "net/fetch.h"
#include "rebuild/cluster_http.h"
#include "rebuild/commands.h"
#include "rebuild/export_files.h"
#include "rebuild/file.h"
#include "rebuild/late.h"
#include "rebuild/progress.h"
#include "rebuild/publish.h"
#include "rebuild/record_sorter.h"
#include "rebuild/segment_sink.h"
#include "rebuild/work_dir.h"
#include "wire/headers.h"

namespace clickatron::rebuild {
namespace {

void Warn(const std::string& text) { std::fprintf(stderr, "clickatron-rebuild: warning: %s\n", text.c_str()); }

// A header that must be a count; nullopt when absent or not one.
std::optional<uint64_t> CountHeader(const net::HttpResponse& response, std::string_view name) {
  std::optional<std::string_view> text = response.Header(name);
  uint64_t value;
  if (!text || !ParseCount(*text, &value)) return std::nullopt;
  return value;
}

struct LatePage {
  std::string path;
  uint64_t first = 0, last = 0;  // ids; last == after when the page holds no entry
  bool more = false;
};

// One GET /late?after= into path, verified. Errors say what the API answered.
Result<LatePage> FetchPage(const net::HostPort& api, uint64_t after, const std::string& path, Progress* progress) {
  const std::string tmp = path + ".tmp";
  auto fail = [&](const std::string& message) -> Status {
    ::unlink(tmp.c_str());
    return Status::Error(message);
  };
  Result<FetchedFile> got = FetchFootedFile(api, "/late?after=" + std::to_string(after), tmp, progress);
  if (!got.ok()) return got.status().Prefixed("GET /late?after=" + std::to_string(after) + ": ");
  const net::HttpResponse& response = got->response;
  if (response.status != 200) {
    return fail("GET /late answered HTTP " + std::to_string(response.status) + ": " + ClippedLine(got->error_body, 200));
  }
  LatePage page;
  page.path = path;
  const std::optional<uint64_t> first = CountHeader(response, wire::kLateFirstHeader);
  const std::optional<uint64_t> last = CountHeader(response, wire::kLateLastHeader);
  if (!last || *last < after || (*last > after && (!first || *first <= after || *first > *last))) {
    return fail("GET /late answered without valid X-Late-First / X-Late-Last headers (after " +
                std::to_string(after) + ")");
  }
  page.last = *last;
  page.first = *last > after ? *first : after;
  page.more = response.Header(wire::kLateMoreHeader).value_or("") == "1";
  if (page.last == after && got->records != 0) return fail("GET /late answered records but no entry id");
  if (Status s = RenameDurable(tmp, path); !s.ok()) return s;
  return page;
}

// "10.0.0.1_8000": a directory name for an API.
std::string ApiDirName(const net::HostPort& api) { return api.host + "_" + std::to_string(api.port); }

// The late data of one API after `after` into late segments; the range merged, or
// nullopt when it had none. Errors are the API's (the caller warns and skips it) or the
// work directory's.
Result<std::optional<LateRange>> MergeLateOf(const Options& options, WorkDir* work, const net::HostPort& api,
                                             uint64_t after, Day lookup_day, Progress* progress, bool* api_error) {
  const std::string dir = work->Path("late/" + ApiDirName(api));
  if (Status s = RemoveAll(dir); !s.ok()) return s;
  if (Status s = MakeDirs(dir); !s.ok()) return s;
  std::vector<LatePage> pages;
  uint64_t next = after;
  while (true) {
    Result<LatePage> page = FetchPage(api, next, dir + "/page-" + std::to_string(pages.size()) + ".csv", progress);
    if (!page.ok()) {
      *api_error = true;
      RemoveAll(dir);
      return page.status();
    }
    if (page->last == next) break;  // nothing more
    next = page->last;
    const bool more = page->more;
    pages.push_back(std::move(page).value());
    if (!more) break;
  }
  if (pages.empty()) {
    RemoveAll(dir);
    return std::optional<LateRange>();
  }
  const LateRange range{api.ToString(), pages.front().first, pages.back().last};
  Transaction txn(*work);
  if (Status s = txn.Begin(); !s.ok()) return s;
  const std::string runs = txn.StagingPath("runs");
  if (Status s = MakeDirs(runs); !s.ok()) return s;
  RecordSorter sorter(SorterOptions{options.archive_shards, options.memory, runs, lookup_day, 0, options.jobs});
  for (const LatePage& page : pages) {
    if (Status s = SortFootedFile(page.path, "late data", &sorter, progress); !s.ok()) {
      *api_error = true;
      return s;
    }
  }
  SegmentSink sink(&txn, options.archive_shards, range);
  auto on_collision = [](const std::string& text) { std::fprintf(stderr, "clickatron-rebuild: %s\n", text.c_str()); };
  if (Status s = sorter.Finish(&sink, on_collision); !s.ok()) return s;
  if (Status s = sink.Finish(); !s.ok()) return s;
  if (Status s = RemoveAll(runs); !s.ok()) return s;
  if (Status s = txn.Commit(); !s.ok()) return s;
  RemoveAll(dir);
  return std::optional<LateRange>(range);
}

}  // namespace

Status RunLate(const Options& options, WorkDir* work) {
  Progress progress("late");
  if (options.api.empty()) {
    progress.Summary("no api = lines in the config, nothing to do");
    return Status::OK();
  }
  Result<std::optional<Manifest>> live = LiveManifest(*work);
  if (!live.ok()) return live.status();
  Result<std::vector<SegmentInfo>> segments = work->Segments();
  if (!segments.ok()) return segments.status();
  if (Status s = CheckShardCount(*segments, options.archive_shards); !s.ok()) return s;
  const std::map<std::string, uint64_t> held = LateMarks(*segments);
  // Lookups have no day: they go with the newest day the night archives.
  const Day lookup_day = options.through ? options.through : options.day ? options.day : DefaultThroughDay();
  std::vector<std::string> parts;
  for (const net::HostPort& api : options.api) {
    const std::string name = api.ToString();
    uint64_t after = 0;
    if (*live) {
      auto it = (*live)->late.find(name);
      if (it != (*live)->late.end()) after = it->second;
    }
    if (auto it = held.find(name); it != held.end()) after = std::max(after, it->second);
    bool api_error = false;
    Result<std::optional<LateRange>> merged =
        MergeLateOf(options, work, api, after, lookup_day, &progress, &api_error);
    if (!merged.ok()) {
      if (!api_error) return merged.status();
      Warn("late data of API " + name + " skipped (it comes next night): " + merged.status().message());
      parts.push_back(name + " skipped");
      continue;
    }
    if (!*merged) {
      parts.push_back(name + " none after " + std::to_string(after));
    } else {
      parts.push_back(name + " entries " + std::to_string((*merged)->first) + ".." + std::to_string((*merged)->last));
    }
  }
  std::string text;
  for (const std::string& p : parts) text += (text.empty() ? "" : ", ") + p;
  progress.Summary(text);
  return Status::OK();
}

void ReleaseLate(const Options& options, const Manifest& live) {
  for (const net::HostPort& api : options.api) {
    auto it = live.late.find(api.ToString());
    if (it == live.late.end() || it->second == 0) continue;
    const std::string path = "/late/release?through=" + std::to_string(it->second);
    Result<HttpResult> r = HttpCall(api, "POST", path, options.timeout_ms);
    if (!r.ok()) {
      Warn(r.status().message() + " (the API keeps its late entries; the manifest keeps them from being merged twice)");
    } else if (r->status != 200) {
      Warn("POST " + path + " to " + api.ToString() + ": HTTP " + std::to_string(r->status) + " " +
           ClippedLine(r->body, 200) + " (the manifest keeps them from being merged twice)");
    }
  }
}

}  // namespace clickatron::rebuild
