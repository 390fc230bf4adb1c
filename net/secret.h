// The cluster secret on the server side: the X-Clickatron-Secret request header that the
// internal endpoints require (docs/operations.md#threat-model).
//
// A server holding a secret (non-empty) admits a guarded request only when the header
// carries exactly that secret — or, without that header, when "Authorization: Bearer
// <secret>" does (the one header a Prometheus scrape can send from a file:
// docs/operations.md#prometheus); otherwise it answers, before the handler does anything:
//   401 SECRET_MISSING   neither header
//   403 SECRET_WRONG     the header is there and differs from the secret
// with the JSON error envelope (Responder::ReplyJsonError). A server with an empty secret
// admits everything, so it may listen only on a loopback address (the dev setup):
// CheckListenSecret refuses any other address with SECRET_REQUIRED. The secret (read by
// config/cluster_secret.h) is never logged, echoed in a reply or written to /stats; the
// refusals are counted there (`limits.secret_missing`, `limits.secret_wrong`: someone
// without the secret is knocking).
//
//   if (!net::AdmitSecret(req, options_.secret)) return;   // replied 401/403
#ifndef CLICKATRON_NET_SECRET_H_
#define CLICKATRON_NET_SECRET_H_

#include <string_view>

#include "base/status.h"
#include "net/request.h"

namespace clickatron::net {


// True when given equals expected. Constant time: it reads every byte of expected and as
// many of given, XOR-accumulating the differences (and the length difference), and never
// stops at the first differing byte, so its time depends only on expected.size(), never on
// where (or whether) given differs. REQUIRES: !expected.empty().
bool SecretEquals(std::string_view expected, std::string_view given);

// Admits req when secret is empty or req carries it; otherwise replies 401 SECRET_MISSING
// or 403 SECRET_WRONG and returns false (the handler then returns at once).
bool AdmitSecret(Request& req, std::string_view secret);

// True for an address only this host can reach: 127.0.0.0/8 (dotted), ::1, localhost.
bool IsLoopbackAddress(std::string_view address);

// OK when a server may listen on address with secret: a secret is given, or the address
// is loopback. Else SECRET_REQUIRED naming the address.
Status CheckListenSecret(std::string_view address, std::string_view secret);

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_SECRET_H_
