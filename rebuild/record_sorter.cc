#include "rebuild/record_sorter.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <queue>

#include "keyformat/columns.h"
#include "keyformat/records.h"
#include "keyformat/shard.h"
#include "keyformat/ymdh.h"
#include "rebuild/file.h"
#include "rebuild/radix_sort.h"

namespace clickatron::rebuild {

namespace {

constexpr uint32_t kMaxEntryKey = 0xFFFFFF;
constexpr size_t kRunBufferSize = 4 << 20;

constexpr size_t kPrefixBytes = kInlineKeyBytes;
constexpr size_t kSlack = 32;  // readable bytes past every arena block and key

uint64_t LoadBig(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

// Bytes [from, min(la, lb)) of two keys, then the shorter first. Reads whole words: the
// arena has kSlack readable bytes after every key.
bool TailLess(const char* a, uint32_t la, const char* b, uint32_t lb, size_t from) {
  const size_t n = std::min(la, lb);
  for (size_t i = from; i < n; i += 8) {
    uint64_t x = LoadBig(a + i), y = LoadBig(b + i);
    if (n - i < 8) {
      const int drop = int(8 - (n - i)) * 8;
      x >>= drop;
      y >>= drop;
    }
    if (x != y) return x < y;
  }
  return la < lb;
}

void* MapMemory(size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  ::madvise(p, bytes, MADV_HUGEPAGE);  // fewer page faults while filling: measured 11% of import time
  return p;
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
  uint64_t k[3] = {0, 0, 0};  // the first 24 key bytes, as in SortEntry: most comparisons end here

  void SetPrefixFromKey() {
    char prefix[kPrefixBytes] = {};
    std::memcpy(prefix, key.data(), std::min(key.size(), kPrefixBytes));
    k[0] = LoadBig(prefix);
    k[1] = LoadBig(prefix + 8);
    k[2] = LoadBig(prefix + 16);
  }
  // <0, 0, >0 by key bytes.
  static int Compare(const Source& a, const Source& b) {
    for (int i = 0; i < 3; ++i) {
      if (a.k[i] != b.k[i]) return a.k[i] < b.k[i] ? -1 : 1;
    }
    const size_t la = a.key.size(), lb = b.key.size();
    if (la <= kPrefixBytes || lb <= kPrefixBytes) return (la > lb) - (la < lb);
    return a.key.substr(kPrefixBytes).compare(b.key.substr(kPrefixBytes));
  }
};

// One sorted part of the entries still in memory.
class RecordSorter::MemorySource : public Source {
 public:
  MemorySource(const RecordSorter* sorter, size_t begin, size_t end)
      : sorter_(sorter), i_(begin), end_(end) {}
  bool Next() override {
    if (i_ >= end_) return false;
    const SortEntry& e = sorter_->entries_[i_++];
    key = std::string_view(sorter_->Resolve(e.offset()), e.size());
    count = e.count;
    k[0] = e.k[0];
    k[1] = e.k[1];
    k[2] = e.k[2];
    return true;
  }

 private:
  const RecordSorter* sorter_;
  size_t i_, end_;
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
    SetPrefixFromKey();
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
  arena_capacity_ = memory * 4 / 10;
  entries_capacity_ = size_t(memory * 55 / 100 / sizeof(SortEntry));
  block_shift_ = 26;  // 64 MiB blocks, allocated as they fill
  while (block_shift_ > 16 && (uint64_t(1) << block_shift_) > arena_capacity_) --block_shift_;
  day_bits_.assign(65536 / 64, 0);
}

RecordSorter::~RecordSorter() {
  for (const std::string& path : run_paths_) ::unlink(path.c_str());
  const size_t block_bytes = (size_t(1) << block_shift_) + kSlack;
  for (char* block : blocks_) ::munmap(block, block_bytes);
  if (entries_) ::munmap(entries_, entries_capacity_ * sizeof(SortEntry));
}

char* RecordSorter::Resolve(uint64_t offset) const {
  return blocks_[offset >> block_shift_] + (offset & ((uint64_t(1) << block_shift_) - 1));
}

// Reserves size bytes of arena; returns the global offset (never straddles blocks).
bool RecordSorter::Reserve(uint32_t size, uint64_t* offset) {
  const uint64_t block_size = uint64_t(1) << block_shift_;
  if (size > block_size) return false;
  const uint64_t in_block = arena_used_ & (block_size - 1);
  if (in_block + size > block_size) arena_used_ += block_size - in_block;
  if (arena_used_ + size > arena_capacity_) return false;
  const size_t block = size_t(arena_used_ >> block_shift_);
  while (blocks_.size() <= block) {
    char* b = static_cast<char*>(MapMemory(block_size + kSlack));
    if (b == nullptr) return false;
    blocks_.push_back(b);
  }
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
  if (entries_ == nullptr) {
    entries_ = static_cast<SortEntry*>(MapMemory(entries_capacity_ * sizeof(SortEntry)));
    if (entries_ == nullptr) {
      io_error_ = true;
      return Status::Error("cannot map " + std::to_string(entries_capacity_ * sizeof(SortEntry)) + " bytes for --memory");
    }
  }
  if (n_entries_ == entries_capacity_ || !Reserve(uint32_t(size), &offset)) {
    if (Status s = SpillRun(); !s.ok()) {
      io_error_ = true;
      return s;
    }
    if (!Reserve(uint32_t(size), &offset)) {
      io_error_ = true;
      return Status::Error("--memory is too small for a record of " + std::to_string(size) + " bytes");
    }
  }
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
  SortEntry& e = entries_[n_entries_++];
  char prefix[kPrefixBytes] = {};
  std::memcpy(prefix, out, std::min(size, kPrefixBytes));
  e.k[0] = LoadBig(prefix);
  e.k[1] = LoadBig(prefix + 8);
  e.k[2] = LoadBig(prefix + 16);
  e.where = (offset << 24) | size;
  e.count = count;
  stats_.records_in++;
  return Status::OK();
}

// Past the inline bytes: the shorter key first when one ends within them, else the bytes.
class RecordSorter::ArenaTailOrder : public TailOrder {
 public:
  explicit ArenaTailOrder(const RecordSorter* sorter) : sorter_(sorter) {}
  bool Less(const SortEntry& a, const SortEntry& b) const override {
    const uint32_t la = a.size(), lb = b.size();
    if (la <= kPrefixBytes || lb <= kPrefixBytes) return la < lb;
    return TailLess(sorter_->Resolve(a.offset()), la, sorter_->Resolve(b.offset()), lb, kPrefixBytes);
  }

 private:
  const RecordSorter* sorter_;
};

bool RecordSorter::Equal(const SortEntry& a, const SortEntry& b) const {
  if (!a.SamePrefix(b) || a.size() != b.size()) return false;
  if (a.size() <= kPrefixBytes) return true;
  return std::memcmp(Resolve(a.offset()) + kPrefixBytes, Resolve(b.offset()) + kPrefixBytes,
                     a.size() - kPrefixBytes) == 0;
}

// Sorts the entries (on options_.threads threads) and sums equal keys in place; parts_
// then holds the sorted range.
void RecordSorter::SortAndSum() {
  parts_.clear();
  const size_t n = n_entries_;
  RadixSort(entries_, entries_ + n, ArenaTailOrder(this), options_.threads);
  size_t out = 0;
  for (size_t i = 0; i < n; ++i) {
    if (out > 0 && Equal(entries_[out - 1], entries_[i])) {
      SortEntry& last = entries_[out - 1];
      if (__builtin_add_overflow(last.count, entries_[i].count, &last.count)) overflow_ = true;
      continue;
    }
    entries_[out++] = entries_[i];
  }
  if (out > 0) parts_.emplace_back(0, out);
}

Status RecordSorter::SpillRun() {
  SortAndSum();
  if (overflow_) return Status::Error("a count overflows a signed 64-bit integer");
  for (const auto& [begin, end] : parts_) {
    const std::string path = options_.temp_dir + "/run-" + std::to_string(run_paths_.size());
    run_paths_.push_back(path);
    FileWriter w;
    if (Status s = w.Open(path, 4 << 20, /*direct=*/true); !s.ok()) return s;
    std::string buf;
    buf.reserve(1 << 20);
    for (size_t i = begin; i < end; ++i) {
      const SortEntry& e = entries_[i];
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
    stats_.runs++;
  }
  parts_.clear();
  n_entries_ = 0;
  arena_used_ = 0;
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
  if (overflow_) return Status::Error("a count overflows a signed 64-bit integer");
  std::vector<std::unique_ptr<Source>> sources;
  for (const std::string& path : run_paths_) {
    auto run = std::make_unique<RunSource>();
    if (Status s = run->Open(path); !s.ok()) return s;
    sources.push_back(std::move(run));
  }
  for (const auto& [begin, end] : parts_) sources.push_back(std::make_unique<MemorySource>(this, begin, end));

  LineAssembler assembler(sink, on_collision, &stats_);
  if (sources.size() == 1) {  // everything fit in memory, sorted in one part: no merge
    Source& only = *sources[0];
    while (only.Next()) {
      if (Status s = assembler.Add(only.key, only.count); !s.ok()) return s;
    }
    return assembler.Finish();
  }
  auto greater = [&sources](size_t a, size_t b) {
    const int c = Source::Compare(*sources[a], *sources[b]);
    return c != 0 ? c > 0 : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(greater)> heap(greater);
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i]->Next()) heap.push(i);
    else if (Status s = sources[i]->status(); !s.ok()) return s;
  }
  // The record being summed: a copy of its key (its source moves on) and its prefix.
  struct Held final : Source {
    bool Next() override { return false; }
  } current;
  std::string key;
  while (!heap.empty()) {
    size_t i = heap.top();
    heap.pop();
    key.assign(sources[i]->key);
    current.key = key;
    std::copy(sources[i]->k, sources[i]->k + 3, current.k);
    int64_t sum = sources[i]->count;
    bool overflow = false;
    auto advance = [&](size_t j) -> Status {
      if (sources[j]->Next()) heap.push(j);
      return sources[j]->status();
    };
    if (Status s = advance(i); !s.ok()) return s;
    while (!heap.empty() && Source::Compare(*sources[heap.top()], current) == 0) {
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
