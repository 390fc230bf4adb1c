// Realtime hour batches: the named-hour realtime /mget of several /series queries sent as
// one request (docs/api-read.md#realtime-hour-batches). Pure code: query_fetch.cc gathers
// the asks that one turn of the loop starts, per realtime shard, sends BatchMgetPaths and
// hands each query its part of the answers.
//
// An ask is the keys `{prefix}{ymdh}` of a span of whole hours (a /series' hours past W).
//
//   paths    each distinct key once, asks of one prefix merged (a popular key asked by
//            several queries is read once); keys grouped by prefix, hours ascending; at most
//            max_keys keys and max_bytes of URL a path
//   answers  realtime answers a /mget with one `key,value` line per key it holds, in the
//            order asked; the answers of a batch's paths are read as one body
//   split    each ask gets exactly the lines of its own keys, in hour order: the body its own
//            /mget would have had. A line no ask asked for is an error naming its key.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "api/query_plan.h"
#include "base/status.h"

namespace clickatron {

struct HourAsk {
  std::string prefix;  // "{ns}|{key}." as stored (not percent-encoded)
  HourRange span;      // whole hours, not empty
};

std::vector<std::string> BatchMgetPaths(const std::vector<HourAsk>& asks, size_t max_bytes, size_t max_keys);

// Fills (*bodies)[i] with the lines of body that are keys of asks[i].
Status SplitBatchAnswer(std::string_view body, const std::vector<HourAsk>& asks,
                        std::vector<std::string>* bodies);

}  // namespace clickatron
