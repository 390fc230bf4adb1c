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

// What the API does with one event's query string: parse, validate, append its lines to
// payload (buffers reused across calls, as the server's are).
struct EventEncoder {
  net::Query q;
  Event e;
  IncrError err;
  std::string payload, scratch;

  void Encode(std::string_view qs, benchmark::State& state) {
    (void)q.Parse(qs);
    if (!ParseIncrEvent(q.params(), kNow, &e, &err)) state.SkipWithError(err.message.c_str());
    AppendEventLines(e, 2, &payload, &scratch);
  }
};

// One GET /incr as the server handles it: parse the query, validate, encode its lines.
void BM_SingleEvent(benchmark::State& state, const std::string& subs) {
  const std::string qs = "ns=u&key=user12345&ts=" + std::to_string(kNow) + subs;
  EventEncoder enc;
  for (auto _ : state) {
    enc.payload.clear();
    enc.Encode(qs, state);
    benchmark::DoNotOptimize(enc.payload.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_SingleEvent, plain, std::string("&sub=country:US&sub=ref:r17"));
BENCHMARK_CAPTURE(BM_SingleEvent, hashed_referrer,
                  std::string("&sub=country:US&sub=ref:http%3A%2F%2Fexample.com%2Fpage17"));

// A 1000-line POST body as the server walks it: split lines, parse, validate, encode.
void BM_Batch1000(benchmark::State& state) {
  std::string body;
  for (int i = 0; i < 1000; i++) {
    body += "ns=u&key=user" + std::to_string(i * 7919 % 100000) + "&sub=country:C" + std::to_string(i % 20) +
            "&sub=ref:" + (i % 10 == 0 ? "http%3A%2F%2Fexample.com%2Fp" + std::to_string(i % 200) : "r" + std::to_string(i % 200)) + "\n";
  }
  EventEncoder enc;
  for (auto _ : state) {
    enc.payload.clear();
    std::string_view rest = body;
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      enc.Encode(rest.substr(0, nl), state);
      rest.remove_prefix(nl + 1);
    }
    benchmark::DoNotOptimize(enc.payload.data());
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
