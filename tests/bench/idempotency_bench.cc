// idempotency_bench: what the API's idempotency index costs (docs/benchmarks.md#idempotency-index).
//
//   idempotency_bench [--keys N] [--records N] [--dir DIR]
//
// 1. Memory: N entries with 36-byte keys (a UUID) and N with 255-byte keys (the longest)
//    inserted into an IdempotencyIndex; what malloc handed out for them (glibc mallinfo2,
//    heap and mmapped bytes in use) per entry, against what the index charges
//    (key + kEntryOverhead).
// 2. Start-up: an oplog of N records written the way the API writes them (40 demo events a
//    record, 2 subtotals each, a referrer of 200 with 10 % long URLs; one record in ten
//    keyed), then reopened: Oplog::Open (recovery, which the API does anyway) and
//    RestoreIdempotencyIndex timed side by side.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "api/idempotency_index.h"
#include "api/idempotency_restore.h"
#include "api/incr_payload.h"
#include "keyformat/event.h"
#include "oplog/oplog.h"

using namespace clickatron;

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void MeasureMemory(size_t n, size_t key_size) {
  // Bytes malloc has handed out, in the heap and as mmapped blocks (where the pool's large
  // chunks go).
  auto used = [] {
    const struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
  };
  auto index = std::make_unique<IdempotencyIndex>(SIZE_MAX);
  const size_t before = used();
  for (size_t i = 0; i < n; i++) {
    std::string key = std::to_string(i);
    key.insert(0, key_size - key.size(), 'k');
    index->Insert(IdempotencyIndex::Entry{key, RequestDigest{i, i}, 1764000000, 40, i + 1,
                                         IdempotencyIndex::State::kStored});
  }
  const double per = double(used() - before) / double(n);
  std::printf("memory: %zu keys of %zu bytes: %.1f heap bytes an entry, key + %.1f; charged key + %zu (%s)\n", n,
              key_size, per, per - double(key_size), IdempotencyIndex::kEntryOverhead,
              per <= double(key_size + IdempotencyIndex::kEntryOverhead) ? "charge covers it" : "UNDER-CHARGED");
}

std::string RecordOf(uint64_t r, std::string* scratch) {
  static const char* kCountries[] = {"US", "FR", "JP", "DE", "GB", "BR", "IN", "CN", "CA", "AU"};
  std::string payload;
  for (int e = 0; e < 40; e++) {
    const uint64_t n = r * 40 + uint64_t(e);
    const std::string key = "k" + std::to_string(n % 100000);
    const std::string ref = n % 10 == 0 ? "http://www.example.com/a/long/path?id=" + std::to_string(n % 200)
                                        : "r" + std::to_string(n % 200);
    Event event;
    event.ns = "u";
    event.key = key;
    event.ts = 1764000000 + int64_t(n % 3600);
    event.subs = {SubtotalRef{"country", kCountries[n % 10]}, SubtotalRef{"ref", ref}};
    AppendEventLines(event, 2, &payload, scratch);
  }
  if (r % 10 == 0) {
    const std::string key = "batch-" + std::to_string(r) + "-8e03978e-40d5-43e8-bc93";
    AppendIdempotencyLine(IdempotencyStamp{1764000000, 40, RequestDigest{r, ~r}, key}, &payload);
  }
  return payload;
}

int MeasureRestore(const std::string& dir, uint64_t records) {
  std::filesystem::remove_all(dir);
  uint64_t bytes = 0;
  {
    oplog::Options o;
    o.sync = oplog::SyncPolicy::kNone;
    auto log = oplog::Oplog::Open(dir, o);
    if (!log.ok()) return std::fprintf(stderr, "%s\n", log.status().message().c_str()), 1;
    std::string scratch;
    for (uint64_t r = 0; r < records; r++) {
      const std::string payload = RecordOf(r, &scratch);
      bytes += payload.size();
      if (!(*log)->Append(payload).ok()) return std::fprintf(stderr, "append failed\n"), 1;
    }
    if (!(*log)->Sync().ok()) return std::fprintf(stderr, "sync failed\n"), 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto opened = oplog::Oplog::Open(dir, oplog::Options{});
  if (!opened.ok()) return std::fprintf(stderr, "%s\n", opened.status().message().c_str()), 1;
  std::unique_ptr<oplog::Oplog> log = std::move(opened).value();
  const double open_s = Seconds(t0);
  const auto t1 = std::chrono::steady_clock::now();
  IdempotencyIndex index(SIZE_MAX);
  Result<IdempotencyRestore> r = RestoreIdempotencyIndex(log.get(), 1764000000 + 60, &index);
  if (!r.ok()) return std::fprintf(stderr, "%s\n", r.status().message().c_str()), 1;
  const double restore_s = Seconds(t1);
  std::printf("start-up: %llu records (%.0f MB of payload, %llu events, %llu keyed): open %.3f s, restore %.3f s "
              "(%.2f of open; %.0f MB/s of payload, %.2f M records/s)\n",
              (unsigned long long)records, double(bytes) / 1e6, (unsigned long long)(records * 40),
              (unsigned long long)r->keys, open_s, restore_s, restore_s / open_s, double(bytes) / 1e6 / restore_s,
              double(records) / 1e6 / restore_s);
  log.reset();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  size_t keys = 500000;
  uint64_t records = 50000;
  std::string dir = (std::filesystem::temp_directory_path() / "clickatron-idempotency-bench").string();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--keys") == 0) keys = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--records") == 0) records = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--dir") == 0) dir = argv[i + 1];
    else return std::fprintf(stderr, "usage: idempotency_bench [--keys N] [--records N] [--dir DIR]\n"), 2;
  }
  MeasureMemory(keys, 36);
  MeasureMemory(keys, 255);
  return MeasureRestore(dir, records);
}
