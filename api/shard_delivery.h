// ShardDelivery: the delivery streams of one realtime shard — one Sender per ring slot
// (day % 3), each with its own cursor "realtime-K.slot-S" and rounds file
// (docs/api-write.md#delivery). Three streams because a slot can make its days wait (503
// SLOT_NOT_RELEASED: tomorrow's increments while the nightly has not released the day
// that held their slot three days before) and nothing else may wait with them: today's
// increments, in another slot, go on.
//
// The streams are independent: each reads the whole log and keeps its shard's lines of its
// slot's days, cuts its own rounds and moves its own cursor. The realtime shard keeps a
// high-water mark per (slot, source), so rounds of different slots never decide each
// other's duplicates. They share the source name and ShardSends (sender.h: a round is
// settled only by a synced seq above every seq sent before its answer).
//
// /stats shows a shard as before — its figures summed over the streams, its backlog from
// the oldest stream's cursor — and each stream under "slots".
//
// Not thread-safe (the API's event loop owns it).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/sender.h"
#include "base/status.h"
#include "keyformat/day_ring.h"
#include "net/host_port.h"

struct event_base;

namespace clickatron {

class ShardDelivery {
 public:
  // REQUIRES: base, client, log, times and late outlive it.
  ShardDelivery(event_base* base, net::HttpClient* client, oplog::Oplog* log, const AppendTimes* times,
                LateStore* late, uint32_t shard, net::HostPort to, std::string source, SenderOptions options);

  // Starts every stream; `last_seq` is the last record of the recovered log.
  Status Start(uint64_t last_seq);
  void Kick();
  void Stop();

  // The cursor of the stream furthest behind: every record <= it is delivered.
  uint64_t cursor() const;
  uint64_t delivered_records() const;
  uint64_t late_records() const;
  bool idle() const;
  const Sender& stream(int slot) const { return *streams_[size_t(slot)]; }
  // {"shard": .., "address": .., "state": .., "backlog_records": .., ..., "slots": [..]}
  void WriteStatsJson(net::StatsWriter* w, uint64_t last_seq) const;

  // The cursor names of shard k's streams, slot 0 first.
  static std::vector<std::string> CursorNames(uint32_t shard);

 private:
  Status LoadRing(const std::string& dir);
  void WriteSums(net::StatsWriter* w) const;
  void WriteConditions(net::StatsWriter* w) const;

  const uint32_t shard_;
  const net::HostPort to_;
  const std::string log_dir_;
  ShardSends sends_;
  std::array<std::unique_ptr<Sender>, kRingSlots> streams_;
};

// The layout before per-slot streams: one stream per shard, cursor "realtime-K", rounds
// file DIR/delivery-realtime-K.rounds, replay rule DIR/replay-skip-realtime-K.
std::string OneStreamCursorName(uint32_t shard);

// Upgrades an oplog directory of the one-stream layout in place, before any stream starts:
// for each shard with a one-stream cursor, rounds file or replay rule and no slot cursor,
// each slot stream gets the old cursor, a copy of the old rounds file (its boot line and
// ends: a slot stream cuts the old rounds again at the same ends, each its slot's part of
// them) and of the old replay rule; then the old cursor goes (in the same atomic save of
// the cursors that creates the new ones) and the old files after it. A crash before that
// save leaves the old layout, done again at the next start; after it, leftovers of the old
// files are removed at the next start. docs/api-write.md#upgrading-from-one-stream-per-shard.
Status UpgradeDeliveryLayout(oplog::Oplog* log);

// Removes shard k's cursors, rounds files, ring files and replay rules, of both layouts (resharding to
// fewer shards: a cursor nobody advances would hold back the oplog's retention forever).
Status RemoveShardDelivery(oplog::Oplog* log, uint32_t shard);

}  // namespace clickatron
