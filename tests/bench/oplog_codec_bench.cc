// oplog_codec_bench: which codec the oplog's compressed batches use (oplog/batch.h), measured
// on the API's own payloads (docs/benchmarks.md#oplog-compression).
//
//   oplog_codec_bench --oplog DIR [--seconds S]
//
// DIR is an API oplog holding a sample of a workload (the commands are in the docs: ops/demo's
// live stream, one POST /incr of 40 events a second). Each codec compresses, then
// decompresses, the same inputs for about S seconds each way:
//   record     each record alone: a group commit of the demo's rate (one record a second)
//   256 KiB    the records run together in bodies of 256 KiB, a group commit of a loaded API
// and prints the ratio (input / output bytes), bytes per event when --events-per-record is
// given, and MB/s of input compressed and decompressed on one core; memcpy of the same bytes
// is the reference.
#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "base/latency.h"
#include "oplog/inspect.h"

using namespace clickatron;

namespace {

struct Codec {
  const char* name;
  std::function<size_t(const std::string& in, std::string* out)> compress;
  std::function<void(const std::string& in, size_t raw, std::string* out)> decompress;
};

Codec Zstd(const char* name, int level) {
  return {name,
          [level](const std::string& in, std::string* out) {
            static ZSTD_CCtx* ctx = ZSTD_createCCtx();
            out->resize(ZSTD_compressBound(in.size()));
            size_t n = ZSTD_compressCCtx(ctx, out->data(), out->size(), in.data(), in.size(), level);
            if (ZSTD_isError(n)) abort();
            return n;
          },
          [](const std::string& in, size_t raw, std::string* out) {
            static ZSTD_DCtx* ctx = ZSTD_createDCtx();
            out->resize(raw);
            if (ZSTD_decompressDCtx(ctx, out->data(), raw, in.data(), in.size()) != raw) abort();
          }};
}

Codec Lz4(const char* name, int hc_level) {
  return {name,
          [hc_level](const std::string& in, std::string* out) {
            out->resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(in.size()))));
            const int n = hc_level == 0
                ? LZ4_compress_default(in.data(), out->data(), static_cast<int>(in.size()),
                                       static_cast<int>(out->size()))
                : LZ4_compress_HC(in.data(), out->data(), static_cast<int>(in.size()),
                                  static_cast<int>(out->size()), hc_level);
            if (n <= 0) abort();
            return static_cast<size_t>(n);
          },
          [](const std::string& in, size_t raw, std::string* out) {
            out->resize(raw);
            if (LZ4_decompress_safe(in.data(), out->data(), static_cast<int>(in.size()),
                                    static_cast<int>(raw)) != static_cast<int>(raw)) {
              abort();
            }
          }};
}

void Measure(const Codec& codec, const std::vector<std::string>& inputs, double seconds,
             double events) {
  uint64_t in_bytes = 0, out_bytes = 0;
  std::vector<std::string> packed(inputs.size());
  std::vector<size_t> sizes(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    sizes[i] = codec.compress(inputs[i], &packed[i]);
    packed[i].resize(sizes[i]);
    in_bytes += inputs[i].size();
    out_bytes += sizes[i];
  }
  const uint64_t limit = static_cast<uint64_t>(seconds * 1e6);
  std::string scratch;
  uint64_t done = 0, start = MonotonicMicros();
  while (MonotonicMicros() - start < limit) {
    for (const std::string& in : inputs) done += (codec.compress(in, &scratch), in.size());
  }
  const double c_mbs = static_cast<double>(done) / static_cast<double>(MonotonicMicros() - start);
  done = 0;
  start = MonotonicMicros();
  while (MonotonicMicros() - start < limit) {
    for (size_t i = 0; i < packed.size(); ++i) {
      codec.decompress(packed[i], inputs[i].size(), &scratch);
      done += inputs[i].size();
    }
  }
  const double d_mbs = static_cast<double>(done) / static_cast<double>(MonotonicMicros() - start);
  std::printf("  %-10s ratio %5.2f", codec.name, static_cast<double>(in_bytes) / static_cast<double>(out_bytes));
  if (events > 0) std::printf("  %6.1f B/event", static_cast<double>(out_bytes) / events);
  std::printf("  compress %7.0f MB/s  decompress %7.0f MB/s\n", c_mbs, d_mbs);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  double seconds = 1;
  double events_per_record = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--oplog")) dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--events-per-record")) events_per_record = std::atof(argv[i + 1]);
    else dir.clear(), i = argc;
  }
  if (dir.empty()) {
    std::fprintf(stderr, "usage: oplog_codec_bench --oplog DIR [--seconds S] [--events-per-record N]\n");
    return 2;
  }
  std::vector<std::string> records;
  oplog::LogCheck check = oplog::CheckLog(dir, [&](uint64_t, std::string_view payload) {
    records.emplace_back(payload);
  });
  if (!check.error.ok() || records.empty()) {
    std::fprintf(stderr, "oplog_codec_bench: %s\n",
                 check.error.ok() ? "no records" : check.error.message().c_str());
    return 1;
  }
  std::vector<std::string> bodies(1);
  uint64_t total = 0;
  for (const std::string& r : records) {
    if (bodies.back().size() + r.size() > (256u << 10)) bodies.emplace_back();
    bodies.back() += r;
    total += r.size();
  }
  const double events = events_per_record * static_cast<double>(records.size());
  std::printf("%zu records, %llu bytes (%.0f B/record", records.size(),
              static_cast<unsigned long long>(total), static_cast<double>(total) / records.size());
  if (events > 0) std::printf(", %.1f B/event", static_cast<double>(total) / events);
  std::printf("), %.1f s per measurement\n", seconds);
  const std::vector<Codec> codecs = {Zstd("zstd -1", 1), Zstd("zstd -3", 3), Zstd("zstd -6", 6),
                                     Lz4("lz4", 0), Lz4("lz4hc -9", 9)};
  Codec copy{"memcpy",
             [](const std::string& in, std::string* out) { *out = in; return in.size(); },
             [](const std::string& in, size_t, std::string* out) { *out = in; }};
  for (const auto& [label, inputs] :
       {std::pair{"each record alone (the demo's group commit)", &records},
        std::pair{"256 KiB bodies (a loaded API's group commit)", &bodies}}) {
    std::printf("%s: %zu inputs\n", label, inputs->size());
    Measure(copy, *inputs, seconds, events);
    for (const Codec& codec : codecs) Measure(codec, *inputs, seconds, events);
  }
  return 0;
}
