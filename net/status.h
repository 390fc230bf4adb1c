// Status: the result of a net operation that can fail, carrying the text a user will see.
//
// A Status is either ok() or holds a message such as "bad percent-encoding in query
// parameter 'key'" or "127.0.0.1:1: connection refused". Nothing in net/ throws; every
// fallible call returns a Status (or fills one). Copyable; an ok Status holds no string.
#ifndef CLICKATRON_NET_STATUS_H_
#define CLICKATRON_NET_STATUS_H_

#include <string>
#include <string_view>
#include <utility>

namespace clickatron::net {

class Status {
 public:
  Status() = default;  // ok
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message), true); }

  bool ok() const { return !failed_; }
  // The error text; empty when ok().
  const std::string& message() const { return message_; }

 private:
  Status(std::string message, bool failed) : message_(std::move(message)), failed_(failed) {}
  std::string message_;
  bool failed_ = false;
};

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_STATUS_H_
