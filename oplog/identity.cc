#include "oplog/identity.h"

#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <charconv>
#include <memory>
#include <string_view>

#include "base/durable_file.h"
#include "base/errno_status.h"
#include "base/random_id.h"
#include "base/read_file.h"
#include "oplog/oplog.h"
#include "oplog/replay_skip.h"

namespace clickatron::oplog {
namespace {

std::string MachineId() {
  std::string text;
  if (!ReadFile("/etc/machine-id", &text).ok()) return "";
  return text.substr(0, text.find('\n'));
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::string NowRfc3339() {
  const time_t now = time(nullptr);
  tm utc;
  gmtime_r(&now, &utc);
  char text[32];
  strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

bool ParseU64(std::string_view text, uint64_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// One "key=value" line into identity; false for an unknown key or a bad number.
bool ReadField(std::string_view key, std::string_view value, Identity* identity) {
  if (key == "id") identity->id = value;
  else if (key == "source") identity->source = value;
  else if (key == "created") identity->created = value;
  else if (key == "host") identity->location.host = value;
  else if (key == "path") identity->location.path = value;
  else if (key == "machine") identity->location.machine = value;
  else if (key == "inode") return ParseU64(value, &identity->location.inode);
  else if (key == "own_from_seq") return ParseU64(value, &identity->own_from_seq);
  else if (key == "conflict") identity->conflict = value;
  else if (key == "release_late" && value == "1") identity->release_late = true;
  else return false;
  return true;
}

// A value must stay on its line.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

Result<Location> LocationOf(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return ErrnoStatus("stat", dir);
  Location here;
  here.host = HostName();
  here.path = dir;
  here.machine = MachineId();
  here.inode = uint64_t(st.st_ino);
  return here;
}

Result<Identity> LoadIdentity(const std::string& dir) {
  const std::string path = dir + "/" + kIdentityFile;
  Identity identity;
  std::string text;
  bool exists = false;
  if (Status s = ReadFileIfExists(path, &text, &exists); !s.ok()) return s;
  if (!exists) return identity;
  std::string_view rest = text;
  for (int line_no = 1; !rest.empty(); line_no++) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || !ReadField(line.substr(0, eq), line.substr(eq + 1), &identity)) {
      return Status::Error(path + " line " + std::to_string(line_no) + ": '" + std::string(line) +
                           "' is not one of id=, source=, created=, host=, path=, machine=, inode=, "
                           "own_from_seq=, conflict=, release_late=1");
    }
  }
  if (identity.id.empty() || identity.source.empty()) return Status::Error(path + ": no id= or no source= line");
  return identity;
}

Status SaveIdentity(const std::string& dir, const Identity& identity) {
  std::string text = "id=" + identity.id + "\nsource=" + identity.source + "\ncreated=" + identity.created +
                     "\nhost=" + OneLine(identity.location.host) + "\npath=" + OneLine(identity.location.path) +
                     "\nmachine=" + OneLine(identity.location.machine) +
                     "\ninode=" + std::to_string(identity.location.inode) +
                     "\nown_from_seq=" + std::to_string(identity.own_from_seq) + "\n";
  if (!identity.conflict.empty()) text += "conflict=" + OneLine(identity.conflict) + "\n";
  if (identity.release_late) text += "release_late=1\n";
  return WriteFileAtomic(dir + "/" + kIdentityFile, text);
}

Result<Identity> NewIdentity(const std::string& dir, const std::string& legacy_source, uint64_t own_from_seq) {
  Result<Location> here = LocationOf(dir);
  if (!here.ok()) return here.status();
  Identity identity;
  identity.id = RandomId64();
  identity.source = legacy_source.empty() ? identity.id : legacy_source;
  identity.created = NowRfc3339();
  identity.location = *here;
  identity.own_from_seq = own_from_seq;
  return identity;
}

std::string LocationConflict(const std::string& dir, const Identity& identity, const Location& now) {
  const Location& was = identity.location;
  if (was.machine == now.machine && was.inode == now.inode) return "";
  return "oplog directory " + dir + " holds identity " + identity.id + " (source '" + identity.source +
         "') created in " + was.path + " on " + was.host + " (inode " + std::to_string(was.inode) +
         "), but it is inode " + std::to_string(now.inode) + " on " + now.host +
         (was.machine == now.machine ? "" : " (another machine)") +
         ": a copy or a restore of an oplog directory, which would send as the source of the original";
}

namespace {

Result<std::unique_ptr<Oplog>> OpenLocked(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return ErrnoStatus("open directory", dir);
  if (access((dir + "/" + kIdentityFile).c_str(), F_OK) != 0) {
    return Status::Error(dir + " has no " + kIdentityFile + " file: not the oplog directory of an API");
  }
  Options options;
  options.prepare_segments = false;  // appends nothing
  return Oplog::Open(dir, options);
}

Status RemoveIfPresent(const std::string& path, std::vector<std::string>* removed) {
  if (unlink(path.c_str()) == 0) {
    if (removed != nullptr) removed->push_back(path);
  } else if (errno != ENOENT) {
    return ErrnoStatus("remove", path);
  }
  return Status::OK();
}

}  // namespace

Result<ForkResult> ForkIdentity(const std::string& dir, uint64_t own_from,
                                const std::function<std::vector<std::string>(const std::string&)>& consumer_files) {
  Result<std::unique_ptr<Oplog>> log = OpenLocked(dir);
  if (!log.ok()) return log.status();
  Result<Identity> was = LoadIdentity(dir);
  if (!was.ok()) return was.status();
  const Stats stats = (*log)->GetStats();
  if (own_from == 0) own_from = stats.last_seq + 1;
  if (own_from > stats.last_seq + 1) {
    return Status::Error("--own-from " + std::to_string(own_from) + " is past the end of the log (last seq " +
                         std::to_string(stats.last_seq) + ")");
  }
  ForkResult fork;
  fork.was = *was;
  fork.shared_through = own_from - 1;
  for (const CursorStats& c : stats.cursors) {
    fork.cursors.push_back(c.name);
    if (consumer_files) {
      for (const std::string& name : consumer_files(c.name)) {
        if (Status s = RemoveIfPresent(dir + "/" + name, &fork.removed); !s.ok()) return s;
      }
    }
    if (Status s = RemoveIfPresent(dir + "/" + ReplaySkipFileName(c.name), &fork.removed); !s.ok()) return s;
    if (Status s = (*log)->SetCursor(c.name, fork.shared_through); !s.ok()) return s;
  }
  if (Status s = SyncDir(dir); !s.ok()) return s;
  if (Status s = (*log)->SaveCursors(); !s.ok()) return s;
  Result<Identity> now = NewIdentity(dir, "", own_from);
  if (!now.ok()) return now.status();
  fork.now = *now;
  fork.now.release_late = true;
  if (Status s = SaveIdentity(dir, fork.now); !s.ok()) return s;
  return fork;
}

Result<Identity> AdoptIdentity(const std::string& dir) {
  Result<std::unique_ptr<Oplog>> log = OpenLocked(dir);
  if (!log.ok()) return log.status();
  Result<Identity> loaded = LoadIdentity(dir);
  if (!loaded.ok()) return loaded.status();
  Result<Location> here = LocationOf(dir);
  if (!here.ok()) return here.status();
  Identity identity = *loaded;
  identity.location = *here;
  identity.conflict.clear();
  if (Status s = SaveIdentity(dir, identity); !s.ok()) return s;
  return identity;
}

}  // namespace clickatron::oplog
