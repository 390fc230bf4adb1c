// What `publish` leaves behind, for the steps that read it (release, nightly).
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "keyformat/manifest.h"
#include "net/host_port.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

// The generation DIR/current points at ("" when nothing was ever published).
Result<std::string> LiveGeneration(const WorkDir& work);

// The manifest of the live generation (std::nullopt when nothing was ever published);
// unreadable or malformed: an error naming the file.
Result<std::optional<Manifest>> LiveManifest(const WorkDir& work);

// Asks one archive server to reload (unless it already serves `generation`) and checks
// that it then serves `generation`.
Status ReloadOne(const net::HostPort& host, const std::string& generation, int timeout_ms);

}  // namespace clickatron::rebuild
