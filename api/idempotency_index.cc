#include "api/idempotency_index.h"

#include <cstring>
#include <utility>

namespace clickatron {

IdempotencyIndex::Entry* IdempotencyIndex::Find(std::string_view key) {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : &*it->second;
}

IdempotencyIndex::~IdempotencyIndex() {
  while (!order_.empty()) Erase(order_.begin());
}

IdempotencyIndex::Entry* IdempotencyIndex::Insert(Entry entry) {
  bytes_ += Charge(entry.key);
  char* key = static_cast<char*>(pool_.allocate(entry.key.size(), 1));
  std::memcpy(key, entry.key.data(), entry.key.size());
  entry.key = std::string_view(key, entry.key.size());
  order_.push_back(entry);
  auto it = std::prev(order_.end());
  by_key_.emplace(it->key, it);
  return &*it;
}

void IdempotencyIndex::Restore(Entry entry) {
  if (auto it = by_key_.find(entry.key); it != by_key_.end()) Erase(it->second);
  Insert(entry);
}

void IdempotencyIndex::Forget(Entry* entry) {
  auto it = by_key_.find(entry->key);
  if (it != by_key_.end()) Erase(it->second);
}

size_t IdempotencyIndex::Expire(int64_t now) {
  size_t dropped = 0;
  while (!order_.empty()) {
    const Entry& oldest = order_.front();
    if (oldest.state != State::kStored || now - oldest.accepted_at < window_) break;
    Erase(order_.begin());
    dropped++;
  }
  expired_ += dropped;
  return dropped;
}

void IdempotencyIndex::Erase(Order::iterator it) {
  const std::string_view key = it->key;
  bytes_ -= Charge(key);
  by_key_.erase(key);
  order_.erase(it);
  pool_.deallocate(const_cast<char*>(key.data()), key.size(), 1);
}

}  // namespace clickatron
