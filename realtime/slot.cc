#include "realtime/slot.h"

#include <tcbdb.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/durable_file.h"
#include "keyformat/records.h"
#include "keyformat/ymdh.h"

namespace clickatron::realtime {
namespace {

static_assert(std::endian::native == std::endian::little,
              "counters are stored as little-endian integers by memcpy");

constexpr std::string_view kDayKey = "#day";
constexpr std::string_view kStateKey = "#state";
constexpr std::string_view kMarkPrefix = "#hwm|";
constexpr std::string_view kAbsMaxKey = "#absmax";
constexpr int kCounterSize = sizeof(int64_t);  // a counter that fits int64
constexpr int kWideCounterSize = sizeof(Int128);  // one that has left it

// Writes v as a counter's stored bytes at out (kWideCounterSize available); returns the size.
int EncodeCounter(Int128 v, char* out) {
  if (FitsInt64(v)) {
    const int64_t narrow = static_cast<int64_t>(v);
    std::memcpy(out, &narrow, kCounterSize);
    return kCounterSize;
  }
  std::memcpy(out, &v, kWideCounterSize);
  return kWideCounterSize;
}

// tcbdbputproc's callback: a counter's new value in memory Tokyo Cabinet frees.
void* NewCounterValue(Int128 v, int* sp) {
  char bytes[kWideCounterSize];
  *sp = EncodeCounter(v, bytes);
  void* out = std::malloc(static_cast<size_t>(*sp));
  std::memcpy(out, bytes, static_cast<size_t>(*sp));
  return out;
}

// tcbdbputproc's callback: adds the delta in place (one B+tree search per increment,
// like tcbdbaddint, which only holds 32 bits). Returning NULL leaves the record alone.
struct AddOp {
  int64_t delta;
  bool subtract;
  bool overflow;
  bool corrupt;
};

void* AddProc(const void* vbuf, int vsiz, int* sp, void* arg) {
  AddOp* op = static_cast<AddOp*>(arg);
  Int128 sum;
  if (!DecodeCounter(std::string_view(static_cast<const char*>(vbuf), static_cast<size_t>(vsiz)), &sum)) {
    op->corrupt = true;
    return nullptr;
  }
  if (!AddInt128(&sum, op->subtract ? -Int128{op->delta} : Int128{op->delta})) {
    op->overflow = true;
    return nullptr;
  }
  if (op->subtract && sum == 0) return reinterpret_cast<void*>(-1);  // remove the record
  return NewCounterValue(sum, sp);
}

// tcbdbputproc's callback for a flush: adds a 128-bit pending sum whose result must fit
// 128 bits (the ring checked it at acceptance) and tracks the largest |value| written.
struct ApplyOp {
  PendingDelta delta;
  Uint128 abs_max;
  bool overflow;
  bool corrupt;
};

void* ApplyProc(const void* vbuf, int vsiz, int* sp, void* arg) {
  ApplyOp* op = static_cast<ApplyOp*>(arg);
  Int128 sum;
  if (!DecodeCounter(std::string_view(static_cast<const char*>(vbuf), static_cast<size_t>(vsiz)), &sum)) {
    op->corrupt = true;
    return nullptr;
  }
  if (!AddInt128(&sum, op->delta)) {
    op->overflow = true;
    return nullptr;
  }
  op->abs_max = std::max(op->abs_max, AbsInt128(sum));
  return NewCounterValue(sum, sp);
}

bool ParseDecimal(const void* p, int size, int64_t* out) {
  Result<int64_t> n = ParseCount(std::string_view(static_cast<const char*>(p), static_cast<size_t>(size)));
  if (!n.ok()) return false;
  *out = *n;
  return true;
}

}  // namespace

bool DecodeCounter(std::string_view stored, Int128* value) {
  if (stored.size() == kCounterSize) {
    int64_t narrow;
    std::memcpy(&narrow, stored.data(), kCounterSize);
    *value = narrow;
    return true;
  }
  if (stored.size() != kWideCounterSize) return false;
  std::memcpy(value, stored.data(), kWideCounterSize);
  return true;
}

void AppendRecordValue(std::string_view key, std::string_view stored, std::string* out) {
  Int128 v;
  if (key.starts_with(kLookupPrefix) || !DecodeCounter(stored, &v)) {
    out->append(stored);
  } else {
    AppendInt128(out, v);
  }
}

Slot::Slot(int index, std::string path, const SlotOptions& options)
    : index_(index), path_(std::move(path)), options_(options) {}

Slot::~Slot() {
  Status s = Close();
  if (!s.ok()) std::fprintf(stderr, "realtime: closing slot %d: %s\n", index_, s.message().c_str());
}

Result<std::unique_ptr<Slot>> Slot::Open(int index, std::string path, const SlotOptions& options) {
  std::unique_ptr<Slot> slot(new Slot(index, std::move(path), options));
  // A reset that died before its rename: the old file is intact and still authoritative.
  std::string leftover = slot->path_ + ".new";
  if (::unlink(leftover.c_str()) == 0) {
    std::fprintf(stderr, "realtime: slot %d: removed %s left by an interrupted reset\n", index,
                 leftover.c_str());
  }
  Status s = slot->OpenFile(slot->path_, false);
  if (!s.ok()) return s;
  s = slot->LoadMetadata();
  if (!s.ok()) return s;
  return slot;
}

Status Slot::Error(std::string_view what) const {
  std::string m = path_ + ": " + std::string(what);
  if (db_ != nullptr) {
    m += ": ";
    m += tcbdberrmsg(tcbdbecode(db_));
  }
  return Status::Error(std::move(m));
}

Status Slot::OpenFile(const std::string& path, bool truncate) {
  db_ = tcbdbnew();
  // No tcbdbsetmutex: one thread uses a slot's file at a time — the event loop, or the
  // flusher while the loop leaves that slot alone (flusher.h, ring.h), and the FileSyncer
  // never touches Tokyo Cabinet objects — so its lock calls on every cursor step (11 % of a
  // realtime /fwsum, docs/benchmarks.md) bought nothing.
  // BDBTLARGE: 64-bit offsets, a busy day can pass 2 GB. Bucket count sized for ~1M leaves.
  tcbdbtune(db_, options_.lmemb, options_.nmemb, 262139, -1, -1, BDBTLARGE);
  tcbdbsetcache(db_, options_.leaf_cache, options_.node_cache);
  if (options_.mmap_bytes > 0) tcbdbsetxmsiz(db_, options_.mmap_bytes);
  int mode = BDBOWRITER | BDBOCREAT;
  if (truncate) mode |= BDBOTRUNC;
  if (options_.power_safe) mode |= BDBOTSYNC;
  if (!tcbdbopen(db_, path.c_str(), mode)) {
    std::string m = path + ": cannot open: " + tcbdberrmsg(tcbdbecode(db_));
    tcbdbdel(db_);
    db_ = nullptr;
    return Status::Error(std::move(m));
  }
  return Status::OK();
}

void Slot::CloseFile() {
  if (db_ == nullptr) return;
  tcbdbdel(db_);  // closes, writing back the caches
  db_ = nullptr;
  in_transaction_ = false;
}

Status Slot::Close() {
  if (db_ == nullptr) return Status::OK();
  Status s = Commit();
  if (s.ok() && !tcbdbclose(db_)) s = Error("close");
  tcbdbdel(db_);
  db_ = nullptr;
  return s;
}

Status Slot::LoadMetadata() {
  day_ = kNoDay;
  state_ = SlotState::kEmpty;
  marks_.clear();
  abs_max_ = 0;
  int size = 0;
  const void* day = tcbdbget3(db_, kDayKey.data(), static_cast<int>(kDayKey.size()), &size);
  if (day == nullptr) return Status::OK();  // a new, empty slot
  int64_t d;
  if (!ParseDecimal(day, size, &d) || d < 0) return Error("corrupt #day metadata");
  const void* state = tcbdbget3(db_, kStateKey.data(), static_cast<int>(kStateKey.size()), &size);
  SlotState st;
  if (state == nullptr ||
      !ParseSlotState(std::string_view(static_cast<const char*>(state), static_cast<size_t>(size)), &st)) {
    return Error("corrupt #state metadata");
  }
  day_ = d;
  state_ = st;
  BDBCUR* cur = tcbdbcurnew(db_);
  tcbdbcurjump(cur, kMarkPrefix.data(), static_cast<int>(kMarkPrefix.size()));
  Status s;
  for (;;) {
    int ksize = 0, vsize = 0;
    const char* k = static_cast<const char*>(tcbdbcurkey3(cur, &ksize));
    if (k == nullptr) break;
    std::string_view key(k, static_cast<size_t>(ksize));
    if (!key.starts_with(kMarkPrefix)) break;
    const void* v = tcbdbcurval3(cur, &vsize);
    int64_t seq;
    if (v == nullptr || !ParseDecimal(v, vsize, &seq)) {
      s = Error("corrupt high-water mark '" + std::string(key) + "'");
      break;
    }
    marks_.emplace(std::string(key.substr(kMarkPrefix.size())), seq);
    tcbdbcurnext(cur);
  }
  tcbdbcurdel(cur);
  if (!s.ok()) return s;
  return LoadAbsMax();
}

Status Slot::LoadAbsMax() {
  abs_max_ = 0;
  int size = 0;
  const void* v = tcbdbget3(db_, kAbsMaxKey.data(), static_cast<int>(kAbsMaxKey.size()), &size);
  if (v != nullptr) {
    Int128 bound;
    if (!ParseInt128(std::string_view(static_cast<const char*>(v), static_cast<size_t>(size)), &bound) || bound < 0) {
      return Error("corrupt #absmax metadata");
    }
    // 2^127 (|-2^127|) is written as 2^127 - 1, the largest Int128 (see Apply).
    abs_max_ = bound == kInt128Max ? Uint128(bound) + 1 : Uint128(bound);
    return Status::OK();
  }
  // A file written before #absmax existed: one scan of its counters.
  SlotCursor c(*this);
  for (c.Seek(""); c.Valid(); c.Next()) {
    Int128 value;
    if (c.key().starts_with(kLookupPrefix) || !DecodeCounter(c.stored_value(), &value)) continue;
    abs_max_ = std::max(abs_max_, AbsInt128(value));
  }
  return Status::OK();
}

Status Slot::Begin() {
  if (db_ == nullptr) return Status::Error(path_ + ": slot is closed after an earlier error");
  if (in_transaction_) return Status::OK();
  if (!tcbdbtranbegin(db_)) return Error("begin transaction");
  in_transaction_ = true;
  return Status::OK();
}

Status Slot::Commit() {
  if (!in_transaction_) return Status::OK();
  in_transaction_ = false;
  if (!tcbdbtrancommit(db_)) return Error("commit");
  if (options_.fsync && !options_.power_safe && !options_.background_fsync && !tcbdbsync(db_)) {
    return Error("sync");
  }
  return Status::OK();
}

Status Slot::Abort() {
  if (db_ == nullptr) return Status::Error(path_ + ": slot is closed after an earlier error");
  if (in_transaction_) {
    in_transaction_ = false;
    if (!tcbdbtranabort(db_)) return Error("abort transaction");
  }
  return LoadMetadata();
}

Status Slot::Reset(int64_t day) {
  Status s = Commit();
  if (!s.ok()) return s;
  CloseFile();
  const std::string fresh = path_ + ".new";
  s = OpenFile(fresh, true);
  if (s.ok()) {
    std::string d = std::to_string(day);
    std::string_view open = SlotStateName(SlotState::kOpen);
    bool ok = tcbdbput(db_, kDayKey.data(), static_cast<int>(kDayKey.size()), d.data(), static_cast<int>(d.size())) &&
              tcbdbput(db_, kStateKey.data(), static_cast<int>(kStateKey.size()), open.data(), static_cast<int>(open.size())) &&
              tcbdbsync(db_);
    if (!ok) s = Error("write new day");
    if (!tcbdbclose(db_) && s.ok()) s = Error("close new day");
    tcbdbdel(db_);
    db_ = nullptr;
  }
  if (s.ok()) s = RenameDurable(fresh, path_);
  if (!s.ok()) ::unlink(fresh.c_str());
  // Reopen whichever file is now at path_: the new day, or the old one if the reset failed.
  Status reopened = OpenFile(path_, false);
  if (reopened.ok()) reopened = LoadMetadata();
  if (!reopened.ok()) {
    CloseFile();
    return s.ok() ? reopened : s;
  }
  return s;
}

Status Slot::SetState(SlotState state) {
  Status s = Begin();
  if (!s.ok()) return s;
  std::string_view name = SlotStateName(state);
  if (!tcbdbput(db_, kStateKey.data(), static_cast<int>(kStateKey.size()), name.data(),
                static_cast<int>(name.size()))) {
    return Error("write #state");
  }
  s = Commit();
  if (s.ok()) state_ = state;
  return s;
}

Status Slot::MarkClosed() {
  if (state_ == SlotState::kEmpty) return Status::Error(path_ + ": slot holds no day");
  if (state_ != SlotState::kOpen) return Status::OK();
  return SetState(SlotState::kClosed);
}

Status Slot::Release() {
  if (state_ == SlotState::kEmpty) return Status::Error(path_ + ": slot holds no day");
  if (state_ == SlotState::kReleased) return Status::OK();
  if (state_ != SlotState::kClosed) return Status::Error(path_ + ": " + FormatDay(day_) + " is not closed");
  return SetState(SlotState::kReleased);
}

Status Slot::Add(std::string_view key, int64_t delta, bool* overflow) {
  Status s = Begin();
  if (!s.ok()) return s;
  AddOp op{delta, false, false, false};
  const bool ok = tcbdbputproc(db_, key.data(), static_cast<int>(key.size()), &delta, kCounterSize,
                               AddProc, &op);
  *overflow = op.overflow;
  if (op.overflow) return Status::OK();
  if (op.corrupt) return Status::Error(path_ + ": counter '" + std::string(key) + "' is not 8 or 16 bytes");
  if (!ok) return Error("add to '" + std::string(key) + "'");
  return Status::OK();
}

Status Slot::Undo(std::string_view key, int64_t delta) {
  AddOp op{delta, true, false, false};
  // The record exists (the Add being undone made it), so the value passed is never stored.
  const bool ok = tcbdbputproc(db_, key.data(), static_cast<int>(key.size()), nullptr, 0, AddProc, &op);
  if (op.overflow || op.corrupt || !ok) return Error("undo add to '" + std::string(key) + "'");
  return Status::OK();
}

Status Slot::PutLookup(std::string_view key, std::string_view escaped_value) {
  Status s = Begin();
  if (!s.ok()) return s;
  if (!tcbdbput(db_, key.data(), static_cast<int>(key.size()), escaped_value.data(),
                static_cast<int>(escaped_value.size()))) {
    return Error("put '" + std::string(key) + "'");
  }
  return Status::OK();
}

Status Slot::SetMark(std::string_view source, int64_t seq) {
  Status s = Begin();
  if (!s.ok()) return s;
  scratch_.assign(kMarkPrefix);
  scratch_.append(source);
  char buf[24];
  int n = std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(seq));
  if (!tcbdbput(db_, scratch_.data(), static_cast<int>(scratch_.size()), buf, n)) {
    return Error("write high-water mark");
  }
  auto it = marks_.find(source);
  if (it == marks_.end()) {
    marks_.emplace(std::string(source), seq);
  } else {
    it->second = seq;
  }
  return Status::OK();
}

Status Slot::Apply(const MemTable& table) {
  if (in_transaction_) return Status::Error(path_ + ": apply inside a pending transaction");
  Status s = Begin();
  if (!s.ok()) return s;
  const std::vector<MemTable::Entry> entries = table.Sorted();
  Uint128 abs_max = abs_max_;
  for (const MemTable::Entry& e : entries) {
    const int ksize = static_cast<int>(e.key.size());
    if (e.lookup != nullptr) {
      if (!tcbdbput(db_, e.key.data(), ksize, e.lookup->data(), static_cast<int>(e.lookup->size()))) {
        s = Error("put '" + std::string(e.key) + "'");
        break;
      }
      continue;
    }
    ApplyOp op{e.delta, abs_max, false, false};
    // The value a new record starts at: the sum itself.
    char initial[kWideCounterSize];
    const int initial_size = EncodeCounter(e.delta, initial);
    const bool ok = tcbdbputproc(db_, e.key.data(), ksize, initial, initial_size, ApplyProc, &op);
    if (op.overflow || op.corrupt || !ok) {
      s = op.overflow  ? Status::Error(path_ + ": counter '" + std::string(e.key) + "' would leave 128 bits")
          : op.corrupt ? Status::Error(path_ + ": counter '" + std::string(e.key) + "' is not 8 or 16 bytes")
                       : Error("add to '" + std::string(e.key) + "'");
      break;
    }
    abs_max = std::max(op.abs_max, AbsInt128(e.delta));
  }
  char buf[24];
  for (auto it = table.marks().begin(); s.ok() && it != table.marks().end(); ++it) {
    scratch_.assign(kMarkPrefix);
    scratch_.append(it->first);
    const int n = std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(it->second));
    if (!tcbdbput(db_, scratch_.data(), static_cast<int>(scratch_.size()), buf, n)) s = Error("write high-water mark");
  }
  if (s.ok() && abs_max != abs_max_) {
    // A bound of 2^127 (only |-2^127| reaches it) is written as 2^127 - 1 and read back as 2^127.
    std::string text;
    AppendInt128(&text, abs_max > Uint128(kInt128Max) ? kInt128Max : Int128(abs_max));
    if (!tcbdbput(db_, kAbsMaxKey.data(), static_cast<int>(kAbsMaxKey.size()), text.data(), static_cast<int>(text.size()))) {
      s = Error("write #absmax");
    }
  }
  if (!s.ok()) {
    in_transaction_ = false;
    if (!tcbdbtranabort(db_)) std::fprintf(stderr, "realtime: %s: abort after a failed flush failed\n", path_.c_str());
    return s;
  }
  s = Commit();
  if (s.ok()) abs_max_ = abs_max;
  return s;
}

bool Slot::ReadCounter(std::string_view key, Int128* value) const {
  if (db_ == nullptr || key.empty() || key[0] == kMetaPrefix || key.starts_with(kLookupPrefix)) return false;
  int size = 0;
  const void* v = tcbdbget3(db_, key.data(), static_cast<int>(key.size()), &size);
  return v != nullptr && DecodeCounter(std::string_view(static_cast<const char*>(v), static_cast<size_t>(size)), value);
}

bool Slot::Has(std::string_view key) const {
  if (db_ == nullptr || key.empty() || key[0] == kMetaPrefix) return false;
  return tcbdbvsiz(db_, key.data(), static_cast<int>(key.size())) >= 0;
}

int64_t Slot::Mark(std::string_view source) const {
  auto it = marks_.find(source);
  return it == marks_.end() ? -1 : it->second;
}

bool Slot::Get(std::string_view key, std::string* out) const {
  if (db_ == nullptr || key.empty() || key[0] == kMetaPrefix) return false;
  int size = 0;
  const void* v = tcbdbget3(db_, key.data(), static_cast<int>(key.size()), &size);
  if (v == nullptr) return false;
  AppendRecordValue(key, std::string_view(static_cast<const char*>(v), static_cast<size_t>(size)), out);
  return true;
}

uint64_t Slot::records() const {
  if (db_ == nullptr) return 0;
  // Metadata keys sort first: count them (a few, one per source) rather than trust a
  // remembered number that Apply() may have changed.
  uint64_t meta = 0;
  BDBCUR* cur = tcbdbcurnew(db_);
  if (tcbdbcurfirst(cur)) {
    int size = 0;
    for (const char* k; (k = static_cast<const char*>(tcbdbcurkey3(cur, &size))) != nullptr && size > 0 &&
                        k[0] == kMetaPrefix;
         tcbdbcurnext(cur)) {
      ++meta;
    }
  }
  tcbdbcurdel(cur);
  uint64_t n = tcbdbrnum(db_);
  return n > meta ? n - meta : 0;
}

uint64_t Slot::file_bytes() const { return db_ == nullptr ? 0 : tcbdbfsiz(db_); }

SlotCursor::SlotCursor(const Slot& slot) {
  if (slot.db() == nullptr) return;
  cur_ = tcbdbcurnew(slot.db());
  key_buf_ = tcxstrnew();
  value_buf_ = tcxstrnew();
}

SlotCursor::~SlotCursor() {
  if (cur_ != nullptr) tcbdbcurdel(cur_);
  if (key_buf_ != nullptr) tcxstrdel(key_buf_);
  if (value_buf_ != nullptr) tcxstrdel(value_buf_);
}

void SlotCursor::Seek(std::string_view start) {
  valid_ = false;
  if (cur_ == nullptr) return;
  // Metadata keys start with '#' and sort first; "$" is just past them.
  if (start.empty() || start[0] <= kMetaPrefix) start = "$";
  if (!tcbdbcurjump(cur_, start.data(), static_cast<int>(start.size()))) return;
  Load();
}

void SlotCursor::Next() {
  if (!valid_) return;
  valid_ = false;
  if (!tcbdbcurnext(cur_)) return;
  Load();
}

// The key and the value in one call: each cursor call locks the database and finds the
// leaf again (tcbdbcurkey3 + tcbdbcurval3 were two of the three per record a listing made).
void SlotCursor::Load() {
  if (!tcbdbcurrec(cur_, key_buf_, value_buf_)) return;
  key_ = std::string_view(key_buf_->ptr, static_cast<size_t>(key_buf_->size));  // TCXSTR's fields are public
  value_ = std::string_view(value_buf_->ptr, static_cast<size_t>(value_buf_->size));
  valid_ = true;
}

}  // namespace clickatron::realtime
