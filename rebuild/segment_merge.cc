#include "rebuild/segment_merge.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <queue>
#include <thread>

#include "keyformat/key_order.h"
#include "keyformat/records.h"
#include "rebuild/block_pipe.h"
#include "rebuild/column_merge.h"

namespace clickatron::rebuild {
namespace {

// At most this many inputs get a reading thread each; more share the merging thread.
constexpr size_t kMaxReadAheadInputs = 8;
constexpr size_t kBlockBytes = 1 << 20;

// Checked lines of one input, copied back to back, with where each one's key and value are.
struct LineBlock {
  struct Line {
    size_t offset, key_size, value_size;
    uint64_t columns;
  };
  std::string bytes;
  std::vector<Line> lines;
  void Clear() {
    bytes.clear();
    lines.clear();
  }
};

// One input segment: its records in order, each checked (order, and the footer at the
// end). With read-ahead, a thread of its own reads and checks the lines and counts their
// columns while the merge works on earlier ones: the merge was one core reading, checking
// and writing 1.6 GB (docs/benchmarks.md, rebuild).
class Input {
 public:
  ~Input() {
    if (thread_.joinable()) {
      pipe_->Cancel();
      thread_.join();
    }
  }

  // count_columns: whether columns is counted (else 0: the writer counts them itself).
  Status Open(const std::string& path, size_t buffer_bytes, bool read_ahead, bool count_columns) {
    count_columns_ = count_columns;
    if (Status s = reader_.Open(path, buffer_bytes); !s.ok()) return s;
    if (read_ahead) {
      pipe_ = std::make_unique<BlockPipe<LineBlock>>(3);
      thread_ = std::thread([this] { ReadAhead(); });
    }
    return Status::OK();
  }

  // The next record into key/value/line/columns (valid until the next call); false at
  // the end or on an error (status()).
  bool Next() {
    if (!thread_.joinable()) {
      if (!reader_.Next(&key, &value)) return false;
      columns = Columns(key, value);
      // A record line is followed by its '\n' in the reader's buffer.
      line = std::string_view(key.data(), key.size() + value.size() + 2);
      return true;
    }
    if (current_ == nullptr || pos_ == current_->lines.size()) {
      if (current_ != nullptr) {
        current_->Clear();
        pipe_->GiveBack(current_);
      }
      current_ = pipe_->TakeFull();
      if (current_ == nullptr) return false;
      pos_ = 0;
    }
    const LineBlock::Line& l = current_->lines[pos_++];
    key = std::string_view(current_->bytes.data() + l.offset, l.key_size);
    value = std::string_view(current_->bytes.data() + l.offset + l.key_size + 1, l.value_size);
    line = std::string_view(key.data(), l.key_size + l.value_size + 2);
    columns = l.columns;
    return true;
  }
  // Whether the next Next() may drop the memory of the lines returned so far (the lines
  // of one block stay, back to back, until the block is done).
  bool MayMoveOn() const { return !thread_.joinable() || pos_ == current_->lines.size(); }
  // REQUIRES: Next() returned false.
  Status status() const { return thread_.joinable() ? status_ : reader_.status(); }
  uint64_t bytes_read() const { return thread_.joinable() ? bytes_read_.load() : reader_.bytes_read(); }
  const std::string& path() const { return reader_.path(); }

  std::string_view key, value;
  std::string_view line;  // key,value\n
  uint64_t columns = 0;

 private:
  // The reading thread: blocks of checked lines until the end, an error or cancel.
  void ReadAhead() {
    std::string_view k, v;
    while (LineBlock* block = pipe_->TakeFree()) {
      bool more;
      while ((more = reader_.Next(&k, &v))) {
        const size_t offset = block->bytes.size();
        block->bytes.append(k.data(), k.size() + v.size() + 2);  // key,value\n, back to back in the reader
        block->lines.push_back({offset, k.size(), v.size(), Columns(k, v)});
        if (block->bytes.size() >= kBlockBytes) break;
      }
      bytes_read_.store(reader_.bytes_read(), std::memory_order_relaxed);  // for progress: once a block
      if (block->lines.empty()) {
        pipe_->GiveBack(block);
      } else {
        pipe_->PushFull(block);
      }
      if (!more) {
        status_ = reader_.status();  // read by the merge once TakeFull() says the end
        pipe_->Close();
        return;
      }
    }
  }

  uint64_t Columns(std::string_view k, std::string_view v) const {
    return !count_columns_ || k.starts_with(kLookupPrefix) ? 0 : CountColumns(v);
  }

  bool count_columns_ = true;
  SegmentReader reader_;
  std::unique_ptr<BlockPipe<LineBlock>> pipe_;  // with read-ahead
  std::thread thread_;
  Status status_;  // the reading thread's, at the end
  std::atomic<uint64_t> bytes_read_{0};
  LineBlock* current_ = nullptr;  // the block Next() is reading
  size_t pos_ = 0;
};

// The k-way merge of MergeSegments: a min-heap of the inputs by their current key, a key
// found in one input copied through (CopyRun), equal keys merged (MergeEqualKeys).
class SegmentMerger {
 public:
  SegmentMerger(RecordWriter* out, MergeStats* stats,
                const std::function<void(const std::string&)>& on_collision,
                const std::function<void(uint64_t bytes_in)>& on_progress)
      : out_(out), stats_(stats), on_collision_(on_collision), on_progress_(on_progress),
        heap_(InputGreater{&in_}) {}

  Status Open(const std::vector<std::string>& inputs, unsigned threads) {
    const bool read_ahead = threads > 1 && inputs.size() <= kMaxReadAheadInputs;
    // Read buffers within ~96 MiB however many inputs (each holds about three).
    const size_t buffer = std::clamp<size_t>((96 << 20) / 3 / std::max<size_t>(1, inputs.size()), 256 << 10, 4 << 20);
    for (const std::string& path : inputs) {
      auto input = std::make_unique<Input>();
      if (Status s = input->Open(path, buffer, read_ahead, !out_->counts_columns_itself()); !s.ok()) return s;
      in_.push_back(std::move(input));
    }
    for (size_t i = 0; i < in_.size(); ++i) {
      if (Status s = Advance(i); !s.ok()) return s;
    }
    return Status::OK();
  }

  Status Run() {
    while (!heap_.empty()) {
      const size_t first = heap_.top();
      heap_.pop();
      Status s = heap_.empty() || in_[heap_.top()]->key != in_[first]->key ? CopyRun(first) : MergeEqualKeys(first);
      if (!s.ok()) return s;
      if (on_progress_ && ++since_progress_ >= 65536) ReportProgress();
    }
    return Status::OK();
  }

 private:
  // Min-heap order by key; equal keys by input order, so the earliest input comes first.
  struct InputGreater {
    const std::vector<std::unique_ptr<Input>>* in;
    bool operator()(size_t a, size_t b) const {
      const int c = CompareKeys((*in)[a]->key, (*in)[b]->key);
      return c != 0 ? c > 0 : a > b;
    }
  };

  // Input i's next record into the heap (none at its end).
  Status Advance(size_t i) {
    Input& x = *in_[i];
    if (x.Next()) {
      stats_->records_in++;
      stats_->bytes_in += x.key.size() + x.value.size() + 2;
      heap_.push(i);
      return Status::OK();
    }
    return x.status();
  }

  // The common case: a key found in one input only is copied as it is — with the input's
  // next lines too while they come before every other input's next key, written as one
  // piece when they lie back to back.
  Status CopyRun(size_t first) {
    Input& x = *in_[first];
    std::string_view span = x.line;
    uint64_t records = 1, columns = x.columns;
    auto flush = [&]() -> Status {
      Status s = records == 0 ? Status::OK() : out_->AddLines(span, records, columns);
      span = std::string_view();
      records = columns = 0;
      return s;
    };
    for (;;) {
      if (x.MayMoveOn()) {
        if (Status s = flush(); !s.ok()) return s;
      }
      if (!x.Next()) {
        if (Status s = x.status(); !s.ok()) return s;
        break;
      }
      stats_->records_in++;
      stats_->bytes_in += x.line.size();
      if (!heap_.empty() && CompareKeys(x.key, in_[heap_.top()]->key) >= 0) {
        heap_.push(first);
        break;
      }
      if (records > 0 && span.data() + span.size() != x.line.data()) {
        if (Status s = flush(); !s.ok()) return s;
      }
      span = records == 0 ? x.line : std::string_view(span.data(), span.size() + x.line.size());
      records++;
      columns += x.columns;
      ++since_progress_;
    }
    return flush();
  }

  // A key in more than one input: its columns summed (a lookup: the first value kept, a
  // different one counted and reported as a hash collision).
  Status MergeEqualKeys(size_t first) {
    key_.assign(in_[first]->key);
    value_.assign(in_[first]->value);
    const bool lookup = key_.starts_with(kLookupPrefix);
    if (Status s = Advance(first); !s.ok()) return s;
    while (!heap_.empty() && in_[heap_.top()]->key == key_) {
      const size_t i = heap_.top();
      heap_.pop();
      Input& x = *in_[i];
      if (lookup) {
        if (x.value != value_) {
          stats_->collisions++;
          if (on_collision_) {
            on_collision_("hash collision: " + key_ + " is both '" + value_ + "' (kept) and '" +
                          std::string(x.value) + "' (in " + x.path() + ")");
          }
        }
      } else if (Status s = MergeColumnsInto(&value_, x.value, &scratch_); !s.ok()) {
        return s.Prefixed("key '" + key_ + "' in " + x.path() + ": ");
      }
      if (Status s = Advance(i); !s.ok()) return s;
    }
    if (value_.empty()) return Status::OK();
    const uint64_t columns = lookup || out_->counts_columns_itself() ? 0 : CountColumns(value_);
    return out_->Add(key_, value_, columns);
  }

  void ReportProgress() {
    since_progress_ = 0;
    uint64_t bytes = 0;
    for (const auto& x : in_) bytes += x->bytes_read();
    on_progress_(bytes);
  }

  RecordWriter* out_;
  MergeStats* stats_;
  const std::function<void(const std::string&)>& on_collision_;
  const std::function<void(uint64_t bytes_in)>& on_progress_;
  std::vector<std::unique_ptr<Input>> in_;
  std::priority_queue<size_t, std::vector<size_t>, InputGreater> heap_;
  std::string key_, value_, scratch_;  // the key being merged and its summed value
  uint64_t since_progress_ = 0;
};

}  // namespace

Status MergeSegments(const std::vector<std::string>& inputs, RecordWriter* out,
                     MergeStats* stats, const std::function<void(const std::string&)>& on_collision,
                     const std::function<void(uint64_t bytes_in)>& on_progress, unsigned threads) {
  SegmentMerger merger(out, stats, on_collision, on_progress);
  if (Status s = merger.Open(inputs, threads); !s.ok()) return s;
  return merger.Run();
}

}  // namespace clickatron::rebuild
