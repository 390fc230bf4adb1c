#include "api/query_service.h"

#include <memory>
#include <utility>

#include "api/query_breakdown.h"
#include "api/query_fetch.h"
#include "api/query_leaderboard.h"
#include "api/query_listing.h"
#include "api/query_namespaces.h"
#include "api/query_params.h"
#include "api/query_plan.h"
#include "api/query_range.h"
#include "api/query_series.h"
#include "api/rollup_plan.h"
#include "base/clip.h"
#include "base/latency.h"
#include "base/wall_clock.h"
#include "keyformat/records.h"
#include "keyformat/shard.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"
#include "net/http_server.h"
#include "net/json.h"
#include "net/stats_writer.h"
#include "net/request.h"
#include "wire/refusals.h"

namespace clickatron {

namespace {

// A realtime /mget is worth it for up to 4 days of hours (the ring holds 3, plus tomorrow);
// beyond that one /fwmatch of the key returns at most the ring's few dozen records.
constexpr size_t kMaxRealtimeMgetHours = 96;
// A breakdown whose archive generation changes under it (a publish in progress) starts over.
constexpr int kMaxAttempts = 3;

int64_t Now() { return WallClockSeconds(); }

void ReplyError(QueryState* s, net::Responder* reply, const QueryError& e) { ReplyQueryError(s, reply, e); }

QueryError Unavailable(const std::string& status_txt, const std::string& message) {
  return QueryError{503, status_txt, message};
}

// A sum the answer needs leaves 128 bits: a named error, never a clamped number
// (docs/api.md#conventions; unreachable while increments stay within int64).
QueryError SumOverflow(const std::string& what) {
  return QueryError{500, wire::kSumOverflow, "the sum of " + what + " leaves 128 bits"};
}

// A failed backend call: its code names the tier (ResolveLookups).
QueryError BackendDown(const Status& st) {
  return Unavailable(st.code() == StatusCode::kRealtimeUnavailable ? wire::kRealtimeUnavailable
                                                                  : wire::kArchiveUnavailable,
                     st.message());
}

QueryError BadBackend(const std::string& message) {
  return Unavailable(wire::kBackendError, message);
}

QueryError TooLarge(const std::string& what, size_t bound) {
  return QueryError{400, wire::kQueryTooLarge,
                    "the query needs more than " + std::to_string(bound) + " " + what +
                        " from the backends; ask for a shorter range or a smaller limit"};
}

// The shards of a key (docs/formats.md#sharding): one archive shard (if any) and one realtime shard.
struct KeyShards {
  std::string shard_key;  // {ns}|{stored key}
  bool has_archive = false;
  size_t archive = 0;
  size_t realtime = 0;
};

KeyShards ShardsOf(const QueryState* s, const QueryParams& q) {
  KeyShards k;
  AppendArchiveTotalKey(&k.shard_key, q.ns, q.stored_key);
  k.has_archive = !s->config.archive.empty();
  if (k.has_archive) k.archive = ShardOf(k.shard_key, static_cast<uint32_t>(s->config.archive.size()));
  k.realtime = ShardOf(k.shard_key, static_cast<uint32_t>(s->config.realtime.size()));
  return k;
}

// Buckets for q once the first hour with data is known (units=-1) or straight away.
bool BucketsFor(const QueryParams& q, int64_t first_hour, std::vector<Bucket>* out, QueryError* e) {
  Result<std::vector<Bucket>> b =
      q.units == kUnitsBackToFirst
          ? MakeBuckets(q.unit, q.tz, q.reference_ts,
                        first_hour == INT64_MAX ? 1 : kMaxBuckets + 1, first_hour)
          : MakeBuckets(q.unit, q.tz, q.reference_ts, q.units);
  if (!b.ok()) {
    *e = InvalidArg("timezone", b.status().message());
    return false;
  }
  if (static_cast<int64_t>(b->size()) > kMaxBuckets) {
    *e = InvalidArg("units", "units=-1 reaches back more than 10000 " + std::string(UnitName(q.unit)) +
                                 " buckets to the first hour with data; give units or a larger unit");
    return false;
  }
  *out = std::move(b).value();
  CutToRange(q, out);  // the range form: the oldest bucket begins at start's hour
  return true;
}

// ---------------------------------------------------------------------------------------
// The read pipeline of /series and /breakdown (docs/api-read.md#which-tier-answers-which-hour):
//   1. both tiers at once: the archive total record `{ns}|{key}` (a series' hours, a
//      breakdown's index of subtotal records) and the realtime lines of the query's keys;
//   2. once both answered: with units=-1, the first hour with data decides the buckets;
//   3. Finish(): a series sums and replies; a breakdown fetches the indexed subtotals,
//      ranks and looks up hashed subkeys.
// Any failure replies its error and ends the run; the run lives as long as a callback
// holds it.
class ReadRun : public std::enable_shared_from_this<ReadRun> {
 public:
  virtual ~ReadRun() = default;

  void Start() {
    if (q_.units != kUnitsBackToFirst) {
      QueryError e;
      if (!BucketsFor(q_, 0, &buckets_, &e)) return Fail(e);
    }
    auto self = shared_from_this();
    // W guessed from the last archive answer of this shard (docs/api-read.md#the-plan-of-a-query).
    int64_t guess = shards_.has_archive ? s_->last_watermark[shards_.archive] : kNoArchiveDays;
    const bool range_known = !buckets_.empty() && guess != kWatermarkUnknown;
    const HourRange range = range_known ? RangeOfBuckets(buckets_) : HourRange{};
    // A range wholly after W needs no archive hour: while the shard's generation (and so W)
    // was confirmed a moment ago, the archive is not asked at all.
    if (shards_.has_archive && range_known && DayOfHour(range.start) > guess &&
        s_->archive_cache.FreshGeneration(shards_.archive, static_cast<int64_t>(MonotonicMicros())) != nullptr) {
      ++s_->archive_skipped;
      watermark_ = guess;
    } else if (shards_.has_archive) {
      ++pending_;
      Spend(1);
      FetchArchive(s_, shards_.archive, GetPath(shards_.shard_key), -1,
                   [self](BackendAnswer&& a) { self->OnArchive(std::move(a)); });
    }
    // A total's realtime keys end in their hour: the hours past the guessed W are asked for by
    // name at once; a range with none (wholly at or before W, or past tomorrow) asks
    // realtime nothing. If the archive answer's W is older, OnBothTiers asks again.
    HourRange hours;
    if (range_known && RealtimeHours(range, guess, DayOfHour(Now()) + 1, kMaxRealtimeMgetHours, &hours) &&
        (hours.empty() || q_.kind == QueryKind::kSeries)) {
      realtime_from_ = guess;
      if (hours.empty()) {
        ++s_->realtime_skipped;
      } else {
        AskRealtimeHours(hours);
      }
    } else if (range_known && q_.kind == QueryKind::kBreakdown) {
      // A breakdown needs each subkey's sum over realtime's hours, not the hours: realtime
      // adds them up (/fwsum), one line a subkey instead of one a subkey and hour.
      AskRealtimeSums(guess);
    } else {
      realtime_from_ = kNoArchiveDays;  // the /fwmatch covers every realtime day
      AskRealtime(FwmatchPath(realtime_prefix_));
    }
    if (pending_ == 0) OnBothTiers();  // nothing asked: a tier skipped, or the bound reached
  }

 protected:
  ReadRun(QueryState* s, std::unique_ptr<net::AsyncReply> reply, QueryParams q)
      : s_(s), reply_(std::move(reply)), q_(std::move(q)), shards_(ShardsOf(s, q_)) {
    // A series reads the total `{ns}|{key}.{ymdh}`, a breakdown the subtotals
    // `{sub}.{ns}|{key}.{subkey}.{ymdh}`.
    if (q_.kind == QueryKind::kBreakdown) realtime_prefix_ = q_.sub + ".";
    realtime_prefix_ += shards_.shard_key + ".";
  }

  // Step 3: buckets_ are known, archive_ holds the total record (status 0 without an
  // archive, 404 without the record) and realtime_ the realtime bodies, split at watermark_.
  virtual void Finish() = 0;

  void Fail(const QueryError& e) { ReplyError(s_, reply_.get(), e); }

  // Counts backend requests and answer bytes against the query's bound; past it, the run's
  // error becomes QUERY_TOO_LARGE (the first error wins) and false says: ask no more.
  bool Spend(size_t requests, size_t bytes = 0) {
    backend_requests_ += requests;
    backend_bytes_ += bytes;
    if (backend_requests_ > s_->options.max_backend_requests) {
      if (error_.status_txt.empty()) error_ = TooLarge("requests", s_->options.max_backend_requests);
      return false;
    }
    if (backend_bytes_ > s_->options.max_backend_bytes) {
      if (error_.status_txt.empty()) error_ = TooLarge("bytes", s_->options.max_backend_bytes);
      return false;
    }
    return true;
  }

  QueryState* s_;
  std::unique_ptr<net::AsyncReply> reply_;
  QueryParams q_;
  KeyShards shards_;
  std::string realtime_prefix_;
  std::vector<Bucket> buckets_;  // empty until known (units=-1)
  int64_t watermark_ = kNoArchiveDays;
  BackendAnswer archive_;
  std::vector<SharedBody> realtime_;
  bool realtime_summed_ = false;  // realtime_ holds /fwsum answers (of realtime_span_)
  int pending_ = 0;   // backend calls in flight
  QueryError error_;  // the first failure among them
  size_t backend_requests_ = 0, backend_bytes_ = 0;  // the fan-out so far (Spend)

 private:
  // The sums of realtime's hours of the range past watermark w (RealtimeSpan). REQUIRES: the
  // buckets are known.
  void AskRealtimeSums(int64_t w) {
    realtime_span_ = RealtimeSpan(RangeOfBuckets(buckets_), w, DayOfHour(Now()) + 1);
    realtime_from_ = w;
    realtime_summed_ = true;
    if (realtime_span_.empty()) {
      ++s_->realtime_skipped;
      return;
    }
    ++s_->realtime_sums;
    AskRealtime(FwsumPath(realtime_prefix_, realtime_span_));
  }

  void AskRealtime(std::string path) {
    if (!Spend(1)) return;
    ++pending_;
    auto self = shared_from_this();
    FetchRealtime(s_, shards_.realtime, std::move(path),
                  [self](BackendAnswer&& a) { self->OnRealtime(std::move(a)); });
  }

  // The realtime keys of span's hours, in the batch of this turn of the loop (query_fetch.h).
  void AskRealtimeHours(HourRange span) {
    if (!Spend(1)) return;
    ++pending_;
    auto self = shared_from_this();
    FetchRealtimeHours(s_, shards_.realtime, realtime_prefix_, span,
                       [self](BackendAnswer&& a) { self->OnRealtime(std::move(a)); });
  }

  void OnArchive(BackendAnswer&& a) {
    if (!a.ok) {
      error_ = Unavailable(wire::kArchiveUnavailable, a.error);
    } else if (Spend(0, a.body.size())) {
      watermark_ = a.watermark;
      s_->last_watermark[shards_.archive] = a.watermark;
      archive_ = std::move(a);
    }
    if (--pending_ == 0) OnBothTiers();
  }

  void OnRealtime(BackendAnswer&& a) {
    if (!a.ok) {
      if (error_.status_txt.empty()) error_ = Unavailable(wire::kRealtimeUnavailable, a.error);
    } else if (Spend(0, a.body.size())) {
      // A listing (or a summing) the shard's limit cut: read it to its end, page by page.
      if (a.more && realtime_summed_) {
        ++s_->realtime_sums;
        AskRealtime(FwsumPagePath(realtime_prefix_, realtime_span_, a.after));
      } else if (a.more) {
        AskRealtime(FwmatchPagePath(realtime_prefix_, LastListedKey(a.body)));
      }
      realtime_.push_back(std::move(a.body));
    }
    if (--pending_ == 0) OnBothTiers();
  }

  void OnBothTiers() {
    if (!error_.status_txt.empty()) return Fail(error_);
    if (realtime_summed_ && watermark_ != realtime_from_) {
      // Realtime summed from a W the archive answer did not confirm: older, the days in
      // between are realtime's too; newer (a publish), those days are the archive's now.
      realtime_.clear();
      AskRealtimeSums(watermark_);
      if (pending_ == 0) return error_.status_txt.empty() ? OnBothTiers() : Fail(error_);
      return;
    }
    if (watermark_ < realtime_from_) {
      // The archive answer is older than guessed (a replica behind during a publish): the
      // days in between are realtime's too. One /fwmatch covers them all.
      realtime_.clear();
      realtime_from_ = kNoArchiveDays;
      AskRealtime(FwmatchPath(realtime_prefix_));
      if (pending_ == 0) return Fail(error_);
      return;
    }
    if (buckets_.empty()) {  // units=-1: the buckets reach back to the first hour with data
      int64_t first = INT64_MAX;
      if (archive_.status == 200) {
        Result<int64_t> h = FirstArchiveHour(archive_.body);
        if (!h.ok()) return Fail(BadBackend(h.status().message()));
        first = h.value();
      }
      for (const SharedBody& body : realtime_) {
        Result<int64_t> h = FirstRealtimeHour(body, realtime_prefix_, watermark_);
        if (!h.ok()) return Fail(BadBackend(h.status().message()));
        first = std::min(first, h.value());
      }
      QueryError e;
      if (!BucketsFor(q_, first, &buckets_, &e)) return Fail(e);
    }
    Finish();
  }

  int64_t realtime_from_ = kNoArchiveDays;  // realtime answers cover the days after this
  HourRange realtime_span_;
};

// /series: the hours of both tiers rolled up into the buckets.
class SeriesRun final : public ReadRun {
 public:
  SeriesRun(QueryState* s, std::unique_ptr<net::AsyncReply> reply, QueryParams q)
      : ReadRun(s, std::move(reply), std::move(q)) {}

 private:
  void Finish() override {
    SeriesSum sum(buckets_, watermark_);
    if (archive_.status == 200) {
      if (Status st = sum.AddArchiveTotal(archive_.body); !st.ok()) return Fail(BadBackend(st.message()));
    }
    for (const SharedBody& body : realtime_) {
      if (Status st = sum.AddRealtime(body, realtime_prefix_); !st.ok()) return Fail(BadBackend(st.message()));
    }
    Int128 total = 0;
    if (!sum.overflow().empty()) return Fail(SumOverflow("the bucket at " + sum.overflow()));
    if (q_.rollup && !sum.Total(&total)) return Fail(SumOverflow("the total"));
    reply_->ReplyJson(200, "OK", SeriesJson(q_, buckets_, sum.values(), total));
  }
};

// /breakdown: the archive subtotal records of the hours the index holds in range (same
// replica, same watermark), summed with the realtime subtotals; then lookups of hashed
// subkeys that can make the top.
class BreakdownRun final : public ReadRun {
 public:
  BreakdownRun(QueryState* s, std::unique_ptr<net::AsyncReply> reply, QueryParams q, int attempt)
      : ReadRun(s, std::move(reply), std::move(q)), attempt_(attempt) {}

 private:
  std::shared_ptr<BreakdownRun> SharedThis() {
    return std::static_pointer_cast<BreakdownRun>(shared_from_this());
  }

  void Finish() override {
    range_ = RangeOfBuckets(buckets_);
    std::vector<std::string> keys;
    if (archive_.status == 200) {
      // Month and day rollups only when the generation says its files carry them
      // (docs/api-read.md#rollups); else the index's hours, as always.
      Status st = PlanSubtotalRecords(archive_.body, range_, watermark_, archive_.rollups, &plan_);
      if (!st.ok()) return Fail(BadBackend(st.message()));
      keys = PlannedKeys(plan_, realtime_prefix_);
    }
    AskSubtotals(keys, false);
  }

  void AskSubtotals(const std::vector<std::string>& keys, bool fallback) {
    fallback_round_ = fallback;
    std::vector<std::string> paths = MgetPaths(keys, s_->options.max_backend_url_bytes);
    if (paths.empty()) return AfterSubtotals();
    if (!Spend(paths.size())) return Fail(error_);
    auto self = SharedThis();
    pending_ = static_cast<int>(paths.size());
    for (std::string& path : paths) {
      // The replica and generation that gave the index: the same file (unless it fails).
      FetchArchive(s_, shards_.archive, std::move(path), static_cast<int>(archive_.replica),
                   [self](BackendAnswer&& a) { self->OnSubtotals(std::move(a)); }, archive_.generation);
    }
  }

  void OnSubtotals(BackendAnswer&& a) {
    if (!a.ok) {
      if (error_.status_txt.empty()) error_ = Unavailable(wire::kArchiveUnavailable, a.error);
    } else if (a.watermark != watermark_ || a.generation != archive_.generation) {
      generation_changed_ = true;
    } else if (Spend(0, a.body.size())) {
      subtotals_.push_back(std::move(a.body));
    }
    if (--pending_ == 0) AfterSubtotals();
  }

  // After the planned records: the hours of every rollup record the archive lacked, once.
  void AfterSubtotals() {
    if (!error_.status_txt.empty()) return Fail(error_);
    if (generation_changed_) return Retry();
    if (fallback_round_) return Sum();
    if (archive_.rollups) {
      for (const SharedBody& body : subtotals_) CollectTokens(body, realtime_prefix_, plan_, &found_);
    }
    for (const PlannedRecord& r : plan_) {
      if (!r.rollup()) {
        ++s_->hour_records;
      } else if (found_.count(r.token)) {
        ++(r.token.size() == kMonthTokenSize ? s_->month_records : s_->day_records);
      }
    }
    std::vector<std::string> fallback = FallbackKeys(plan_, found_, realtime_prefix_);
    if (fallback.empty()) return Sum();
    ++s_->rollup_fallbacks;
    s_->hour_records += fallback.size();
    AskSubtotals(fallback, true);
  }

  void Retry() {
    // A failover landed on a replica serving another generation, or a publish replaced the
    // cached one: the index and the records no longer match. Start over; a publish settles
    // within moments.
    ++s_->watermark_retries;
    if (attempt_ + 1 >= kMaxAttempts) {
      return Fail(Unavailable(wire::kArchiveUnavailable,
                              "archive shard " + std::to_string(shards_.archive) +
                                  " replicas kept serving different generations"));
    }
    auto again = std::make_shared<BreakdownRun>(s_, std::move(reply_), std::move(q_), attempt_ + 1);
    again->Start();
  }

  void Sum() {
    BreakdownSum sum(range_, watermark_, archive_.rollups ? &found_ : nullptr);
    for (const SharedBody& body : subtotals_) {
      if (Status st = sum.AddArchive(body, realtime_prefix_); !st.ok()) return Fail(BadBackend(st.message()));
    }
    for (const SharedBody& body : realtime_) {
      Status st = realtime_summed_ ? sum.AddRealtimeSums(body) : sum.AddRealtime(body, realtime_prefix_);
      if (!st.ok()) return Fail(BadBackend(st.message()));
    }
    if (!sum.overflow().empty()) return Fail(SumOverflow("subkey '" + Clipped(sum.overflow(), 64) + "'"));
    candidates_ = sum.Candidates(q_.limit);
    // The sums hold views into the bodies, which stay in this run until it replies.
    std::vector<std::string> unknown;
    for (const SubkeyCount& c : candidates_) {
      if (!IsKeyHash(c.stored)) continue;
      if (const std::string* original = s_->lookups.Get(c.stored)) {
        shown_.emplace(std::string(c.stored), *original);
      } else {
        unknown.emplace_back(c.stored);
      }
    }
    if (unknown.empty()) return Reply();
    auto self = SharedThis();
    ResolveLookups(s_, std::move(unknown),
                   [self](Status st, std::unordered_map<std::string, std::string>&& found) {
                     if (!st.ok()) return self->Fail(BackendDown(st));
                     for (auto& [hash, original] : found) self->shown_.emplace(hash, std::move(original));
                     self->Reply();
                   });
  }

  void Reply() {
    std::vector<BreakdownEntry> entries =
        RankBreakdown(candidates_, q_.limit, [this](std::string_view stored) {
          auto it = shown_.find(std::string(stored));
          return it == shown_.end() ? std::string(stored) : it->second;
        });
    reply_->ReplyJson(200, "OK", BreakdownJson(q_, entries));
  }

  int attempt_;
  HourRange range_;
  std::vector<PlannedRecord> plan_;
  bool fallback_round_ = false;
  std::vector<SharedBody> subtotals_;
  // The time tokens of the records of the first round (CollectTokens): the rollups among
  // them are the ones summed. Views into subtotals_' bodies.
  std::unordered_set<std::string_view> found_;
  bool generation_changed_ = false;
  std::vector<SubkeyCount> candidates_;
  std::unordered_map<std::string, std::string> shown_;
};

bool Admit(QueryState* s, net::Request& r) { return AdmitQuery(s, r); }

}  // namespace

void ReplyQueryError(QueryState* s, net::Responder* reply, const QueryError& e) {
  (e.code == 503 ? s->errors_503 : s->errors_4xx)++;
  reply->ReplyJsonError(e.code, e.status_txt, e.message);
}

// Common checks before a query runs: loop, method, percent-encoding.
bool AdmitQuery(QueryState* s, net::Request& r) {
  if (r.base() != s->base) {
    ReplyError(s, &r, QueryError{500, wire::kInternalError,
                                 "the read path serves only on the loop of its HTTP client"});
    return false;
  }
  if (!net::RequireMethod(r, {net::Method::kGet, net::Method::kHead})) {
    s->errors_4xx++;
    return false;
  }
  if (!r.query().status().ok()) {
    ReplyError(s, &r, InvalidArg(r.query().bad_param(), r.query().status().message()));
    return false;
  }
  return true;
}

namespace {

void HandleQuery(QueryState* s, QueryKind kind, net::Request& r) {
  if (!Admit(s, r)) return;
  (kind == QueryKind::kSeries ? s->series : s->breakdowns)++;
  QueryParams q;
  QueryError e;
  if (!ParseQueryParams(kind, r.params(), Now(), &q, &e)) return ReplyError(s, &r, e);
  if (kind == QueryKind::kSeries) {
    std::make_shared<SeriesRun>(s, r.Defer(), std::move(q))->Start();
  } else {
    std::make_shared<BreakdownRun>(s, r.Defer(), std::move(q), 0)->Start();
  }
}

void HandleLookup(QueryState* s, net::Request& r) {
  if (!Admit(s, r)) return;
  ++s->lookup_requests;
  if (QueryError e; !CheckParamNames(r.params(), "/lookup", {"hash"}, &e)) return ReplyError(s, &r, e);
  std::optional<std::string_view> hash = r.Param("hash");
  if (!hash.has_value() || hash->empty()) return ReplyError(s, &r, MissingArg("hash"));
  if (!IsKeyHash(*hash)) {
    return ReplyError(s, &r, InvalidArg("hash", "hash '" + std::string(hash->substr(0, 64)) +
                                                    "' is not a 12-character lookup hash"));
  }
  auto write = [](std::string_view h, std::string_view original) {
    std::string data;
    net::JsonWriter w(&data);
    w.BeginObject();
    w.Key("hash");
    w.String(h);
    w.Key("value");
    w.String(original);
    w.EndObject();
    return data;
  };
  if (const std::string* original = s->lookups.Get(*hash)) {
    return r.ReplyJson(200, "OK", write(*hash, *original));
  }
  std::shared_ptr<net::AsyncReply> reply = r.Defer();
  std::string h(*hash);
  ResolveLookups(s, {h}, [s, reply, h, write](Status st, std::unordered_map<std::string, std::string>&& found) {
    if (!st.ok()) {
      return ReplyError(s, reply.get(), BackendDown(st));
    }
    auto it = found.find(h);
    if (it == found.end()) {
      return ReplyError(s, reply.get(), QueryError{404, wire::kNotFound, "no lookup record for hash '" + h + "'"});
    }
    reply->ReplyJson(200, "OK", write(h, it->second));
  });
}

}  // namespace

QueryService::QueryService(event_base* base, net::HttpClient* client, const ClusterConfig& config,
                           QueryOptions options)
    : state_(std::make_unique<State>(base, client, config, options)) {
  // The first IANA lookup would otherwise read the tz database inside a request, and the
  // first /timezones walk every zone's transitions there.
  (void)TimeZone::Preload();
  (void)UsableZoneNames();
}

QueryService::~QueryService() = default;

void QueryService::Register(net::Server* server, const std::unique_ptr<QueryService>* service) {
  auto route = [service](void (*handle)(State*, net::Request&)) {
    return [service, handle](net::Request& r) {
      if (*service == nullptr) {
        r.AddHeader("Content-Type", "application/json");
        return r.Reply(503, R"({"status_code":503,"status_txt":"STARTING","data":null})");
      }
      handle((*service)->state_.get(), r);
    };
  };
  server->Handle("/series", route([](State* s, net::Request& r) { HandleQuery(s, QueryKind::kSeries, r); }));
  server->Handle("/breakdown",
                 route([](State* s, net::Request& r) { HandleQuery(s, QueryKind::kBreakdown, r); }));
  server->Handle("/lookup", route(&HandleLookup));
  server->Handle("/keys", route(&HandleKeys));
  server->Handle("/subtotals", route(&HandleSubtotals));
  server->Handle("/cluster", route(&HandleCluster));
  server->Handle("/namespaces", route(&HandleNamespaces));
  server->Handle("/leaderboard", route(&HandleLeaderboard));
  server->Handle("/timezones", route(&HandleTimezones));
}

namespace {

// queries.lookup_cache, archive_failovers, watermark_retries, archive_cache.
void WriteCacheStats(const QueryService::State* s, net::StatsWriter* w) {
  w->BeginObject("lookup_cache");
  w->Gauge("entries", s->lookups.size(), "clickatron_api_lookup_cache_entries", "Entries of the lookup cache.");
  w->Counter("hits", s->lookups.hits(), "clickatron_api_lookup_cache_hits_total", "Lookup cache hits.");
  w->Counter("misses", s->lookups.misses(), "clickatron_api_lookup_cache_misses_total", "Lookup cache misses.");
  w->Gauge("bytes", s->lookups.bytes(), "clickatron_api_lookup_cache_bytes", "Bytes of the lookup cache.");
  w->Counter("evictions", s->lookups.evictions(), "clickatron_api_lookup_cache_evictions_total",
             "Lookup cache evictions.");
  w->EndObject();
  w->Counter("archive_failovers", s->archive_failovers, "clickatron_api_archive_failovers_total",
             "Archive requests that failed over to another replica.");
  w->Counter("watermark_retries", s->watermark_retries, "clickatron_api_watermark_retries_total",
             "Queries that asked realtime again because the watermark moved.");
  const ArchiveCache& c = s->archive_cache;
  w->BeginObject("archive_cache");
  w->Gauge("entries", c.entries(), "clickatron_api_archive_cache_entries", "Entries of the archive answer cache.");
  w->Gauge("bytes", c.bytes(), "clickatron_api_archive_cache_bytes", "Bytes of the archive answer cache.");
  w->Gauge("max_bytes", c.max_bytes(), "clickatron_api_archive_cache_max_bytes",
           "Bytes the archive answer cache may hold (query-cache-mb).");
  w->Counter("hits", c.hits(), "clickatron_api_archive_cache_hits_total", "Archive answer cache hits.");
  w->Counter("misses", c.misses(), "clickatron_api_archive_cache_misses_total", "Archive answer cache misses.");
  w->Counter("evictions", c.evictions(), "clickatron_api_archive_cache_evictions_total",
             "Archive answer cache evictions.");
  w->Counter("dropped", c.dropped(), "clickatron_api_archive_cache_dropped_total",
             "Entries dropped because their generation was replaced.");
  w->Counter("generation_changes", c.generation_changes(), "clickatron_api_archive_cache_generation_changes_total",
             "Times a shard's generation changed.");
  w->EndObject();
}

}  // namespace

void QueryService::WriteStatsJson(net::StatsWriter* w) const {
  const State* s = state_.get();
  // Requests per endpoint: clickatron_api_queries_total{endpoint="series"}.
  auto requests = [w](const char* endpoint, uint64_t n) {
    auto label = w->Label("endpoint", endpoint);
    w->Counter(endpoint, n, "clickatron_api_queries_total", "Read requests, per endpoint.");
  };
  // The plan's counters: clickatron_api_plan_<name>_total (docs/api-read.md#stats).
  auto plan = [w](const char* name, uint64_t n) {
    w->Counter(name, n, "clickatron_api_plan_" + std::string(name) + "_total",
               "The /stats queries.plan counter " + std::string(name) + " (docs/api-read.md#stats).");
  };
  w->BeginObject();
  requests("series", s->series);
  requests("breakdown", s->breakdowns);
  requests("lookup", s->lookup_requests);
  requests("keys", s->keys_requests);
  requests("subtotals", s->subtotals_requests);
  requests("cluster", s->cluster_requests);
  requests("namespaces", s->namespaces_requests);
  requests("leaderboard", s->leaderboard_requests);
  requests("timezones", s->timezones_requests);
  w->Counter("errors_4xx", s->errors_4xx, "clickatron_api_query_errors_4xx_total", "Read requests answered 4xx.");
  w->Counter("errors_503", s->errors_503, "clickatron_api_query_errors_503_total",
             "Read requests answered 503 (an archive shard with no live replica, a realtime shard down).");
  WriteCacheStats(s, w);
  w->BeginObject("plan");
  plan("archive_requests", s->archive_requests);
  plan("archive_cache_answers", s->archive_cache_answers);
  plan("archive_revalidated", s->archive_revalidated);
  plan("realtime_requests", s->realtime_requests);
  plan("realtime_hour_asks", s->realtime_hour_asks);
  plan("realtime_batched_asks", s->realtime_batched_asks);
  plan("realtime_batches_split", s->realtime_batches_split);
  plan("archive_skipped", s->archive_skipped);
  plan("realtime_skipped", s->realtime_skipped);
  plan("realtime_sums", s->realtime_sums);
  plan("month_records", s->month_records);
  plan("day_records", s->day_records);
  plan("hour_records", s->hour_records);
  plan("rollup_fallbacks", s->rollup_fallbacks);
  plan("leaderboard_cache_hits", s->leaderboard_cache_hits);
  plan("leaderboard_cache_misses", s->leaderboard_cache_misses);
  w->EndObject();
  w->EndObject();
}

}  // namespace clickatron
