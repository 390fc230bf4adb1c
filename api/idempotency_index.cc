#include "api/idempotency_index.h"

#include <utility>

namespace clickatron {

IdempotencyIndex::Entry* IdempotencyIndex::Find(std::string_view key) {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : &*it->second;
}

IdempotencyIndex::Entry* IdempotencyIndex::Insert(Entry entry) {
  bytes_ += Charge(entry.key);
  order_.push_back(std::move(entry));
  auto it = std::prev(order_.end());
  by_key_.emplace(std::string_view(it->key), it);
  return &*it;
}

void IdempotencyIndex::Restore(Entry entry) {
  if (auto it = by_key_.find(entry.key); it != by_key_.end()) Erase(it->second);
  Insert(std::move(entry));
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
  bytes_ -= Charge(it->key);
  by_key_.erase(std::string_view(it->key));
  order_.erase(it);
}

}  // namespace clickatron
