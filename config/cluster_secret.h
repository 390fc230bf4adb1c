// The cluster secret: the token every internal endpoint requires in its X-Clickatron-Secret
// header (net/secret.h), read from the file the `secret-file` option names
// (docs/operations.md#threat-model). Every program reads it here: the realtime and archive
// servers to check it, the API and clickatron-rebuild (through config/cluster_layout.h)
// to check and to send it.
//
//   secret-file = /etc/clickatron/cluster.secret     in the shared cluster config
//
// The file holds one token: 16 to 1024 visible ASCII characters (no space or control
// byte), surrounding whitespace and the final newline trimmed. It must be readable by its
// owner only (mode 0600 or 0400). Each problem is a named error that stops the program:
//   SECRET_FILE_UNREADABLE   cannot be opened or read (missing, no permission)
//   SECRET_FILE_OPEN         readable by the group or by others (chmod 600 it)
//   SECRET_FILE_EMPTY        nothing but whitespace
//   SECRET_FILE_SHORT        fewer than 16 characters (guessable)
//   SECRET_FILE_LONG         more than 1024 characters
//   SECRET_FILE_BAD_BYTE     a space or non-printable byte inside the token
// No error message holds the secret or any byte of it.
//
// Without a secret a server accepts internal requests from anyone who can reach it, so a
// server may run without one only on a loopback address (the dev setup); on any other
// address it refuses to start with SECRET_REQUIRED (net::CheckListenSecret, net/secret.h).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "config/option_loader.h"

namespace clickatron::config {

inline constexpr size_t kMinSecretBytes = 16;
inline constexpr size_t kMaxSecretBytes = 1024;

// Reads and checks the secret file at path into *secret (errors above; *secret untouched
// on error).
Status LoadSecretFile(const std::string& path, std::string* secret);

// Adds the secret-file option to a loader. REQUIRES: before Load().
void AddSecretFileOption(OptionLoader* loader);

// The secret of the secret-file option Load() read, or "" when none was given.
// REQUIRES: AddSecretFileOption on that loader.
Status ReadSecretFile(const po::variables_map& vm, std::string* secret);

}  // namespace clickatron::config
