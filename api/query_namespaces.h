// GET /namespaces (docs/api.md#api-namespaces): the namespaces and subtotal namespaces that
// have records in either tier, with the names the dashboard shows for them — what its landing
// page offers, so a namespace need not be known to be found.
//
//   {"namespaces": ["l", "u"], "subtotals": ["c", "r"],
//    "display_names": {"c": "country", "r": "referrer"}, "country_codes": ["c"]}
//
// Found on every archive shard and every realtime shard by stepping through the first parts
// of their keys, as /subtotals does (query_listing.h): one /fwmatch limit=1 per letter and
// digit a namespace can start with, then from each key found after=`{part}{sep}\x7f` to the
// next part. A part followed by '|' is a namespace of totals (`_l` lookups are not listed),
// one followed by '.' a subtotal namespace. That is one request per letter and digit plus one
// per name, per shard, whatever the data's size; every one counts against the fan-out bound
// (400 QUERY_TOO_LARGE), and a shard that does not answer is 503 naming it. display_names
// and country_codes are the cluster config's `display-name` and `country-codes`
// (api/cluster_config.h), the names in the order configured. The endpoint takes no
// parameter (400 UNKNOWN_ARG).
#pragma once

#include "api/query_fetch.h"

namespace clickatron {

namespace net {
class Request;
}

void HandleNamespaces(QueryState* s, net::Request& r);

}  // namespace clickatron
