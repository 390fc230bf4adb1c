#include "rebuild/options.h"

#include <cctype>
#include <iostream>

#include "base/wall_clock.h"
#include "config/option_loader.h"
#include "keyformat/ymdh.h"
#include "rebuild/commands.h"
#include "rebuild/record_sorter.h"

namespace clickatron::rebuild {

namespace po = config::po;

namespace {

// Flags read as text and turned into values once the command line is complete.
struct TextFlags {
  std::string memory, day, before, through, backup_codec;
};

// "usage: ..." and one line per command (commands.h).
std::string Usage() {
  std::string text = "usage: clickatron-rebuild COMMAND --work DIR [options]\n";
  for (const Command& c : Commands()) {
    std::string name = c.name;
    name.resize(std::max<size_t>(name.size(), 7), ' ');
    text += "  " + name + " " + c.flags + "\n";
  }
  return text;
}

void DeclareOptions(config::OptionLoader* loader, Options* out, TextFlags* text) {
  loader->Add()
      ("work", po::value(&out->work), "work directory")
      ("input", po::value(&out->input), "import: realtime-format history, or - for stdin")
      ("memory", po::value(&text->memory), "import/segment: memory bound, e.g. 2G (default 1G)")
      ("archive-shards", po::value<uint32_t>(), "archive shard count")
      ("jobs", po::value(&out->jobs), "parallel tasks (default 1)")
      ("max-errors", po::value(&out->max_errors), "import: malformed lines tolerated (default 0)")
      ("replace", po::bool_switch(&out->replace), "import: replace days that already have segments")
      ("backup", po::value(&out->backup), "publish: directory for the backup copy")
      ("backup-codec", po::value(&text->backup_codec), "publish: zstd (default) or gzip: the backup copy's codec")
      ("keep-generations", po::value(&out->keep_generations), "publish: generations kept (default 3)")
      ("allow-older", po::bool_switch(&out->allow_older),
       "publish, activate: make live a generation ending before the live one")
      ("generation", po::value(&out->generation), "activate: the generation DIR/gen/<id> to make live")
      ("manifest", po::value(&out->manifest),
       "import: the manifest of the generation the input came from (its merged exports and late marks are kept)")
      ("timeout-ms", po::value(&out->timeout_ms), "HTTP request timeout (default 30000)")
      ("day", po::value(&text->day), "export/segment: the day, YYYY-MM-DD; nightly: as --through")
      ("before", po::value(&text->before), "compact: months ending before this day")
      ("through", po::value(&text->through),
       "release: last day to release; nightly: last day to archive (default today UTC - 2)")
      ("executor", po::value(&out->executor), "nightly, import: local (default) or slurm")
      ("chunks", po::value(&out->chunks), "split, import on slurm: chunks of the input (default 4)")
      ("output", po::value(&out->output), "split: directory for the chunks")
      ("slurm-partition", po::value(&out->slurm_partition), "slurm: sbatch --partition")
      ("slurm-retries", po::value(&out->slurm_retries), "slurm: retries of a failed task (default 2)")
      ("slurm-requeue-exit", po::value(&out->slurm_requeue_exit),
       "slurm: the cluster's RequeueExit code (default 42; 0 = none)")
      ("shard", po::value(&out->shard),
       "export: one realtime shard; segment: that shard's part of a day the archive holds; merge: one archive shard")
      ("task", po::value(&out->task), "run as task NAME of a Slurm graph (set by the executor)")
      ("task-report", po::value(&out->task_report), "write records, bytes, CPU, peak RSS to FILE at the end");
  config::AddClusterLayoutOptions(loader);
  loader->AddPositional("command", po::value(&out->command), 1);
}

Status ReadMemory(const std::string& text, uint64_t* out) {
  if (text.empty()) return Status::OK();
  Result<uint64_t> m = ParseMemorySize(text);
  if (!m.ok()) return Status::Error("--memory: " + m.status().message());
  if (*m < (1u << 20)) return Status::Error("--memory: at least 1M is needed");
  *out = *m;
  return Status::OK();
}

// --archive-shards, or the config's archive shard count, or 1.
Status ResolveArchiveShards(const po::variables_map& vm, Options* out) {
  const uint32_t from_config = uint32_t(out->archive.size());
  if (!vm.count("archive-shards")) {
    out->archive_shards = from_config != 0 ? from_config : 1;
    return Status::OK();
  }
  out->archive_shards = vm["archive-shards"].as<uint32_t>();
  if (out->archive_shards < 1 || out->archive_shards > 65535) {
    return Status::Error("--archive-shards must be 1..65535");
  }
  if (from_config != 0 && from_config != out->archive_shards) {
    return Status::Error("--archive-shards " + std::to_string(out->archive_shards) + " disagrees with the " +
                         std::to_string(from_config) + " archive shards of the config");
  }
  return Status::OK();
}

Status ReadDays(const TextFlags& text, Options* out) {
  struct DayFlag { const std::string* text; Day* out; const char* name; };
  for (const DayFlag& f : {DayFlag{&text.day, &out->day, "day"}, DayFlag{&text.before, &out->before, "before"},
                           DayFlag{&text.through, &out->through, "through"}}) {
    if (f.text->empty()) continue;
    Result<Day> d = ParseDayFlag(*f.text, f.name);
    if (!d.ok()) return d.status();
    *f.out = *d;
  }
  return Status::OK();
}

// What the command cannot run without (Command::needs), in a fixed order.
Status CheckNeeds(const Command& command, const Options& o) {
  struct Check { unsigned need; bool present; const char* what; };
  const Check checks[] = {
      {kNeedsInput, !o.input.empty(), "--input FILE|-"},
      {kNeedsDay, o.day != 0, "--day YYYY-MM-DD"},
      {kNeedsCluster, !o.config.empty(), "--config FILE"},
      {kNeedsCluster, !o.realtime.empty(), "realtime shards (realtime = host:port lines in --config)"},
      {kNeedsBefore, o.before != 0, "--before YYYY-MM-DD"},
      {kNeedsThrough, o.through != 0, "--through YYYY-MM-DD"},
      {kNeedsOutput, !o.output.empty(), "--output DIR"},
      {kNeedsGeneration, !o.generation.empty(), "--generation ID"},
  };
  for (const Check& c : checks) {
    if ((command.needs & c.need) && !c.present) return Status::Error(std::string(command.name) + " needs " + c.what);
  }
  return Status::OK();
}

// --executor, --shard and --task: which commands take them, and their ranges.
Status CheckTaskFlags(const Options& o) {
  if (o.executor != "local" && o.executor != "slurm") {
    return Status::Error("--executor must be local or slurm, not '" + o.executor + "'");
  }
  if (o.executor == "slurm" && o.command != "nightly" && o.command != "import") {
    return Status::Error("--executor slurm is for nightly and import (" + o.command + " runs where it is started)");
  }
  if (o.executor == "slurm" && o.command == "import" && !o.manifest.empty()) {
    return Status::Error("import --manifest runs here, not with --executor slurm");
  }
  if (o.executor == "slurm" && o.command == "import" && o.input == "-") {
    return Status::Error("import --executor slurm needs --input FILE on the shared directory, not standard input");
  }
  if (o.chunks < 1 || o.chunks > 4096) return Status::Error("--chunks must be 1..4096");
  if (o.slurm_retries > 100) return Status::Error("--slurm-retries must be 0..100");
  if (o.slurm_requeue_exit > 255) return Status::Error("--slurm-requeue-exit must be 0..255");
  if (o.shard != -1) {
    const uint64_t count = o.command == "export" || o.command == "segment" ? o.realtime.size()
                           : o.command == "merge"                           ? o.archive_shards
                                                                            : 0;
    if (count == 0) {
      return Status::Error("--shard is for export and segment (a realtime shard, with --config) and merge (an archive shard)");
    }
    if (o.shard < 0 || uint64_t(o.shard) >= count) {
      return Status::Error("--shard " + std::to_string(o.shard) + " is not " +
                           (o.command == "export" ? "a realtime" : "an archive") + " shard (0.." +
                           std::to_string(count - 1) + ")");
    }
  }
  for (char c : o.task) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
      return Status::Error("--task '" + o.task + "': letters, digits, '-' and '_' only");
    }
  }
  return Status::OK();
}

}  // namespace

Day DefaultThroughDay() { return Day(WallClockSeconds() / 86400 - 2); }

Result<Day> ParseDayFlag(const std::string& text, const std::string& flag) {
  Result<int64_t> d = ParseDay(text);
  if (!d.ok()) return Status::Error("--" + flag + ": " + d.status().message());
  return Day(*d);
}

Status ParseOptions(int argc, const char* const* argv, Options* out, bool* help_shown) {
  TextFlags text;
  config::OptionLoader loader(Usage(), "options");
  DeclareOptions(&loader, out, &text);
  po::variables_map vm;
  if (Status s = loader.Load(argc, argv, &vm, help_shown); !s.ok() || *help_shown) return s;
  out->config = loader.config_path();
  if (out->command.empty()) {
    loader.PrintHelp(std::cout);
    *help_shown = true;
    return Status::OK();
  }
  const Command* command = FindCommand(out->command);
  if (command == nullptr) return Status::Error("unknown command '" + out->command + "' (see --help)");
  if (out->work.empty()) return Status::Error("--work is required");
  if (Status s = ReadMemory(text.memory, &out->memory); !s.ok()) return s;
  if (!text.backup_codec.empty()) {
    Result<BackupCodec> codec = ParseBackupCodec(text.backup_codec);
    if (!codec.ok()) return codec.status();
    out->backup_codec = *codec;
  }
  if (out->jobs < 1 || out->jobs > 64) return Status::Error("--jobs must be 1..64");
  out->jobs_given = vm.count("jobs") > 0;
  if (Status s = config::ReadClusterLayout(vm, out); !s.ok()) return s;
  if (Status s = ResolveArchiveShards(vm, out); !s.ok()) return s;
  if (Status s = ReadDays(text, out); !s.ok()) return s;
  if (Status s = CheckTaskFlags(*out); !s.ok()) return s;
  return CheckNeeds(*command, *out);
}

}  // namespace clickatron::rebuild
