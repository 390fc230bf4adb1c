#include "api/query_namespaces.h"

#include <memory>
#include <set>
#include <string>
#include <utility>

#include "api/fanout.h"
#include "api/key_listing.h"
#include "api/query_listing.h"
#include "keyformat/records.h"
#include "keyformat/stored_key.h"
#include "net/json.h"
#include "net/request.h"

namespace clickatron {

namespace {

class NamespacesRun : public std::enable_shared_from_this<NamespacesRun> {
 public:
  NamespacesRun(QueryState* s, std::unique_ptr<net::AsyncReply> reply)
      : s_(s), reply_(std::move(reply)), fanout_(s->options) {}

  void Start() {
    ++pending_;  // held while the chains start, so none finishes early
    for (char c : kNamespaceStarts) {
      for (size_t k = 0; k < s_->config.archive.size(); ++k) Discover(true, k, std::string(1, c), "");
      for (size_t k = 0; k < s_->config.realtime.size(); ++k) Discover(false, k, std::string(1, c), "");
    }
    Done();
  }

 private:
  // The first part of the next key starting with `start` after `after` on one shard: one
  // part per request, then on to the next.
  void Discover(bool archive, size_t shard, std::string start, std::string after) {
    if (!fanout_.Spend(1, 0)) return;
    ++pending_;
    auto self = shared_from_this();
    BackendCallback done = [self, archive, shard, start, after](BackendAnswer&& a) {
      self->OnPart(archive, shard, start, after, std::move(a));
    };
    const std::string path = ListingPath(start, 1, after);
    if (archive) {
      FetchArchive(s_, shard, path, -1, std::move(done));
    } else {
      FetchRealtime(s_, shard, path, std::move(done));
    }
  }

  void OnPart(bool archive, size_t shard, const std::string& start, const std::string& after, BackendAnswer&& a) {
    if (!a.ok) {
      fanout_.Fail(BackendUnavailable(archive, a.error));
    } else if (fanout_.Spend(0, a.body.size())) {
      LineWalker lines(a.body);
      std::string_view key, value;
      if (lines.Next(&key, &value)) {
        char sep = '\0';
        std::string_view part = FirstPart(key, &sep);
        // A server that ignored after= would list the same key for ever.
        if (sep == '\0' || (!after.empty() && key <= after)) {
          fanout_.Fail(BackendDataError(std::string(archive ? "archive" : "realtime") + " shard " +
                                        std::to_string(shard) + " listed '" + std::string(key) + "' for '" +
                                        start + "' after '" + after + "'"));
        } else {
          if (IsNamespace(part)) (sep == '|' ? namespaces_ : subtotals_).emplace(part);
          Discover(archive, shard, start, AfterPart(part, sep));
        }
      }
    }
    Done();
  }

  void Done() {
    if (--pending_ > 0) return;
    if (fanout_.failed()) return ReplyQueryError(s_, reply_.get(), fanout_.error());
    std::string out;
    net::JsonWriter w(&out);
    w.BeginObject();
    w.BeginArray("namespaces");
    for (const std::string& ns : namespaces_) w.String(ns);
    w.EndArray();
    w.BeginArray("subtotals");
    for (const std::string& ns : subtotals_) w.String(ns);
    w.EndArray();
    w.BeginObject("display_names");
    for (const auto& [ns, name] : s_->config.display_names) w.Field(ns, std::string_view(name));
    w.EndObject();
    w.BeginArray("country_codes");
    for (const std::string& ns : s_->config.country_codes) w.String(ns);
    w.EndArray();
    w.EndObject();
    reply_->ReplyJson(200, "OK", out);
  }

  QueryState* s_;
  std::unique_ptr<net::AsyncReply> reply_;
  Fanout fanout_;
  std::set<std::string> namespaces_, subtotals_;  // byte order
  int pending_ = 0;
};

}  // namespace

void HandleNamespaces(QueryState* s, net::Request& r) {
  if (!AdmitQuery(s, r)) return;
  ++s->namespaces_requests;
  if (QueryError e; !CheckParamNames(r.params(), "/namespaces", {}, &e)) return ReplyQueryError(s, &r, e);
  std::make_shared<NamespacesRun>(s, r.Defer())->Start();
}

}  // namespace clickatron
