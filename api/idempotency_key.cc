#include "api/idempotency_key.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <charconv>
#include <cstdio>

namespace clickatron {
namespace {

constexpr char kKeyRule[] = "a key is 1-255 bytes of visible ASCII other than '\"' and '\\'";

bool IsKeyByte(char c) { return c >= 0x21 && c <= 0x7E && c != '"' && c != '\\'; }

}  // namespace

Result<std::string_view> ParseIdempotencyKey(std::string_view value) {
  std::string_view key = value;
  if (key.size() >= 2 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
  if (key.empty()) return Status::Error(std::string("Idempotency-Key is empty; ") + kKeyRule);
  if (key.size() > kMaxIdempotencyKey) {
    return Status::Error("Idempotency-Key is " + std::to_string(key.size()) + " bytes long; " + kKeyRule);
  }
  for (size_t i = 0; i < key.size(); i++) {
    if (!IsKeyByte(key[i])) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(key[i]));
      return Status::Error("Idempotency-Key byte " + std::to_string(i + 1) + " is " + hex + "; " + kKeyRule);
    }
  }
  return key;
}

RequestDigest DigestIncrRequest(std::string_view body, std::string_view raw_query) {
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  if (body.empty()) {
    XXH3_128bits_update(&state, raw_query.data(), raw_query.size());
    XXH3_128bits_update(&state, "\n", 1);
  }
  while (!body.empty()) {
    const size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    body = nl == std::string_view::npos ? std::string_view() : body.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    XXH3_128bits_update(&state, line.data(), line.size());
    XXH3_128bits_update(&state, "\n", 1);
  }
  const XXH128_hash_t h = XXH3_128bits_digest(&state);
  return RequestDigest{h.high64, h.low64};
}

void AppendDigestHex(const RequestDigest& digest, std::string* out) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(digest.high),
                static_cast<unsigned long long>(digest.low));
  out->append(buf, 32);
}

bool ParseDigestHex(std::string_view text, RequestDigest* digest) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  const char* p = text.data();
  std::from_chars(p, p + 16, digest->high, 16);
  std::from_chars(p + 16, p + 32, digest->low, 16);
  return true;
}

}  // namespace clickatron
