#include "api/lookup_cache.h"

namespace clickatron {

const std::string* LookupCache::Get(std::string_view hash) {
  auto it = index_.find(hash);
  if (it == index_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  order_.splice(order_.begin(), order_, it->second);
  return &it->second->second;
}

void LookupCache::Put(std::string_view hash, std::string original) {
  if (capacity_ == 0) return;
  auto it = index_.find(hash);
  if (it != index_.end()) {
    it->second->second = std::move(original);
    order_.splice(order_.begin(), order_, it->second);
    return;
  }
  order_.emplace_front(std::string(hash), std::move(original));
  index_.emplace(order_.front().first, order_.begin());
  if (index_.size() > capacity_) {
    index_.erase(order_.back().first);
    order_.pop_back();
  }
}

}  // namespace clickatron
