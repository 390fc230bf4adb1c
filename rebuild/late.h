// Late data: what `late` (late.cc, a command of commands.h) merges, and what the nightly
// tells the APIs once it is published (docs/operations.md#the-nightly-job).
#pragma once

#include "keyformat/manifest.h"
#include "rebuild/options.h"

namespace clickatron::rebuild {

// POST /late/release?through=<the live manifest's late id for it> to every API of the
// config that has one; a failure is printed as a warning (the manifest id keeps those
// entries from being merged twice).
void ReleaseLate(const Options& options, const Manifest& live);

}  // namespace clickatron::rebuild
