#include "realtime/memtable.h"

#include <algorithm>

namespace clickatron::realtime {
namespace {

// Per-entry overhead of a node-based hash map entry (node, bucket, string header), roughly.
constexpr size_t kEntryOverhead = 80;

}  // namespace

const PendingDelta* MemTable::FindCounter(std::string_view key) const {
  auto it = counters_.find(key);
  return it == counters_.end() ? nullptr : &it->second;
}

PendingDelta* MemTable::AddCounter(std::string_view key, bool* created) {
  auto it = counters_.find(key);
  *created = it == counters_.end();
  if (*created) {
    it = counters_.emplace(std::string(key), PendingDelta{0}).first;
    bytes_ += key.size() + kEntryOverhead;
  }
  return &it->second;
}

void MemTable::EraseCounter(std::string_view key) {
  auto it = counters_.find(key);
  if (it == counters_.end()) return;
  bytes_ -= it->first.size() + kEntryOverhead;
  counters_.erase(it);
}

const std::string* MemTable::FindLookup(std::string_view key) const {
  auto it = lookups_.find(key);
  return it == lookups_.end() ? nullptr : &it->second;
}

void MemTable::PutLookup(std::string_view key, std::string_view escaped_value) {
  auto it = lookups_.find(key);
  if (it == lookups_.end()) {
    lookups_.emplace(std::string(key), std::string(escaped_value));
    bytes_ += key.size() + escaped_value.size() + kEntryOverhead;
    return;
  }
  bytes_ = bytes_ - it->second.size() + escaped_value.size();
  it->second.assign(escaped_value);
}

int64_t MemTable::Mark(std::string_view source) const {
  auto it = marks_.find(source);
  return it == marks_.end() ? -1 : it->second;
}

void MemTable::SetMark(std::string_view source, int64_t seq) {
  auto it = marks_.find(source);
  if (it == marks_.end()) {
    marks_.emplace(std::string(source), seq);
    bytes_ += source.size() + kEntryOverhead;
  } else {
    it->second = std::max(it->second, seq);
  }
}

void MemTable::AbsorbOlder(MemTable* older) {
  for (auto& [key, delta] : older->counters_) {
    bool created;
    PendingDelta* d = AddCounter(key, &created);
    *d += delta;
    NoteDelta(*d);
  }
  for (auto& [key, value] : older->lookups_) {
    if (FindLookup(key) == nullptr) PutLookup(key, value);
  }
  for (auto& [source, seq] : older->marks_) SetMark(source, seq);
  // Stays an upper bound of every sum; past 2^128 - 1 (only bounds near 2^127 get there)
  // it stays at that, which no acceptance fast path passes.
  if (__builtin_add_overflow(abs_bound_, older->abs_bound_, &abs_bound_)) abs_bound_ = ~Uint128(0);
  *older = MemTable();
}

bool MemTable::Collect(std::string_view start, bool after, std::string_view prefix, size_t limit,
                       std::vector<Entry>* out) const {
  const size_t first = out->size();
  auto wanted = [&](std::string_view key) {
    const int cmp = key.compare(start);
    return (after ? cmp > 0 : cmp >= 0) && key.starts_with(prefix);
  };
  for (const auto& [key, delta] : counters_) {
    if (wanted(key)) out->push_back(Entry{key, delta, nullptr});
  }
  for (const auto& [key, value] : lookups_) {
    if (wanted(key)) out->push_back(Entry{key, 0, &value});
  }
  auto less = [](const Entry& a, const Entry& b) { return a.key < b.key; };
  const auto begin = out->begin() + static_cast<std::ptrdiff_t>(first);
  const bool more = out->size() - first > limit;
  if (more) {
    std::nth_element(begin, begin + static_cast<std::ptrdiff_t>(limit), out->end(), less);
    out->resize(first + limit);
  }
  std::sort(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(), less);
  return more;
}

std::vector<MemTable::Entry> MemTable::Sorted() const {
  std::vector<Entry> out;
  out.reserve(counters_.size() + lookups_.size());
  Collect({}, false, {}, counters_.size() + lookups_.size(), &out);
  return out;
}

}  // namespace clickatron::realtime
