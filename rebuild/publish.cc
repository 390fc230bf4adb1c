// `publish`: DIR/merged → a new generation DIR/gen/<id>/ (shard files + manifest), an
// optional backup copy (zstd or gzip, written by the same read that verifies each file,
// compressed on every core: rebuild/backup_copy.h), the atomic flip of DIR/current, and the archive servers'
// reload, confirmed on each one's /stats. On any failure the previous generation is put
// back (current flipped back, servers reloaded again): the old generation stays live.
//
// The generation id is `<last day as YYYYMMDD>-<xxh64 over the shard checksums>`: it
// names the content, so publishing the same merge twice is a no-op and a re-run after a
// crash produces the very same generation. Shard files are hard links of the merged ones
// (no copy). The manifest (keyformat/manifest.h) is what the archive server checks the
// file against; it also records the days merged from realtime exports with each shard's
// export digest, and per API the last late id merged (docs/formats.md#manifest), which
// release and the nightly's late fetch read back.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "base/clip.h"
#include "base/durable_file.h"
#include "base/errno_status.h"
#include "base/unique_fd.h"
#include "keyformat/hex64.h"
#include "keyformat/manifest.h"
#include "keyformat/ymdh.h"
#include "rebuild/cluster_http.h"
#include "rebuild/cluster_view.h"
#include "rebuild/day_plan.h"
#include "rebuild/commands.h"
#include "rebuild/file.h"
#include "rebuild/merged.h"
#include "rebuild/backup_copy.h"
#include "rebuild/progress.h"
#include "rebuild/publish.h"
#include "rebuild/tasks.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {
namespace {

constexpr size_t kIoBuffer = 4 << 20;

// Reads a whole file once and checks its size and XXH64 against what merge recorded; with
// a copy path, the same read feeds the backup copy of it there (backup_copy.h, on
// copy.threads threads), removed again when the check fails.
Status VerifyMergedFile(const std::string& path, const FileSummary& expect, const std::string& copy_path,
                        const BackupCopyOptions& copy, Progress* progress) {
  XXH64_state_t st;
  XXH64_reset(&st, 0);
  uint64_t bytes = 0;
  auto digest = [&](std::string_view block) {
    XXH64_update(&st, block.data(), block.size());
    bytes += block.size();
    progress->Add(0, block.size());
    progress->Tick();
  };
  Status status = copy_path.empty() ? ForEachBlock(path, kIoBuffer, digest)
                                    : WriteBackupCopy(path, copy_path, copy, digest);
  if (!status.ok()) return status;
  if (bytes != expect.bytes || XXH64_digest(&st) != expect.xxh64) {
    if (!copy_path.empty()) ::unlink(copy_path.c_str());
    return Status::Error(path + " does not match merged/meta (" + std::to_string(bytes) + " bytes, xxh64 " +
                         Hex64(XXH64_digest(&st)) + "; expected " + std::to_string(expect.bytes) + ", " +
                         Hex64(expect.xxh64) + "): run merge again");
  }
  return Status::OK();
}

Status LinkOrCopy(const std::string& from, const std::string& to) {
  if (::link(from.c_str(), to.c_str()) == 0) return Status::OK();
  if (errno != EXDEV && errno != EPERM) return ErrnoStatus("link " + from + " to", to);
  const UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return ErrnoStatus("open", from);
  FileWriter out;
  Status s = out.Open(to);
  std::vector<char> buf(kIoBuffer);
  while (s.ok()) {
    size_t n = 0;
    s = ReadSome(in.get(), buf.data(), buf.size(), from, &n);
    if (!s.ok() || n == 0) break;
    s = out.Append(std::string_view(buf.data(), n));
  }
  if (s.ok()) s = out.SyncAndClose();
  return s;
}

// The manifest of the merged files, without its generation: the days merged from
// realtime exports, and per API the newest late id of the merged files or of the live
// manifest, whichever is higher (the live one may know of late data whose segments are
// gone, and must never go back: the API would be asked for entries already merged).
Manifest ManifestOf(const MergedInfo& merged, const std::map<std::string, uint64_t>& live_late) {
  Manifest m;
  m.last_day = merged.last_day;
  m.shards = merged.shards;
  for (uint32_t k = 0; k < merged.shards; ++k) {
    const FileSummary& f = merged.files[k];
    m.shard_files[k] = ShardMeta{MergedFileName(k), f.records, f.bytes, f.xxh64, std::nullopt};
  }
  m.exports = merged.exports;
  m.rollups = merged.rollups;  // the API may read the files' rollups
  m.late = live_late;
  for (const auto& [api, id] : merged.late) m.late[api] = std::max(m.late[api], id);
  return m;
}

// Points DIR/current at target ("gen/<id>") atomically; "" removes it.
Status FlipCurrent(const WorkDir& work, const std::string& target) {
  const std::string current = work.Path("current");
  if (target.empty()) {
    if (::unlink(current.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("unlink", current);
    return SyncDir(work.root());
  }
  const std::string tmp = work.Path("current.tmp-" + WorkDir::NewId());
  if (::symlink(target.c_str(), tmp.c_str()) != 0) return ErrnoStatus("symlink", tmp);
  return RenameDurable(tmp, current);
}

// `<last day as YYYYMMDD>-<xxh64 over the shard checksums>`; the day and late lines of
// the manifest, when it has any, are hashed too, so that a generation directory (reused
// as it is when its manifest exists) always holds the manifest it is named for.
std::string GenerationId(const MergedInfo& merged, const Manifest& manifest) {
  XXH64_state_t st;
  XXH64_reset(&st, 0);
  for (const FileSummary& f : merged.files) XXH64_update(&st, &f.xxh64, sizeof f.xxh64);
  if (!manifest.exports.days.empty() || !manifest.exports.parts.empty() || !manifest.late.empty()) {
    Manifest lines;
    lines.exports = manifest.exports;
    lines.late = manifest.late;
    const std::string text = FormatManifest(lines);
    XXH64_update(&st, text.data(), text.size());
  }
  std::string day_compact = merged.last_day;
  day_compact.erase(std::remove(day_compact.begin(), day_compact.end(), '-'), day_compact.end());
  return day_compact + "-" + Hex64(XXH64_digest(&st));
}

// What publish works from: DIR/merged, checked against the config's archive shards.
Result<MergedInfo> ReadPublishable(const WorkDir& work, const Options& options) {
  Result<MergedInfo> merged = ReadMergedInfo(work.Path("merged"));
  if (!merged.ok()) return Status::Error("nothing merged to publish (" + merged.status().message() + "): run merge first");
  if (!options.archive.empty() && options.archive.size() != merged->shards) {
    return Status::Error("the merged files have " + std::to_string(merged->shards) + " shard(s) but the config has " +
                         std::to_string(options.archive.size()) + " archive shard(s)");
  }
  if (merged->last_day.empty()) return Status::Error("the merged files hold no day (only lookups?): nothing to publish");
  return merged;
}

// Where publish's backup copy is being written: BACKUP/.tmp-<generation>-<id>/ until it
// is complete, then renamed to BACKUP/<generation>/.
struct BackupWork {
  std::string tmp;  // "" when there is no backup to write
  BackupCopyOptions copy;
  // Where the copy of shard file `name` is written: tmp/name + the codec's suffix.
  std::string CopyOf(const std::string& name) const { return tmp + "/" + name + std::string(BackupSuffix(copy.codec)); }
};

// Step 1: DIR/gen/<generation>/ with the verified merged files (hard-linked) and the
// manifest, built in a temp directory and renamed into place. The read that verifies a
// file also writes its backup copy into backup->tmp, when there is one to write (each file
// is read once). Sets *wrote unless it was already there.
Status WriteGeneration(const WorkDir& work, const std::string& generation, const MergedInfo& merged,
                       const std::string& manifest, unsigned jobs, const BackupWork& backup, Progress* progress,
                       bool* wrote) {
  const std::string gen_dir = work.Path("gen/" + generation);
  if (Exists(gen_dir + "/manifest")) return Status::OK();
  if (Status s = MakeDirs(work.Path("gen")); !s.ok()) return s;
  Result<std::vector<std::string>> names = ListDir(work.Path("gen"));
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    if (name.starts_with(".tmp-")) RemoveAll(work.Path("gen/" + name));
  }
  if (Exists(gen_dir)) RemoveAll(gen_dir);
  const std::string tmp = work.Path("gen/.tmp-" + WorkDir::NewId());
  if (Status s = MakeDirs(tmp); !s.ok()) return s;
  // With a backup, one file at a time on every compressing thread; else one file per job.
  Status s = RunTasks(merged.shards, backup.tmp.empty() ? jobs : 1, [&](size_t k) -> Status {
    const std::string name = MergedFileName(uint32_t(k));
    const std::string from = work.Path("merged/" + name);
    const std::string copy = backup.tmp.empty() ? "" : backup.CopyOf(name);
    if (Status v = VerifyMergedFile(from, merged.files[k], copy, backup.copy, progress); !v.ok()) return v;
    return LinkOrCopy(from, tmp + "/" + name);
  });
  if (s.ok()) s = WriteFileAtomic(tmp + "/manifest", manifest);
  if (s.ok()) s = SyncDir(tmp);
  if (s.ok()) s = RenameDurable(tmp, gen_dir);
  if (!s.ok()) {
    RemoveAll(tmp);
    return s;
  }
  *wrote = true;
  return Status::OK();
}

// Step 2: BACKUP/<generation>/ with a compressed copy of each shard file and the manifest. The
// copies step 1 did not write (the generation was already there) are made from the
// generation's files, verified the same way. Returns what it did for the summary.
Result<std::string> WriteBackup(const std::string& backup, const BackupWork& work, const std::string& gen_dir,
                                const std::string& generation, const MergedInfo& merged,
                                const std::string& manifest, Progress* progress) {
  const std::string backup_dir = backup + "/" + generation;
  uint64_t copy_bytes = 0;
  Status s;
  for (uint32_t k = 0; k < merged.shards && s.ok(); ++k) {
    const std::string name = MergedFileName(k);
    const std::string copy = work.CopyOf(name);
    if (!Exists(copy)) s = VerifyMergedFile(gen_dir + "/" + name, merged.files[k], copy, work.copy, progress);
  }
  if (s.ok()) {
    for (uint32_t k = 0; k < merged.shards; ++k) copy_bytes += FileSize(work.CopyOf(MergedFileName(k)));
    s = WriteFileAtomic(work.tmp + "/manifest", manifest);
  }
  if (s.ok()) s = SyncDir(work.tmp);
  if (s.ok() && Exists(backup_dir)) s = RemoveAll(backup_dir);
  if (s.ok()) s = RenameDurable(work.tmp, backup_dir);
  if (!s.ok()) {
    RemoveAll(work.tmp);
    return s;
  }
  return "backup " + HumanBytes(copy_bytes) + " " + std::string(BackupCodecName(work.copy.codec)) + " in " +
         backup_dir;
}

// Step 0: one owner per day (day_plan.h). A generation through `last` makes the archive own
// every day up to it, so before it is written every realtime shard of the config closes
// through `last` (an increment for those days is late data from then on), and a day <= last
// that a shard holds but the merged files lack from that shard's ring refuses the publish:
// the archive would own it without those increments, and queries would never count them.
// Checked before the close (so a refusal changes nothing) and again after it (a write that
// opened such a day in between). Without realtime shards in the config: nothing to close.
Status FenceRealtime(const Options& options, const std::string& last_day, const MergedExports& exports) {
  if (options.realtime.empty()) return Status::OK();
  Result<int64_t> last = ParseDay(last_day);
  if (!last.ok()) return last.status();
  for (int round = 0; round < 2; ++round) {
    Result<ClusterView> cluster = ReadCluster(options, "refusing to publish through " + last_day);
    if (!cluster.ok()) return cluster.status();
    std::vector<uint32_t> shards;  // those not closed through it yet
    for (uint32_t k = 0; k < cluster->size(); ++k) {
      if ((*cluster)[k].closed_through < Day(*last)) shards.push_back(k);
    }
    const std::vector<DayShard> unmerged = UnmergedParts(Day(*last), exports, *cluster);
    if (!unmerged.empty()) {
      return Status::Error("refusing to publish through " + last_day + ": realtime holds " +
                           FormatDayShards(unmerged) + " (day@shard) and the merged files lack it; run "
                           "clickatron-rebuild nightly, which exports it and adds it to the archive first");
    }
    if (round == 0) {
      if (shards.empty()) break;  // every shard had closed through it: nothing opened since
      if (Status s = CloseThrough(options, shards, Day(*last)); !s.ok()) {
        return Status::Error("refusing to publish through " + last_day + ": " + s.message());
      }
    }
  }
  return Status::OK();
}

// A generation ending before the live one would hand back to realtime days it may have
// released already: queries would count nothing for them. Refused unless --allow-older.
Status CheckNotOlder(const Options& options, const std::string& last_day, const std::optional<Manifest>& live) {
  if (!live || last_day >= live->last_day || options.allow_older) return Status::OK();
  return Status::Error("refusing to make a generation ending " + last_day + " live: the live one, " + live->generation +
                       ", ends " + live->last_day + ", and realtime may have released the days between (queries "
                       "would count nothing for them); publish from a work directory that holds them, restore a "
                       "newer backup, or give --allow-older to do it anyway");
}

// Step 3b: every archive server reloads and confirms it serves generation. On the first
// failure, when the flip was made, current goes back to previous and every server is
// asked to reload it. Returns the number of servers that serve it; *not_running gets the
// servers that did not answer at all at a first publish (no generation was live before):
// such a server serves nothing yet, and serves this generation when it starts (its
// --db-file is under DIR/current), which is how a new cluster is brought up.
Result<size_t> ReloadArchives(const WorkDir& work, const Options& options, const std::string& generation,
                              const std::string& previous, std::vector<std::string>* not_running) {
  size_t servers = 0;
  for (const auto& replicas : options.archive) {
    for (const net::HostPort& host : replicas) {
      if (previous.empty() && !HttpCall(host, "GET", "/ping", options.timeout_ms).ok()) {
        not_running->push_back(host.ToString());
        continue;
      }
      Status s = ReloadOne(host, generation, options.timeout_ms);
      if (!s.ok()) {
        if (previous != generation) {
          FlipCurrent(work, previous.empty() ? "" : "gen/" + previous);
          for (const auto& r2 : options.archive) {
            for (const net::HostPort& h2 : r2) HttpCall(h2, "POST", "/reload", options.timeout_ms);
          }
        }
        return Status::Error("publish of generation " + generation + " failed: " + s.message() + "; " +
                             (previous.empty() ? std::string("no generation was live before")
                                               : "generation " + previous + " stays live"));
      }
      ++servers;
    }
  }
  return servers;
}

// Step 4: generations beyond keep (counting the new one) go, oldest first; never the
// live one.
void RemoveOldGenerations(const WorkDir& work, const std::string& generation, uint32_t keep) {
  Result<std::vector<std::string>> names = ListDir(work.Path("gen"));
  if (!names.ok()) return;
  std::vector<std::pair<int64_t, std::string>> by_age;
  for (const std::string& name : *names) {
    if (name.starts_with(".") || name == generation) continue;
    struct stat sb;
    if (::stat(work.Path("gen/" + name).c_str(), &sb) == 0) by_age.emplace_back(int64_t(sb.st_mtime), name);
  }
  std::sort(by_age.rbegin(), by_age.rend());
  for (size_t i = keep > 0 ? keep - 1 : 0; i < by_age.size(); ++i) RemoveAll(work.Path("gen/" + by_age[i].second));
}

}  // namespace

Status ReloadOne(const net::HostPort& host, const std::string& generation, int timeout_ms) {
  Result<HttpResult> stats = HttpCall(host, "GET", "/stats", timeout_ms);
  if (stats.ok() && stats->status == 200) {
    Result<wire::ArchiveStatsFields> served = wire::ReadArchiveStats(stats->body);
    if (served.ok() && served->generation == generation) return Status::OK();  // already serving it
  }
  Result<HttpResult> r = HttpCall(host, "POST", "/reload", timeout_ms);
  if (!r.ok()) return r.status();
  if (r->status != 200) {
    return Status::Error("archive " + host.ToString() + " refused the reload (HTTP " + std::to_string(r->status) +
                         ": " + ClippedLine(r->body, 200) + ")");
  }
  stats = HttpCall(host, "GET", "/stats", timeout_ms);
  if (!stats.ok()) return stats.status();
  Result<wire::ArchiveStatsFields> served = wire::ReadArchiveStats(stats->body);
  const std::string g = served.ok() ? served->generation : "";
  if (stats->status != 200 || g.empty() || g != generation) {
    return Status::Error("archive " + host.ToString() + " reloaded but serves generation '" + g +
                         "', not " + generation + " (is its --db-file under " + "DIR/current?)");
  }
  return Status::OK();
}

Result<std::optional<Manifest>> LiveManifest(const WorkDir& work) {
  Result<std::string> live = LiveGeneration(work);
  if (!live.ok()) return live.status();
  if (live->empty()) return std::optional<Manifest>();
  const std::string path = work.Path(std::string("current/") + kManifestName);
  Result<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  Result<Manifest> manifest = ParseManifest(*text);
  if (!manifest.ok()) return manifest.status().Prefixed(path + ": ");
  return std::optional<Manifest>(std::move(manifest).value());
}

Result<std::string> LiveGeneration(const WorkDir& work) {
  char buf[4096];
  const std::string current = work.Path("current");
  const ssize_t n = ::readlink(current.c_str(), buf, sizeof buf - 1);
  if (n < 0) {
    if (errno == ENOENT) return std::string();
    return ErrnoStatus("readlink", current);
  }
  std::string target(buf, size_t(n));
  if (!target.starts_with("gen/")) return Status::Error(current + " points at " + target + ", not gen/<generation>");
  return target.substr(4);
}

namespace {

// Step 3: the flip, then every archive server, each confirmed; any failure puts the old back.
Status FlipAndReload(const Options& options, WorkDir* work, const std::string& generation, const std::string& previous,
                     std::vector<std::string>* done) {
  if (previous != generation) {
    if (Status s = FlipCurrent(*work, "gen/" + generation); !s.ok()) return s;
    done->push_back("current -> gen/" + generation + (previous.empty() ? "" : " (was " + previous + ")"));
  }
  std::vector<std::string> not_running;
  Result<size_t> servers = ReloadArchives(*work, options, generation, previous, &not_running);
  if (!servers.ok()) return servers.status();
  if (*servers) done->push_back(std::to_string(*servers) + " archive server(s) serve it");
  if (!not_running.empty()) {
    std::string names;
    for (const std::string& n : not_running) names += (names.empty() ? "" : ", ") + n;
    done->push_back(std::to_string(not_running.size()) + " archive server(s) not running yet (" + names +
                    "): each serves it when it starts");
  }
  return Status::OK();
}

}  // namespace

Status RunPublish(const Options& options, WorkDir* work) {
  Result<MergedInfo> merged = ReadPublishable(*work, options);
  if (!merged.ok()) return merged.status();
  Result<std::string> live = LiveGeneration(*work);
  if (!live.ok()) return live.status();
  Result<std::optional<Manifest>> live_manifest = LiveManifest(*work);
  if (!live_manifest.ok()) return live_manifest.status();
  if (Status s = CheckNotOlder(options, merged->last_day, *live_manifest); !s.ok()) return s;
  if (Status s = FenceRealtime(options, merged->last_day, merged->exports); !s.ok()) return s;
  uint64_t total = 0;
  for (const FileSummary& f : merged->files) total += f.bytes;
  Manifest manifest = ManifestOf(*merged, *live_manifest ? (*live_manifest)->late : std::map<std::string, uint64_t>());
  const std::string generation = GenerationId(*merged, manifest);
  manifest.generation = generation;
  const std::string manifest_text = FormatManifest(manifest);
  Progress progress("publish", total);
  std::vector<std::string> done;

  BackupWork backup;
  if (!options.backup.empty() && !Exists(options.backup + "/" + generation + "/manifest")) {
    backup.tmp = options.backup + "/.tmp-" + generation + "-" + WorkDir::NewId();
    if (Status s = MakeDirs(backup.tmp); !s.ok()) return s;
    backup.copy.threads = options.jobs_given ? options.jobs : 0;  // 0: every core
    backup.copy.codec = options.backup_codec;
  }
  bool wrote = false;
  if (Status s = WriteGeneration(*work, generation, *merged, manifest_text, options.jobs, backup, &progress, &wrote);
      !s.ok()) {
    if (!backup.tmp.empty()) RemoveAll(backup.tmp);
    return s;
  }
  if (wrote) done.push_back("wrote gen/" + generation);

  if (!backup.tmp.empty()) {
    Result<std::string> written = WriteBackup(options.backup, backup, work->Path("gen/" + generation), generation,
                                              *merged, manifest_text, &progress);
    if (!written.ok()) return written.status();
    done.push_back(*written);
  }

  if (Status s = FlipAndReload(options, work, generation, *live, &done); !s.ok()) return s;
  RemoveOldGenerations(*work, generation, options.keep_generations);
  std::string text = "generation " + generation + " (last day " + merged->last_day + ", " +
                     std::to_string(merged->shards) + " shard(s))";
  if (done.empty()) text += " is already live, nothing to do";
  for (const std::string& d : done) text += "; " + d;
  progress.Summary(text);
  return Status::OK();
}

Status RunActivate(const Options& options, WorkDir* work) {
  const std::string dir = work->Path("gen/" + options.generation);
  Result<std::string> text = ReadSmallFile(dir + "/" + kManifestName);
  if (!text.ok()) return Status::Error("no generation " + options.generation + " to make live: " + text.status().message());
  Result<Manifest> manifest = ParseManifest(*text);
  if (!manifest.ok()) return manifest.status().Prefixed(dir + "/" + kManifestName + ": ");
  if (manifest->generation != options.generation) {
    return Status::Error(dir + "/" + kManifestName + " names generation " + manifest->generation + ", not " +
                         options.generation);
  }
  for (const auto& [k, meta] : manifest->shard_files) {
    if (!Exists(dir + "/" + meta.file)) return Status::Error(dir + "/" + meta.file + " (shard " + std::to_string(k) + ") is missing");
  }
  Result<std::string> live = LiveGeneration(*work);
  if (!live.ok()) return live.status();
  Result<std::optional<Manifest>> live_manifest = LiveManifest(*work);
  if (!live_manifest.ok()) return live_manifest.status();
  if (Status s = CheckNotOlder(options, manifest->last_day, *live_manifest); !s.ok()) return s;
  if (Status s = FenceRealtime(options, manifest->last_day, manifest->exports); !s.ok()) return s;
  Progress progress("activate");
  std::vector<std::string> done;
  if (Status s = FlipAndReload(options, work, options.generation, *live, &done); !s.ok()) return s;
  std::string summary = "generation " + options.generation + " (last day " + manifest->last_day + ")";
  if (done.empty()) summary += " is already live, nothing to do";
  for (const std::string& d : done) summary += "; " + d;
  progress.Summary(summary);
  return Status::OK();
}

}  // namespace clickatron::rebuild
