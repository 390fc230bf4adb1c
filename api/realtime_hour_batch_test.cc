#include "api/realtime_hour_batch.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "keyformat/ymdh.h"
#include "net/query.h"

namespace clickatron {
namespace {

constexpr int64_t kH = 3600;
constexpr int64_t kDay0 = 1333238400;  // 2012-04-01 00:00 UTC

std::string Token(int64_t hour) { return std::string(EncodeYmdh(hour)->view()); }

// What a realtime /mget answers for one path: a `key,value` line per key it holds, in the
// order asked (docs/api.md#realtime-get-mget-fwmatch).
std::string Answer(const std::string& path, const std::map<std::string, std::string>& store) {
  std::string body;
  std::string_view rest = std::string_view(path).substr(std::string_view("/mget?").size());
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    std::string_view param = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    EXPECT_EQ(param.substr(0, 4), "key=");
    std::string key;
    EXPECT_TRUE(net::PercentDecode(param.substr(4), true, &key).ok());
    auto it = store.find(key);
    if (it != store.end()) body += key + "," + it->second + "\n";
  }
  return body;
}

std::string AnswerAll(const std::vector<std::string>& paths, const std::map<std::string, std::string>& store) {
  std::string body;
  for (const std::string& p : paths) body += Answer(p, store);
  return body;
}

TEST(RealtimeHourBatch, PathsAskEachKeyOnceGroupedByPrefixHoursAscending) {
  const std::vector<HourAsk> asks = {
      {"b|y.", {kDay0 + 2 * kH, kDay0 + 4 * kH}},
      {"a|x.", {kDay0, kDay0 + 2 * kH}},
      {"b|y.", {kDay0 + 1 * kH, kDay0 + 3 * kH}},  // overlaps the first: hours 2 once
  };
  EXPECT_EQ(BatchMgetPaths(asks, 6000, 96),
            std::vector<std::string>{"/mget?key=a%7Cx." + Token(kDay0) + "&key=a%7Cx." + Token(kDay0 + kH) +
                                     "&key=b%7Cy." + Token(kDay0 + kH) + "&key=b%7Cy." + Token(kDay0 + 2 * kH) +
                                     "&key=b%7Cy." + Token(kDay0 + 3 * kH)});
  // At most max_keys keys a path, and at most max_bytes.
  std::vector<std::string> by_keys = BatchMgetPaths(asks, 6000, 2);
  ASSERT_EQ(by_keys.size(), 3u);
  EXPECT_EQ(by_keys[2], "/mget?key=b%7Cy." + Token(kDay0 + 3 * kH));
  for (const std::string& p : BatchMgetPaths(asks, 40, 96)) EXPECT_LE(p.size(), 40u) << p;
  EXPECT_EQ(BatchMgetPaths(asks, 40, 96).size(), 3u);  // two 12-byte keys fit in 40 bytes
}

TEST(RealtimeHourBatch, EachAskGetsExactlyItsLines) {
  const std::vector<HourAsk> asks = {
      {"b|y.", {kDay0 + 2 * kH, kDay0 + 4 * kH}},
      {"a|x.", {kDay0, kDay0 + 2 * kH}},
      {"b|y.", {kDay0 + 1 * kH, kDay0 + 3 * kH}},
  };
  const std::string body = "a|x." + Token(kDay0 + kH) + ",5\n" + "b|y." + Token(kDay0 + kH) + ",1\n" +
                           "b|y." + Token(kDay0 + 2 * kH) + ",2\n" + "b|y." + Token(kDay0 + 3 * kH) + ",3\n";
  std::vector<std::string> bodies;
  ASSERT_TRUE(SplitBatchAnswer(body, asks, &bodies).ok());
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[0], "b|y." + Token(kDay0 + 2 * kH) + ",2\n" + "b|y." + Token(kDay0 + 3 * kH) + ",3\n");
  EXPECT_EQ(bodies[1], "a|x." + Token(kDay0 + kH) + ",5\n");
  EXPECT_EQ(bodies[2], "b|y." + Token(kDay0 + kH) + ",1\n" + "b|y." + Token(kDay0 + 2 * kH) + ",2\n");
  ASSERT_TRUE(SplitBatchAnswer("", asks, &bodies).ok());
  EXPECT_EQ(bodies, std::vector<std::string>(3));
}

TEST(RealtimeHourBatch, ALineNotAskedForIsAnError) {
  const std::vector<HourAsk> asks = {{"a|x.", {kDay0, kDay0 + 2 * kH}}};
  std::vector<std::string> bodies;
  Status outside = SplitBatchAnswer("a|x." + Token(kDay0 + 2 * kH) + ",1\n", asks, &bodies);
  EXPECT_EQ(outside.message(), "realtime /mget answered key 'a|x." + Token(kDay0 + 2 * kH) +
                                   "', which was not asked for");
  EXPECT_FALSE(SplitBatchAnswer("a|z." + Token(kDay0) + ",1\n", asks, &bodies).ok());
  EXPECT_FALSE(SplitBatchAnswer("a|x,1\n", asks, &bodies).ok());
  EXPECT_EQ(SplitBatchAnswer("no comma\n", asks, &bodies).message(), "backend line 'no comma' is not key,value");
}

// Property: for random asks (shared prefixes, overlapping spans, prefixes needing percent
// encoding) against a random store, each ask's part of the batch's answers is byte for
// byte the answer of its own /mget — whatever the path bounds.
TEST(RealtimeHourBatch, BatchedAnswersEqualAnswersAskByAsk) {
  std::mt19937_64 rng(20261126);
  const std::vector<std::string> prefixes = {"a|x.", "a|x.y.", "b|%20&=.", "c|long-key-name-of-a-user.", "a|"};
  for (int round = 0; round < 2000; ++round) {
    std::map<std::string, std::string> store;
    for (const std::string& p : prefixes) {
      for (int64_t h = 0; h < 72; ++h) {
        if (rng() % 3 == 0) store[p + Token(kDay0 + h * kH)] = std::to_string(rng() % 1000);
      }
    }
    std::vector<HourAsk> asks;
    const size_t n = 1 + rng() % 12;
    for (size_t i = 0; i < n; ++i) {
      const int64_t from = int64_t(rng() % 60), hours = 1 + int64_t(rng() % 30);
      asks.push_back(HourAsk{prefixes[rng() % prefixes.size()],
                             {kDay0 + from * kH, kDay0 + std::min<int64_t>(from + hours, 72) * kH}});
    }
    const size_t max_bytes = 40 + rng() % 2000, max_keys = 1 + rng() % 96;
    std::vector<std::string> bodies;
    ASSERT_TRUE(SplitBatchAnswer(AnswerAll(BatchMgetPaths(asks, max_bytes, max_keys), store), asks, &bodies).ok());
    for (size_t i = 0; i < n; ++i) {
      const std::string alone = AnswerAll(BatchMgetPaths({asks[i]}, max_bytes, max_keys), store);
      ASSERT_EQ(bodies[i], alone) << "round " << round << " ask " << i;
    }
  }
}

}  // namespace
}  // namespace clickatron
