#include "keyformat/stored_key.h"

#include <md5.h>

#include "base/clip.h"

namespace clickatron {
namespace {

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

bool IsLiteralKey(std::string_view value) {
  return !value.empty() && value.size() <= kMaxLiteralKeySize && LiteralKeyEnd(value, 0) == value.size();
}

void AppendKeyHash(std::string_view value, std::string* out) {
  MD5_CTX ctx;
  MD5Init(&ctx);
  MD5Update(&ctx, reinterpret_cast<const uint8_t*>(value.data()), value.size());
  uint8_t digest[MD5_DIGEST_LENGTH];
  MD5Final(digest, &ctx);
  // base64 of 8 bytes: two full 3-byte groups, then 2 bytes → 3 symbols and one '='.
  const uint8_t* d = digest;
  char buf[kHashSize];
  for (int g = 0; g < 2; g++) {
    const uint32_t n = (uint32_t(d[3 * g]) << 16) | (uint32_t(d[3 * g + 1]) << 8) | d[3 * g + 2];
    buf[4 * g + 0] = kBase64[(n >> 18) & 63];
    buf[4 * g + 1] = kBase64[(n >> 12) & 63];
    buf[4 * g + 2] = kBase64[(n >> 6) & 63];
    buf[4 * g + 3] = kBase64[n & 63];
  }
  const uint32_t n = (uint32_t(d[6]) << 16) | (uint32_t(d[7]) << 8);
  buf[8] = kBase64[(n >> 18) & 63];
  buf[9] = kBase64[(n >> 12) & 63];
  buf[10] = kBase64[(n >> 6) & 63];
  buf[11] = '=';
  out->append(buf, kHashSize);
}

std::string KeyHash(std::string_view value) {
  std::string out;
  AppendKeyHash(value, &out);
  return out;
}

bool AppendStoredKey(std::string_view value, std::string* out) {
  if (IsLiteralKey(value)) {
    out->append(value);
    return false;
  }
  AppendKeyHash(value, out);
  return true;
}

std::string StoredKey(std::string_view value) {
  std::string out;
  AppendStoredKey(value, &out);
  return out;
}

Status ValidateUserKey(std::string_view value, std::string_view what) {
  if (value.empty()) return Status::Error(std::string(what) + " is empty");
  if (value.size() > kMaxUserKeySize) {
    return Status::Error(std::string(what) + " is " + std::to_string(value.size()) +
                         " bytes; the limit is " + std::to_string(kMaxUserKeySize));
  }
  return Status::OK();
}

bool IsNamespace(std::string_view name) {
  return !name.empty() && name.size() <= kMaxNamespaceSize && NamespaceEnd(name, 0) == name.size();
}

Status ValidateNamespace(std::string_view name, std::string_view what) {
  if (IsNamespace(name)) return Status::OK();
  auto bad = [&](const std::string& why) {
    return Status::Error(std::string(what) + " '" + Clipped(name, 40) + "' " + why);
  };
  if (name.empty()) return Status::Error(std::string(what) + " is empty");
  if (name.size() > kMaxNamespaceSize) return bad("is longer than 16 characters");
  if (name[0] == '_') return bad("begins with '_', which is reserved for the system");
  for (size_t i = 0; i < name.size(); i++) {
    const char c = name[i];
    const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum) continue;
    if (i > 0 && (c == '_' || c == '-')) continue;
    return bad("has a character outside [A-Za-z0-9_-] (or starts with one of _-)");
  }
  return bad("is not a namespace");  // unreachable while both follow the same rule
}

bool IsKeyHash(std::string_view text) {
  if (text.size() != kHashSize || text[11] != '=') return false;
  for (size_t i = 0; i < 11; i++) {
    if (!(kKeyByteClasses[text[i]] & kBase64Byte)) return false;
  }
  return true;
}

}  // namespace clickatron
