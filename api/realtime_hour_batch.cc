#include "api/realtime_hour_batch.h"

#include <algorithm>
#include <numeric>

#include "base/clip.h"
#include "keyformat/ymdh.h"
#include "net/query.h"

namespace clickatron {

namespace {

// The asks' indexes ordered by prefix, then span start: asks of one prefix lie together.
std::vector<size_t> ByPrefix(const std::vector<HourAsk>& asks) {
  std::vector<size_t> order(asks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (asks[a].prefix != asks[b].prefix) return asks[a].prefix < asks[b].prefix;
    return asks[a].span.start < asks[b].span.start;
  });
  return order;
}

}  // namespace

std::vector<std::string> BatchMgetPaths(const std::vector<HourAsk>& asks, size_t max_bytes, size_t max_keys) {
  MgetPathBuilder paths(max_bytes, max_keys);
  const std::vector<size_t> order = ByPrefix(asks);
  std::string encoded;
  for (size_t i = 0; i < order.size();) {
    const std::string& prefix = asks[order[i]].prefix;
    encoded.clear();
    net::PercentEncode(prefix, &encoded);  // YMDH tokens (0-9a-v) need no encoding
    // The union of this prefix's spans, sorted by start: each hour once.
    int64_t next = INT64_MIN;  // the first hour not yet added
    for (; i < order.size() && asks[order[i]].prefix == prefix; ++i) {
      const HourRange& span = asks[order[i]].span;
      for (int64_t hour = std::max(span.start, next); hour < span.end; hour += kSecondsPerHour) {
        Result<Ymdh> token = EncodeYmdh(hour);
        if (token.ok()) paths.Add(encoded, token->view());  // else unreachable: clamped spans
      }
      next = std::max(next, span.end);
    }
  }
  return paths.Take();
}

Status SplitBatchAnswer(std::string_view body, const std::vector<HourAsk>& asks,
                        std::vector<std::string>* bodies) {
  bodies->assign(asks.size(), std::string());
  const std::vector<size_t> order = ByPrefix(asks);
  // Each ask's first and last token: tokens sort as their hours do, so a key of the ask's
  // prefix is one of its keys exactly when its token lies between them.
  std::vector<Ymdh> first(asks.size()), last(asks.size());
  for (size_t i = 0; i < asks.size(); ++i) {
    Result<Ymdh> a = EncodeYmdh(asks[i].span.start), b = EncodeYmdh(asks[i].span.end - kSecondsPerHour);
    if (!a.ok() || !b.ok()) return Status::Error("realtime hour batch: an ask's hours are out of range");
    first[i] = a.value();
    last[i] = b.value();
  }
  LineWalker lines(body);
  std::string_view key, value;
  while (lines.Next(&key, &value)) {
    bool asked = false;
    if (key.size() > kYmdhSize) {
      const std::string_view prefix = key.substr(0, key.size() - kYmdhSize);
      const std::string_view token = key.substr(key.size() - kYmdhSize);
      auto at = std::lower_bound(order.begin(), order.end(), prefix,
                                 [&](size_t i, std::string_view p) { return asks[i].prefix < p; });
      for (; at != order.end() && asks[*at].prefix == prefix; ++at) {
        if (token < first[*at].view() || token > last[*at].view()) continue;
        std::string& out = (*bodies)[*at];
        out.append(key).append(1, ',').append(value).append(1, '\n');
        asked = true;
      }
    }
    if (!asked) return Status::Error("realtime /mget answered key '" + Clipped(key, 200) + "', which was not asked for");
  }
  return lines.status();
}

}  // namespace clickatron
