// Status and Result<T>: errors as values, as in LevelDB.
//
// A Status is either OK or carries the message a user will see ("time token 'zzzz' is not
// YMDH"). Result<T> holds a T or a failed Status. Nothing in Clickatron throws across a
// module boundary; functions that can fail return one of these. Both are cheap to return
// when OK (no allocation).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace clickatron {

class Status {
 public:
  Status() = default;  // OK
  static Status OK() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !failed_; }
  // The error text; empty when ok().
  const std::string& message() const { return message_; }

  // A copy of this error with "context: " in front (e.g. "line 12: ").
  Status Prefixed(std::string_view context) const {
    if (ok()) return *this;
    std::string m(context);
    m += message_;
    return Status(std::move(m));
  }

 private:
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
  bool failed_ = false;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}             // NOLINT: implicit by design
  Result(Status error) : v_(std::move(error)) {}        // NOLINT: REQUIRES: !error.ok()

  bool ok() const { return v_.index() == 0; }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const { return value(); }
  const T* operator->() const { return &value(); }
  // OK when ok(); otherwise the error.
  Status status() const { return ok() ? Status::OK() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace clickatron
