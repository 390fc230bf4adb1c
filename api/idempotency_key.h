// IdempotencyKey: what names a retryable `/incr` (docs/api-write.md#safe-retries) — the
// `Idempotency-Key` request header (the IETF httpapi header, as Stripe uses it) and the
// digest of the request it was first sent with.
//
//   Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324     (Stripe's form)
//   Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"   (the draft's sf-string form)
//
// Both forms name the same key: the quotes of the second are syntax, not part of it. A key
// is 1..255 bytes of visible ASCII (0x21..0x7E) other than '"' and '\' — what a UUID, a
// ULID or a client's "batch-2026-11-24-0042" uses, and nothing that needs escaping in the
// header, in a message or in the oplog record's text line (incr_payload.h).
//
// The digest identifies the request by its events as sent, not as stamped: a retry that
// leaves `ts` out is the same request an hour later, though its default `ts` would differ.
// It is XXH3-128 of the request's event lines, each followed by '\n': the query string of a
// GET (or of a body-less POST) is one line; a POST body's lines are taken without their line
// ends (LF or CRLF, the last one optional). So `GET /incr?ns=u&key=a` and a POST whose body is
// `ns=u&key=a\n` are one request; any other difference in the bytes (an order of
// parameters, a percent-encoding) is another request.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron {

inline constexpr size_t kMaxIdempotencyKey = 255;

// The key a header value names, a view into it; an error naming the problem otherwise
// (the message of 400 INVALID_IDEMPOTENCY_KEY).
Result<std::string_view> ParseIdempotencyKey(std::string_view header_value);

struct RequestDigest {
  uint64_t high = 0;
  uint64_t low = 0;
  bool operator==(const RequestDigest&) const = default;
};

// The digest of an /incr (above): of the body's lines when the body is not empty, else of
// the query string.
RequestDigest DigestIncrRequest(std::string_view body, std::string_view raw_query);

// 32 lowercase hex digits, high word first; and back (false unless exactly that).
void AppendDigestHex(const RequestDigest& digest, std::string* out);
bool ParseDigestHex(std::string_view text, RequestDigest* digest);

}  // namespace clickatron
