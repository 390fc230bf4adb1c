// The /incr hot path without the network: query parse, validation and encoding into the
// oplog payload, for one event and for a 1000-event POST body. Run:
// build/apiw-release/bin/api_write_bench. Figures: docs/benchmarks.md ("api: write path").
#include <benchmark/benchmark.h>

#include <ctime>
#include <string>

#include "api/incr_event.h"
#include "api/incr_payload.h"
#include "keyformat/event.h"
#include "net/query.h"

namespace clickatron {
namespace {

const int64_t kNow = int64_t(std::time(nullptr));

void BM_SingleEvent(benchmark::State& state) {
  const std::string qs = "ns=u&key=user12345&ts=" + std::to_string(kNow) + "&sub=country:US&sub=ref:r17";
  net::Query q;
  Event e;
  IncrError err;
  std::string payload, scratch;
  for (auto _ : state) {
    payload.clear();
    (void)q.Parse(qs);
    if (!ParseIncrEvent(q.params(), kNow, &e, &err)) state.SkipWithError(err.message.c_str());
    AppendEventLines(e, 2, &payload, &scratch);
    benchmark::DoNotOptimize(payload.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SingleEvent);

void BM_SingleEventHashedReferrer(benchmark::State& state) {
  const std::string qs = "ns=u&key=user12345&ts=" + std::to_string(kNow) +
                         "&sub=country:US&sub=ref:http%3A%2F%2Fexample.com%2Fpage17";
  net::Query q;
  Event e;
  IncrError err;
  std::string payload, scratch;
  for (auto _ : state) {
    payload.clear();
    (void)q.Parse(qs);
    if (!ParseIncrEvent(q.params(), kNow, &e, &err)) state.SkipWithError(err.message.c_str());
    AppendEventLines(e, 2, &payload, &scratch);
    benchmark::DoNotOptimize(payload.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SingleEventHashedReferrer);

// A 1000-line POST body as the server walks it: split lines, parse, validate, encode.
void BM_Batch1000(benchmark::State& state) {
  std::string body;
  for (int i = 0; i < 1000; i++) {
    body += "ns=u&key=user" + std::to_string(i * 7919 % 100000) + "&sub=country:C" + std::to_string(i % 20) +
            "&sub=ref:" + (i % 10 == 0 ? "http%3A%2F%2Fexample.com%2Fp" + std::to_string(i % 200) : "r" + std::to_string(i % 200)) + "\n";
  }
  net::Query q;
  Event e;
  IncrError err;
  std::string payload, scratch;
  for (auto _ : state) {
    payload.clear();
    std::string_view rest = body;
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      (void)q.Parse(rest.substr(0, nl));
      rest.remove_prefix(nl + 1);
      if (!ParseIncrEvent(q.params(), kNow, &e, &err)) state.SkipWithError(err.message.c_str());
      AppendEventLines(e, 2, &payload, &scratch);
    }
    benchmark::DoNotOptimize(payload.data());
  }
  state.SetItemsProcessed(state.iterations() * 1000);
  state.SetBytesProcessed(int64_t(state.iterations() * body.size()));
}
BENCHMARK(BM_Batch1000);

// The sender's side: walking a payload's lines (one shard's sender reads every line).
void BM_PayloadRead(benchmark::State& state) {
  std::string payload, scratch;
  net::Query q;
  Event e;
  IncrError err;
  for (int i = 0; i < 1000; i++) {
    (void)q.Parse("ns=u&key=user" + std::to_string(i) + "&sub=country:US&sub=ref:r1");
    (void)ParseIncrEvent(q.params(), kNow, &e, &err);
    AppendEventLines(e, 2, &payload, &scratch);
  }
  uint64_t lines = 0;
  for (auto _ : state) {
    PayloadReader r(payload);
    PayloadLine line;
    while (r.Next(&line)) lines++;
    benchmark::DoNotOptimize(lines);
  }
  state.SetItemsProcessed(int64_t(lines));
  state.SetBytesProcessed(int64_t(state.iterations() * payload.size()));
}
BENCHMARK(BM_PayloadRead);

}  // namespace
}  // namespace clickatron

BENCHMARK_MAIN();
