#include "rebuild/options.h"

#include <boost/program_options.hpp>

#include <fstream>
#include <iostream>
#include <set>

#include "keyformat/ymdh.h"
#include "rebuild/record_sorter.h"

namespace clickatron::rebuild {

namespace po = boost::program_options;

namespace {

constexpr char kUsage[] =
    "usage: clickatron-rebuild COMMAND --work DIR [options]\n"
    "  import  --input FILE|- [--memory SIZE] [--archive-shards M] [--max-errors N] [--replace]\n"
    "  merge   [--archive-shards M]\n"
    "  publish [--config FILE] [--backup DIR]\n"
    "  export|segment|nightly --config FILE --day YYYY-MM-DD\n"
    "  compact --before YYYY-MM-DD\n"
    "  release --config FILE --through YYYY-MM-DD\n";

const std::set<std::string> kCommands = {"import", "merge", "publish", "export", "segment",
                                         "nightly", "compact", "release"};

Status CheckHostPort(const std::string& text, const std::string& what) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return Status::Error(what + " '" + text + "' is not host:port");
  }
  for (size_t i = colon + 1; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return Status::Error(what + " '" + text + "' is not host:port");
  }
  const long port = std::stol(text.substr(colon + 1, 6));
  if (port < 1 || port > 65535) return Status::Error(what + " '" + text + "': port out of range 1..65535");
  return Status::OK();
}

std::string Strip(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

Result<Day> ParseDayFlag(const std::string& text, const std::string& flag) {
  Result<int64_t> d = ParseDay(text);
  if (!d.ok()) return Status::Error("--" + flag + ": " + d.status().message());
  return Day(*d);
}

Status ParseOptions(int argc, const char* const* argv, Options* out, bool* help_shown) {
  *help_shown = false;
  std::string memory, day, before, through;
  po::options_description desc("options");
  desc.add_options()
      ("help,h", "this text")
      ("work", po::value(&out->work), "work directory")
      ("config", po::value(&out->config), "cluster config file")
      ("input", po::value(&out->input), "import: realtime-format history, or - for stdin")
      ("memory", po::value(&memory), "import/segment: memory bound, e.g. 2G (default 1G)")
      ("archive-shards", po::value<uint32_t>(), "archive shard count")
      ("jobs", po::value(&out->jobs), "parallel tasks (default 1)")
      ("max-errors", po::value(&out->max_errors), "import: malformed lines tolerated (default 0)")
      ("replace", po::bool_switch(&out->replace), "import: replace days that already have segments")
      ("backup", po::value(&out->backup), "publish: directory for the gzip backup copy")
      ("keep-generations", po::value(&out->keep_generations), "publish: generations kept (default 3)")
      ("timeout-ms", po::value(&out->timeout_ms), "HTTP request timeout (default 30000)")
      ("day", po::value(&day), "export/segment/nightly: the day, YYYY-MM-DD")
      ("before", po::value(&before), "compact: months ending before this day")
      ("through", po::value(&through), "release: last day to release")
      ("realtime", po::value<std::vector<std::string>>(), "realtime shard host:port (config)")
      ("archive", po::value<std::vector<std::string>>(), "archive shard host:port[,replica...] (config)");
  po::options_description hidden;
  hidden.add_options()("command", po::value(&out->command));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("command", 1);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    if (vm.count("config")) {
      const std::string path = vm["config"].as<std::string>();
      std::ifstream file(path);
      if (!file) return Status::Error("--config: cannot open " + path);
      po::store(po::parse_config_file(file, desc, /*allow_unregistered=*/true), vm);
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return Status::Error(e.what());
  }
  if (vm.count("help") || out->command.empty()) {
    std::cout << kUsage << desc;
    *help_shown = true;
    return Status::OK();
  }
  if (!kCommands.count(out->command)) {
    return Status::Error("unknown command '" + out->command + "' (see --help)");
  }
  if (out->work.empty()) return Status::Error("--work is required");
  if (!memory.empty()) {
    Result<uint64_t> m = ParseMemorySize(memory);
    if (!m.ok()) return Status::Error("--memory: " + m.status().message());
    if (*m < (1u << 20)) return Status::Error("--memory: at least 1M is needed");
    out->memory = *m;
  }
  if (out->jobs < 1 || out->jobs > 64) return Status::Error("--jobs must be 1..64");
  if (vm.count("realtime")) {
    for (const std::string& r : vm["realtime"].as<std::vector<std::string>>()) {
      const std::string h = Strip(r);
      if (Status s = CheckHostPort(h, "realtime"); !s.ok()) return s;
      out->realtime.push_back(h);
    }
  }
  if (vm.count("archive")) {
    for (const std::string& line : vm["archive"].as<std::vector<std::string>>()) {
      std::vector<std::string> replicas;
      size_t start = 0;
      while (true) {
        const size_t comma = line.find(',', start);
        const std::string h = Strip(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (Status s = CheckHostPort(h, "archive"); !s.ok()) return s;
        replicas.push_back(h);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      out->archive.push_back(std::move(replicas));
    }
  }
  const uint32_t from_config = uint32_t(out->archive.size());
  if (vm.count("archive-shards")) {
    out->archive_shards = vm["archive-shards"].as<uint32_t>();
    if (out->archive_shards < 1 || out->archive_shards > 65535) {
      return Status::Error("--archive-shards must be 1..65535");
    }
    if (from_config != 0 && from_config != out->archive_shards) {
      return Status::Error("--archive-shards " + std::to_string(out->archive_shards) + " disagrees with the " +
                           std::to_string(from_config) + " archive shards of the config");
    }
  } else {
    out->archive_shards = from_config != 0 ? from_config : 1;
  }
  struct DayFlag { std::string* text; Day* out; const char* name; };
  for (const DayFlag& f : {DayFlag{&day, &out->day, "day"}, DayFlag{&before, &out->before, "before"},
                           DayFlag{&through, &out->through, "through"}}) {
    if (f.text->empty()) continue;
    Result<Day> d = ParseDayFlag(*f.text, f.name);
    if (!d.ok()) return d.status();
    *f.out = *d;
  }
  const std::string& c = out->command;
  auto require = [&](bool present, const char* what) {
    return present ? Status::OK() : Status::Error(c + " needs " + what);
  };
  if (c == "import") {
    if (Status s = require(!out->input.empty(), "--input FILE|-"); !s.ok()) return s;
  }
  if (c == "export" || c == "segment" || c == "nightly") {
    if (Status s = require(out->day != 0, "--day YYYY-MM-DD"); !s.ok()) return s;
  }
  if (c == "export" || c == "nightly" || c == "release") {
    if (Status s = require(!out->config.empty(), "--config FILE"); !s.ok()) return s;
    if (Status s = require(!out->realtime.empty(), "realtime shards (realtime = host:port lines in --config)"); !s.ok()) return s;
  }
  if (c == "compact") {
    if (Status s = require(out->before != 0, "--before YYYY-MM-DD"); !s.ok()) return s;
  }
  if (c == "release") {
    if (Status s = require(out->through != 0, "--through YYYY-MM-DD"); !s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace clickatron::rebuild
