// `import`: bulk-load history given as realtime-format lines (SPEC 3.4).
//
// The input is read once, each line parsed once into the external sort (record_sorter.h);
// malformed lines are reported with their line numbers and, past --max-errors, abort the
// import before anything is written. Then the sorted output becomes one segment per day
// (plus one for the lookup records), all committed in one transaction.
//
// Importing twice never counts twice: an import is identified by the XXH64 of its bytes.
// The same input again is a no-op; an input whose days already have segments from
// anywhere else is refused unless --replace, which replaces those days' segments (a day
// already folded into a month segment by `compact` cannot be replaced alone).
#include <cstdio>
#include <set>

#include "keyformat/ymdh.h"
#include "rebuild/commands.h"
#include "rebuild/file.h"
#include "rebuild/footer.h"
#include "rebuild/progress.h"
#include "rebuild/record_sorter.h"
#include "rebuild/segment_sink.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

namespace {
constexpr uint64_t kErrorsShown = 20;
}

Status RunImport(const Options& options, WorkDir* work) {
  Result<std::vector<SegmentInfo>> existing = work->Segments();
  if (!existing.ok()) return existing.status();
  if (Status s = CheckShardCount(*existing, options.archive_shards); !s.ok()) return s;

  Transaction txn(*work);
  if (Status s = txn.Begin(); !s.ok()) return s;
  const std::string runs = txn.StagingPath("runs");
  if (Status s = MakeDirs(runs); !s.ok()) return s;

  LineReader reader;
  if (Status s = reader.Open(options.input); !s.ok()) return s;
  reader.EnableDigest();
  Progress progress("import", reader.file_size());
  RecordSorter sorter(SorterOptions{options.archive_shards, options.memory, runs, kLookupDay, 0, options.jobs});
  uint64_t errors = 0;
  std::string_view line;
  uint64_t since_tick = 0;
  while (reader.Next(&line)) {
    Status s = sorter.Add(line);
    if (!s.ok()) {
      if (sorter.io_error()) return s;
      ++errors;
      if (errors <= kErrorsShown) {
        std::fprintf(stderr, "clickatron-rebuild: %s line %llu: %s\n", reader.path().c_str(),
                     static_cast<unsigned long long>(reader.line_number()), s.message().c_str());
      }
      if (errors > options.max_errors) {
        return Status::Error("import aborted at line " + std::to_string(reader.line_number()) + ": " +
                             std::to_string(errors) + " malformed line(s), more than --max-errors " +
                             std::to_string(options.max_errors) + "; nothing was imported");
      }
    }
    if (++since_tick == 65536) {
      progress.Add(since_tick, reader.bytes_read() - progress.bytes());
      since_tick = 0;
      progress.Tick();
    }
  }
  if (!reader.status().ok()) return reader.status();
  progress.Add(since_tick, reader.bytes_read() - progress.bytes());
  if (errors > kErrorsShown) {
    std::fprintf(stderr, "clickatron-rebuild: ... %llu malformed lines in all\n",
                 static_cast<unsigned long long>(errors));
  }

  const std::string source = "import-" + Hex64(reader.digest());
  const std::vector<Day> days = sorter.Days();
  const std::map<std::string, Cover> coverage = CoverageOf(*existing);
  // Idempotent by content: every unit of this input already covered by this very input.
  bool all_mine = !days.empty() || sorter.has_lookups();
  std::set<std::string> to_remove;
  std::vector<std::string> conflicts;
  for (Day day : days) {
    auto it = coverage.find(FormatDay(day));
    if (it == coverage.end()) {
      all_mine = false;
      continue;
    }
    if (it->second.source == source) continue;
    all_mine = false;
    conflicts.push_back(FormatDay(day) + " (segment " + it->second.segment + ", from " + it->second.source + ")");
    if (it->second.span != FormatDay(day)) {
      return Status::Error("day " + FormatDay(day) + " is already in the compacted segment " +
                           it->second.segment + "; it cannot be replaced on its own");
    }
    to_remove.insert(it->second.segment);
  }
  if (sorter.has_lookups() && !coverage.count("lookups " + source)) all_mine = false;
  if (all_mine) {
    progress.Summary("already imported (" + source + "), nothing to do: " + std::to_string(days.size()) + " day(s)");
    return Status::OK();
  }
  if (!conflicts.empty() && !options.replace) {
    std::string list;
    for (size_t i = 0; i < conflicts.size() && i < 5; ++i) list += (i ? ", " : "") + conflicts[i];
    if (conflicts.size() > 5) list += ", ... (" + std::to_string(conflicts.size()) + " days)";
    return Status::Error("refusing to import: these days already have data: " + list +
                         "; use --replace to replace them (nothing was imported)");
  }

  SegmentSink sink(&txn, options.archive_shards, source);
  auto on_collision = [](const std::string& text) {
    std::fprintf(stderr, "clickatron-rebuild: %s\n", text.c_str());
  };
  if (Status s = sorter.Finish(&sink, on_collision); !s.ok()) return s;
  if (Status s = sink.Finish(); !s.ok()) return s;
  if (Status s = RemoveAll(runs); !s.ok()) return s;
  for (const std::string& name : to_remove) txn.RemoveSegment(name);
  if (Status s = txn.Commit(); !s.ok()) return s;

  const SorterStats& st = sorter.stats();
  std::string text = std::to_string(st.records_in) + " records → " + std::to_string(st.lines_out) +
                     " archive lines (" + std::to_string(st.columns_out) + " data points), " +
                     std::to_string(days.size()) + " day(s)";
  if (!days.empty()) text += " " + FormatDay(days.front()) + ".." + FormatDay(days.back());
  text += ", " + std::to_string(options.archive_shards) + " shard(s), " + std::to_string(st.runs) + " run(s)";
  if (errors) text += ", " + std::to_string(errors) + " malformed line(s) skipped";
  if (st.collisions) text += ", " + std::to_string(st.collisions) + " hash collision(s)";
  if (!to_remove.empty()) text += ", replaced " + std::to_string(to_remove.size()) + " segment(s)";
  progress.Summary(text);
  return Status::OK();
}

}  // namespace clickatron::rebuild
