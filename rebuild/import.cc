// `import`: bulk-load history given as realtime-format lines (docs/api.md#clickatron-rebuild).
//
// The input is read once, each line parsed once into the external sort (record_sorter.h),
// on --jobs threads that each take the next chunk of lines (chunk_reader.h) and sort and
// spill their own share of --memory while the others go on parsing; malformed lines are
// reported in input order with their line numbers and, past --max-errors, abort the
// import before anything is written (exactly where one thread would). Then the sorted output becomes one segment per day
// (plus one for the lookup records), all committed in one transaction.
//
// Importing twice never counts twice: an import is identified by the XXH64 of its bytes.
// The same input again is a no-op; an input whose days already have segments from
// anywhere else is refused unless --replace, which replaces those days' segments (a day
// already folded into a month segment by `compact` cannot be replaced alone).
//
// `--executor slurm` loads a large history as a graph of Slurm jobs instead
// (slurm_executor.h: split by day, the chunks imported in parallel, merged per shard).
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "keyformat/hex64.h"
#include "keyformat/ymdh.h"
#include "rebuild/chunk_reader.h"
#include "rebuild/commands.h"
#include "rebuild/day_cover.h"
#include "rebuild/file.h"
#include "rebuild/progress.h"
#include "rebuild/record_sorter.h"
#include "rebuild/segment_sink.h"
#include "rebuild/slurm_executor.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

namespace {

constexpr uint64_t kErrorsShown = 20;

// The malformed lines of one chunk, by their (1-based) number within it.
struct ChunkResult {
  uint64_t lines = 0;
  std::vector<std::pair<uint64_t, std::string>> errors;
};

// Prints malformed lines in input order with their line numbers, whatever order the
// chunks finish in, and aborts past --max-errors at the very line one thread would.
class ErrorReport {
 public:
  ErrorReport(std::string path, uint64_t max_errors) : path_(std::move(path)), max_errors_(max_errors) {}

  // Chunk `index` is done; the abort error once more than --max-errors lines were malformed.
  Status Done(uint64_t index, ChunkResult result) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.emplace(index, std::move(result));
    while (abort_.ok() && !pending_.empty() && pending_.begin()->first == next_) {
      const ChunkResult& r = pending_.begin()->second;
      for (const auto& [line, message] : r.errors) {
        const uint64_t number = lines_before_ + line;
        if (++errors_ <= kErrorsShown) {
          std::fprintf(stderr, "clickatron-rebuild: %s line %llu: %s\n", path_.c_str(),
                       static_cast<unsigned long long>(number), message.c_str());
        }
        if (errors_ > max_errors_) {
          abort_ = Status::Error("import aborted at line " + std::to_string(number) + ": " +
                                 std::to_string(errors_) + " malformed line(s), more than --max-errors " +
                                 std::to_string(max_errors_) + "; nothing was imported");
          break;
        }
      }
      lines_before_ += r.lines;
      pending_.erase(pending_.begin());
      ++next_;
    }
    return abort_;
  }
  uint64_t errors() const {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }

 private:
  const std::string path_;
  const uint64_t max_errors_;
  mutable std::mutex mu_;
  std::map<uint64_t, ChunkResult> pending_;  // done, but an earlier chunk is not
  uint64_t next_ = 0, lines_before_ = 0, errors_ = 0;
  Status abort_;
};

// One thread's share of the reading: chunks into its feeder until the input ends, stop
// is set, or an error.
Status FeedChunks(ChunkReader* reader, RecordSorter::Feeder* feeder, ErrorReport* report,
                  Progress* progress, const std::atomic<bool>* stop) {
  std::vector<char> buffer;
  std::string_view text;
  uint64_t index;
  while (!stop->load() && reader->Next(&buffer, &text, &index)) {
    ChunkResult result;
    for (size_t pos = 0; pos < text.size();) {
      const char* nl = static_cast<const char*>(std::memchr(text.data() + pos, '\n', text.size() - pos));
      const size_t end = nl != nullptr ? size_t(nl - text.data()) : text.size();
      ++result.lines;
      if (Status s = feeder->Add(text.substr(pos, end - pos)); !s.ok()) {
        if (feeder->io_error()) return s;
        result.errors.emplace_back(result.lines, s.message());
      }
      pos = end + 1;
    }
    progress->Add(result.lines, text.size());
    progress->Tick();
    if (Status s = report->Done(index, std::move(result)); !s.ok()) return s;
  }
  return Status::OK();
}

// Step 1: every line of the input into the sorter, on its feeder threads. Returns the
// number of malformed lines skipped (each printed), or the abort past --max-errors.
Result<uint64_t> SortInput(ChunkReader* reader, RecordSorter* sorter, uint64_t max_errors, Progress* progress) {
  ErrorReport report(reader->path(), max_errors);
  std::atomic<bool> stop{false};
  std::vector<Status> results(sorter->feeder_count());
  auto feed = [&](size_t t) {
    results[t] = FeedChunks(reader, sorter->feeder(t), &report, progress, &stop);
    if (!results[t].ok()) stop = true;
  };
  std::vector<std::thread> feeders;
  for (size_t t = 1; t < sorter->feeder_count(); ++t) feeders.emplace_back(feed, t);
  feed(0);
  for (std::thread& t : feeders) t.join();
  for (const Status& s : results) {
    if (!s.ok()) return s;
  }
  if (Status s = reader->status(); !s.ok()) return s;
  const uint64_t errors = report.errors();
  if (errors > kErrorsShown) {
    std::fprintf(stderr, "clickatron-rebuild: ... %llu malformed lines in all\n",
                 static_cast<unsigned long long>(errors));
  }
  return errors;
}

// Step 2's refusal: days that already have data from elsewhere, without --replace.
Status RefuseTakenDays(const DayCoverPlan& plan) {
  std::vector<std::string> conflicts;
  for (const auto& [day, cover] : plan.taken) {
    conflicts.push_back(FormatDay(day) + " (segment " + cover.segment + ", from " + cover.source + ")");
  }
  std::string list;
  for (size_t i = 0; i < conflicts.size() && i < 5; ++i) list += (i ? ", " : "") + conflicts[i];
  if (conflicts.size() > 5) list += ", ... (" + std::to_string(conflicts.size()) + " days)";
  return Status::Error("refusing to import: these days already have data: " + list +
                       "; use --replace to replace them (nothing was imported)");
}

// --manifest FILE: the input is a published generation's records (ops/archive-to-history), and
// FILE its manifest. What the manifest says was merged — every realtime shard's export of
// each day, per API the last late entry — is carried into the new segments, so that the
// rebuilt work directory knows it too: the nightly then neither exports those days again
// nor fetches that late data twice (docs/operations.md#backups-and-restore). Returns the days
// the manifest records (each gets a segment, empty when the input has no record of it).
Result<std::vector<Day>> CarryManifest(const std::string& path, SegmentSink* sink) {
  std::vector<Day> days;
  if (path.empty()) return days;
  Result<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  Result<Manifest> manifest = ParseManifest(*text);
  if (!manifest.ok()) return manifest.status().Prefixed("--manifest " + path + ": ");
  std::map<std::string, std::vector<DayPart>> parts;
  for (const DayPart& part : manifest->exports.parts) parts[part.day].push_back(part);
  std::set<std::string> all;
  for (const auto& [day, digests] : manifest->exports.days) all.insert(day);
  for (const auto& [day, list] : parts) all.insert(day);
  for (const std::string& text_day : all) {
    const Day day = Day(*ParseDay(text_day));  // parsed already by ParseManifest
    auto d = manifest->exports.days.find(text_day);
    sink->SetExports(day, d == manifest->exports.days.end() ? std::vector<uint64_t>() : d->second, parts[text_day]);
    days.push_back(day);
  }
  for (const auto& [api, id] : manifest->late) sink->CarryLate(LateRange{api, id, id});
  return days;
}

// The one-line summary of an import that wrote its segments.
std::string ImportSummary(const SorterStats& st, const std::vector<Day>& days, uint32_t shards, uint64_t errors,
                          size_t replaced) {
  std::string text = std::to_string(st.records_in) + " records → " + std::to_string(st.lines_out) +
                     " archive lines (" + std::to_string(st.columns_out) + " data points), " +
                     std::to_string(days.size()) + " day(s)";
  if (!days.empty()) text += " " + FormatDay(days.front()) + ".." + FormatDay(days.back());
  text += ", " + std::to_string(shards) + " shard(s), " + std::to_string(st.runs) + " run(s)";
  if (errors) text += ", " + std::to_string(errors) + " malformed line(s) skipped";
  if (st.collisions) text += ", " + std::to_string(st.collisions) + " hash collision(s)";
  if (replaced) text += ", replaced " + std::to_string(replaced) + " segment(s)";
  return text;
}

}  // namespace

Status RunImport(const Options& options, WorkDir* work) {
  if (options.executor == "slurm") return RunImportOnSlurm(options, work);
  Result<std::vector<SegmentInfo>> existing = work->Segments();
  if (!existing.ok()) return existing.status();
  if (Status s = CheckShardCount(*existing, options.archive_shards); !s.ok()) return s;

  Transaction txn(*work);
  if (Status s = txn.Begin(); !s.ok()) return s;
  const std::string runs = txn.StagingPath("runs");
  if (Status s = MakeDirs(runs); !s.ok()) return s;

  ChunkReader reader;
  if (Status s = reader.Open(options.input); !s.ok()) return s;
  Progress progress("import", reader.file_size());
  RecordSorter sorter(SorterOptions{options.archive_shards, options.memory, runs, kLookupDay, 0,
                                    options.jobs, options.jobs});
  Result<uint64_t> errors = SortInput(&reader, &sorter, options.max_errors, &progress);
  if (!errors.ok()) return errors.status();

  // Step 2: the input's days against the segments already there.
  const std::string source = "import-" + Hex64(reader.digest());
  const std::vector<Day> days = sorter.Days();
  const std::map<std::string, Cover> coverage = CoverageOf(*existing);
  const DayCoverPlan plan = PlanDayCover(coverage, days, source);
  if (!plan.unreplaceable.ok()) return plan.unreplaceable;
  // Idempotent by content: every unit of this input already covered by this very input.
  const bool lookups_mine = !sorter.has_lookups() || coverage.count("lookups " + source);
  if ((!days.empty() || sorter.has_lookups()) && plan.all_mine && lookups_mine) {
    progress.Summary("already imported (" + source + "), nothing to do: " + std::to_string(days.size()) + " day(s)");
    return Status::OK();
  }
  if (!plan.taken.empty() && !options.replace) return RefuseTakenDays(plan);

  // Step 3: the sorted output → one segment per day, committed with the replacements.
  SegmentSink sink(&txn, options.archive_shards, source);
  Result<std::vector<Day>> carried = CarryManifest(options.manifest, &sink);
  if (!carried.ok()) return carried.status();
  auto on_collision = [](const std::string& text) {
    std::fprintf(stderr, "clickatron-rebuild: %s\n", text.c_str());
  };
  if (Status s = sorter.Finish(&sink, on_collision); !s.ok()) return s;
  for (Day day : *carried) {
    if (Status s = sink.EnsureDay(day); !s.ok()) return s;
  }
  if (Status s = sink.Finish(); !s.ok()) return s;
  if (Status s = RemoveAll(runs); !s.ok()) return s;
  for (const std::string& name : plan.to_replace) txn.RemoveSegment(name);
  if (Status s = txn.Commit(); !s.ok()) return s;
  progress.Summary(ImportSummary(sorter.stats(), days, options.archive_shards, *errors, plan.to_replace.size()));
  return Status::OK();
}

}  // namespace clickatron::rebuild
