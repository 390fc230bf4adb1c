// Identity: who an oplog directory's records are from, created with the directory and kept
// in it (docs/oplog.md#identity).
//
// The realtime shards deduplicate a batch by its source and seq (the high-water mark of the
// source), so two oplogs must never send as one source: their seqs would collide and one's
// batches would be skipped as the other's duplicates. The source therefore comes from the
// oplog, not from the configuration: a new directory draws a random id and sends as it, so
// two APIs given one node-id (a copied config) never collide. The node-id stays a label.
//
// File DIR/identity, written once with WriteFileAtomic (base/durable_file.h), "key=value"
// lines:
//   id=3f9c0a7e5b1d2c48            16 lowercase hex digits, random, drawn at creation
//   source=3f9c0a7e5b1d2c48        the source name sent to the realtime shards
//   created=2026-11-28T09:11:00Z   when and where it was created (the last two checked)
//   host=api-1.example.net
//   path=/var/lib/clickatron/oplog
//   machine=<the host's /etc/machine-id>
//   inode=1311234                  the directory's inode number
//   own_from_seq=1                 the first record of this identity (after a fork)
//   conflict=<why>                 only while a conflict stands (below)
//   release_late=1                 only after a fork, until the API has released the late
//                                  entries copied with the directory (they are the original's)
//
// A directory with records or cursors but no identity file predates it: it keeps sending as
// its node-id (source=<node-id>), so the marks the realtime shards hold for that name keep
// deduplicating what it re-sends.
//
// A copy of the directory (another host, a restore from a backup) carries the identity, and
// a copy running beside the original would send as the same source. So at start the
// directory is checked against where it was created: another machine id or another inode
// (a copy is a new directory; a rename keeps the inode) is a conflict. Conflicts are kept
// in the file (the API also records one it meets while delivering: a realtime shard holding
// a seq of its source past its oplog's head); while one stands the API refuses increments
// with 503 SOURCE_CONFLICT and delivers nothing, until `clickatron-oplog fork` (a copy: a
// new identity) or `clickatron-oplog adopt` (the original is gone: this is it now) resolves
// it (docs/operations.md#a-copied-oplog-directory).
#ifndef CLICKATRON_OPLOG_IDENTITY_H_
#define CLICKATRON_OPLOG_IDENTITY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace clickatron::oplog {

inline constexpr char kIdentityFile[] = "identity";

// Where a directory is: the place an identity was created, or is now.
struct Location {
  std::string host;
  std::string path;
  std::string machine;
  uint64_t inode = 0;
};

struct Identity {
  std::string id;
  std::string source;
  std::string created;  // RFC 3339 UTC
  Location location;
  uint64_t own_from_seq = 1;
  std::string conflict;  // "" when none
  bool release_late = false;
};

struct ForkResult {
  Identity was, now;
  uint64_t shared_through = 0;  // records <= it are the original's: not sent from here
  std::vector<std::string> cursors;
  std::vector<std::string> removed;  // paths of consumer files removed
};

// `clickatron-oplog fork DIR [--own-from SEQ]`: dir is a copy of another API's oplog
// directory. Under its lock (refused while an API runs on it): every saved cursor moves to
// own_from - 1 (default own_from: after the last record) and the consumers' files named by
// consumer_files (the API's rounds files) and replay rules go; then a new identity (source =
// a new id) is written, owning the records from own_from on, with release_late set. The
// records before own_from are the original's: the API never sends them (its streams start
// at own_from - 1 at the earliest, saved cursor or not). Cursors first: a crash between the
// two leaves the conflict standing, and the fork is run again.
Result<ForkResult> ForkIdentity(const std::string& dir, uint64_t own_from,
                                const std::function<std::vector<std::string>(const std::string&)>& consumer_files);

// `clickatron-oplog adopt DIR`: the original of a moved directory is gone for good: dir is
// it now. Under its lock: the identity's location becomes dir's, the conflict is cleared.
Result<Identity> AdoptIdentity(const std::string& dir);

// Where dir is now (its inode, this host's machine id and name).
Result<Location> LocationOf(const std::string& dir);

// The identity of dir; an identity with an empty id when there is no file. A file that does
// not parse is an error naming it and the line.
Result<Identity> LoadIdentity(const std::string& dir);

// Writes it atomically and durably.
Status SaveIdentity(const std::string& dir, const Identity& identity);

// A new identity for dir, located where dir is now: source = the new id, or `legacy_source`
// when not empty (a directory from before identities).
Result<Identity> NewIdentity(const std::string& dir, const std::string& legacy_source, uint64_t own_from_seq);

// "" when `now` is where the identity was created, else why not (a copy or a restore).
std::string LocationConflict(const std::string& dir, const Identity& identity, const Location& now);

}  // namespace clickatron::oplog

#endif  // CLICKATRON_OPLOG_IDENTITY_H_
