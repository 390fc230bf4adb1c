// ApiServer: clickatron-api — one event loop (the Redis model) serving the write path
// (/incr), the read path (QueryService: /series, /breakdown, /lookup), /stats and /ping,
// plus the oplog's sync thread, the only other thread.
//
// Write path (docs/api-write.md, 4):
//   GET /incr?ns=..&key=..[&value=][&ts=][&sub=..]*      one event
//   POST /incr  with a body, one event per line in the same form (empty query string)
//   POST /incr?ns=..  with an empty body                 one event, as GET
// The request is validated whole first (IncrEvent; a bad line rejects the batch, naming
// its line number in "message"), encoded into ONE oplog record (incr_payload.h) and
// appended. The reply waits for the oplog sync of the configured policy (under `none`, it
// is sent at once): 200 {"data": {"accepted": <events>}}; a record the oplog could not
// store → 503 OPLOG_UNAVAILABLE, never a false 200. Records then reach the realtime shards
// through one ShardDelivery per shard (a Sender per ring slot).
//
// Safe retries (docs/api-write.md#safe-retries): an /incr with an Idempotency-Key header
// (idempotency_key.h) is looked up in the idempotency index (idempotency_index.h) before
// anything else. A key seen with the same request is answered as the first time — 200 with
// its {"accepted": n} and `Idempotent-Replayed: true`, at once when its record is durable,
// else together with the first request once the sync settles it — and counts nothing
// again; with another request it is 422 IDEMPOTENCY_KEY_REUSED. A new key rides in the
// request's oplog record (its stamp line, incr_payload.h), so it is durable with the
// counts, and the index is rebuilt from the oplog at start. A bad key is 400
// INVALID_IDEMPOTENCY_KEY; a new key the full index cannot take, 503 IDEMPOTENCY_INDEX_FULL.
// Requests without the header take the path above unchanged.
//
// Error replies are the docs/api-write.md envelope with data null and a "message" naming the
// problem: {"status_code": 400, "status_txt": "INVALID_ARG_TS", "data": null,
// "message": "line 3: ts 'x' is not an integer (unix seconds)"}.
//
// Late data (docs/api-write.md#late-data): day parts a shard refused as closed or expired
// go to the late store (late_store.h) in the oplog directory; the nightly reads them with
//   GET /late?after=ID            the records of the entries with id > ID, summed and
//                                 sorted, #END footer (late_answer.h); X-Late-First,
//                                 X-Late-Last, X-Late-More headers
//   POST /late/release?through=ID deletes the entries with id <= ID
// Both need the cluster secret (X-Clickatron-Secret: 401 SECRET_MISSING, 403 SECRET_WRONG,
// net/secret.h); so does /stats when stats-secret is set. The API sends the secret with
// every request to the realtime and archive servers (its HttpClient's headers).
//
// The dashboard: GET / and /ui/* serve its files (api/static_files.h), loaded at start-up
// from ui-dir (default: api/static_files.h UiDirBeside) and ui-chartjs; a missing file fails Open.
//
// /stats: accepted and rejected increments (by status_txt), the oplog (segments, bytes,
// sync and durability latency quantiles), per realtime shard the sender's backlog
// (records, seconds), delivered, late and last error, the late store, request latencies,
// and the read path's counters.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/cluster_config.h"
#include "api/idempotency_index.h"
#include "api/late_store.h"
#include "api/sender.h"
#include "api/shard_delivery.h"
#include "api/static_files.h"
#include "keyformat/event.h"
#include "base/status.h"
#include "net/query.h"
#include "oplog/identity.h"
#include "oplog/oplog.h"

struct event_base;

namespace clickatron {

namespace net {
class AsyncReply;
class HttpClient;
class LoopWaker;
class Request;
class Server;
}  // namespace net
class QueryService;
struct IdempotencyStamp;

// The largest oplog record one request may produce. Every line of a record goes to a
// realtime shard in one request body, which the realtime server accepts up to 1 MiB.
inline constexpr size_t kMaxIncrPayload = 1000 * 1000;

struct ApiOptions {
  size_t max_body_bytes = 1024 * 1024;
  SenderOptions sender;
  oplog::Options oplog;  // sync policy, on_sync and clock are set from the config
};

class ApiServer {
 public:
  // Opens the oplog (recovering it), checks the realtime shard list against it, binds
  // the port. Errors name the problem (for main to print and exit non-zero).
  static Result<std::unique_ptr<ApiServer>> Open(const ClusterConfig& config, ApiOptions options = {});
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  uint16_t port() const;
  // Serves until SIGTERM/SIGINT; then answers what is pending, saves delivery cursors.
  void Run();

 private:
  struct Pending {
    uint64_t seq;
    uint64_t events;
    std::unique_ptr<net::AsyncReply> reply;
    IdempotencyIndex::Entry* keyed = nullptr;  // the request's key, in flight
    std::vector<std::unique_ptr<net::AsyncReply>> retries;  // the same key and request, waiting
  };

  explicit ApiServer(const ClusterConfig& config, ApiOptions options);
  Status Init();
  Status OpenOplog(oplog::SyncPolicy policy);
  // Creates the idempotency index and rebuilds it from the oplog (idempotency_restore.h).
  Status OpenIdempotencyIndex(std::chrono::seconds oplog_retention);
  Status OpenLateStore();
  void RegisterRoutes();
  // One ShardDelivery per realtime shard (none while a source conflict stands).
  Status StartDelivery(event_base* base);
  void OnIncr(net::Request& req);
  // An /incr with an Idempotency-Key header (its value).
  void OnKeyedIncr(net::Request& req, const char* key_header);
  // Answers a request whose key the index holds: replayed, waiting for its first, or 422.
  void AnswerRetry(net::Request& req, const IdempotencyIndex::Entry& entry, const RequestDigest& digest);
  // Parses the request's events into payload_; false after replying with the error.
  bool EncodeRequest(net::Request& req, uint64_t* events);
  bool EncodeBody(net::Request& req, std::string_view body, int64_t now, uint64_t* events);  // its POST body
  // Appends payload_ as the request's record and answers once it is durable (at once under
  // `none`). stamp: the request's key, entered in the index with the record; null without.
  void AppendRecord(net::Request& req, uint64_t events, const IdempotencyStamp* stamp);
  void Reject(net::Request& req, int code, const std::string& status_txt, const std::string& message);
  void OnSynced();  // on the loop: answers the requests the sync reports settled
  void SettlePending(const oplog::SyncReport& report);
  void AnswerStored(Pending& p);                          // 200, the retries replayed
  void AnswerFailed(Pending& p, const std::string& why);  // 503 OPLOG_UNAVAILABLE, key forgotten
  // /stats and /metrics (net/stats_writer.h), in the order of the JSON.
  void WriteStats(net::StatsWriter& w);
  void WriteIncrStats(net::StatsWriter& w);
  void WriteOplogStats(net::StatsWriter& w, const oplog::Stats& os);
  void WriteLateStats(net::StatsWriter& w);
  void OnLate(net::Request& req);
  void OnLateRelease(net::Request& req);
  // Checks that the request's parameters are at most `name` (once, a late id) and parses
  // it into *id (left as is when absent). False after replying with the error.
  bool ReadLateId(net::Request& req, std::string_view name, bool required, uint64_t* id);
  void OnStop();
  // Loads the oplog's identity (creating it for a new directory, or for one from before
  // identities with its node-id as source) and checks the directory is where it was created.
  Status LoadIdentity();
  // A conflict met while delivering: increments are refused from now on, and at every start
  // until it is resolved (oplog/identity.h).
  void EnterSourceConflict(const std::string& why);
  // After a fork: releases the late entries copied with the directory (oplog/identity.h).
  Status ReleaseCopiedLateEntries();
  // While a source conflict stands the late entries are not handed out: 503, true.
  bool RefuseWhileInConflict(net::Request& req);

  const ClusterConfig config_;
  ApiOptions options_;
  std::unique_ptr<net::Server> server_;
  std::unique_ptr<oplog::Oplog> log_;
  std::unique_ptr<LateStore> late_;
  std::unique_ptr<net::LoopWaker> waker_;
  std::unique_ptr<net::HttpClient> client_;
  std::unique_ptr<QueryService> queries_;
  oplog::Identity identity_;  // the source sent to the realtime shards (oplog/identity.h)
  std::optional<StaticFiles> ui_;  // the dashboard (docs/dashboard.md), loaded before listening
  std::vector<std::unique_ptr<ShardDelivery>> senders_;
  std::unique_ptr<IdempotencyIndex> idempotency_;
  AppendTimes append_times_;
  const uint64_t start_us_;

  // Filled by the oplog's sync thread, drained on the loop.
  std::mutex reports_mu_;
  std::vector<oplog::SyncReport> reports_;
  std::vector<oplog::SyncReport> draining_;

  std::deque<Pending> pending_;  // seq order
  // Reused for every request: the hot path does not allocate once warm.
  std::string payload_;
  std::string scratch_;
  Event event_;
  net::Query line_query_;

  // Counters for /stats.
  uint64_t accepted_events_ = 0, accepted_requests_ = 0;
  uint64_t rejected_events_ = 0;
  std::map<std::string, uint64_t> rejected_;  // by status_txt
  uint64_t oplog_failed_requests_ = 0;
  uint64_t replayed_requests_ = 0, waited_requests_ = 0;  // retries answered from the index
  uint64_t restored_keys_ = 0;
  std::string last_oplog_error_;
};

}  // namespace clickatron
