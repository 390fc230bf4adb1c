// The /incr hot path without the network: query parse, validation and encoding into the
// oplog payload, for one event and for a 1000-event POST body; and what safe retries
// (docs/api-write.md#safe-retries) add: the header lookup every request pays, and the work of
// a keyed request, new or replayed. Run:
// build/apiw-release/bin/api_write_bench. Figures: docs/benchmarks.md ("api: write path").
#include <benchmark/benchmark.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sys/queue.h>

#include <ctime>
#include <memory>
#include <string>

#include "api/idempotency_index.h"
#include "api/idempotency_key.h"
#include "api/incr_event.h"
#include "api/incr_payload.h"
#include "keyformat/event.h"
#include "net/query.h"
#include "wire/headers.h"

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

// What a request without Idempotency-Key pays for the feature: looking the header up among
// the headers a client sends (curl's three here; wrk sends one).
void BM_KeyHeaderAbsent(benchmark::State& state) {
  evkeyvalq headers;
  TAILQ_INIT(&headers);
  evhttp_add_header(&headers, "Host", "127.0.0.1:8000");
  evhttp_add_header(&headers, "User-Agent", "curl/7.88.1");
  evhttp_add_header(&headers, "Accept", "*/*");
  for (auto _ : state) benchmark::DoNotOptimize(evhttp_find_header(&headers, wire::kIdempotencyKeyHeader));
  evhttp_clear_headers(&headers);
}
BENCHMARK(BM_KeyHeaderAbsent);

// A new keyed single-event request, beyond the unkeyed work: the key checked, the request's
// digest, the index looked up and entered (the entries are dropped every 2^16 requests, off
// the clock, so the index stays at the size of a busy day's), the stamp line appended.
void BM_KeyedNew(benchmark::State& state) {
  const std::string qs = "ns=u&key=user12345&ts=" + std::to_string(kNow) + "&sub=country:US&sub=ref:r17";
  auto index = std::make_unique<IdempotencyIndex>(SIZE_MAX);
  std::string key = "8e03978e-40d5-43e8-bc93-000000000000", payload;
  uint64_t n = 0;
  for (auto _ : state) {
    if (++n % 65536 == 0) {
      state.PauseTiming();
      index = std::make_unique<IdempotencyIndex>(SIZE_MAX);
      state.ResumeTiming();
    }
    const std::string digits = std::to_string(n);
    key.replace(key.size() - digits.size(), digits.size(), digits);
    Result<std::string_view> k = ParseIdempotencyKey(key);
    const RequestDigest digest = DigestIncrRequest({}, qs);
    if (index->Find(*k) != nullptr || !index->HasRoom(*k)) state.SkipWithError("key held");
    payload.clear();
    AppendIdempotencyLine(IdempotencyStamp{kNow, 1, digest, *k}, &payload);
    index->Stored(index->Insert(IdempotencyIndex::Entry{*k, digest, kNow, 1, n,
                                                        IdempotencyIndex::State::kInFlight}));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KeyedNew);

// A replayed request: the key checked, the digest, the entry found and compared (1M keys held).
void BM_KeyedReplay(benchmark::State& state) {
  const std::string qs = "ns=u&key=user12345&ts=" + std::to_string(kNow) + "&sub=country:US&sub=ref:r17";
  IdempotencyIndex index(SIZE_MAX);
  const RequestDigest digest = DigestIncrRequest({}, qs);
  for (uint64_t i = 0; i < 1000000; i++) {
    const std::string key = "8e03978e-40d5-43e8-bc93-" + std::to_string(100000000000 + i);
    index.Insert(IdempotencyIndex::Entry{key, digest, kNow, 1, i + 1, IdempotencyIndex::State::kStored});
  }
  uint64_t n = 0, found = 0;
  for (auto _ : state) {
    const std::string key = "8e03978e-40d5-43e8-bc93-" + std::to_string(100000000000 + (n++ * 7919) % 1000000);
    Result<std::string_view> k = ParseIdempotencyKey(key);
    const IdempotencyIndex::Entry* e = index.Find(*k);
    found += e != nullptr && e->digest == DigestIncrRequest({}, qs);
  }
  if (found != n) state.SkipWithError("a key was not found");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KeyedReplay);

}  // namespace
}  // namespace clickatron

BENCHMARK_MAIN();
