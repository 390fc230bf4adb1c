// clickatron-rebuild: the nightly rebuild and bulk loader (docs/api.md#clickatron-rebuild, 6). Reads flags and
// the config, opens the work directory (as a task of a Slurm graph with --task), runs one
// subcommand (commands.h), and with --task-report writes what it did (task_report.h).
// Errors: one line on stderr naming the problem, exit status 1 (2 for a bad command line).
#include <chrono>
#include <cstdio>

#include "rebuild/cluster_http.h"
#include "rebuild/commands.h"
#include "rebuild/options.h"
#include "rebuild/task_report.h"
#include "rebuild/work_dir.h"

using namespace clickatron;
using namespace clickatron::rebuild;

int main(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  Options options;
  bool help = false;
  if (Status s = ParseOptions(argc, argv, &options, &help); !s.ok()) {
    std::fprintf(stderr, "clickatron-rebuild: %s\n", s.message().c_str());
    return 2;
  }
  if (help) return 0;
  SetClusterSecret(options.secret);
  const Command* command = FindCommand(options.command);  // ParseOptions accepted only these
  WorkDir work(options.work);
  Status s = options.task.empty() ? work.Open() : work.OpenTask(options.task);
  if (s.ok()) s = command->run(options, &work);
  if (!options.task_report.empty()) {
    if (Status r = WriteTaskReport(options.task_report, s, start); !r.ok()) {
      std::fprintf(stderr, "clickatron-rebuild: --task-report: %s\n", r.message().c_str());
    }
  }
  if (!s.ok()) {
    std::fprintf(stderr, "clickatron-rebuild %s: %s\n", options.command.c_str(), s.message().c_str());
    return 1;
  }
  return 0;
}
