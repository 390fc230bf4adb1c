#include "api/query_fetch.h"

#include <event2/event.h>

#include <charconv>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "api/query_plan.h"
#include "base/latency.h"
#include "keyformat/records.h"
#include "keyformat/shard.h"
#include "net/http_client.h"
#include "wire/generation.h"
#include "wire/headers.h"

namespace clickatron {

namespace {

// The answer a cached archive answer gives: a cache hit, or the answer a replica confirmed
// with a 304.
BackendAnswer CachedBackendAnswer(const CachedArchiveAnswer& hit, std::string_view generation, size_t replica) {
  BackendAnswer a;
  a.ok = true;
  a.status = hit.status;
  a.body = hit.body;
  a.watermark = hit.watermark;
  a.generation = std::string(generation);
  a.rollups = hit.rollups;
  a.more = hit.more;
  a.cached = true;
  a.replica = replica;
  return a;
}

// One archive request walking the shard's replicas.
struct ArchiveCall : std::enable_shared_from_this<ArchiveCall> {
  QueryState* s;
  size_t shard;
  std::string path;
  bool is_get = false;
  // Its answer is kept: a pinned request (asked again under its generation, from the cache)
  // or a /get (a query's live first request: asked again with If-None-Match).
  bool cache_answer = false;
  // The cached answer a live /get asks the replica to confirm (wire/generation.h): a 304 naming
  // held_generation makes it the answer without its bytes crossing the network again.
  std::optional<CachedArchiveAnswer> held;
  std::string held_generation;
  size_t first;
  size_t tried = 0;
  std::string errors;
  BackendCallback done;

  void Try() {
    const std::vector<net::HostPort>& replicas = s->config.archive[shard];
    if (tried == replicas.size()) {
      BackendAnswer failed;
      failed.error = "archive shard " + std::to_string(shard) + " has no live replica (" + errors + ")";
      done(std::move(failed));
      return;
    }
    size_t replica = (first + tried) % replicas.size();
    ++tried;
    auto self = shared_from_this();
    auto on_response = [self, replica](net::HttpResponse&& r) { self->OnResponse(replica, std::move(r)); };
    if (!held) {
      s->client->Get(replicas[replica], path, s->options.archive_timeout_ms, std::move(on_response));
      return;
    }
    net::RequestOptions conditional;
    conditional.timeout_ms = s->options.archive_timeout_ms;
    conditional.headers.emplace_back(wire::kIfNoneMatchHeader, wire::GenerationEtag(held_generation));
    s->client->Request(replicas[replica], path, std::move(conditional), std::move(on_response));
  }

  void OnResponse(size_t replica, net::HttpResponse&& r) {
    const net::HostPort& from = s->config.archive[shard][replica];
    std::string problem;
    Result<int64_t> w = kNoArchiveDays;
    if (!r.ok()) {
      problem = r.error;
    } else if (std::optional<std::string_view> cap = r.Header(wire::kFwmatchLimitHeader);
               r.status == 400 && cap) {
      // The limit asked for is above this replica's cap: an answer, not a failover.
      BackendAnswer refused;
      refused.error = "archive shard " + std::to_string(shard) + " (" + from.ToString() +
                      ": limit above its --fwmatch-limit " + std::string(*cap) + ")";
      auto [end, ec] = std::from_chars(cap->data(), cap->data() + cap->size(), refused.fwmatch_limit);
      if (ec != std::errc() || end != cap->data() + cap->size()) refused.fwmatch_limit = 0;
      done(std::move(refused));
      return;
    } else if (r.status == 304 && (!held || r.Header(wire::kGenerationHeader) != held_generation)) {
      problem = from.ToString() + ": answered 304 for an answer of another generation";
      held.reset();  // the next replica is asked for the whole answer
    } else if (r.status != 200 && r.status != 404 && r.status != 304) {
      problem = from.ToString() + ": answered HTTP " + std::to_string(r.status);
    } else if (w = ParseWatermark(r.Header(wire::kLastDayHeader)); !w.ok()) {
      problem = from.ToString() + ": " + w.status().message();
    }
    if (!problem.empty()) {
      if (!errors.empty()) errors += "; ";
      errors += problem;
      ++s->archive_failovers;
      Try();
      return;
    }
    if (r.status == 304) {
      // The replica serves the generation whose answer this call holds: it is the answer.
      ++s->archive_revalidated;
      s->archive_cache.Confirm(shard, held_generation, static_cast<int64_t>(MonotonicMicros()));
      BackendAnswer a = CachedBackendAnswer(*held, held_generation, replica);
      a.watermark = w.value();
      done(std::move(a));
      return;
    }
    BackendAnswer a;
    a.ok = true;
    a.status = r.status;
    a.body = SharedBody(std::move(r.body));
    if (is_get && !a.body.empty() && a.body.back() == '\n') a.body.remove_suffix(1);  // value + "\n"
    a.watermark = w.value();
    a.replica = replica;
    a.more = r.Header(wire::kFwmatchMoreHeader).has_value();  // the same header on both tiers
    a.rollups = r.Header(wire::kRollupsHeader).has_value();
    if (std::optional<std::string_view> g = r.Header(wire::kGenerationHeader); g.has_value() && !g->empty()) {
      a.generation = std::string(*g);
      const int64_t now = static_cast<int64_t>(MonotonicMicros());
      s->archive_cache.Confirm(shard, a.generation, now);
      if (cache_answer) {
        s->archive_cache.Put(shard, a.generation, path,
                             CachedArchiveAnswer{a.status, a.body, a.watermark, a.more, a.rollups});
      }
    }
    done(std::move(a));
  }
};

// The lookup resolution of one batch of hashes: archive shards first, then realtime.
struct LookupCall : std::enable_shared_from_this<LookupCall> {
  QueryState* s;
  std::vector<std::string> missing;
  std::unordered_map<std::string, std::string> found;
  size_t pending = 0;
  Status error;
  LookupCallback done;

  // Groups `missing` by the shard of "_l|hash" among shard_count and asks each group.
  void Ask(bool archive) {
    size_t shards = archive ? s->config.archive.size() : s->config.realtime.size();
    if (missing.empty() || shards == 0) return AfterTier(archive);
    std::vector<std::vector<std::string>> keys(shards);
    for (const std::string& hash : missing) {
      std::string key;
      AppendLookupKey(&key, hash);
      uint32_t shard = ShardOf(key, static_cast<uint32_t>(shards));
      keys[shard].push_back(std::move(key));
    }
    auto self = shared_from_this();
    std::vector<std::pair<size_t, std::string>> requests;
    for (size_t shard = 0; shard < shards; ++shard) {
      for (std::string& path : MgetPaths(keys[shard], s->options.max_backend_url_bytes)) {
        requests.emplace_back(shard, std::move(path));
      }
    }
    pending = requests.size();
    for (auto& [shard, path] : requests) {
      BackendCallback cb = [self, archive](BackendAnswer&& a) { self->OnAnswer(archive, std::move(a)); };
      if (archive) {
        FetchArchive(s, shard, std::move(path), -1, std::move(cb));
      } else {
        FetchRealtime(s, shard, std::move(path), std::move(cb));
      }
    }
  }

  void OnAnswer(bool archive, BackendAnswer&& a) {
    if (!a.ok) {
      if (error.ok()) {
        error = Status::Error(archive ? StatusCode::kArchiveUnavailable : StatusCode::kRealtimeUnavailable, a.error);
      }
    } else {
      LineWalker lines(a.body);
      std::string_view key, value;
      while (lines.Next(&key, &value)) {
        if (key.substr(0, kLookupPrefix.size()) != kLookupPrefix) continue;
        Result<std::string> original = UnescapeLookupValue(value);
        // A record that does not unescape is shown as its hash, like an unknown one.
        if (original.ok()) found.emplace(key.substr(kLookupPrefix.size()), std::move(original).value());
      }
    }
    if (--pending == 0) AfterTier(archive);
  }

  void AfterTier(bool archive) {
    if (!error.ok()) return done(error, {});
    std::vector<std::string> still;
    for (std::string& hash : missing) {
      if (!found.count(hash)) still.push_back(std::move(hash));
    }
    missing = std::move(still);
    if (archive && !missing.empty()) return Ask(false);
    for (const auto& [hash, original] : found) s->lookups.Put(hash, original);
    done(Status::OK(), std::move(found));
  }
};

}  // namespace

namespace {

// A cached answer on its way to its callback: delivered from the loop, never re-entrantly.
struct Delivery {
  BackendCallback done;
  BackendAnswer answer;
};

void Deliver(evutil_socket_t, short, void* arg) {
  std::unique_ptr<Delivery> d(static_cast<Delivery*>(arg));
  d->done(std::move(d->answer));
}

// Hands a cache hit of generation to *done on the next turn of the loop; false (and *done
// left as it was) when the loop refuses: the request then goes to a replica.
bool DeliverCached(QueryState* s, size_t shard, const CachedArchiveAnswer& hit, std::string_view generation,
                   BackendCallback* done) {
  auto d = std::make_unique<Delivery>();
  // The replica a breakdown's misses go to.
  d->answer = CachedBackendAnswer(hit, generation, s->next_replica[shard]++ % s->config.archive[shard].size());
  d->done = std::move(*done);
  const timeval now{0, 0};
  if (event_base_once(s->base, -1, EV_TIMEOUT, &Deliver, d.get(), &now) != 0) {
    *done = std::move(d->done);  // the loop refused it: ask a replica instead
    return false;
  }
  d.release();  // Deliver owns it
  ++s->archive_cache_answers;
  return true;
}

// Answers from the archive cache when it holds the path under the pinned generation; false
// when the request must go to a replica.
bool AnswerFromCache(QueryState* s, size_t shard, const std::string& path, std::string_view generation,
                     BackendCallback* done) {
  if (generation.empty()) return false;
  const CachedArchiveAnswer* hit = s->archive_cache.Get(shard, generation, path);
  return hit != nullptr && DeliverCached(s, shard, *hit, generation, done);
}

}  // namespace

void FetchArchive(QueryState* s, size_t shard, std::string path, int first_replica,
                  BackendCallback done, std::string_view pinned_generation) {
  if (AnswerFromCache(s, shard, path, pinned_generation, &done)) return;
  const bool is_get = path.compare(0, 5, "/get?") == 0;
  // A live /get whose answer the cache holds under the generation the shard's last live
  // answer named: within that generation's lease (wire/generation.h) the answer is
  // taken as it is; after it, the replica is asked to confirm it (If-None-Match).
  const std::string* known = nullptr;
  const CachedArchiveAnswer* held = nullptr;
  if (pinned_generation.empty() && is_get && (known = s->archive_cache.KnownGeneration(shard)) != nullptr) {
    held = s->archive_cache.Get(shard, *known, path);
    const bool leased = s->archive_cache.FreshGeneration(shard, static_cast<int64_t>(MonotonicMicros())) != nullptr;
    if (held != nullptr && leased && DeliverCached(s, shard, *held, *known, &done)) return;
  }
  ++s->archive_requests;
  auto call = std::make_shared<ArchiveCall>();
  call->s = s;
  call->shard = shard;
  call->path = std::move(path);
  call->is_get = is_get;
  call->cache_answer = !pinned_generation.empty() || call->is_get;
  if (held != nullptr) {
    call->held = *held;
    call->held_generation = *known;
  }
  size_t replicas = s->config.archive[shard].size();
  if (first_replica >= 0) {
    call->first = static_cast<size_t>(first_replica) % replicas;
  } else {
    call->first = s->next_replica[shard]++ % replicas;
  }
  call->done = std::move(done);
  call->Try();
}

void FetchRealtime(QueryState* s, size_t shard, std::string path, BackendCallback done) {
  ++s->realtime_requests;
  const net::HostPort& to = s->config.realtime[shard];
  bool is_get = path.compare(0, 5, "/get?") == 0;
  s->client->Get(to, path, s->options.realtime_timeout_ms,
                 [s, shard, is_get, done = std::move(done)](net::HttpResponse&& r) {
                   BackendAnswer a;
                   a.status = r.status;
                   if (!r.ok()) {
                     a.error = r.error;
                   } else if (r.status == 200 || (is_get && r.status == 404)) {
                     a.ok = true;
                     a.status = r.status;
                     a.body = SharedBody(std::move(r.body));
                     if (is_get && !a.body.empty() && a.body.back() == '\n') a.body.remove_suffix(1);
                     a.more = r.Header(wire::kFwmatchMoreHeader).has_value();
                     if (std::optional<std::string_view> after = r.Header(wire::kFwsumAfterHeader)) {
                       a.after.assign(*after);
                     }
                   } else {
                     a.error = s->config.realtime[shard].ToString() + ": answered HTTP " +
                               std::to_string(r.status);
                   }
                   if (!a.ok) a.error = "realtime shard " + std::to_string(shard) + " (" + a.error + ")";
                   done(std::move(a));
                 });
}

namespace {

// A batch path asks at most as many keys as one query may (query_service.cc): a realtime
// whose --max-mget-keys suits single queries suits batches.
constexpr size_t kMaxHourBatchKeys = 96;

// One batch of hour asks on its way: its paths' answers are gathered into body.
struct HourBatch {
  QueryState* s = nullptr;
  size_t shard = 0;
  std::vector<HourAsk> asks;
  std::vector<BackendCallback> done;
  size_t pending = 0;
  std::string body;
  bool failed = false;
  int status = 0;     // of the first failure
  std::string error;  // of the first failure
};

void SendHourBatch(std::shared_ptr<HourBatch> b);

// A realtime /mget answer of these lines.
BackendAnswer MgetAnswer(std::string lines) {
  BackendAnswer a;
  a.ok = true;
  a.status = 200;
  a.body = SharedBody(std::move(lines));
  return a;
}

// Every ask of b on its own, each as a batch of one: what the asks got before batching.
void SendOneByOne(HourBatch* b) {
  for (size_t i = 0; i < b->asks.size(); ++i) {
    auto one = std::make_shared<HourBatch>();
    one->s = b->s;
    one->shard = b->shard;
    one->asks.push_back(std::move(b->asks[i]));
    one->done.push_back(std::move(b->done[i]));
    SendHourBatch(std::move(one));
  }
}

void OnHourBatchAnswer(const std::shared_ptr<HourBatch>& b, BackendAnswer&& a) {
  if (!a.ok) {
    if (!b->failed) {
      b->failed = true;
      b->status = a.status;
      b->error = std::move(a.error);
    }
  } else {
    b->body.append(a.body);  // /mget answers end each line with '\n': they read as one body
  }
  if (--b->pending > 0) return;
  const bool shared = b->asks.size() > 1;
  if (b->failed) {
    // A refusal of the batch's size (400: more keys than the shard's --max-mget-keys) is not
    // a refusal of each ask's: ask them one by one. Other failures are the shard's.
    if (shared && b->status == 400) {
      ++b->s->realtime_batches_split;
      return SendOneByOne(b.get());
    }
    for (BackendCallback& done : b->done) {
      BackendAnswer f;
      f.status = b->status;
      f.error = b->error;
      done(std::move(f));
    }
    return;
  }
  if (!shared) return b->done[0](MgetAnswer(std::move(b->body)));  // this ask's own answer, as it came
  std::vector<std::string> bodies;
  if (!SplitBatchAnswer(b->body, b->asks, &bodies).ok()) {  // each ask's own answer says what is wrong
    ++b->s->realtime_batches_split;
    return SendOneByOne(b.get());
  }
  for (size_t i = 0; i < b->asks.size(); ++i) b->done[i](MgetAnswer(std::move(bodies[i])));
}

void SendHourBatch(std::shared_ptr<HourBatch> b) {
  QueryState* s = b->s;
  if (b->asks.size() > 1) s->realtime_batched_asks += b->asks.size();
  std::vector<std::string> paths = BatchMgetPaths(b->asks, s->options.max_backend_url_bytes, kMaxHourBatchKeys);
  b->pending = paths.size();
  if (paths.empty()) {  // unreachable: every ask holds an hour; answer as an empty /mget
    b->pending = 1;
    return OnHourBatchAnswer(b, MgetAnswer(std::string()));
  }
  for (std::string& path : paths) {
    FetchRealtime(s, b->shard, std::move(path), [b](BackendAnswer&& a) { OnHourBatchAnswer(b, std::move(a)); });
  }
}

// The loop's turn is over: each shard's waiting asks go out as one batch.
void FlushHourBatches(evutil_socket_t, short, void* arg) {
  auto* s = static_cast<QueryState*>(arg);
  s->hour_batch_waiting = false;
  for (size_t shard = 0; shard < s->hour_asks.size(); ++shard) {
    QueryState::HourAsks& waiting = s->hour_asks[shard];
    if (waiting.asks.empty()) continue;
    auto b = std::make_shared<HourBatch>();
    b->s = s;
    b->shard = shard;
    b->asks.swap(waiting.asks);
    b->done.swap(waiting.done);
    SendHourBatch(std::move(b));
  }
}

}  // namespace

void FetchRealtimeHours(QueryState* s, size_t shard, std::string prefix, HourRange span, BackendCallback done) {
  ++s->realtime_hour_asks;
  if (s->hour_batch_event == nullptr) s->hour_batch_event = event_new(s->base, -1, 0, &FlushHourBatches, s);
  QueryState::HourAsks& waiting = s->hour_asks[shard];
  waiting.asks.push_back(HourAsk{std::move(prefix), span});
  waiting.done.push_back(std::move(done));
  if (s->hour_batch_event == nullptr) {  // no event (out of memory): this ask goes alone
    FlushHourBatches(-1, 0, s);
    return;
  }
  // Active, the event runs after the events this turn of the loop already has: every query
  // this wake-up starts joins the batch, and none waits for a later one.
  if (!s->hour_batch_waiting) {
    s->hour_batch_waiting = true;
    event_active(s->hour_batch_event, EV_TIMEOUT, 0);
  }
}

QueryService::State::~State() {
  if (hour_batch_event != nullptr) event_free(hour_batch_event);
}

void ResolveLookups(QueryState* s, std::vector<std::string> hashes, LookupCallback done) {
  auto call = std::make_shared<LookupCall>();
  call->s = s;
  call->missing = std::move(hashes);
  call->done = std::move(done);
  call->Ask(true);
}

}  // namespace clickatron
