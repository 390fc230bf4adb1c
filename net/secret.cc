#include "net/secret.h"

#include "wire/headers.h"

#include <strings.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace clickatron::net {

bool SecretEquals(std::string_view expected, std::string_view given) {
  // The loop runs expected.size() times whatever given is; a shorter given is read
  // cyclically (its bytes then differ somewhere or the length check fails), so nothing
  // about given changes the work done. volatile keeps the compiler from turning the
  // accumulation into an early-exit comparison.
  volatile uint8_t diff = given.size() == expected.size() ? 0 : 1;
  const size_t n = given.size();
  for (size_t i = 0; i < expected.size(); i++) {
    const uint8_t g = n == 0 ? 0 : static_cast<uint8_t>(given[i % n]);
    diff = static_cast<uint8_t>(diff | (static_cast<uint8_t>(expected[i]) ^ g));
  }
  return diff == 0;
}

namespace {

// The token of "Authorization: Bearer <token>" (RFC 6750; the scheme is case-insensitive),
// or null: what a Prometheus scrape can send (docs/operations.md#prometheus).
const char* BearerToken(Request& req) {
  const char* value = req.Header("Authorization");
  if (value == nullptr || strncasecmp(value, "Bearer ", 7) != 0) return nullptr;
  value += 7;
  while (*value == ' ') value++;
  return value;
}

}  // namespace

bool AdmitSecret(Request& req, std::string_view secret) {
  if (secret.empty()) return true;
  const char* given = req.Header(wire::kSecretHeader);
  if (given == nullptr) given = BearerToken(req);
  if (given == nullptr) {
    req.CountSecretRefusal(false);
    req.ReplyJsonError(401, "SECRET_MISSING", "this endpoint needs the cluster secret in the X-Clickatron-Secret header");
    return false;
  }
  if (!SecretEquals(secret, given)) {
    req.CountSecretRefusal(true);
    req.ReplyJsonError(403, "SECRET_WRONG", "the X-Clickatron-Secret header is not this cluster's secret");
    return false;
  }
  return true;
}

bool IsLoopbackAddress(std::string_view address) {
  if (address == "localhost" || address == "::1" || address == "[::1]") return true;
  if (!address.starts_with("127.")) return false;
  // 127.a.b.c with every part a number: a hostname such as "127.example.com" is not loopback.
  int dots = 0;
  for (char c : address) {
    if (c == '.') {
      dots++;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3;
}

Status CheckListenSecret(std::string_view address, std::string_view secret) {
  if (!secret.empty() || IsLoopbackAddress(address)) return Status::OK();
  return Status::Error("SECRET_REQUIRED: address " + std::string(address) +
                       " is not loopback, so a secret-file is required (docs/operations.md#threat-model)");
}

}  // namespace clickatron::net
