// What a client may take from the generation an archive answer names
// (docs/api.md#archive-conditional-requests, docs/api-read.md#caches).
//
// An archive file never changes while it is served, and its manifest names it with a
// generation: every answer of a file with a manifest carries `ETag: "<generation>"`
// (headers.h). A request with `If-None-Match` naming that tag (or `*`) is answered 304 Not
// Modified with the file's headers and no body while that generation is served — its answer
// is the one the client already holds. A file without a manifest has no tag and always
// answers in full.
//
// The lease: a client (the API) may take a generation as still served, and answer from what
// it holds of it without asking, for kGenerationConfirmMs after a live answer named it. The
// release of a day from realtime waits until every archive replica has served a generation
// holding that day for kReleaseAfterServedMs (rebuild/release.cc), so no client can still be
// taking an older generation — whose missing day only realtime holds — as served when the day
// leaves realtime. The margin (twice the lease) covers an answer's time in flight.
// Pure code: the one home of the tag's text and of the lease, used by the archive, the API
// and the release (docs/wire.md#generations-and-leases).
#ifndef CLICKATRON_WIRE_GENERATION_H_
#define CLICKATRON_WIRE_GENERATION_H_

#include <string>
#include <string_view>

namespace clickatron::wire {

inline constexpr int kGenerationConfirmMs = 1000;
inline constexpr int kReleaseAfterServedMs = 2 * kGenerationConfirmMs;

// "\"" + generation + "\"" (RFC 9110 8.8.3: a strong tag).
inline std::string GenerationEtag(std::string_view generation) {
  std::string tag;
  tag.reserve(generation.size() + 2);
  tag += '"';
  tag += generation;
  tag += '"';
  return tag;
}

// Whether an If-None-Match value (`*`, or a comma-separated list of tags, each possibly weak
// `W/"..."`: RFC 9110 13.1.2 compares weakly) names the tag of `generation`. An empty
// generation (no manifest) matches nothing.
inline bool EtagMatches(std::string_view if_none_match, std::string_view generation) {
  if (generation.empty()) return false;
  while (!if_none_match.empty()) {
    size_t comma = if_none_match.find(',');
    std::string_view tag = if_none_match.substr(0, comma);
    if_none_match = comma == std::string_view::npos ? std::string_view() : if_none_match.substr(comma + 1);
    while (!tag.empty() && (tag.front() == ' ' || tag.front() == '\t')) tag.remove_prefix(1);
    while (!tag.empty() && (tag.back() == ' ' || tag.back() == '\t')) tag.remove_suffix(1);
    if (tag == "*") return true;
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag.size() == generation.size() + 2 && tag.front() == '"' && tag.back() == '"' &&
        tag.substr(1, generation.size()) == generation) {
      return true;
    }
  }
  return false;
}

}  // namespace clickatron::wire

#endif  // CLICKATRON_WIRE_GENERATION_H_
