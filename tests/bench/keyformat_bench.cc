// keyformat hot paths. Run: build/release/bin/keyformat_bench
// Figures and the machine: docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "keyformat/columns.h"
#include "keyformat/event.h"
#include "keyformat/records.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

std::vector<int64_t> RandomTimes(size_t n) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int64_t> ts(kYmdhMinTs, kYmdhMaxTs);
  std::vector<int64_t> out(n);
  for (auto& t : out) t = ts(rng);
  return out;
}

void BM_EncodeYmdh(benchmark::State& state) {
  const auto times = RandomTimes(4096);
  size_t i = 0;
  for (auto _ : state) {
    Result<Ymdh> token = EncodeYmdh(times[i++ & 4095]);
    benchmark::DoNotOptimize(token);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeYmdh);

void BM_DecodeYmdh(benchmark::State& state) {
  std::vector<Ymdh> tokens;
  for (int64_t t : RandomTimes(4096)) tokens.push_back(EncodeYmdh(t).value());
  size_t i = 0;
  for (auto _ : state) {
    Result<int64_t> ts = DecodeYmdh(tokens[i++ & 4095].view());
    benchmark::DoNotOptimize(ts);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeYmdh);

// A total and a subtotal key into a reused buffer, as the API does per event.
void BM_BuildKeys(benchmark::State& state) {
  const auto times = RandomTimes(4096);
  std::string buf;
  buf.reserve(128);
  size_t i = 0;
  for (auto _ : state) {
    const Ymdh y = EncodeYmdh(times[i++ & 4095]).value();
    buf.clear();
    AppendTotalKey(&buf, "u", "jehiah", y.view());
    benchmark::DoNotOptimize(buf.data());
    buf.clear();
    AppendSubtotalKey(&buf, "c", "u", "jehiah", "US", y.view());
    benchmark::DoNotOptimize(buf.data());
  }
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_BuildKeys);

void BM_StoredKeyHashed(benchmark::State& state) {
  const std::string url = "http://www.example.com/some/long/path?with=query&and=more";
  std::string buf;
  for (auto _ : state) {
    buf.clear();
    AppendStoredKey(url, &buf);
    benchmark::DoNotOptimize(buf.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StoredKeyHashed);

void BM_EncodeEvent(benchmark::State& state) {
  Event e;
  e.ns = "u";
  e.key = "jehiah";
  e.ts = 1333314000;
  e.subs = {{"c", "US"}, {"r", "http://www.facebook.com/"}};
  std::vector<RealtimeRecord> records;
  for (auto _ : state) {
    records.clear();
    EncodeEvent(e, &records);
    benchmark::DoNotOptimize(records.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeEvent);

// The value of a 40-column total record, e.g. "c3b4:1 c3b5:17 …" over 40 hours.
std::string FortyColumnTotal(std::mt19937_64& rng) {
  std::string v;
  int64_t t = 1330560000 + int64_t(rng() % 1000) * 3600;
  for (int c = 0; c < 40; c++) {
    t += 3600 * int64_t(1 + rng() % 5);
    AppendColumn(&v, 0, EncodeYmdh(t)->view(), int64_t(1 + rng() % 5000));
  }
  return v;
}

void BM_ParseFortyColumnTotal(benchmark::State& state) {
  std::mt19937_64 rng(3);
  std::vector<std::string> values;
  size_t bytes = 0;
  for (int i = 0; i < 1024; i++) {
    values.push_back(FortyColumnTotal(rng));
    bytes += values.back().size();
  }
  for (auto _ : state) {
    int64_t sum = 0;
    for (const std::string& v : values) {
      ColumnReader reader(v);
      Column col;
      while (reader.Next(&col)) sum += col.count;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  state.SetItemsProcessed(int64_t(state.iterations()) * 1024 * 40);
}
BENCHMARK(BM_ParseFortyColumnTotal);

void BM_ParseRealtimeKey(benchmark::State& state) {
  const std::string key = "r.u|jehiah.h0aMB8AuNw4=.c41l";
  for (auto _ : state) {
    Result<ParsedKey> p = ParseRealtimeKey(key);
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseRealtimeKey);

}  // namespace
}  // namespace clickatron

BENCHMARK_MAIN();
