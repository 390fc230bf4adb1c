// Fanout: the fan-out bound of one read request (docs/api-read.md#bounds) for the runs that
// list (query_listing.h, query_namespaces.h, query_leaderboard.h): backend requests and answer
// bytes counted against QueryOptions' max_backend_requests and max_backend_bytes, and the
// request's first error. Past the bound the error is 400 QUERY_TOO_LARGE naming it, and
// Spend() says: ask no more. One per request; not thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "api/query_params.h"
#include "api/query_service.h"
#include "wire/refusals.h"

namespace clickatron {

class Fanout {
 public:
  explicit Fanout(const QueryOptions& o) : o_(o) {}

  // Counts requests and bytes; false (the error set) once either passes its bound.
  bool Spend(size_t requests, size_t bytes) {
    requests_ += requests;
    bytes_ += bytes;
    if (requests_ > o_.max_backend_requests) return TooLarge("requests", o_.max_backend_requests);
    if (bytes_ > o_.max_backend_bytes) return TooLarge("bytes", o_.max_backend_bytes);
    return true;
  }
  // Records e unless an error was recorded before: the first one wins.
  void Fail(QueryError e) {
    if (error_.status_txt.empty()) error_ = std::move(e);
  }
  bool failed() const { return !error_.status_txt.empty(); }
  const QueryError& error() const { return error_; }

 private:
  bool TooLarge(const char* what, size_t bound) {
    Fail(QueryError{400, wire::kQueryTooLarge,
                    "the query needs more than " + std::to_string(bound) + " " + what +
                        " from the backends; ask for a smaller limit or a shorter range"});
    return false;
  }
  const QueryOptions& o_;
  size_t requests_ = 0, bytes_ = 0;
  QueryError error_;
};

}  // namespace clickatron
