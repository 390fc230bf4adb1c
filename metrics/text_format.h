// The Prometheus text exposition format, version 0.0.4 — what GET /metrics answers and the
// nightly's node-exporter textfile holds (docs/operations.md#prometheus):
//
//   # HELP clickatron_http_request_duration_seconds Time from a request's dispatch to its reply.
//   # TYPE clickatron_http_request_duration_seconds histogram
//   clickatron_http_request_duration_seconds_bucket{path="/get",le="7e-06"} 0
//   ...
//   clickatron_http_request_duration_seconds_bucket{path="/get",le="+Inf"} 12
//   clickatron_http_request_duration_seconds_sum{path="/get"} 0.000871
//   clickatron_http_request_duration_seconds_count{path="/get"} 12
//
// One HELP and one TYPE line per family, then its samples; a label value escapes '\', '"'
// and a newline (\\ \" \n), help text '\' and a newline; values are the shortest decimal
// that reads back as the same double (integers below 2^53 as plain integers), NaN and
// +Inf/-Inf spelled so. A histogram's buckets are cumulative, `le` the last label.
#ifndef CLICKATRON_METRICS_TEXT_FORMAT_H_
#define CLICKATRON_METRICS_TEXT_FORMAT_H_

#include <string>
#include <string_view>

#include "metrics/registry.h"

namespace clickatron::metrics {

// The Content-Type of an answer in this format.
inline constexpr char kTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// Appends every family of registry, then a "# problem: ..." comment line per problem.
void WriteText(const Registry& registry, std::string* out);

// Pieces, for tests and for writers of single samples (the nightly's textfile is written
// by a shell script with the same rules).
void AppendValue(double value, std::string* out);
void AppendLabelValue(std::string_view value, std::string* out);  // escaped, without quotes
void AppendHelp(std::string_view help, std::string* out);         // escaped

}  // namespace clickatron::metrics

#endif  // CLICKATRON_METRICS_TEXT_FORMAT_H_
