#include "api/api_server.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <utility>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>

#include "api/idempotency_key.h"
#include "api/idempotency_restore.h"
#include "api/incr_event.h"
#include "api/incr_payload.h"
#include "api/late_answer.h"
#include "api/query_service.h"
#include "api/shard_list.h"
#include "base/clip.h"
#include "base/latency.h"
#include "base/random_id.h"
#include "base/wall_clock.h"
#include "keyformat/ymdh.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "net/json.h"
#include "net/loop_waker.h"
#include "net/request.h"
#include "net/secret.h"
#include "net/stats_writer.h"
#include "oplog/identity.h"
#include "wire/headers.h"
#include "wire/refusals.h"

namespace clickatron {
namespace {

void ReplyError(net::Responder& r, int code, std::string_view status_txt, std::string_view message) {
  r.ReplyJsonError(code, status_txt, message);
}

void ReplyAccepted(net::Responder& r, uint64_t events) {
  std::string data = "{\"accepted\":";
  data += std::to_string(events);
  data += '}';
  r.ReplyJson(200, "OK", data);
}

void ReplyReplayed(net::Responder& r, uint64_t events) {
  r.AddHeader(wire::kIdempotentReplayedHeader, "true");
  ReplyAccepted(r, events);
}

// How many times the request carries header `name` (evhttp keeps every line of it).
size_t HeaderCount(const net::Request& req, const char* name) {
  size_t n = 0;
  const evkeyvalq* headers = evhttp_request_get_input_headers(req.raw());
  for (const evkeyval* h = headers->tqh_first; h != nullptr; h = h->next.tqe_next) {
    if (evutil_ascii_strcasecmp(h->key, name) == 0) n++;
  }
  return n;
}

// Rebuilds the idempotency index from the oplog (idempotency_restore.h) and says so.
Status RestoreIdempotency(oplog::Oplog* log, IdempotencyIndex* index, uint64_t* restored) {
  const uint64_t start_us = MonotonicMicros();
  Result<IdempotencyRestore> r = RestoreIdempotencyIndex(log, WallClockSeconds(), index);
  if (!r.ok()) return Status::Error("idempotency keys from the oplog: " + r.status().message());
  *restored = r->keys;
  std::fprintf(stderr,
               "clickatron-api: idempotency: %llu key(s) within the %llds window from %llu record(s) "
               "(%llu past it) in %.0f ms, %zu of %zu bytes\n",
               (unsigned long long)r->keys, (long long)index->window_seconds(), (unsigned long long)r->records,
               (unsigned long long)r->expired, double(MonotonicMicros() - start_us) / 1e3, index->bytes(),
               index->max_bytes());
  if (r->malformed > 0) {
    std::fprintf(stderr, "clickatron-api: idempotency: %llu stamp(s) SKIPPED, their keys not restored; first: %s\n",
                 (unsigned long long)r->malformed, r->first_malformed.c_str());
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<ApiServer>> ApiServer::Open(const ClusterConfig& config, ApiOptions options) {
  std::unique_ptr<ApiServer> api(new ApiServer(config, std::move(options)));
  Status s = api->Init();
  if (!s.ok()) return s;
  return api;
}

ApiServer::ApiServer(const ClusterConfig& config, ApiOptions options)
    : config_(config), options_(std::move(options)), start_us_(MonotonicMicros()) {}

Status ApiServer::Init() {
  Result<oplog::SyncPolicy> policy = oplog::ParseSyncPolicy(config_.oplog_sync);
  if (!policy.ok()) return policy.status();

  net::ServerOptions server_options;
  server_options.address = config_.address;
  server_options.port = config_.port;
  server_options.threads = 1;  // one loop: the oplog, senders and queries all live on it
  server_options.max_body_bytes = options_.max_body_bytes;
  server_options.limits = config_.limits;
  server_ = std::make_unique<net::Server>(server_options);

  if (Status s = OpenOplog(*policy); !s.ok()) return s;
  if (Status s = LoadIdentity(); !s.ok()) return s;
  if (Status s = UpgradeDeliveryLayout(log_.get()); !s.ok()) return s;
  if (Status s = AdoptShardList(log_.get(), config_.realtime); !s.ok()) return s;
  if (Status s = OpenIdempotencyIndex(options_.oplog.retention); !s.ok()) return s;
  if (Status s = OpenLateStore(); !s.ok()) return s;
  std::string ui_dir = config_.ui_dir;
  if (ui_dir.empty()) {
    Result<std::string> beside = DefaultUiDir();
    if (!beside.ok()) return beside.status();
    ui_dir = std::move(beside).value();
  }
  Result<StaticFiles> ui = StaticFiles::Load(ui_dir, config_.ui_chartjs);
  if (!ui.ok()) return Status::Error("dashboard: " + ui.status().message());
  ui_ = std::move(ui).value();

  RegisterRoutes();
  if (clickatron::Status s = server_->Listen(); !s.ok()) return Status::Error(s.message());

  event_base* base = server_->base(0);
  waker_ = std::make_unique<net::LoopWaker>(base, [this] { OnSynced(); });
  net::ClientOptions client_options;
  // Queries keep one backend request per client connection in flight; a pool smaller than
  // the concurrency closes and reopens connections (measured: 1840 → 3690 /series per
  // second at 32 connections, docs/benchmarks.md "api: read path").
  client_options.max_idle_per_host = 256;
  // Every request to a realtime or archive server carries the cluster secret (net/secret.h).
  if (!config_.secret.empty()) client_options.headers.emplace_back(wire::kSecretHeader, config_.secret);
  client_ = std::make_unique<net::HttpClient>(base, client_options);
  QueryOptions query_options;
  query_options.max_backend_requests = config_.query_max_backend_requests;
  query_options.max_backend_bytes = size_t{config_.query_max_backend_mb} << 20;
  query_options.archive_cache_bytes = size_t{config_.query_cache_mb} << 20;
  query_options.archive_cache_confirm_ms = static_cast<int>(config_.archive_lease_ms);
  queries_ = std::make_unique<QueryService>(base, client_.get(), config_, query_options);
  return StartDelivery(base);
}

Status ApiServer::OpenOplog(oplog::SyncPolicy policy) {
  oplog::Options oplog_options = options_.oplog;
  oplog_options.sync = policy;
  oplog_options.on_sync = [this](const oplog::SyncReport& report) {
    {
      std::lock_guard<std::mutex> lock(reports_mu_);
      reports_.push_back(report);
    }
    if (waker_) waker_->Wake();
  };
  std::error_code ec;
  std::filesystem::create_directories(config_.oplog_dir, ec);
  if (ec) return Status::Error("oplog-dir " + config_.oplog_dir + ": " + ec.message());
  Result<std::unique_ptr<oplog::Oplog>> log = oplog::Oplog::Open(config_.oplog_dir, oplog_options);
  if (!log.ok()) return Status::Error("oplog " + config_.oplog_dir + ": " + log.status().message());
  log_ = std::move(log).value();
  const oplog::Recovery& rec = log_->recovery();
  std::fprintf(stderr, "clickatron-api: oplog %s: %llu segment(s), %llu record(s), last seq %llu\n",
               config_.oplog_dir.c_str(), (unsigned long long)rec.segments,
               (unsigned long long)rec.records, (unsigned long long)rec.last_seq);
  if (!rec.message.empty()) std::fprintf(stderr, "clickatron-api: oplog recovery: %s\n", rec.message.c_str());
  return Status::OK();
}

Status ApiServer::OpenLateStore() {
  // A new store's ids start above every id an earlier store at this address gave
  // (late_store.h), so the archive's mark for this address never hides them.
  Result<std::unique_ptr<LateStore>> late =
      LateStore::Open(config_.oplog_dir, uint64_t(std::max<int64_t>(WallClockSeconds(), 1)) << 20);
  if (!late.ok()) return Status::Error("late store: " + late.status().message());
  late_ = std::move(late).value();
  const LateStoreStats ls = late_->Stats();
  std::fprintf(stderr, "clickatron-api: late store %s: %llu pending entr%s, last id %llu\n", late_->path().c_str(),
               (unsigned long long)ls.entries, ls.entries == 1 ? "y" : "ies", (unsigned long long)ls.last_id);
  if (!late_->recovery().empty()) {
    std::fprintf(stderr, "clickatron-api: late store recovery: %s\n", late_->recovery().c_str());
  }
  return ReleaseCopiedLateEntries();
}

void ApiServer::RegisterRoutes() {
  server_->Handle("/incr", [this](net::Request& req) { OnIncr(req); });
  // The late data is internal (the nightly's, with the cluster secret: net/secret.h); /stats
  // and /metrics too when stats-secret is set.
  server_->Handle("/late", [this](net::Request& req) {
    if (net::AdmitSecret(req, config_.secret)) OnLate(req);
  });
  server_->Handle("/late/release", [this](net::Request& req) {
    if (net::AdmitSecret(req, config_.secret)) OnLateRelease(req);
  });
  const std::string_view stats_secret = config_.stats_secret ? std::string_view(config_.secret) : "";
  net::HandleStats(server_.get(), stats_secret, [this](net::StatsWriter& w) { WriteStats(w); });  // /stats, /metrics
  server_->Handle("/ping", [](net::Request& req) { req.Reply(200, "OK\n"); });
  server_->Handle("/", [this](net::Request& req) { ui_->Serve(req); });
  server_->Handle("/ui/", [this](net::Request& req) { ui_->Serve(req); }, {.prefix = true});
  QueryService::Register(server_.get(), &queries_);  // answered once queries_ is set below
  server_->OnStop([this] { OnStop(); });
}

Status ApiServer::StartDelivery(event_base* base) {
  // One sender id for the process (X-Clickatron-Sender): a restarted API is a new sender,
  // and the realtime shards tell its batches from another process's with the same source.
  if (options_.sender.sender_id.empty()) options_.sender.sender_id = RandomId64();
  std::fprintf(stderr, "clickatron-api: node-id %s, source %s (oplog identity %s), sender id %s\n",
               config_.node_id.c_str(), identity_.source.c_str(), identity_.id.c_str(),
               options_.sender.sender_id.c_str());
  options_.sender.on_source_conflict = [this](const std::string& why) { EnterSourceConflict(why); };
  options_.sender.own_from_seq = identity_.own_from_seq;
  const uint64_t last = log_->last_seq();
  append_times_.Add(last + 1, MonotonicMicros());  // older records: "since start"
  // While a source conflict stands nothing is delivered: the records this directory shares
  // with another are the other's to deliver (oplog/identity.h).
  for (size_t k = 0; k < config_.realtime.size() && identity_.conflict.empty(); k++) {
    senders_.push_back(std::make_unique<ShardDelivery>(base, client_.get(), log_.get(), &append_times_, late_.get(),
                                                       uint32_t(k), config_.realtime[k], identity_.source,
                                                       options_.sender));
    if (Status s = senders_.back()->Start(last); !s.ok()) return s;
  }
  return Status::OK();
}

Status ApiServer::OpenIdempotencyIndex(std::chrono::seconds oplog_retention) {
  idempotency_ = std::make_unique<IdempotencyIndex>(size_t{config_.idempotency_mb} << 20);
  if (oplog_retention.count() < idempotency_->window_seconds()) {
    // The index is rebuilt from the oplog: a record must outlive its key's window.
    return Status::Error("oplog retention is shorter than the idempotency window");
  }
  return RestoreIdempotency(log_.get(), idempotency_.get(), &restored_keys_);
}

Status ApiServer::LoadIdentity() {
  const std::string& dir = config_.oplog_dir;
  Result<oplog::Identity> loaded = oplog::LoadIdentity(dir);
  if (!loaded.ok()) return loaded.status();
  identity_ = *loaded;
  if (identity_.id.empty()) {
    // A directory with records or cursors is from before identities: it keeps sending as its
    // node-id, whose marks at the realtime shards deduplicate what it re-sends.
    const bool used = log_->last_seq() > 0 || !log_->GetStats().cursors.empty();
    Result<oplog::Identity> made = oplog::NewIdentity(dir, used ? config_.node_id : "", 1);
    if (!made.ok()) return made.status();
    identity_ = *made;
    if (Status s = oplog::SaveIdentity(dir, identity_); !s.ok()) return s;
    std::fprintf(stderr, "clickatron-api: oplog %s: new identity %s, source %s%s\n", dir.c_str(),
                 identity_.id.c_str(), identity_.source.c_str(),
                 used ? " (a directory from before identities keeps its node-id as source)" : "");
  } else if (identity_.conflict.empty()) {
    Result<oplog::Location> here = oplog::LocationOf(dir);
    if (!here.ok()) return here.status();
    if (std::string why = oplog::LocationConflict(dir, identity_, *here); !why.empty()) {
      identity_.conflict = why;
      if (Status s = oplog::SaveIdentity(dir, identity_); !s.ok()) return s;
    }
  }
  if (!identity_.conflict.empty()) {
    std::fprintf(stderr, "clickatron-api: SOURCE_CONFLICT: %s; refusing increments and delivering nothing until "
                 "it is resolved (clickatron-oplog fork or adopt, docs/operations.md#a-copied-oplog-directory)\n",
                 identity_.conflict.c_str());
  }
  return Status::OK();
}

Status ApiServer::ReleaseCopiedLateEntries() {
  if (!identity_.release_late) return Status::OK();
  // A forked directory's late entries came with the copy: they are the original's, which
  // hands them to the nightly itself (oplog/identity.h).
  const uint64_t last = late_->Stats().last_id;
  Result<LateRelease> r = late_->ReleaseThrough(last);
  if (!r.ok()) return Status::Error("late store: releasing the entries copied with the oplog: " + r.status().message());
  std::fprintf(stderr, "clickatron-api: late store: released %llu entr%s through id %llu, copied with the oplog "
               "directory before its fork (the original's to deliver)\n",
               (unsigned long long)r->released_entries, r->released_entries == 1 ? "y" : "ies",
               (unsigned long long)last);
  identity_.release_late = false;
  return oplog::SaveIdentity(config_.oplog_dir, identity_);
}

void ApiServer::EnterSourceConflict(const std::string& why) {
  if (!identity_.conflict.empty()) return;
  identity_.conflict = why;
  std::fprintf(stderr, "clickatron-api: SOURCE_CONFLICT: %s; refusing increments from now on "
               "(docs/operations.md#a-copied-oplog-directory)\n", why.c_str());
  // Kept, so that a restart does not acknowledge again before the conflict shows.
  if (Status s = oplog::SaveIdentity(config_.oplog_dir, identity_); !s.ok()) {
    std::fprintf(stderr, "clickatron-api: saving the conflict in the identity file: %s\n", s.message().c_str());
  }
}

ApiServer::~ApiServer() {
  // In dependency order: nothing may call into what is already gone. The client first
  // (it drops in-flight callbacks into senders and queries), the readers before the
  // oplog, the oplog (whose sync thread wakes the loop) before the waker, the server last.
  client_.reset();
  queries_.reset();
  senders_.clear();
  late_.reset();
  log_.reset();
  waker_.reset();
  pending_.clear();
  server_.reset();
}

uint16_t ApiServer::port() const { return server_->port(); }

void ApiServer::Run() {
  for (auto& s : senders_) s->Kick();  // a backlog from before the restart
  server_->Run();
}

void ApiServer::Reject(net::Request& req, int code, const std::string& status_txt,
                       const std::string& message) {
  rejected_events_++;
  rejected_[status_txt]++;
  ReplyError(req, code, status_txt, message);
}

bool ApiServer::EncodeRequest(net::Request& req, uint64_t* events) {
  const int64_t now = WallClockSeconds();
  const uint32_t shards = uint32_t(config_.realtime.size());
  IncrError error;
  payload_.clear();
  *events = 0;
  const std::string_view body = req.method() == net::Method::kPost ? req.body() : std::string_view();
  if (body.empty()) {
    if (!req.query().status().ok()) {
      error = QueryDecodeError(req.query().bad_param(), req.query().status().message());
      Reject(req, error.code, error.status_txt, error.message);
      return false;
    }
    if (!ParseIncrEvent(req.params(), now, &event_, &error)) {
      Reject(req, error.code, error.status_txt, error.message);
      return false;
    }
    AppendEventLines(event_, shards, &payload_, &scratch_);
    *events = 1;
    return true;
  }
  if (!req.raw_query().empty()) {
    Reject(req, 400, "INVALID_ARG_BODY",
           "a POST /incr with a body takes its events from the body, one per line; the query "
           "string must be empty");
    return false;
  }
  return EncodeBody(req, body, now, events);
}

// A POST body of events, one per line, validated whole before anything is appended: one
// bad line rejects the batch.
bool ApiServer::EncodeBody(net::Request& req, std::string_view body, int64_t now, uint64_t* events) {
  const uint32_t shards = uint32_t(config_.realtime.size());
  IncrError error;
  size_t line_no = 0;
  std::string_view rest = body;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    line_no++;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (line.empty()) {
      Reject(req, 400, "INVALID_ARG_BODY", where + "empty line (one event per line)");
      return false;
    }
    if (clickatron::Status s = line_query_.Parse(line); !s.ok()) {
      error = QueryDecodeError(line_query_.bad_param(), s.message());
      Reject(req, error.code, error.status_txt, where + error.message);
      return false;
    }
    if (!ParseIncrEvent(line_query_.params(), now, &event_, &error)) {
      Reject(req, error.code, error.status_txt, where + error.message);
      return false;
    }
    AppendEventLines(event_, shards, &payload_, &scratch_);
    if (payload_.size() > kMaxIncrPayload) {
      Reject(req, 413, "BATCH_TOO_LARGE",
             where + "the batch's records pass " + std::to_string(kMaxIncrPayload) +
                 " bytes; send fewer events per request");
      return false;
    }
    (*events)++;
  }
  return true;
}

void ApiServer::OnIncr(net::Request& req) {
  if (!net::RequireMethod(req, {net::Method::kGet, net::Method::kPost})) {
    rejected_events_++;
    rejected_[wire::kMethodNotAllowed]++;
    return;
  }
  if (!identity_.conflict.empty()) {
    // Nothing acknowledged here could be delivered (oplog/identity.h).
    Reject(req, 503, "SOURCE_CONFLICT",
           identity_.conflict + "; this API refuses increments until an operator resolves it "
           "(clickatron-oplog fork or adopt: docs/operations.md#a-copied-oplog-directory)");
    return;
  }
  if (const char* key = req.Header(wire::kIdempotencyKeyHeader)) {
    OnKeyedIncr(req, key);
    return;
  }
  uint64_t events = 0;
  if (!EncodeRequest(req, &events)) return;
  AppendRecord(req, events, nullptr);
}

void ApiServer::OnKeyedIncr(net::Request& req, const char* key_header) {
  Result<std::string_view> key = ParseIdempotencyKey(key_header);
  if (!key.ok()) {
    Reject(req, 400, "INVALID_IDEMPOTENCY_KEY", key.status().message());
    return;
  }
  if (HeaderCount(req, wire::kIdempotencyKeyHeader) > 1) {
    Reject(req, 400, "INVALID_IDEMPOTENCY_KEY", "Idempotency-Key is given twice; a request has one key");
    return;
  }
  const int64_t now = WallClockSeconds();
  idempotency_->Expire(now);
  const std::string_view body = req.method() == net::Method::kPost ? req.body() : std::string_view();
  const RequestDigest digest = DigestIncrRequest(body, req.raw_query());
  // Before validation: a retry is answered as its first was, even where the same request
  // would now be refused (a ts of yesterday, the day after).
  if (const IdempotencyIndex::Entry* entry = idempotency_->Find(*key)) {
    AnswerRetry(req, *entry, digest);
    return;
  }
  uint64_t events = 0;
  if (!EncodeRequest(req, &events)) return;
  if (!idempotency_->HasRoom(*key)) {
    Reject(req, 503, "IDEMPOTENCY_INDEX_FULL",
           "this API holds as many Idempotency-Keys as idempotency-mb (" + std::to_string(config_.idempotency_mb) +
               " MiB) allows until older ones pass the " + std::to_string(idempotency_->window_seconds()) +
               " s window; nothing was counted: retry later, or send without a key");
    return;
  }
  const IdempotencyStamp stamp{now, events, digest, *key};
  AppendIdempotencyLine(stamp, &payload_);
  AppendRecord(req, events, &stamp);
}

void ApiServer::AnswerRetry(net::Request& req, const IdempotencyIndex::Entry& entry, const RequestDigest& digest) {
  if (!(entry.digest == digest)) {
    Reject(req, 422, "IDEMPOTENCY_KEY_REUSED",
           "Idempotency-Key '" + Clipped(entry.key, 64) + "' was used " +
               std::to_string(std::max<int64_t>(0, WallClockSeconds() - entry.accepted_at)) +
               " s ago for a request with other events; a key names one request: send new events with a new key");
    return;
  }
  if (entry.state == IdempotencyIndex::State::kStored) {
    replayed_requests_++;
    ReplyReplayed(req, entry.events);
    return;
  }
  // In flight: every in-flight entry has its pending request (both settle together), found
  // by seq in the seq-ordered queue; the retry gets the same answer when it settles.
  auto it = std::lower_bound(pending_.begin(), pending_.end(), entry.seq,
                             [](const Pending& p, uint64_t seq) { return p.seq < seq; });
  if (it == pending_.end() || it->seq != entry.seq) {
    ReplyError(req, 500, wire::kInternalError, "an in-flight Idempotency-Key without its request");
    return;
  }
  waited_requests_++;
  it->retries.push_back(req.Defer());
}

void ApiServer::AppendRecord(net::Request& req, uint64_t events, const IdempotencyStamp* stamp) {
  Result<uint64_t> seq = log_->Append(payload_);
  if (!seq.ok()) {
    oplog_failed_requests_++;
    last_oplog_error_ = seq.status().message();
    Reject(req, 503, "OPLOG_UNAVAILABLE", seq.status().message());
    return;
  }
  append_times_.Add(*seq, MonotonicMicros());
  IdempotencyIndex::Entry* keyed = nullptr;
  if (stamp != nullptr) {
    keyed = idempotency_->Insert(IdempotencyIndex::Entry{stamp->key, stamp->digest, stamp->accepted_at,
                                                         events, *seq, IdempotencyIndex::State::kInFlight});
  }
  if (log_->policy() == oplog::SyncPolicy::kNone) {
    if (keyed != nullptr) idempotency_->Stored(keyed);
    accepted_events_ += events;
    accepted_requests_++;
    ReplyAccepted(req, events);
    return;
  }
  pending_.push_back(Pending{*seq, events, req.Defer(), keyed, {}});
}

void ApiServer::OnSynced() {
  {
    std::lock_guard<std::mutex> lock(reports_mu_);
    draining_.swap(reports_);
  }
  for (const oplog::SyncReport& report : draining_) SettlePending(report);
  draining_.clear();
  for (auto& s : senders_) s->Kick();
  uint64_t min_cursor = UINT64_MAX;
  for (auto& s : senders_) min_cursor = std::min(min_cursor, s->cursor());
  append_times_.TrimThrough(min_cursor);
}

void ApiServer::SettlePending(const oplog::SyncReport& report) {
  if (!report.error.empty()) last_oplog_error_ = report.error;
  const uint64_t settled = std::max(report.durable_seq, report.failed_last);
  while (!pending_.empty() && pending_.front().seq <= settled) {
    Pending& p = pending_.front();
    if (report.failed_last != 0 && p.seq >= report.failed_first && p.seq <= report.failed_last) {
      oplog_failed_requests_++;
      AnswerFailed(p, report.error);
    } else {
      AnswerStored(p);
    }
    pending_.pop_front();
  }
}

void ApiServer::AnswerStored(Pending& p) {
  accepted_events_ += p.events;
  accepted_requests_++;
  ReplyAccepted(*p.reply, p.events);
  if (p.keyed == nullptr) return;
  idempotency_->Stored(p.keyed);
  for (auto& retry : p.retries) ReplyReplayed(*retry, p.events);
}

void ApiServer::AnswerFailed(Pending& p, const std::string& why) {
  // Nothing was stored: the key is forgotten, and a retry after this one is a new request.
  rejected_events_ += 1 + p.retries.size();
  rejected_["OPLOG_UNAVAILABLE"] += 1 + p.retries.size();
  ReplyError(*p.reply, 503, "OPLOG_UNAVAILABLE", why);
  for (auto& retry : p.retries) ReplyError(*retry, 503, "OPLOG_UNAVAILABLE", why);
  if (p.keyed != nullptr) idempotency_->Forget(p.keyed);
}

void ApiServer::OnStop() {
  // Settle every request still waiting for the disk, so no client is left without its
  // answer (or given a 200 for a record that did not make it).
  Status s = log_->Sync();
  if (!s.ok()) std::fprintf(stderr, "clickatron-api: oplog sync at shutdown: %s\n", s.message().c_str());
  OnSynced();
  while (!pending_.empty()) {
    AnswerFailed(pending_.front(), "the API is shutting down");
    pending_.pop_front();
  }
  for (auto& sender : senders_) sender->Stop();
  if (Status c = log_->SaveCursors(); !c.ok()) {
    std::fprintf(stderr, "clickatron-api: saving delivery cursors: %s\n", c.message().c_str());
  }
}

void ApiServer::WriteStats(net::StatsWriter& w) {
  const oplog::Stats os = log_->GetStats();
  w.BeginObject();
  w.Gauge("uptime_seconds", double(MonotonicMicros() - start_us_) / 1e6, "clickatron_api_uptime_seconds",
          "Seconds since the API started.");
  w.Info("node_id", config_.node_id, "clickatron_api_node_info", "The API's node-id.");
  w.Field("source", identity_.source);
  w.Field("identity", identity_.id);
  w.Problem("source_conflict", identity_.conflict, "clickatron_api_source_conflict",
            "1 while increments are refused 503 SOURCE_CONFLICT (docs/operations.md#a-copied-oplog-directory).");
  WriteIncrStats(w);
  WriteOplogStats(w, os);
  uint64_t backlog = 0, late = 0, delivered = 0;
  w.BeginArray("realtime");
  for (const auto& s : senders_) {
    s->WriteStatsJson(&w, os.last_seq);
    backlog += os.last_seq > s->cursor() ? os.last_seq - s->cursor() : 0;
    late += s->late_records();
    delivered += s->delivered_records();
  }
  w.EndArray();
  // Sums of the shards' figures: JSON only (a sum of the per-shard series is PromQL's).
  w.Field("backlog_records", backlog);
  w.Field("delivered_records", delivered);
  w.Field("late_records", late);
  WriteLateStats(w);
  w.BeginObject("limits");  // docs/operations.md#limits
  server_->WriteLimitFields(&w);
  w.EndObject();
  w.Key("latency_us");
  server_->WriteLatencyJson(&w);
  if (queries_) {
    w.Key("queries");
    queries_->WriteStatsJson(&w);
  }
  w.EndObject();
}

void ApiServer::WriteIncrStats(net::StatsWriter& w) {
  w.BeginObject("incr");
  w.Counter("accepted_events", accepted_events_, "clickatron_api_incr_accepted_events_total",
            "Events /incr accepted (acknowledged 200).");
  w.Counter("accepted_requests", accepted_requests_, "clickatron_api_incr_accepted_requests_total",
            "/incr requests accepted.");
  w.Gauge("pending_requests", pending_.size(), "clickatron_api_incr_pending_requests",
          "/incr requests waiting for their oplog sync.");
  w.Counter("rejected_requests", rejected_events_, "clickatron_api_incr_rejected_requests_total",
            "/incr requests refused.");
  w.BeginObject("rejected");
  for (const auto& [reason, n] : rejected_) {
    auto label = w.Label("status_txt", reason);
    w.Counter(reason, n, "clickatron_api_incr_rejected_total", "/incr requests refused, by status_txt.");
  }
  w.EndObject();
  w.EndObject();
  const int64_t now = WallClockSeconds();
  idempotency_->Expire(now);
  w.BeginObject("idempotency");
  w.Field("clock", now);
  w.Gauge("window_seconds", idempotency_->window_seconds(), "clickatron_api_idempotency_window_seconds",
          "How long an Idempotency-Key is remembered.");
  w.Gauge("keys", idempotency_->size(), "clickatron_api_idempotency_keys", "Idempotency-Keys held.");
  w.Gauge("bytes", idempotency_->bytes(), "clickatron_api_idempotency_bytes", "Bytes charged for the keys held.");
  w.Gauge("max_bytes", idempotency_->max_bytes(), "clickatron_api_idempotency_max_bytes",
          "Bytes the keys may take (idempotency-mb; beyond: 503 IDEMPOTENCY_INDEX_FULL).");
  w.Counter("replayed_requests", replayed_requests_, "clickatron_api_idempotency_replayed_requests_total",
            "Retries answered as their first request.");
  w.Counter("waited_requests", waited_requests_, "clickatron_api_idempotency_waited_requests_total",
            "Retries that waited for an in-flight first request.");
  w.Counter("expired_keys", idempotency_->expired(), "clickatron_api_idempotency_expired_keys_total",
            "Keys dropped past the window.");
  w.Gauge("restored_keys", restored_keys_, "clickatron_api_idempotency_restored_keys",
          "Keys the start-up restore found in the oplog.");
  w.EndObject();
}

void ApiServer::WriteOplogStats(net::StatsWriter& w, const oplog::Stats& os) {
  w.BeginObject("oplog");
  w.Field("dir", log_->dir());
  w.Field("sync", oplog::SyncPolicyName(os.policy));
  w.Gauge("segments", os.segments, "clickatron_oplog_segments", "Oplog segment files.");
  w.Gauge("bytes", os.bytes, "clickatron_oplog_bytes", "Bytes of the oplog's segment files.");
  w.Gauge("first_seq", os.first_seq, "clickatron_oplog_first_seq", "Oldest record kept (0: empty).");
  w.Gauge("last_seq", os.last_seq, "clickatron_oplog_last_seq", "Last record appended.");
  w.Gauge("durable_seq", os.durable_seq, "clickatron_oplog_durable_seq", "Last record on the device.");
  w.Gauge("queued_bytes", os.queued_bytes, "clickatron_oplog_queued_bytes", "Bytes appended, not yet written.");
  w.Counter("appends", os.appends, "clickatron_oplog_appends_total", "Records appended.");
  w.Counter("syncs", os.syncs, "clickatron_oplog_syncs_total", "fdatasyncs of the oplog.");
  w.Counter("failed_records", os.failed_records, "clickatron_oplog_failed_records_total",
            "Records whose write or sync failed (their requests answered 503 OPLOG_UNAVAILABLE).");
  w.Problem("last_error", os.last_error, "clickatron_oplog_error", "1 once a write of the oplog has failed.");
  w.Counter("prepared_segments", os.prepared_segments, "clickatron_oplog_prepared_segments_total",
            "Segments written into prepared (zero-filled) files.");
  w.Problem("prepare_error", os.prepare_error, "clickatron_oplog_prepare_error",
            "1 while segments are not prepared ahead (the disk is nearly full).");
  w.BeginObject("sync_latency_us");
  w.Histogram(os.sync_latency, "clickatron_oplog_sync_duration_seconds", "Time of one fdatasync of the oplog.");
  w.Field("p50", os.sync_latency.Quantile(0.5));
  w.Field("p99", os.sync_latency.Quantile(0.99));
  w.Field("max", os.sync_latency.max_micros());
  w.EndObject();
  w.BeginObject("durable_latency_us");
  w.Histogram(os.durable_latency, "clickatron_oplog_durable_duration_seconds",
              "Time from a record's append to its sync, per record.");
  w.Field("p50", os.durable_latency.Quantile(0.5));
  w.Field("p99", os.durable_latency.Quantile(0.99));
  w.Field("max", os.durable_latency.max_micros());
  w.EndObject();
  w.EndObject();
}

void ApiServer::WriteLateStats(net::StatsWriter& w) {
  const LateStoreStats ls = late_->Stats();
  w.BeginObject("late");
  w.Gauge("entries", ls.entries, "clickatron_api_late_entries", "Late entries pending (not yet released).");
  w.Gauge("lines", ls.lines, "clickatron_api_late_lines", "Lines of the pending late entries.");
  w.Gauge("bytes", ls.bytes, "clickatron_api_late_bytes", "Bytes of the late store's file.");
  w.Key("oldest_pending_day");
  if (ls.oldest_pending_day < 0) {
    w.Null();
  } else {
    w.Day(FormatDay(ls.oldest_pending_day), "clickatron_api_late_oldest_pending_day_timestamp_seconds",
          "The oldest day a pending late entry holds, 00:00 UTC.");
  }
  w.Gauge("first_id", ls.first_id, "clickatron_api_late_first_id", "Id of the oldest pending late entry.");
  w.Gauge("last_id", ls.last_id, "clickatron_api_late_last_id", "The last late entry id given.");
  w.Gauge("released_through", ls.released_through, "clickatron_api_late_released_through",
          "The last id the nightly released.");
  w.Counter("appended", ls.appended, "clickatron_api_late_appended_total", "Late entries stored.");
  w.Counter("duplicate_parts", ls.duplicate_parts, "clickatron_api_late_duplicate_parts_total",
            "Re-sent late parts skipped.");
  w.Field("recovery", late_->recovery());
  w.EndObject();
}

bool ApiServer::ReadLateId(net::Request& req, std::string_view name, bool required, uint64_t* id) {
  std::string upper(name);
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (!req.query().status().ok()) {
    ReplyError(req, 400, req.query().bad_param() == name ? wire::kInvalidArgPrefix + upper : wire::kUnknownArg,
               req.query().status().message());
    return false;
  }
  std::optional<std::string_view> value;
  for (const net::QueryParam& p : req.params()) {
    if (p.name != name) {
      ReplyError(req, 400, wire::kUnknownArg,
                 "unknown parameter '" + std::string(p.name) + "' (" + std::string(req.path()) + " takes " +
                     std::string(name) + ")");
      return false;
    }
    if (value) {
      ReplyError(req, 400, wire::kInvalidArgPrefix + upper, std::string(name) + " given twice");
      return false;
    }
    value = p.value;
  }
  if (!value) {
    if (required) ReplyError(req, 400, wire::kMissingArgPrefix + upper, "missing argument: " + std::string(name));
    return !required;
  }
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), v);
  if (value->empty() || ec != std::errc() || end != value->data() + value->size()) {
    ReplyError(req, 400, wire::kInvalidArgPrefix + upper,
               std::string(name) + " '" + std::string(*value) + "' is not a late entry id (an integer >= 0)");
    return false;
  }
  const uint64_t last = late_->Stats().last_id;
  if (v > last) {
    ReplyError(req, 409, "LATE_ID_AHEAD",
               std::string(name) + "=" + std::to_string(v) + " is past the last late entry id this API gave (" +
                   std::to_string(last) + "): was its oplog directory replaced?");
    return false;
  }
  *id = v;
  return true;
}

bool ApiServer::RefuseWhileInConflict(net::Request& req) {
  if (identity_.conflict.empty()) return false;
  ReplyError(req, 503, "SOURCE_CONFLICT",
             identity_.conflict + "; the late entries here may be another API's (docs/operations.md#a-copied-oplog-directory)");
  return true;
}

void ApiServer::OnLate(net::Request& req) {
  if (!net::RequireMethod(req, {net::Method::kGet}) || RefuseWhileInConflict(req)) return;
  uint64_t after = 0;
  if (!ReadLateId(req, "after", /*required=*/false, &after)) return;
  LateAnswer answer;
  if (Status s = BuildLateAnswer(*late_, after, kLateAnswerBytes, &answer); !s.ok()) {
    std::fprintf(stderr, "clickatron-api: GET /late?after=%llu: %s\n", (unsigned long long)after, s.message().c_str());
    ReplyError(req, 500, "LATE_STORE_ERROR", s.message());
    return;
  }
  req.AddHeader(wire::kLateFirstHeader, std::to_string(answer.first).c_str());
  req.AddHeader(wire::kLateLastHeader, std::to_string(answer.last).c_str());
  if (answer.more) req.AddHeader(wire::kLateMoreHeader, "1");
  req.Reply(200, answer.body);
}

void ApiServer::OnLateRelease(net::Request& req) {
  if (!net::RequireMethod(req, {net::Method::kPost}) || RefuseWhileInConflict(req)) return;
  uint64_t through = 0;
  if (!ReadLateId(req, "through", /*required=*/true, &through)) return;
  Result<LateRelease> r = late_->ReleaseThrough(through);
  if (!r.ok()) {
    std::fprintf(stderr, "clickatron-api: POST /late/release?through=%llu: %s\n", (unsigned long long)through,
                 r.status().message().c_str());
    ReplyError(req, 500, "LATE_STORE_ERROR", r.status().message());
    return;
  }
  if (r->released_entries > 0) {
    std::fprintf(stderr, "clickatron-api: late store: released %llu entr%s through id %llu (%llu pending)\n",
                 (unsigned long long)r->released_entries, r->released_entries == 1 ? "y" : "ies",
                 (unsigned long long)through, (unsigned long long)r->entries);
  }
  std::string out;
  net::JsonWriter w(&out);
  w.BeginObject();
  w.Field("released_through", through);
  w.Field("released_entries", r->released_entries);
  w.Field("entries", r->entries);
  w.Field("last_id", late_->Stats().last_id);
  w.EndObject();
  req.ReplyJson(200, "OK", out);
}

}  // namespace clickatron
