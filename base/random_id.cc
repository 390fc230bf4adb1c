#include "base/random_id.h"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>

namespace clickatron {

std::string RandomId64() {
  std::random_device rd;
  const uint64_t r = (uint64_t(rd()) << 32) ^ rd() ^ uint64_t(::getpid()) ^
                     uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r));
  return hex;
}

}  // namespace clickatron
