// Every key a cluster config file may hold: the union of the options of the programs that
// read one (clickatron-api, -realtime, -archive, -rebuild). OptionLoader checks a program's
// own options against it, so a new option cannot be left out, and uses it to tell a key
// of another program (ignored) from a key of none (reported in unknown_keys()).
#pragma once

#include <string_view>

namespace clickatron::config {

// True iff some program reads `key` from a config file.
bool IsConfigKey(std::string_view key);

}  // namespace clickatron::config
