#include "api/shard_delivery.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <set>

#include "api/delivery_rounds.h"
#include "base/clip.h"
#include "base/durable_file.h"
#include "base/errno_status.h"
#include "base/read_file.h"
#include "keyformat/hex64.h"
#include "net/json.h"
#include "net/stats_writer.h"
#include "oplog/oplog.h"
#include "oplog/replay_skip.h"

namespace clickatron {

ShardDelivery::ShardDelivery(event_base* base, net::HttpClient* client, oplog::Oplog* log,
                             const AppendTimes* times, LateStore* late, uint32_t shard, net::HostPort to,
                             std::string source, SenderOptions options)
    : shard_(shard), to_(to), log_dir_(log->dir()) {
  for (int slot = 0; slot < kRingSlots; slot++) {
    streams_[size_t(slot)] =
        std::make_unique<Sender>(base, client, log, times, late, shard, slot, to, source, &sends_, options);
  }
}

std::vector<std::string> ShardDelivery::CursorNames(uint32_t shard) {
  std::vector<std::string> names;
  for (int slot = 0; slot < kRingSlots; slot++) names.push_back(Sender::CursorName(shard, slot));
  return names;
}

// The ring the shard's streams delivered to, from their DeliveredRingPath files (any of them:
// they are written together; a stream replayed alone has none). Different rings in two
// files: an error naming them.
Status ShardDelivery::LoadRing(const std::string& dir) {
  for (const std::string& cursor : CursorNames(shard_)) {
    const std::string path = DeliveredRingPath(dir, cursor);
    sends_.ring_paths.push_back(path);
    std::string text;
    bool exists;
    if (Status s = ReadFileIfExists(path, &text, &exists); !s.ok()) return s;
    if (!exists) continue;
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (!ParseHex64(text).ok()) return Status::Error(path + ": '" + Clipped(text, 40) + "' is not 16 hex digits");
    if (!sends_.ring.empty() && sends_.ring != text) {
      return Status::Error(path + " names ring " + text + " but another stream of realtime shard " +
                           std::to_string(shard_) + " names " + sends_.ring +
                           ": replay the whole shard (clickatron-oplog replay --cursor realtime-" +
                           std::to_string(shard_) + ")");
    }
    sends_.ring = text;
  }
  return Status::OK();
}

Status ShardDelivery::Start(uint64_t last_seq) {
  sends_.max_sent = last_seq;  // what earlier processes may have sent
  if (Status s = LoadRing(log_dir_); !s.ok()) return s;
  for (auto& s : streams_) {
    if (Status st = s->Start(last_seq); !st.ok()) return st;
  }
  return Status::OK();
}

void ShardDelivery::Kick() {
  for (auto& s : streams_) s->Kick();
}

void ShardDelivery::Stop() {
  for (auto& s : streams_) s->Stop();
}

uint64_t ShardDelivery::cursor() const {
  uint64_t c = UINT64_MAX;
  for (const auto& s : streams_) c = std::min(c, s->cursor());
  return c;
}

uint64_t ShardDelivery::delivered_records() const {
  uint64_t n = 0;
  for (const auto& s : streams_) n += s->delivered_records();
  return n;
}

uint64_t ShardDelivery::late_records() const {
  uint64_t n = 0;
  for (const auto& s : streams_) n += s->late_records();
  return n;
}

bool ShardDelivery::idle() const {
  return std::all_of(streams_.begin(), streams_.end(), [](const auto& s) { return s->idle(); });
}

void ShardDelivery::WriteStatsJson(net::StatsWriter* w, uint64_t last_seq) const {
  // The shard is retrying while any stream is, sending while any is, else idle.
  const char* state = "idle";
  uint64_t saved = UINT64_MAX;
  double backlog_seconds = 0;
  for (const auto& s : streams_) {
    const std::string_view st = s->state_name();
    if (st == "retrying" || st == "stopped") state = s->state_name();
    if (st == "sending" && std::string_view(state) == "idle") state = "sending";
    saved = std::min(saved, s->saved_cursor());
    backlog_seconds = std::max(backlog_seconds, s->BacklogSeconds(last_seq));
  }
  const uint64_t cursor = this->cursor();
  auto label = w->Label("shard", std::to_string(shard_));
  w->BeginObject();
  w->Field("shard", shard_);
  w->Info("address", to_.ToString(), "clickatron_api_realtime_address_info", "The realtime shard's address.");
  w->State("state", state, {"idle", "sending", "retrying", "stopped"}, "clickatron_api_realtime_state",
           "1 for the delivery state of the shard (retrying while any of its streams is).");
  w->Gauge("cursor", cursor, "clickatron_api_realtime_cursor", "Every oplog record up to it is delivered to the shard.");
  w->Gauge("saved_cursor", saved, "clickatron_api_realtime_saved_cursor", "The cursor as last saved.");
  w->Gauge("backlog_records", last_seq > cursor ? last_seq - cursor : 0, "clickatron_api_realtime_backlog_records",
           "Oplog records not yet delivered to the shard.");
  w->Gauge("backlog_seconds", backlog_seconds, "clickatron_api_realtime_backlog_seconds",
           "Age of the oldest record not yet delivered to the shard.");
  WriteSums(w);
  WriteConditions(w);
  w->BeginArray("slots");
  for (const auto& s : streams_) s->WriteStatsJson(w, last_seq);
  w->EndArray();
  w->EndObject();
}

void ShardDelivery::WriteSums(net::StatsWriter* w) const {
  StreamCounters sum;
  size_t in_doubt = 0, replay = 0;
  int64_t synced = -1;
  LatencySnapshot lag;
  for (const auto& s : streams_) {
    const StreamCounters& c = s->counters();
    sum.delivered += c.delivered;
    sum.duplicate += c.duplicate;
    sum.late_lines += c.late_lines;
    sum.late_parts += c.late_parts;
    sum.late_duplicate_parts += c.late_duplicate_parts;
    sum.skipped_records += c.skipped_records;
    sum.rounds += c.rounds;
    sum.requests += c.requests;
    sum.failures += c.failures;
    sum.rewinds += c.rewinds;
    sum.probes += c.probes;
    // One restart of the shard is seen by each stream that talks to it.
    sum.restarts = std::max(sum.restarts, c.restarts);
    in_doubt += s->rounds_in_doubt();
    replay += s->replay_pending();
    synced = std::max(synced, s->shard_synced_seq());
    lag.Merge(s->delivery_lag());
  }
  w->Counter("delivered_records", sum.delivered, "clickatron_api_realtime_delivered_records_total",
             "Oplog records the shard acknowledged.");
  w->Counter("duplicate_records", sum.duplicate, "clickatron_api_realtime_duplicate_records_total",
             "Records the shard had already applied.");
  w->Counter("late_records", sum.late_lines, "clickatron_api_realtime_late_records_total",
             "Oplog lines stored as late data (the shard refused their day as closed).");
  w->Counter("late_parts", sum.late_parts, "clickatron_api_realtime_late_parts_total", "Day parts stored as late.");
  w->Counter("late_duplicate_parts", sum.late_duplicate_parts, "clickatron_api_realtime_late_duplicate_parts_total",
             "Re-sent late parts skipped.");
  w->Counter("skipped_records", sum.skipped_records, "clickatron_api_realtime_skipped_records_total",
             "Records skipped by a replay rule.");
  w->Counter("rounds", sum.rounds, "clickatron_api_realtime_rounds_total", "Delivery rounds.");
  w->Counter("requests", sum.requests, "clickatron_api_realtime_requests_total", "Requests sent to the shard.");
  w->Counter("failures", sum.failures, "clickatron_api_realtime_failures_total", "Requests to the shard that failed.");
  w->Counter("rewinds", sum.rewinds, "clickatron_api_realtime_rewinds_total", "Rounds sent again (in doubt).");
  w->Counter("probes", sum.probes, "clickatron_api_realtime_probes_total",
             "GET /ping sent to the shard while rounds were in doubt and nothing to send (a restart is noticed).");
  w->Counter("shard_restarts", sum.restarts, "clickatron_api_realtime_shard_restarts_total",
             "Restarts of the shard seen (a new instance).");
  w->Gauge("shard_synced_seq", synced, "clickatron_api_realtime_shard_synced_seq",
           "Highest seq of this source the shard reported synced.");
  w->Gauge("rounds_in_doubt", in_doubt, "clickatron_api_realtime_rounds_in_doubt", "Rounds not yet known synced.");
  w->Gauge("replay_pending", replay, "clickatron_api_realtime_replay_pending", "Rounds waiting to be sent again.");
  w->BeginObject("delivery_lag_ms");
  w->Histogram(lag, "clickatron_api_realtime_delivery_lag_seconds",
               "Per round, from the append of its first record to the shard's answer to its last request.");
  w->Field("rounds", lag.count());
  w->Field("p50", double(lag.Quantile(0.5)) / 1000);
  w->Field("p99", double(lag.Quantile(0.99)) / 1000);
  w->Field("max", double(lag.max_micros()) / 1000);
  w->EndObject();
}

void ShardDelivery::WriteConditions(net::StatsWriter* w) const {
  const Sender* waiting = nullptr;
  const Sender* ring = nullptr;
  const Sender* source = nullptr;
  const Sender* last = nullptr;
  uint64_t in_use_refusals = 0, conflicts = 0;
  bool in_use = false, conflict = false;
  for (const auto& s : streams_) {
    if (s->waiting_slot_release() && waiting == nullptr) waiting = s.get();
    if (s->ring_changed() && ring == nullptr) ring = s.get();
    if ((s->source_in_use() || s->source_conflict()) && source == nullptr) source = s.get();
    if (s->last_error_us() != 0 && (last == nullptr || s->last_error_us() > last->last_error_us())) last = s.get();
    in_use = in_use || s->source_in_use();
    conflict = conflict || s->source_conflict();
    in_use_refusals += s->counters().source_in_use_refusals;
    conflicts += s->counters().source_conflicts;
  }
  w->Flag("waiting_slot_release", waiting != nullptr, "clickatron_api_realtime_waiting_slot_release",
          "1 while a stream waits for the nightly to release its slot (503 SLOT_NOT_RELEASED).");
  if (waiting != nullptr) w->Field("waiting_slot_release_message", waiting->waiting_slot_release_message());
  w->Field("ring", sends_.ring);
  w->Flag("ring_changed", ring != nullptr, "clickatron_api_realtime_ring_changed",
          "1 while delivery is held: the shard has a new data directory (412 RING_CHANGED).");
  if (ring != nullptr) w->Field("ring_message", ring->ring_message());
  w->Flag("source_in_use", in_use, "clickatron_api_realtime_source_in_use",
          "1 while the shard refuses this source as another sender's (409 SOURCE_IN_USE).");
  w->Counter("source_in_use_refusals", in_use_refusals, "clickatron_api_realtime_source_in_use_refusals_total",
             "Requests refused 409 SOURCE_IN_USE.");
  w->Flag("source_conflict", conflict, "clickatron_api_realtime_source_conflict",
          "1 while the shard holds a seq of this source past its oplog (SOURCE_CONFLICT).");
  w->Counter("source_conflicts", conflicts, "clickatron_api_realtime_source_conflicts_total",
             "Answers that showed a source conflict.");
  if (source != nullptr) w->Field("source_message", source->source_message());
  w->Field("last_error", last == nullptr ? std::string() : last->last_error());
  w->Key("last_error_age_seconds");
  if (last == nullptr) {
    w->Null();
  } else {
    w->Double(double(MonotonicMicros() - last->last_error_us()) / 1e6);
  }
}

// ---- The one-stream layout ----

std::string OneStreamCursorName(uint32_t shard) { return "realtime-" + std::to_string(shard); }

namespace {

// The shards named by one-stream cursors ("realtime-K") and files in dir.
Result<std::set<uint32_t>> OneStreamShards(oplog::Oplog* log) {
  std::set<uint32_t> shards;
  auto shard_of = [&](std::string_view name, std::string_view prefix, std::string_view suffix) {
    if (!name.starts_with(prefix) || !name.ends_with(suffix)) return;
    name.remove_prefix(prefix.size());
    name.remove_suffix(suffix.size());
    uint32_t k = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), k);
    if (!name.empty() && ec == std::errc() && end == name.data() + name.size()) shards.insert(k);
  };
  for (const oplog::CursorStats& c : log->GetStats().cursors) shard_of(c.name, "realtime-", "");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(log->dir(), ec)) {
    const std::string name = entry.path().filename().string();
    shard_of(name, "delivery-realtime-", ".rounds");
    shard_of(name, oplog::ReplaySkipFileName("realtime-"), "");
  }
  if (ec) return Status::Error("listing " + log->dir() + ": " + ec.message());
  return shards;
}

// Copies dir/from to dir/to (atomically, durably) when it exists.
Status CopyIfPresent(const std::string& dir, const std::string& from, const std::string& to) {
  const std::string path = dir + "/" + from;
  std::string text;
  bool exists = false;
  if (Status s = ReadFileIfExists(path, &text, &exists); !s.ok() || !exists) return s;
  return WriteFileAtomic(dir + "/" + to, text);
}

Status UnlinkIfPresent(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("unlink", path);
  return Status::OK();
}

Status RemoveOneStreamFiles(const std::string& dir, uint32_t shard) {
  const std::string old = OneStreamCursorName(shard);
  if (Status s = UnlinkIfPresent(DeliveryRounds::Path(dir, old)); !s.ok()) return s;
  if (Status s = UnlinkIfPresent(dir + "/" + oplog::ReplaySkipFileName(old)); !s.ok()) return s;
  return SyncDir(dir);
}

bool HasCursor(oplog::Oplog* log, const std::string& name) {
  for (const oplog::CursorStats& c : log->GetStats().cursors) {
    if (c.name == name) return true;
  }
  return false;
}

Status UpgradeShard(oplog::Oplog* log, uint32_t shard) {
  const std::string dir = log->dir();
  const std::string old = OneStreamCursorName(shard);
  const std::vector<std::string> names = ShardDelivery::CursorNames(shard);
  const bool upgraded = std::any_of(names.begin(), names.end(), [&](const std::string& n) { return HasCursor(log, n); });
  if (upgraded) return RemoveOneStreamFiles(dir, shard);  // leftovers of an upgrade cut short
  const uint64_t cursor = log->cursor(old);
  for (const std::string& name : names) {
    const std::string rounds_from = DeliveryRounds::Path(dir, old).substr(dir.size() + 1);
    const std::string rounds_to = DeliveryRounds::Path(dir, name).substr(dir.size() + 1);
    if (Status s = CopyIfPresent(dir, rounds_from, rounds_to); !s.ok()) return s;
    Status s = CopyIfPresent(dir, oplog::ReplaySkipFileName(old), oplog::ReplaySkipFileName(name));
    if (!s.ok()) return s;
    if (Status c = log->SetCursor(name, cursor); !c.ok()) return c;
  }
  (void)log->RemoveCursor(old);  // fails only when there is none (nothing was delivered yet)
  if (Status s = log->SaveCursors(); !s.ok()) return s;
  std::fprintf(stderr,
               "clickatron-api: realtime shard %u: delivery upgraded to one stream per ring slot; "
               "each starts after seq %llu with the rounds of %s\n",
               shard, (unsigned long long)cursor, old.c_str());
  return RemoveOneStreamFiles(dir, shard);
}

}  // namespace

Status UpgradeDeliveryLayout(oplog::Oplog* log) {
  Result<std::set<uint32_t>> shards = OneStreamShards(log);
  if (!shards.ok()) return shards.status();
  for (uint32_t shard : *shards) {
    if (Status s = UpgradeShard(log, shard); !s.ok()) return s.Prefixed("upgrading the delivery layout: ");
  }
  return Status::OK();
}

Status RemoveShardDelivery(oplog::Oplog* log, uint32_t shard) {
  std::vector<std::string> names = ShardDelivery::CursorNames(shard);
  names.push_back(OneStreamCursorName(shard));
  for (const std::string& name : names) {
    (void)log->RemoveCursor(name);  // fails only when there is none: nothing to remove
    if (Status s = UnlinkIfPresent(DeliveryRounds::Path(log->dir(), name)); !s.ok()) return s;
    if (Status s = UnlinkIfPresent(DeliveredRingPath(log->dir(), name)); !s.ok()) return s;
    const std::string skip = log->dir() + "/" + oplog::ReplaySkipFileName(name);
    if (Status s = UnlinkIfPresent(skip); !s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace clickatron
