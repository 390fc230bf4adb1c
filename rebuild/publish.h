// What `publish` leaves behind, for the steps that read it (release, nightly).
#pragma once

#include <string>

#include "base/status.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

// The generation DIR/current points at ("" when nothing was ever published).
Result<std::string> LiveGeneration(const WorkDir& work);

}  // namespace clickatron::rebuild
