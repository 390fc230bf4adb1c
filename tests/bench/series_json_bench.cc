// The /series answer written two ways: net/'s hand-written JsonWriter (what the API runs,
// through SeriesJson) and rapidjson's Writer, for a 30-day and a 720-hour series. Every
// variant that returns the answer is checked to give SeriesJson's bytes before it is timed.
//
//   cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DCLICKATRON_BENCH=ON
//   cmake --build build/release --target series_json_bench
//   build/release/bin/series_json_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true --benchmark_min_time=0.2   (one command line)
//
// rapidjson's own String() writes other bytes than the API promises for unusual strings
// (\u001F in upper case, bytes that are not UTF-8 passed through raw), so the variant that
// could replace JsonWriter is BM_SeriesJsonRapidSameBytes (strings escaped by net/).
//
// The figures and the decision (the hand-written writer stays: with the same bytes rapidjson
// is not faster) are in docs/benchmarks.md#net.
#include <benchmark/benchmark.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <string>
#include <vector>

#include "api/buckets.h"
#include "api/query_params.h"
#include "api/query_series.h"
#include "net/json.h"

namespace {

using clickatron::Bucket;
using clickatron::QueryParams;
using clickatron::Unit;

struct Answer {
  QueryParams q;
  std::vector<Bucket> buckets;
  std::vector<int64_t> values;
  std::vector<clickatron::Int128> counts;  // the same, as SeriesJson takes them
};

// A series of `units` buckets of `unit` ending 2012-04-01 (UTC), with counts of mixed widths.
Answer MakeAnswer(Unit unit, int64_t units) {
  Answer a;
  a.q.ns = "u";
  a.q.key = "jehiah";
  a.q.stored_key = a.q.key;
  a.q.unit = unit;
  a.q.units = units;
  a.q.reference_ts = 1333238400;
  a.buckets = clickatron::MakeBuckets(unit, a.q.tz, a.q.reference_ts, units).value();
  uint64_t x = 88172645463325252u;
  for (size_t i = 0; i < a.buckets.size(); ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    a.values.push_back(static_cast<int64_t>(x % 100000 >> (x % 17)));
    a.counts.push_back(a.values.back());
  }
  return a;
}

// The same answer through rapidjson::Writer: what SeriesJson would be if it used it.
void RapidSeriesJson(const Answer& a, rapidjson::Writer<rapidjson::StringBuffer>* w) {
  const QueryParams& q = a.q;
  w->StartObject();
  w->Key("ns");
  w->String(q.ns.data(), static_cast<rapidjson::SizeType>(q.ns.size()));
  w->Key("key");
  w->String(q.key.data(), static_cast<rapidjson::SizeType>(q.key.size()));
  w->Key("unit");
  const std::string_view unit = clickatron::UnitName(q.unit);
  w->String(unit.data(), static_cast<rapidjson::SizeType>(unit.size()));
  w->Key("units");
  w->Int64(q.units);
  w->Key("unit_reference_ts");
  w->Int64(q.reference_ts);
  w->Key("tz_offset");
  w->Int64(q.tz_offset);
  w->Key("series");
  w->StartArray();
  for (size_t i = 0; i < a.buckets.size(); ++i) {
    w->StartObject();
    w->Key("dt");
    w->Int64(a.buckets[i].start);
    w->Key("value");
    w->Int64(a.values[i]);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

// The answer as the API hands it on: a new std::string.
std::string RapidSeriesString(const Answer& a, rapidjson::StringBuffer* buf) {
  buf->Clear();
  rapidjson::Writer<rapidjson::StringBuffer> w(*buf);
  RapidSeriesJson(a, &w);
  return std::string(buf->GetString(), buf->GetSize());
}

void BM_SeriesJsonHand(benchmark::State& state) {
  const Answer a = MakeAnswer(state.range(0) == 30 ? Unit::kDay : Unit::kHour, state.range(0));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string out = clickatron::SeriesJson(a.q, a.buckets, a.counts, 0);
    bytes += out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(bytes));
}
BENCHMARK(BM_SeriesJsonHand)->Arg(30)->Arg(720);

using RapidAnswer = std::string (*)(const Answer&, rapidjson::StringBuffer*);

// Times one rapidjson variant that returns the answer, after checking its bytes.
void RunRapid(benchmark::State& state, RapidAnswer write) {
  const Answer a = MakeAnswer(state.range(0) == 30 ? Unit::kDay : Unit::kHour, state.range(0));
  rapidjson::StringBuffer buf;
  if (write(a, &buf) != clickatron::SeriesJson(a.q, a.buckets, a.counts, 0)) {
    state.SkipWithError("rapidjson writes other bytes than SeriesJson");
    return;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    std::string out = write(a, &buf);
    bytes += out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(bytes));
}

// rapidjson's best case: into its own reused buffer, no std::string made.
void BM_SeriesJsonRapidBufferOnly(benchmark::State& state) {
  const Answer a = MakeAnswer(state.range(0) == 30 ? Unit::kDay : Unit::kHour, state.range(0));
  rapidjson::StringBuffer buf;
  for (auto _ : state) {
    buf.Clear();
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    RapidSeriesJson(a, &w);
    benchmark::DoNotOptimize(buf.GetString());
  }
}
BENCHMARK(BM_SeriesJsonRapidBufferOnly)->Arg(30)->Arg(720);

// rapidjson writing the bytes the API promises (docs/net.md: \u00xx in lower case, \ufffd
// for bytes that are not UTF-8, which its own String() does not do): structure and integers
// by rapidjson, every key and string escaped by net::AppendJsonString and given as RawValue.
class HybridWriter {
 public:
  explicit HybridWriter(rapidjson::StringBuffer* buf) : w_(*buf) {}
  void Key(std::string_view k) { Raw(k); }
  void String(std::string_view s) { Raw(s); }
  rapidjson::Writer<rapidjson::StringBuffer>& w() { return w_; }

 private:
  void Raw(std::string_view s) {
    scratch_.clear();
    clickatron::net::AppendJsonString(s, &scratch_);
    w_.RawValue(scratch_.data(), scratch_.size(), rapidjson::kStringType);
  }
  rapidjson::Writer<rapidjson::StringBuffer> w_;
  std::string scratch_;
};

std::string HybridSeriesString(const Answer& a, rapidjson::StringBuffer* buf) {
  buf->Clear();
  HybridWriter h(buf);
  const QueryParams& q = a.q;
  h.w().StartObject();
  h.Key("ns");
  h.String(q.ns);
  h.Key("key");
  h.String(q.key);
  h.Key("unit");
  h.String(clickatron::UnitName(q.unit));
  h.Key("units");
  h.w().Int64(q.units);
  h.Key("unit_reference_ts");
  h.w().Int64(q.reference_ts);
  h.Key("tz_offset");
  h.w().Int64(q.tz_offset);
  h.Key("series");
  h.w().StartArray();
  for (size_t i = 0; i < a.buckets.size(); ++i) {
    h.w().StartObject();
    h.Key("dt");
    h.w().Int64(a.buckets[i].start);
    h.Key("value");
    h.w().Int64(a.values[i]);
    h.w().EndObject();
  }
  h.w().EndArray();
  h.w().EndObject();
  return std::string(buf->GetString(), buf->GetSize());
}

void BM_SeriesJsonRapid(benchmark::State& state) { RunRapid(state, &RapidSeriesString); }
BENCHMARK(BM_SeriesJsonRapid)->Arg(30)->Arg(720);

void BM_SeriesJsonRapidSameBytes(benchmark::State& state) { RunRapid(state, &HybridSeriesString); }
BENCHMARK(BM_SeriesJsonRapidSameBytes)->Arg(30)->Arg(720);

// What JsonWriter would be on rapidjson: its contract is to append to a caller-owned
// std::string, so the Writer's output stream is that string (rapidjson's PutReserve and
// PutUnsafe found by argument-dependent lookup reserve once per value and append).
struct StringSink {
  using Ch = char;
  std::string* s;
  void Put(char c) { s->push_back(c); }
  void Flush() {}
};
void PutReserve(StringSink& sink, size_t count) { sink.s->reserve(sink.s->size() + count); }
void PutUnsafe(StringSink& sink, char c) { sink.s->push_back(c); }

class SinkWriter : public rapidjson::Writer<StringSink> {
 public:
  explicit SinkWriter(StringSink* sink) : rapidjson::Writer<StringSink>(*sink), sink_(sink) {}
  // A key or string escaped by net/ straight into the answer.
  void Escaped(std::string_view s) {
    Prefix(rapidjson::kStringType);
    clickatron::net::AppendJsonString(s, sink_->s);
    EndValue(true);
  }

 private:
  StringSink* sink_;
};

std::string SinkSeriesString(const Answer& a, rapidjson::StringBuffer*) {
  std::string out;
  out.reserve(160 + a.buckets.size() * 36);
  StringSink sink{&out};
  SinkWriter w(&sink);
  const QueryParams& q = a.q;
  w.StartObject();
  w.Escaped("ns");
  w.Escaped(q.ns);
  w.Escaped("key");
  w.Escaped(q.key);
  w.Escaped("unit");
  w.Escaped(clickatron::UnitName(q.unit));
  w.Escaped("units");
  w.Int64(q.units);
  w.Escaped("unit_reference_ts");
  w.Int64(q.reference_ts);
  w.Escaped("tz_offset");
  w.Int64(q.tz_offset);
  w.Escaped("series");
  w.StartArray();
  for (size_t i = 0; i < a.buckets.size(); ++i) {
    w.StartObject();
    w.Escaped("dt");
    w.Int64(a.buckets[i].start);
    w.Escaped("value");
    w.Int64(a.values[i]);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

void BM_SeriesJsonRapidIntoString(benchmark::State& state) { RunRapid(state, &SinkSeriesString); }
BENCHMARK(BM_SeriesJsonRapidIntoString)->Arg(30)->Arg(720);

}  // namespace

BENCHMARK_MAIN();
