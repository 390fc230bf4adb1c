// OptionLoader: how every Clickatron main reads its options — the command line, then the
// file named by --config, in Boost.Program_options syntax (`name = value`, one per line,
// `#` comments). The command line wins: a value given there is not replaced by the file.
//
// One file holds the settings of every process of a cluster (docs/operations.md#deploying-n-shards-on-n-hosts),
// so a program ignores the file's keys that other programs read. The loader knows every key
// any program reads (config_keys.h): a key no program reads (a typo) is refused with an
// error naming the key, the file and the line, and the program exits 2.
//
//   OptionLoader loader("usage: clickatron-x --port P [options]\n", "options");
//   loader.Add()("port", po::value<int>(&port), "TCP port");
//   po::variables_map vm;
//   bool help = false;
//   if (Status s = loader.Load(argc, argv, &vm, &help); !s.ok()) ...;   // error: exit 2
//   if (help) return 0;                                                 // usage printed
//
// Every loader has --help (-h); --config FILE when built with a config file. Errors name
// the option and the problem ("--config: cannot open x.conf", Boost's "the argument
// ('x') for option '--port' is invalid").
#pragma once

#include <boost/program_options.hpp>

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace clickatron::config {

namespace po = boost::program_options;

// The text of a Boost.Program_options error, for every main that parses options. Boost's
// what() substitutes placeholders such as %value% into its message until none is left, so a
// value or option name that itself holds one (`port = %value%`) made it loop forever (found
// by fuzz/config_fuzz.cc). Here every '%' of a substituted text is shown as %25 first, which
// no placeholder matches. Takes the caught error by reference: it is changed.
inline std::string ProgramOptionsErrorText(po::error& e) {
  if (auto* named = dynamic_cast<po::error_with_option_name*>(&e)) {
    // The substitutions are protected; a member pointer through a derived class reads them.
    struct Access : po::error_with_option_name {
      static std::map<std::string, std::string> Substitutions(const po::error_with_option_name& x) {
        return x.*(&Access::m_substitutions);
      }
    };
    for (const auto& [name, value] : Access::Substitutions(*named)) {
      if (value.find('%') == std::string::npos) continue;
      std::string shown;
      for (char c : value) {
        if (c == '%') {
          shown += "%25";
        } else {
          shown += c;
        }
      }
      named->set_substitute(name, shown);
    }
  }
  return e.what();
}

class OptionLoader {
 public:
  // usage: printed by --help before the option list, whose title is caption.
  // config_file: whether --config FILE is accepted.
  OptionLoader(std::string usage, const std::string& caption, bool config_file = true);

  // Adds options shown by --help and settable on the command line and (with a config
  // file) in the file. REQUIRES: before Load().
  po::options_description_easy_init Add() { return visible_.add_options(); }
  // Adds a positional argument: the next max_count (-1 = all remaining) words of the
  // command line that are not options. Not shown by --help, not read from the file.
  void AddPositional(const char* name, const po::value_semantic* value, int max_count);

  // Parses argv (argv[0] is the program), then the --config file, then stores the values
  // into their bound variables (po::notify). On --help prints the usage to stdout, sets
  // *help and returns OK without reading the file.
  Status Load(int argc, const char* const* argv, po::variables_map* vm, bool* help);

  // The usage and option list, as --help prints it.
  void PrintHelp(std::ostream& out) const;
  // The --config file given ("" when none). REQUIRES: Load() succeeded.
  const std::string& config_path() const { return config_path_; }

 private:
  Status ReadConfigFile(po::variables_map* vm);
  size_t LineOfKey(const std::string& key) const;

  std::string usage_;
  bool config_file_;
  po::options_description visible_;
  po::options_description hidden_;
  po::positional_options_description positional_;
  std::string config_path_;
};

}  // namespace clickatron::config
