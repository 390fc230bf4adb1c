// The subcommands of clickatron-rebuild (SPEC 3.4), one file each. Every one opens the
// work directory (lock + recovery of interrupted changes), checks its inputs, is a no-op
// when its output is already there and up to date, prints progress on a terminal and a
// one-line summary at its end, and returns the error a user should see.
#pragma once

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
Status RunRelease(const Options& options, WorkDir* work);
Status RunNightly(const Options& options, WorkDir* work);

}  // namespace clickatron::rebuild
