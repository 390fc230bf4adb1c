// clickatron-archive micro-benchmarks: the lookup itself, without HTTP — exact
// key hits and misses, a 10-key mget and a prefix scan over a generated sorted file of
// realistic archive records, plus decoding a request's keys. The HTTP-level load test is
// tests/bench/archive_load.sh; results in docs/benchmarks.md.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "archive/db_file.h"
#include "archive/key_params.h"

namespace {

using clickatron::archive::DbFile;
using clickatron::archive::DbFileOptions;
using clickatron::archive::KeyParams;
using clickatron::archive::Line;

// 1M lines shaped like the archive's: `c.u|KEY.YMDH,US:3 ...` subtotals and `u|KEY` totals.
struct Fixture {
  std::string path = "/tmp/clickatron_archive_bench.csv";
  std::shared_ptr<const DbFile> db;
  std::vector<std::string> keys;
  std::vector<std::string> prefixes;

  Fixture() {
    std::mt19937_64 rng(42);
    const char* alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::vector<std::pair<std::string, std::string>> records;
    while (records.size() < 1'000'000) {
      std::string user;
      for (int i = 0, n = 3 + static_cast<int>(rng() % 9); i < n; ++i) user += alpha[rng() % 62];
      int hours = 1 + static_cast<int>(rng() % 40);
      std::string total;
      for (int h = 0; h < hours; ++h) {
        std::string ymdh = "c3";
        ymdh += "0123456789abcdefghijklmnopqrstuv"[1 + h % 28];
        ymdh += "0123456789abcdefghijklmnopqrstuv"[h % 24];
        records.emplace_back("c.u|" + user + "." + ymdh, "DE:1 None:5 US:7");
        total += (h ? " " : "") + ymdh + ":13";
      }
      records.emplace_back("u|" + user, total);
    }
    std::sort(records.begin(), records.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    records.erase(std::unique(records.begin(), records.end(),
                              [](const auto& a, const auto& b) { return a.first == b.first; }),
                  records.end());
    {
      std::ofstream out(path, std::ios::binary);
      for (const auto& [k, v] : records) out << k << ',' << v << '\n';
    }
    db = DbFile::Open(path, DbFileOptions{}).value();
    for (int i = 0; i < 100'000; ++i) {
      const std::string& k = records[rng() % records.size()].first;
      keys.push_back(k);
      if (k.starts_with("u|")) prefixes.push_back("c." + k + ".");
    }
  }
  ~Fixture() { unlink(path.c_str()); }
};

Fixture& F() {
  static Fixture f;
  return f;
}

void BM_GetHit(benchmark::State& state) {
  Fixture& f = F();
  size_t i = 0;
  Line line;
  for (auto _ : state) {
    bool found = f.db->Find(f.keys[i++ % f.keys.size()], &line);
    benchmark::DoNotOptimize(found);
  }
}
BENCHMARK(BM_GetHit);

void BM_GetMiss(benchmark::State& state) {
  Fixture& f = F();
  std::vector<std::string> misses;
  for (size_t i = 0; i < 10'000; ++i) misses.push_back(f.keys[i] + "~");
  size_t i = 0;
  Line line;
  for (auto _ : state) {
    bool found = f.db->Find(misses[i++ % misses.size()], &line);
    benchmark::DoNotOptimize(found);
  }
}
BENCHMARK(BM_GetMiss);

void BM_Mget10(benchmark::State& state) {
  Fixture& f = F();
  std::string out;
  size_t i = 0;
  for (auto _ : state) {
    out.clear();
    for (int k = 0; k < 10; ++k) {
      Line line;
      if (f.db->Find(f.keys[i++ % f.keys.size()], &line)) out.append(line.whole);
    }
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Mget10);

void BM_Mget10Batched(benchmark::State& state) {
  Fixture& f = F();
  std::string out;
  std::vector<std::string_view> views(f.keys.begin(), f.keys.end());
  size_t i = 0;
  for (auto _ : state) {
    out.clear();
    if (i + 10 > views.size()) i = 0;
    f.db->FindEach(views.data() + i, 10, [&out](size_t, const Line& l) { out.append(l.whole); });
    i += 10;
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Mget10Batched);

void BM_Fwmatch(benchmark::State& state) {
  Fixture& f = F();
  std::string out;
  size_t i = 0, lines = 0;
  for (auto _ : state) {
    out.clear();
    lines += f.db->ForEachPrefixed(f.prefixes[i++ % f.prefixes.size()], 10000,
                                   [&out](const Line& l) { out.append(l.whole); });
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["lines/op"] = benchmark::Counter(static_cast<double>(lines),
                                                  benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_Fwmatch);

void BM_ParseMget10Query(benchmark::State& state) {
  std::string raw;
  for (int k = 0; k < 10; ++k) raw += (k ? "&" : "") + std::string("key=c.u%7Cab+cd%3D.c3hh");
  KeyParams params;
  for (auto _ : state) {
    bool ok = params.Parse(raw, KeyParams::Mode::kEveryK);
    benchmark::DoNotOptimize(ok);
  }
}
BENCHMARK(BM_ParseMget10Query);

void BM_OpenAndVerify1M(benchmark::State& state) {
  Fixture& f = F();
  for (auto _ : state) {
    auto db = DbFile::Open(f.path, DbFileOptions{});
    benchmark::DoNotOptimize(db.ok());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(f.db->size()));
}
BENCHMARK(BM_OpenAndVerify1M)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
