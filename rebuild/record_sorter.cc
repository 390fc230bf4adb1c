#include "rebuild/record_sorter.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <unordered_map>

#include "base/clip.h"
#include "base/int128.h"
#include "base/varint.h"
#include "keyformat/columns.h"
#include "keyformat/records.h"
#include "keyformat/shard.h"
#include "keyformat/ymdh.h"
#include "rebuild/block_pipe.h"
#include "rebuild/file.h"
#include "rebuild/radix_sort.h"

namespace clickatron::rebuild {

namespace {

constexpr uint32_t kMaxEntryKey = 0xFFFFFF;
constexpr size_t kRunBlockBytes = 4 << 20;
// A feeder's memory is never split finer than this: tiny batches only make many runs.
constexpr uint64_t kMinFeederMemory = uint64_t(4) << 20;
constexpr size_t kSlack = 32;  // readable bytes past every key tail

// Two byte strings in order: bytewise, then the shorter first. Reads whole words: there
// are kSlack readable bytes after every key tail.
bool TailLess(const char* a, uint32_t la, const char* b, uint32_t lb) {
  const size_t n = std::min(la, lb);
  for (size_t i = 0; i < n; i += 8) {
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

// How many leading bytes a and b share.
size_t SharedPrefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) return i + size_t(__builtin_ctzll(x ^ y) / 8);
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

uint64_t ZigZag(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
int64_t UnZigZag(uint64_t v) { return int64_t(v >> 1) ^ -int64_t(v & 1); }
Uint128 ZigZag128(Int128 v) { return (Uint128(v) << 1) ^ Uint128(v >> 127); }
Int128 UnZigZag128(Uint128 v) { return Int128(v >> 1) ^ -Int128(v & 1); }

// The count of an entry whose count is kept beside it (Batch::wide_): no count of an entry
// is ever this value itself, since an input count of INT64_MIN is kept beside it too.
constexpr int64_t kWideCount = INT64_MIN;

std::string DayName(Day day) { return day == kLookupDay ? "lookups" : FormatDay(day); }

}  // namespace

// One feeder's records in memory: a single mapping with the entries growing from its
// bottom and the key bytes past the inline 24 ("tails") growing down from its top, so
// the split between the two follows the keys: short keys (most of a realistic import)
// cost 40 bytes, not 40 plus a copy of the key.
class RecordSorter::Batch : public TailOrder {
 public:
  explicit Batch(uint64_t bytes) : bytes_(std::max<uint64_t>(bytes, 4096)) {}
  ~Batch() override {
    if (base_ != nullptr) ::munmap(base_, bytes_);
  }

  // Maps the memory (on first use; a small sort never touches most of it).
  Status Map() {
    if (base_ != nullptr) return Status::OK();
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return Status::Error("cannot map " + std::to_string(bytes_) + " bytes for --memory");
    ::madvise(p, bytes_, MADV_HUGEPAGE);  // fewer page faults while filling: measured 11% of import time
    base_ = static_cast<char*>(p);
    tails_ = bytes_ - kSlack;
    return Status::OK();
  }

  // Keeps an entry for key (whole: the entry key) with count; false when full.
  // REQUIRES: kInlineKeyBytes readable bytes at key.data(), zero past key.size() (the
  // inline words are loaded as they are).
  bool Add(std::string_view key, int64_t count) {
    const size_t tail = key.size() > kInlineKeyBytes ? key.size() - kInlineKeyBytes : 0;
    const uint64_t entries_end = (n_ + 1) * sizeof(SortEntry);
    if (entries_end + tail > tails_) return false;
    tails_ -= tail;
    if (tail != 0) std::memcpy(base_ + tails_, key.data() + kInlineKeyBytes, tail);
    SortEntry& e = entries()[n_++];
    e.k[0] = LoadBig(key.data());
    e.k[1] = LoadBig(key.data() + 8);
    e.k[2] = LoadBig(key.data() + 16);
    e.where = (tails_ << 24) | key.size();
    e.count = count;
    return true;
  }
  bool Less(const SortEntry& a, const SortEntry& b) const override {
    const uint32_t la = a.size(), lb = b.size();
    if (la <= kInlineKeyBytes || lb <= kInlineKeyBytes) return la < lb;
    return TailLess(Tail(a), la - kInlineKeyBytes, Tail(b), lb - kInlineKeyBytes);
  }

  // Whether a wide count (one that does not fit int64, or INT64_MIN) can be kept for key:
  // false when the key's wide counts would leave 128 bits.
  bool CanAddWide(std::string_view key, Int128 count) const {
    auto it = wide_.find(key);
    Int128 sum = it == wide_.end() ? 0 : it->second;
    return AddInt128(&sum, count);
  }
  // Keeps count beside the entry just added for key with kWideCount.
  // REQUIRES: CanAddWide(key, count).
  void AddWide(std::string_view key, Int128 count) { AddInt128(&wide_.try_emplace(std::string(key), 0).first->second, count); }

  // Sorts the entries on `threads` threads and sums equal keys; false when a sum leaves
  // 128 bits. Sums stay in the entries while they fit int64 (and are not kWideCount); a
  // sum that leaves it, or a wide count, goes to wide_ (SumWide). Until the first of those
  // the loop pays one overflow test per equal pair, as before.
  bool SortAndSum(unsigned threads) {
    RadixSort(entries(), entries() + n_, *this, threads);
    SortEntry* const e = entries();
    size_t out = 0, i = 0;
    if (wide_.empty()) {
      for (; i < n_; ++i) {
        if (out > 0 && Equal(e[out - 1], e[i])) {
          int64_t sum;
          if (__builtin_add_overflow(e[out - 1].count, e[i].count, &sum) || sum == kWideCount) break;
          e[out - 1].count = sum;
          continue;
        }
        e[out++] = e[i];
      }
    }
    for (; i < n_; ++i) {  // the rest, now that some count is wide
      if (out > 0 && Equal(e[out - 1], e[i])) {
        int64_t sum;
        if (e[out - 1].count != kWideCount && e[i].count != kWideCount &&
            !__builtin_add_overflow(e[out - 1].count, e[i].count, &sum) && sum != kWideCount) {
          e[out - 1].count = sum;
        } else if (!SumWide(&e[out - 1], e[i])) {
          return false;
        }
        continue;
      }
      e[out++] = e[i];
    }
    n_ = out;
    return true;
  }

  // Writes the count of an entry marked kWideCount as a run's varint.
  [[gnu::noinline, gnu::cold]] char* EncodeWideCount(char* out, const SortEntry& e) const {
    return EncodeVarint(out, ZigZag128(CountOf(e)));
  }

  // An entry's count: inline, or beside it.
  Int128 CountOf(const SortEntry& e) const {
    if (e.count != kWideCount) return e.count;
    std::string key;
    KeyOf(e, &key);
    auto it = wide_.find(key);
    return it == wide_.end() ? 0 : it->second;
  }

  // The whole entry key of e into *key.
  void KeyOf(const SortEntry& e, std::string* key) const {
    const size_t size = e.size();
    key->resize(std::max(size, kInlineKeyBytes));
    StoreBig(key->data(), e.k[0]);
    StoreBig(key->data() + 8, e.k[1]);
    StoreBig(key->data() + 16, e.k[2]);
    if (size > kInlineKeyBytes) std::memcpy(key->data() + kInlineKeyBytes, Tail(e), size - kInlineKeyBytes);
    key->resize(size);
  }

  // Writes the (sorted) entries as a run. Front coded, since sorted neighbours share most
  // of their keys: varint bytes shared with the previous key, varint length of the rest,
  // the rest, varint zigzag count.
  Status WriteRun(const std::string& path) const {
    FileWriter w;
    if (Status s = w.Open(path, 4 << 20, /*direct=*/true); !s.ok()) return s;
    std::vector<char> buf(1 << 20);
    char* out = buf.data();
    const SortEntry* previous = nullptr;
    const bool any_wide = !wide_.empty();  // else no entry is marked kWideCount
    for (size_t i = 0; i < n_; ++i) {
      const SortEntry& e = entries()[i];
      // Encoded from the entry itself: the inline words say most of the shared prefix.
      const size_t size = e.size();
      if (const size_t need = 30 + size; size_t(out - buf.data()) + need > buf.size()) {
        if (Status s = w.Append(std::string_view(buf.data(), size_t(out - buf.data()))); !s.ok()) return s;
        if (need > buf.size()) buf.resize(need);
        out = buf.data();
      }
      const size_t shared = previous == nullptr ? 0 : SharedBytes(*previous, e);
      out = EncodeVarint(EncodeVarint(out, shared), size - shared);
      if (shared < kInlineKeyBytes) {
        char inline_bytes[kInlineKeyBytes];
        StoreBig(inline_bytes, e.k[0]);
        StoreBig(inline_bytes + 8, e.k[1]);
        StoreBig(inline_bytes + 16, e.k[2]);
        const size_t n = std::min(size, kInlineKeyBytes) - shared;
        std::memcpy(out, inline_bytes + shared, n);
        out += n;
      }
      if (size > kInlineKeyBytes) {
        const size_t from = std::max(shared, kInlineKeyBytes) - kInlineKeyBytes;
        std::memcpy(out, Tail(e) + from, size - kInlineKeyBytes - from);
        out += size - kInlineKeyBytes - from;
      }
      out = any_wide && e.count == kWideCount ? EncodeWideCount(out, e) : EncodeVarint(out, ZigZag(e.count));
      previous = &e;
    }
    if (Status s = w.Append(std::string_view(buf.data(), size_t(out - buf.data()))); !s.ok()) return s;
    // No fsync: a run is scratch; a crash redoes the whole import.
    return w.Close();
  }

  void Clear() {
    n_ = 0;
    tails_ = bytes_ - kSlack;
    wide_.clear();
  }
  size_t size() const { return n_; }
  const SortEntry* entries() const { return reinterpret_cast<const SortEntry*>(base_); }

 private:
  SortEntry* entries() { return reinterpret_cast<SortEntry*>(base_); }
  const char* Tail(const SortEntry& e) const { return base_ + e.offset(); }
  // How many leading key bytes a and b share. The inline words are zero padded, so what
  // they say is capped at the shorter key.
  size_t SharedBytes(const SortEntry& a, const SortEntry& b) const {
    const size_t shorter = std::min(a.size(), b.size());
    for (int w = 0; w < 3; ++w) {
      if (const uint64_t x = a.k[w] ^ b.k[w]; x != 0) return std::min(shorter, size_t(8 * w + __builtin_clzll(x) / 8));
    }
    if (shorter <= kInlineKeyBytes) return shorter;
    return kInlineKeyBytes + SharedPrefix(std::string_view(Tail(a), a.size() - kInlineKeyBytes),
                                          std::string_view(Tail(b), b.size() - kInlineKeyBytes));
  }
  bool Equal(const SortEntry& a, const SortEntry& b) const {
    if (!a.SamePrefix(b) || a.size() != b.size()) return false;
    return a.size() <= kInlineKeyBytes ||
           std::memcmp(Tail(a), Tail(b), a.size() - kInlineKeyBytes) == 0;
  }
  // Adds cur's count to *acc's (equal keys) when either is wide or their sum leaves int64.
  // wide_[key] holds the sum of the counts of the key's entries marked kWideCount (a
  // summed entry counting as its sum so far): *acc ends marked, its sum there.
  bool SumWide(SortEntry* acc, const SortEntry& cur) {
    if (acc->count != kWideCount || cur.count != kWideCount) {
      std::string key;
      KeyOf(*acc, &key);
      Int128& sum = wide_.try_emplace(std::move(key), 0).first->second;
      if (acc->count != kWideCount && !AddInt128(&sum, acc->count)) return false;
      if (cur.count != kWideCount && !AddInt128(&sum, cur.count)) return false;
      acc->count = kWideCount;
    }
    return true;  // both marked: both are in wide_ already
  }

  const uint64_t bytes_;
  char* base_ = nullptr;
  uint64_t tails_ = 0;  // the lowest tail byte; tails_ .. bytes_ - kSlack are in use
  size_t n_ = 0;
  // Entry key → the count of its entries marked kWideCount: counts that do not fit int64
  // and sums that leave it, rare enough for a hash map (docs/rebuild.md#counts).
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>()(key); }
  };
  std::unordered_map<std::string, Int128, KeyHash, std::equal_to<>> wide_;
};

// A sorted stream of (entry key, count).
class RecordSorter::Source {
 public:
  virtual ~Source() = default;
  virtual bool Next() = 0;  // false at the end or on error
  virtual Status status() const { return Status::OK(); }
  std::string_view key;
  Int128 count = 0;
  uint64_t k[3] = {0, 0, 0};  // the first 24 key bytes, as in SortEntry: most comparisons end here
  uint32_t index = 0;         // the merge's tie-break between equal keys: sums in source order

  // <0, 0, >0 by key bytes.
  static int Compare(const Source& a, const Source& b) {
    for (int i = 0; i < 3; ++i) {
      if (a.k[i] != b.k[i]) return a.k[i] < b.k[i] ? -1 : 1;
    }
    const size_t la = a.key.size(), lb = b.key.size();
    if (la <= kInlineKeyBytes || lb <= kInlineKeyBytes) return (la > lb) - (la < lb);
    return a.key.substr(kInlineKeyBytes).compare(b.key.substr(kInlineKeyBytes));
  }
};

// A batch still in memory, sorted.
class RecordSorter::MemorySource : public Source {
 public:
  explicit MemorySource(const Batch* batch) : batch_(batch) {}
  bool Next() override {
    if (i_ >= batch_->size()) return false;
    const SortEntry& e = batch_->entries()[i_++];
    batch_->KeyOf(e, &key_);
    key = key_;
    count = e.count != kWideCount ? e.count : batch_->CountOf(e);
    k[0] = e.k[0];
    k[1] = e.k[1];
    k[2] = e.k[2];
    return true;
  }

 private:
  const Batch* batch_;
  size_t i_ = 0;
  std::string key_;
};

class RecordSorter::RunSource : public Source {
 public:
  // block_bytes: how much is read at once (twice that is in flight).
  Status Open(const std::string& path, size_t block_bytes) {
    path_ = path;
    return reader_.Open(path, block_bytes);
  }
  bool Next() override {
    uint64_t shared = 0, rest = 0, zz = 0;
    size_t n1 = 0, n2 = 0, n3 = 0;
    // Most records are three one-byte varints around a short rest, all in the buffer:
    // read without the general loop's bounds checks (a third of the merge thread's time).
    const auto* u = reinterpret_cast<const uint8_t*>(buffer_.data() + pos_);
    const size_t avail = end_ - pos_;
    if (avail >= 3 && u[0] < 0x80 && u[1] < 0x80 && size_t(u[1]) + 3 <= avail && u[2 + u[1]] < 0x80) {
      shared = u[0];
      rest = u[1];
      zz = u[2 + rest];
      n1 = n2 = n3 = 1;
      if (shared > key.size()) return Fail("bad record size");
    }
    while (n3 == 0) {
      const char* p = buffer_.data() + pos_;
      const char* end = buffer_.data() + end_;
      n1 = DecodeVarint(p, end, &shared);
      n2 = n1 == 0 ? 0 : DecodeVarint(p + n1, end, &rest);
      if (n2 != 0) {
        if (shared > key.size() || shared + rest > kMaxEntryKey) return Fail("bad record size");
        if (uint64_t(end - p) > n1 + n2 + rest) {
          const char* const c = p + n1 + n2 + rest;
          n3 = DecodeVarint(c, end, &zz);
          // A count past 64 bits (kept beside its entry in memory, Batch::wide_): its ten
          // bytes so far do not end it, or the tenth holds more than bit 63.
          if ((n3 == 0 && end - c > 10) || (n3 == 10 && uint8_t(c[9]) > 1)) return NextWide(c, end, shared, rest, n1 + n2);
          if (n3 != 0) break;
        }
      }
      if (!Refill()) {
        if (status_.ok() && pos_ != end_) return Fail("truncated record");
        return false;
      }
    }
    SetKey(shared, rest, n1 + n2);
    count = UnZigZag(zz);
    pos_ += n1 + n2 + rest + n3;
    return true;
  }
  Status status() const override { return status_; }

 private:
  // The record's key from the buffer: `rest` bytes at pos_ + sizes after the `shared` ones
  // of the last key.
  void SetKey(uint64_t shared, uint64_t rest, size_t sizes) {
    const size_t size = shared + rest;
    if (size + kInlineKeyBytes > key_.size()) key_.resize(std::max(2 * key_.size(), size + kInlineKeyBytes));
    char* const k_bytes = key_.data();
    std::memcpy(k_bytes + shared, buffer_.data() + pos_ + sizes, rest);
    key = std::string_view(k_bytes, size);
    // The prefix words from the buffer itself: bytes past the key are whatever an earlier,
    // longer key left there, so they are masked off.
    for (size_t w = 0; w < 3; ++w) {
      const size_t have = size > 8 * w ? std::min<size_t>(size - 8 * w, 8) : 0;
      const uint64_t word = LoadBig(k_bytes + 8 * w);
      k[w] = have == 0 ? 0 : have == 8 ? word : word & ~(~uint64_t(0) >> (8 * have));
    }
  }
  // Next() of a record whose count is a varint past 64 bits, at c (whole in the buffer or
  // cut by its end: then the general loop refills, as for any record).
  [[gnu::noinline, gnu::cold]] bool NextWide(const char* c, const char* end, uint64_t shared, uint64_t rest, size_t sizes) {
    Uint128 zz = 0;
    const size_t n3 = DecodeVarint(c, end, &zz);
    if (n3 == 0) {
      if (end - c >= 19) return Fail("bad count");
      if (!Refill()) {
        if (status_.ok()) return Fail("truncated record");
        return false;
      }
      return Next();  // the same record again, with more bytes
    }
    SetKey(shared, rest, sizes);
    count = UnZigZag128(zz);
    pos_ += sizes + rest + n3;
    return true;
  }
  bool Fail(const char* why) {
    status_ = Status::Error("run file " + path_ + ": " + why);
    return false;
  }
  // Appends the next block behind the unread bytes; false at the end or on an error.
  bool Refill() {
    std::string_view block;
    if (status_ = reader_.Next(&block); !status_.ok() || block.empty()) return false;
    if (buffer_.size() < end_ - pos_ + block.size()) buffer_.resize(end_ - pos_ + block.size());
    std::memmove(buffer_.data(), buffer_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
    std::memcpy(buffer_.data() + end_, block.data(), block.size());
    end_ += block.size();
    return true;
  }
  std::string path_;
  BlockReader reader_;
  std::vector<char> buffer_;
  size_t pos_ = 0, end_ = 0;
  // The last key (the next one shares a prefix with it), with at least 24 bytes to spare
  // for the prefix words' loads.
  std::vector<char> key_ = std::vector<char>(256);
  Status status_;
};

RecordSorter::Feeder::Feeder(RecordSorter* sorter, uint64_t memory_bytes, uint32_t sort_threads)
    : sorter_(sorter), batch_(std::make_unique<Batch>(memory_bytes)), sort_threads_(sort_threads) {
  day_bits_.assign(65536 / 64, 0);
}

RecordSorter::Feeder::~Feeder() = default;

// A lookup: its key is the archive key, its original the column, of the lookup day.
Status RecordSorter::Feeder::ReadLookup(std::string_view key, std::string_view value, Entry* e) {
  if (value.empty()) return Status::Error("lookup '" + std::string(key) + "' has an empty original");
  if (Result<std::string> u = UnescapeLookupValue(value); !u.ok()) {
    return Status::Error("lookup '" + std::string(key) + "': " + u.status().message());
  }
  e->day = sorter_->options_.lookup_day;
  e->head = key;
  e->column = value;
  has_lookups_ = true;
  return Status::OK();
}

// An hour record (parsed_): its count (kWideCount and wide_count_ past int64), its day,
// and the archive key and column it goes to.
[[gnu::always_inline]] inline Status RecordSorter::Feeder::ReadHour(std::string_view key, std::string_view value, Entry* e) {
  const SorterOptions& options = sorter_->options_;
  const ParsedKey& p = parsed_;
  if (!ParseCountQuietly(value, &e->count) || e->count == kWideCount) {  // rare: a count past int64
    if (!ParseInt128(value, &wide_count_)) {
      return Status::Error("count '" + Clipped(value, 40) + "' of '" + std::string(key) + "' is not a signed 128-bit integer");
    }
    e->count = kWideCount;
  }
  const int64_t d = p.hour / kSecondsPerDay;
  e->day = Day(d);
  if (options.only_day != 0 && e->day != options.only_day) {
    return Status::Error("record '" + std::string(key) + "' is of day " + FormatDay(d) +
                         ", not " + FormatDay(options.only_day));
  }
  day_bits_[e->day >> 6] |= uint64_t(1) << (e->day & 63);
  if (p.type == RecordType::kTotal) {
    e->head = p.shard_key;  // {ns}|{key}
    e->column = p.ymdh;
  } else {
    // {subns}.{ns}|{key} . {ymdh}: the realtime key without its ".{subkey}".
    e->head = key.substr(0, size_t(p.subkey.data() - key.data()) - 1);
    e->tail = p.ymdh;
    e->column = p.subkey;
  }
  return Status::OK();
}

// The entry key (day, shard, head[.tail], '\0', column) built and added to the batch.
[[gnu::always_inline]] inline Status RecordSorter::Feeder::AddEntry(const Entry& e) {
  const SorterOptions& options = sorter_->options_;
  // crc32 % 1 is 0: one archive shard needs no checksum (3% of an import).
  const uint32_t shard = options.shards == 1 ? 0 : ShardOf(parsed_.shard_key, options.shards);
  const size_t size = 4 + e.head.size() + (e.tail.empty() ? 0 : 1 + e.tail.size()) + 1 + e.column.size();
  if (size > kMaxEntryKey) return Status::Error("record is too long");
  // Built on the stack unless it is long (a lookup's original): resizing a string
  // zero-filled it first. Zero padded to the inline bytes, which Batch::Add loads whole.
  constexpr size_t kStackKey = 256;
  char stack_key[kStackKey + kInlineKeyBytes];
  char* entry_key = stack_key;
  if (size > kStackKey) {
    key_.resize(size);
    entry_key = key_.data();
  } else {
    std::memset(stack_key + size, 0, kInlineKeyBytes);
  }
  char* w = entry_key;
  *w++ = char(e.day >> 8);
  *w++ = char(e.day);
  *w++ = char(shard >> 8);
  *w++ = char(shard);
  std::memcpy(w, e.head.data(), e.head.size());
  w += e.head.size();
  if (!e.tail.empty()) {
    *w++ = '.';
    std::memcpy(w, e.tail.data(), e.tail.size());
    w += e.tail.size();
  }
  *w++ = '\0';
  std::memcpy(w, e.column.data(), e.column.size());
  if (Status s = batch_->Map(); !s.ok()) {
    io_error_ = true;
    return s;
  }
  const std::string_view whole(entry_key, size);
  if (e.count == kWideCount) return AddWide(whole);
  if (!batch_->Add(whole, e.count)) {
    if (Status s = SpillAndAdd(whole, e.count); !s.ok()) return s;
  }
  records_++;
  return Status::OK();
}

Status RecordSorter::Feeder::Add(std::string_view line) {
  const size_t comma = line.find(',');
  if (comma == std::string_view::npos) return Status::Error("no ',' between key and value");
  const std::string_view key = line.substr(0, comma), value = line.substr(comma + 1);
  if (!ParseRealtimeKeyQuietly(key, &parsed_)) return ParseRealtimeKey(key).status();
  Entry e;
  if (parsed_.type == RecordType::kLookup) {
    if (Status s = ReadLookup(key, value, &e); !s.ok()) return s;
  } else {
    if (Status s = ReadHour(key, value, &e); !s.ok()) return s;
  }
  return AddEntry(e);
}

Status RecordSorter::Feeder::SpillAndAdd(std::string_view entry_key, int64_t count) {
  if (Status s = Spill(); !s.ok()) {
    io_error_ = true;
    return s;
  }
  if (!batch_->Add(entry_key, count)) {
    io_error_ = true;
    return Status::Error("--memory is too small for a record of " + std::to_string(entry_key.size()) + " bytes");
  }
  return Status::OK();
}

Status RecordSorter::Feeder::AddWide(std::string_view entry_key) {
  if (!batch_->CanAddWide(entry_key, wide_count_)) {
    const std::string_view rest = entry_key.substr(4);  // the archive key, then '\0' and the column
    const size_t zero = std::min(rest.find('\0'), rest.size());
    return Status::Error("the counts of '" + std::string(rest.substr(0, zero)) + "' " +
                         std::string(rest.substr(std::min(zero + 1, rest.size()))) + " leave 128 bits");
  }
  if (!batch_->Add(entry_key, kWideCount)) {
    if (Status s = SpillAndAdd(entry_key, kWideCount); !s.ok()) return s;
  }
  batch_->AddWide(entry_key, wide_count_);
  records_++;
  return Status::OK();
}

// Sorts this feeder's records and writes them as a run, on this thread.
Status RecordSorter::Feeder::Spill() {
  if (batch_->size() == 0) return Status::OK();
  if (!batch_->SortAndSum(sort_threads_)) return Status::Error("the counts of one record leave 128 bits");
  if (Status s = batch_->WriteRun(sorter_->NewRunPath()); !s.ok()) return s;
  batch_->Clear();
  return Status::OK();
}

RecordSorter::RecordSorter(SorterOptions options) : options_(std::move(options)) {
  // 5% of the budget is left for I/O buffers.
  const uint64_t memory = std::max<uint64_t>(options_.memory_bytes, 1 << 20) * 95 / 100;
  const uint64_t most = std::max<uint64_t>(1, memory / kMinFeederMemory);
  const uint32_t feeders = uint32_t(std::clamp<uint64_t>(options_.feeders, 1, most));
  // Several feeders sort on their own threads at once; a single one sorts on all of them.
  const uint32_t sort_threads = std::max<uint32_t>(1, options_.threads / feeders);
  for (uint32_t i = 0; i < feeders; ++i) feeders_.push_back(std::make_unique<Feeder>(this, memory / feeders, sort_threads));
}

RecordSorter::~RecordSorter() {
  for (const std::string& path : run_paths_) ::unlink(path.c_str());
}

std::string RecordSorter::NewRunPath() {
  std::lock_guard<std::mutex> lock(runs_mu_);
  run_paths_.push_back(options_.temp_dir + "/run-" + std::to_string(run_paths_.size()));
  return run_paths_.back();
}

Status RecordSorter::Add(std::string_view line) { return feeders_[0]->Add(line); }

bool RecordSorter::io_error() const {
  for (const auto& f : feeders_) {
    if (f->io_error()) return true;
  }
  return false;
}

std::vector<Day> RecordSorter::Days() const {
  std::vector<Day> days;
  for (size_t w = 0; w < 65536 / 64; ++w) {
    uint64_t bits = 0;
    for (const auto& f : feeders_) bits |= f->day_bits_[w];
    for (; bits != 0; bits &= bits - 1) days.push_back(Day(w * 64 + size_t(__builtin_ctzll(bits))));
  }
  return days;
}

bool RecordSorter::has_lookups() const {
  for (const auto& f : feeders_) {
    if (f->has_lookups_) return true;
  }
  return false;
}

SorterStats RecordSorter::stats() const {
  SorterStats st = stats_;
  for (const auto& f : feeders_) st.records_in += f->records_;
  std::lock_guard<std::mutex> lock(runs_mu_);
  st.runs = run_paths_.size();
  return st;
}

namespace {

// Builds archive lines from the merged stream, whole lines back to back in one block that
// goes to the sink in pieces of ~64 KiB (a Line() call and a copy of key and value per line
// were a fifth of the assembling thread's time).
class LineAssembler {
 public:
  LineAssembler(LineSink* sink, const std::function<void(const std::string&)>& on_collision,
                SorterStats* stats)
      : sink_(sink), on_collision_(on_collision), stats_(stats) {
    block_.reserve(kBlockBytes + 4096);
  }

  Status Add(std::string_view entry_key, Int128 count) {
    const Day day = Day((uint8_t(entry_key[0]) << 8) | uint8_t(entry_key[1]));
    const uint32_t shard = (uint32_t(uint8_t(entry_key[2])) << 8) | uint8_t(entry_key[3]);
    const std::string_view rest = entry_key.substr(4);
    const size_t zero = std::min(rest.find('\0'), rest.size());
    const std::string_view key = rest.substr(0, zero);
    const std::string_view column = zero < rest.size() ? rest.substr(zero + 1) : std::string_view();
    if (!in_group_ || day != day_ || shard != shard_) {
      if (Status s = FlushLine(); !s.ok()) return s;
      if (Status s = FlushBlock(); !s.ok()) return s;
      if (in_group_) {
        if (Status s = sink_->EndGroup(); !s.ok()) return s;
      }
      if (Status s = sink_->BeginGroup(day, shard); !s.ok()) return s;
      in_group_ = true;
      day_ = day;
      shard_ = shard;
    } else if (in_line_ && key != LineKey()) {
      if (Status s = FlushLine(); !s.ok()) return s;
    } else if (in_line_ && is_lookup_) {
      // Same hash, another original: never resolved silently.
      stats_->collisions++;
      if (on_collision_) {
        on_collision_("hash collision: " + std::string(LineKey()) + " is both '" +
                      block_.substr(value_begin_) + "' (kept) and '" + std::string(column) + "'");
      }
      return Status::OK();
    }
    if (!in_line_) {
      in_line_ = true;
      line_begin_ = block_.size();
      block_.append(key).push_back(',');
      value_begin_ = block_.size();
      columns_ = 0;
      is_lookup_ = key.starts_with(kLookupPrefix);
      if (is_lookup_) {
        block_.append(column);
        return Status::OK();
      }
    }
    if (count != 0) {
      AppendColumn(&block_, value_begin_, column, count);
      columns_++;
    }
    return Status::OK();
  }

  Status Finish() {
    if (Status s = FlushLine(); !s.ok()) return s;
    if (Status s = FlushBlock(); !s.ok()) return s;
    if (in_group_) return sink_->EndGroup();
    return Status::OK();
  }

 private:
  static constexpr size_t kBlockBytes = 64 << 10;
  std::string_view LineKey() const {
    return std::string_view(block_.data() + line_begin_, value_begin_ - 1 - line_begin_);
  }
  // Ends the line being built: kept with its '\n', or dropped when its value is empty
  // (every count summed to zero).
  Status FlushLine() {
    if (!in_line_) return Status::OK();
    in_line_ = false;
    if (block_.size() == value_begin_) {
      block_.resize(line_begin_);
      return Status::OK();
    }
    block_.push_back('\n');
    const uint64_t columns = is_lookup_ ? 0 : columns_;
    block_records_++;
    block_columns_ += columns;
    stats_->lines_out++;
    stats_->columns_out += columns;
    return block_.size() >= kBlockBytes ? FlushBlock() : Status::OK();
  }
  // The whole lines so far to the sink (only between lines: none is being built).
  Status FlushBlock() {
    if (block_records_ == 0) return Status::OK();
    Status s = sink_->Lines(block_, block_records_, block_columns_);
    block_.clear();
    block_records_ = block_columns_ = 0;
    return s;
  }

  LineSink* sink_;
  const std::function<void(const std::string&)>& on_collision_;
  SorterStats* stats_;
  bool in_group_ = false;
  Day day_ = 0;
  uint32_t shard_ = 0;
  std::string block_;          // whole lines, then the line being built
  bool in_line_ = false;
  size_t line_begin_ = 0;      // where the line being built starts in block_
  size_t value_begin_ = 0;     // and its value (after "key,")
  uint64_t columns_ = 0;       // of the line being built
  bool is_lookup_ = false;
  uint64_t block_records_ = 0, block_columns_ = 0;
};

}  // namespace

// Receives the merged stream: one (entry key, summed count) per distinct key, in order.
class RecordSorter::MergedSink {
 public:
  virtual ~MergedSink() = default;
  virtual Status Add(std::string_view key, Int128 count) = 0;
};

namespace {

// The merged stream straight into the line assembler, on one thread.
class AssemblerSink : public RecordSorter::MergedSink {
 public:
  explicit AssemblerSink(LineAssembler* assembler) : assembler_(assembler) {}
  Status Add(std::string_view key, Int128 count) override { return assembler_->Add(key, count); }

 private:
  LineAssembler* assembler_;
};

// The hand-off from the merging thread to the assembling one: blocks of records
// (4-byte key size, key, 16-byte count), a few in flight, reused. Plain bytes, written in
// place: appending the three parts to a string was 3 % of an import.
constexpr size_t kRecordBlockBytes = 1 << 20;
constexpr size_t kRecordBlocks = 4;
struct RecordBlock {
  std::unique_ptr<char[]> bytes;
  size_t size = 0, capacity = 0;
  std::string_view view() const { return {bytes.get(), size}; }
};
using RecordPipe = BlockPipe<RecordBlock>;

// The merged stream into blocks of a RecordPipe.
class PipeSink : public RecordSorter::MergedSink {
 public:
  explicit PipeSink(RecordPipe* pipe) : pipe_(pipe) {}
  Status Add(std::string_view key, Int128 count) override {
    const uint32_t size = uint32_t(key.size());
    const size_t need = 4 + sizeof count + size_t(size);
    if (block_ == nullptr || (block_->size != 0 && block_->size + need > kRecordBlockBytes)) {
      if (block_ != nullptr) pipe_->PushFull(block_);
      block_ = pipe_->TakeFree();
      if (block_ == nullptr) return Status::Error("merge stopped");  // the consumer's error is reported
    }
    if (block_->capacity < need) {  // a block's first record may be longer than a block
      block_->capacity = std::max(kRecordBlockBytes, need);
      block_->bytes = std::make_unique_for_overwrite<char[]>(block_->capacity);
    }
    char* const p = block_->bytes.get() + block_->size;
    std::memcpy(p, &size, 4);
    std::memcpy(p + 4, key.data(), size);
    std::memcpy(p + 4 + size, &count, sizeof count);
    block_->size += need;
    return Status::OK();
  }
  // Hands over the last block and closes the pipe.
  void Finish() {
    if (block_ != nullptr) pipe_->PushFull(block_);
    block_ = nullptr;
    pipe_->Close();
  }

 private:
  RecordPipe* pipe_;
  RecordBlock* block_ = nullptr;
};

// Feeds the records of one block to the assembler.
Status AssembleBlock(std::string_view block, LineAssembler* assembler) {
  const char* p = block.data();
  const char* const end = p + block.size();
  while (p < end) {
    uint32_t size;
    Int128 count;
    std::memcpy(&size, p, 4);
    std::memcpy(&count, p + 4 + size, sizeof count);
    if (Status s = assembler->Add(std::string_view(p + 4, size), count); !s.ok()) return s;
    p += 4 + sizeof count + size;
  }
  return Status::OK();
}

}  // namespace

// K-way merge of sorted sources; equal keys summed. The sources sit in a binary min-heap by
// (key, index) whose top is re-sifted in place as it moves on: one sift a record, where a
// pop and a push were two.
// The sources being merged, by their current record: a binary min-heap, equal keys by
// source index, the least on top.
class RecordSorter::SourceHeap {
 public:
  // Every source that has a record, in heap order.
  Status Fill(std::vector<std::unique_ptr<Source>>& sources) {
    for (size_t i = 0; i < sources.size(); ++i) {
      sources[i]->index = uint32_t(i);
      if (sources[i]->Next()) heap_.push_back(sources[i].get());
      else if (Status s = sources[i]->status(); !s.ok()) return s;
    }
    for (size_t i = heap_.size() / 2; i-- > 0;) SiftDown(i);
    return Status::OK();
  }
  bool empty() const { return heap_.empty(); }
  const Source& top() const { return *heap_[0]; }

  // Another source holding the top's key holds the least key, so one of the top's
  // children does too.
  bool TopShared() const {
    return (heap_.size() > 1 && Source::Compare(*heap_[1], *heap_[0]) == 0) ||
           (heap_.size() > 2 && Source::Compare(*heap_[2], *heap_[0]) == 0);
  }

  // The top moves on: sifted down again, or replaced by the last source at its end.
  Status AdvanceTop() {
    if (!heap_[0]->Next()) {
      if (Status s = heap_[0]->status(); !s.ok()) return s;
      heap_[0] = heap_.back();
      heap_.pop_back();
      if (heap_.empty()) return Status::OK();
    }
    SiftDown(0);
    return Status::OK();
  }

  // The top's key (copied to *key: its source moves on) summed over every source holding
  // it, each advanced past it. REQUIRES: !empty().
  Status SumTop(std::string* key, Int128* sum) {
    key->assign(top().key);
    current_.key = *key;
    std::copy(top().k, top().k + 3, current_.k);
    *sum = top().count;
    bool overflow = false;
    if (Status s = AdvanceTop(); !s.ok()) return s;
    while (!heap_.empty() && Source::Compare(*heap_[0], current_) == 0) {
      overflow |= !AddInt128(sum, heap_[0]->count);
      if (Status s = AdvanceTop(); !s.ok()) return s;
    }
    if (!overflow) return Status::OK();
    return Status::Error("the counts of one record leave 128 bits (day " +
                         DayName(Day((uint8_t((*key)[0]) << 8) | uint8_t((*key)[1]))) + ", key " +
                         key->substr(4, key->find('\0', 4) - 4) + ")");
  }

 private:
  static bool Less(const Source* a, const Source* b) {
    const int c = Source::Compare(*a, *b);
    return c != 0 ? c < 0 : a->index < b->index;
  }
  void SiftDown(size_t i) {
    const size_t n = heap_.size();
    Source* const moving = heap_[i];
    for (size_t child; (child = 2 * i + 1) < n; i = child) {
      if (child + 1 < n && Less(heap_[child + 1], heap_[child])) ++child;
      if (!Less(heap_[child], moving)) break;
      heap_[i] = heap_[child];
    }
    heap_[i] = moving;
  }

  std::vector<Source*> heap_;
  // The record being summed: a copy of its key and its prefix words.
  struct Held final : Source {
    bool Next() override { return false; }
  } current_;
};

Status RecordSorter::MergeSources(std::vector<std::unique_ptr<Source>>* all, MergedSink* out) {
  std::vector<std::unique_ptr<Source>>& sources = *all;
  if (sources.size() == 1) {  // one sorted source, keys already summed: no merge
    Source& only = *sources[0];
    while (only.Next()) {
      if (Status s = out->Add(only.key, only.count); !s.ok()) return s;
    }
    return only.status();
  }
  SourceHeap heap;
  if (Status s = heap.Fill(sources); !s.ok()) return s;
  std::string key;
  while (!heap.empty()) {
    // The common case, a key in one source only, goes out before its source moves on: no
    // copy of the key.
    if (!heap.TopShared()) {
      if (Status s = out->Add(heap.top().key, heap.top().count); !s.ok()) return s;
      if (Status s = heap.AdvanceTop(); !s.ok()) return s;
      continue;
    }
    Int128 sum = 0;
    if (Status s = heap.SumTop(&key, &sum); !s.ok()) return s;
    if (Status s = out->Add(key, sum); !s.ok()) return s;
  }
  return Status::OK();
}

Status RecordSorter::Finish(LineSink* sink, const std::function<void(const std::string&)>& on_collision) {
  std::vector<std::unique_ptr<Source>> sources;
  {
    std::lock_guard<std::mutex> lock(runs_mu_);
    // A run holds three blocks (two read ahead, one being decoded): all of them within 4%
    // of the memory budget, 4 MiB at most.
    const uint64_t share = options_.memory_bytes / 25 / (3 * std::max<size_t>(1, run_paths_.size()));
    const size_t block = size_t(std::clamp<uint64_t>(share, 64 << 10, kRunBlockBytes));
    for (const std::string& path : run_paths_) {
      auto run = std::make_unique<RunSource>();
      if (Status s = run->Open(path, block); !s.ok()) return s;
      sources.push_back(std::move(run));
    }
  }
  // What is still in memory: each batch sorted on every thread, one after the other.
  for (const auto& f : feeders_) {
    if (f->batch_->size() == 0) continue;
    if (!f->batch_->SortAndSum(options_.threads)) return Status::Error("the counts of one record leave 128 bits");
    sources.push_back(std::make_unique<MemorySource>(f->batch_.get()));
  }

  LineAssembler assembler(sink, on_collision, &stats_);
  if (options_.threads < 2) {
    AssemblerSink direct(&assembler);
    if (Status s = MergeSources(&sources, &direct); !s.ok()) return s;
    return assembler.Finish();
  }
  // Two threads: a helper merges (reading runs, comparing, summing), this one assembles
  // lines and writes them.
  RecordPipe pipe(kRecordBlocks);
  Status merged;
  std::thread merger([&] {
    PipeSink out(&pipe);
    merged = MergeSources(&sources, &out);
    out.Finish();
  });
  Status assembled;
  while (RecordBlock* block = pipe.TakeFull()) {
    if (assembled.ok()) assembled = AssembleBlock(block->view(), &assembler);
    if (!assembled.ok()) pipe.Cancel();
    block->size = 0;
    pipe.GiveBack(block);
  }
  merger.join();
  if (!assembled.ok()) return assembled;
  if (!merged.ok()) return merged;
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
