#include "realtime/merged_cursor.h"

#include <cstring>

#include "keyformat/records.h"

namespace clickatron::realtime {
namespace {

// Pending entries gathered per pass over the table.
constexpr size_t kPendingBatch = 4096;

}  // namespace

void MergedCursor::Seek(std::string_view start, std::string_view prefix, bool after) {
  prefix_.assign(prefix);
  file_.Seek(start);
  if (after && file_.Valid() && file_.key() == start) file_.Next();
  batch_.clear();
  at_ = 0;
  more_pending_ = pending_.Collect(start, after, prefix_, kPendingBatch, &batch_);
  if (!batch_.empty()) last_pending_.assign(batch_.back().key);
  Settle();
}

void MergedCursor::FillPending() {
  batch_.clear();
  at_ = 0;
  more_pending_ = pending_.Collect(last_pending_, true, prefix_, kPendingBatch, &batch_);
  if (!batch_.empty()) last_pending_.assign(batch_.back().key);
}

void MergedCursor::Settle() {
  if (at_ == batch_.size() && more_pending_) FillPending();
  const bool file = file_.Valid();
  const bool pending = at_ < batch_.size();
  if (file && pending) {
    const int cmp = file_.key().compare(batch_[at_].key);
    from_file_ = cmp <= 0;
    from_pending_ = cmp >= 0;
  } else {
    from_file_ = file;
    from_pending_ = pending;
  }
}

void MergedCursor::Next() {
  if (from_file_) file_.Next();
  if (from_pending_) ++at_;
  Settle();
}

std::string_view MergedCursor::key() const { return from_pending_ ? batch_[at_].key : file_.key(); }

void MergedCursor::AppendValue(std::string* out) const {
  if (!from_pending_) return file_.AppendValue(out);
  const MemTable::Entry& e = batch_[at_];
  if (e.lookup != nullptr) {
    out->append(*e.lookup);
    return;
  }
  AppendInt128(out, Count());
}

Int128 MergedCursor::Count() const {
  Int128 stored = 0;
  if (from_file_ && !DecodeCounter(file_.stored_value(), &stored)) stored = 0;
  if (!from_pending_) return stored;
  // Fits: the ring refuses any overflow at acceptance.
  return batch_[at_].delta + stored;
}

}  // namespace clickatron::realtime
