#include "rebuild/parallel_gzip.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "rebuild/file.h"

namespace clickatron::rebuild {
namespace {

constexpr size_t kWindow = 32 << 10;  // deflate's window: how far back a match may reach
constexpr size_t kMinBlock = 64 << 10;

// One block of input and its deflated piece.
struct Block {
  std::unique_ptr<char[]> in;   // block_bytes
  size_t in_size = 0;
  std::unique_ptr<char[]> out;  // out_capacity
  size_t out_size = 0;
  char dict[kWindow];           // the input's 32 KiB before this block
  size_t dict_size = 0;
  bool last = false;
  bool done = false;  // out and crc are ready (under State::mu)
  uint32_t crc = 0;
  Status error;
};

// RFC 1952 header: magic, deflate, no flags, no mtime, XFL as zlib sets it, OS = Unix.
std::string GzipHeader(int level) {
  const char xfl = level == 9 ? 2 : level == 1 ? 4 : 0;
  return std::string{'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, xfl, 3};
}

void PutLE32(uint32_t v, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(char((v >> (8 * i)) & 0xff));
}

}  // namespace

struct ParallelGzipWriter::State {
  ParallelGzipOptions options;
  std::string path;
  bool opened = false, finished = false;
  FileWriter out;
  Status error;
  size_t out_capacity = 0;
  size_t max_blocks = 0;

  std::vector<std::unique_ptr<Block>> blocks;  // all of them, at most max_blocks
  std::vector<Block*> free;                    // ready for new input
  Block* filling = nullptr;                    // being appended to
  std::deque<Block*> in_order;                 // submitted, in input order (written from the front)
  std::string tail;                            // the last kWindow input bytes submitted

  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  std::deque<Block*> queue;  // submitted, not yet taken by a worker
  bool stop = false;
  std::vector<std::thread> workers;

  uint32_t crc = 0;  // crc32 of the input written so far
  uint64_t bytes_in = 0, bytes_out = 0;

  ~State() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    work_cv.notify_all();
    for (std::thread& t : workers) t.join();
  }

  void Work() {
    z_stream z{};
    const bool ready = deflateInit2(&z, options.level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    for (;;) {
      Block* b;
      {
        std::unique_lock<std::mutex> lock(mu);
        work_cv.wait(lock, [&] { return stop || !queue.empty(); });
        if (stop) break;
        b = queue.front();
        queue.pop_front();
      }
      b->error = ready ? Deflate(&z, b) : Status::Error("gzip " + path + ": deflateInit2 failed");
      b->crc = uint32_t(crc32(0, reinterpret_cast<const Bytef*>(b->in.get()), uInt(b->in_size)));
      {
        std::lock_guard<std::mutex> lock(mu);
        b->done = true;
      }
      done_cv.notify_all();
    }
    if (ready) deflateEnd(&z);
  }

  // b->in → b->out: a raw deflate piece primed with b->dict, ended by a sync flush (or the
  // final block when b->last).
  Status Deflate(z_stream* z, Block* b) const {
    if (deflateReset(z) != Z_OK) return Status::Error("gzip " + path + ": deflateReset failed");
    if (b->dict_size > 0 &&
        deflateSetDictionary(z, reinterpret_cast<const Bytef*>(b->dict), uInt(b->dict_size)) != Z_OK) {
      return Status::Error("gzip " + path + ": deflateSetDictionary failed");
    }
    z->next_in = reinterpret_cast<Bytef*>(b->in.get());
    z->avail_in = uInt(b->in_size);
    z->next_out = reinterpret_cast<Bytef*>(b->out.get());
    z->avail_out = uInt(out_capacity);
    const int flush = b->last ? Z_FINISH : Z_SYNC_FLUSH;
    const int rc = deflate(z, flush);
    // out_capacity is deflateBound plus room for the flush marker: one call always ends.
    if ((b->last && rc != Z_STREAM_END) || (!b->last && (rc != Z_OK || z->avail_in != 0 || z->avail_out == 0))) {
      return Status::Error("gzip " + path + ": deflate failed (" + std::to_string(rc) + ")");
    }
    b->out_size = out_capacity - z->avail_out;
    return Status::OK();
  }

  // Hands the filling block to the workers, primed with the input's last 32 KiB.
  void Submit(bool last) {
    Block* b = filling;
    filling = nullptr;
    b->last = last;
    b->done = false;
    b->dict_size = tail.size();
    std::memcpy(b->dict, tail.data(), tail.size());
    if (b->in_size >= kWindow) {
      tail.assign(b->in.get() + b->in_size - kWindow, kWindow);
    } else {  // only the last block can be this short
      tail.append(b->in.get(), b->in_size);
      if (tail.size() > kWindow) tail.erase(0, tail.size() - kWindow);
    }
    in_order.push_back(b);
    {
      std::lock_guard<std::mutex> lock(mu);
      queue.push_back(b);
    }
    work_cv.notify_one();
  }

  // Writes the oldest submitted block once it is deflated (waiting for it when wait).
  // Returns false when there was none to write.
  bool WriteOldest(bool wait) {
    if (in_order.empty()) return false;
    Block* b = in_order.front();
    {
      std::unique_lock<std::mutex> lock(mu);
      if (!b->done && !wait) return false;
      done_cv.wait(lock, [&] { return b->done; });
    }
    in_order.pop_front();
    if (error.ok()) error = b->error;
    if (error.ok()) error = out.Append(std::string_view(b->out.get(), b->out_size));
    crc = uint32_t(crc32_combine(crc, b->crc, z_off_t(b->in_size)));
    bytes_in += b->in_size;
    bytes_out += b->out_size;
    free.push_back(b);
    return true;
  }

  // A block to fill: a free one, a new one, or (all in flight) the oldest once written.
  Block* TakeBlock() {
    while (WriteOldest(false)) {
    }
    if (free.empty() && blocks.size() < max_blocks) {
      auto b = std::make_unique<Block>();
      b->in = std::make_unique<char[]>(options.block_bytes);
      b->out = std::make_unique<char[]>(out_capacity);
      free.push_back(b.get());
      blocks.push_back(std::move(b));
    }
    if (free.empty()) WriteOldest(true);
    Block* b = free.back();
    free.pop_back();
    b->in_size = 0;
    return b;
  }

  Status Fail() {
    if (opened) ::unlink(path.c_str());
    opened = false;
    return error;
  }
};

ParallelGzipWriter::ParallelGzipWriter() = default;

ParallelGzipWriter::~ParallelGzipWriter() {
  if (state_ && !state_->finished && state_->opened) ::unlink(state_->path.c_str());
}

Status ParallelGzipWriter::Open(const std::string& path, const ParallelGzipOptions& options) {
  state_ = std::make_unique<State>();
  State& st = *state_;
  st.path = path;
  st.options = options;
  if (st.options.threads == 0) st.options.threads = std::max(1u, std::thread::hardware_concurrency());
  st.options.block_bytes = std::max(st.options.block_bytes, kMinBlock);
  if (st.options.level < 1 || st.options.level > 9) return st.error = Status::Error("gzip level must be 1..9");
  z_stream probe{};
  if (deflateInit2(&probe, st.options.level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return st.error = Status::Error("gzip " + path + ": deflateInit2 failed");
  }
  // A sync flush adds an empty stored block (5 bytes) and may need a few bits to close the
  // last one: 64 bytes over the bound of a whole stream is ample.
  st.out_capacity = deflateBound(&probe, uLong(st.options.block_bytes)) + 64;
  deflateEnd(&probe);
  st.max_blocks = 2 * size_t(st.options.threads);
  if (Status s = st.out.Open(path, 4 << 20, /*direct=*/true); !s.ok()) return st.error = s;
  st.opened = true;
  const std::string header = GzipHeader(st.options.level);
  if (Status s = st.out.Append(header); !s.ok()) {
    st.error = s;
    return st.Fail();
  }
  st.bytes_out = header.size();
  for (unsigned t = 0; t < st.options.threads; ++t) st.workers.emplace_back([&st] { st.Work(); });
  return Status::OK();
}

Status ParallelGzipWriter::Append(std::string_view bytes) {
  State& st = *state_;
  if (!st.error.ok()) return st.error;
  while (!bytes.empty()) {
    if (st.filling == nullptr) st.filling = st.TakeBlock();
    Block* b = st.filling;
    const size_t n = std::min(bytes.size(), st.options.block_bytes - b->in_size);
    std::memcpy(b->in.get() + b->in_size, bytes.data(), n);
    b->in_size += n;
    bytes.remove_prefix(n);
    if (b->in_size == st.options.block_bytes) st.Submit(/*last=*/false);
    if (!st.error.ok()) return st.Fail();
  }
  return Status::OK();
}

Status ParallelGzipWriter::Finish() {
  State& st = *state_;
  if (!st.error.ok()) return st.Fail();
  if (st.filling == nullptr) st.filling = st.TakeBlock();  // the last piece may be empty
  st.Submit(/*last=*/true);
  while (st.WriteOldest(true)) {
  }
  std::string trailer;
  PutLE32(st.crc, &trailer);
  PutLE32(uint32_t(st.bytes_in), &trailer);  // ISIZE: the length modulo 2^32
  if (st.error.ok()) st.error = st.out.Append(trailer);
  if (st.error.ok()) st.error = st.out.SyncAndClose();
  if (!st.error.ok()) return st.Fail();
  st.bytes_out += trailer.size();
  st.finished = true;
  return Status::OK();
}

uint64_t ParallelGzipWriter::bytes_in() const { return state_ ? state_->bytes_in : 0; }
uint64_t ParallelGzipWriter::bytes_out() const { return state_ ? state_->bytes_out : 0; }

Status GzipFileParallel(const std::string& from, const std::string& to, const ParallelGzipOptions& options,
                        const std::function<void(std::string_view)>& on_read) {
  BlockReader in;
  if (Status s = in.Open(from); !s.ok()) return s;
  ParallelGzipWriter gz;
  if (Status s = gz.Open(to, options); !s.ok()) return s;
  for (;;) {
    std::string_view block;
    if (Status s = in.Next(&block); !s.ok()) return s;  // gz's destructor removes `to`
    if (block.empty()) break;
    if (on_read) on_read(block);
    if (Status s = gz.Append(block); !s.ok()) return s;
  }
  return gz.Finish();
}

}  // namespace clickatron::rebuild
