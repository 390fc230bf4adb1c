// The refusal names (the envelope's `status_txt`, docs/api.md#conventions) that more than
// one side spells: a name one process sends and another branches on, or a name several
// servers send alike. The one home of each; who sends it, who reads it and what it means is
// the table in docs/wire.md#refusals. A name only one server sends and no process reads
// (`TS_TOO_OLD`) stays beside that server's code and in its page of docs/api.md.
//
//   name                  HTTP  sent by                   read by
//   INVALID_LINE          400   realtime /incr, /set      API sender (a failed round)
//   COUNTER_OVERFLOW      400   realtime /incr            API sender (a failed round)
//   SLOT_NOT_RELEASED     503   realtime /incr            API sender (waits for the release)
//   DAY_EXPIRED           409   realtime /incr, /set      API sender (late data)
//   DAY_CLOSED            409   realtime /incr, /set      API sender (late data)
//   DAY_NOT_CLOSED        409   realtime /release         nightly release (a failure)
//   STORAGE_ERROR         500   realtime writes           API sender (a failed round)
//   FLUSH_BEHIND          503   realtime /incr, /set      API sender (a failed round)
//   DAY_NOT_HELD          404   realtime /export,         nightly export
//                               /release
//   SENDER_MISSING        400   realtime /incr            API sender
//   INSTANCE_CHANGED      412   realtime /incr            API sender (re-sends)
//   RING_CHANGED          412   realtime /incr, /set      API sender (stops the stream)
//   SOURCE_IN_USE         409   realtime /incr            API sender (waits for the lease)
//   SUM_OVERFLOW          500   realtime /fwsum, API      API read path, clients
//   ARCHIVE_FILE_DAMAGED  503   archive key reads         API read path (a failed replica)
//   TOO_MANY_KEYS         400   archive, realtime /mget   clients
//   INVALID_ARG_LIMIT     400   archive, realtime         API /keys (X-Fwmatch-Limit)
//   MISSING_ARG_KEY       400   archive, realtime, API    clients
//   INVALID_ARG_KEY       400   archive, realtime, API    clients
//   METHOD_NOT_ALLOWED    405   every server              clients
//   UNKNOWN_ARG           400   API                       clients
//   NOT_FOUND             404   API                       clients (the dashboard)
//   INTERNAL_ERROR        500   API                       clients
//   INVALID_ARG_TS        400   API /incr                 clients
//   QUERY_TOO_LARGE       400   API reads                 clients (the dashboard)
//   ARCHIVE_UNAVAILABLE   503   API reads                 clients (the dashboard)
//   REALTIME_UNAVAILABLE  503   API reads                 clients (the dashboard)
//   BACKEND_ERROR         503   API reads                 clients (the dashboard)
//
// A parameter's refusal is kInvalidArgPrefix or kMissingArgPrefix + its name in capitals
// (INVALID_ARG_LIMIT, MISSING_ARG_DAY): every server spells them so.
#ifndef CLICKATRON_WIRE_REFUSALS_H_
#define CLICKATRON_WIRE_REFUSALS_H_

namespace clickatron::wire {

// The realtime shard's writes (realtime/ring.h Refusal, docs/api.md#realtime-incr).
inline constexpr char kInvalidLine[] = "INVALID_LINE";
inline constexpr char kCounterOverflow[] = "COUNTER_OVERFLOW";
inline constexpr char kSlotNotReleased[] = "SLOT_NOT_RELEASED";
inline constexpr char kDayExpired[] = "DAY_EXPIRED";
inline constexpr char kDayClosed[] = "DAY_CLOSED";
inline constexpr char kDayNotClosed[] = "DAY_NOT_CLOSED";
inline constexpr char kStorageError[] = "STORAGE_ERROR";
inline constexpr char kFlushBehind[] = "FLUSH_BEHIND";
inline constexpr char kDayNotHeld[] = "DAY_NOT_HELD";

// A realtime source's sender, instance and ring (headers.h, docs/realtime.md).
inline constexpr char kSenderMissing[] = "SENDER_MISSING";
inline constexpr char kInstanceChanged[] = "INSTANCE_CHANGED";
inline constexpr char kRingChanged[] = "RING_CHANGED";
inline constexpr char kSourceInUse[] = "SOURCE_IN_USE";

// Sums and key reads, realtime and archive (docs/api.md#realtime-fwsum, #archive-get).
inline constexpr char kSumOverflow[] = "SUM_OVERFLOW";
inline constexpr char kArchiveFileDamaged[] = "ARCHIVE_FILE_DAMAGED";
inline constexpr char kTooManyKeys[] = "TOO_MANY_KEYS";

// Parameters and methods, every server (docs/api.md#conventions).
inline constexpr char kInvalidArgPrefix[] = "INVALID_ARG_";
inline constexpr char kMissingArgPrefix[] = "MISSING_ARG_";
inline constexpr char kInvalidArgLimit[] = "INVALID_ARG_LIMIT";
inline constexpr char kMissingArgKey[] = "MISSING_ARG_KEY";
inline constexpr char kInvalidArgKey[] = "INVALID_ARG_KEY";
inline constexpr char kInvalidArgTs[] = "INVALID_ARG_TS";
inline constexpr char kUnknownArg[] = "UNKNOWN_ARG";
inline constexpr char kMethodNotAllowed[] = "METHOD_NOT_ALLOWED";
inline constexpr char kNotFound[] = "NOT_FOUND";
inline constexpr char kInternalError[] = "INTERNAL_ERROR";

// The API's reads (docs/api.md#api-series).
inline constexpr char kQueryTooLarge[] = "QUERY_TOO_LARGE";
inline constexpr char kArchiveUnavailable[] = "ARCHIVE_UNAVAILABLE";
inline constexpr char kRealtimeUnavailable[] = "REALTIME_UNAVAILABLE";
inline constexpr char kBackendError[] = "BACKEND_ERROR";

}  // namespace clickatron::wire

#endif  // CLICKATRON_WIRE_REFUSALS_H_
