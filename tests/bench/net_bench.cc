// Micro benchmarks of net/'s per-request work. Results: docs/benchmarks.md, section "net".
#include <benchmark/benchmark.h>

#include <string>

#include "net/json.h"
#include "base/latency.h"
#include "net/query.h"

namespace net = clickatron::net;

// A sortdb /mget with three keys, one holding an encoded hash.
static void BM_QueryParseMget(benchmark::State& state) {
  const std::string raw = "key=u%7Cjehiah&key=r.u%7Cjehiah.c3p1&key=_l%7Ch0aMB8AuNw4%3D";
  net::Query q;
  for (auto _ : state) {
    q.Parse(raw);
    benchmark::DoNotOptimize(q.params().data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QueryParseMget);

static void BM_JsonEscape(benchmark::State& state, const std::string& s) {
  std::string out;
  for (auto _ : state) {
    out.clear();
    net::AppendJsonString(s, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(s.size()));
}
BENCHMARK_CAPTURE(BM_JsonEscape, ascii, std::string("http://www.facebook.com/some/path?with=query&and=more"));
BENCHMARK_CAPTURE(BM_JsonEscape, utf8,
                  std::string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 na\xc3\xafve r\xc3\xa9sum\xc3\xa9"));

// A /series answer of 100 buckets.
static void BM_JsonWriterSeries100(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    out.clear();
    net::JsonWriter w(&out);
    w.BeginObject();
    w.Key("series");
    w.BeginArray();
    for (int i = 0; i < 100; ++i) {
      w.BeginObject();
      w.Key("dt");
      w.Int(1332633600 - i * 86400);
      w.Key("value");
      w.Int(i * 37);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_JsonWriterSeries100);

static void BM_LatencyRecord(benchmark::State& state) {
  clickatron::LatencyHistogram h;
  uint64_t v = 1;
  for (auto _ : state) {
    h.Record(v);
    v = (v * 7 + 13) & 0xffff;
  }
}
BENCHMARK(BM_LatencyRecord);

static void BM_MonotonicMicros(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(clickatron::MonotonicMicros());
}
BENCHMARK(BM_MonotonicMicros);

BENCHMARK_MAIN();
