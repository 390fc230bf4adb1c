// `nightly --day D`: export, segment, compact (whole months before D), merge, publish,
// release through D — each step idempotent, so after a failure or a kill the same
// command line simply runs again and skips what is already done.
#include <cstdio>

#include "keyformat/ymdh.h"
#include "rebuild/commands.h"
#include "rebuild/progress.h"

namespace clickatron::rebuild {

Status RunNightly(const Options& options, WorkDir* work) {
  Progress progress("nightly " + FormatDay(options.day));
  Options compact = options;
  compact.before = options.day;
  Options release = options;
  release.through = options.day;
  // The commands in the order each one's input is the previous one's output.
  struct Step {
    const char* command;
    const Options* options;
  };
  const Step steps[] = {
      {"export", &options},   {"segment", &options}, {"compact", &compact},
      {"merge", &options},    {"publish", &options}, {"release", &release},
  };
  for (const Step& step : steps) {
    if (Status s = FindCommand(step.command)->run(*step.options, work); !s.ok()) {
      return s.Prefixed(std::string(step.command) + ": ");
    }
  }
  progress.Summary("done");
  return Status::OK();
}

}  // namespace clickatron::rebuild
