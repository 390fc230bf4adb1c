// clickatron-oplog: the operator's view of an oplog directory (docs/api.md#clickatron-oplog, 6).
//   clickatron-oplog dump DIR [--from SEQ]   one line per record: seq, length, payload
//   clickatron-oplog verify DIR              checks every frame, prints counts
//   clickatron-oplog cursors DIR             each consumer's cursor and backlog
//   clickatron-oplog replay DIR --cursor NAME [--from SEQ] [--skip-through DAY]
//                                            consumer NAME (or the group NAME.*: the API's
//                                            streams of a realtime shard) receives every record from SEQ
//                                            (default: the oldest kept) again (replay.h),
//                                            without its lines of days <= DAY among the
//                                            records it had received (replay_skip.h)
//   clickatron-oplog identity DIR            the identity: source, where it was created, conflict
//   clickatron-oplog fork DIR [--own-from SEQ]  a copy gets a new identity (identity.h)
//   clickatron-oplog adopt DIR               a moved directory is the original now (identity.h)
// dump, verify, cursors and identity are read-only and take no lock, so they can look at a
// running API's log; replay, fork and adopt change it and are refused while the API has it
// open.
// Exit status: 0 ok, 1 the log is corrupt or unreadable, or replay refused; 2 bad command
// line.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "config/option_loader.h"
#include "keyformat/ymdh.h"
#include "oplog/cursors.h"
#include "oplog/identity.h"
#include "oplog/inspect.h"
#include "oplog/replay.h"

namespace po = clickatron::config::po;
using namespace clickatron;
using namespace clickatron::oplog;

namespace {

constexpr char kUsage[] =
    "usage: clickatron-oplog dump DIR [--from SEQ]   print records (seq length payload)\n"
    "       clickatron-oplog verify DIR              check every frame, print counts\n"
    "       clickatron-oplog cursors DIR             print cursors (name seq backlog)\n"
    "       clickatron-oplog replay DIR --cursor NAME [--from SEQ] [--skip-through DAY]\n"
    "                                                make consumer NAME (e.g. realtime-1: the API's\n"
    "                                                streams realtime-1.slot-0..2) receive\n"
    "                                                every record from SEQ (default: the oldest\n"
    "                                                kept) again when the API next starts; with\n"
    "                                                --skip-through YYYY-MM-DD (the archive's\n"
    "                                                last_day) not its lines of days <= DAY that\n"
    "                                                it had received before\n"
    "       clickatron-oplog identity DIR            print the directory's identity (its source)\n"
    "       clickatron-oplog fork DIR [--own-from SEQ]\n"
    "                                                DIR is a copy of another API's oplog: give it\n"
    "                                                a new identity owning the records from SEQ\n"
    "                                                (default: after the last); the records before\n"
    "                                                are left to the original\n"
    "       clickatron-oplog adopt DIR               the original of a moved DIR is gone for good:\n"
    "                                                DIR is it now\n";

int Fail(const std::string& message, int status) {
  std::fprintf(stderr, "clickatron-oplog: %s\n", message.c_str());
  return status;
}

int Dump(const std::string& dir, uint64_t from) {
  std::string line;
  LogCheck check = CheckLog(dir, [&](uint64_t seq, std::string_view payload) {
    if (seq < from) return;
    line = std::to_string(seq);
    line += ' ';
    line += std::to_string(payload.size());
    line += ' ';
    line += EscapePayload(payload);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
  });
  std::fflush(stdout);
  if (!check.error.ok()) return Fail(check.error.message(), 1);
  if (!check.torn_tail.empty()) {
    std::fprintf(stderr, "clickatron-oplog: torn tail in %s (cut when the log is next opened)\n",
                 check.torn_tail.c_str());
  }
  return 0;
}

int Verify(const std::string& dir) {
  LogCheck check = CheckLog(dir, nullptr);
  std::printf("segments %llu\nrecords %llu\nbytes %llu\nfirst_seq %llu\nlast_seq %llu\n",
              static_cast<unsigned long long>(check.segments),
              static_cast<unsigned long long>(check.records),
              static_cast<unsigned long long>(check.bytes),
              static_cast<unsigned long long>(check.first_seq),
              static_cast<unsigned long long>(check.last_seq));
  if (!check.torn_tail.empty()) {
    std::printf("torn_tail %s (cut when the log is next opened)\n", check.torn_tail.c_str());
  }
  if (!check.error.ok()) {
    std::printf("CORRUPT %s\n", check.error.message().c_str());
    std::fflush(stdout);
    return Fail(check.error.message(), 1);
  }
  std::printf("ok\n");
  return 0;
}

int Cursors(const std::string& dir) {
  Result<CursorMap> cursors = LoadCursors(dir);
  if (!cursors.ok()) return Fail(cursors.status().message(), 1);
  LogCheck check = CheckLog(dir, nullptr);
  if (!check.error.ok()) return Fail(check.error.message(), 1);
  std::printf("last_seq %llu\n", static_cast<unsigned long long>(check.last_seq));
  for (const auto& [name, seq] : *cursors) {
    const uint64_t backlog = check.last_seq > seq ? check.last_seq - seq : 0;
    std::printf("%s %llu backlog %llu\n", name.c_str(), static_cast<unsigned long long>(seq),
                static_cast<unsigned long long>(backlog));
  }
  return 0;
}

// The API's file of where each batch to a shard ended (api/delivery_rounds.h). Without it
// the API re-sends the records after the cursor one per batch, which is exactly-once against
// whatever high-water marks the shard holds; with it, it would re-cut its old batches.
std::string DeliveryRoundsFile(const std::string& cursor) { return "delivery-" + cursor + ".rounds"; }
// And the realtime data directory its rounds went to (api/delivery_rounds.h DeliveredRingPath):
// removed, so that the API delivers the replay to the shard's new directory.
std::string DeliveredRingFile(const std::string& cursor) { return "delivery-" + cursor + ".ring"; }

int Replay(const std::string& dir, const std::string& cursor, uint64_t from,
           int64_t skip_through_day) {
  RewindRequest request;
  request.cursor = cursor;
  request.from = from;
  request.skip_through_day = skip_through_day;
  request.consumer_files = [](const std::string& name) {
    return std::vector<std::string>{DeliveryRoundsFile(name), DeliveredRingFile(name)};
  };
  Result<Rewind> r = RewindCursor(dir, request);
  if (!r.ok()) return Fail("replay refused: " + r.status().message(), 1);
  if (!r->recovery.empty()) std::printf("recovered %s\n", r->recovery.c_str());
  for (const CursorRewind& c : r->cursors) {
    std::printf("cursor %s %llu -> %llu\n", c.name.c_str(), static_cast<unsigned long long>(c.old_cursor),
                static_cast<unsigned long long>(r->new_cursor));
  }
  std::printf("re-send %llu record%s (seq %llu..%llu) when the API next starts\n",
              static_cast<unsigned long long>(r->records), r->records == 1 ? "" : "s",
              static_cast<unsigned long long>(r->first_seq),
              static_cast<unsigned long long>(r->last_seq));
  for (const CursorRewind& c : r->cursors) {
    if (c.skip.active()) {
      std::printf("skip lines of days <= %s in records <= %llu (written to %s)\n",
                  FormatDay(c.skip.through_day).c_str(), static_cast<unsigned long long>(c.skip.through_seq),
                  c.skip_path.c_str());
    } else if (skip_through_day >= 0) {
      std::printf("nothing to skip: cursor %s had received no record\n", c.name.c_str());
    }
  }
  for (const CursorRewind& c : r->cursors) {
    const std::string path = dir + "/" + DeliveryRoundsFile(c.name);
    const bool removed = std::find(r->removed.begin(), r->removed.end(), path) != r->removed.end();
    std::printf(removed ? "removed %s\n" : "no %s to remove\n", path.c_str());
  }
  return 0;
}

void PrintIdentity(const Identity& id) {
  std::printf("id %s\nsource %s\ncreated %s in %s on %s (machine %s, inode %llu)\nown_from_seq %llu\n",
              id.id.c_str(), id.source.c_str(), id.created.c_str(), id.location.path.c_str(),
              id.location.host.c_str(), id.location.machine.c_str(), (unsigned long long)id.location.inode,
              (unsigned long long)id.own_from_seq);
  std::printf("conflict %s\n", id.conflict.empty() ? "none" : id.conflict.c_str());
}

int ShowIdentity(const std::string& dir) {
  Result<Identity> id = LoadIdentity(dir);
  if (!id.ok()) return Fail(id.status().message(), 1);
  if (id->id.empty()) return Fail(dir + " has no identity file (an API creates it when it first opens the log)", 1);
  PrintIdentity(*id);
  Result<Location> here = LocationOf(dir);
  if (!here.ok()) return Fail(here.status().message(), 1);
  const std::string moved = LocationConflict(dir, *id, *here);
  if (!moved.empty()) std::printf("not where it was created: %s\n", moved.c_str());
  return 0;
}

int Fork(const std::string& dir, uint64_t own_from) {
  Result<ForkResult> f = ForkIdentity(dir, own_from, [](const std::string& name) {
    return std::vector<std::string>{DeliveryRoundsFile(name)};
  });
  if (!f.ok()) return Fail("fork refused: " + f.status().message(), 1);
  std::printf("identity %s (source %s) -> %s (source %s)\n", f->was.id.c_str(), f->was.source.c_str(),
              f->now.id.c_str(), f->now.source.c_str());
  std::printf("records up to seq %llu are the original's: not sent from here (%zu cursors moved to %llu)\n",
              (unsigned long long)f->shared_through, f->cursors.size(), (unsigned long long)f->shared_through);
  std::printf("records from seq %llu on are this directory's own, sent as source %s\n",
              (unsigned long long)f->shared_through + 1, f->now.source.c_str());
  std::printf("late entries copied with the directory are released when the API next starts\n");
  for (const std::string& path : f->removed) std::printf("removed %s\n", path.c_str());
  return 0;
}

int Adopt(const std::string& dir) {
  Result<Identity> id = AdoptIdentity(dir);
  if (!id.ok()) return Fail("adopt refused: " + id.status().message(), 1);
  std::printf("identity %s (source %s) now lives in %s on %s (inode %llu); no conflict\n", id->id.c_str(),
              id->source.c_str(), id->location.path.c_str(), id->location.host.c_str(),
              (unsigned long long)id->location.inode);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  config::OptionLoader loader(kUsage, "options", /*config_file=*/false);
  loader.Add()(
      "from", po::value<uint64_t>()->default_value(1),
      "dump: first seq to print; replay: first seq to re-send (default: the oldest kept)")(
      "cursor", po::value<std::string>(), "replay: the consumer, e.g. realtime-1 (its streams realtime-1.slot-0..2)")(
      "skip-through", po::value<std::string>(),
      "replay: YYYY-MM-DD, the last day the archive holds (its manifest's last_day)")(
      "own-from", po::value<uint64_t>(), "fork: the first record of this directory's own (default: after the last)");
  loader.AddPositional("command", po::value<std::string>(), 1);
  loader.AddPositional("args", po::value<std::vector<std::string>>(), -1);
  po::variables_map vm;
  bool help = false;
  if (Status s = loader.Load(argc, argv, &vm, &help); !s.ok()) return Fail(s.message() + "\n" + kUsage, 2);
  if (help) return 0;
  if (!vm.count("command")) return Fail(std::string("no command\n") + kUsage, 2);
  const std::string command = vm["command"].as<std::string>();
  std::vector<std::string> args;
  if (vm.count("args")) args = vm["args"].as<std::vector<std::string>>();
  const std::vector<std::string> commands = {"dump", "verify", "cursors", "replay", "identity", "fork", "adopt"};
  if (std::find(commands.begin(), commands.end(), command) == commands.end()) {
    return Fail("unknown command '" + command + "'\n" + kUsage, 2);
  }
  if (args.size() != 1) return Fail(command + " takes one directory\n" + kUsage, 2);
  if (command != "dump" && command != "replay" && !vm["from"].defaulted()) {
    return Fail("--from is an option of dump and replay only", 2);
  }
  if (command != "replay" && vm.count("cursor")) return Fail("--cursor is an option of replay only", 2);
  if (command != "replay" && vm.count("skip-through")) {
    return Fail("--skip-through is an option of replay only", 2);
  }
  if (command != "fork" && vm.count("own-from")) return Fail("--own-from is an option of fork only", 2);
  const std::string& dir = args[0];
  if (command == "identity") return ShowIdentity(dir);
  if (command == "adopt") return Adopt(dir);
  if (command == "fork") {
    const uint64_t own_from = vm.count("own-from") ? vm["own-from"].as<uint64_t>() : 0;
    if (vm.count("own-from") && own_from == 0) return Fail("--own-from must be a seq >= 1", 2);
    return Fork(dir, own_from);
  }
  if (command == "replay") {
    if (!vm.count("cursor")) return Fail("replay needs --cursor NAME (see: clickatron-oplog cursors DIR)", 2);
    const uint64_t from = vm["from"].defaulted() ? 0 : vm["from"].as<uint64_t>();
    if (!vm["from"].defaulted() && from == 0) return Fail("--from must be a seq >= 1", 2);
    int64_t skip_through_day = -1;
    if (vm.count("skip-through")) {
      Result<int64_t> day = ParseDay(vm["skip-through"].as<std::string>());
      if (!day.ok()) return Fail("--skip-through: " + day.status().message(), 2);
      skip_through_day = *day;
    }
    return Replay(dir, vm["cursor"].as<std::string>(), from, skip_through_day);
  }
  if (command == "dump") return Dump(dir, vm["from"].as<uint64_t>());
  if (command == "verify") return Verify(dir);
  return Cursors(dir);
}
