// The headers of the realtime shard's protocol beyond the body: who sends an /incr, and what
// the answers tell: for /incr and /set, the shard's durability and the source's mark; for
// /fwmatch, whether the answer is whole (docs/api.md#clickatron-realtime).
//
// Every answer carries `X-Realtime-Instance: <16 hex digits>`, new at every start of the
// process. A sender that sees it change knows the shard restarted and may have lost the
// batches it acknowledged after its last sync, so it re-sends from its saved cursor. An
// /incr naming an instance (`&instance=I`) that is not the running one is refused with
// 412 INSTANCE_CHANGED and nothing applied: otherwise the first batch after a silent
// restart (a keep-alive connection reopened by the client) would move the source's
// high-water mark past the lost batches, and their re-sent copies would be skipped.
#pragma once

namespace clickatron::realtime {

inline constexpr char kInstanceHeader[] = "X-Realtime-Instance";

// Every 200 answer to `/incr?source=S` also carries the highest seq of source S that is
// durable (`X-Realtime-Synced-Seq`, -1 for none yet): every batch of S up to it survives a
// kill -9 of the shard. A sender keeps the rounds above it in doubt — to re-send after a
// restart — however long the shard's sync interval or its commits take.
inline constexpr char kSyncedSeqHeader[] = "X-Realtime-Synced-Seq";

// A /fwmatch answer that the limit cut short carries `X-Fwmatch-More: 1`; the reader asks
// again with `after=<the last key it got>` until an answer comes without it. A reader that
// sums what it lists (the API's breakdowns) must read to the end or fail, never add up a
// first page as if it were everything (docs/api.md#realtime-get-mget-fwmatch).
inline constexpr char kFwmatchMoreHeader[] = "X-Fwmatch-More";
// A /fwsum answer cut short carries the same header and `X-Fwsum-After: <the last key it
// summed>`, where the next page starts (its lines are sums, not keys): the reader adds the
// pages' sums up (docs/api.md#realtime-fwsum).
inline constexpr char kFwsumAfterHeader[] = "X-Fwsum-After";

// Every /incr carries `X-Clickatron-Sender: <16 lowercase hex digits>`, an id the sending
// API process draws at random when it starts (400 SENDER_MISSING without it). The shard
// remembers, per source, the sender that last wrote and when; a batch of that source from
// another sender while the last one wrote within --source-lease-ms is refused with 409
// SOURCE_IN_USE and nothing applied. Two API processes using one node-id (a misconfigured
// node, a forged request) then cannot both move the source's marks; an API that restarted
// (a new id) takes over once the lease of its old process has expired.
inline constexpr char kSenderHeader[] = "X-Clickatron-Sender";

// Every /incr answer (200 or error) carries `X-Realtime-Source-Mark: <seq>`: the highest
// mark of the source over the days of the batch (over the days the shard holds when the
// batch could not be read), -1 for none. A sender that finds it beyond its own oplog's
// head knows someone else wrote as its source: its batches would be taken as duplicates.
inline constexpr char kSourceMarkHeader[] = "X-Realtime-Source-Mark";

// Every /export, /incr and /set answer names the shard's data directory: `X-Realtime-Ring:
// <16 hex digits>`, its ring id (ring_id.h), new with each data directory. The nightly
// records it with the day's export digest, so a replacement shard's data for the same day is
// never taken as merged. A sender names the ring it delivered to (`&ring=R` on /incr and
// /set); a shard on another directory refuses with 412 RING_CHANGED and applies nothing:
// the directory those rounds went to is gone, and re-sending them is the replay procedure's
// work (its skip rule), not the ordinary re-send's.
inline constexpr char kRingHeader[] = "X-Realtime-Ring";

}  // namespace clickatron::realtime
