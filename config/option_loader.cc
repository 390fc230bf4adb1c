#include "config/option_loader.h"

#include <iostream>
#include <sstream>

#include "base/read_file.h"
#include "config/config_keys.h"

namespace clickatron::config {

OptionLoader::OptionLoader(std::string usage, const std::string& caption, bool config_file)
    : usage_(std::move(usage)), config_file_(config_file), visible_(caption) {
  visible_.add_options()("help,h", "show this help");
  if (config_file_) {
    visible_.add_options()("config", po::value<std::string>(),
                           "read more options from this file (`name = value` lines; the command line wins)");
  }
}

void OptionLoader::AddPositional(const char* name, const po::value_semantic* value, int max_count) {
  hidden_.add_options()(name, value);
  positional_.add(name, max_count);
}

void OptionLoader::PrintHelp(std::ostream& out) const { out << usage_ << visible_ << "\n"; }

Status OptionLoader::Load(int argc, const char* const* argv, po::variables_map* vm, bool* help) {
  *help = false;
  if (config_file_) {
    // A key this program reads from the file must be in the union of all programs' keys,
    // or another program sharing the file would count it as nobody's.
    for (const auto& option : visible_.options()) {
      if (!IsConfigKey(option->long_name())) {
        return Status::Error("option --" + option->long_name() + " is missing from config/config_keys.cc");
      }
    }
  }
  po::options_description all;
  all.add(visible_).add(hidden_);
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional_).run(), *vm);
    if (vm->count("help")) {
      PrintHelp(std::cout);
      *help = true;
      return Status::OK();
    }
    if (config_file_ && vm->count("config")) {
      if (Status s = ReadConfigFile(vm); !s.ok()) return s;
    }
    po::notify(*vm);
  } catch (po::error& e) {
    return Status::Error(ProgramOptionsErrorText(e));
  }
  return Status::OK();
}

// The 1-based line of the file where `key` is set (0 if not found): Boost.Program_options
// does not say, so the file is scanned again for `key =`.
size_t OptionLoader::LineOfKey(const std::string& key) const {
  std::string file;
  if (!ReadFile(config_path_, &file).ok()) return 0;
  std::string_view text(file);
  size_t n = 1;
  for (; !text.empty(); ++n) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos || line[start] == '#') continue;
    const size_t eq = line.find('=', start);
    if (eq == std::string_view::npos) continue;
    const size_t end = line.find_last_not_of(" \t", eq - 1);
    if (end != std::string_view::npos && end >= start && line.substr(start, end - start + 1) == key) return n;
  }
  return 0;
}

Status OptionLoader::ReadConfigFile(po::variables_map* vm) {
  config_path_ = (*vm)["config"].as<std::string>();
  std::string text;
  if (!ReadFile(config_path_, &text).ok()) return Status::Error("--config: cannot open " + config_path_);
  std::istringstream file(text);
  // Keys of other programs are allowed: one file configures the whole cluster. A key no
  // program reads is a typo (`nodeid = api-2`) that would otherwise start the process on a
  // default silently: refused, naming the key, the file and the line.
  po::parsed_options parsed = po::parse_config_file(file, visible_, /*allow_unregistered=*/true);
  for (const po::option& o : parsed.options) {
    if (o.unregistered && !IsConfigKey(o.string_key)) {
      return Status::Error("--config " + config_path_ + ": line " + std::to_string(LineOfKey(o.string_key)) +
                           ": unknown key '" + o.string_key + "' (no Clickatron program reads it)");
    }
  }
  po::store(parsed, *vm);  // values already given on the command line are kept
  return Status::OK();
}

}  // namespace clickatron::config
