#include "api/query_listing.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/fanout.h"
#include "api/key_listing.h"
#include "api/query_plan.h"
#include "api/query_range.h"
#include "api/query_series.h"
#include "keyformat/shard.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"
#include "net/http_client.h"
#include "net/json.h"
#include "net/request.h"
#include "base/wall_clock.h"
#include "wire/json_answer.h"

namespace clickatron {

namespace {

// A realtime key holds at most 96 hours (the ring's 3 days and tomorrow): a page of that many
// lines per wanted key reaches the next keys in one request, mostly.
constexpr size_t kRealtimeLinesPerKey = 96;
constexpr size_t kMaxPageLines = kMaxListingPageLines;
constexpr int kClusterTimeoutMs = 1000;

// Parses an integer parameter within [lo, hi]; absent or empty gives def.
bool IntParam(const net::Request& r, std::string_view name, int64_t lo, int64_t hi, int64_t def, int64_t* out,
              QueryError* e) {
  std::optional<std::string_view> text = r.Param(name);
  if (!text.has_value() || text->empty()) {
    *out = def;
    return true;
  }
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v < lo || v > hi) {
    *e = InvalidArg(name, std::string(name) + " '" + std::string(text->substr(0, 32)) +
                              "' is not a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    return false;
  }
  *out = v;
  return true;
}

bool NamespaceParam(const net::Request& r, std::string* ns, QueryError* e) {
  std::optional<std::string_view> text = r.Param("ns");
  if (!text.has_value() || text->empty()) {
    *e = MissingArg("ns");
    return false;
  }
  if (Status st = ValidateNamespace(*text, "ns"); !st.ok()) {
    *e = InvalidArg("ns", st.message());
    return false;
  }
  *ns = std::string(*text);
  return true;
}

// ---------------------------------------------------------------------------------------
// /keys
class KeysRun : public std::enable_shared_from_this<KeysRun> {
 public:
  KeysRun(QueryState* s, std::unique_ptr<net::AsyncReply> reply, std::string ns, std::string prefix, size_t limit)
      : s_(s), reply_(std::move(reply)), ns_(std::move(ns)), prefix_(std::move(prefix)), limit_(limit),
        fanout_(s->options), listed_(s->config.realtime.size(), 0), archive_listed_(s->config.archive.size(), 0),
        archive_cap_(s->config.archive.size(), 0) {}

  void Start() {
    if (ListablePrefix(prefix_)) {
      const std::string p = ns_ + "|" + prefix_;
      for (size_t k = 0; k < s_->config.archive.size(); ++k) ListArchive(k, "");
      for (size_t k = 0; k < s_->config.realtime.size(); ++k) ListRealtime(k, "");
    }
    if (!prefix_.empty() && ValidateUserKey(prefix_).ok() && !IsLiteralKey(prefix_)) FindExact();
    if (pending_ == 0) Finish();
  }

 private:
  // One line per key: limit+1 lines hold this shard's share of the first limit+1 keys, in
  // pages of at most the shard's --fwmatch-limit: a replica refuses a larger limit (400 with
  // its cap, remembered for the next pages) and the page is asked again with the cap; a cut
  // page (X-Fwmatch-More) goes on after the last key listed.
  void ListArchive(size_t shard, std::string after) {
    if (!fanout_.Spend(1, 0)) return;
    ++pending_;
    auto self = shared_from_this();
    size_t wanted = limit_ + 1 - archive_listed_[shard];
    if (archive_cap_[shard] > 0) wanted = std::min(wanted, archive_cap_[shard]);
    FetchArchive(s_, shard, ListingPath(ns_ + "|" + prefix_, wanted, after), -1,
                 [self, shard, after, wanted](BackendAnswer&& a) {
      if (!a.ok && a.fwmatch_limit > 0 && a.fwmatch_limit < wanted) {
        self->archive_cap_[shard] = a.fwmatch_limit;  // smaller each time: this ends
        self->ListArchive(shard, after);
      } else if (!a.ok) {
        self->fanout_.Fail(BackendUnavailable(true, a.error));
      } else if (self->fanout_.Spend(0, a.body.size())) {
        LineWalker lines(a.body);
        std::string_view key, value, last;
        while (lines.Next(&key, &value)) {
          std::string_view stored = ArchiveListedKey(key, self->ns_);
          if (stored.empty() || (!after.empty() && key <= after)) {
            return self->Fail(BackendDataError("archive shard " + std::to_string(shard) + " listed '" + std::string(key) +
                                         "' for " + self->ns_ + "|" + self->prefix_ +
                                         (after.empty() ? "" : " after '" + after + "'")));
          }
          self->found_.emplace(stored);
          self->archive_listed_[shard]++;
          last = key;
        }
        if (a.more && !last.empty() && self->archive_listed_[shard] < self->limit_ + 1) {
          self->ListArchive(shard, std::string(last));
        }
      }
      self->Done();
    });
  }

  void ListRealtime(size_t shard, std::string after) {
    if (!fanout_.Spend(1, 0)) return;
    ++pending_;
    auto self = shared_from_this();
    const size_t wanted = limit_ + 1 - listed_[shard];
    const size_t page = std::min(kMaxPageLines, wanted * kRealtimeLinesPerKey);
    FetchRealtime(s_, shard, ListingPath(ns_ + "|" + prefix_, page, after), [self, shard](BackendAnswer&& a) {
      if (!a.ok) {
        self->fanout_.Fail(BackendUnavailable(false, a.error));
      } else if (self->fanout_.Spend(0, a.body.size())) {
        LineWalker lines(a.body);
        std::string_view key, value, last;
        while (lines.Next(&key, &value)) {
          std::string_view stored = RealtimeListedKey(key, self->ns_);
          if (stored.empty()) {
            return self->Fail(BackendDataError("realtime listed '" + std::string(key) + "' for " + self->ns_ + "|"));
          }
          if (stored != last) self->listed_[shard]++;
          last = stored;
          self->found_.emplace(stored);
        }
        // Cut by the limit: go on after the last key's hours, until this shard has given
        // limit+1 keys (more of its keys cannot be among the first limit+1 of all).
        if (a.more && !last.empty() && self->listed_[shard] < self->limit_ + 1) {
          self->ListRealtime(shard, AfterRealtimeKey(self->ns_, last));
        }
      }
      self->Done();
    });
  }

  // A key typed whole that is stored as its hash: present when either tier has a record.
  void FindExact() {
    hash_ = KeyHash(prefix_);
    const std::string shard_key = ns_ + "|" + hash_;
    auto self = shared_from_this();
    if (!s_->config.archive.empty() && fanout_.Spend(1, 0)) {
      ++pending_;
      const size_t shard = ShardOf(shard_key, static_cast<uint32_t>(s_->config.archive.size()));
      FetchArchive(s_, shard, GetPath(shard_key), -1, [self](BackendAnswer&& a) {
        if (!a.ok) self->fanout_.Fail(BackendUnavailable(true, a.error));
        else if (a.status == 200) self->exact_ = true;
        self->Done();
      });
    }
    if (fanout_.Spend(1, 0)) {
      ++pending_;
      const size_t shard = ShardOf(shard_key, static_cast<uint32_t>(s_->config.realtime.size()));
      FetchRealtime(s_, shard, ListingPath(shard_key + ".", 1, ""), [self](BackendAnswer&& a) {
        if (!a.ok) self->fanout_.Fail(BackendUnavailable(false, a.error));
        else if (!a.body.empty()) self->exact_ = true;
        self->Done();
      });
    }
  }

  void Fail(QueryError e) {
    fanout_.Fail(std::move(e));
    Done();
  }

  void Done() {
    if (--pending_ == 0) Finish();
  }

  void Finish() {
    if (fanout_.failed()) return ReplyQueryError(s_, reply_.get(), fanout_.error());
    more_ = found_.size() > limit_;
    for (const std::string& stored : found_) {
      if (keys_.size() == limit_) break;
      keys_.push_back(stored);
    }
    std::vector<std::string> unknown;
    for (const std::string& stored : keys_) {
      if (!IsKeyHash(stored)) continue;
      if (const std::string* original = s_->lookups.Get(stored)) {
        shown_.emplace(stored, *original);
      } else {
        unknown.push_back(stored);
      }
    }
    if (unknown.empty()) return Reply();
    auto self = shared_from_this();
    ResolveLookups(s_, std::move(unknown),
                   [self](Status st, std::unordered_map<std::string, std::string>&& found) {
                     if (!st.ok()) {
                       const bool archive = st.code() == StatusCode::kArchiveUnavailable;
                       return ReplyQueryError(self->s_, self->reply_.get(), BackendUnavailable(archive, st.message()));
                     }
                     for (auto& [hash, original] : found) self->shown_.emplace(hash, std::move(original));
                     self->Reply();
                   });
  }

  void Reply() {
    std::string out;
    net::JsonWriter w(&out);
    w.BeginObject();
    w.Field("ns", std::string_view(ns_));
    w.Field("prefix", std::string_view(prefix_));
    w.Field("limit", static_cast<uint64_t>(limit_));
    w.BeginArray("keys");
    if (exact_) {
      w.BeginObject();
      w.Field("key", std::string_view(prefix_));
      w.Field("stored", std::string_view(hash_));
      w.Field("exact", true);
      w.EndObject();
    }
    for (const std::string& stored : keys_) {
      auto it = shown_.find(stored);
      w.BeginObject();
      w.Field("key", std::string_view(it == shown_.end() ? stored : it->second));
      w.Field("stored", std::string_view(stored));
      w.EndObject();
    }
    w.EndArray();
    w.Field("more", more_);
    w.EndObject();
    reply_->ReplyJson(200, "OK", out);
  }

  QueryState* s_;
  std::unique_ptr<net::AsyncReply> reply_;
  const std::string ns_, prefix_;
  const size_t limit_;
  Fanout fanout_;
  std::vector<size_t> listed_;  // per realtime shard: keys it listed so far
  std::vector<size_t> archive_listed_;  // per archive shard
  std::vector<size_t> archive_cap_;     // per archive shard: its --fwmatch-limit once it said (0: not yet)
  std::set<std::string> found_;  // stored keys, byte order
  std::vector<std::string> keys_;
  std::unordered_map<std::string, std::string> shown_;
  std::string hash_;
  bool exact_ = false, more_ = false;
  int pending_ = 0;
};

// ---------------------------------------------------------------------------------------
// /subtotals
class SubtotalsRun : public std::enable_shared_from_this<SubtotalsRun> {
 public:
  SubtotalsRun(QueryState* s, std::unique_ptr<net::AsyncReply> reply, QueryParams q, HourRange range)
      : s_(s), reply_(std::move(reply)), q_(std::move(q)), range_(range), fanout_(s->options) {
    shard_key_ = q_.ns + "|" + q_.stored_key;
    has_archive_ = !s->config.archive.empty();
    if (has_archive_) archive_ = ShardOf(shard_key_, static_cast<uint32_t>(s->config.archive.size()));
    realtime_ = ShardOf(shard_key_, static_cast<uint32_t>(s->config.realtime.size()));
  }

  void Start() {
    ++pending_;  // held while the chains start, so none finishes the phase early
    for (char c : kNamespaceStarts) {
      if (has_archive_) Discover(true, std::string(1, c), "");
      Discover(false, std::string(1, c), "");
    }
    Done();
  }

 private:
  void Ask(bool archive, std::string path, BackendCallback cb) {
    if (!fanout_.Spend(1, 0)) return;
    ++pending_;
    if (archive) {
      FetchArchive(s_, archive_, std::move(path), -1, std::move(cb));
    } else {
      FetchRealtime(s_, realtime_, std::move(path), std::move(cb));
    }
  }

  // Phase 1: the first parts of the keys starting with `start` on one tier's shard, one
  // part per request; a part followed by '.' is a subtotal namespace.
  void Discover(bool archive, std::string start, std::string after) {
    auto self = shared_from_this();
    const std::string path = ListingPath(start, 1, after);
    Ask(archive, path, [self, archive, start, after](BackendAnswer&& a) {
      if (!a.ok) {
        self->fanout_.Fail(BackendUnavailable(archive, a.error));
      } else if (self->fanout_.Spend(0, a.body.size())) {
        LineWalker lines(a.body);
        std::string_view key, value;
        if (lines.Next(&key, &value)) {
          char sep = '\0';
          std::string_view part = FirstPart(key, &sep);
          // A server that ignored after= would list the same key for ever.
          if (sep == '\0' || (!after.empty() && key <= after)) {
            return self->Fail(BackendDataError(std::string(archive ? "archive" : "realtime") + " shard listed '" +
                                         std::string(key) + "' for '" + start + "' after '" + after + "'"));
          }
          if (sep == '.' && ValidateNamespace(part).ok()) self->candidates_.emplace(part);
          self->Discover(archive, start, AfterPart(part, sep));
        }
      }
      self->Done();
    });
  }

  // Phase 2: does `{subns}.{ns}|{key}.` have a record of an hour in the range?
  void Check(const std::string& subns) {
    auto self = shared_from_this();
    const std::string prefix = subns + "." + shard_key_ + ".";
    if (has_archive_) {
      // Archive subtotal records `{prefix}{ymdh}` sort by hour: the first one from the
      // range's first hour on says it all.
      std::string after;
      if (range_.start - kSecondsPerHour >= kYmdhMinTs) {
        Result<Ymdh> before = EncodeYmdh(range_.start - kSecondsPerHour);
        if (before.ok()) after = prefix + std::string(before->view());
      }
      CheckArchive(subns, prefix, after);
    }
    CheckRealtime(subns, prefix, "");
  }

  // A month and a day rollup `{prefix}{ym}`, `{prefix}{ymd}` sort just before the first
  // hour of their month and day (docs/formats.md#rollup-records): a listing that shows only
  // rollups goes on past them to the hour.
  // Three lines reach the first hour in one request (a month rollup, a day rollup, the
  // hour) unless the replica's --fwmatch-limit is smaller: it refuses naming its cap, and the
  // listing goes on in pages of that.
  void CheckArchive(const std::string& subns, const std::string& prefix, const std::string& after,
                    size_t limit = 3) {
    auto self = shared_from_this();
    Ask(true, ListingPath(prefix, limit, after), [self, subns, prefix, after, limit](BackendAnswer&& a) {
      if (!a.ok && a.fwmatch_limit > 0 && a.fwmatch_limit < limit) {
        self->CheckArchive(subns, prefix, after, a.fwmatch_limit);  // smaller each time: this ends
      } else if (!a.ok) {
        self->fanout_.Fail(BackendUnavailable(true, a.error));
      } else if (self->fanout_.Spend(0, a.body.size())) {
        if (!self->Note(subns, a.body) && a.more && OnlyRollups(a.body)) {
          self->CheckArchive(subns, prefix, std::string(LastListedKey(a.body)), limit);
        }
      }
      self->Done();
    });
  }

  static bool OnlyRollups(std::string_view body) {
    LineWalker lines(body);
    std::string_view key, value;
    bool any = false;
    while (lines.Next(&key, &value)) {
      if (!IsRollupKey(key)) return false;
      any = true;
    }
    return any;
  }

  // Realtime subtotal records `{prefix}{subkey}.{ymdh}` sort by subkey: read the listing
  // until an hour in the range shows up or it ends.
  void CheckRealtime(const std::string& subns, const std::string& prefix, const std::string& after) {
    auto self = shared_from_this();
    Ask(false, ListingPath(prefix, kMaxPageLines, after), [self, subns, prefix](BackendAnswer&& a) {
      if (!a.ok) {
        self->fanout_.Fail(BackendUnavailable(false, a.error));
      } else if (self->fanout_.Spend(0, a.body.size())) {
        if (!self->Note(subns, a.body) && a.more) {
          self->CheckRealtime(subns, prefix, std::string(LastListedKey(a.body)));
        }
      }
      self->Done();
    });
  }

  // Marks subns present when a listed record's hour is in the range; true if so.
  bool Note(const std::string& subns, std::string_view body) {
    LineWalker lines(body);
    std::string_view key, value;
    while (lines.Next(&key, &value)) {
      const int64_t hour = HourOfRecordKey(key);
      if (hour >= 0 && range_.Contains(hour)) {
        present_.insert(subns);
        return true;
      }
    }
    return false;
  }

  void Fail(QueryError e) {
    fanout_.Fail(std::move(e));
    Done();
  }

  void Done() {
    if (--pending_ > 0) return;
    if (fanout_.failed()) return ReplyQueryError(s_, reply_.get(), fanout_.error());
    if (!checking_) {
      checking_ = true;
      ++pending_;
      for (const std::string& subns : candidates_) Check(subns);
      return Done();
    }
    Reply();
  }

  void Reply() {
    std::string out;
    net::JsonWriter w(&out);
    w.BeginObject();
    WriteQueryHead(q_, &w);
    w.BeginArray("subtotals");
    for (const std::string& subns : present_) w.String(subns);
    w.EndArray();
    w.EndObject();
    reply_->ReplyJson(200, "OK", out);
  }

  QueryState* s_;
  std::unique_ptr<net::AsyncReply> reply_;
  QueryParams q_;
  HourRange range_;
  Fanout fanout_;
  std::string shard_key_;
  bool has_archive_ = false;
  size_t archive_ = 0, realtime_ = 0;
  std::set<std::string> candidates_, present_;
  bool checking_ = false;
  int pending_ = 0;
};

// ---------------------------------------------------------------------------------------
// /cluster
struct BackendStats {
  std::string address;
  bool up = false;
  std::string error;
  std::string data;  // the /stats data object, compact JSON
};

class ClusterRun : public std::enable_shared_from_this<ClusterRun> {
 public:
  ClusterRun(QueryState* s, std::unique_ptr<net::AsyncReply> reply) : s_(s), reply_(std::move(reply)) {}

  void Start() {
    const ClusterConfig& c = s_->config;
    realtime_.resize(c.realtime.size());
    for (size_t k = 0; k < c.realtime.size(); ++k) Ask(c.realtime[k], &realtime_[k]);
    archive_.resize(c.archive.size());
    for (size_t k = 0; k < c.archive.size(); ++k) {
      archive_[k].resize(c.archive[k].size());
      for (size_t r = 0; r < c.archive[k].size(); ++r) Ask(c.archive[k][r], &archive_[k][r]);
    }
    if (pending_ == 0) Reply();
  }

 private:
  void Ask(const net::HostPort& to, BackendStats* out) {
    out->address = to.ToString();
    ++pending_;
    auto self = shared_from_this();
    s_->client->Get(to, "/stats", kClusterTimeoutMs, [self, out](net::HttpResponse&& r) {
      if (!r.ok()) {
        out->error = r.error;
      } else if (r.status != 200) {
        out->error = "answered HTTP " + std::to_string(r.status);
      } else if (Result<std::string> data = wire::ReadDataJson(r.body); !data.ok()) {
        out->error = "/stats: " + data.status().message();
      } else {
        out->up = true;
        out->data = std::move(data).value();
      }
      if (--self->pending_ == 0) self->Reply();
    });
  }

  static void Write(net::JsonWriter& w, const BackendStats& b) {
    w.Field("address", std::string_view(b.address));
    w.Field("up", b.up);
    if (b.up) {
      w.Key("stats");
      w.Raw(b.data);
    } else {
      w.Field("error", std::string_view(b.error));
    }
  }

  void Reply() {
    std::string out;
    net::JsonWriter w(&out);
    w.BeginObject();
    w.Field("now", WallClockSeconds());
    w.BeginArray("realtime");
    for (size_t k = 0; k < realtime_.size(); ++k) {
      w.BeginObject();
      w.Field("shard", static_cast<uint64_t>(k));
      Write(w, realtime_[k]);
      w.EndObject();
    }
    w.EndArray();
    w.BeginArray("archive");
    for (size_t k = 0; k < archive_.size(); ++k) {
      w.BeginObject();
      w.Field("shard", static_cast<uint64_t>(k));
      w.BeginArray("replicas");
      for (size_t r = 0; r < archive_[k].size(); ++r) {
        w.BeginObject();
        w.Field("replica", static_cast<uint64_t>(r));
        Write(w, archive_[k][r]);
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    reply_->ReplyJson(200, "OK", out);
  }

  QueryState* s_;
  std::unique_ptr<net::AsyncReply> reply_;
  std::vector<BackendStats> realtime_;
  std::vector<std::vector<BackendStats>> archive_;
  int pending_ = 0;
};

}  // namespace

void HandleKeys(QueryState* s, net::Request& r) {
  if (!AdmitQuery(s, r)) return;
  ++s->keys_requests;
  QueryError e;
  if (!CheckParamNames(r.params(), "/keys", {"ns", "prefix", "limit"}, &e)) return ReplyQueryError(s, &r, e);
  std::string ns;
  if (!NamespaceParam(r, &ns, &e)) return ReplyQueryError(s, &r, e);
  const std::string_view prefix = r.Param("prefix").value_or(std::string_view());
  if (prefix.size() > kMaxUserKeySize) {
    return ReplyQueryError(
        s, &r, InvalidArg("prefix", "prefix is longer than " + std::to_string(kMaxUserKeySize) + " bytes"));
  }
  int64_t limit = 0;
  if (!IntParam(r, "limit", 1, kMaxKeysLimit, kDefaultKeysLimit, &limit, &e)) {
    return ReplyQueryError(s, &r, e);
  }
  std::make_shared<KeysRun>(s, r.Defer(), std::move(ns), std::string(prefix), static_cast<size_t>(limit))
      ->Start();
}

void HandleSubtotals(QueryState* s, net::Request& r) {
  if (!AdmitQuery(s, r)) return;
  ++s->subtotals_requests;
  QueryParams q;
  QueryError e;
  if (!ParseQueryParams(QueryKind::kSubtotals, r.params(), WallClockSeconds(), &q, &e)) {
    return ReplyQueryError(s, &r, e);
  }
  // units=-1 (the default): every hour up to the reference bucket's end.
  Result<std::vector<Bucket>> buckets =
      MakeBuckets(q.unit, q.tz, q.reference_ts, q.units == kUnitsBackToFirst ? 1 : q.units);
  if (!buckets.ok()) return ReplyQueryError(s, &r, InvalidArg("timezone", buckets.status().message()));
  CutToRange(q, &buckets.value());
  HourRange range = RangeOfBuckets(*buckets);
  if (q.units == kUnitsBackToFirst) range.start = kYmdhMinTs;
  std::make_shared<SubtotalsRun>(s, r.Defer(), std::move(q), range)->Start();
}

void HandleCluster(QueryState* s, net::Request& r) {
  if (!AdmitQuery(s, r)) return;
  ++s->cluster_requests;
  if (QueryError e; !CheckParamNames(r.params(), "/cluster", {}, &e)) return ReplyQueryError(s, &r, e);
  std::make_shared<ClusterRun>(s, r.Defer())->Start();
}

void HandleTimezones(QueryState* s, net::Request& r) {
  if (!AdmitQuery(s, r)) return;
  ++s->timezones_requests;
  if (QueryError e; !CheckParamNames(r.params(), "/timezones", {}, &e)) return ReplyQueryError(s, &r, e);
  std::string out;
  net::JsonWriter w(&out);
  w.BeginObject();
  w.BeginArray("zones");
  for (const std::string& name : UsableZoneNames()) w.String(name);
  w.EndArray();
  w.Field("min_offset", int64_t{-14});
  w.Field("max_offset", int64_t{14});
  w.EndObject();
  r.ReplyJson(200, "OK", out);
}

}  // namespace clickatron
