// The HTTP header names Clickatron's processes send each other and their clients: the one
// home of each name, included by the process that writes the header and by every one that
// reads it. Who sends and who reads each, and what it means, is the table in
// docs/wire.md#headers; the rules behind them are in docs/api.md (each endpoint).
//
//   header                    sent by              on                          read by
//   X-Clickatron-Secret       every client         guarded requests            every server (net/secret.h)
//   X-Clickatron-Sender       API sender           realtime /incr              realtime
//   X-Realtime-Instance       realtime             every answer                API sender
//   X-Realtime-Synced-Seq     realtime             /incr?source= 200           API sender
//   X-Realtime-Source-Mark    realtime             every /incr answer          API sender
//   X-Realtime-Ring           realtime             /export, /incr, /set        API sender, nightly export
//   X-Fwmatch-More            realtime, archive    /fwmatch, /fwsum cut short  API read path
//   X-Fwsum-After             realtime             /fwsum cut short            API read path
//   X-Fwmatch-Limit           archive              400 INVALID_ARG_LIMIT       API /keys
//   X-Archive-Last-Day        archive              every key answer            API read path (the watermark)
//   X-Archive-Generation      archive              every key answer            API read path
//   X-Archive-Rollups         archive              every key answer            API read path
//   ETag, If-None-Match       archive, API         conditional /get            generation.h
//   X-Late-First/-Last/-More  API                  GET /late                   nightly (rebuild late)
//   Idempotency-Key           any client           API /incr                   API
//   Idempotent-Replayed       API                  /incr answered from index   clients
//
// A value of "1" is how a flag header says yes (X-Fwmatch-More, X-Archive-Rollups,
// X-Late-More); its absence is no.
#ifndef CLICKATRON_WIRE_HEADERS_H_
#define CLICKATRON_WIRE_HEADERS_H_

namespace clickatron::wire {

// The cluster secret on internal endpoints (docs/operations.md#threat-model).
inline constexpr char kSecretHeader[] = "X-Clickatron-Secret";

// The realtime shard and its senders (docs/api.md#realtime-incr, docs/realtime.md).
// The sending API process's id, drawn at every start: the source lease is held by it.
inline constexpr char kSenderHeader[] = "X-Clickatron-Sender";
// The shard process's id, new at every start: a change means acknowledged batches may be lost.
inline constexpr char kInstanceHeader[] = "X-Realtime-Instance";
// The highest seq of the /incr's source that is durable on the shard (-1: none yet).
inline constexpr char kSyncedSeqHeader[] = "X-Realtime-Synced-Seq";
// The highest mark of the /incr's source over the batch's days (-1: none).
inline constexpr char kSourceMarkHeader[] = "X-Realtime-Source-Mark";
// The shard's data directory (its ring id), new with each data directory.
inline constexpr char kRingHeader[] = "X-Realtime-Ring";

// Listings cut short (docs/api.md#realtime-get-mget-fwmatch, #realtime-fwsum, #archive-fwmatch).
// "1": the answer is one page; ask again after its last key.
inline constexpr char kFwmatchMoreHeader[] = "X-Fwmatch-More";
// On a /fwsum page: the last key it summed, where the next page starts.
inline constexpr char kFwsumAfterHeader[] = "X-Fwsum-After";
// On the archive's 400 INVALID_ARG_LIMIT: its --fwmatch-limit, the most one /fwmatch lists.
inline constexpr char kFwmatchLimitHeader[] = "X-Fwmatch-Limit";

// What an archive answer was read from (docs/api.md#archive-get, docs/architecture.md#the-watermark).
// The last day the file holds (YYYY-MM-DD): the watermark W.
inline constexpr char kLastDayHeader[] = "X-Archive-Last-Day";
// The manifest's generation of the file that answered.
inline constexpr char kGenerationHeader[] = "X-Archive-Generation";
// "1": that generation's files carry day and month rollups (docs/formats.md#rollup-records).
inline constexpr char kRollupsHeader[] = "X-Archive-Rollups";
// A generation's tag and the condition naming it (the rules: generation.h).
inline constexpr char kEtagHeader[] = "ETag";
inline constexpr char kIfNoneMatchHeader[] = "If-None-Match";

// The API's late store, read by the nightly (docs/api.md#api-late): the first and last entry
// ids of the answer, and "1" when more entries follow.
inline constexpr char kLateFirstHeader[] = "X-Late-First";
inline constexpr char kLateLastHeader[] = "X-Late-Last";
inline constexpr char kLateMoreHeader[] = "X-Late-More";

// A safe retry of an API /incr (docs/api-write.md#safe-retries; api/idempotency_key.h), and
// "true" on the answer to a retry answered from the API's index of keys.
inline constexpr char kIdempotencyKeyHeader[] = "Idempotency-Key";
inline constexpr char kIdempotentReplayedHeader[] = "Idempotent-Replayed";

}  // namespace clickatron::wire

#endif  // CLICKATRON_WIRE_HEADERS_H_
