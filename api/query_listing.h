// The dashboard's read endpoints beside /series and /breakdown (docs/api.md#api-keys,
// #api-subtotals, #api-cluster), run on the QueryService's loop with its backends, bounds
// and lookup cache:
//
//   /keys?ns=&prefix=&limit=     stored keys of namespace ns starting with prefix, from both
//       tiers: an archive /fwmatch `{ns}|{prefix}` of every archive shard (limit+1 lines: one
//       line per key) and a realtime /fwmatch of every realtime shard, paged to its end or to
//       limit+1 keys (skipping each key's remaining hours with after=`{ns}|{key}.\x7f`);
//       merged in key order, deduplicated, the first `limit` answered and `more` telling
//       whether there were others. A prefix that no literal key can start with (key_listing.h)
//       is looked up as a whole key typed exactly: its hash `{ns}|{hash}` on its shards.
//       Hashed keys are shown as their originals (lookups, as /breakdown).
//   /subtotals?ns=&key=&<range>  the subtotal namespaces with at least one record of the key
//       in the range: the namespaces present on the key's archive shard and realtime shard
//       are found by stepping through first key parts (a /fwmatch limit=1 per starting letter
//       or digit, then after=`{part}{sep}\x7f` to the next part), then each is checked for a
//       `{subns}.{ns}|{key}.` record of an hour in the range (archive: one /fwmatch from the
//       range's first hour; realtime: its listing, paged).
//   /timezones                   the IANA zones every query takes (timezone.h UsableZoneNames)
//       and the integer offsets -14…14: the dashboard's zone list.
//   /cluster                     each backend's /stats (every realtime shard, every archive
//       replica) with up/down and the error of one that did not answer, in one envelope.
//
// Every backend call counts against QueryOptions' fan-out bound (400 QUERY_TOO_LARGE); a
// shard that does not answer is 503 naming it — never a partial listing (except /cluster,
// whose point is to show what is down).
#pragma once

#include "api/query_fetch.h"
#include "api/query_params.h"

namespace clickatron {

namespace net {
class Request;
class Responder;
}  // namespace net

inline constexpr int kDefaultKeysLimit = 20;
inline constexpr int kMaxKeysLimit = 1000;

void HandleKeys(QueryState* s, net::Request& r);
void HandleSubtotals(QueryState* s, net::Request& r);
void HandleCluster(QueryState* s, net::Request& r);
void HandleTimezones(QueryState* s, net::Request& r);

// Shared with query_service.cc: the checks every read request passes first (loop, method,
// percent-encoding), and the error reply that counts errors for /stats.
bool AdmitQuery(QueryState* s, net::Request& r);
void ReplyQueryError(QueryState* s, net::Responder* reply, const QueryError& e);

}  // namespace clickatron
