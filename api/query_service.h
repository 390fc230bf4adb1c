// QueryService: the API's read path (docs/api-read.md) — GET /series, GET /breakdown, GET /lookup,
// and the dashboard's GET /keys, /subtotals, /cluster and /timezones (query_listing.h),
// /namespaces (query_namespaces.h) and /leaderboard (query_leaderboard.h).
//
// A query is answered from both tiers at once. The archive watermark W (the last day the
// archive answer covers, from its X-Archive-Last-Day header; none without the header) splits
// the hours: hours of days <= W come from the archive only, later hours from realtime only —
// never both, never neither. Every backend call is asynchronous on the service's event loop
// through the net/ HttpClient; no thread blocks on I/O.
//
//   /series     one archive /get of the total record `{ns}|{key}` on its archive shard, and
//               concurrently the realtime hours of the key (an /mget of the hours the ring can
//               hold past the last watermark seen, or an /fwmatch when that is unknown); the
//               hours are then rolled up into the buckets of the requested unit and zone.
//   /breakdown  the archive total record is the index: only the subtotal records of its
//               hours in range are fetched — as month and day rollups where the generation
//               carries them (rollup_plan.h) — in /mget batches pinned to the index's replica
//               and generation, from the archive cache when it holds them (archive_cache.h);
//               plus a realtime /fwmatch of `{subns}.{ns}|{key}.`; hashed subkeys are shown as
//               their originals through lookup records (archive, then realtime; LRU cache).
//   A tier whose hours the range does not need is not asked (docs/api-read.md#the-plan-of-a-query).
//   /lookup     `?hash=H` → {"hash": H, "value": original}.
//
// Failures: archive replicas are tried in turn, each with a per-request timeout; a shard
// with no live replica, or a realtime shard that does not answer, gives 503 naming the
// shard — never a partial number.
//
// Wiring: routes must be added before the server listens, but the service needs the loop
// and client that exist only after; so the routes are registered against the owner's
// pointer and answer 503 STARTING until it is set:
//
//   QueryService::Register(server, &queries_);             // before server->Listen()
//   ... server->Listen(); client = HttpClient(server->base(0)) ...
//   queries_ = std::make_unique<QueryService>(server->base(0), client, config);
//
// Threading: everything runs on `base`, the loop `client` belongs to. REQUIRES: the server
// serves the routes on that loop (a one-loop net::Server whose base(0) is `base`); a request
// arriving on another loop is answered 500, not served unsafely.
// Lifetime: destroy the client before (or with) the QueryService, after the server stopped;
// queries still waiting for backends are freed with the client (their callbacks own them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "api/cluster_config.h"
#include "wire/generation.h"

struct event_base;

namespace clickatron {

namespace net {
class HttpClient;
class JsonWriter;
class StatsWriter;
class Server;
}  // namespace net

struct QueryOptions {
  int archive_timeout_ms = 1000;    // per replica; then the next replica is tried
  int realtime_timeout_ms = 2000;
  size_t lookup_cache_entries = 100000;
  // Archive answers kept per (shard, generation) (docs/api-read.md#caches): at most this many
  // bytes, taken from the cache while the shard's generation was confirmed by a live archive
  // answer within archive_cache_confirm_ms. No longer than the lease the release waits out
  // (wire/generation.h); tests may shorten it.
  size_t archive_cache_bytes = size_t{64} << 20;
  int archive_cache_confirm_ms = wire::kGenerationConfirmMs;
  size_t max_backend_url_bytes = 6000;  // /mget batches are cut to fit backend URL limits
  // The fan-out of one query (docs/api-read.md#bounds): backend requests (archive /get and
  // /mget batches, realtime /mget batches and /fwmatch pages) and the bytes of their answers.
  // A query that needs more answers 400 QUERY_TOO_LARGE, never a partial number.
  size_t max_backend_requests = 1024;
  size_t max_backend_bytes = size_t{64} << 20;
};

class QueryService {
 public:
  // REQUIRES: client runs on base; both outlive this service. config is copied.
  QueryService(event_base* base, net::HttpClient* client, const ClusterConfig& config,
               QueryOptions options = {});
  ~QueryService();
  QueryService(const QueryService&) = delete;
  QueryService& operator=(const QueryService&) = delete;

  // Adds /series, /breakdown, /lookup, /keys, /subtotals, /cluster, /namespaces, /leaderboard
  // and /timezones to server, served by *service once it is set.
  // REQUIRES: before server->Listen(); *service outlives the server's loops.
  static void Register(net::Server* server, const std::unique_ptr<QueryService>* service);

  // Writes the read path's counters as one JSON object (for the API's /stats):
  // {"series": n, "breakdown": n, "lookup": n, "errors_4xx": n, "errors_503": n,
  //  "lookup_cache": {"entries": n, "bytes": n, "hits": n, "misses": n, "evictions": n},
  //  "archive_failovers": n, "watermark_retries": n, "archive_cache": {...}, "plan": {...}}
  // (docs/api-read.md#stats).
  void WriteStatsJson(net::StatsWriter* w) const;

  struct State;  // internal; public so the query runs in query_*.cc can reach it

 private:
  std::unique_ptr<State> state_;
};

}  // namespace clickatron
