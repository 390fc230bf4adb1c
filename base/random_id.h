// RandomId64: 16 lowercase hex digits, drawn anew at every call from the OS's random device,
// the process id and the clock — an id that tells one start of a process from any other:
// the realtime shard's instance (wire/headers.h) and an API process's sender id
// (X-Clickatron-Sender). Not for secrets.
#pragma once

#include <string>

namespace clickatron {

std::string RandomId64();

}  // namespace clickatron
