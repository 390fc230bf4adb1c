// Backend access for the read path: archive requests with replica failover, realtime
// requests, and lookup resolution — all asynchronous on the service's loop.
//
// Archive: a request goes to one replica of its shard; a transport error (refused,
// timeout after QueryOptions::archive_timeout_ms), a status other than 200/404, or an
// unreadable X-Archive-Last-Day moves it to the next replica, until every replica has been
// tried — then the answer is a failure naming the shard and what each replica said. The
// first replica tried rotates per request (spreading load) unless the caller asks for the
// one an earlier answer of the same query came from (same file, same watermark).
//
// Realtime: one server per shard, no retry; anything but 200 (or 404 for /get) is a failure
// naming the shard.
//
// Archive cache (archive_cache.h): a /get, /mget or /fwmatch answer that names its
// generation is kept under (shard, generation, path). A request that pins a generation (the
// one a live answer of the same query named) asks the cache first; a hit is delivered on the
// next turn of the loop (never inside FetchArchive), exactly as a live answer would be. A
// /get without one (a query's first request) is answered from the cache too while the
// shard's generation is within its lease (wire/generation.h); otherwise it goes to
// a replica — that is how a query learns which generation is served, and that a shard is
// down — with `If-None-Match` when the cache holds its path under the shard's last known
// generation: a 304 naming that generation makes the cached bytes the answer (a 5-year index
// is 400 KB not sent again); a 200 is a new answer, kept in its turn. Other requests without
// a pinned generation (lookups, listings) always go to a replica.
//
// Lookups: `_l|<hash>` on its archive shard, then, for the hashes not found, on its
// realtime shard (docs/formats.md#sharding: shard of "_l|<hash>"); values are unescaped (docs/formats.md#text-files). Found
// originals go into the service's LookupCache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/archive_cache.h"
#include "api/cluster_config.h"
#include "api/lookup_cache.h"
#include "api/query_plan.h"
#include "api/query_service.h"
#include "api/realtime_hour_batch.h"
#include "base/status.h"

struct event;

namespace clickatron {

inline constexpr int64_t kWatermarkUnknown = -2;

struct BackendAnswer {
  bool ok = false;         // a usable answer arrived
  int status = 0;          // 200 or 404 when ok; when not, the HTTP status (0: no answer)
  SharedBody body;         // a /get answer: the value, without its "\n"
  std::string error;       // when !ok: names the shard and the problem
  int64_t watermark = kWatermarkUnknown;  // archive answers: W of the file that answered
  std::string generation;  // archive answers: X-Archive-Generation ("" without a manifest)
  bool rollups = false;    // archive answers: X-Archive-Rollups (docs/formats.md#rollup-records)
  bool cached = false;     // archive answers: from the archive cache, not a replica
  size_t replica = 0;      // archive answers: which replica answered
  bool more = false;       // a /fwmatch page the limit cut (X-Fwmatch-More): the listing goes on
  std::string after;       // a realtime /fwsum page cut so: where the next starts (X-Fwsum-After)
  // When !ok: the archive replica refused a /fwmatch `limit` above its --fwmatch-limit
  // (400 with X-Fwmatch-Limit): its cap; ask again with at most that.
  size_t fwmatch_limit = 0;
};
using BackendCallback = std::function<void(BackendAnswer&&)>;

struct QueryService::State {
  event_base* base = nullptr;
  net::HttpClient* client = nullptr;
  ClusterConfig config;
  QueryOptions options;
  LookupCache lookups;
  ArchiveCache archive_cache;
  std::vector<int64_t> last_watermark;  // per archive shard, kWatermarkUnknown until seen
  std::vector<size_t> next_replica;     // per archive shard: where the next request starts

  uint64_t series = 0, breakdowns = 0, lookup_requests = 0;
  uint64_t keys_requests = 0, subtotals_requests = 0, cluster_requests = 0;
  // The dashboard's landing page (query_namespaces.h, query_leaderboard.h, /timezones): its
  // requests, and the leaderboards whose archive sums the archive cache held, or did not.
  uint64_t namespaces_requests = 0, leaderboard_requests = 0, timezones_requests = 0;
  uint64_t leaderboard_cache_hits = 0, leaderboard_cache_misses = 0;
  uint64_t errors_4xx = 0, errors_503 = 0, archive_failovers = 0, watermark_retries = 0;
  // The plans of /series and /breakdown (docs/api-read.md#the-plan-of-a-query): backend
  // requests per tier (live, or answered by the archive cache), the tiers a query skipped,
  // and the subtotal records a breakdown read, by kind.
  uint64_t archive_requests = 0, archive_cache_answers = 0, realtime_requests = 0;
  uint64_t archive_revalidated = 0;  // live /get answers a replica confirmed with 304
  uint64_t archive_skipped = 0, realtime_skipped = 0;
  uint64_t realtime_sums = 0;  // /fwsum requests: a breakdown's realtime hours summed by realtime
  uint64_t month_records = 0, day_records = 0, hour_records = 0, rollup_fallbacks = 0;
  // Realtime hour batches (realtime_hour_batch.h): per realtime shard, the asks this turn of
  // the loop started, sent together once the turn's other events are done; the asks made,
  // those that shared a request with another, and the batches asked again ask by ask.
  struct HourAsks {
    std::vector<HourAsk> asks;
    std::vector<BackendCallback> done;
  };
  std::vector<HourAsks> hour_asks;
  event* hour_batch_event = nullptr;  // made on first use
  bool hour_batch_waiting = false;    // the event is active: asks wait for it
  uint64_t realtime_hour_asks = 0, realtime_batched_asks = 0;
  uint64_t realtime_batches_split = 0;  // batches asked again ask by ask (a 400, or no split)

  State(event_base* b, net::HttpClient* c, const ClusterConfig& cfg, QueryOptions o)
      : base(b), client(c), config(cfg), options(o), lookups(o.lookup_cache_entries),
        archive_cache(cfg.archive.size(), o.archive_cache_bytes, int64_t{o.archive_cache_confirm_ms} * 1000),
        last_watermark(cfg.archive.size(), kWatermarkUnknown),
        next_replica(cfg.archive.size(), 0),
        hour_asks(cfg.realtime.size()) {}
  ~State();  // asks still waiting are dropped without their callbacks, as the client's are
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};
using QueryState = QueryService::State;

// GET path on archive shard `shard`, replicas in turn; first_replica < 0 rotates. With a
// generation pinned, a cached answer of that generation is taken if there is one (a live
// answer may still name another: the caller compares).
void FetchArchive(QueryState* s, size_t shard, std::string path, int first_replica,
                  BackendCallback done, std::string_view pinned_generation = {});
// GET path on realtime shard `shard`.
void FetchRealtime(QueryState* s, size_t shard, std::string path, BackendCallback done);
// The realtime keys `{prefix}{ymdh}` of span's hours (an /mget) on shard `shard`, asked
// together with the other such asks of this turn of the loop (realtime_hour_batch.h). done
// gets exactly the lines of these keys, as an /mget of its own would; a batch path the shard
// refuses with HTTP 400, or an answer that does not split, is asked again ask by ask.
void FetchRealtimeHours(QueryState* s, size_t shard, std::string prefix, HourRange span, BackendCallback done);

// Resolves hashes (12-character lookup hashes) to their originals. done gets an error (a
// shard down: StatusCode::kArchiveUnavailable or kRealtimeUnavailable names its tier) or the
// found ones; hashes with no record are simply absent.
using LookupCallback =
    std::function<void(Status, std::unordered_map<std::string, std::string>&&)>;
void ResolveLookups(QueryState* s, std::vector<std::string> hashes, LookupCallback done);

}  // namespace clickatron
