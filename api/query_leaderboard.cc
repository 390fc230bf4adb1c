#include "api/query_leaderboard.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/fanout.h"
#include "api/key_listing.h"
#include "api/leaderboard.h"
#include "api/query_listing.h"
#include "api/query_range.h"
#include "base/latency.h"
#include "base/wall_clock.h"
#include "keyformat/records.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"
#include "net/request.h"
#include "wire/refusals.h"

namespace clickatron {

namespace {

// Records a page of the archive listing asks for after the first: a 5-year hourly key is
// ~300 KB, so a page stays well under the archive's default --max-answer-mb (64).
constexpr size_t kArchivePageKeys = 128;
constexpr int kMaxAttempts = 3;

// A sum the answer needs leaves 128 bits: named, never clamped (docs/api.md#conventions).
QueryError SumOverflow(const std::string& what) {
  return QueryError{500, wire::kSumOverflow, "the sum of " + what + " leaves 128 bits"};
}

size_t CountLines(std::string_view body) { return static_cast<size_t>(std::count(body.begin(), body.end(), '\n')); }

QueryError TooManyKeys(const std::string& ns, const char* tier) {
  return QueryError{400, "NAMESPACE_TOO_LARGE",
                    "namespace " + ns + " has more than " + std::to_string(kMaxLeaderboardKeys) + " keys in the " +
                        tier + " tier; /leaderboard is exact only up to " + std::to_string(kMaxLeaderboardKeys) +
                        " keys a tier"};
}

// The archive part of one archive shard.
struct ShardPart {
  bool listed = false;          // a page has named the generation
  std::string generation;
  int64_t watermark = kWatermarkUnknown;
  std::string building;         // `stored,sum` lines of the pages read so far
  SharedBody sums;              // ... all of them (or the cached ones)
  size_t keys = 0;
  size_t cap = 0;               // the replica's --fwmatch-limit once it said (0: not yet)
};

class LeaderboardRun : public std::enable_shared_from_this<LeaderboardRun> {
 public:
  LeaderboardRun(QueryState* s, std::unique_ptr<net::AsyncReply> reply, QueryParams q, HourRange range, int attempt)
      : s_(s), reply_(std::move(reply)), q_(std::move(q)), range_(range), attempt_(attempt),
        fanout_(s->options), prefix_(q_.ns + "|"),
        cache_path_("leaderboard " + q_.ns + " " + std::to_string(range.start) + " " + std::to_string(range.end)),
        parts_(s->config.archive.size()), realtime_keys_(s->config.realtime.size(), 0),
        realtime_last_(s->config.realtime.size()) {}

  void Start() {
    pending_ = 1;  // held while the shards start
    for (size_t k = 0; k < parts_.size(); ++k) StartShard(k);
    ArchiveDone();
  }

 private:
  // Step 1 for shard k: the cached sums of the leased generation, or the listing's first page.
  void StartShard(size_t k) {
    if (const std::string* g = s_->archive_cache.FreshGeneration(k, static_cast<int64_t>(MonotonicMicros()))) {
      if (TakeCached(k, *g)) return;
    }
    ListPage(k, "", 1);
  }

  bool TakeCached(size_t k, const std::string& generation) {
    if (generation.empty()) return false;
    const CachedArchiveAnswer* hit = s_->archive_cache.Get(k, generation, cache_path_);
    if (hit == nullptr) return false;
    ShardPart& p = parts_[k];
    p.listed = true;
    p.generation = generation;
    p.watermark = hit->watermark;
    p.sums = hit->body;
    p.keys = CountLines(p.sums);
    ++s_->leaderboard_cache_hits;
    return true;
  }

  void ListPage(size_t k, std::string after, size_t limit) {
    if (!fanout_.Spend(1, 0)) return;
    ++pending_;
    auto self = shared_from_this();
    FetchArchive(s_, k, ListingPath(prefix_, limit, after), -1,
                 [self, k, after, limit](BackendAnswer&& a) { self->OnPage(k, after, limit, std::move(a)); });
  }

  void OnPage(size_t k, const std::string& after, size_t limit, BackendAnswer&& a) {
    ShardPart& p = parts_[k];
    if (!a.ok && a.fwmatch_limit > 0 && a.fwmatch_limit < limit) {
      p.cap = a.fwmatch_limit;  // smaller each time: this ends
      ListPage(k, after, p.cap);
    } else if (!a.ok) {
      fanout_.Fail(BackendUnavailable(true, a.error));
    } else if (p.listed && (a.generation != p.generation || a.watermark != p.watermark)) {
      generation_changed_ = true;  // the pages would mix two files
    } else if (!p.listed && after.empty() && TakeCached(k, a.generation)) {
      // The first page named a generation whose sums are kept: no more pages.
    } else if (fanout_.Spend(0, a.body.size())) {
      p.listed = true;
      p.generation = a.generation;
      p.watermark = a.watermark;
      AddPage(k, a);
    }
    ArchiveDone();
  }

  void AddPage(size_t k, const BackendAnswer& a) {
    ShardPart& p = parts_[k];
    size_t records = 0;
    if (Status st = AppendArchiveSums(a.body, q_.ns, range_, p.watermark, &p.building, &records); !st.ok()) {
      return fanout_.Fail(BackendDataError("archive shard " + std::to_string(k) + ": " + st.message()));
    }
    p.keys += records;
    if (p.keys > kMaxLeaderboardKeys) return fanout_.Fail(TooManyKeys(q_.ns, "archive"));
    if (a.more && records > 0) {
      const size_t page = p.cap > 0 ? std::min(p.cap, kArchivePageKeys) : kArchivePageKeys;
      return ListPage(k, std::string(LastListedKey(a.body)), page);
    }
    p.sums = SharedBody(std::move(p.building));
    if (!p.generation.empty()) {
      ++s_->leaderboard_cache_misses;
      s_->archive_cache.Put(k, p.generation, cache_path_, CachedArchiveAnswer{200, p.sums, p.watermark, false, false});
    }
  }

  void ArchiveDone() {
    if (--pending_ > 0) return;
    if (fanout_.failed()) return ReplyQueryError(s_, reply_.get(), fanout_.error());
    watermark_ = parts_.empty() ? kNoArchiveDays : parts_[0].watermark;
    for (const ShardPart& p : parts_) generation_changed_ = generation_changed_ || p.watermark != watermark_;
    if (generation_changed_) return Retry();
    // Step 2: realtime's hours past W, unless the range ends by W.
    pending_ = 1;
    if (range_.end > (watermark_ + 1) * kSecondsPerDay) {
      for (size_t k = 0; k < realtime_keys_.size(); ++k) ListRealtime(k, "");
    }
    RealtimeDone();
  }

  void Retry() {
    // A publish under the listing: the shards' pages or watermarks differ. It settles within
    // moments.
    ++s_->watermark_retries;
    if (attempt_ + 1 >= kMaxAttempts) {
      return ReplyQueryError(s_, reply_.get(),
                             BackendUnavailable(true, "archive shards kept serving different generations"));
    }
    std::make_shared<LeaderboardRun>(s_, std::move(reply_), std::move(q_), range_, attempt_ + 1)->Start();
  }

  void ListRealtime(size_t k, std::string after) {
    if (!fanout_.Spend(1, 0)) return;
    ++pending_;
    auto self = shared_from_this();
    FetchRealtime(s_, k, ListingPath(prefix_, kMaxListingPageLines, after),
                  [self, k](BackendAnswer&& a) { self->OnRealtime(k, std::move(a)); });
  }

  void OnRealtime(size_t k, BackendAnswer&& a) {
    if (!a.ok) {
      fanout_.Fail(BackendUnavailable(false, a.error));
    } else if (fanout_.Spend(0, a.body.size())) {
      // Lines sort by key, so a key's hours are together (pages go on where one stopped).
      LineWalker lines(a.body);
      std::string_view key, value;
      while (lines.Next(&key, &value)) {
        std::string_view stored = RealtimeListedKey(key, q_.ns);
        if (stored.empty()) {
          fanout_.Fail(BackendDataError("realtime shard " + std::to_string(k) + " listed '" +
                                        std::string(key.substr(0, 100)) + "' for " + prefix_));
          break;
        }
        if (stored != realtime_last_[k]) {
          realtime_last_[k].assign(stored);
          if (++realtime_keys_[k] > kMaxLeaderboardKeys) {
            fanout_.Fail(TooManyKeys(q_.ns, "realtime"));
            break;
          }
        }
      }
      if (!fanout_.failed() && a.more && !a.body.empty()) ListRealtime(k, std::string(LastListedKey(a.body)));
      realtime_.push_back(std::move(a.body));
    }
    RealtimeDone();
  }

  void RealtimeDone() {
    if (--pending_ > 0) return;
    if (fanout_.failed()) return ReplyQueryError(s_, reply_.get(), fanout_.error());
    Sum();
  }

  // Step 3: both tiers' sums per key, ranked; hashed keys that can make the top looked up.
  void Sum() {
    sum_ = std::make_unique<BreakdownSum>(range_, watermark_);
    for (size_t k = 0; k < parts_.size(); ++k) {
      // The archive part's `stored,sum` lines read as a /fwsum answer's are (leaderboard.h).
      if (Status st = sum_->AddRealtimeSums(parts_[k].sums); !st.ok()) {
        return ReplyQueryError(s_, reply_.get(), BackendDataError("archive shard " + std::to_string(k) + ": " +
                                                                  st.message()));
      }
    }
    for (const SharedBody& body : realtime_) {
      if (Status st = sum_->AddRealtime(body, prefix_); !st.ok()) {
        return ReplyQueryError(s_, reply_.get(), BackendDataError(st.message()));
      }
    }
    if (!sum_->overflow().empty()) {
      return ReplyQueryError(s_, reply_.get(), SumOverflow("key '" + sum_->overflow().substr(0, 64) + "'"));
    }
    if (!sum_->Total(&total_)) return ReplyQueryError(s_, reply_.get(), SumOverflow("the namespace's keys"));
    candidates_ = sum_->Candidates(q_.limit);
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
    auto self = shared_from_this();
    ResolveLookups(s_, std::move(unknown), [self](Status st, std::unordered_map<std::string, std::string>&& found) {
      if (!st.ok()) {
        const bool archive = st.code() == StatusCode::kArchiveUnavailable;
        return ReplyQueryError(self->s_, self->reply_.get(), BackendUnavailable(archive, st.message()));
      }
      for (auto& [hash, original] : found) self->shown_.emplace(hash, std::move(original));
      self->Reply();
    });
  }

  void Reply() {
    std::vector<BreakdownEntry> entries = RankBreakdown(candidates_, q_.limit, [this](std::string_view stored) {
      auto it = shown_.find(std::string(stored));
      return it == shown_.end() ? std::string(stored) : it->second;
    });
    reply_->ReplyJson(200, "OK", LeaderboardJson(q_, total_, entries));
  }

  QueryState* s_;
  std::unique_ptr<net::AsyncReply> reply_;
  QueryParams q_;
  HourRange range_;
  int attempt_;
  Fanout fanout_;
  const std::string prefix_;      // `{ns}|`
  const std::string cache_path_;  // the archive cache's path of a shard's sums
  std::vector<ShardPart> parts_;
  bool generation_changed_ = false;
  int64_t watermark_ = kNoArchiveDays;
  std::vector<size_t> realtime_keys_;       // per realtime shard: distinct keys listed
  std::vector<std::string> realtime_last_;  // per realtime shard: the last key listed
  std::vector<SharedBody> realtime_;
  std::unique_ptr<BreakdownSum> sum_;  // views into parts_' and realtime_'s bodies
  Int128 total_ = 0;
  std::vector<SubkeyCount> candidates_;
  std::unordered_map<std::string, std::string> shown_;
  int pending_ = 0;
};

}  // namespace

void HandleLeaderboard(QueryState* s, net::Request& r) {
  if (!AdmitQuery(s, r)) return;
  ++s->leaderboard_requests;
  QueryParams q;
  QueryError e;
  if (!ParseQueryParams(QueryKind::kLeaderboard, r.params(), WallClockSeconds(), &q, &e)) {
    return ReplyQueryError(s, &r, e);
  }
  // units=-1 (the default): every hour up to the reference bucket's end, as /subtotals.
  Result<std::vector<Bucket>> buckets =
      MakeBuckets(q.unit, q.tz, q.reference_ts, q.units == kUnitsBackToFirst ? 1 : q.units);
  if (!buckets.ok()) return ReplyQueryError(s, &r, InvalidArg("timezone", buckets.status().message()));
  CutToRange(q, &buckets.value());
  HourRange range = RangeOfBuckets(*buckets);
  if (q.units == kUnitsBackToFirst) range.start = kYmdhMinTs;
  std::make_shared<LeaderboardRun>(s, r.Defer(), std::move(q), range, 0)->Start();
}

}  // namespace clickatron
