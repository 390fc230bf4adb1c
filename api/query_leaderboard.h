// GET /leaderboard (docs/api.md#api-leaderboard): a namespace's top keys over a range — the
// dashboard's landing page. Parameters: ns, the range of /series (unit, units,
// unit_reference_ts or start/end, timezone; units=-1, the default, is every hour up to the
// reference bucket's end) and limit (1–1000, default 10).
//
// Exact or refused, never a part as the whole:
//   1. Archive, every shard: the namespace's total records `{ns}|` listed page by page (a
//      first page of one record, then 128 a page, or the replica's --fwmatch-limit) and each
//      key's sum over the range's hours of days <= W computed (leaderboard.h). Every page must
//      come from one generation (and W); a publish under the listing restarts the query (3
//      attempts, then 503). The sums are kept in the archive cache under that generation
//      (archive_cache.h, path `leaderboard {ns} {first hour} {end hour}`): within the
//      generation's lease they are taken without asking; after it, the first page (one
//      record) says which generation is served, and its sums are taken from the cache when it
//      holds them. A replaced generation's sums go with its other entries.
//   2. Realtime, every shard, unless the range ends by W: the `{ns}|` listing, read to its end
//      (X-Fwmatch-More), its hours in range of days > W summed per key. The archive shards must
//      agree on W (they do once a publish has reached them all): else the query restarts.
//   3. Ranked as a breakdown is (largest first, ties by key as shown; hashed keys shown as
//      their originals through lookups), with the total of every key.
// More than kMaxLeaderboardKeys keys of the namespace in either tier is 400
// NAMESPACE_TOO_LARGE; the fan-out bound applies (400 QUERY_TOO_LARGE); a shard that does not
// answer is 503 naming it.
#pragma once

#include "api/query_fetch.h"

namespace clickatron {

namespace net {
class Request;
}

void HandleLeaderboard(QueryState* s, net::Request& r);

}  // namespace clickatron
