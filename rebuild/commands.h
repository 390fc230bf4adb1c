// The subcommands of clickatron-rebuild (docs/api.md#clickatron-rebuild), one file each, and the one table of
// them that main, the --help text, the option checks and nightly read. Every command opens
// the work directory (lock + recovery of interrupted changes), checks its inputs, is a
// no-op when its output is already there and up to date, prints progress on a terminal
// and a one-line summary at its end, and returns the error a user should see.
#pragma once

#include <span>
#include <string_view>

#include "base/status.h"
#include "rebuild/options.h"

namespace clickatron::rebuild {

class WorkDir;

Status RunImport(const Options& options, WorkDir* work);
Status RunMerge(const Options& options, WorkDir* work);
Status RunCompact(const Options& options, WorkDir* work);
Status RunExport(const Options& options, WorkDir* work);
Status RunSegment(const Options& options, WorkDir* work);
Status RunPublish(const Options& options, WorkDir* work);
Status RunActivate(const Options& options, WorkDir* work);
Status RunRelease(const Options& options, WorkDir* work);
Status RunLate(const Options& options, WorkDir* work);
Status RunNightly(const Options& options, WorkDir* work);
Status RunSplit(const Options& options, WorkDir* work);

// What a command cannot run without; ParseOptions refuses a command line that lacks it.
enum Need : unsigned {
  kNeedsInput = 1,     // --input FILE|-
  kNeedsDay = 2,       // --day
  kNeedsCluster = 4,   // --config with realtime shards
  kNeedsBefore = 8,    // --before
  kNeedsThrough = 16,  // --through
  kNeedsOutput = 32,   // --output DIR
  kNeedsGeneration = 64,  // --generation ID
};

struct Command {
  const char* name;
  Status (*run)(const Options&, WorkDir*);
  const char* flags;  // its flags beyond --work, as --help shows them
  unsigned needs;     // Need bits
};

// Every command, in the order --help lists them.
std::span<const Command> Commands();
// The command called name, or nullptr.
const Command* FindCommand(std::string_view name);

}  // namespace clickatron::rebuild
