#include "rebuild/record_sorter.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <queue>

#include "keyformat/columns.h"
#include "keyformat/records.h"
#include "keyformat/shard.h"
#include "keyformat/ymdh.h"
#include "rebuild/file.h"

namespace clickatron::rebuild {

// 24 bytes: the first 8 key bytes (big-endian, so integer order is byte order), where the
// key lives in the arena, and the summed count.
struct RecordSorter::Entry {
  uint64_t prefix;
  uint64_t where;  // arena offset << 24 | key length
  int64_t count;
  uint64_t offset() const { return where >> 24; }
  uint32_t size() const { return uint32_t(where & 0xFFFFFF); }
};

namespace {

constexpr uint32_t kMaxEntryKey = 0xFFFFFF;
constexpr size_t kRunBufferSize = 4 << 20;

uint64_t LoadPrefix(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(char(v | 0x80));
    v >>= 7;
  }
  out->push_back(char(v));
}

// Returns bytes used, 0 if p..end holds no complete varint.
size_t GetVarint(const char* p, const char* end, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0, i = 0; p + i < end && shift <= 63; shift += 7, ++i) {
    const uint64_t byte = uint8_t(p[i]);
    result |= (byte & 0x7F) << shift;
    if (byte < 0x80) {
      *v = result;
      return size_t(i + 1);
    }
  }
  return 0;
}

uint64_t ZigZag(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
int64_t UnZigZag(uint64_t v) { return int64_t(v >> 1) ^ -int64_t(v & 1); }

std::string DayName(Day day) { return day == kLookupDay ? "lookups" : FormatDay(day); }

}  // namespace

// A sorted stream of (entry key, count).
class RecordSorter::Source {
 public:
  virtual ~Source() = default;
  virtual bool Next() = 0;  // false at the end or on error
  virtual Status status() const { return Status::OK(); }
  std::string_view key;
  int64_t count = 0;
};

class RecordSorter::MemorySource : public Source {
 public:
  MemorySource(const RecordSorter* sorter) : sorter_(sorter) {}
  bool Next() override {
    if (i_ >= sorter_->entries_.size()) return false;
    const Entry& e = sorter_->entries_[i_++];
    key = std::string_view(sorter_->Resolve(e.offset()), e.size());
    count = e.count;
    return true;
  }

 private:
  const RecordSorter* sorter_;
  size_t i_ = 0;
};

class RecordSorter::RunSource : public Source {
 public:
  Status Open(const std::string& path) {
    path_ = path;
    buffer_.resize(kRunBufferSize);
    return reader_.Open(path);
  }
  bool Next() override {
    uint64_t size = 0, zz = 0;
    size_t n1 = 0, n2 = 0;
    for (;;) {
      const char* p = buffer_.data() + pos_;
      const char* end = buffer_.data() + end_;
      n1 = GetVarint(p, end, &size);
      if (n1 != 0 && size <= kMaxEntryKey && uint64_t(end - p) > n1 + size) {
        n2 = GetVarint(p + n1 + size, end, &zz);
        if (n2 != 0) break;
      }
      if (n1 != 0 && size > kMaxEntryKey) return Fail("bad record size");
      if (!Refill()) {
        if (status_.ok() && pos_ != end_) return Fail("truncated record");
        return false;
      }
    }
    key = std::string_view(buffer_.data() + pos_ + n1, size);
    count = UnZigZag(zz);
    pos_ += n1 + size + n2;
    return true;
  }
  Status status() const override { return status_; }

 private:
  bool Fail(const char* why) {
    status_ = Status::Error("run file " + path_ + ": " + why);
    return false;
  }
  bool Refill() {
    std::memmove(buffer_.data(), buffer_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
    if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
    const ssize_t n = ::read(reader_fd(), buffer_.data() + end_, buffer_.size() - end_);
    if (n < 0) {
      status_ = ErrnoStatus("read", path_);
      return false;
    }
    end_ += size_t(n);
    return n > 0;
  }
  int reader_fd();
  std::string path_;
  struct Fd {
    int fd = -1;
    ~Fd() { if (fd >= 0) ::close(fd); }
    Status Open(const std::string& path) {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      return fd < 0 ? ErrnoStatus("open", path) : Status::OK();
    }
  } reader_;
  std::vector<char> buffer_;
  size_t pos_ = 0, end_ = 0;
  Status status_;
};

int RecordSorter::RunSource::reader_fd() { return reader_.fd; }

RecordSorter::RecordSorter(SorterOptions options) : options_(std::move(options)) {
  const uint64_t memory = std::max<uint64_t>(options_.memory_bytes, 1 << 20);
  // Key bytes and entries in a ratio that fits realistic records (~30 key bytes per
  // 24-byte entry); 5% is left for I/O buffers.
  arena_capacity_ = memory / 2;
  entries_capacity_ = size_t(memory * 45 / 100 / sizeof(Entry));
  block_shift_ = 26;  // 64 MiB blocks, allocated as they fill
  while (block_shift_ > 16 && (uint64_t(1) << block_shift_) > arena_capacity_) --block_shift_;
  day_bits_.assign(65536 / 64, 0);
}

RecordSorter::~RecordSorter() {
  for (const std::string& path : run_paths_) ::unlink(path.c_str());
}

char* RecordSorter::Resolve(uint64_t offset) const {
  return blocks_[offset >> block_shift_].get() + (offset & ((uint64_t(1) << block_shift_) - 1));
}

// Reserves size bytes of arena; returns the global offset (never straddles blocks).
bool RecordSorter::Reserve(uint32_t size, uint64_t* offset) {
  const uint64_t block_size = uint64_t(1) << block_shift_;
  if (size > block_size) return false;
  const uint64_t in_block = arena_used_ & (block_size - 1);
  if (in_block + size > block_size) arena_used_ += block_size - in_block;
  if (arena_used_ + size > arena_capacity_) return false;
  const size_t block = size_t(arena_used_ >> block_shift_);
  while (blocks_.size() <= block) blocks_.emplace_back(new char[block_size]);
  *offset = arena_used_;
  arena_used_ += size;
  return true;
}

Status RecordSorter::Add(std::string_view line) {
  const size_t comma = line.find(',');
  if (comma == std::string_view::npos) return Status::Error("no ',' between key and value");
  const std::string_view key = line.substr(0, comma), value = line.substr(comma + 1);
  Result<ParsedKey> parsed = ParseRealtimeKey(key);
  if (!parsed.ok()) return parsed.status();
  const ParsedKey& p = *parsed;
  Day day;
  std::string_view archive_head, archive_tail, column;
  int64_t count = 0;
  if (p.type == RecordType::kLookup) {
    if (value.empty()) return Status::Error("lookup '" + std::string(key) + "' has an empty original");
    if (Result<std::string> u = UnescapeLookupValue(value); !u.ok()) {
      return Status::Error("lookup '" + std::string(key) + "': " + u.status().message());
    }
    day = options_.lookup_day;
    archive_head = key;
    column = value;
    has_lookups_ = true;
  } else {
    Result<int64_t> n = ParseCount(value);
    if (!n.ok()) return Status::Error("count '" + std::string(value.substr(0, 40)) + "' of '" + std::string(key) + "' is not a signed 64-bit integer");
    count = *n;
    const int64_t d = DayOfYmdhUnchecked(p.ymdh);
    day = Day(d);
    if (options_.only_day != 0 && day != options_.only_day) {
      return Status::Error("record '" + std::string(key) + "' is of day " + FormatDay(d) +
                           ", not " + FormatDay(options_.only_day));
    }
    day_bits_[day >> 6] |= uint64_t(1) << (day & 63);
    if (p.type == RecordType::kTotal) {
      archive_head = p.shard_key;  // {ns}|{key}
      column = p.ymdh;
    } else {
      // {subns}.{ns}|{key} . {ymdh}: the realtime key without its ".{subkey}".
      archive_head = key.substr(0, size_t(p.subkey.data() - key.data()) - 1);
      archive_tail = p.ymdh;
      column = p.subkey;
    }
  }
  const uint32_t shard = ShardOf(p.shard_key, options_.shards);
  const size_t size = 4 + archive_head.size() + (archive_tail.empty() ? 0 : 1 + archive_tail.size()) + 1 + column.size();
  if (size > kMaxEntryKey) return Status::Error("record is too long");
  uint64_t offset;
  if (entries_.size() == entries_capacity_ || !Reserve(uint32_t(size), &offset)) {
    if (Status s = SpillRun(); !s.ok()) {
      io_error_ = true;
      return s;
    }
    if (!Reserve(uint32_t(size), &offset)) {
      io_error_ = true;
      return Status::Error("--memory is too small for a record of " + std::to_string(size) + " bytes");
    }
  }
  if (entries_.capacity() < entries_capacity_) entries_.reserve(entries_capacity_);
  char* out = Resolve(offset);
  out[0] = char(day >> 8);
  out[1] = char(day);
  out[2] = char(shard >> 8);
  out[3] = char(shard);
  char* w = out + 4;
  std::memcpy(w, archive_head.data(), archive_head.size());
  w += archive_head.size();
  if (!archive_tail.empty()) {
    *w++ = '.';
    std::memcpy(w, archive_tail.data(), archive_tail.size());
    w += archive_tail.size();
  }
  *w++ = '\0';
  std::memcpy(w, column.data(), column.size());
  entries_.push_back(Entry{LoadPrefix(out), (offset << 24) | size, count});
  stats_.records_in++;
  return Status::OK();
}

void RecordSorter::SortAndSum() {
  auto less = [this](const Entry& a, const Entry& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const uint32_t la = a.size(), lb = b.size();
    const int c = std::memcmp(Resolve(a.offset()) + 8, Resolve(b.offset()) + 8, std::min(la, lb) - 8);
    return c != 0 ? c < 0 : la < lb;
  };
  std::sort(entries_.begin(), entries_.end(), less);
  // Sum runs of equal keys in place.
  size_t out = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (out > 0) {
      Entry& last = entries_[out - 1];
      const Entry& e = entries_[i];
      if (last.prefix == e.prefix && last.size() == e.size() &&
          std::memcmp(Resolve(last.offset()), Resolve(e.offset()), e.size()) == 0) {
        last.count += e.count;  // wraps only past ±9.2e18 total, checked at assembly
        continue;
      }
    }
    entries_[out++] = entries_[i];
  }
  entries_.resize(out);
}

Status RecordSorter::SpillRun() {
  SortAndSum();
  const std::string path = options_.temp_dir + "/run-" + std::to_string(run_paths_.size());
  run_paths_.push_back(path);
  FileWriter w;
  if (Status s = w.Open(path); !s.ok()) return s;
  std::string buf;
  buf.reserve(1 << 20);
  for (const Entry& e : entries_) {
    PutVarint(&buf, e.size());
    buf.append(Resolve(e.offset()), e.size());
    PutVarint(&buf, ZigZag(e.count));
    if (buf.size() >= (1 << 20) - 64) {
      if (Status s = w.Append(buf); !s.ok()) return s;
      buf.clear();
    }
  }
  if (Status s = w.Append(buf); !s.ok()) return s;
  // No fsync: a run is scratch; a crash redoes the whole import.
  if (Status s = w.Close(); !s.ok()) return s;
  entries_.clear();
  arena_used_ = 0;
  stats_.runs++;
  return Status::OK();
}

std::vector<Day> RecordSorter::Days() const {
  std::vector<Day> days;
  for (size_t w = 0; w < day_bits_.size(); ++w) {
    for (uint64_t bits = day_bits_[w]; bits != 0; bits &= bits - 1) {
      days.push_back(Day(w * 64 + size_t(__builtin_ctzll(bits))));
    }
  }
  return days;
}

namespace {

// Turns the merged entry stream into archive lines for the sink.
class LineAssembler {
 public:
  LineAssembler(LineSink* sink, const std::function<void(const std::string&)>& on_collision,
                SorterStats* stats)
      : sink_(sink), on_collision_(on_collision), stats_(stats) {}

  Status Add(std::string_view entry_key, int64_t count) {
    const Day day = Day((uint8_t(entry_key[0]) << 8) | uint8_t(entry_key[1]));
    const uint32_t shard = (uint32_t(uint8_t(entry_key[2])) << 8) | uint8_t(entry_key[3]);
    const std::string_view rest = entry_key.substr(4);
    const size_t zero = rest.find('\0');
    const std::string_view key = rest.substr(0, zero), column = rest.substr(zero + 1);
    if (!in_group_ || day != day_ || shard != shard_) {
      if (Status s = FlushLine(); !s.ok()) return s;
      if (in_group_) {
        if (Status s = sink_->EndGroup(); !s.ok()) return s;
      }
      if (Status s = sink_->BeginGroup(day, shard); !s.ok()) return s;
      in_group_ = true;
      day_ = day;
      shard_ = shard;
      key_.clear();
    } else if (key != key_) {
      if (Status s = FlushLine(); !s.ok()) return s;
    } else if (is_lookup_) {
      // Same hash, another original: never resolved silently.
      stats_->collisions++;
      if (on_collision_) {
        on_collision_("hash collision: " + key_ + " is both '" + value_ + "' (kept) and '" +
                      std::string(column) + "'");
      }
      return Status::OK();
    }
    if (key_.empty()) {
      key_.assign(key);
      value_.clear();
      columns_ = 0;
      is_lookup_ = key.starts_with(kLookupPrefix);
      if (is_lookup_) {
        value_.assign(column);
        return Status::OK();
      }
    }
    if (count != 0) {
      AppendColumn(&value_, 0, column, count);
      columns_++;
    }
    return Status::OK();
  }

  Status Finish() {
    if (Status s = FlushLine(); !s.ok()) return s;
    if (in_group_) return sink_->EndGroup();
    return Status::OK();
  }

 private:
  Status FlushLine() {
    if (key_.empty()) return Status::OK();
    Status s;
    if (!value_.empty()) {
      s = sink_->Line(key_, value_, is_lookup_ ? 0 : columns_);
      stats_->lines_out++;
      stats_->columns_out += is_lookup_ ? 0 : columns_;
    }
    key_.clear();
    return s;
  }

  LineSink* sink_;
  const std::function<void(const std::string&)>& on_collision_;
  SorterStats* stats_;
  bool in_group_ = false;
  Day day_ = 0;
  uint32_t shard_ = 0;
  std::string key_, value_;
  uint64_t columns_ = 0;
  bool is_lookup_ = false;
};

}  // namespace

Status RecordSorter::Finish(LineSink* sink, const std::function<void(const std::string&)>& on_collision) {
  SortAndSum();
  std::vector<std::unique_ptr<Source>> sources;
  for (const std::string& path : run_paths_) {
    auto run = std::make_unique<RunSource>();
    if (Status s = run->Open(path); !s.ok()) return s;
    sources.push_back(std::move(run));
  }
  sources.push_back(std::make_unique<MemorySource>(this));

  LineAssembler assembler(sink, on_collision, &stats_);
  auto greater = [&sources](size_t a, size_t b) {
    const int c = sources[a]->key.compare(sources[b]->key);
    return c != 0 ? c > 0 : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(greater)> heap(greater);
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i]->Next()) heap.push(i);
    else if (Status s = sources[i]->status(); !s.ok()) return s;
  }
  std::string key;
  while (!heap.empty()) {
    size_t i = heap.top();
    heap.pop();
    key.assign(sources[i]->key);
    int64_t sum = sources[i]->count;
    bool overflow = false;
    auto advance = [&](size_t j) -> Status {
      if (sources[j]->Next()) heap.push(j);
      return sources[j]->status();
    };
    if (Status s = advance(i); !s.ok()) return s;
    while (!heap.empty() && sources[heap.top()]->key == key) {
      const size_t j = heap.top();
      heap.pop();
      overflow |= __builtin_add_overflow(sum, sources[j]->count, &sum);
      if (Status s = advance(j); !s.ok()) return s;
    }
    if (overflow) {
      return Status::Error("the counts of one record overflow a signed 64-bit integer (day " +
                           DayName(Day((uint8_t(key[0]) << 8) | uint8_t(key[1]))) + ", key " +
                           key.substr(4, key.find('\0', 4) - 4) + ")");
    }
    if (Status s = assembler.Add(key, sum); !s.ok()) return s;
  }
  return assembler.Finish();
}

Result<uint64_t> ParseMemorySize(std::string_view text) {
  const Status bad = Status::Error("memory size '" + std::string(text) + "' is not a number of bytes with an optional K, M, G or T suffix");
  if (text.empty()) return bad;
  uint64_t multiplier = 1;
  switch (text.back()) {
    case 'K': case 'k': multiplier = 1ull << 10; break;
    case 'M': case 'm': multiplier = 1ull << 20; break;
    case 'G': case 'g': multiplier = 1ull << 30; break;
    case 'T': case 't': multiplier = 1ull << 40; break;
    default: break;
  }
  if (multiplier != 1) text.remove_suffix(1);
  Result<int64_t> n = ParseCount(text);
  if (!n.ok() || *n <= 0 || uint64_t(*n) > (uint64_t(1) << 50) / multiplier) return bad;
  return uint64_t(*n) * multiplier;
}

}  // namespace clickatron::rebuild
