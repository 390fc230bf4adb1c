// oplog_bench: how fast the oplog takes 100-byte records under each sync policy, beside
// what the disk gives raw in the same run (docs/benchmarks.md, section oplog).
//
//   oplog_bench [--dir DIR] [--seconds S] [--rate R] [--payloads OPLOG_DIR]
//
// Phases, each in a fresh directory on the same filesystem (DIR, default /tmp):
//   raw write           pwrite of 120-byte frames, nothing else
//   raw fdatasync       pwrite + fdatasync per 120-byte frame (what `always` must pay),
//                       with the p50/p99 of one fdatasync
//   raw batch append    pwrite of 256 frames (30 KB, a batch at 300k/s) at the end of the
//                       file + fdatasync: the file grows, so ext4 commits its journal for
//                       the new size and blocks on every sync
//   raw batch prezeroed the same into a file zeroed and synced beforehand: the sync flushes
//                       data only (the question of pre-zeroing segments)
//   oplog always/batch/none   Append as fast as one thread can with at most W records not
//                       yet durable (W = 1 for always, so its latency is one sync;
//                       200000 for batch: the requests an API might hold open), then wait until all are durable
//   oplog batch @ R/s   Append paced at R records/s in 1 ms bursts (an event loop's
//                       shape) for S seconds; append-to-durable latency of every record.
//                       Run twice: without consumers, and with two cursors moved every
//                       100 ms as the API's senders do (so cursor saves happen too).
//   oplog batch, demo records (with --payloads: an API oplog, e.g. ops/demo's var/oplog)
//                       the same flat-out `batch` run on records of that log's text cut
//                       at line ends into ~100-byte records (one event's lines each, a
//                       single GET /incr), written as frames of one record each and as
//                       compressed batches (oplog/batch.h): records/s and bytes/record
// Bounded: every phase stops after S seconds or its record count.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/latency.h"
#include "oplog/inspect.h"
#include "oplog/oplog.h"

using namespace clickatron;
using namespace clickatron::oplog;

namespace {

constexpr size_t kPayload = 100;
constexpr size_t kFrame = kPayload + 20;

double Seconds(uint64_t us) { return static_cast<double>(us) / 1e6; }

struct Raw {
  double rate = 0;                  // records/s
  uint64_t p50_us = 0, p99_us = 0;  // one fdatasync
};

uint64_t Quantile(std::vector<uint64_t>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

std::string FreshDir(const std::string& base, const char* name) {
  std::string dir = base + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// pwrite of `per_sync` 120-byte frames at a time (+ fdatasync when sync) for up to
// `seconds` or max_records. prezero: the file is first filled with zeros for max_records
// frames and synced, so the writes overwrite allocated, initialised blocks.
Raw RawRun(const std::string& dir, bool sync, int per_sync, bool prezero, double seconds,
           uint64_t max_records) {
  const std::string path = dir + "/raw";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) abort();
  if (prezero) {
    const std::string zeros(1 << 20, '\0');
    for (uint64_t off = 0; off < max_records * kFrame; off += zeros.size()) {
      if (pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(off)) < 0) abort();
    }
    if (fsync(fd) != 0) abort();
  }
  const std::string frames(kFrame * static_cast<size_t>(per_sync), 'r');
  std::vector<uint64_t> syncs;
  const uint64_t start = MonotonicMicros(), limit = static_cast<uint64_t>(seconds * 1e6);
  uint64_t n = 0;
  while (n + static_cast<uint64_t>(per_sync) <= max_records && MonotonicMicros() - start < limit) {
    const int bursts = sync ? 1 : 64;  // check the clock after every sync
    for (int i = 0; i < bursts && n + static_cast<uint64_t>(per_sync) <= max_records; ++i) {
      if (pwrite(fd, frames.data(), frames.size(), static_cast<off_t>(n * kFrame)) < 0) abort();
      n += static_cast<uint64_t>(per_sync);
      if (sync) {
        const uint64_t t0 = MonotonicMicros();
        if (fdatasync(fd) != 0) abort();
        syncs.push_back(MonotonicMicros() - t0);
      }
    }
  }
  const uint64_t took = MonotonicMicros() - start;
  close(fd);
  Raw raw;
  raw.rate = static_cast<double>(n) / Seconds(took);
  raw.p50_us = Quantile(syncs, 0.5);
  raw.p99_us = Quantile(syncs, 0.99);
  return raw;
}

void PrintRaw(const char* name, const Raw& raw) {
  std::printf("%-26s %12.0f rec/s", name, raw.rate);
  if (raw.p50_us > 0) std::printf("  fdatasync p50 %.2f ms p99 %.2f ms", raw.p50_us / 1e3, raw.p99_us / 1e3);
  std::printf("\n");
}

struct Run {
  double rate = 0;  // records/s, appended and durable
  uint64_t records = 0;
  uint64_t p50_us = 0, p99_us = 0, max_us = 0;  // append to durable
  uint64_t syncs = 0;
  uint64_t sync_p50_us = 0, sync_p99_us = 0;  // one fdatasync, from the oplog's own stats
  uint64_t bytes = 0;                         // in segment files at the end
  uint64_t payload_bytes = 0;                 // appended
};

// The text of an API oplog cut at line ends into records of about 100 bytes.
std::vector<std::string> DemoRecords(const std::string& dir) {
  std::vector<std::string> records;
  std::string text;
  oplog::LogCheck check = oplog::CheckLog(dir, [&](uint64_t, std::string_view p) { text += p; });
  if (!check.error.ok() || text.empty()) {
    std::fprintf(stderr, "oplog_bench: --payloads %s: %s\n", dir.c_str(),
                 check.error.ok() ? "no records" : check.error.message().c_str());
    exit(1);
  }
  std::string record;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size() - 1;
    record.append(text, at, nl + 1 - at);
    at = nl + 1;
    if (record.size() >= kPayload) records.push_back(std::move(record)), record.clear();
  }
  return records;
}

// Appends as fast as one thread can (or paced at `rate` records/s) for up to `seconds` or
// max_records, then waits until all is durable. Measures each record's append-to-durable
// latency from the sync thread's reports.
Run OplogRun(const std::string& dir, SyncPolicy policy, double seconds, uint64_t max_records,
             double rate, uint64_t window, bool cursors = false,
             const std::vector<std::string>* payloads = nullptr, bool compress = true) {
  std::vector<uint64_t> appended_at;  // by seq - 1
  appended_at.reserve(max_records);
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> reports;  // (durable seq, when)
  reports.reserve(1 << 20);
  Options o;
  o.sync = policy;
  o.compress = compress;
  o.on_sync = [&](const SyncReport& r) {
    const uint64_t now = MonotonicMicros();
    std::lock_guard<std::mutex> lock(mu);
    if (r.failed_last != 0) {
      std::fprintf(stderr, "append failed: %s\n", r.error.c_str());
      abort();
    }
    reports.emplace_back(r.durable_seq, now);
  };
  auto log = Oplog::Open(dir, o);
  if (!log.ok()) {
    std::fprintf(stderr, "%s\n", log.status().message().c_str());
    exit(1);
  }
  const std::string fixed(kPayload, 'p');
  uint64_t payload_bytes = 0;
  const uint64_t start = MonotonicMicros(), limit = static_cast<uint64_t>(seconds * 1e6);
  uint64_t n = 0;
  uint64_t next_cursor_us = start;
  while (n < max_records) {
    const uint64_t now = MonotonicMicros();
    if (now - start >= limit) break;
    if (cursors && now >= next_cursor_us) {  // two senders moving their cursors
      next_cursor_us = now + 100000;
      const uint64_t durable = (*log)->durable_seq();
      if (!(*log)->SetCursor("realtime-0", durable).ok()) abort();
      if (!(*log)->SetCursor("realtime-1", durable).ok()) abort();
    }
    const uint64_t in_flight = n - (*log)->durable_seq();
    if (in_flight >= window) {  // as many in flight as the API would have
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      continue;
    }
    uint64_t burst = std::min<uint64_t>(256, window - in_flight);
    if (rate > 0) {  // the records due by the end of this millisecond
      const uint64_t due = static_cast<uint64_t>(rate * Seconds(now - start + 1000));
      burst = due > n ? due - n : 0;
      if (burst == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        continue;
      }
    }
    for (uint64_t i = 0; i < burst && n < max_records; ++i) {
      const uint64_t t = MonotonicMicros();
      const std::string& payload = payloads ? (*payloads)[n % payloads->size()] : fixed;
      auto seq = (*log)->Append(payload);
      if (!seq.ok()) {  // queue full: the disk is behind; wait for it like the API would
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        break;
      }
      appended_at.push_back(t);
      payload_bytes += payload.size();
      ++n;
    }
  }
  if (!(*log)->Sync().ok()) abort();
  const uint64_t took = MonotonicMicros() - start;
  Run run;
  run.records = n;
  run.rate = static_cast<double>(n) / Seconds(took);
  const Stats stats = (*log)->GetStats();
  run.syncs = stats.syncs;
  run.sync_p50_us = stats.sync_latency.Quantile(0.5);
  run.sync_p99_us = stats.sync_latency.Quantile(0.99);
  run.bytes = stats.bytes;
  run.payload_bytes = payload_bytes;
  log = clickatron::Status::Error("closed");
  std::vector<uint64_t> latency;
  latency.reserve(n);
  if (policy == SyncPolicy::kNone) return run;  // durable at append: nothing to measure
  size_t r = 0;
  for (uint64_t seq = 1; seq <= n; ++seq) {
    while (r < reports.size() && reports[r].first < seq) ++r;
    if (r == reports.size()) break;
    latency.push_back(reports[r].second - appended_at[seq - 1]);
  }
  std::sort(latency.begin(), latency.end());
  if (!latency.empty()) {
    run.p50_us = latency[latency.size() / 2];
    run.p99_us = latency[latency.size() * 99 / 100];
    run.max_us = latency.back();
  }
  return run;
}

void PrintRun(const char* name, const Run& run, double raw_write, double raw_sync) {
  std::printf("%-26s %12.0f rec/s  %6.3fx raw write  %8.1fx raw fdatasync  (%llu records, %llu syncs)",
              name, run.rate, run.rate / raw_write, run.rate / raw_sync,
              static_cast<unsigned long long>(run.records), static_cast<unsigned long long>(run.syncs));
  if (run.max_us > 0) {
    std::printf("  durable p50 %.2f ms p99 %.2f ms max %.2f ms; fdatasync p50 %.2f ms p99 %.2f ms",
                run.p50_us / 1e3, run.p99_us / 1e3, run.max_us / 1e3, run.sync_p50_us / 1e3,
                run.sync_p99_us / 1e3);
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string base = "/tmp";
  std::string payloads_dir;
  double seconds = 3;
  double rate = 300000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--dir")) base = argv[i + 1];
    else if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rate")) rate = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--payloads")) payloads_dir = argv[i + 1];
    else {
      std::fprintf(stderr,
                   "usage: oplog_bench [--dir DIR] [--seconds S] [--rate R] [--payloads OPLOG_DIR]\n");
      return 2;
    }
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  base += "/oplog-bench-" + std::to_string(getpid());
  const uint64_t kMax = 20'000'000;
  std::printf("100-byte records (120-byte frames), up to %.1f s per phase, in %s\n", seconds,
              base.c_str());
  const double raw_write = RawRun(FreshDir(base, "raw-write"), false, 1, false, seconds, kMax).rate;
  std::printf("%-26s %12.0f rec/s\n", "raw pwrite", raw_write);
  const Raw raw_one = RawRun(FreshDir(base, "raw-sync"), true, 1, false, seconds, kMax);
  PrintRaw("raw pwrite+fdatasync", raw_one);
  const double raw_sync = raw_one.rate;
  // 64 MiB of 30 KB batches: more than the disk takes in S seconds would need more zeros.
  const uint64_t kZeroed = (64u << 20) / kFrame;
  PrintRaw("raw batch append", RawRun(FreshDir(base, "raw-append"), true, 256, false, seconds, kZeroed));
  PrintRaw("raw batch prezeroed", RawRun(FreshDir(base, "raw-zeroed"), true, 256, true, seconds, kZeroed));
  PrintRun("oplog always", OplogRun(FreshDir(base, "always"), SyncPolicy::kAlways, seconds, kMax, 0, 1),
           raw_write, raw_sync);
  PrintRun("oplog batch (max)", OplogRun(FreshDir(base, "batch"), SyncPolicy::kBatch, seconds, kMax, 0, 200000),
           raw_write, raw_sync);
  PrintRun("oplog none", OplogRun(FreshDir(base, "none"), SyncPolicy::kNone, seconds, kMax, 0, UINT64_MAX),
           raw_write, raw_sync);
  char name[64];
  std::snprintf(name, sizeof name, "oplog batch @%.0fk/s", rate / 1000);
  PrintRun(name, OplogRun(FreshDir(base, "paced"), SyncPolicy::kBatch, seconds, kMax, rate, UINT64_MAX),
           raw_write, raw_sync);
  std::snprintf(name, sizeof name, "oplog batch @%.0fk/s+cursors", rate / 1000);
  PrintRun(name, OplogRun(FreshDir(base, "cursors"), SyncPolicy::kBatch, seconds, kMax, rate, UINT64_MAX, true),
           raw_write, raw_sync);
  if (!payloads_dir.empty()) {
    const std::vector<std::string> demo = DemoRecords(payloads_dir);
    for (bool compress : {false, true}) {
      const Run run = OplogRun(FreshDir(base, compress ? "demo-z" : "demo"), SyncPolicy::kBatch,
                               seconds, kMax, 0, 200000, false, &demo, compress);
      PrintRun(compress ? "oplog batch, demo, zstd" : "oplog batch, demo, frames", run, raw_write,
               raw_sync);
      std::printf("%-26s %12.1f B/record on disk, %.1f B/record of payload (%zu distinct records)\n",
                  "", static_cast<double>(run.bytes) / static_cast<double>(run.records),
                  static_cast<double>(run.payload_bytes) / static_cast<double>(run.records),
                  demo.size());
    }
  }
  std::filesystem::remove_all(base);
  return 0;
}
