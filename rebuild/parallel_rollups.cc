#include "rebuild/parallel_rollups.h"

#include <cstring>

namespace clickatron::rebuild {
namespace {

constexpr size_t kChunkBytes = 1 << 20;
// How far back from a chunk's end a cut is looked for: keys whose month is longer (a few
// with many subkeys) continue into the next chunk instead.
constexpr size_t kLookBack = 64 << 10;

// The key-month of a line: `{subns}.{ns}|{key}.` and the first two time symbols (the
// part of the key that a RollupWriter compares to see where a month of a key ends), or
// empty for a line that is not a subtotal (before and after which it holds nothing).
std::string_view KeyMonth(std::string_view line) {
  const size_t end = line.find_first_of(".|,\n");
  if (end == std::string_view::npos || line[end] != '.') return {};
  const std::string_view key = line.substr(0, line.find(','));
  const size_t dot = key.rfind('.');
  return key.substr(0, std::min(key.size(), dot + 3));
}

}  // namespace

// A piece of the merged stream and, once a worker is done with it, what it wrote.
struct ParallelRollups::Chunk {
  std::string bytes;       // whole lines
  bool ends_group = true;  // false: the next chunk continues a key-month of this one
  size_t worker = 0;
  bool started = false, done = false;  // guarded by mu_
  std::string out;                     // the worker's output lines
  uint64_t out_records = 0, out_columns = 0;
  Status status;

  void Clear() {
    bytes.clear();
    out.clear();
    out_records = out_columns = 0;
    started = done = false;
    status = Status::OK();
  }
};

// A worker's RollupWriter writes into the chunk it is working on.
struct ParallelRollups::Worker final : RecordWriter {
  explicit Worker(RollupLimits limits) : rollups(this, limits) {}
  Status Add(std::string_view key, std::string_view value, uint64_t columns) override {
    chunk->out.append(key).append(1, ',').append(value).append(1, '\n');
    chunk->out_records++;
    chunk->out_columns += columns;
    return Status::OK();
  }
  Status AddLines(std::string_view lines, uint64_t records, uint64_t columns) override {
    chunk->out.append(lines);
    chunk->out_records += records;
    chunk->out_columns += columns;
    return Status::OK();
  }

  size_t index = 0;
  Chunk* chunk = nullptr;
  RollupWriter rollups;
  std::thread thread;
};

size_t ParallelRollups::CutPoint(std::string_view lines, size_t look_back) {
  if (lines.empty() || lines.back() != '\n') return 0;
  const size_t stop = lines.size() > look_back ? lines.size() - look_back : 0;
  // [start, end): the line after the cut being looked at; the one before ends at start.
  size_t end = lines.size();
  auto line_start = [&](size_t line_end) -> size_t {
    if (line_end < 2) return 0;
    const void* nl = memrchr(lines.data(), '\n', line_end - 1);
    return nl == nullptr ? 0 : size_t(static_cast<const char*>(nl) - lines.data()) + 1;
  };
  size_t start = line_start(end);
  std::string_view after = KeyMonth(lines.substr(start, end - start));
  while (start > stop && start > 0) {
    const size_t before_start = line_start(start);
    const std::string_view before = KeyMonth(lines.substr(before_start, start - before_start));
    if (after.empty() || before.empty() || after != before) return start;
    start = before_start;
    after = before;
  }
  return 0;
}

ParallelRollups::ParallelRollups(RecordWriter* behind, unsigned workers, RollupLimits limits)
    : behind_(behind), filling_(std::make_unique<Chunk>()) {
  for (unsigned i = 0; i < std::max(1u, workers); ++i) {
    workers_.push_back(std::make_unique<Worker>(limits));
    workers_.back()->index = i;
  }
  for (auto& w : workers_) w->thread = std::thread([this, me = w.get()] { Work(me); });
}

ParallelRollups::~ParallelRollups() {
  if (!finished_) Finish();  // only on an error path: its file is discarded
}

void ParallelRollups::Work(Worker* me) {
  for (;;) {
    Chunk* c = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] {
        if (stopping_) return true;
        for (const auto& x : in_flight_) {
          if (x->worker == me->index && !x->started) {
            c = x.get();
            return true;
          }
        }
        return false;
      });
      if (c == nullptr) return;  // stopping, nothing left for this worker
      c->started = true;
    }
    me->chunk = c;
    c->status = me->rollups.AddLines(c->bytes, 0, 0);
    if (c->status.ok() && c->ends_group) c->status = me->rollups.Finish();
    me->chunk = nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    c->done = true;
    cv_.notify_all();
  }
}

// Writes the finished chunks at the front, in order; first waits until at most `keep`
// chunks are in flight.
Status ParallelRollups::WriteDone(bool wait_for_all) {
  const size_t keep = wait_for_all ? 0 : 2 * workers_.size() + 1;
  for (;;) {
    std::unique_ptr<Chunk> c;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] {
        return in_flight_.empty() || in_flight_.front()->done || in_flight_.size() <= keep;
      });
      if (in_flight_.empty() || !in_flight_.front()->done) return error_;
      c = std::move(in_flight_.front());
      in_flight_.pop_front();
    }
    if (error_.ok()) error_ = c->status;
    if (error_.ok() && c->out_records > 0) error_ = behind_->AddLines(c->out, c->out_records, c->out_columns);
    c->Clear();
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(c));
  }
}

Status ParallelRollups::Dispatch(bool ends_group) {
  if (Status s = WriteDone(false); !s.ok()) return s;
  const size_t worker = continued_ ? last_worker_ : next_worker_++ % workers_.size();
  last_worker_ = worker;
  continued_ = !ends_group;
  filling_->ends_group = ends_group;
  filling_->worker = worker;
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.push_back(std::move(filling_));
  if (free_.empty()) {
    filling_ = std::make_unique<Chunk>();
  } else {
    filling_ = std::move(free_.back());
    free_.pop_back();
  }
  cv_.notify_all();
  return Status::OK();
}

Status ParallelRollups::Add(std::string_view key, std::string_view value, uint64_t columns) {
  if (finished_ || !error_.ok()) return error_.ok() ? Status::Error("added after Finish()") : error_;
  filling_->bytes.append(key).append(1, ',').append(value).append(1, '\n');
  return AddLines(std::string_view(), 1, columns);
}

Status ParallelRollups::AddLines(std::string_view lines, uint64_t /*records*/, uint64_t /*columns*/) {
  if (finished_ || !error_.ok()) return error_.ok() ? Status::Error("added after Finish()") : error_;
  filling_->bytes.append(lines);  // the workers' RollupWriters count records and columns
  if (filling_->bytes.size() < kChunkBytes) return Status::OK();
  const size_t cut = CutPoint(filling_->bytes, kLookBack);
  if (cut == 0) return Dispatch(/*ends_group=*/false);
  // The lines after the cut start the next chunk.
  std::string tail = filling_->bytes.substr(cut);
  filling_->bytes.resize(cut);
  if (Status s = Dispatch(/*ends_group=*/true); !s.ok()) return s;
  filling_->bytes.append(tail);
  return Status::OK();
}

Status ParallelRollups::Finish() {
  if (finished_) return error_;
  finished_ = true;
  // The last chunk ends every key-month, even empty (the one before may have continued).
  if (error_.ok() && (!filling_->bytes.empty() || continued_)) error_ = Dispatch(/*ends_group=*/true);
  if (error_.ok()) error_ = WriteDone(/*wait_for_all=*/true);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  for (auto& w : workers_) w->thread.join();
  return error_;
}

RollupStats ParallelRollups::stats() const {
  RollupStats sum;
  for (const auto& w : workers_) {
    const RollupStats& s = w->rollups.stats();
    sum.days += s.days;
    sum.months += s.months;
    sum.unfolded += s.unfolded;
    sum.limited += s.limited;
    sum.dropped += s.dropped;
  }
  return sum;
}

}  // namespace clickatron::rebuild
