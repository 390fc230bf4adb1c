#include "rebuild/commands.h"

#include <iterator>

namespace clickatron::rebuild {
namespace {

constexpr Command kCommands[] = {
    {"import", RunImport, "--input FILE|- [--memory SIZE] [--archive-shards M] [--max-errors N] [--replace] [--manifest FILE]",
     kNeedsInput},
    {"merge", RunMerge, "[--archive-shards M]", 0},
    {"publish", RunPublish, "[--config FILE] [--backup DIR [--backup-codec zstd|gzip]] [--jobs N] [--allow-older]", 0},
    {"activate", RunActivate, "--generation ID [--config FILE] [--allow-older]", kNeedsGeneration},
    {"export", RunExport, "--config FILE --day YYYY-MM-DD", kNeedsDay | kNeedsCluster},
    {"segment", RunSegment, "--config FILE --day YYYY-MM-DD [--shard N]", kNeedsDay},
    {"late", RunLate, "--config FILE (its api = lines)", 0},
    {"nightly", RunNightly, "--config FILE [--through YYYY-MM-DD | --day YYYY-MM-DD]", kNeedsCluster},
    {"compact", RunCompact, "--before YYYY-MM-DD", kNeedsBefore},
    {"release", RunRelease, "--config FILE --through YYYY-MM-DD", kNeedsCluster | kNeedsThrough},
    {"split", RunSplit, "--input FILE --output DIR [--chunks N]", kNeedsInput | kNeedsOutput},
};

}  // namespace

std::span<const Command> Commands() { return kCommands; }

const Command* FindCommand(std::string_view name) {
  for (const Command& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

}  // namespace clickatron::rebuild
